"""model -> the checked API's plan: which parameters a Python caller passes, which come
back, and in what shape. Reads the model only (types, names, the header's docs).

A non-const pointer parameter is an output when the header says so:

* its \\param text says it is returned, stored or written ("Returned device pointer",
  "Location to return ...", "Newly created event"), or its name ends in `_out`;
* or a sentence of the description names it together with "returns"/"stored"
  ("A handle to the new node will be returned in pGraphNode").

Where that reading is wrong or silent, OVERRIDES says what the parameter is; every
override used is reported (see `table_uses`) and tests hold the table's content.
`void *` is memory the caller provides and `const T *` is read by the function: both
are inputs whatever the docs say.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

from .ctypes_map import RenderError, TypeMapper
from .model import ApiModel, Builtin, EnumRef, Function, Pointer, RecordRef, TypedefRef

# (function as declared, parameter) -> "out" | "in" | "inout". Reviewed by hand: each
# entry says why inference gets that parameter wrong. Keep it short; tests list it.
OVERRIDES: dict[tuple[str, str], tuple[str, str]] = {
    # Outputs whose \param text does not say "returned" (or has no \param at all).
    ("cudaDeviceGetDefaultMemPool", "memPool"): ("out", "no \\param text"),
    ("cudaDeviceGetMemPool", "memPool"): ("out", "no \\param text"),
    ("cudaStreamEndCapture", "pGraph"): ("out", '"The captured graph"'),
    ("cudaEventElapsedTime", "ms"): ("out", '"Time between start and end in ms"'),
    ("cudaMemPoolGetAccess", "flags"): ("out", '"the accessibility of the pool ..."'),
    ("cudaMemPoolCreate", "memPool"): ("out", "no \\param text"),
    ("cudaMemPoolImportFromShareableHandle", "memPool"): ("out", "no \\param text"),
    ("cudaMemPoolExportPointer", "exportData"): ("out", "no \\param text"),
    ("cudaMemPoolImportPointer", "ptr"): ("out", "no \\param text"),
    ("cudaGetTextureObjectResourceDesc", "pResDesc"): ("out", '"Resource descriptor"'),
    ("cudaGetTextureObjectTextureDesc", "pTexDesc"): ("out", '"Texture descriptor"'),
    ("cudaGetTextureObjectResourceViewDesc", "pResViewDesc"): ("out", '"Resource view descriptor"'),
    ("cudaGetSurfaceObjectResourceDesc", "pResDesc"): ("out", '"Resource descriptor"'),
    ("cudaGraphAddEventRecordNode", "pGraphNode"): ("out", "no \\param text"),
    ("cudaGraphAddEventWaitNode", "pGraphNode"): ("out", "no \\param text"),
    ("cudaGraphExecUpdate", "resultInfo"): ("out", '"the error info structure"'),
    ("cudaGetExportTable", "ppExportTable"): ("out", "no \\param text"),
    # Swaps: the caller's value goes in, the previous one comes back.
    ("cudaThreadExchangeStreamCaptureMode", "mode"): ("inout", "swaps the mode"),
    # Inputs that a description sentence wrongly reads as returned.
    ("cudaSetValidDevices", "device_arr"): ("in", "a list the caller gives"),
    ("cudaGraphicsMapResources", "resources"): ("in", "resources the caller gives"),
    ("cudaGraphicsUnmapResources", "resources"): ("in", "resources the caller gives"),
    ("cudaMemPoolGetAccess", "location"): ("in", "the location queried"),
    ("cudaGraphAddMemAllocNode", "nodeParams"): ("in", "caller-filled; the runtime adds dptr"),
    ("cudaMemRangeGetAttributes", "data"): ("in", "caller-allocated result buffers"),
    ("cudaGraphMemFreeNodeGetParams", "dptr_out"): ("out", "declared void *, written as a void *"),
    ("cudaLogsDumpToMemory", "buffer"): ("in", "a caller-sized buffer; *size says how much"),
    ("cudaLogsDumpToMemory", "size"): ("inout", "the buffer's size in, the bytes written out"),
    ("cudaMemGetDefaultMemPool", "memPool"): ("out", "no \\param text"),
    ("cudaMemGetMemPool", "memPool"): ("out", "no \\param text"),
    ("cudaMemGetMemPool", "location"): ("in", "the location queried"),
    ("cudaMemSetMemPool", "location"): ("in", "the location configured"),
    ("cudaMemcpy3DBatchAsync", "opList"): ("in", "the operations to perform"),
    # Arrays the caller sizes (the count is an input): pass a writable buffer.
    ("cudaLibraryEnumerateKernels", "kernels"): ("in", "caller-sized array of numKernels"),
    ("cudaDeviceGetHostAtomicCapabilities", "capabilities"): ("in", "caller-sized array of count"),
    ("cudaDeviceGetP2PAtomicCapabilities", "capabilities"): ("in", "caller-sized array of count"),
    ("cudaLibraryLoadData", "jitOptionsValues"): ("in", "option values the caller gives"),
    ("cudaLibraryLoadFromFile", "jitOptionsValues"): ("in", "option values the caller gives"),
}

_RETURNED = re.compile(
    r"\b(returns?|returned|retrieved|stores?|stored|written|writes?|output|new(ly)?|to create|allocated)\b",
    re.I,
)
_RETURN_VERB = re.compile(r"\b(returns?|returned|stored?|written|writes?)\b", re.I)
_REPLACEMENT = (
    re.compile(r"(\w+)(?:\(\))?,? which should be\s+used instead"),
    re.compile(r"\b[Uu]se (\w+)(?:\(\))? instead"),
    re.compile(r"\b(?:replaced|superseded) by (\w+)"),
)
_COUNT_NAME = re.compile(r"^p?[Nn]um")
_NULL_POINTER_SPELLINGS = frozenset({"0", "NULL", "nullptr"})


@dataclass(frozen=True)
class ParamPlan:
    name: str  # the C name
    py_name: str  # the Python name (C name, plus "_" where it is a keyword)
    role: str  # "in", "out", "inout", or "count" (an array's length, handled for the caller)
    kind: str  # see _in_kind and _out_kind
    ctype: str  # ctypes spelling of the value (in) or of its storage / element (out)
    py_type: str  # the annotation
    doc: str = ""
    default: str | None = None  # Python source of the default, for inputs
    source: str = "type"  # "type", "inferred" or "table": what decided the role
    partner: str | None = None  # array -> its count; char buffer -> its capacity


@dataclass(frozen=True)
class FunctionPlan:
    name: str  # public name (what Python callers use)
    symbol: str  # the raw module's name to call (same as name; aliases call their target)
    function: Function
    params: tuple[ParamPlan, ...]
    result: str  # "error", "query", "string", "struct", "value", "void"
    result_ctype: str = ""
    errors: tuple[str, ...] = ()
    replacement: str | None = None

    @property
    def inputs(self) -> list[ParamPlan]:
        return [p for p in self.params if p.role in ("in", "inout")]

    @property
    def outputs(self) -> list[ParamPlan]:
        return [p for p in self.params if p.role in ("out", "inout")]

    @property
    def table_params(self) -> list[ParamPlan]:
        return [p for p in self.params if p.source == "table"]


def resolve(model: ApiModel) -> list[FunctionPlan]:
    """A plan per public function name (aliases included), sorted by name."""
    resolver = _Resolver(model)
    by_name = {f.name: f for f in model.functions}
    # C variadic functions have no checked form (the CUDA runtime declares none).
    plans = {f.name: resolver.plan(f.name, f) for f in model.functions if not f.variadic}
    for alias in model.aliases:
        if not by_name[alias.symbol].variadic:
            plans[alias.public] = resolver.plan(alias.public, by_name[alias.symbol])
    return [plans[n] for n in sorted(plans)]


def replacements(model: ApiModel) -> list[tuple[str, str]]:
    """(deprecated function, what its header says to use instead), by public name."""
    resolver = _Resolver(model)
    by_name = {f.name: f for f in model.functions}
    names = [(f.name, f) for f in model.functions] + [
        (a.public, by_name[a.symbol]) for a in model.aliases
    ]
    found = [(name, resolver._replacement(f)) for name, f in names]
    return sorted((name, r) for name, r in found if r)


def table_uses(plans: list[FunctionPlan]) -> list[str]:
    """`function.param: role` for every classification the exceptions table made."""
    return [
        f"{plan.name}.{p.name}: {p.role}"
        for plan in plans
        for p in plan.table_params
    ]


def describe(plan: FunctionPlan) -> str:
    """One reviewable line: `name(inputs) -> outputs`, table decisions marked with *."""
    def mark(p: ParamPlan) -> str:
        star = "*" if p.source == "table" else ""
        extra = f"[{p.partner}]" if p.kind in ("array", "borrowed_array") and p.partner else ""
        return f"{star}{p.name}{extra}:{p.kind}"

    ins = ", ".join(mark(p) for p in plan.inputs)
    outs = ", ".join(mark(p) for p in plan.outputs)
    result = {"query": "bool", "string": "str", "struct": plan.result_ctype, "void": "None",
              "value": plan.result_ctype}.get(plan.result)
    right = result if result else f"({outs})"
    return f"{plan.name}({ins}) -> {right}"


class _Resolver:
    def __init__(self, model: ApiModel) -> None:
        self.model = model
        self.types = TypeMapper(model)
        self.enumerators = {k.name for e in model.enums for k in e.enumerators}
        self.error_names = [
            k.name for e in model.enums if e.name == "cudaError" for k in e.enumerators
        ]
        self.function_names = {f.name for f in model.functions} | {a.public for a in model.aliases}

    # ------------------------------------------------------------ types

    def handle_name(self, t) -> str | None:
        if isinstance(t, TypedefRef):
            td = self.types.typedefs[t.name]
            if not td.system and self.types.is_handle_typedef(td):
                return td.name
            if td.from_macro:
                return self.handle_name(td.target)
        return None

    def is_callback(self, t) -> bool:
        while isinstance(t, TypedefRef):
            td = self.types.typedefs[t.name]
            if self.types.is_callback_typedef(td):
                return True
            t = td.target
        return False

    def enum_class(self, t) -> str | None:
        r = self.types.resolve(t)
        if isinstance(r, EnumRef) and r.name and self.types.enums[r.name].enumerators:
            return r.name
        return None

    def scalar_py(self, t) -> str:
        r = self.types.resolve(t)
        if isinstance(r, Builtin) and r.name in ("float", "double", "long double"):
            return "float"
        if isinstance(r, Builtin) and r.name == "_Bool":
            return "bool"
        return "int"

    def _in_kind(self, t) -> tuple[str, str, str]:
        """(kind, ctype, annotation) of a parameter the caller passes."""
        handle = self.handle_name(t)
        if handle:
            return "handle", handle, "_HandleLike"
        if self.is_callback(t):
            return "pointer", "c_void_p", "_PointerLike"
        r = self.types.resolve(t)
        if isinstance(r, RecordRef):
            name = t.name if isinstance(t, TypedefRef) else r.name
            return "struct", name, name
        if isinstance(r, EnumRef):
            return "scalar", self.types.param_type(t), "int"
        if isinstance(r, Builtin):
            return "scalar", self.types.param_type(t), self.scalar_py(t)
        if isinstance(r, Pointer):
            pointee = self.types.resolve(r.pointee)
            if isinstance(pointee, Builtin) and pointee.name == "char" and r.pointee_const:
                return "string", "c_char_p", "str | bytes | None"
            if isinstance(pointee, Builtin) and pointee.name == "void":
                return "pointer", "c_void_p", "_PointerLike"
            if self.handle_name(r.pointee) or not isinstance(pointee, (Pointer,)):
                element = self.types.field_type(r.pointee)
                return "ref", element, "_PointerLike"
            return "pointer", "c_void_p", "_PointerLike"
        raise RenderError(f"no checked input for {t!r}")

    def _out_kind(self, t) -> tuple[str, str, str]:
        """(kind, storage ctype, annotation) of what a `T *` parameter returns."""
        r = self.types.resolve(t)
        assert isinstance(r, Pointer)
        target = r.pointee
        handle = self.handle_name(target)
        if handle:
            return "handle", handle, handle
        pointee = self.types.resolve(target)
        if isinstance(pointee, Builtin) and pointee.name == "void":
            return "address", "c_void_p", "int"  # a `void *` the header says is written as one
        enum = self.enum_class(target)
        if enum:
            return "enum", self.types.field_type(target), enum
        if isinstance(pointee, Builtin):
            if pointee.name == "char":
                return "char_buffer", "c_char", "str"
            return "scalar", self.types.field_type(target), self.scalar_py(target)
        if isinstance(pointee, EnumRef):
            return "scalar", self.types.field_type(target), "int"
        if isinstance(pointee, RecordRef):
            name = target.name if isinstance(target, TypedefRef) else pointee.name
            return "struct", name, name
        if isinstance(pointee, Pointer):
            inner = self.types.resolve(pointee.pointee)
            if isinstance(inner, Builtin) and inner.name == "char":
                return "cstring", "c_char_p", "str | None"
            return "address", "c_void_p", "int"
        raise RenderError(f"no checked output for {t!r}")

    # ------------------------------------------------------------ classification

    def documented_output(self, f: Function, name: str) -> bool:
        if name.endswith("_out"):
            return True
        doc = f.doc
        if doc is None:
            return False
        text = doc.param(name) or ""
        if _RETURNED.search(text):
            return True
        word = re.compile(r"(?<![\w.])\*?" + re.escape(name) + r"\b")
        for paragraph in doc.description:
            for sentence in re.split(r"(?<=\.)\s+", paragraph):
                if word.search(sentence) and _RETURN_VERB.search(sentence):
                    return True
        return False

    def may_be_output(self, t) -> bool:
        """A non-const pointer to something other than void or a function."""
        if self.handle_name(t) or self.is_callback(t):
            return False
        r = self.types.resolve(t)
        if not isinstance(r, Pointer) or r.pointee_const:
            return False
        pointee = self.types.resolve(r.pointee)
        return not (isinstance(pointee, Builtin) and pointee.name == "void")

    def roles(self, f: Function) -> list[tuple[str, str]]:
        """(role, source) per parameter."""
        found = []
        for p in f.params:
            override = OVERRIDES.get((f.name, p.name))
            if override is not None:
                found.append((override[0], "table"))
            elif not self.may_be_output(p.type):
                found.append(("in", "type"))
            elif self.documented_output(f, p.name):
                found.append(("out", "inferred"))
            else:
                found.append(("in", "inferred"))
        return found

    def plan(self, public: str, f: Function) -> FunctionPlan:
        roles = self.roles(f)
        params: list[ParamPlan | None] = [None] * len(f.params)
        # Arrays with a count: a run of output pointers right before a `size_t *numX`.
        for i, p in enumerate(f.params):
            if not (_COUNT_NAME.match(p.name) and self.may_be_output(p.type)):
                continue
            r = self.types.resolve(p.type)
            if not isinstance(self.types.resolve(r.pointee), Builtin):
                continue
            run = []
            shape = None
            j = i - 1
            while j >= 0 and roles[j][0] == "out" and self.may_be_output(f.params[j].type):
                element_shape = self._element_shape(f.params[j].type)
                if element_shape is None or shape not in (None, element_shape):
                    break
                shape = element_shape
                run.append(j)
                j -= 1
            if not run:
                continue
            params[i] = ParamPlan(p.name, _py_name(p.name), "count", "count", self.types.field_type(r.pointee),
                                  "int", self._doc(f, p.name), source=roles[i][1] if roles[i][1] == "table" else "inferred")
            for j in reversed(run):
                q = f.params[j]
                qr = self.types.resolve(q.type)
                inner = self.types.resolve(qr.pointee)
                if isinstance(inner, Pointer) and inner.pointee_const:
                    kind, element = "borrowed_array", self.types.field_type(inner.pointee)
                    annotation = f"list[{self._py_element(inner.pointee)}] | None"
                else:
                    kind, element = "array", self.types.field_type(qr.pointee)
                    annotation = f"list[{self._py_element(qr.pointee)}]"
                params[j] = ParamPlan(q.name, _py_name(q.name), "out", kind, element, annotation,
                                      self._doc(f, q.name), source=roles[j][1], partner=p.name)
        for i, p in enumerate(f.params):
            if params[i] is not None:
                continue
            role, source = roles[i]
            doc = self._doc(f, p.name)
            if role in ("out", "inout"):
                kind, ctype, annotation = self._out_kind(p.type)
                partner = None
                if kind == "char_buffer":
                    partner = self._capacity(f, i)
                params[i] = ParamPlan(p.name, _py_name(p.name), role, kind, ctype, annotation, doc,
                                      source=source, partner=partner)
            else:
                kind, ctype, annotation = self._in_kind(p.type)
                params[i] = ParamPlan(p.name, _py_name(p.name), "in", kind, ctype, annotation, doc,
                                      self._default(f, p.default, kind), source=source)
        plans = _trailing_defaults([q for q in params if q is not None])
        result, result_ctype = self._result(f)
        errors = self._errors(f)
        if result == "error" and not any(q.role in ("out", "inout") for q in plans) and self._is_query(f, errors):
            result = "query"
            errors = tuple(e for e in errors if e != "cudaErrorNotReady")
        return FunctionPlan(public, public, f, tuple(plans), result, result_ctype, errors, self._replacement(f))

    def _element_shape(self, t) -> str | None:
        """What an array of this pointer's pointee is, for grouping arrays with a count:
        "filled" for handles and records the function writes into caller storage,
        "borrowed" for `const T **` where it hands back its own array; None otherwise."""
        r = self.types.resolve(t)
        inner = self.types.resolve(r.pointee)
        if isinstance(inner, Pointer) and inner.pointee_const and not self.handle_name(r.pointee):
            return "borrowed"
        if self.handle_name(r.pointee) or isinstance(inner, RecordRef):
            return "filled"
        return None

    def _py_element(self, t) -> str:
        handle = self.handle_name(t)
        if handle:
            return handle
        r = self.types.resolve(t)
        if isinstance(r, RecordRef):
            return t.name if isinstance(t, TypedefRef) else r.name
        if isinstance(r, Builtin):
            return self.scalar_py(t)
        return "int"

    def _capacity(self, f: Function, i: int) -> str:
        """A char buffer's length: the integer parameter right after it."""
        if i + 1 < len(f.params):
            nxt = f.params[i + 1]
            if isinstance(self.types.resolve(nxt.type), Builtin) and nxt.name in ("len", "length", "size"):
                return nxt.name
        raise RenderError(f"{f.name}.{f.params[i].name}: a char buffer output without a length parameter")

    def _doc(self, f: Function, name: str) -> str:
        return (f.doc.param(name) if f.doc else None) or ""

    def _default(self, f: Function, default: str | None, kind: str) -> str | None:
        if default is None:
            return None
        if kind in ("pointer", "handle", "array", "string"):
            # C's null pointer constants; 13.1+ spells `__dv(NULL)` where older headers wrote 0.
            if default not in _NULL_POINTER_SPELLINGS:
                raise RenderError(f"{f.name}: pointer default {default!r}")
            return "None"
        if re.fullmatch(r"-?\d+", default):
            return default
        if default in self.enumerators:
            return default
        raise RenderError(f"{f.name}: cannot express the default {default!r} in Python")

    def _result(self, f: Function) -> tuple[str, str]:
        t = f.result
        if isinstance(t, TypedefRef) and t.name == "cudaError_t":
            return "error", ""
        r = self.types.resolve(t)
        if isinstance(r, Builtin) and r.name == "void":
            return "void", ""
        if isinstance(r, Pointer) and isinstance(self.types.resolve(r.pointee), Builtin):
            return "string", "c_char_p"
        if isinstance(r, RecordRef):
            return "struct", t.name if isinstance(t, TypedefRef) else r.name
        if isinstance(r, (Builtin, EnumRef)):
            return "value", self.types.result_type(t)  # returned as C returns it
        raise RenderError(f"{f.name}: no checked form for result {t!r}")

    def _errors(self, f: Function) -> tuple[str, ...]:
        if f.doc is None:
            return ()
        words = re.findall(r"\w+", f.doc.returns)
        known = set(self.error_names)
        seen: list[str] = []
        for w in words:
            if w in known and w != "cudaSuccess" and w not in seen:
                seen.append(w)
        return tuple(seen)

    def _is_query(self, f: Function, errors: tuple[str, ...]) -> bool:
        # cudaStreamQuery and cudaEventQuery: "Returns cudaSuccess if ... or
        # cudaErrorNotReady if not". Other functions list NotReady as a failure.
        return "cudaErrorNotReady" in errors and f.doc is not None and f.doc.brief.startswith("Quer")

    def _replacement(self, f: Function) -> str | None:
        if not f.deprecated or f.doc is None:
            return None
        texts = [f.doc.deprecated or ""] + list(f.doc.description)
        for text in texts:
            for pattern in _REPLACEMENT:
                m = pattern.search(text)
                if m and m.group(1) in self.function_names and m.group(1) != f.name:
                    return m.group(1)
        return None


def _py_name(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) else name


def _trailing_defaults(params: list[ParamPlan]) -> list[ParamPlan]:
    """Python allows defaults only at the end: drop those before an input without one."""
    out = list(params)
    required_seen = False
    for i in range(len(out) - 1, -1, -1):
        p = out[i]
        if p.role not in ("in", "inout"):
            continue
        if p.default is None or p.role == "inout":
            required_seen = True
        elif required_seen:
            out[i] = ParamPlan(**{**p.__dict__, "default": None})
    return out
