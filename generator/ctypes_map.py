"""How each C type of the model is written in ctypes, and how ctypes will lay it out.

`TypeMapper.classify` is the one place that says what a C type is (a `TypeKind`);
every spelling derived from a type reads it: the ctypes spellings and layouts here,
the field annotations of the raw module, and the checked layer's parameter kinds
(resolve.py). A new C construct is a TypeKind member, its case in `classify`, and the
`match` statements that then name it (each ends in a RenderError for a kind it does
not take, so a forgotten one fails loudly rather than spelling something wrong).

The generated modules target LP64 platforms (x86-64 and aarch64 Linux), where the
sizes below hold; the ABI tests hold every generated layout against gcc.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from cudart._fastproto import OUTPUT_SIZES

from .model import (
    ApiModel,
    Array,
    Builtin,
    CType,
    Enum,
    EnumRef,
    Field,
    FunctionProto,
    Pointer,
    Record,
    RecordRef,
    Typedef,
    TypedefRef,
)

# A member of the CType union: what `TypeMapper.resolved` hands back.
_C = TypeVar("_C", bound=CType)


class RenderError(Exception):
    """The model holds something the ctypes rendering cannot represent faithfully."""


class TypeKind(enum.Enum):
    """What a C type is, typedefs seen through except where the typedef is the point
    (a handle or callback type has its own class)."""

    VOID = "void"
    BOOL = "bool"  # _Bool
    CHAR = "char"  # plain char (ctypes c_char reads as bytes)
    FLOAT = "float"  # float, double, long double
    INTEGER = "integer"  # every other arithmetic type
    ENUM = "enum"
    RECORD = "record"  # a struct or union, defined
    OPAQUE_RECORD = "opaque record"  # declared, never defined: only pointers to it exist
    ARRAY = "array"
    FUNCTION = "function"  # a function type itself (what a function pointer points to)
    HANDLE = "handle"  # a typedef'd pointer to an opaque record: cudaStream_t
    CALLBACK = "callback"  # a typedef'd pointer to a function: cudaHostFn_t
    VOID_POINTER = "void pointer"  # void *, const void *
    CHAR_POINTER = "char pointer"  # char *, const char *
    OPAQUE_POINTER = "opaque pointer"  # a pointer to an opaque record, not a handle typedef
    FUNCTION_POINTER = "function pointer"  # a pointer to a function, not a callback typedef
    POINTER = "pointer"  # a pointer to anything else: data C reads or writes


BUILTIN_KINDS = frozenset(
    {TypeKind.VOID, TypeKind.BOOL, TypeKind.CHAR, TypeKind.FLOAT, TypeKind.INTEGER}
)
# Kinds whose value is an address in C (each is c_void_p as an argument).
POINTER_KINDS = frozenset(
    {
        TypeKind.HANDLE,
        TypeKind.CALLBACK,
        TypeKind.VOID_POINTER,
        TypeKind.CHAR_POINTER,
        TypeKind.OPAQUE_POINTER,
        TypeKind.FUNCTION_POINTER,
        TypeKind.POINTER,
    }
)
# A pointer's kind by its pointee's; a pointer to anything else is TypeKind.POINTER.
_POINTER_TO = {
    TypeKind.VOID: TypeKind.VOID_POINTER,
    TypeKind.CHAR: TypeKind.CHAR_POINTER,
    TypeKind.OPAQUE_RECORD: TypeKind.OPAQUE_POINTER,
    TypeKind.FUNCTION: TypeKind.FUNCTION_POINTER,
}
_FLOATS = frozenset({"float", "double", "long double"})
# A `char x[N]` member holds text when it is a name or its doc calls it a string.
_TEXT_NAME = re.compile(r"(^|_)name$|Name$")
_TEXT_DOC = re.compile(r"\bstring\b", re.IGNORECASE)

# C spelling -> (ctypes name, size, alignment) on LP64.
BUILTINS = {
    "_Bool": ("c_bool", 1, 1),
    "char": ("c_char", 1, 1),
    "signed char": ("c_byte", 1, 1),
    "unsigned char": ("c_ubyte", 1, 1),
    "short": ("c_short", 2, 2),
    "unsigned short": ("c_ushort", 2, 2),
    "int": ("c_int", 4, 4),
    "unsigned int": ("c_uint", 4, 4),
    "long": ("c_long", 8, 8),
    "unsigned long": ("c_ulong", 8, 8),
    "long long": ("c_longlong", 8, 8),
    "unsigned long long": ("c_ulonglong", 8, 8),
    "float": ("c_float", 4, 4),
    "double": ("c_double", 8, 8),
    "long double": ("c_longdouble", 16, 16),
}
POINTER_SIZE = 8

# Alignment -> a ctypes scalar of exactly that alignment (c_short, c_int, c_long,
# c_longdouble). A trailing zero-length array of it (`("_align16", c_longdouble * 0)`)
# raises a Structure's or Union's alignment to C's on every Python without adding a
# byte. No scalar is aligned beyond 16: those records get `_align_` (3.13+) plus
# cudart._layout.require_alignment (before 3.13) instead. Reversed, so that the first
# builtin of each alignment wins.
ALIGNERS: dict[int, str] = {align: ctype for ctype, _, align in reversed(BUILTINS.values())}

# System typedefs ctypes names itself; others resolve to their canonical type.
SYSTEM_TYPEDEFS = {
    "size_t": "c_size_t",
    "ssize_t": "c_ssize_t",
    "int8_t": "c_int8",
    "int16_t": "c_int16",
    "int32_t": "c_int32",
    "int64_t": "c_int64",
    "uint8_t": "c_uint8",
    "uint16_t": "c_uint16",
    "uint32_t": "c_uint32",
    "uint64_t": "c_uint64",
}


@dataclass(frozen=True)
class Slot:
    """One entry of a ctypes _fields_ list."""

    name: str
    ctype: str
    bits: int | None = None


# Integer typedefs that hold a device address (cuda.h's CUdeviceptr, 64 bits): a checked
# parameter of one also takes what stands for device memory (an object with
# __cuda_array_interface__ or __dlpack__, a c_void_p), as the runtime's device `void *`
# does (cudart._convert.device_pointer). CUdeviceptr_v1 is 32 bits: no address of today's.
DEVICE_ADDRESS_TYPEDEFS = frozenset({"CUdeviceptr", "CUdeviceptr_v2"})

# The device address parameters C writes through. A CUdeviceptr is an integer, so C's
# type has no const to tell (the runtime's `void *` has): cuda.h names every copy's and
# memset's destination `dst` or `dstDevice`, and cuStreamWriteValue32/64 write to `addr`
# (cuStreamWaitValue's `addr` is only read). Read-only device memory (a read-only
# __cuda_array_interface__ or DLPack tensor) is refused there.
WRITTEN_DEVICE_ADDRESS_NAMES = frozenset({"dst", "dstDevice"})
WRITTEN_DEVICE_ADDRESS_PARAMS = frozenset(
    {("cuStreamWriteValue32", "addr"), ("cuStreamWriteValue64", "addr")}
)


def device_address_written(function: str, param: str) -> bool:
    """Whether C writes through device address parameter `param` of `function` (its
    checked name: cuStreamWriteValue32 for cuStreamWriteValue32_v2 too)."""
    base = function.removesuffix("_v2")
    return param in WRITTEN_DEVICE_ADDRESS_NAMES or (base, param) in WRITTEN_DEVICE_ADDRESS_PARAMS


class TypeMapper:
    """Names and layouts of the model's types as the generated module spells them."""

    def __init__(self, model: ApiModel) -> None:
        self.model = model
        self.records: dict[str, Record] = model.by_name("records")
        self.enums: dict[str, Enum] = model.by_name("enums")
        self.typedefs: dict[str, Typedef] = model.by_name("typedefs")
        self._layouts: dict[str, tuple[list[Slot], int | None]] = {}

    # ------------------------------------------------------------ classification

    def resolve(self, t: CType) -> CType:
        """Strip typedefs down to the type they name."""
        while isinstance(t, TypedefRef):
            t = self.typedefs[t.name].target
        return t

    def classify(self, t: CType) -> TypeKind:
        """What `t` is: the one answer every spelling of it reads."""
        if self.handle_class(t):
            return TypeKind.HANDLE
        if self._names_callback(t):
            return TypeKind.CALLBACK
        r = self.resolve(t)
        if isinstance(r, Builtin):
            if r.name == "void":
                return TypeKind.VOID
            if r.name == "_Bool":
                return TypeKind.BOOL
            if r.name == "char":
                return TypeKind.CHAR
            return TypeKind.FLOAT if r.name in _FLOATS else TypeKind.INTEGER
        if isinstance(r, EnumRef):
            return TypeKind.ENUM
        if isinstance(r, RecordRef):
            return TypeKind.OPAQUE_RECORD if self.records[r.name].opaque else TypeKind.RECORD
        if isinstance(r, Array):
            return TypeKind.ARRAY
        if isinstance(r, FunctionProto):
            return TypeKind.FUNCTION
        if isinstance(r, Pointer):
            return _POINTER_TO.get(self.classify(r.pointee), TypeKind.POINTER)
        raise RenderError(f"no kind for {t!r}")

    def is_device_address(self, t: CType) -> bool:
        """Whether `t` names a device address typedef (DEVICE_ADDRESS_TYPEDEFS)."""
        while isinstance(t, TypedefRef):
            if t.name in DEVICE_ADDRESS_TYPEDEFS:
                return True
            t = self.typedefs[t.name].target
        return False

    def resolved(self, t: CType, cls: type[_C]) -> _C:
        """`t` with typedefs stripped, which `classify` has said is a `cls`."""
        r = self.resolve(t)
        if not isinstance(r, cls):
            raise RenderError(f"{t!r} is no {cls.__name__}")
        return r

    def pointee(self, t: CType) -> CType:
        """What a pointer type (typedefs seen through) points to."""
        r = self.resolve(t)
        if not isinstance(r, Pointer):
            raise RenderError(f"{t!r} is no pointer")
        return r.pointee

    def points_to_const(self, t: CType) -> bool:
        """`const T *`: the function reads what it points to."""
        r = self.resolve(t)
        return isinstance(r, Pointer) and r.pointee_const

    def is_handle_typedef(self, td: Typedef) -> bool:
        """`typedef struct CUstream_st *cudaStream_t;`: a pointer to a never-defined record;
        or another API's opaque pointer type (`typedef void *EGLImageKHR;`)."""
        t = td.target
        if td.foreign:
            return t == Pointer(Builtin("void"))
        return (
            not td.from_macro
            and isinstance(t, Pointer)
            and isinstance(t.pointee, RecordRef)
            and self.records[t.pointee.name].opaque
        )

    def const_twins(self, td: Typedef) -> list[str]:
        """The handle typedefs C converts to this one implicitly: for a `const T` handle
        (`typedef const struct cudaArray *cudaArray_const_t`), every handle typedef of a
        plain pointer to the same record (cudaArray_t). Empty for any other typedef."""
        t = td.target
        if not (self.is_handle_typedef(td) and isinstance(t, Pointer) and t.pointee_const):
            return []
        return [
            other.name
            for other in self.model.typedefs
            if other is not td
            and self.is_handle_typedef(other)
            and isinstance(other.target, Pointer)
            and other.target.pointee == t.pointee
            and not other.target.pointee_const
        ]

    def is_callback_typedef(self, td: Typedef) -> bool:
        return isinstance(td.target, Pointer) and isinstance(td.target.pointee, FunctionProto)

    def handle_class(self, t: CType) -> str | None:
        """The handle class a type names (cudaStream_t), also through a macro naming it,
        or spelled out: `struct cudaGraphicsResource *` is what cudaGraphicsResource_t
        names (the interop headers spell it so), when exactly one handle typedef does."""
        if isinstance(t, TypedefRef):
            td = self.typedefs[t.name]
            if not td.system and self.is_handle_typedef(td):
                return td.name
            if td.from_macro:
                return self.handle_class(td.target)
        if isinstance(t, Pointer) and isinstance(t.pointee, RecordRef):
            names = self._handles_by_target.get(t, ())
            return names[0] if len(names) == 1 else None
        return None

    @functools.cached_property
    def _handles_by_target(self) -> dict[CType, tuple[str, ...]]:
        found: dict[CType, tuple[str, ...]] = {}
        for td in self.model.typedefs:
            if not td.system and not td.foreign and self.is_handle_typedef(td):
                found[td.target] = (*found.get(td.target, ()), td.name)
        return found

    def handle_name(self, t: CType) -> str:
        """The handle class of a type `classify` calls a HANDLE."""
        name = self.handle_class(t)
        if name is None:
            raise RenderError(f"{t!r} is no handle")
        return name

    def _names_callback(self, t: CType) -> bool:
        while isinstance(t, TypedefRef):
            td = self.typedefs[t.name]
            if self.is_callback_typedef(td):
                return True
            t = td.target
        return False

    def tag_spelling(self, ref: RecordRef | EnumRef) -> str:
        decl = (
            self.records.get(ref.name) if isinstance(ref, RecordRef) else self.enums.get(ref.name)
        )
        return (decl.c_spelling if decl is not None else None) or _default_tag_spelling(ref)

    def c_declaration(self, t: CType, name: str = "") -> str:
        return c_declaration(t, name, self.tag_spelling)

    # ------------------------------------------------------------ Python names

    def enum_class(self, t: CType) -> str | None:
        """The generated enum class of an enum type (None for one without members)."""
        r = self.resolve(t)
        if isinstance(r, EnumRef) and r.name and self.enums[r.name].enumerators:
            return r.name
        return None

    def record_class(self, t: CType) -> str:
        """The generated class of a record type: the typedef's name where one names it."""
        if isinstance(t, TypedefRef) and not self.typedefs[t.name].system:
            return t.name
        r = self.resolve(t)
        assert isinstance(r, RecordRef)
        return r.name

    @staticmethod
    def number_annotation(kind: TypeKind) -> str:
        """The Python type of a number or enum value of this kind, as an argument or
        result (c_char passed or returned by value reads as int there)."""
        return {TypeKind.FLOAT: "float", TypeKind.BOOL: "bool"}.get(kind, "int")

    def field_annotation(self, t: CType) -> str:
        """What reading a struct member of this type gives, for type checkers."""
        match kind := self.classify(t):
            case TypeKind.HANDLE:
                return self.handle_name(t)
            case TypeKind.CALLBACK:
                return "_CFuncPtr"
            case TypeKind.CHAR:
                return "bytes"
            case TypeKind.VOID | TypeKind.BOOL | TypeKind.FLOAT | TypeKind.INTEGER | TypeKind.ENUM:
                return self.number_annotation(kind)
            case TypeKind.RECORD | TypeKind.OPAQUE_RECORD:
                return self.record_class(t)
            case TypeKind.ARRAY:
                element = self.resolved(t, Array).element
                if self.classify(element) is TypeKind.CHAR:
                    return "bytes"
                return f"Array[{self.field_type(element)}]"
            case _ if kind in POINTER_KINDS:
                spelled = self.field_type(t)
                if spelled == "c_char_p":
                    return "bytes | None"
                if spelled.startswith("POINTER("):
                    return _pointer_annotation(spelled)
                return "int | None"
        return "object"

    def binary_char_array(self, f: Field) -> bool:
        """Whether a member is a `char x[N]` that holds bytes rather than text.

        ctypes reads a `c_char * N` member up to its first zero byte, which is right for
        text only. A plain `char` array is text when it is a name (`name`, `...Name`,
        `..._name`: cudaDeviceProp.name) or the header's doc of it says "string"; every
        other one holds bytes that may be zero: identifiers (cudaUUID_t.bytes, whose doc
        is the record's, cudaDeviceProp.luid "8-byte locally unique identifier"),
        opaque handles (cudaIpcMemHandle_t.reserved) and padding (cudaLaunchAttribute.pad).
        The raw module reads those as all N bytes (cudart._layout.binary_fields).
        tests/generator/test_char_arrays.py holds the answer for every such member of every
        supported CUDA version, so a new one is reviewed when a version adds it.
        """
        if self.classify(f.type) is not TypeKind.ARRAY:
            return False
        element = self.resolved(f.type, Array).element
        if self.classify(element) is not TypeKind.CHAR:
            return False  # unsigned char arrays already read as integers, all of them
        return not (_TEXT_NAME.search(f.name) or _TEXT_DOC.search(f.doc))

    # ------------------------------------------------------------ ctypes spellings

    def builtin(self, name: str) -> str:
        if name == "void":
            raise RenderError("void has no ctypes value type")
        try:
            return BUILTINS[name][0]
        except KeyError:
            raise RenderError(f"no ctypes type for C '{name}'") from None

    def field_type(self, t: CType) -> str:
        """A type as a struct member: exact, typed pointers, arrays kept."""
        kind = self.classify(t)
        if kind is TypeKind.ENUM:
            return self.builtin(self.enums[self.resolved(t, EnumRef).name].underlying.name)
        if isinstance(t, TypedefRef):  # a typedef keeps its name, or is what ctypes calls it
            td = self.typedefs[t.name]
            if td.system:
                return SYSTEM_TYPEDEFS.get(td.name) or self.field_type(td.target)
            return td.name
        match kind:
            case _ if kind in BUILTIN_KINDS:
                return self.builtin(self.resolved(t, Builtin).name)
            case TypeKind.RECORD | TypeKind.OPAQUE_RECORD:
                return self.resolved(t, RecordRef).name
            case TypeKind.ARRAY:
                array = self.resolved(t, Array)
                if array.length is None:
                    raise RenderError("flexible array members are not supported by ctypes")
                return f"{self.field_type(array.element)} * {array.length}"
            case TypeKind.VOID_POINTER | TypeKind.OPAQUE_POINTER | TypeKind.FUNCTION_POINTER:
                return "c_void_p"
            case TypeKind.CHAR_POINTER:
                return "c_char_p"
            case TypeKind.POINTER:
                return f"POINTER({self.field_type(self.pointee(t))})"
        raise RenderError(f"no ctypes spelling for {t!r}")

    def param_type(self, t: CType) -> str:
        """A type as a function argument.

        Every pointer, handle and array argument is c_void_p: ctypes converts an int
        address, None, bytes, byref() or any ctypes array/pointer for it, and that is
        the fastest conversion ctypes has (about half the cost of POINTER(T) + byref).
        """
        kind = self.classify(t)
        if kind in POINTER_KINDS or kind is TypeKind.ARRAY:
            return "c_void_p"
        return self.field_type(t)

    def result_type(self, t: CType) -> str:
        kind = self.classify(t)
        if kind is TypeKind.VOID:
            return "None"
        if kind is TypeKind.CHAR_POINTER:
            return "c_char_p"  # cudaGetErrorString: the runtime's own static text
        if kind in POINTER_KINDS:
            return "c_void_p"
        return self.field_type(t)

    def param_annotation(self, t: CType) -> str:
        """What a raw function's argument of this type accepts, for type checkers:
        what ctypes converts for param_type's spelling (`_RawPointer` is the alias a raw
        module defines for c_void_p's conversions)."""
        kind = self.classify(t)
        if kind in POINTER_KINDS or kind is TypeKind.ARRAY:
            return "_RawPointer"
        if kind in (TypeKind.RECORD, TypeKind.OPAQUE_RECORD):
            return self.record_class(t)
        if kind is TypeKind.CHAR:
            return "bytes | int"  # c_char takes a one-byte bytes or an int
        return self.number_annotation(kind)

    def result_annotation(self, t: CType) -> str:
        """What a raw function returns for result_type's spelling, for type checkers."""
        kind = self.classify(t)
        if kind is TypeKind.VOID:
            return "None"
        if kind is TypeKind.CHAR_POINTER:
            return "bytes | None"
        if kind in POINTER_KINDS:
            return "int | None"
        if kind in (TypeKind.RECORD, TypeKind.OPAQUE_RECORD):
            return self.record_class(t)
        if kind is TypeKind.CHAR:
            return "bytes"
        return self.number_annotation(kind)

    def callback_type(self, proto: FunctionProto) -> str:
        args = [self.result_type(proto.result)] + [self.param_type(p) for p in proto.params]
        return f"CFUNCTYPE({', '.join(args)})"

    # ------------------------------------------------------------ layout

    def output_slot_size(self, t: CType) -> int:
        """For a typed pointer to a number, enum or pointer of 1 to 8 bytes, that size:
        what the compiled backend's 8-byte output slot can stand in for (its generated C
        and the checked layer's `_<name>_out` calls both ask here). 0 for any other type."""
        if self.classify(t) is not TypeKind.POINTER:
            return 0
        pointee = self.pointee(t)
        kind = self.classify(pointee)
        scalar = kind in (TypeKind.INTEGER, TypeKind.ENUM, TypeKind.FLOAT, TypeKind.BOOL)
        if not (scalar or kind in POINTER_KINDS):
            return 0
        size = self.size_align(pointee)[0]
        return size if size in OUTPUT_SIZES else 0

    def size_align(self, t: CType) -> tuple[int, int]:
        """C's size and alignment of a type, as the model records it."""
        kind = self.classify(t)
        t = self.resolve(t)
        match kind:
            case TypeKind.BOOL | TypeKind.CHAR | TypeKind.FLOAT | TypeKind.INTEGER:
                _, size, align = BUILTINS[self.resolved(t, Builtin).name]
                return size, align
            case TypeKind.ENUM:
                return self.size_align(self.enums[self.resolved(t, EnumRef).name].underlying)
            case TypeKind.OPAQUE_RECORD | TypeKind.RECORD:
                return _defined_size_align(self.records[self.resolved(t, RecordRef).name])
            case TypeKind.ARRAY:
                array = self.resolved(t, Array)
                size, align = self.size_align(array.element)
                return size * (array.length or 0), align
            case _ if kind in POINTER_KINDS:
                return POINTER_SIZE, POINTER_SIZE
        raise RenderError(f"no layout for {t!r}")

    def slots(self, rec: Record) -> list[Slot]:
        """The _fields_ of a record: C's members, explicit padding only where C pads
        more than ctypes would, and an alignment member where C aligns the record more
        than its members (CUDA's `__align__(16)` float4).

        Every generated record class has C's alignment (the trailing `_alignN` member,
        or `raised_alignment` beyond 16), so ctypes places a member holding one exactly
        where C does; `_padN` is left for padding that C's alignment rules alone would not
        produce (a member declared `__attribute__((aligned(n)))`).
        """
        return self._layout(rec)[0]

    def raised_alignment(self, rec: Record) -> int | None:
        """C's alignment of a record that no member can give it (no ctypes scalar is
        aligned to 32): the class sets `_align_` for Python 3.13+ and calls
        cudart._layout.require_alignment for earlier ones. None for every other record."""
        return None if rec.opaque else self._layout(rec)[1]

    def _layout(self, rec: Record) -> tuple[list[Slot], int | None]:
        if rec.name in self._layouts:
            return self._layouts[rec.name]
        rec_size, rec_align = _defined_size_align(rec)
        slots: list[Slot] = []
        pad_index = 0
        offset = 0
        members_align = 1
        for f in rec.fields:
            if f.bit_width is not None:
                raise RenderError(f"{rec.name}.{f.name}: bit-fields are not supported yet")
            size, falign = self.size_align(f.type)
            members_align = max(members_align, falign)
            if rec.kind == "union":
                if f.offset != 0:
                    raise RenderError(f"{rec.name}.{f.name}: union member at offset {f.offset}")
                slots.append(Slot(f.name, self.field_type(f.type)))
                offset = max(offset, size)
                continue
            placed = _round_up(offset, falign)
            if placed < f.offset:
                slots.append(Slot(f"_pad{pad_index}", f"c_ubyte * {f.offset - offset}"))
                pad_index += 1
            elif placed > f.offset:
                raise RenderError(
                    f"{rec.name}.{f.name}: C places it at {f.offset}, "
                    f"ctypes cannot go below {placed}"
                )
            slots.append(Slot(f.name, self.field_type(f.type)))
            offset = f.offset + size
        if rec_align < members_align:
            raise RenderError(
                f"{rec.name}: C aligns it to {rec_align}, below its members' {members_align} "
                "(packed records are not supported)"
            )
        aligner = ALIGNERS.get(rec_align) if rec_align > members_align else None
        raised = rec_align if rec_align > members_align and aligner is None else None
        # The alignment ctypes gives the class from its _fields_ alone; require_alignment
        # raises it later without touching the size, which must already be C's.
        ctypes_align = members_align if raised else rec_align
        natural_size = _round_up(offset, ctypes_align)
        if natural_size < rec_size:
            if rec.kind == "union":
                slots.append(Slot(f"_pad{pad_index}", f"c_ubyte * {rec_size}"))
            else:
                slots.append(Slot(f"_pad{pad_index}", f"c_ubyte * {rec_size - offset}"))
        elif natural_size > rec_size:
            raise RenderError(
                f"{rec.name}: ctypes would make it {natural_size} bytes, C {rec_size}"
            )
        if aligner is not None:
            # Last, so positional construction (float4(1.0, 2.0, 3.0, 4.0)) fills C's members.
            name = f"_align{rec_align}"
            if any(s.name == name for s in slots):
                raise RenderError(f"{rec.name}: a member is already named {name}")
            slots.append(Slot(name, f"{aligner} * 0"))
        self._layouts[rec.name] = (slots, raised)
        return self._layouts[rec.name]

    def by_value_dependencies(self, rec: Record) -> list[str]:
        """Records that must have their _fields_ before this one can."""
        deps: list[str] = []
        for f in rec.fields:
            t = f.type
            while self.classify(t) is TypeKind.ARRAY:
                t = self.resolved(t, Array).element
            if self.classify(t) in (TypeKind.RECORD, TypeKind.OPAQUE_RECORD):
                deps.append(self.resolved(t, RecordRef).name)
        return deps


def _defined_size_align(rec: Record) -> tuple[int, int]:
    """C's size and alignment of a record; parse.py records both for a defined one."""
    if rec.size is None or rec.align is None:
        raise RenderError(f"record {rec.name} is used by value but never defined")
    return rec.size, rec.align


def _round_up(value: int, align: int) -> int:
    return (value + align - 1) // align * align


# ---------------------------------------------------------------- C spellings


def c_declaration(
    t: CType,
    name: str = "",
    tag_spelling: Callable[[RecordRef | EnumRef], str] | None = None,
) -> str:
    """C source spelling of `t name`, for comments that show the header's prototype.

    tag_spelling(ref) gives how C names a record or enum ("union U", "anon_t");
    without it, records read as structs.
    """
    spell = tag_spelling or _default_tag_spelling

    def decl(t: CType, name: str, const: bool = False) -> str:
        # `const` qualifies t itself: a prefix on a named type (`const void *p`), but
        # after the star on a pointer (`void *const *p`: a pointer to const pointers).
        if isinstance(t, (Builtin, TypedefRef, RecordRef, EnumRef)):
            spelled = t.name if isinstance(t, (Builtin, TypedefRef)) else spell(t)
            return ("const " if const else "") + _join(spelled, name)
        if isinstance(t, Pointer):
            inner = ("*const " if const else "*") + name
            if isinstance(t.pointee, (Array, FunctionProto)):
                inner = f"({inner})"
            return decl(t.pointee, inner, t.pointee_const)
        if isinstance(t, Array):
            length = "" if t.length is None else str(t.length)
            return decl(t.element, f"{name}[{length}]", const)
        if isinstance(t, FunctionProto):
            params = ", ".join(decl(p, "") for p in t.params) or "void"
            if t.variadic:
                params += ", ..."
            return decl(t.result, f"{name}({params})")
        raise RenderError(f"no C spelling for {t!r}")

    return decl(t, name)


def _default_tag_spelling(ref: RecordRef | EnumRef) -> str:
    return f"enum {ref.name}" if isinstance(ref, EnumRef) else f"struct {ref.name}"


def _join(type_text: str, name: str) -> str:
    if not name:
        return type_text
    return (
        f"{type_text}{name}"
        if name.startswith("*") and type_text.endswith("*")
        else f"{type_text} {name}"
    )


# ---------------------------------------------------------------- integer ranges


@dataclass(frozen=True)
class IntegerRange:
    """The values an integer C type holds (what ctypes would otherwise mask or wrap),
    and for an enum its members: the checked layer refuses anything else.

    `members` is None for a plain integer; for an enum, its values. `flags` marks an
    enum whose values are bits a caller ORs together (see `is_flags_enum`): then any
    OR of them (`flags` is that OR) passes, not only the members themselves."""

    low: int
    high: int
    c_name: str  # how the message names the type: "size_t", "GLuint (unsigned int)"
    enum: str | None = None  # the generated enum class
    members: frozenset[int] | None = None
    flags: int | None = None


def is_flags_enum(enum: Enum) -> bool:
    """Whether an enum's values are bits that C callers OR together.

    Decided from the values alone: every non-zero value is a distinct power of two, and
    there are at least three of them (cudaMemAllocationHandleType 1, 2, 4, 8;
    cudaGraphInstantiateFlags). Two bits are as often a plain choice as flags
    (cudaStreamCaptureMode 0, 1, 2), and an enum with any other value (cudaMemcpyKind's
    3) counts: its values are not bits."""
    bits = {k.value for k in enum.enumerators if k.value}
    if len(bits) < 3:
        return False
    return all(v > 0 and v & (v - 1) == 0 for v in bits)


def _builtin_range(name: str) -> tuple[int, int]:
    """A builtin integer type's range on LP64 (plain char: either signedness, which
    differs between x86-64 and aarch64, so any byte passes)."""
    size = BUILTINS[name][1]
    bits = 8 * size
    if name == "char":
        return -(1 << 7), (1 << 8) - 1
    if name == "_Bool":
        return 0, 1
    if name.startswith("unsigned"):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def integer_range(types: TypeMapper, t: CType) -> IntegerRange | None:
    """The range a parameter or member of type `t` holds, if it is an integer or enum;
    None for floats, pointers, records."""
    kind = types.classify(t)
    if kind not in (TypeKind.INTEGER, TypeKind.CHAR, TypeKind.BOOL, TypeKind.ENUM):
        return None
    spelled = c_declaration(t, "", types.tag_spelling)
    if kind is TypeKind.ENUM:
        enum = types.enums[types.resolved(t, EnumRef).name]
        underlying = enum.underlying.name
        low, high = _builtin_range(underlying)
        values = frozenset(k.value for k in enum.enumerators)
        name = types.enum_class(t)
        if name is None:  # an enum without members: its underlying type's range only
            return IntegerRange(low, high, f"{spelled} ({underlying})")
        flags = None
        if is_flags_enum(enum):
            flags = 0
            for v in values:
                flags |= v
        return IntegerRange(low, high, spelled, name, values, flags)
    builtin = types.resolved(t, Builtin).name
    low, high = _builtin_range(builtin)
    named = spelled if spelled == builtin else f"{spelled} ({builtin})"
    if isinstance(t, TypedefRef) and types.typedefs[t.name].system:
        named = spelled  # size_t, uint64_t: the name says it
    return IntegerRange(low, high, named)


def _pointer_annotation(spelled: str) -> str:
    """`POINTER(POINTER(T))` (a ctypes spelling) as the annotation `_Pointer[_Pointer[T]]`
    (cuda.h 13.4's CUcheckpointGpuPair.customStorageInfo_out is a `T **` member)."""
    if spelled.startswith("POINTER(") and spelled.endswith(")"):
        return f"_Pointer[{_pointer_annotation(spelled[8:-1])}]"
    return spelled
