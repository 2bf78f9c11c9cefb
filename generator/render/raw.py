"""The raw view: model -> generated/sys_<version>.py through templates/sys_module.py.j2.

`RawView` is everything that template reads, each spelling taken from ctypes_map
(`TypeMapper.classify` and what reads it); the template only lays the module out.
"""

from __future__ import annotations

import textwrap
from typing import Literal

from .. import device_functions
from ..context import GenerationContext
from ..ctypes_map import (
    WRITTEN_DEVICE_ADDRESS_NAMES,
    IntegerRange,
    RenderError,
    TypeKind,
    integer_range,
)
from ..formatting import format_python
from ..model import (
    EnumRef,
    Field,
    FunctionProto,
    Pointer,
    Record,
    RecordRef,
    Typedef,
    TypedefRef,
)
from .base import (
    DIM3,
    FLAG_DEPRECATED,
    c_prototype,
    docstring,
    environment,
    function_doc,
    py_name,
    range_name,
    tuple_literal,
)

# The kind of stream handles (RawView.handle_kind): their classes derive from StreamHandle.
STREAM_KIND = "CUstream_st"

# Structs the runtime's headers declare for objects cuda.h declares under another tag:
# the runtime hands out the driver's objects (a cudaArray_t is a CUarray, as the
# interoperability docs say), so each is the driver's kind. The other runtime handles
# point at the driver's structs themselves (cudaStream_t: struct CUstream_st *).
HANDLE_TAG_TWINS: dict[str, str] = {
    "cudaArray": "CUarray_st",
    "cudaMipmappedArray": "CUmipmappedArray_st",
    "cudaGraphicsResource": "CUgraphicsResource_st",
    "CUexternalMemory_st": "CUextMemory_st",
    "CUexternalSemaphore_st": "CUextSemaphore_st",
    "cudaAsyncCallbackEntry": "CUasyncCallbackEntry_st",
}


# Per-thread symbols cuda.h defines as `static inline` functions under
# -DCUDA_API_PER_THREAD_DEFAULT_STREAM, which no driver exports (the H200's libcuda 580:
# tests/gpu/test_driver_exports.py): symbol -> (the legacy function the inline calls,
# its flags parameter, the enumerators of the flags it looks at, the one it then sets
# where none of them is, why). Where the library lacks the symbol, the bindings call the
# legacy one with that rewrite of the flags (cudart._binding.per_thread_inline).
PER_THREAD_INLINES: dict[str, tuple[str, str, tuple[str, ...], str, str]] = {
    "cuGetProcAddress_v2_ptsz": (
        "cuGetProcAddress_v2",
        "flags",
        ("CU_GET_PROC_ADDRESS_LEGACY_STREAM", "CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM"),
        "CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM",
        "cuda.h: `static inline CUresult cuGetProcAddress_v2_ptsz(...)`: `if ((flags & "
        "procAddressMask) == 0) flags |= CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;` "
        'then cuGetProcAddress_v2; CU_GET_PROC_ADDRESS_DEFAULT "is equivalent to '
        "CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM if ... the macro "
        'CUDA_API_PER_THREAD_DEFAULT_STREAM is defined"',
    ),
}


def render_module(context: GenerationContext) -> str:
    template = environment().get_template("sys_module.py.j2")
    return format_python(template.render(v=RawView(context)))


class RawView:
    """What templates/sys_module.py.j2 reads: names and ctypes spellings, decided here once."""

    def __init__(self, context: GenerationContext) -> None:
        self.model = context.model
        self.context = context.render
        self.types = context.types
        self.status = context.status
        self.replacements = list(context.replacements)
        self._check_unique_names()

    @property
    def cuda_version(self) -> int:
        return self.model.cuda_version

    @property
    def header_hashes(self) -> tuple[tuple[str, str], ...]:
        return self.model.header_hashes

    @property
    def header_names(self) -> str:
        """The headers the parse started from, wrapped for the module docstring."""
        text = "The headers: " + ", ".join(f"`{n}`" for n, _ in self.model.header_hashes) + "."
        return "\n".join(textwrap.wrap(text, 88, break_on_hyphens=False))

    @property
    def overview(self) -> str:
        """The module docstring's account of what it declares and what its calls return:
        the family's status type (generator/status.py), and whether every function or
        most return it."""
        text = (
            f"Everything the {self.context.api} headers declare, as a C program sees it: "
            "enums, integer macros, structs and unions with C's exact layout, handle and "
            "callback types, and every function under its public C name. Calls return what "
            f"C returns{self._status_returned}; pointer, handle and array arguments take an "
            "int address, None, bytes, `ctypes.byref(...)` or a ctypes array or pointer."
        )
        return "\n".join(textwrap.wrap(text, 88, break_on_hyphens=False))

    @property
    def _status_returned(self) -> str:
        status = self.status
        if status is None:
            return ""
        returning = sum(
            isinstance(f.result, TypedefRef | EnumRef) and f.result.name == status.result
            for f in self.model.functions
        )
        share = "every function" if returning == len(self.model.functions) else "most"
        return f" (an int `{status.result}` from {share})"

    @property
    def enums(self):
        return [e for e in self.model.enums if e.enumerators]

    @property
    def macros(self):
        return self.model.macros

    @property
    def records(self) -> list[Record]:
        return self.model.records

    def record_doc(self, rec: Record) -> str:
        """The class docstring: what C declares, then the header's docs of the record
        and of each field."""
        where = f" ({rec.header})" if rec.header else ""
        if rec.opaque:
            head = f"Opaque {rec.kind} {rec.name}{where}: only pointers to it exist."
        else:
            spelling = rec.c_spelling or f"anonymous {rec.kind} member of {rec.nested_in}"
            head = f"{spelling}{where}: {rec.size} bytes, aligned to {rec.align}."
        return _class_doc(head, rec.doc, "Fields", [(f.name, f.doc) for f in rec.fields])

    def enum_doc(self, enum) -> str:
        head = f"{enum.c_spelling} ({enum.header}), {enum.underlying.name} in C."
        return _class_doc(head, enum.doc, "Members", [(k.name, k.doc) for k in enum.enumerators])

    def record_align(self, rec: Record) -> int | None:
        """C's alignment where no member can give it to the class (beyond 16): the
        class sets _align_ (3.13+) and the layouts call require_alignment (before)."""
        return self.types.raised_alignment(rec)

    @property
    def raises_alignment(self) -> bool:
        """Whether any record needs cudart._layout.require_alignment."""
        return any(self.types.raised_alignment(r) for r in self.model.records)

    @property
    def layouts(self) -> list[tuple[Record, list]]:
        """Defined records with their _fields_, each after the records it holds by value."""
        defined = {r.name: r for r in self.model.records if not r.opaque}
        ordered: list[Record] = []
        done: set[str] = set()

        def place(rec: Record, path: tuple[str, ...]) -> None:
            if rec.name in done:
                return
            if rec.name in path:
                raise RenderError(f"records contain each other by value: {' -> '.join(path)}")
            for dep in self.types.by_value_dependencies(rec):
                place(defined[dep], path + (rec.name,))
            done.add(rec.name)
            ordered.append(rec)

        for rec in defined.values():
            place(rec, ())
        return [(rec, self.types.slots(rec)) for rec in ordered]

    def binary_fields(self, rec: Record) -> list[str]:
        """Members that are `char` arrays holding bytes (TypeMapper.binary_char_array):
        after `_fields_`, cudart._layout.binary_fields makes them read all N bytes."""
        if rec.name in self._anonymous_members:
            # ctypes promotes an anonymous member's fields from its own field descriptors
            # (and refuses any other descriptor there): the record that holds it converts
            # them, as kernel_fields (CUgraphNodeParams' union's asBytes, 13.3+).
            return []
        return [f.name for f in self._flat_fields(rec) if self.types.binary_char_array(f)]

    def _flat_fields(self, rec: Record) -> list[Field]:
        """A record's fields as Python reads them: an anonymous member's own in its place."""
        out = []
        for f in rec.fields:
            if f.anonymous and isinstance(f.type, RecordRef):
                out += self._flat_fields(self.types.records[f.type.name])
            else:
                out.append(f)
        return out

    @property
    def uses_binary_fields(self) -> bool:
        return any(self.binary_fields(r) for r in self.model.records if not r.opaque)

    def kernel_fields(self, rec: Record) -> tuple[list[str], list[str]] | None:
        """(device-function members, kernel-argument members) of a record, or None:
        after `_fields_`, cudart._layout.kernel_fields makes them take a Function and
        packed arguments (generator/device_functions.py decides which they are)."""
        if rec.name in self._anonymous_members:
            # ctypes promotes an anonymous member's fields from its own field descriptors:
            # the record that holds it converts them.
            return None
        found = device_functions.classify(rec.name, self._members(rec))
        if not found:
            return None
        functions = [n for n, k in found.items() if k == device_functions.DEVICE_FUNCTION]
        arguments = [n for n, k in found.items() if k == device_functions.KERNEL_ARGUMENTS]
        return functions, arguments

    def memory_fields(self, rec: Record) -> list[str]:
        """`void *` members holding memory (not a device function or kernel arguments):
        after `_fields_`, cudart._layout.memory_fields makes them take what a checked
        pointer parameter takes (a buffer, a HostMemory, a ctypes object, ...), never a
        handle, and keep it alive."""
        return self._members_of_kind(rec, TypeKind.VOID_POINTER)

    def handle_fields(self, rec: Record) -> list[str]:
        """Handle members (not a device function's): after `_fields_`,
        cudart._layout.handle_fields makes them take what a checked handle parameter of
        their class takes (the other API's handle of that kind), which ctypes refuses."""
        return self._members_of_kind(rec, TypeKind.HANDLE)

    def _members_of_kind(self, rec: Record, kind: TypeKind) -> list[str]:
        """The members of `rec` whose C type is of `kind`, less a device function's
        (kernel_fields converts those)."""
        if rec.name in self._anonymous_members:
            return []  # the record that holds it converts them, as kernel_fields
        kernel = self.kernel_fields(rec)
        taken = set(kernel[0] + kernel[1]) if kernel else set()
        return [
            name
            for name, t, _doc in self._members(rec)
            if name not in taken and self.types.classify(t) is kind
        ]

    # Integer members: ctypes masks what their C type cannot hold, so
    # cudart._layout.integer_fields makes them refuse it as a checked integer parameter
    # does, from the same facts (ctypes_map.integer_range); a CUdeviceptr member goes
    # through device_address_fields, which takes device memory as a checked CUdeviceptr
    # parameter does. A plain char (c_char) is left to ctypes, which reads it as bytes
    # and range-checks an int itself.
    _INTEGER_KINDS = (TypeKind.INTEGER, TypeKind.BOOL, TypeKind.ENUM)

    def _integer_members(self, rec: Record) -> list[tuple[str, IntegerRange, bool]]:
        """(name, range, is a device address) of a record's integer members."""
        if rec.name in self._anonymous_members:
            return []  # the record that holds it converts them, as kernel_fields
        kernel = self.kernel_fields(rec)
        taken = set(kernel[0] + kernel[1]) if kernel else set()
        out = []
        for name, t, _doc in self._members(rec):
            if name in taken or self.types.classify(t) not in self._INTEGER_KINDS:
                continue
            r = integer_range(self.types, t)
            assert r is not None
            out.append((name, r, self.types.is_device_address(t)))
        return out

    def integer_fields(self, rec: Record) -> str | None:
        """The dict literal of a record's integer members -> their range's name, or None."""
        found = [(n, r) for n, r, device in self._integer_members(rec) if not device]
        return self._range_dict(found)

    def device_address_fields(self, rec: Record) -> tuple[str, str] | None:
        """(the dict literal of a record's CUdeviceptr members -> their range's name,
        the tuple literal of those C writes through), or None."""
        found = [(n, r) for n, r, device in self._integer_members(rec) if device]
        ranges = self._range_dict(found)
        if ranges is None:
            return None
        written = [n for n, _ in found if n in WRITTEN_DEVICE_ADDRESS_NAMES]
        return ranges, tuple_literal([repr(n) for n in written])

    @staticmethod
    def _range_dict(found: list[tuple[str, IntegerRange]]) -> str | None:
        if not found:
            return None
        return "{" + ", ".join(f"{n!r}: {range_name(r.c_name)}" for n, r in found) + "}"

    @property
    def integer_ranges(self) -> list[tuple[str, str]]:
        """(name, Python source) of every range an integer member reads, sorted:
        (low, high, C name), as the checked layer's integer checks read them."""
        ranges: dict[str, str] = {}
        for rec in self.model.records:
            if rec.opaque:
                continue
            for _name, r, _device in self._integer_members(rec):
                source = f"({r.low}, {r.high}, {r.c_name!r})"
                if ranges.setdefault(range_name(r.c_name), source) != source:
                    raise RenderError(f"two ranges named {range_name(r.c_name)}: {source}")
        return sorted(ranges.items())

    @property
    def uses_integer_fields(self) -> bool:
        return any(self.integer_fields(r) for r in self.model.records if not r.opaque)

    @property
    def uses_device_address_fields(self) -> bool:
        return any(self.device_address_fields(r) for r in self.model.records if not r.opaque)

    @property
    def uses_handle_fields(self) -> bool:
        return any(self.handle_fields(r) for r in self.model.records if not r.opaque)

    @property
    def uses_memory_fields(self) -> bool:
        return any(self.memory_fields(r) for r in self.model.records if not r.opaque)

    def _members(self, rec: Record) -> list:
        """(name, type, doc) of a record's members as Python reads them: an anonymous
        member's own members in its place."""
        return [(f.name, f.type, f.doc) for f in self._flat_fields(rec)]

    @property
    def uses_kernel_fields(self) -> bool:
        return any(self.kernel_fields(r) for r in self.model.records if not r.opaque)

    def cxx_defaults(self, rec: Record) -> str | None:
        """The dict literal of a record's C++ constructor defaults, or None: after
        `_fields_`, cudart._layout.cxx_defaults makes `dim3(512)` (512, 1, 1) as in C++."""
        if not rec.cxx_defaults:
            return None
        return "{" + ", ".join(f"{n!r}: {v}" for n, v in rec.cxx_defaults) + "}"

    def dim3_fields(self, rec: Record) -> list[str]:
        """A record's `dim3` members: after `_fields_`, cudart._layout.dim3_fields makes
        them take an int, a 1-3 tuple or a dim3-like, as the checked launches do."""
        if rec.name in self._anonymous_members:
            return []  # the record that holds it converts them
        return [f.name for f in rec.fields if f.type == RecordRef(DIM3)]

    @property
    def uses_cxx_defaults(self) -> bool:
        return any(r.cxx_defaults for r in self.model.records if not r.opaque)

    @property
    def uses_dim3_fields(self) -> bool:
        return any(self.dim3_fields(r) for r in self.model.records if not r.opaque)

    @property
    def _anonymous_members(self) -> set[str]:
        return {
            f.type.name
            for r in self.model.records
            for f in r.fields
            if f.anonymous and isinstance(f.type, RecordRef)
        }

    def anonymous_fields(self, rec: Record) -> list[str]:
        return [f.name for f in rec.fields if f.anonymous]

    @property
    def typedefs(self) -> list[Typedef]:
        return [t for t in self.model.typedefs if not t.system]

    def typedef_kind(self, td: Typedef) -> Literal["handle", "callback", "alias"]:
        """How the template declares a typedef (a question about the declaration, not
        about the type's kind: a typedef of a handle typedef is an alias)."""
        if self.types.is_handle_typedef(td):
            return "handle"
        if self.types.is_callback_typedef(td):
            return "callback"
        return "alias"

    def handle_base(self, td: Typedef) -> str:
        """The cudart._handles class a handle typedef's class derives from: streams (the
        runtime's cudaStream_t and the driver's CUstream alike) also speak the CUDA
        stream protocol."""
        return "StreamHandle" if self.handle_kind(td) == STREAM_KIND else "Handle"

    def handle_kind(self, td: Typedef) -> str:
        """A handle class's `_kind_`: what C points it at, so that the runtime's and the
        driver's typedefs of one struct are one kind (cudaStream_t and CUstream are both
        `struct CUstream_st *`); "const " before it for a pointer to const. The runtime
        names a few structs of its own for the driver's objects (HANDLE_TAG_TWINS). A
        foreign `void *` handle points at nothing: its kind is its name."""
        t = td.target
        if not (isinstance(t, Pointer) and isinstance(t.pointee, RecordRef)):
            return td.name
        tag = HANDLE_TAG_TWINS.get(t.pointee.name, t.pointee.name)
        return f"const {tag}" if t.pointee_const else tag

    def handle_accepts(self, td: Typedef) -> str | None:
        """The `_accepts_` tuple of a const handle class (its non-const twins' kinds), or
        None."""
        twins = sorted(
            {self.handle_kind(self.types.typedefs[n]) for n in self.types.const_twins(td)}
        )
        return self.tuple(twins, quoted=True) if twins else None

    def typedef_value(self, td: Typedef) -> str:
        """Right-hand side of an alias: an enum's class, a record's class, or a ctypes type."""
        target = td.target
        kind = self.typedef_kind(td)
        if kind == "callback":
            return self.types.callback_type(
                self.types.resolved(self.types.pointee(target), FunctionProto)
            )
        if self.types.classify(target) is TypeKind.ENUM:
            enum_name = self.types.resolved(target, EnumRef).name
            if enum_name:
                return enum_name
        if isinstance(target, RecordRef) or (
            isinstance(target, TypedefRef) and not self.types.typedefs[target.name].system
        ):
            return target.name
        return self.types.field_type(target)  # a system typedef's ctypes type too

    def typedef_doc(self, td: Typedef) -> str:
        if td.from_macro:
            return f"#define {td.name} {getattr(td.target, 'name', '')}"
        return "typedef " + self.types.c_declaration(td.target, td.name)

    @property
    def exports(self) -> list[str]:
        """What `from <raw module> import *` gives type checkers (its __all__): every
        declaration but the functions, which a star import does not give at run time
        either (they are bound on lookup) and which the checked module and _latest.pyi
        define with their checked signatures."""
        names = ["CUDA_VERSION", "SYMBOLS", "SYMBOLS_LEGACY", "SYMBOLS_PER_THREAD"]
        for e in self.enums:
            names += ([e.name] if e.name else []) + [k.name for k in e.enumerators]
        names += [m.name for m in self.model.macros]
        names += [r.name for r in self.model.records]
        names += [t.name for t in self.typedefs]
        names += [b.name for b in self.model.builders]
        return sorted(set(names))

    @property
    def functions(self) -> list[dict]:
        """Every public name callable from the module, sorted by name: declared
        functions and the macro names that C resolves to a versioned symbol."""
        by_name = {f.name: f for f in self.model.functions}
        # An inline wrapper's versioned symbol (__nvJitLinkCreate_12_5) is bound under the
        # wrapper's name only, the name C code calls.
        forwarded = {a.symbol for a in self.model.aliases if a.inline}
        entries = {}
        for f in self.model.functions:
            if f.name not in forwarded:
                entries[f.name] = self._function_entry(f.name, f)
        for alias in self.model.aliases:
            entries[alias.public] = self._function_entry(alias.public, by_name[alias.symbol])
        return [entries[name] for name in sorted(entries)]

    @property
    def per_thread_symbols(self) -> list[tuple[str, str]]:
        """(public name, symbol) where -DCUDA_API_PER_THREAD_DEFAULT_STREAM makes C call
        another symbol than _FUNCTIONS records, sorted by name."""
        public = {f.name for f in self.model.functions} | {a.public for a in self.model.aliases}
        pairs = sorted((a.public, a.symbol) for a in self.model.per_thread_symbols)
        for name, _ in pairs:
            if name not in public:
                raise RenderError(f"per-thread symbol for '{name}', which is no public function")
        return pairs

    @property
    def per_thread_inlines(self) -> list[tuple[str, str, int, int, int]]:
        """(symbol, legacy symbol, flags parameter index, mask, bit) of PER_THREAD_INLINES'
        entries whose symbol this model's per-thread map names, checked against the model:
        the legacy function, its parameter and the enumerators' values."""
        named = {a.symbol for a in self.model.per_thread_symbols}
        declared = {f.name: f for f in self.model.functions}
        values = {k.name: k.value for e in self.model.enums for k in e.enumerators}
        found = []
        for symbol, (legacy, flags, mask, bit, _why) in sorted(PER_THREAD_INLINES.items()):
            if symbol not in named:
                continue
            f = declared.get(legacy)
            names = [p.name for p in f.params] if f else []
            unknown = [n for n in (*mask, bit) if n not in values]
            if flags not in names or unknown:
                raise RenderError(
                    f"PER_THREAD_INLINES: {symbol} calls no {legacy}({flags}) here"
                    + (f" (no {', '.join(unknown)})" if unknown else "")
                )
            either = 0
            for n in mask:
                either |= values[n]
            found.append((symbol, legacy, names.index(flags), either, values[bit]))
        return found

    def _function_entry(self, public: str, f) -> dict:
        flags = FLAG_DEPRECATED if f.deprecated else 0
        prototype = c_prototype(self.types, f)
        # For type checkers: what each argtype accepts, positional only as ctypes takes it.
        stub = [f"{py_name(p.name)}: {self.types.param_annotation(p.type)}" for p in f.params]
        if stub:
            stub.append("/")
        if f.variadic:
            stub.append("*args: _RawPointer | float")
        return {
            "name": public,
            "symbol": f.name,
            "restype": self.types.result_type(f.result),
            "argtypes": [self.types.param_type(p.type) for p in f.params],
            "flags": flags,
            "prototype": prototype,
            "variadic": f.variadic,
            "signature": ", ".join(stub),
            "returns": self.types.result_annotation(f.result),
            "doc": repr(function_doc(public, f, prototype)),
        }

    @property
    def builders(self) -> list[dict]:
        """The header's inline record builders (make_cudaExtent, ...), sorted by name: a
        Python function building the record as the body does. Each parameter is typed by
        the field it is assigned to (parse.py made sure the C types are the same)."""
        out = []
        for b in sorted(self.model.builders, key=lambda b: b.name):
            record = self.types.records.get(b.record)
            if record is None or record.opaque:
                raise RenderError(f"{b.name} builds {b.record}, which is no defined record")
            names = {p.name: py_name(p.name) for p in b.params}
            params = [f"{names[p.name]}: {self.types.field_annotation(p.type)}" for p in b.params]
            params_c = [self.types.c_declaration(p.type, p.name) for p in b.params]
            prototype = self.types.c_declaration(
                RecordRef(b.record), f"{b.name}({', '.join(params_c) or 'void'})"
            )
            lines = [f"static inline {prototype} ({b.header}), rebuilt in Python."]
            if b.doc and b.doc.brief:
                lines += ["", b.doc.brief.rstrip(".") + "."]
            out.append(
                {
                    "name": b.name,
                    "record": self.types.record_class(RecordRef(b.record)),
                    "signature": ", ".join(params),
                    "fields": [(f, names[p]) for f, p in b.assignments],
                    "doc": docstring("\n".join(lines)),
                }
            )
        return out

    def field_annotations(self, rec: Record) -> list[tuple[str, str]]:
        """(field, Python type) for type checkers: what reading the field gives."""
        if rec.opaque:
            return []
        found = []
        for f in rec.fields:
            found.append((f.name, self.types.field_annotation(f.type)))
            if f.anonymous:  # C reads an anonymous member's fields on the parent
                # parse.py gives an anonymous member the RecordRef of the record it synthesizes.
                assert isinstance(f.type, RecordRef)
                inner = self.types.records[f.type.name]
                found += [a for a in self.field_annotations(inner) if not a[0].startswith("_anon")]
        return found

    @staticmethod
    def tuple(items: list[str], quoted: bool = False) -> str:
        """A tuple literal without a trailing comma, which black would explode."""
        return tuple_literal([f'"{i}"' if quoted else i for i in items])

    def _check_unique_names(self) -> None:
        """Every module-level name must mean one thing; C's namespaces (tags, ordinary
        identifiers, macros) are flattened into one here."""
        seen: dict[str, str] = {}

        def claim(name: str, what: str) -> None:
            if name in seen and seen[name] != what:
                raise RenderError(f"'{name}' would be both {seen[name]} and {what}")
            seen[name] = what

        for e in self.model.enums:
            if e.name:
                claim(e.name, "an enum")
            for k in e.enumerators:
                claim(k.name, "an enumerator")
        for m in self.model.macros:
            claim(m.name, "a macro")
        for r in self.model.records:
            claim(r.name, "a record")
        for t in self.model.typedefs:
            if not t.system:
                claim(t.name, "a typedef")
        for f in self.model.functions:
            claim(f.name, "a function")
        for a in self.model.aliases:
            claim(a.public, "a function")


def _class_doc(head: str, doc: str, section: str, members: list[tuple[str, str]]) -> str:
    """A class docstring, indented for the class body: the head line, the header's doc
    of the declaration, and one line per documented member."""
    lines = [head]
    if doc:
        lines += ["", doc]
    documented = [(name, text) for name, text in members if text and not name.startswith("_")]
    if documented:
        lines += ["", f"{section}:"] + [f"    {name}: {text}" for name, text in documented]
    text = "\n".join(lines)
    if len(lines) > 1:
        text += "\n"  # the closing quotes on a line of their own
    return docstring(text.replace("\n", "\n    ").replace("\n    \n", "\n\n"))
