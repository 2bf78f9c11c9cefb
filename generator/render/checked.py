"""The checked view: the plans of the context -> generated/checked_<version>.py.

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

import ctypes
import keyword
from collections.abc import Callable
from dataclasses import dataclass

import cudart.errors
from cudart._fastproto import OUTPUT_VALUES

from ..attributes import FUNCTIONS as ATTRIBUTE_FUNCTIONS
from ..context import GenerationContext
from ..ctypes_map import (
    POINTER_KINDS,
    IntegerRange,
    RenderError,
    TypeKind,
    device_address_written,
    integer_range,
)
from ..families import compiled_families
from ..formatting import format_python
from ..jit_options import KEPT_WITH, OptionGroup, ValueKind
from ..lifetimes import RELEASES_CALLABLES
from ..model import Builtin, EnumRef, Param, RecordBuilder, RecordRef, TypedefRef
from ..plan import (
    CURRENT_CONTEXT,
    INPUT_KINDS,
    OUTPUT_KINDS,
    Effect,
    FunctionPlan,
    Measure,
    ParamKind,
    ParamPlan,
    ResultKind,
    Role,
)
from ..resolve import shareable_handle_types
from ..sizes import BUILDER_SIZES
from .base import (
    DIM3,
    docstring,
    environment,
    first_sentence,
    module_name,
    range_name,
    tuple_literal,
)


def render_checked(context: GenerationContext) -> str:
    view = CheckedView(context)
    template = environment().get_template("checked_module.py.j2")
    return format_python(template.render(v=view))


# The ctypes names templates/checked_module.py.j2 always imports; a module that uses
# another (c_uint32) imports it too (CheckedView.extra_ctypes).
TEMPLATE_CTYPES = frozenset(
    {
        "c_bool",
        "c_char",
        "c_char_p",
        "c_double",
        "c_float",
        "c_int",
        "c_long",
        "c_longlong",
        "c_size_t",
        "c_uint",
        "c_ulong",
        "c_ulonglong",
        "c_ushort",
        "c_void_p",
    }
)


@dataclass(frozen=True)
class CheckedFunction:
    name: str
    restype: str  # of the ctypes function the checked one calls
    returns: str  # what it returns, for type checkers
    argtypes: str  # a tuple literal: outputs are POINTER(storage), inputs the raw argtypes
    code: str  # the whole `def`, docstring included
    # The compiled backend's outputs (`_<name>_out`, cudart._backend.spec): the C
    # parameters it provides and returns after the status, as a tuple literal ("" none),
    # and what that call returns, for type checkers.
    outputs: str = ""
    out_returns: str = ""
    # The `def`'s parameters and return annotation, as the code has them (the reference,
    # generator/render/docs.py, shows them).
    signature: str = ""
    annotation: str = ""


# The CUDA runtime's error base: its modules keep cudart._checked.error (see error_factory).
RUNTIME_ERROR_BASE = "CudaError"


class CheckedView:
    """What templates/checked_module.py.j2 reads."""

    def __init__(self, context: GenerationContext) -> None:
        model, plans = context.model, context.plans
        self.model = model
        self.context = context.render
        self.types = context.types
        self.raw_module = module_name(model.cuda_version, context.render.surface)
        # The inline record builders: the raw ones where no integer needs a range check,
        # else a checked one (below) that calls the raw one.
        self._imports: set[str] = set()
        self._ctypes: set[str] = set()
        # What the range checks read, once per module: name -> Python source (a C
        # type's range, an enum's range and class, an enum's values).
        self.integer_types: dict[str, str] = {}
        self.builders = [self._builder(b) for b in sorted(model.builders, key=lambda b: b.name)]
        self.builders = [code for code in self.builders if code]
        # Records whose `fn` the checked module lets be a Python callable (its own subclass).
        self.callback_records: set[str] = set()
        # What a failed call returns and raises (generator/status.py).
        self.status = context.status
        self.not_ready = self.status.value_of("cudaErrorNotReady") if self.status else None
        self.attributes = context.attributes
        # Attribute value tables the functions use: name -> source (generator/attributes.py).
        self.attribute_tables: dict[str, str] = {}
        # Option value tables (generator/jit_options.py): name -> source, after the ranges.
        self.options = context.options
        self.option_tables: dict[str, str] = {}
        self.functions = [_Function(self, plan).emit() for plan in plans]
        # cudart.occupancy's port of the cuda_runtime.h templates asks these.
        self.occupancy = {
            "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
            "cudaFuncGetAttributes",
            "cudaDeviceGetAttribute",
        } <= {plan.name for plan in plans}

    def integer_type(self, c_name: str, source: str) -> str:
        """The module-level name of a range check's facts about a C type (`source`)."""
        name = range_name(c_name)
        if self.integer_types.setdefault(name, source) != source:
            raise RenderError(f"two ranges named {name}: {source}")
        return name

    def _builder(self, b: RecordBuilder) -> str:
        """A checked inline record builder (make_cudaExtent, ...): its integers are
        checked against their C types (the record's fields would mask them), then the
        raw module's builder fills the record. "" where the raw one is offered as is."""
        names = {p.name: (p.name + "_" if keyword.iskeyword(p.name) else p.name) for p in b.params}
        checks: list[str] = []
        addresses: list[str] = []
        for p in b.params:
            n = names[p.name]
            checks += _range_lines(self, b.name, n, p)
            if self.types.classify(p.type) in POINTER_KINDS:  # a c_void_p field: memory
                size = _builder_size(b, p.name, names)
                addresses += [
                    f"if {n}.__class__ is not int:",
                    f"    {n} = _c.address({n}, {n!r}{size})",
                    f"elif not 0 <= {n} < {_ADDRESS_END}:",
                    f'    raise _c.address_error({n}, "{b.name}", {n!r})',
                ]
        # After the integers: a size is computed from them, checked.
        checks += addresses
        if not checks:
            self._imports.add(b.name)
            return ""
        params = [
            f"{names[p.name]}: {self.annotation(self.types.field_annotation(p.type))}"
            for p in b.params
        ]
        record = self.use(self.types.record_class(RecordRef(b.record)))
        doc = docstring(
            f"{b.name}({', '.join(names.values())}) -> {record}\n\n"
            + (b.doc.brief.rstrip(".") + ".\n\n" if b.doc and b.doc.brief else "")
            # Not the raw module's versioned name: every version's text is the same, and
            # the merged module keeps it once (generator/merge.py).
            + f"As the raw module's {b.name}, with each integer checked against its C "
            "type's range (a record's field would mask it)."
        )
        body = [*checks, f"return _lib.{b.name}({', '.join(names.values())})"]
        # Type checkers also see the raw one, through the raw module's `*` import.
        return (
            f"def {b.name}({', '.join(params)}) -> {record}:  # type: ignore[no-redef]\n"
            f'    """{doc}\n    """\n' + "\n".join("    " + line for line in body)
        )

    def attribute_table(self, function: str, name: str) -> None:
        """Emit the table `name` of the function's attribute enum: value -> AttributeValue."""
        if name in self.attribute_tables:
            return
        attributes, types = self.attributes, self.types
        union = attributes.union_of(function)
        rows = []
        for d in attributes.decisions(function):
            t = d.type
            if t is None:
                spec = "None"
            elif union is not None:
                record = self.use(union)
                field = next((f for f in types.records[union].fields if f.name == t.member), None)
                enum = types.enum_class(field.type) if field else None
                member = f", member={t.member!r}" if t.member else ""
                spec = f"_c.AttributeValue({record}{member}" + (
                    f", enum={self.use(enum)})" if enum else ")"
                )
            else:
                assert t.ctype is not None
                c_type = attributes.c_type(t.ctype)
                ctype = self.ctype(types.field_type(c_type))
                enum = types.enum_class(c_type)
                extra = f", enum={self.use(enum)}" if enum else ""
                extra += ", array=True" if t.array else ""
                extra += f", length={t.length}" if t.length is not None else ""
                spec = f"_c.AttributeValue({ctype}{extra})"
            rows.append(f"    {d.value}: {spec},  # {d.enumerator}")
        py_type = self.annotation(attributes.py_type(function))
        self.attribute_tables[name] = (
            f"{name}: _c.AttributeTable[{py_type}] = _c.AttributeTable(\n    {{\n"
            + "\n".join("    " + r for r in rows)
            + "\n    }\n)"
        )

    def option_table(self, function: str, group: OptionGroup) -> str:
        """Emit (once) the table of a group's option enum: value -> OptionValue; its name."""
        options, types = self.options, self.types
        enum = options.enum_of(function, group)
        name = options.table_name(enum)
        if name in self.option_tables:
            return name
        by_name = {k.name: k.value for k in types.enums[enum].enumerators}
        rows = []
        for d in options.decisions(enum):
            t = d.type
            if t is None:
                why = d.source.split(": ", 1)[-1]
                spec = f'_c.OptionValue("refused", why={why!r})'
            else:
                args = [repr(str(t.kind))]
                if t.kind in (ValueKind.UNSIGNED, ValueKind.INT):
                    args.append(self._option_range(Builtin(str(t.kind))))
                elif t.kind is ValueKind.ENUM:
                    assert t.enum is not None
                    args.append(self._option_range(options.enum_type(t.enum)))
                elif t.kind is ValueKind.FLOAT and not t.out:
                    raise RenderError(f"{enum}.{d.enumerator}: a float C only reads")
                if t.out:
                    args.append("out=True")
                if t.length is not None:
                    if t.length not in by_name:
                        raise RenderError(f"{enum}.{d.enumerator}: no length option {t.length}")
                    args.append(f"length={by_name[t.length]}")
                spec = f"_c.OptionValue({', '.join(args)})"
            rows.append(f"        {d.value}: {spec},  # {d.enumerator}")
        own = self._option_range(EnumRef(enum))
        element = self.ctype(types.field_type(EnumRef(enum)))
        self.option_tables[name] = (
            f"{name} = _c.OptionTable(\n    {own},\n    {{\n"
            + "\n".join(rows)
            + f"\n    }},\n    {element},\n)"
        )
        return name

    def _option_range(self, t) -> str:
        r = integer_range(self.types, t)
        assert r is not None, t
        return _range_spec(self, r)

    @property
    def cuda_version(self) -> int:
        return self.model.cuda_version

    @property
    def compiles(self) -> bool:
        """Whether the compiled backend has this module's checked functions in C."""
        return self.context.surface in compiled_families()

    @property
    def imports(self) -> list[str]:
        """Names of the raw module the generated code uses at run time."""
        return sorted(self._imports)

    @property
    def error_classes(self) -> list[tuple[str, int]]:
        """(class name, code), one per distinct code, for type checkers."""
        seen: dict[int, str] = {}
        for name, value in self.status.enumerators if self.status else ():
            if value and value not in seen:
                seen[value] = self.status.class_name(name)  # type: ignore[union-attr]
        return [(name, code) for code, name in seen.items()]

    @property
    def error_base(self) -> str:
        """The cudart.errors class every failure of this module raises."""
        return self.status.base_class if self.status else RUNTIME_ERROR_BASE

    @property
    def error_base_spelled(self) -> bool:
        """Whether cudart/errors.py spells the base class out (with its docs); a family
        added by its descriptor alone gets one made by cudart.errors.family_class."""
        return isinstance(getattr(cudart.errors, self.error_base, None), type)

    @property
    def error_enum(self) -> str:
        return self.status.enum if self.status else "cudaError"

    @property
    def error_factory(self) -> str:
        """The expression the module's `_error(code, _lib)` is: the runtime's own
        (cudart._checked.error, which also names the code through cudaGetErrorName),
        or, for another family, the generic one with its message function: the one
        that takes only the status and returns text named ...String."""
        if self.error_base == RUNTIME_ERROR_BASE:
            return "_c.error"
        status = self.status
        assert status is not None
        message, written = self._text_function(status, "String")
        name, _ = self._text_function(status, "Name")
        args = [f"_lib.{status.enum}", self.error_base, f'"{message}"' if message else "None"]
        if name:
            args.append(f'"{name}"')
        if written:
            args.append("written=True")
            # Text functions that can fail (a stub libcuda fails them all): the header's
            # description of each code is the message where the library gives none.
            docs = self._status_docs(status)
            if docs:
                args.append("docs={" + ", ".join(f"{n!r}: {d!r}" for n, d in docs) + "}")
        return f"_c.status_error({', '.join(args)})"

    def _status_docs(self, status) -> list[tuple[str, str]]:
        """(enumerator, the header's doc of it) for each documented failure."""
        enum = next(e for e in self.model.enums if e.name == status.enum)
        return [(k.name, k.doc) for k in enum.enumerators if k.doc and k.name != status.success]

    def _text_function(self, status, suffix: str) -> tuple[str | None, bool]:
        """The family's function that names or describes a status (its name ends in
        `suffix`): (name, whether it writes the text through a `const char **` after
        the status, as the driver's do, rather than returning it). NVRTC has a message
        function only; the runtime's own are cudart._checked.error's."""
        for f in self.model.functions:
            if not f.name.endswith(suffix) or not f.params:
                continue
            if getattr(f.params[0].type, "name", None) != status.result:
                continue
            if len(f.params) == 1:
                return f.name, False
            if len(f.params) == 2 and self.types.classify(f.params[1].type) is not None:
                return f.name, True
        return None, False

    @property
    def extra_ctypes(self) -> list[str]:
        """The ctypes names the code uses beyond those the template always imports
        (c_uint32: nvJitLinkCreate's uint32_t)."""
        return sorted(self._ctypes - TEMPLATE_CTYPES)

    def use(self, name: str) -> str:
        """A name of the raw module the code uses, imported."""
        if name.startswith("c_"):
            self._ctypes.add(name)
        elif name not in ("None", "POINTER"):
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
            if word not in ("list", "None", "int", "float", "bool", "bytes", "str"):
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
    after: str | None = None  # what a successful call records (its Effect)
    claim: str | None = None  # marks, before C, what the call ends (_ENDS)
    adopt: str | None = None  # records a handle output as its parent's child (PARENTS)


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
    sized = f.measure(p)
    return p.py_type, (
        f"if {n}.__class__ is not int:",
        f"    {n} = _c.pointer({n}, {n!r}, {f.writable(c)}{sized})",
        *_address_check(f, n),
    )


def _in_ref(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    n, element = p.py_name, f.v.ctype(p.ctype)
    record = f.v.types.classify(f.v.types.pointee(c.type)) is TypeKind.RECORD
    sized = f.measure(p)
    # What C fills for the caller: a list would be copied, so it is refused there.
    convert = (
        f"_c.filled_ref({n}, {element}, {n!r}"
        if p.filled
        else (f"_c.ref({n}, {element}, {n!r}, {f.writable(c)}")
    )
    return p.py_type, (
        f"if {n}.__class__ is not int:",
        f"    {n} = {convert}{sized})",
        *_address_check(f, n, element if record else None),
    )


# An int address (the fast path above) C would misread: negative or 2**64 or more
# (ctypes wraps or masks it), or, where C reads a record, a small int (only NULL and
# addresses from 64 KiB up can be a record's).
_ADDRESS_END = 1 << 64
_LOWEST_RECORD_ADDRESS = 1 << 16


def _address_check(f: _Function, n: str, record: str | None = None) -> tuple[str, ...]:
    where = f'"{f.plan.name}", {n!r}'
    # `n >> 64` is non-zero for a negative int too: one operation for both bounds.
    if record is None:
        return (f"elif {n} >> 64:", f"    raise _c.address_error({n}, {where})")
    return (
        f"elif {n} >> 64 or 0 < {n} < {_LOWEST_RECORD_ADDRESS}:",
        f'    raise _c.address_error({n}, {where}, "{record}")',
    )


def _range_check(f: _Function, n: str, c: Param) -> tuple[str, ...]:
    """Lines that refuse an integer argument outside its C type (generator/ctypes_map.py's
    integer_range): an int inside passes with a class test and a comparison or two
    (an enum member of its own class with one), everything else goes to cudart._convert."""
    return _range_lines(f.v, f.plan.name, n, c)


def _builder_size(b: RecordBuilder, param: str, names: dict[str, str]) -> str:
    """The size arguments of a builder's `_c.address` call (generator/sizes.py
    BUILDER_SIZES), or "" where the memory's size is unchecked."""
    entry = BUILDER_SIZES.get((b.name, param))
    if entry is None:
        return ""
    factors, _why = entry
    missing = [f for f in factors if f not in names]
    if missing:
        raise RenderError(f"{b.name}: BUILDER_SIZES names no parameter {missing}")
    product = " * ".join(names[f] for f in factors)
    return f', {product}, "{b.name}(): {product}"'


def _range_spec(v: CheckedView, r: IntegerRange) -> str:
    """The module-level name of an integer's or an enum's range facts (what
    cudart._convert.integer and enum_argument take), emitted once."""
    if r.enum is None:
        return v.integer_type(r.c_name, f"({r.low}, {r.high}, {r.c_name!r})")
    enum = v.use(r.enum)
    facts = f"({enum}, {r.low}, {r.high}, {r.flags}, {r.c_name!r})"
    # One enum under two typedef names (cuda.h's CUstreamAttrID and CUlaunchAttributeID
    # are CUlaunchAttributeID_enum) is named in messages as the caller's type says.
    taken = v.integer_types.get(range_name(r.enum))
    owner = r.enum if taken in (None, facts) else f"{r.enum} {r.c_name}"
    return v.integer_type(owner, facts)


def _range_lines(v: CheckedView, function: str, n: str, c: Param) -> tuple[str, ...]:
    r = integer_range(v.types, c.type)
    if r is None:
        return ()
    where = f'"{function}", {n!r}'
    spec = _range_spec(v, r)
    if r.enum is None:
        # An unsigned type of N bits: `n >> N` is non-zero exactly outside 0..2**N-1
        # (a negative int shifts to -1), cheaper than a chained comparison.
        bits = r.high.bit_length()
        if r.low == 0 and r.high == (1 << bits) - 1:
            outside = f"{n} >> {bits}"
        else:
            outside = f"not {r.low} <= {n} <= {r.high}"
        # A device address (CUdeviceptr) also takes what stands for device memory, and
        # where C writes there, never read-only memory (ctypes_map.device_address_written).
        convert, written = "integer", ""
        if v.types.is_device_address(c.type):
            convert = "device_pointer"
            written = ", True" if device_address_written(function, c.name) else ""
        return (
            f"if {n}.__class__ is not int or {outside}:",
            f"    {n} = _c.{convert}({n}, {spec}, {where}{written})",
        )
    enum = v.use(r.enum)
    if r.flags is not None:
        bad = f"{n} & {~r.flags}"  # a bit outside the flags, or a negative value
    else:
        # A module-level frozenset of the values (an enum class's own attributes cost
        # a metaclass lookup per call).
        assert r.members is not None
        values = f"_{r.enum}_members"
        v.integer_types[values] = f"frozenset({tuple(sorted(r.members))})"
        bad = f"{n} not in {values}"
    # A member of the class is checked too: int.__new__(cudaMemcpyKind, 2**32 + 2) is
    # of the class and no member, and ctypes would pass it masked to 2.
    return (
        f"if ({n}.__class__ is not {enum} and {n}.__class__ is not int) or {bad}:",
        f"    {n} = _c.enum_argument({n}, {spec}, {where})",
    )


# The extra arguments of `_c.pointer` / `_c.ref` for a size relation (generator/sizes.py),
# per measure: formats over of (the inputs' Python names), what (the label's inputs) and
# item (a pointer's size, for a `void **` array). `_c.pointer(v, name, writable, size,
# what)`; `_c.ref(v, ctype, name, writable, count, what, size)`.
_POINTER_MEASURES: dict[Measure, tuple[str, str]] = {
    Measure.BYTES: ("{sum}", "{what}"),
    Measure.ROWS: ("_c.rows({of})", "({height} - 1) * {pitch} + {width}"),
    Measure.ELEMENTS: ("_c.elements({of}, {item})", "{what} pointers"),
}
_REF_MEASURES: dict[Measure, str] = {
    Measure.BYTES: ', None, "{function}: {what}", {sum}',
    Measure.ELEMENTS: ', {of}, "{function}: {what}"',
    Measure.RECORD: ', 1, "{function}: the record"',
    Measure.REGIONS: ', _c.regions({of}), "{function}: ceil({size} / {granularity})"',
    Measure.EXACT: ', {of}, "{function}", exact=True',
}


def _in_string(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    n = p.py_name
    # bytes with a NUL goes to cstring too, which refuses it: C would read the text only
    # up to its first NUL (driver.cuModuleGetFunction(m, b"k\0junk") would look up "k").
    return p.py_type, (
        f'if {n}.__class__ is not bytes or b"\\0" in {n}:',
        f"    {n} = _c.cstring({n}, {n!r})",
    )


def _in_strings(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    # A list or tuple becomes a C array of C strings, kept alive by the name until the
    # call returns; anything else is an address, as for a pointer.
    n = p.py_name
    count = f.py_name(p.partner) if p.partner else "None"
    return p.py_type, (
        f"if {n}.__class__ is list or {n}.__class__ is tuple:",
        f"    {n} = _c.strings({n}, {count}, {n!r})",
        f"elif {n}.__class__ is not int:",
        f"    {n} = _c.pointer({n}, {n!r}, False)",
        *_address_check(f, n),
    )


def _in_struct(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    f.v.use(p.ctype)
    if p.ctype == DIM3:  # launch geometry: an int or a tuple too, as Function.launch takes
        n = p.py_name
        return (
            f"{p.py_type} | int | tuple[int, ...]",
            (f"if {n}.__class__ is not {p.ctype}:", f"    {n} = _c.dim3({n}, {p.ctype}, {n!r})"),
        )
    return p.py_type, ()


def _in_scalar(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    enum = f.v.types.enum_class(c.type)
    checks = _range_check(f, p.py_name, c)
    if p.py_type == "int" and enum:
        return f"{f.v.use(enum)} | int", checks
    return p.py_type, checks


# The stream handle types: a host function launched into one may be captured.
_STREAM_TYPES = ("cudaStream_t", "CUstream")


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
            if q.kind is ParamKind.HANDLE and q.ctype in _STREAM_TYPES
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


def _in_attribute(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    # The attribute argument picks the value's C type from the module's table
    # (generator/attributes.py); C gets a pointer to storage of that type.
    n, attr = p.py_name, f.py_name(p.partner or "")
    f.v.attribute_table(f.plan.function.name, p.ctype)
    return p.py_type, (f'{n} = _c.attribute_value({n}, {attr}, {p.ctype}, "{f.plan.name}", "{n}")',)


def _in_device_function(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    # A Function stays itself (ctypes takes its handle): the kernel arguments beside it
    # are packed with its parameter types. The driver's `CUfunction f` is a handle: a
    # Function gives its CUfunction or CUkernel, carried with it (cudart._convert).
    n = p.py_name
    if p.ctype != "c_void_p":
        cls = f.v.use(p.ctype)
        return f"{cls} | _HandleLike", (
            f"if {n}.__class__ is not int:",
            f"    {n} = _c.driver_function({n}, {cls}, {n!r})",
            *_address_check(f, n),
        )
    return p.py_type, (
        f"if {n}.__class__ is not int:",
        f"    {n} = _c.device_function({n}, {n!r})",
        *_address_check(f, n),
    )


def _in_kernel_args(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    # A tuple of values is packed for the kernel `partner`; the packed object is held
    # in the parameter's name for the call.
    n = p.py_name
    func = f.py_name(p.partner) if p.partner else "None"
    return p.py_type, (
        f"if {n}.__class__ is not int:",
        f"    {n} = _c.kernel_args({n}, {func}, {n!r})",
        *_address_check(f, n),
    )


def _in_function_pointer(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    # An address or a ctypes function pointer, never memory (cudart._convert).
    n = p.py_name
    # The typedef's CFUNCTYPE: a ctypes function pointer of another prototype is refused.
    typedef = _typedef(c)
    prototype = f", {f.v.use(typedef)}" if isinstance(c.type, TypedefRef) else ""
    return p.py_type, (
        f"if {n}.__class__ is not int:",
        f'    {n} = _c.function_pointer({n}, {n!r}, "{typedef}"{prototype})',
        *_address_check(f, n),
    )


def _typedef(c: Param) -> str:
    return c.type.name if isinstance(c.type, TypedefRef) else "function pointer"


def _in_image(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    # An image's header is checked before C parses it (cudart._convert): in memory
    # (C has no length), or in the file a name names.
    n = p.py_name
    if f.v.types.classify(c.type) is TypeKind.CHAR_POINTER:
        return p.py_type, (f"{n} = _c.image_file({n}, {n!r})",)
    return p.py_type, (
        f"if {n}.__class__ is not int:",
        f"    {n} = _c.image({n}, {n!r})",
        *_address_check(f, n),
    )


def _in_integer_handle(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    # Always converted (no hot path takes one): an int is range-checked, one of ours
    # (cudart._handles.IntegerHandle) checked for its kind and for a destroy.
    n = p.py_name
    return p.py_type, (f'{n} = _c.integer_handle({n}, "{p.ctype}", {n!r})',)


def _in_handle_ref(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    # An array of the one handle: cudart._convert.ref converts a list's handles as handle
    # arguments (kind, destroyed or not) and C reads the handle by address.
    # The array takes its own name: the parameter keeps the caller's object, which a
    # destroy marks (Effect.DESTROYS).
    n, cls = p.py_name, f.v.use(p.ctype)
    array = _handle_ref_array(n)
    return f"{cls} | _HandleLike", (f"{array} = _c.ref([{n}], {cls}, {n!r}, {f.writable(c)})",)


# cuda.h's markers of the `extra` option list (pointer macros: the raw module has their
# values from the model), in the order cudart._convert.argument_buffer takes them.
ARGUMENT_BUFFER_MARKERS = (
    "CU_LAUNCH_PARAM_BUFFER_POINTER",
    "CU_LAUNCH_PARAM_BUFFER_SIZE",
    "CU_LAUNCH_PARAM_END",
)


# The driver's kernel handle, which an argument buffer is packed for.
KERNEL_HANDLE = "CUfunction"


def _in_argument_buffer(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...]]:
    # Always converted (a launch is no hot path of this layer): even an int address is
    # checked against the kernelParams beside it, which C refuses to take with it. The
    # option list built around a buffer is held in the parameter's name for the call.
    n, params = p.py_name, f.py_name(p.partner or "")
    macros = {m.name for m in f.v.model.macros}
    missing = [m for m in ARGUMENT_BUFFER_MARKERS if m not in macros]
    if missing:
        raise RenderError(f"{f.plan.name}.{p.name}: the model has no {', '.join(missing)}")
    markers = ", ".join(f.v.use(m) for m in ARGUMENT_BUFFER_MARKERS)
    # The kernel it launches: its parameters' span is the size C is told.
    kernels = [q.py_name for q in f.plan.params if q.ctype == KERNEL_HANDLE and q.role is Role.IN]
    if len(kernels) != 1:
        raise RenderError(f"{f.plan.name}.{p.name}: no one {KERNEL_HANDLE} input to launch")
    return p.py_type, (
        f'{n} = _c.argument_buffer({n}, {params}, ({markers}), "{f.plan.name}", {n!r}, '
        f"{params!r}, {kernels[0]})",
    )


def _queried(f: _Function, p: ParamPlan, c: Param) -> tuple[str, tuple[str, ...], _Result]:
    """A buffer C fills with as much as its partner function returns (Measure.QUERIED):
    a given buffer is checked against the partner's answer; omitted, one of that size is
    made and what C wrote comes back (bytes, or a list of the elements)."""
    n, partner = p.py_name, p.measure_of[0]
    # A `void *` buffer holds bytes; a `T *` one, the partner's count of T.
    element = "c_char" if p.kind is ParamKind.POINTER else f.v.ctype(p.ctype)
    args = ", ".join(q.py_name for q in f.plan.inputs if q is not p)
    count, made = f"{partner}({args})", f"{n}_made"
    what = f'"{f.plan.name}: {count}"'
    if p.kind is ParamKind.POINTER:
        check = f"_c.pointer({n}, {n!r}, True, {count}, {what})"
    else:
        check = f"_c.ref({n}, {element}, {n!r}, True, {count}, {what})"
    value = f"{made}.raw" if element == "c_char" else f"{made}[:]"
    if element == "c_char":
        annotation = "bytes"
    else:
        annotation = "list[float]" if element in ("c_float", "c_double") else "list[int]"
    convert = (
        f"{made} = None",
        f"if {n} is None:",
        f"    {n} = {made} = ({element} * {count})()",
        f"elif {n}.__class__ is not int:",
        f"    {n} = {check}",
        *_address_check(f, n),
    )
    result = _Result(f"{value} if {made} is not None else None", f"{annotation} | None")
    return f"{p.py_type} | None", convert, result


def _handle_ref_array(name: str) -> str:
    return f"_{name}_array"


_INPUTS: dict[ParamKind, _InputEmitter] = {
    ParamKind.HANDLE: _in_handle,
    ParamKind.POINTER: _in_pointer,
    ParamKind.REF: _in_ref,
    ParamKind.STRING: _in_string,
    ParamKind.STRINGS: _in_strings,
    ParamKind.STRUCT: _in_struct,
    ParamKind.SCALAR: _in_scalar,
    ParamKind.CALLBACK: _in_callback,
    ParamKind.CALLBACK_DATA: _in_callback_data,
    ParamKind.CALLBACK_RECORD: _in_callback_record,
    ParamKind.ATTRIBUTE: _in_attribute,
    ParamKind.DEVICE_FUNCTION: _in_device_function,
    ParamKind.KERNEL_ARGS: _in_kernel_args,
    ParamKind.FUNCTION_POINTER: _in_function_pointer,
    ParamKind.IMAGE: _in_image,
    ParamKind.INTEGER_HANDLE: _in_integer_handle,
    ParamKind.HANDLE_REF: _in_handle_ref,
    ParamKind.ARGUMENT_BUFFER: _in_argument_buffer,
}
_RELEASED = frozenset({ParamKind.CALLBACK, ParamKind.CALLBACK_RECORD})
# Converted before the other inputs: a size check then reads the int a number became,
# and C gets that same int (an object's __index__ may answer each read differently).
_NUMBERS = frozenset({ParamKind.SCALAR, ParamKind.ENUM})


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


# Outputs the compiled backend provides itself (CheckedFunction.outputs): their kinds,
# and the storage argtypes an 8-byte slot holds, with what reading one gives.
_SLOT_KINDS = frozenset({ParamKind.SCALAR, ParamKind.ENUM, ParamKind.ADDRESS})
# What reading a slot gives is the protocol's (cudart/_fastproto.py), by the storage's
# ctypes code.
_OUTPUT_PYTHON_TYPES = {
    f"POINTER({ctype})": OUTPUT_VALUES[getattr(ctypes, ctype)._type_]
    for ctype in [
        "c_int",
        "c_uint",
        "c_long",
        "c_ulong",
        "c_longlong",
        "c_ulonglong",
        "c_size_t",
        "c_short",
        "c_ushort",
        "c_float",
        "c_double",
        "c_void_p",
    ]
}


def _inout_store(name: str) -> str:
    """An in-out parameter's ctypes storage: the parameter keeps the caller's value."""
    return f"{name}_"


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
    ParamKind.FIXED_BYTES: _Output("{n}.raw", storage="{n} = (c_char * {partner})()"),
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
    # {partner_store}: the in-out count's storage, which C has overwritten by then.
    ParamKind.COUNTED_ARRAY: _Output(
        "{n}[: {partner_store}.value] if {n} is not None else []",
        storage="{n} = ({ctype} * {partner})() if {partner} else None",
        import_annotation=True,
    ),
    ParamKind.BORROWED_ARRAY: _Output(
        "_c.borrowed({n}.value, {ctype}, {partner}.value)",
        storage="{n} = c_void_p()",
        import_annotation=True,
    ),
    ParamKind.COUNT: _Output(None),
    # Storage of the type the attribute argument selects (`size`: a byte count input that
    # C is told, checked against it), passed by reference; its Python value comes back.
    ParamKind.ATTRIBUTE: _Output(
        "_c.attribute_result({n}, {partner}, {ctype})",
        storage='{n} = _c.attribute_storage({partner}, {ctype}, "{function}"{size})',
    ),
    # cudart._hostmem: the memory as a buffer; the partner is its size, or the
    # (converted, so still the HostMemory) pointer input it maps.
    ParamKind.HOST_MEMORY: _Output("_c.host_memory({n}.value, {partner})"),
    ParamKind.MAPPED_HOST_MEMORY: _Output("_c.host_memory_like({n}.value, {partner})"),
    # An int subclass named after the typedef, which a destroy can mark.
    ParamKind.INTEGER_HANDLE: _Output('_c.integer_handle_of({n}.value, "{ctype}")'),
    # Storage of the C type the handle type input `partner` names ({table}: value -> its
    # ctypes type), passed by reference; an int or the fabric handle record comes back.
    ParamKind.SHAREABLE_HANDLE: _Output(
        "_c.shareable_handle({n})",
        storage='{n} = _c.shareable_handle_storage({partner}, {table}, "{function}")',
    ),
}

# ATTRIBUTE for several attributes at once (cudaMemRangeGetAttributes,
# cuPointerGetAttributes): storage for each behind the `void **` array C fills through,
# `count` the number of attributes, `sizes` their byte sizes (None where C is told none).
_SEVERAL_ATTRIBUTES = _Output(
    "_c.attribute_results({n}, {partner}, {ctype})",
    storage='{n} = _c.attribute_storages({partner}, {ctype}, "{function}", {sizes}, {count})',
)

# What a successful call records, per Effect: formats over n (the parameter's Python
# name, converted or the output), ctype (its handle class), of / of_ctype (the other's),
# function (the checked function's name).
_EFFECTS: dict[Effect, str] = {
    Effect.FREES: "_c.host_freed({n})",
    Effect.DESTROYS: '_c.destroyed({n}, "{ctype}", "{function}")',
    Effect.COPIES: '_c.holder_copied({n}, "{ctype}", {of}, "{of_ctype}")',
    Effect.HELD_BY: '_c.callback_held(_{n}_token, {of}, "{of_ctype}", _lib)',
    Effect.NODE_OF: "_c.host_node_added({n}, {of})",
}
# The effects that end what they are given: claimed before the call (cudart._checked.claim).
_ENDS = (Effect.DESTROYS, Effect.FREES)
# The docstring's word on each (a sentence over n and of, the Python names).
_EFFECT_DOCS: dict[Effect, str] = {
    Effect.FREES: "A cudart.HostMemory given as {n} is marked released: using it again raises.",
    Effect.DESTROYS: (
        "The handle object given as {n} is marked destroyed: passing it to the checked API "
        "again raises cudart.HandleDestroyedError (an int is the caller's promise)."
    ),
    Effect.COPIES: "{n} holds the Python callables of {of}'s host nodes too, until destroyed.",
    Effect.HELD_BY: "A Python callable in {n} stays registered until {holder} destroyed.",
    Effect.NODE_OF: "",
}
# What destroying a graph or exec also does (cudart.callbacks' holders).
_RELEASES = "The Python callables of host nodes that only {n} held are released."
# Who holds a host node record's callable, by the holder parameter's handle class.
_HOLDER_DOCS = {
    "cudaGraph_t": "{of} and the graphs and execs copied from it are",
    "cudaGraphExec_t": "{of} is",
    "cudaGraphNode_t": "{of}'s graph and the graphs and execs copied from it are",
    "CUgraph": "{of} and the graphs and execs copied from it are",
    "CUgraphExec": "{of} is",
    "CUgraphNode": "{of}'s graph and the graphs and execs copied from it are",
}
_HOST_MEMORY_DOCS = {
    ParamKind.HOST_MEMORY: " (a cudart.HostMemory: an int address and a buffer of {of} bytes)",
    ParamKind.MAPPED_HOST_MEMORY: (
        " (the cudart.HostMemory given as {of} where the address is its own)"
    ),
}
if set(_EFFECTS) != set(Effect):
    raise RenderError(
        f"checked effects missing for {', '.join(sorted(set(Effect) - set(_EFFECTS)))}"
    )

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

    def measure(self, p: ParamPlan) -> str:
        """The size-check arguments of a pointer input's conversion ("" where none)."""
        if p.measure is None:
            return ""
        of = [self.py_name(n) for n in p.measure_of]
        names = {
            "function": self.plan.name,
            "of": ", ".join(of),
            "what": " + ".join(of),
            "sum": of[0] if len(of) == 1 else f"_c.span({', '.join(of)})",
            "item": "_c.POINTER_SIZE",
        }
        if p.measure is Measure.REGIONS:
            names.update(zip(("size", "granularity"), of, strict=True))
        if p.kind is ParamKind.REF:
            if p.measure not in _REF_MEASURES:
                raise RenderError(f"{self.plan.name}.{p.name}: no {p.measure} check for a ref")
            return _REF_MEASURES[p.measure].format(**names)
        if p.measure not in _POINTER_MEASURES:
            raise RenderError(f"{self.plan.name}.{p.name}: no {p.measure} check for a pointer")
        size, what = _POINTER_MEASURES[p.measure]
        if p.measure is Measure.ROWS:
            names.update(zip(("pitch", "width", "height"), of, strict=True))
        return f', {size.format(**names)}, "{self.plan.name}: {what.format(**names)}"'

    def py_name(self, c_name: str) -> str:
        """A parameter's Python name; a literal length (resolve.FIXED_LENGTH_OUTPUTS) as is."""
        if c_name.isdigit():
            return c_name
        return next(p.py_name for p in self.plan.params if p.name == c_name)

    def after(self, p: ParamPlan) -> str | None:
        """The line a successful call runs for the parameter's Effect, if it has one."""
        if p.effect is None:
            return None
        other = next((q for q in self.plan.params if q.name == p.effect_of), None)
        return _EFFECTS[p.effect].format(
            n=p.py_name,
            ctype=p.ctype,
            of=other.py_name if other else None,
            of_ctype=other.ctype if other else None,
            function=self.plan.name,
        )

    def adopt(self, p: ParamPlan) -> str | None:
        """The line a successful call runs for a handle output with a parent (lifetimes.PARENTS)."""
        if p.parent is None:
            return None
        if p.parent == CURRENT_CONTEXT:
            # The module's own checked getter: the context the call made it in.
            return f"_c.child_of_current({p.py_name}, cuCtxGetCurrent)"
        parent = next(q for q in self.plan.params if q.name == p.parent)
        return f"_c.child_of({p.py_name}, {parent.py_name}, {self.v.use(parent.ctype)})"

    def param(self, p: ParamPlan) -> _Param:
        part = self._param(p)
        part.after = self.after(p)
        part.adopt = self.adopt(p)
        if p.effect in _ENDS:
            # Marked before C and unmarked if C refuses, in one step with the check:
            # marking after C would let threads destroying one object all reach C.
            if part.release is not None:
                raise RenderError(f"{self.plan.name}.{p.name}: ends and releases")
            # C gets what the claim hands back: a claimed HostMemory refuses to be read
            # as memory (it is marked freed), so C is given its address instead.
            claim = f'_c.claim({p.py_name}, "{p.py_name}", "{self.plan.name}")'
            if part.call == p.py_name:
                given = f"{p.py_name}_given"
                part.claim, part.call = f"{given} = {claim}", given
            else:
                # C is given what the conversion built from the object (HANDLE_REF: an
                # array holding the handle, which C reads by address): the claim marks
                # the object and the call keeps what C takes.
                part.claim = claim
            part.release = f"_c.unclaim({p.py_name})"
        return part

    def _param(self, p: ParamPlan) -> _Param:
        v, n, c = self.v, p.py_name, self.c_params[p.name]
        if p.role is Role.IN:
            result = None
            if p.measure is Measure.QUERIED:
                annotation, convert, result = _queried(self, p, c)
            else:
                annotation, convert = _INPUTS[p.kind](self, p, c)
            annotation = self.option_annotation(p, annotation)
            default = ""
            if p.default is not None:
                named = p.default != "None" and not p.default.lstrip("-").isdigit()
                default = f" = {v.use(p.default) if named else p.default}"
            call = _handle_ref_array(n) if p.kind is ParamKind.HANDLE_REF else n
            return _Param(
                argtype=v.ctype(v.types.param_type(c.type)),
                call=call,
                first_call=call,
                signature=f"{n}: {annotation}{default}",
                convert=convert,
                result=result,
                release=f"_c.release(_{n}_token)" if p.kind in _RELEASED else None,
            )
        # The checked layer binds its own function objects: an output's argtype is
        # POINTER(storage), so the storage object itself is passed and ctypes takes its
        # address in C, which is much cheaper than byref() plus c_void_p's conversion.
        out = _OUTPUTS[p.kind]
        if p.kind is ParamKind.ATTRIBUTE:
            return self.attribute_output(p, c, out)
        spec = ATTRIBUTE_FUNCTIONS.get(self.plan.function.name)
        if p.kind is ParamKind.COUNT and spec is not None and spec.size_inout == p.name:
            return self.attribute_size(p, c)
        if p.kind is ParamKind.SHAREABLE_HANDLE:
            return self.shareable_output(p, c, out)
        ctype = v.ctype(p.ctype)
        if p.kind in (
            ParamKind.ARRAY,
            ParamKind.SIZED_ARRAY,
            ParamKind.COUNTED_ARRAY,
            ParamKind.CHAR_BUFFER,
            ParamKind.FIXED_BYTES,
        ):
            argtype = v.ctype(v.types.param_type(c.type))
        elif p.kind is ParamKind.BORROWED_ARRAY:
            argtype = f"POINTER({v.ctype('c_void_p')})"
        else:
            argtype = f"POINTER({ctype})"
        # In-out storage takes its own name: the parameter keeps the type it is annotated with.
        store = _inout_store(n) if p.role is Role.INOUT else n
        partner = self.py_name(p.partner) if p.partner else None
        names = {
            "n": store,
            "ctype": ctype,
            "partner": partner,
            "partner_store": _inout_store(partner) if partner else None,
        }
        part = _Param(argtype=argtype, call=store, first_call=out.first_call.format(**names))
        if p.role is Role.INOUT:
            part.signature = f"{n}: {p.py_type}"
            part.storage = f"{names['n']} = {ctype}({n})"
            if p.kind in (ParamKind.SCALAR, ParamKind.ENUM):
                # Its value goes in as the pointee's: checked as that C type.
                pointee = Param(p.name, v.types.pointee(c.type))
                part.convert = _range_check(self, n, pointee)
        else:
            part.storage = out.storage.format(**names) if out.storage else None
            part.array = out.array.format(**names) if out.array else None
            if p.kind is ParamKind.STRUCT and v.types.size_align(v.types.pointee(c.type))[1] > 16:
                # C aligns it beyond what Python's allocator gives (CUtensorMap: 64 or
                # 128 bytes), and the call may check the address it writes to.
                part.storage = f"{store} = _c.aligned({ctype})"
        if p.role is not Role.COUNT and out.result is not None:
            result_type = v.annotation(p.py_type) if out.import_annotation else p.py_type
            part.result = _Result(out.result.format(**names, py_type=result_type), result_type)
        return part

    def attribute_output(self, p: ParamPlan, c: Param, out: _Output) -> _Param:
        """A getter's value: storage of the attribute's type, passed by reference."""
        v, n = self.v, p.py_name
        v.attribute_table(self.plan.function.name, p.ctype)
        spec = ATTRIBUTE_FUNCTIONS[self.plan.function.name]
        names = {
            "n": n,
            "ctype": p.ctype,
            "partner": self.py_name(p.partner or ""),
            "function": self.plan.name,
            "size": f", {self.py_name(spec.size)}" if spec.size else "",
        }
        if spec.count:
            out = _SEVERAL_ATTRIBUTES
            names["count"] = self.py_name(spec.count)
            names["sizes"] = self.py_name(spec.size) if spec.size else "None"
        assert out.storage is not None and out.result is not None
        storage, result = out.storage, out.result
        return _Param(
            argtype=v.ctype(v.types.param_type(c.type)),
            call=f"_c.byref({n})",
            first_call=n,
            storage=storage.format(**names),
            result=_Result(result.format(**names), v.annotation(p.py_type)),
        )

    def attribute_size(self, p: ParamPlan, c: Param) -> _Param:
        """The value's byte size, in and out (AttributeFunction.size_inout): a size_t the
        checked function fills with the size of what C is handed (the setter's converted
        value, a string's NUL included; the getter's storage), passed by reference."""
        v, n = self.v, p.py_name
        value = self.py_name(p.partner or "")
        return _Param(
            argtype=v.ctype(v.types.param_type(c.type)),
            call=f"_c.byref({n})",
            first_call=f"_c.byref({n})",
            storage=f"{n} = _c.attribute_size({value})",
        )

    def shareable_output(self, p: ParamPlan, c: Param, out: _Output) -> _Param:
        """An OS handle typed by the handle type argument (resolve.SHAREABLE_HANDLES)."""
        v, n = self.v, p.py_name
        partner = self.c_params[p.partner or ""]
        enum = v.types.enum_class(partner.type)
        assert enum is not None and out.storage is not None and out.result is not None
        handles = shareable_handle_types(v.types, enum)
        table = f"_{enum}_handles"
        rows = ", ".join(f"{value}: {v.ctype(ctype)}" for value, (_, ctype) in handles.items())
        v.integer_types[table] = f"{{{rows}}}"
        records = sorted({t for _, t in handles.values() if not t.startswith("c_")})
        names = {
            "n": n,
            "partner": self.py_name(partner.name),
            "table": table,
            "function": self.plan.name,
        }
        return _Param(
            argtype=v.ctype(v.types.param_type(c.type)),
            call=f"_c.byref({n})",
            first_call=n,
            storage=out.storage.format(**names),
            result=_Result(out.result.format(**names), " | ".join(["int", *records])),
        )

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
        typed, typing = self.typed_options()
        failed = f"_c.with_written(_error(err, _lib), {', '.join(typed)})" if typed else ""
        raise_error = ["if err:", *releases, f"    raise {failed or '_error(err, _lib)'}"]
        afters = [q.after for q in parts if q.after] + [q.adopt for q in parts if q.adopt]
        if typed:
            # What C wrote back through the typed options comes back after the outputs.
            results.append(_Result(f"_c.written({', '.join(typed)})", "_c.OptionsWritten"))
            returns, result = self.returns(results), ", ".join(r.value for r in results)
            kept = KEPT_WITH.get(plan.function.name)
            if kept:
                afters.append(f"_c.keep_options({self.py_name(kept)}, {', '.join(typed)})")
        if afters and plan.result is not ResultKind.ERROR:
            raise RenderError(f"{name}: effects need a cudaError_t result")

        body: list[str] = []
        if plan.function.deprecated:
            replacement = f'"{plan.replacement}"' if plan.replacement else "None"
            body.append(f'_c.deprecated("{name}", {replacement})')
        body += typing
        numbers = [p.kind in _NUMBERS for p in plan.params]
        ordered = sorted(range(len(parts)), key=lambda i: not numbers[i])
        body += [line for i in ordered for line in parts[i].convert]
        slots = self.output_slots(parts)
        body += [q.storage for i, q in enumerate(parts) if q.storage and i not in slots]
        body += [q.claim for q in parts if q.claim]
        if plan.result in (ResultKind.STRING, ResultKind.STRUCT, ResultKind.VALUE, ResultKind.VOID):
            value = plan.result is not ResultKind.VOID
            keep = ("result = " if result else "return ") if value else ""
            called = f"_{name}({call})"
            if plan.result is ResultKind.STRING:
                called = f"_c.text({called})"
            body += ["try:", f"    {keep}{called}", *catch]
            if result:
                body.append(f"return {'result, ' if value else ''}{result}")
        elif slots:
            # The compiled backend provides these outputs itself (no ctypes storage);
            # the ctypes one fills storage objects and reads them.
            # (The storage objects are `<name>_`: the name itself holds the value.)
            names_out = [parts[i].call for i in slots]
            inputs = ", ".join(q.call for i, q in enumerate(parts) if i not in slots)
            stored = ", ".join(q.call + ("_" if i in slots else "") for i, q in enumerate(parts))
            body += [
                "try:",
                "    if _compiled:",
                f"        err, {', '.join(names_out)} = _{name}_out({inputs})",
                "    else:",
                *[
                    f"        {parts[i].call}_{(parts[i].storage or '')[len(parts[i].call):]}"
                    for i in slots
                ],
                f"        err = _{name}({stored})",
                *[f"        {n} = {n}_.value" for n in names_out],
                *catch,
                *raise_error,
                *afters,
            ]
            if result:
                unwrapped = result
                for n in names_out:
                    unwrapped = unwrapped.replace(f"{n}.value", n)
                body.append(f"return {unwrapped}")
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
                body += raise_error + afters
                if result:
                    body.append(f"return {result}")

        head = (
            f'def {name}({signature}) -> {returns}:\n    """{self.doc(signature, returns)}\n    """'
        )
        code = "\n".join([head] + ["    " + line for line in body])
        restype = self.v.ctype(self.v.types.result_type(plan.function.result))
        raw_returns = self.v.types.result_annotation(plan.function.result)
        argtypes = tuple_literal([q.argtype for q in parts])
        outputs = tuple_literal([str(i) for i in slots]) if slots else ""
        out_types = [_OUTPUT_PYTHON_TYPES[parts[i].argtype] for i in slots]
        out_returns = f"tuple[int, {', '.join(out_types)}]" if slots else ""
        return CheckedFunction(
            name, restype, raw_returns, argtypes, code, outputs, out_returns, signature, returns
        )

    def option_annotation(self, p: ParamPlan, annotation: str) -> str:
        """A typed option group's parameter also takes the typed form (or None)."""
        for group in self.plan.option_groups:
            if p.name == group.count:
                return f"{annotation} | None"
            if p.name in (group.options, group.values):
                return f"_c.OptionsLike | {annotation}"
        return annotation

    def typed_options(self) -> tuple[list[str], list[str]]:
        """The typed option groups (generator/jit_options.py): each group's packed local,
        and the lines that pack it first. What they pack is what the raw form passes (a
        count, a ctypes array of options, one of `void *` values), so the conversions of
        those parameters that follow check it as they check the raw form."""
        plan, typed, lines = self.plan, [], []
        for group in plan.option_groups:
            table = self.v.option_table(plan.function.name, group)
            names = tuple(self.py_name(n) for n in (group.count, group.options, group.values))
            count, options, values = names
            packed = f"{options}_typed"
            typed.append(packed)
            lines += [
                f"{packed} = _c.options_in({count}, {options}, {values}, {table}, "
                f'"{plan.name}", {names!r})',
                f"if {packed} is not None:",
                f"    {count}, {options}, {values} = "
                f"{packed}.count, {packed}.options, {packed}.values",
            ]
        return typed, lines

    def output_slots(self, parts: list[_Param]) -> list[int]:
        """The C parameters the compiled backend can provide as outputs: every output of
        a function that returns a cudaError_t, when each is a scalar, enum or address
        written through a pointer to a ctypes scalar (an 8-byte slot holds it)."""
        plan = self.plan
        if plan.result is not ResultKind.ERROR:
            return []
        slots = []
        for i, p in enumerate(plan.params):
            if p.role is Role.IN:
                continue
            if p.role is not Role.OUT or p.kind not in _SLOT_KINDS:
                return []
            if parts[i].argtype not in _OUTPUT_PYTHON_TYPES or parts[i].array:
                return []
            if not self.v.types.output_slot_size(self.c_params[p.name].type):
                return []  # C's own type must say what it writes (not a `void *`)
            slots.append(i)
        return slots

    def attribute_doc(self) -> list[str]:
        """What each attribute's value is, where an attribute argument types the value."""
        p = next((q for q in self.plan.params if q.kind is ParamKind.ATTRIBUTE), None)
        if p is None:
            return []
        attributes = self.v.attributes
        function = self.plan.function.name
        n, attr = p.py_name, self.py_name(p.partner or "")
        if p.role is Role.IN:
            head = (
                f"{n} is the Python value of the type {attr} selects, checked against its "
                "C type's range (a ctypes scalar is read as its value). For a raw pointer, "
                f"call the raw module's {function}."
            )
        elif ATTRIBUTE_FUNCTIONS[function].count:
            head = f"{n} comes back as a list: the Python value of each of {attr}, by its type."
        else:
            head = f"{n} comes back as the Python value of the type {attr} selects."
        union = attributes.union_of(function)
        if union and p.role is Role.IN:
            head += f" A {union} itself is passed as is."
        lines = [head, "", f"Values by {attr}:"]
        for d in attributes.decisions(function):
            if d.type:
                what = attributes.doc_line(function, d.type)
            else:
                what = "refused" if d.source.startswith("refused") else "undecided: refused"
            lines.append(f"    {d.enumerator}: {what}")
        return lines + [""]

    def options_doc(self) -> list[str]:
        """What each typed option group takes, and each option's value."""
        plan, lines = self.plan, []
        for group in plan.option_groups:
            count, options, values = (
                self.py_name(n) for n in (group.count, group.options, group.values)
            )
            enum = self.v.options.enum_of(plan.function.name, group)
            lines += [
                f"{options} takes the options typed: a mapping {{option: value}}, (option, "
                f"value) pairs, or a list of options with the list {values} of their values "
                f"(cuda-bindings' form: then the first {count} of each); {count} may be "
                "None. Each value is checked against "
                "its option's type; a log buffer is a size in bytes (cudart allocates it) or "
                "a writable buffer, and its size option is added where missing. What C writes "
                "back comes last in the result (cudart.OptionsWritten; also a failure's "
                "`written`). A ctypes array or an address keeps the raw form.",
                "",
                f"Values by {enum}:",
            ]
            for d in self.v.options.decisions(enum):
                what = d.type.describe() if d.type else "refused"
                lines.append(f"    {d.enumerator}: {what}")
            lines.append("")
        if KEPT_WITH.get(plan.function.name):
            kept = self.py_name(KEPT_WITH[plan.function.name])
            lines += [
                f"C may write through the options until {kept} is destroyed (a link state's "
                "logs; a library loaded lazily): they are kept with the "
                f"{kept} object, and the OptionsWritten reads them when asked.",
                "",
            ]
        return lines

    def queried_doc(self, p: ParamPlan) -> str:
        """What a buffer sized by its partner function takes, and what omitting it does."""
        if p.measure is not Measure.QUERIED:
            return ""
        args = ", ".join(q.py_name for q in self.plan.inputs if q is not p)
        size = f"{p.measure_of[0]}({args})"
        unit = "bytes" if p.kind is ParamKind.POINTER or p.ctype == "c_char" else "elements"
        return f" C writes {size} {unit}: a smaller buffer is refused; omitted, they are returned."

    def kind_doc(self, p: ParamPlan) -> str:
        if p.kind is ParamKind.SHAREABLE_HANDLE:
            enum = self.v.types.enum_class(self.c_params[p.partner or ""].type)
            assert enum is not None
            handles = shareable_handle_types(self.v.types, enum).values()
            each = ", ".join(
                f"{name}: {'int' if ctype.startswith('c_') else ctype}" for name, ctype in handles
            )
            return f" (by {self.py_name(p.partner or '')}: {each})"
        text = _HOST_MEMORY_DOCS.get(p.kind, "")
        return text.format(of=self.py_name(p.partner)) if text and p.partner else ""

    def effect_doc(self, p: ParamPlan) -> str:
        assert p.effect is not None
        of = self.py_name(p.effect_of) if p.effect_of else ""
        other = next((q for q in self.plan.params if q.name == p.effect_of), None)
        holder = _HOLDER_DOCS.get(other.ctype if other else "", "").format(of=of)
        text = _EFFECT_DOCS[p.effect].format(n=p.py_name, of=of, holder=holder)
        if p.effect is Effect.DESTROYS and p.ctype in RELEASES_CALLABLES:
            text += " " + _RELEASES.format(n=p.py_name)
        return text

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
            lines += [
                f"    {p.py_name}: "
                + (
                    "the attribute's value (below)"
                    if p.kind is ParamKind.ATTRIBUTE
                    else first_sentence(p.doc) + self.queried_doc(p)
                )
                for p in described
            ]
            lines.append("")
        lines += self.attribute_doc()
        lines += self.options_doc()
        outs = [p for p in plan.outputs if p.role is not Role.COUNT]
        if plan.result is ResultKind.QUERY:
            lines += ["Returns True when the work is complete, False while cudaErrorNotReady.", ""]
        elif outs:
            lines.append("Returns:")
            lines += [
                (f"    {p.py_name}: {first_sentence(p.doc)}" if p.doc else f"    {p.py_name}")
                + self.kind_doc(p)
                for p in outs
            ]
            if plan.option_groups:
                lines.append("    written: what C wrote back through the typed options")
            lines.append("")
        effects = [self.effect_doc(p) for p in plan.params if p.effect]
        effects += [
            f"{p.py_name} dies with "
            + (
                "the current context: its checked destroy"
                if p.parent == CURRENT_CONTEXT
                else f"{self.py_name(p.parent)}: a checked destroy of it"
            )
            + " marks the handle object destroyed too."
            for p in plan.params
            if p.parent
        ]
        if any(effects):
            lines += [" ".join(e for e in effects if e), ""]
        if plan.errors:
            lines += [
                f"Raises {self.v.error_base} subclasses for: " + ", ".join(plan.errors) + ".",
                "",
            ]
        if f.deprecated:
            instead = f" Use {plan.replacement} instead." if plan.replacement else ""
            lines += [f"Deprecated.{instead}", ""]
        params = [self.v.types.c_declaration(p.type, p.name) for p in f.params]
        lines.append(
            "C: " + self.v.types.c_declaration(f.result, f"{f.name}({', '.join(params) or 'void'})")
        )
        return docstring("\n".join(lines))
