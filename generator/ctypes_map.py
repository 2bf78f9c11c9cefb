"""How each C type of the model is written in ctypes, and how ctypes will lay it out.

The generated modules target LP64 platforms (x86-64 and aarch64 Linux), where the
sizes below hold; the ABI tests hold every generated layout against gcc.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import (
    ApiModel,
    Array,
    Builtin,
    CType,
    EnumRef,
    FunctionProto,
    Pointer,
    Record,
    RecordRef,
    Typedef,
    TypedefRef,
)


class RenderError(Exception):
    """The model holds something the ctypes rendering cannot represent faithfully."""


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


class TypeMapper:
    """Names and layouts of the model's types as the generated module spells them."""

    def __init__(self, model: ApiModel) -> None:
        self.model = model
        self.records = model.by_name("records")
        self.enums = model.by_name("enums")
        self.typedefs = model.by_name("typedefs")
        self._layouts: dict[str, tuple[list[Slot], int | None]] = {}

    # ------------------------------------------------------------ classification

    def resolve(self, t: CType) -> CType:
        """Strip typedefs down to the type they name."""
        while isinstance(t, TypedefRef):
            t = self.typedefs[t.name].target
        return t

    def is_handle_typedef(self, td: Typedef) -> bool:
        """`typedef struct CUstream_st *cudaStream_t;`: a pointer to a never-defined record."""
        t = td.target
        return (
            not td.from_macro
            and isinstance(t, Pointer)
            and isinstance(t.pointee, RecordRef)
            and self.records[t.pointee.name].opaque
        )

    def is_callback_typedef(self, td: Typedef) -> bool:
        return isinstance(td.target, Pointer) and isinstance(td.target.pointee, FunctionProto)

    def tag_spelling(self, ref: RecordRef | EnumRef) -> str:
        decl = self.records.get(ref.name) if isinstance(ref, RecordRef) else self.enums.get(ref.name)
        return (decl.c_spelling if decl is not None else None) or _default_tag_spelling(ref)

    def c_declaration(self, t: CType, name: str = "") -> str:
        return c_declaration(t, name, self.tag_spelling)

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
        if isinstance(t, Builtin):
            return self.builtin(t.name)
        if isinstance(t, TypedefRef):
            td = self.typedefs[t.name]
            if td.system:
                return SYSTEM_TYPEDEFS.get(td.name) or self.field_type(td.target)
            target = self.resolve(t)
            if isinstance(target, EnumRef):
                return self.builtin(self.enums[target.name].underlying.name)
            return td.name
        if isinstance(t, EnumRef):
            return self.builtin(self.enums[t.name].underlying.name)
        if isinstance(t, RecordRef):
            return t.name
        if isinstance(t, Array):
            if t.length is None:
                raise RenderError("flexible array members are not supported by ctypes")
            return f"{self.field_type(t.element)} * {t.length}"
        if isinstance(t, Pointer):
            pointee = t.pointee
            if isinstance(pointee, Builtin) and pointee.name == "void":
                return "c_void_p"
            if isinstance(pointee, Builtin) and pointee.name == "char":
                return "c_char_p"
            if isinstance(pointee, FunctionProto):
                return "c_void_p"
            if isinstance(pointee, RecordRef) and self.records[pointee.name].opaque:
                return "c_void_p"
            return f"POINTER({self.field_type(pointee)})"
        raise RenderError(f"no ctypes spelling for {t!r}")

    def param_type(self, t: CType) -> str:
        """A type as a function argument.

        Every pointer, handle and array argument is c_void_p: ctypes converts an int
        address, None, bytes, byref() or any ctypes array/pointer for it, and that is
        the fastest conversion ctypes has (about half the cost of POINTER(T) + byref).
        """
        target = self.resolve(t)
        if isinstance(target, (Pointer, Array)):
            return "c_void_p"
        return self.field_type(t)

    def result_type(self, t: CType) -> str:
        target = self.resolve(t)
        if isinstance(target, Builtin) and target.name == "void":
            return "None"
        if isinstance(target, Pointer):
            pointee = target.pointee
            if isinstance(pointee, Builtin) and pointee.name == "char":
                return "c_char_p"  # cudaGetErrorString: the runtime's own static text
            return "c_void_p"
        return self.field_type(t)

    def callback_type(self, proto: FunctionProto) -> str:
        args = [self.result_type(proto.result)] + [self.param_type(p) for p in proto.params]
        return f"CFUNCTYPE({', '.join(args)})"

    # ------------------------------------------------------------ layout

    def size_align(self, t: CType) -> tuple[int, int]:
        """C's size and alignment of a type, as the model records it."""
        t = self.resolve(t)
        if isinstance(t, Builtin):
            _, size, align = BUILTINS[t.name]
            return size, align
        if isinstance(t, Pointer):
            return POINTER_SIZE, POINTER_SIZE
        if isinstance(t, EnumRef):
            return self.size_align(self.enums[t.name].underlying)
        if isinstance(t, RecordRef):
            rec = self.records[t.name]
            if rec.opaque:
                raise RenderError(f"record {rec.name} is used by value but never defined")
            return rec.size, rec.align
        if isinstance(t, Array):
            size, align = self.size_align(t.element)
            return size * (t.length or 0), align
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
                    f"{rec.name}.{f.name}: C places it at {f.offset}, ctypes cannot go below {placed}"
                )
            slots.append(Slot(f.name, self.field_type(f.type)))
            offset = f.offset + size
        if rec.align < members_align:
            raise RenderError(
                f"{rec.name}: C aligns it to {rec.align}, below its members' {members_align} (packed records are not supported)"
            )
        aligner = ALIGNERS.get(rec.align) if rec.align > members_align else None
        raised = rec.align if rec.align > members_align and aligner is None else None
        # The alignment ctypes gives the class from its _fields_ alone; require_alignment
        # raises it later without touching the size, which must already be C's.
        ctypes_align = members_align if raised else rec.align
        natural_size = _round_up(offset, ctypes_align)
        if natural_size < rec.size:
            if rec.kind == "union":
                slots.append(Slot(f"_pad{pad_index}", f"c_ubyte * {rec.size}"))
            else:
                slots.append(Slot(f"_pad{pad_index}", f"c_ubyte * {rec.size - offset}"))
        elif natural_size > rec.size:
            raise RenderError(f"{rec.name}: ctypes would make it {natural_size} bytes, C {rec.size}")
        if aligner is not None:
            # Last, so positional construction (float4(1.0, 2.0, 3.0, 4.0)) fills C's members.
            name = f"_align{rec.align}"
            if any(s.name == name for s in slots):
                raise RenderError(f"{rec.name}: a member is already named {name}")
            slots.append(Slot(name, f"{aligner} * 0"))
        self._layouts[rec.name] = (slots, raised)
        return self._layouts[rec.name]

    def by_value_dependencies(self, rec: Record) -> list[str]:
        """Records that must have their _fields_ before this one can."""
        deps = []
        for f in rec.fields:
            t = self.resolve(f.type)
            while isinstance(t, Array):
                t = self.resolve(t.element)
            if isinstance(t, RecordRef):
                deps.append(t.name)
        return deps


def _round_up(value: int, align: int) -> int:
    return (value + align - 1) // align * align


# ---------------------------------------------------------------- C spellings


def c_declaration(t: CType, name: str = "", tag_spelling=None) -> str:
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


def _default_tag_spelling(ref) -> str:
    return f"enum {ref.name}" if isinstance(ref, EnumRef) else f"struct {ref.name}"


def _join(type_text: str, name: str) -> str:
    if not name:
        return type_text
    return f"{type_text}{name}" if name.startswith("*") and type_text.endswith("*") else f"{type_text} {name}"
