"""The compiled view: model -> one minor's pieces of generated/_fast_<major>.c (templates/
fast_module.c.j2's macros; generator/render/compiled.py merges the minors of a major).

The second backend of the raw layer (issue 13): a CPython extension (limited API 3.11
with a GIL, the full API on a free-threaded Python: cudart/_capi.h; multi-phase init,
GIL-free: cudart/_cthreads.h; METH_FASTCALL) with one function per raw function, same
names and arguments, calling the symbol cudart._backend resolves with dlsym in the
libcudart the loader chose. The conversions themselves are cudart/_fastcall.h, written
once; this view only says, per parameter, which conversion and which C type: one
Converter per kind of C type (ARGUMENTS, and RESULTS for what comes back), which the
template calls. The numbers both sides agree on are cudart/_fastproto.py's, asserted in
the C at compile time (FastView.protocol). The call recorder of the tests is compiled
only where CUDART_FAST_TEST_HOOKS is defined (tests/support/fast_support.py), never in
the users' build.

Every function is called through a pointer typed twice over:
  * built for users (the sdist, `make setup`), by the model's own ABI prototype: the
    C types C passes (enums as their underlying integer, every pointer as void *,
    records by value as bytes of their size and alignment), so no CUDA header is needed;
  * built with CUDART_FAST_PINNED_HEADERS (tests/compiled/test_fast_backend.py, every version,
    -Werror), by `__typeof__(&name)` of NVIDIA's own declaration, with the same
    argument expressions: the C compiler then judges each call against the header's
    prototype, and every by-value record's size and alignment against the header's.
"""

from __future__ import annotations

from dataclasses import dataclass

from cudart import _fastproto as protocol

from ..context import GenerationContext
from ..ctypes_map import POINTER_KINDS, RenderError, TypeKind
from ..families import family
from ..gil import holds_gil
from ..model import Builtin, CType, EnumRef, Function, RecordRef
from ..plan import Measure, ParamKind, Role
from .base import (
    RUNTIME_SURFACE,
    c_prototype,
    function_doc,
    module_name,
    py_name,
)

# C integer spelling -> (signed, bits).
_INTEGERS = {
    "char": (True, 8),
    "signed char": (True, 8),
    "unsigned char": (False, 8),
    "_Bool": (False, 1),
    "short": (True, 16),
    "unsigned short": (False, 16),
    "int": (True, 32),
    "unsigned int": (False, 32),
    "long": (True, 64),
    "unsigned long": (False, 64),
    "long long": (True, 64),
    "unsigned long long": (False, 64),
}
# A record by value travels as bytes of its size and alignment where that is the same
# call on every 64-bit ABI CUDA runs on (x86-64 SysV, AArch64): more than 16 bytes (in
# memory on both), or no floating-point member (integer registers on both).
_LARGEST_REGISTER_RECORD = 16


def fast_module_name(cuda_version: int, surface: str = RUNTIME_SURFACE) -> str:
    """_fast_12050 (the runtime's view), _fast_driver_12050 (the driver's): the
    family's descriptor names them."""
    return f"{family(surface).compiled_module}_{cuda_version}"


def fast_merged_name(cuda_version: int, surface: str = RUNTIME_SURFACE) -> str:
    """The extension (and C file) of a version's major: _fast_12, _fast_driver_13."""
    return fast_module_name(cuda_version // 1000, surface)


# What a piece's own C names end with where the minors of a major render it otherwise:
# generator/render/compiled.py makes it "" or "_<the first minor of that text>".
SUFFIX = "\x01"


@dataclass(frozen=True)
class Converter:
    """How the generated C converts one kind of argument (a function of
    cudart/_fastcall.h) and passes it to C: the template calls it, whatever the kind.
    The formats are over a FastParam's fields and `v`, the local it converts into."""

    function: str  # (arg, index, *extra, &local[, &buffer]) -> 0, or -1 with ArgumentError
    local: str  # the local's name, before the parameter's index
    c_type: str  # the local's C type ("": the parameter's own, abi_type)
    extra: str  # the function's arguments between the index and the local ("": none)
    passed: str  # what the call passes C
    # The test recorder's Py_BuildValue code and its arguments (CUDART_FAST_TEST_HOOKS).
    recorded_code: str
    recorded_value: str
    buffer: bool = False  # a Py_buffer held for the call, released after it


_POINTER = Converter(
    "cudart_pointer",
    "a",
    "void *",
    "(int)((spec->storage >> {index}) & 1), {need}",
    "{v}",
    "K",
    "(unsigned long long)(uintptr_t){v}",
    buffer=True,
)
_SIGNED = Converter("cudart_signed", "i", "long long", "{bits}", "({abi_type}){v}", "L", "{v}")
_UNSIGNED = Converter(
    "cudart_unsigned", "u", "unsigned long long", "{bits}", "({abi_type}){v}", "K", "{v}"
)
_DOUBLE = Converter("cudart_double", "d", "double", "", "({abi_type}){v}", "d", "{v}")
_RECORD = Converter(
    "cudart_by_value",
    "a",
    "",
    'view->raw_module, "{record_class}", (Py_ssize_t)sizeof {v}, '
    "&view->classes[cudart_class_{record_class}]",
    "{v}",
    "y#",
    "(const char *)&{v}, (Py_ssize_t)sizeof {v}",
)
# The argument converter of each TypeKind the compiled backend passes: one per C type
# kind; an integer kind's is a pair, (signed, unsigned), picked by its C type.
_INTEGER = (_SIGNED, _UNSIGNED)
ARGUMENTS: dict[TypeKind, Converter | tuple[Converter, Converter]] = {
    **{kind: _POINTER for kind in (*POINTER_KINDS, TypeKind.ARRAY)},
    **{kind: _INTEGER for kind in (TypeKind.INTEGER, TypeKind.ENUM, TypeKind.CHAR, TypeKind.BOOL)},
    TypeKind.FLOAT: _DOUBLE,
    TypeKind.RECORD: _RECORD,
}


@dataclass(frozen=True)
class FastParam:
    index: int
    name: str  # the Python name (the text signature's)
    converter: Converter
    abi_type: str  # the C type of the local the call passes
    bits: int = 0  # integers: the C type's width
    # Pointers: bytes a buffer must hold (a record's size where the pointer is to exactly
    # one; 0 otherwise: an array may be empty), and TypeMapper.output_slot_size (0: the
    # parameter cannot be an output slot).
    need: int = 0
    slot_size: int = 0
    record: str = ""  # records: the generated record's name (its C type in CUDART_RECORD_T)
    record_class: str = ""  # records: its ctypes class's name

    def _format(self, text: str) -> str:
        return text.format(v=self.local, **vars(self))

    @property
    def local(self) -> str:
        """The C local the argument is converted into."""
        return f"{self.converter.local}{self.index}"

    @property
    def buffer(self) -> str:
        return f"b{self.index}" if self.converter.buffer else ""

    @property
    def declarations(self) -> list[str]:
        c_type = self.converter.c_type or self.abi_type
        space = "" if c_type.endswith("*") else " "
        lines = [f"{c_type}{space}{self.local};"]
        if self.buffer:
            lines += [f"Py_buffer {self.buffer};", f"{self.buffer}.obj = NULL;"]
        return lines

    def conversion(self, arg: str) -> str:
        """The converter's call on the Python argument `arg`: 0, or -1 having raised."""
        extra = self._format(self.converter.extra)
        args = [arg, str(self.index), *([extra] if extra else []), f"&{self.local}"]
        if self.buffer:
            args.append(f"&{self.buffer}")
        return f"{self.converter.function}({', '.join(args)})"

    @property
    def passed(self) -> str:
        return self._format(self.converter.passed)

    @property
    def recorded_code(self) -> str:
        return self.converter.recorded_code

    @property
    def recorded_value(self) -> str:
        return self._format(self.converter.recorded_value)

    @property
    def cleanup(self) -> str:
        return f"cudart_release(&{self.buffer});" if self.buffer else ""


@dataclass(frozen=True)
class ResultConverter:
    """How a C result becomes the Python one (`r` -> `result`: lines of C), and what the
    test recorder returns in its place (a zero of the type: an expression); over {c_type}."""

    value: tuple[str, ...]
    recorded: str


_ZERO = "PyLong_FromLong(0)"
# The result converter of each kind of C result the compiled backend returns.
RESULTS: dict[str, ResultConverter] = {
    "void": ResultConverter(
        ("result = Py_None;", "Py_INCREF(result);"), "(Py_INCREF(Py_None), Py_None)"
    ),
    "string": ResultConverter(
        ("result = r ? PyBytes_FromString(r) : (Py_INCREF(Py_None), Py_None);",),
        'PyBytes_FromStringAndSize("", 0)',
    ),
    "pointer": ResultConverter(
        ("result = r ? PyLong_FromVoidPtr(r) : (Py_INCREF(Py_None), Py_None);",), _ZERO
    ),
    "record": ResultConverter(
        ("result = PyBytes_FromStringAndSize((const char *)&r, (Py_ssize_t)sizeof r);",),
        "cudart_zero_bytes((Py_ssize_t)sizeof({c_type}))",
    ),
    "double": ResultConverter(
        ("result = PyFloat_FromDouble((double)r);",), "PyFloat_FromDouble(0.0)"
    ),
    "signed": ResultConverter(("result = cudart_from_signed((long long)r);",), _ZERO),
    "unsigned": ResultConverter(("result = cudart_from_unsigned((unsigned long long)r);",), _ZERO),
}


@dataclass(frozen=True)
class FastFunction:
    name: str  # public name
    declared: str  # the header's function (what __typeof__ names)
    params: tuple[FastParam, ...]
    result: str  # a kind of RESULTS
    result_type: str  # the C type of the result
    result_record: str = ""
    prototype: str = ""  # the header's
    doc: str = ""  # the docstring's text after the signature, as a C string literal's body
    declaration: str = ""  # the type of a pointer to it, spelled as the model reads the header
    releases_gil: bool = True  # generator/gil.py decides

    @property
    def returns(self) -> bool:
        return self.result_type != "void"

    @property
    def result_lines(self) -> list[str]:
        return [line.format(c_type=self.result_type) for line in RESULTS[self.result].value]

    @property
    def recorded_result(self) -> str:
        """What the test recorder returns for a call it records (CUDART_RECORDED)."""
        return RESULTS[self.result].recorded.format(c_type=self.result_type)

    @property
    def recorded(self) -> str:
        """CUDART_RECORDED's arguments after the name: Py_BuildValue's format and values,
        the converted arguments as the test recorder keeps them."""
        codes = "".join(p.recorded_code for p in self.params)
        return ", ".join([f'"({codes})"', *(p.recorded_value for p in self.params)])

    @property
    def reads_spec(self) -> bool:
        """Whether a variant's spec matters: it marks pointers as storage or outputs."""
        return any(p.converter is _POINTER for p in self.params)

    @property
    def slot_params(self) -> list[FastParam]:
        """The parameters a variant may make outputs (an 8-byte slot of the call's own):
        pointers to a scalar of 1 to 8 bytes."""
        return [p for p in self.params if p.slot_size]

    @property
    def output_slots(self) -> str:
        """slot_params as a bit mask."""
        mask = 0
        for p in self.slot_params:
            mask |= 1 << p.index
        return f"{mask:#x}"

    @property
    def text_signature(self) -> str:
        names = ", ".join(["$module", *[p.name for p in self.params], "/"][: len(self.params) + 2])
        return f"{self.name}({names})" if self.params else f"{self.name}($module)"


@dataclass(frozen=True)
class FastRecord:
    # The C type's name here (the typedef's, where one names the record), then its size
    # and alignment: a record whose layout differs between minors is two C types.
    name: str
    python_class: str  # the ctypes class's __name__ (the record's own name)
    c_spelling: str  # how the headers spell it ("struct cudaExtent", "dim3")
    size: int
    align: int
    argument: bool  # passed by value somewhere (not only returned)


class FastView:
    """What templates/fast_module.c.j2 reads."""

    def __init__(self, context: GenerationContext) -> None:
        self.model = context.model
        self.context = context.render
        # What the judge's build includes: the headers the parse started from.
        self.headers = tuple(name for name, _ in self.model.header_hashes)
        # (function, C parameter) pointing to exactly one record (the plans: an input
        # sizes.py measures as one, Measure.RECORD, or a record the call writes, kind
        # STRUCT), whose size a buffer passed there must have at least.
        self.one_record = {
            (plan.function.name, p.name)
            for plan in context.plans
            for p in plan.params
            if p.measure is Measure.RECORD
            or (p.role in (Role.OUT, Role.INOUT) and p.kind is ParamKind.STRUCT)
        }
        self.types = context.types
        self._records: dict[str, FastRecord] = {}
        self.functions = self._functions()

    @property
    def cuda_version(self) -> int:
        return self.model.cuda_version

    @property
    def module(self) -> str:
        return fast_module_name(self.model.cuda_version, self.context.surface)

    @property
    def raw_module(self) -> str:
        return module_name(self.model.cuda_version, self.context.surface)

    @property
    def protocol(self) -> list[tuple[str, int, str]]:
        """(C expression, its value in cudart/_fastproto.py, the constant's name): what the
        generated C asserts of _fastcall.h at compile time."""
        return [
            ("CUDART_SLOT_UNBOUND", protocol.SLOT_UNBOUND, "SLOT_UNBOUND"),
            ("CUDART_SLOT_RECORD", protocol.SLOT_RECORD, "SLOT_RECORD"),
            ("CUDART_MAX_PARAMS", protocol.MAX_PARAMS, "MAX_PARAMS"),
            ("sizeof(cudart_spec)", protocol.SPEC_SIZE, "SPEC_SIZE"),
            ("offsetof(cudart_spec, outs)", protocol.SPEC_OUTS_OFFSET, "SPEC_OUTS_OFFSET"),
            ("offsetof(cudart_spec, codes)", protocol.SPEC_CODES_OFFSET, "SPEC_CODES_OFFSET"),
            ("sizeof(unsigned long long)", protocol.OUTPUT_SLOT_BYTES, "OUTPUT_SLOT_BYTES"),
        ]

    @property
    def records(self) -> list[FastRecord]:
        return [self._records[name] for name in sorted(self._records)]

    def _functions(self) -> list[FastFunction]:
        by_name = {f.name: f for f in self.model.functions}
        public: dict[str, Function] = {f.name: f for f in self.model.functions if not f.variadic}
        for alias in self.model.aliases:
            target = by_name[alias.symbol]
            if not target.variadic:
                public[alias.public] = target
        kept = holds_gil(self.context.surface)
        unknown = sorted(set(kept) - set(public))
        if unknown:
            raise RenderError(
                f"families/{self.context.surface}.toml [gil] names functions this version "
                f"lacks: {unknown}"
            )
        variadic = [f.name for f in self.model.functions if f.variadic]
        if variadic:
            raise RenderError(f"variadic functions have no compiled form: {variadic}")
        # A variant's spec has one bit per C parameter.
        wide = sorted(name for name, f in public.items() if len(f.params) > protocol.MAX_PARAMS)
        if wide:
            raise RenderError(f"more than {protocol.MAX_PARAMS} parameters: {wide}")
        return [self._function(name, public[name], kept) for name in sorted(public)]

    def _function(self, public: str, f: Function, kept: dict[str, str]) -> FastFunction:
        params = tuple(
            self._param(i, py_name(p.name) if p.name else f"arg{i}", p.type, (f.name, p.name))
            for i, p in enumerate(f.params)
        )
        result, result_type, record = self._result(f.result)
        prototype = c_prototype(self.types, f)
        types = ", ".join(self.types.c_declaration(p.type) for p in f.params) or "void"
        declaration = self.types.c_declaration(f.result, f"(*)({types})")
        doc = _c_string(function_doc(public, f, prototype))
        return FastFunction(
            public,
            f.name,
            params,
            result,
            result_type,
            record,
            prototype,
            doc,
            declaration,
            releases_gil=f.name not in kept,
        )

    def _integer(self, t: CType) -> tuple[bool, int, str]:
        r = self.types.resolve(t)
        if isinstance(r, EnumRef):
            spelled = self.types.enums[r.name].underlying.name
        elif isinstance(r, Builtin):
            spelled = r.name
        else:
            raise RenderError(f"{t!r} is no integer")
        if spelled not in _INTEGERS:
            raise RenderError(f"no compiled conversion for C '{spelled}'")
        signed, bits = _INTEGERS[spelled]
        return signed, bits, spelled

    def _param(self, index: int, name: str, t: CType, key: tuple[str, str]) -> FastParam:
        kind = self.types.classify(t)
        converter = ARGUMENTS.get(kind)
        if converter is None:
            raise RenderError(f"no compiled conversion for a {kind.value} argument ({t!r})")
        if converter is _POINTER:
            need = self._record_size(t, kind) if key in self.one_record else 0
            slot = self.types.output_slot_size(t)
            return FastParam(index, name, _POINTER, "void *", need=need, slot_size=slot)
        if isinstance(converter, tuple):
            signed, bits, spelled = self._integer(t)
            return FastParam(index, name, converter[0] if signed else converter[1], spelled, bits)
        if converter is _DOUBLE:
            spelled = self.types.resolved(t, Builtin).name
            if spelled == "long double":
                raise RenderError("no compiled conversion for a long double argument")
            return FastParam(index, name, _DOUBLE, spelled)
        rec = self._record(t, argument=True)
        return FastParam(
            index,
            name,
            _RECORD,
            f"CUDART_RECORD_T({rec.name})",
            record=rec.name,
            record_class=rec.python_class,
        )

    def _result(self, t: CType) -> tuple[str, str, str]:
        kind = self.types.classify(t)
        if kind is TypeKind.VOID:
            return "void", "void", ""
        if kind is TypeKind.CHAR_POINTER:
            return "string", "const char *", ""
        if kind in POINTER_KINDS:
            return "pointer", "void *", ""
        if kind in (TypeKind.INTEGER, TypeKind.ENUM, TypeKind.CHAR, TypeKind.BOOL):
            signed, _bits, spelled = self._integer(t)
            return ("signed" if signed else "unsigned"), spelled, ""
        if kind is TypeKind.FLOAT:
            return "double", self.types.resolved(t, Builtin).name, ""
        if kind is TypeKind.RECORD:
            rec = self._record(t)
            return "record", f"CUDART_RECORD_T({rec.name})", rec.name
        raise RenderError(f"no compiled conversion for a {kind.value} result ({t!r})")

    def _record_size(self, t: CType, kind: TypeKind) -> int:
        """The size of the record a typed pointer points to; 0 for any other type."""
        if kind is not TypeKind.POINTER:
            return 0
        pointee = self.types.pointee(t)
        if self.types.classify(pointee) is not TypeKind.RECORD:
            return 0
        return self.types.size_align(pointee)[0]

    def _record(self, t: CType, argument: bool = False) -> FastRecord:
        name = self.types.record_class(t)
        rec = self.types.records[self.types.resolved(t, RecordRef).name]
        assert rec.size is not None and rec.align is not None
        if rec.size <= _LARGEST_REGISTER_RECORD and self._has_float(rec):
            raise RenderError(
                f"{name} ({rec.size} bytes) holds a floating-point member: passed by value it "
                "goes in floating-point registers, which bytes of its size do not reproduce"
            )
        spelling = name if name != rec.name else (rec.c_spelling or f"struct {rec.name}")
        name = f"{name}_{rec.size}_{rec.align}"
        seen = self._records.get(name)
        argument = argument or (seen is not None and seen.argument)
        self._records[name] = FastRecord(name, rec.name, spelling, rec.size, rec.align, argument)
        return self._records[name]

    def _has_float(self, rec) -> bool:
        for field in rec.fields:
            t = self.types.resolve(field.type)
            while not isinstance(t, (Builtin, RecordRef, EnumRef)) and hasattr(t, "element"):
                t = self.types.resolve(t.element)
            kind = self.types.classify(t)
            if kind is TypeKind.FLOAT:
                return True
            if kind is TypeKind.RECORD and self._has_float(
                self.types.records[self.types.resolved(t, RecordRef).name]
            ):
                return True
        return False


def _c_string(text: str) -> str:
    """`text` as the body of a C string literal (UTF-8 bytes as they are)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    # `??` would read as a trigraph to a warning; control characters as themselves.
    escaped = escaped.replace("??", "?\\?")
    return "".join(c if c >= " " or c == "\t" else f"\\{ord(c):03o}" for c in escaped)
