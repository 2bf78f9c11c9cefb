"""The checked view: the plans of resolve.py -> generated/checked_<version>.py.

This module is the one owner of the checked layer's code: it writes every line of
every checked function. templates/checked_module.py.j2 only lays the module out
around them (the imports, the table of ctypes functions, one `{{ f.code }}` each).

Why one Python emitter rather than jinja macros: the emitters are looked up by
ParamKind (plan.py), and an import-time check below fails on a kind without one,
which a template cannot do; emitting also records which names of the raw module the
code uses (the template's import list), which a macro cannot hand back; and each
kind's lines sit in one small function instead of in conditionals spread over the
body of a template.

Adding a parameter kind: its ParamKind member and where resolve.py picks it, then one
emitter here: in `_INPUTS` for what a caller passes (annotation, conversion lines),
in `_OUTPUTS` for what comes back (storage, the result expression, its annotation).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .ctypes_map import POINTER_KINDS, RenderError, TypeMapper
from .formatting import format_python
from .model import ApiModel, Param
from .plan import INPUT_KINDS, OUTPUT_KINDS, FunctionPlan, ParamKind, ParamPlan, ResultKind, Role
from .render import (
    RenderContext,
    docstring,
    environment,
    first_sentence,
    module_name,
    tuple_literal,
)


def render_checked(model: ApiModel, context: RenderContext, plans=None) -> str:
    from .resolve import resolve

    view = CheckedView(model, context, plans if plans is not None else resolve(model))
    template = environment().get_template("checked_module.py.j2")
    return format_python(template.render(v=view))


@dataclass(frozen=True)
class CheckedFunction:
    name: str
    restype: str  # of the ctypes function the checked one calls
    returns: str  # what it returns, for type checkers
    argtypes: str  # a tuple literal: outputs are POINTER(storage), inputs the raw argtypes
    code: str  # the whole `def`, docstring included


class CheckedView:
    """What templates/checked_module.py.j2 reads."""

    def __init__(self, model: ApiModel, context: RenderContext, plans: list[FunctionPlan]) -> None:
        self.model = model
        self.context = context
        self.types = TypeMapper(model)
        self.raw_module = module_name(model.cuda_version)
        # The inline record builders raise nothing: the checked module offers the raw ones.
        self._imports: set[str] = {b.name for b in model.builders}
        # Records whose `fn` the checked module lets be a Python callable (its own subclass).
        self.callback_records: set[str] = set()
        self.not_ready = next(
            (
                k.value
                for e in model.enums
                if e.name == "cudaError"
                for k in e.enumerators
                if k.name == "cudaErrorNotReady"
            ),
            None,
        )
        self.functions = [_Function(self, plan).emit() for plan in plans]
        # cudart.occupancy's port of the cuda_runtime.h templates asks these.
        self.occupancy = {
            "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
            "cudaFuncGetAttributes",
            "cudaDeviceGetAttribute",
        } <= {plan.name for plan in plans}

    @property
    def cuda_version(self) -> int:
        return self.model.cuda_version

    @property
    def imports(self) -> list[str]:
        """Names of the raw module the generated code uses at run time."""
        return sorted(self._imports)

    @property
    def error_classes(self) -> list[tuple[str, int]]:
        """(class name, code), one per distinct code, for type checkers."""
        seen: dict[int, str] = {}
        for e in self.model.enums:
            if e.name == "cudaError":
                for k in e.enumerators:
                    if k.value and k.value not in seen:
                        seen[k.value] = "Cuda" + k.name[4:]
        return [(name, code) for code, name in seen.items()]

    def use(self, name: str) -> str:
        """A name of the raw module the code uses, imported."""
        if not name.startswith("c_") and name not in ("None", "POINTER"):
            self._imports.add(name)
        return name

    def ctype(self, spelling: str) -> str:
        """A ctypes spelling with the raw module's names it uses imported."""
        for word in spelling.replace("*", " ").replace("(", " ").replace(")", " ").split():
            if word.isidentifier():
                self.use(word)
        return spelling

    def annotation(self, text: str) -> str:
        """An annotation (`list[cudaGraphNode_t] | None`) with the raw module's names imported."""
        for word in text.replace("[", " ").replace("]", " ").replace("|", " ").split():
            if word not in ("list", "None", "int", "float", "bool"):
                self.use(word)
        return text


# ---------------------------------------------------------------- per parameter kind


@dataclass(frozen=True)
class _Result:
    """What an output parameter hands back: the expression and its annotation."""

    value: str
    annotation: str


@dataclass
class _Param:
    """What one parameter adds to its function."""

    argtype: str
    call: str  # the argument of the call
    first_call: str  # the argument of the call that asks an array's count
    signature: str | None = None
    convert: tuple[str, ...] = ()
    storage: str | None = None
    array: str | None = None  # storage sized by the first call
    result: _Result | None = None
    release: str | None = None  # what a failed call must unregister (a callback's token)


# An input emitter: (annotation, conversion lines) of a parameter the caller passes.
_InputEmitter = Callable[["_Function", ParamPlan, Param], tuple[str, tuple[str, ...]]]


def _in_handle(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    n, cls = p.py_name, f.v.use(p.ctype)
    return f"{cls} | _HandleLike", (
        f"if {n}.__class__ is not {cls}:",
        f"    {n} = _c.handle({n}, {cls}, {n!r})",
    )


def _in_pointer(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    n = p.py_name
    return p.py_type, (
        f"if {n}.__class__ is not int:",
        f"    {n} = _c.pointer({n}, {n!r}, {f.writable(c)})",
    )


def _in_ref(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    n, element = p.py_name, f.v.ctype(p.ctype)
    return p.py_type, (
        f"if {n}.__class__ is not int:",
        f"    {n} = _c.ref({n}, {element}, {n!r}, {f.writable(c)})",
    )


def _in_string(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    n = p.py_name
    return p.py_type, (f"if {n}.__class__ is not bytes:", f"    {n} = _c.cstring({n}, {n!r})")


def _in_struct(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    f.v.use(p.ctype)
    return p.py_type, ()


def _in_scalar(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    enum = f.v.types.enum_class(c.type)
    if p.py_type == "int" and enum:
        return f"{f.v.use(enum)} | int", ()
    return p.py_type, ()


def _in_callback(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    # A Python callable is registered with cudart.callbacks (the partner is what it is
    # called with) and replaced by its trampoline; a host function given a stream is
    # kept for the graph when the stream is capturing. `_<n>_token` is released if the
    # call fails.
    n, data = p.py_name, f.py_name(p.partner or "")
    stream = next(
        (
            q.py_name
            for q in f.plan.inputs
            if q.kind is ParamKind.HANDLE and q.ctype == "cudaStream_t"
        ),
        None,
    )
    tail = f", {stream}" if stream else ""
    return "_CallbackLike", (
        f'{n}, {data}, _{n}_token = _c.callback({n}, {data}, "{p.ctype}", _lib, '
        f'("{n}", "{data}"){tail})',
    )


def _in_callback_data(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    return p.py_type, ()  # converted with its callback


def _in_callback_record(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    n, cls = p.py_name, f.v.use(p.ctype)
    f.v.callback_records.add(cls)
    return p.py_type, (f'{n}, _{n}_token = _c.callback_record({n}, {cls}, _lib, "{n}")',)


_INPUTS: dict[ParamKind, _InputEmitter] = {
    ParamKind.HANDLE: _in_handle,
    ParamKind.POINTER: _in_pointer,
    ParamKind.REF: _in_ref,
    ParamKind.STRING: _in_string,
    ParamKind.STRUCT: _in_struct,
    ParamKind.SCALAR: _in_scalar,
    ParamKind.CALLBACK: _in_callback,
    ParamKind.CALLBACK_DATA: _in_callback_data,
    ParamKind.CALLBACK_RECORD: _in_callback_record,
}
_RELEASED = frozenset({ParamKind.CALLBACK, ParamKind.CALLBACK_RECORD})


@dataclass(frozen=True)
class _Output:
    """What comes back for one output kind. `storage` and `array` are formats over
    n (the Python name), ctype (the storage's ctypes spelling), partner (the Python
    name of the count or capacity); `result` over n, ctype, count."""

    result: str | None  # None: nothing comes back (an array's count)
    storage: str | None = "{n} = {ctype}()"
    array: str | None = None
    first_call: str = "{n}"
    import_annotation: bool = False  # the annotation names raw-module classes


_OUTPUTS: dict[ParamKind, _Output] = {
    ParamKind.SCALAR: _Output("{n}.value"),
    ParamKind.ENUM: _Output("_c.enum_value({py_type}, {n}.value)", import_annotation=True),
    ParamKind.HANDLE: _Output("{n}", import_annotation=True),
    ParamKind.STRUCT: _Output("{n}", import_annotation=True),
    ParamKind.ADDRESS: _Output("{n}.value or 0"),
    ParamKind.CSTRING: _Output("_c.string({n}.value)"),
    ParamKind.CHAR_BUFFER: _Output(
        "{n}.value.decode(errors='replace')", storage="{n} = _create_string_buffer({partner})"
    ),
    ParamKind.ARRAY: _Output(
        "{n}[: {partner}.value]",
        storage=None,
        array="{n} = ({ctype} * {partner}.value)()",
        first_call="None",
        import_annotation=True,
    ),
    ParamKind.SIZED_ARRAY: _Output(
        "{n}[:]",
        storage="{n} = ({ctype} * {partner})()",
        import_annotation=True,
    ),
    ParamKind.BORROWED_ARRAY: _Output(
        "_c.borrowed({n}.value, {ctype}, {partner}.value)",
        storage="{n} = c_void_p()",
        import_annotation=True,
    ),
    ParamKind.COUNT: _Output(None),
}

# Every kind has its emitter: a new ParamKind without one fails here, at import.
if set(_INPUTS) != INPUT_KINDS or set(_OUTPUTS) != OUTPUT_KINDS:
    raise RenderError(
        "checked emitters missing for "
        + ", ".join(sorted((INPUT_KINDS - set(_INPUTS)) | (OUTPUT_KINDS - set(_OUTPUTS))))
    )


# ---------------------------------------------------------------- per function


class _Function:
    """One checked function: its parameters' parts, then the `def` around them."""

    def __init__(self, view: CheckedView, plan: FunctionPlan) -> None:
        self.v = view
        self.plan = plan
        self.c_params = {q.name: q for q in plan.function.params}

    def writable(self, c: Param) -> bool:
        """Whether C may write through a pointer input (the buffer must be writable)."""
        types = self.v.types
        return types.classify(c.type) in POINTER_KINDS and not types.points_to_const(c.type)

    def py_name(self, c_name: str) -> str:
        return next(p.py_name for p in self.plan.params if p.name == c_name)

    def param(self, p: ParamPlan) -> _Param:
        v, n, c = self.v, p.py_name, self.c_params[p.name]
        if p.role is Role.IN:
            annotation, convert = _INPUTS[p.kind](self, p, c)
            default = ""
            if p.default is not None:
                named = p.default != "None" and not p.default.lstrip("-").isdigit()
                default = f" = {v.use(p.default) if named else p.default}"
            return _Param(
                argtype=v.ctype(v.types.param_type(c.type)),
                call=n,
                first_call=n,
                signature=f"{n}: {annotation}{default}",
                convert=convert,
                release=f"_c.release(_{n}_token)" if p.kind in _RELEASED else None,
            )
        # The checked layer binds its own function objects: an output's argtype is
        # POINTER(storage), so the storage object itself is passed and ctypes takes its
        # address in C, which is much cheaper than byref() plus c_void_p's conversion.
        out = _OUTPUTS[p.kind]
        ctype = v.ctype(p.ctype)
        if p.kind in (ParamKind.ARRAY, ParamKind.SIZED_ARRAY, ParamKind.CHAR_BUFFER):
            argtype = v.ctype(v.types.param_type(c.type))
        elif p.kind is ParamKind.BORROWED_ARRAY:
            argtype = f"POINTER({v.ctype('c_void_p')})"
        else:
            argtype = f"POINTER({ctype})"
        # In-out storage takes its own name: the parameter keeps the type it is annotated with.
        store = f"{n}_" if p.role is Role.INOUT else n
        partner = self.py_name(p.partner) if p.partner else None
        names = {"n": store, "ctype": ctype, "partner": partner}
        part = _Param(argtype=argtype, call=store, first_call=out.first_call.format(**names))
        if p.role is Role.INOUT:
            part.signature = f"{n}: {p.py_type}"
            part.storage = f"{names['n']} = {ctype}({n})"
        else:
            part.storage = out.storage.format(**names) if out.storage else None
            part.array = out.array.format(**names) if out.array else None
        if p.role is not Role.COUNT and out.result is not None:
            result_type = v.annotation(p.py_type) if out.import_annotation else p.py_type
            part.result = _Result(out.result.format(**names, py_type=result_type), result_type)
        return part

    def returns(self, results: list[_Result]) -> str:
        plan = self.plan
        types = [r.annotation for r in results]
        if plan.result is ResultKind.QUERY:
            return "bool"
        if plan.result in (ResultKind.STRING, ResultKind.STRUCT, ResultKind.VALUE):
            value = self.value_type()
            return f"tuple[{', '.join([value] + types)}]" if types else value
        if not types:
            return "None"
        return types[0] if len(types) == 1 else f"tuple[{', '.join(types)}]"

    def value_type(self) -> str:
        """The annotation of what the C function itself returns, when that is the result."""
        plan = self.plan
        if plan.result is ResultKind.STRING:
            return "str"
        if plan.result is ResultKind.STRUCT:
            return self.v.use(plan.result_ctype)
        return "float" if plan.result_ctype in ("c_float", "c_double") else "int"

    def emit(self) -> CheckedFunction:
        plan, name = self.plan, self.plan.name
        parts = [self.param(p) for p in plan.params]
        results = [q.result for q in parts if q.result is not None]
        signature = ", ".join(q.signature for q in parts if q.signature is not None)
        returns = self.returns(results)
        call = ", ".join(q.call for q in parts)
        result = ", ".join(r.value for r in results)
        names = tuple(p.py_name for p in plan.params)
        releases = ["    " + q.release for q in parts if q.release]
        catch = [
            "except _ArgumentError as exc:",
            *releases,
            f'    raise _c.argument_error(exc, "{name}", {names}) from None',
        ]
        raise_error = ["if err:", *releases, "    raise _error(err, _lib)"]

        body: list[str] = []
        if plan.function.deprecated:
            replacement = f'"{plan.replacement}"' if plan.replacement else "None"
            body.append(f'_c.deprecated("{name}", {replacement})')
        body += [line for q in parts for line in q.convert]
        body += [q.storage for q in parts if q.storage]
        if plan.result in (ResultKind.STRING, ResultKind.STRUCT, ResultKind.VALUE, ResultKind.VOID):
            value = plan.result is not ResultKind.VOID
            keep = ("result = " if result else "return ") if value else ""
            called = f"_{name}({call})"
            if plan.result is ResultKind.STRING:
                called = f"_c.text({called})"
            body += ["try:", f"    {keep}{called}", *catch]
            if result:
                body.append(f"return {'result, ' if value else ''}{result}")
        else:
            arrays = [q.array for q in parts if q.array]
            if arrays:
                first_call = ", ".join(q.first_call for q in parts)
                body += [f"err = _{name}({first_call})", *raise_error, *arrays]
            body += ["try:", f"    err = _{name}({call})", *catch]
            if plan.result is ResultKind.QUERY:
                body += [
                    f"if err == {self.v.not_ready}:",
                    "    return False",
                    *raise_error,
                    "return True",
                ]
            else:
                body += raise_error
                if result:
                    body.append(f"return {result}")

        head = (
            f'def {name}({signature}) -> {returns}:\n    """{self.doc(signature, returns)}\n    """'
        )
        code = "\n".join([head] + ["    " + line for line in body])
        restype = self.v.ctype(self.v.types.result_type(plan.function.result))
        raw_returns = self.v.types.result_annotation(plan.function.result)
        argtypes = tuple_literal([q.argtype for q in parts])
        return CheckedFunction(name, restype, raw_returns, argtypes, code)

    def doc(self, signature: str, returns: str) -> str:
        plan = self.plan
        f = plan.function
        doc = f.doc
        lines = [f"{plan.name}({signature}) -> {returns}", ""]
        if doc and doc.brief:
            lines += [doc.brief.rstrip(".") + ".", ""]
        described = [p for p in plan.inputs if p.doc]
        if described:
            lines.append("Parameters:")
            lines += [f"    {p.py_name}: {first_sentence(p.doc)}" for p in described]
            lines.append("")
        outs = [p for p in plan.outputs if p.role is not Role.COUNT]
        if plan.result is ResultKind.QUERY:
            lines += ["Returns True when the work is complete, False while cudaErrorNotReady.", ""]
        elif outs:
            lines.append("Returns:")
            lines += [
                f"    {p.py_name}: {first_sentence(p.doc)}" if p.doc else f"    {p.py_name}"
                for p in outs
            ]
            lines.append("")
        if plan.errors:
            lines += ["Raises CudaError subclasses for: " + ", ".join(plan.errors) + ".", ""]
        if f.deprecated:
            instead = f" Use {plan.replacement} instead." if plan.replacement else ""
            lines += [f"Deprecated.{instead}", ""]
        params = [self.v.types.c_declaration(p.type, p.name) for p in f.params]
        lines.append(
            "C: " + self.v.types.c_declaration(f.result, f"{f.name}({', '.join(params) or 'void'})")
        )
        return docstring("\n".join(lines))
