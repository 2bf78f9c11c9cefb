"""Record layout helpers: C's alignment ctypes cannot give before Python 3.13, and
`char` arrays that hold bytes rather than text.

A ctypes Structure is aligned to its most aligned member. The generated modules make a
record more aligned than its members, as C's `__align__(n)` does, with a trailing
zero-length array of a scalar that has that alignment (`("_align16", c_longdouble * 0)`):
it adds no bytes and works on every Python. No ctypes scalar is aligned beyond 16, so
CUDA 13's `__builtin_align__(32)` types (`double4_32a`, `longlong4_32a`, ...) need
something else:

* Python 3.13+ honours the `_align_` class attribute, which the generated class sets.
* Before 3.13 ctypes ignores `_align_`, and ctypes.alignment(cls), the layout of every
  Structure that embeds the record and every array of it come from the `align` member
  of the class's StgDict (ctypes' type-info dict, CPython 3.11/3.12 Modules/_ctypes/
  ctypes.h). `require_alignment` raises that value (and the libffi type's alignment,
  which must agree) right after the class's `_fields_` are set, before anything embeds
  it. The memory is written only after both values read at the computed offsets are
  found equal to what ctypes reports for the class, so a different layout of that
  struct raises an error instead of corrupting anything.

A `char x[N]` member is `c_char * N` in `_fields_` (C's layout, exactly), and ctypes
reads such a member as text: the bytes up to the first zero. That is right for a name
(`cudaDeviceProp.name`) and wrong for bytes that may hold zeros (`cudaUUID_t.bytes`,
`cudaDeviceProp.luid`, an IPC handle's `reserved`). `binary_fields` replaces those
members' descriptors with `BinaryField`, which reads all N bytes and writes N bytes;
the generator decides which members they are (generator/ctypes_map.py, `holds_text`).

A member that holds a device function (`cudaKernelNodeParams.func`) or a kernel's
`void **kernelParams` takes what the checked functions take there: a
cudart.kernels.Function, what Function.pack returns. `kernel_fields` puts a
`ConvertedField` over such members (the generator decides which they are,
generator/device_functions.py); the record keeps the object alive while it refers to it.
Every other `void *` member takes what a checked pointer parameter takes (a buffer, a
HostMemory, a ctypes object, never a handle) through `memory_fields`, and keeps it alive
the same way. A handle member takes what a checked handle parameter takes through
`handle_fields`: ctypes itself refuses the other API's handle of the same kind (a
cudaStream_t stored into `CUlaunchConfig.hStream`).

A record read out of a record (`frame.frame.pPitch[0]`, `params.extent`) is ctypes'
view of the enclosing record's memory, as a C lvalue is: setting its fields changes the
enclosing record. `copy.copy` and `copy.deepcopy` of a record or of an array of records
give a detached value instead (ctypes' own copy refuses every record holding a pointer);
`detached_copies` gives a generated module's record and array classes those methods.
The copy keeps alive what the original's record kept alive (a buffer or a Function its
pointer members refer to), since it holds the same addresses.

Standard library only, like the rest of the runtime package.
"""

from __future__ import annotations

import ctypes
import gc
import operator
import sys
from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs milliseconds at import; annotations only need it here
    from typing import Any, TypeVar

    _Scalar = TypeVar("_Scalar", ctypes.c_ssize_t, ctypes.c_size_t, ctypes.c_ushort)

__all__ = [
    "BinaryField",
    "ConvertedField",
    "HandleField",
    "binary_fields",
    "detached_copies",
    "device_address_fields",
    "handle_fields",
    "integer_fields",
    "kernel_fields",
    "memory_fields",
    "require_alignment",
]

# StgDictObject (CPython 3.11/3.12): PyDictObject dict; Py_ssize_t size, align, length;
# ffi_type ffi_type_pointer {size_t size; unsigned short alignment; unsigned short type;
# ffi_type **elements}; ... The offsets below are from the end of the PyDictObject.
_SIZE = 0
_ALIGN = ctypes.sizeof(ctypes.c_ssize_t)
_FFI = 3 * ctypes.sizeof(ctypes.c_ssize_t)
_FFI_SIZE = _FFI
_FFI_ALIGNMENT = _FFI + ctypes.sizeof(ctypes.c_size_t)
_FFI_TYPE = _FFI_ALIGNMENT + ctypes.sizeof(ctypes.c_ushort)
_FFI_TYPE_STRUCT = 13  # libffi's FFI_TYPE_STRUCT, the type tag of every Structure and Union


class LayoutError(RuntimeError):
    """ctypes' internals are not laid out as this module expects; nothing was written."""


def require_alignment(cls: type, align: int) -> None:
    """Make `ctypes.alignment(cls) == align`, as C aligns the record, on every Python.

    Call it once, right after `cls._fields_` is set. `align` must be a power of two no
    smaller than ctypes' own alignment of the class and must divide its size (C's
    sizeof is always a multiple of the alignment).
    """
    if not (isinstance(cls, type) and issubclass(cls, (ctypes.Structure, ctypes.Union))):
        raise TypeError(f"{cls!r} is not a ctypes Structure or Union class")
    if "_fields_" not in cls.__dict__:
        raise LayoutError(f"{cls.__name__}: set _fields_ before aligning it")
    current = ctypes.alignment(cls)
    if current == align:
        return  # _align_ honoured (3.13+), or the members already align it
    size = ctypes.sizeof(cls)
    if align & (align - 1) or align < current or size % align:
        raise ValueError(
            f"{cls.__name__}: cannot align a {size}-byte record aligned to {current} to {align}"
        )
    if sys.version_info >= (3, 13):
        # 3.13+ keeps type info outside the type's dict and honours _align_ instead.
        raise LayoutError(
            f"{cls.__name__}: ctypes.alignment is {current}, expected {align} from _align_"
        )
    base = _stgdict_address(cls)

    def at(offset: int, ctype: type[_Scalar]) -> _Scalar:
        return ctype.from_address(base + offset)

    found = (
        at(_SIZE, ctypes.c_ssize_t).value,
        at(_ALIGN, ctypes.c_ssize_t).value,
        at(_FFI_SIZE, ctypes.c_size_t).value,
        at(_FFI_ALIGNMENT, ctypes.c_ushort).value,
        at(_FFI_TYPE, ctypes.c_ushort).value,
    )
    expected = (size, current, size, current, _FFI_TYPE_STRUCT)
    if found != expected:
        raise LayoutError(
            f"{cls.__name__}: ctypes' type info of Python {sys.version.split()[0]} "
            "is not laid out as expected (read size, align, ffi size, ffi alignment, "
            f"ffi type = {found}, expected {expected}); cannot align it to {align}"
        )
    at(_ALIGN, ctypes.c_ssize_t).value = align
    at(_FFI_ALIGNMENT, ctypes.c_ushort).value = align
    if ctypes.alignment(cls) != align:
        raise LayoutError(
            f"{cls.__name__}: ctypes.alignment is still {ctypes.alignment(cls)} "
            f"after setting {align}"
        )


def _stgdict_address(cls: type) -> int:
    """Address just past the PyDictObject part of the class's StgDict."""
    # The type's __dict__ is a read-only proxy over the StgDict itself.
    stgdicts = [d for d in gc.get_referents(cls.__dict__) if type(d).__name__ == "StgDict"]
    if len(stgdicts) != 1 or not isinstance(stgdicts[0], dict):
        raise LayoutError(
            f"{cls.__name__}: no StgDict behind the class's __dict__ ({sys.version.split()[0]})"
        )
    return id(stgdicts[0]) + dict.__basicsize__


class BinaryField:
    """A `c_char * N` member that reads as all N bytes, zeros included.

    Reading gives `bytes` of length N. Writing takes any bytes-like object of at most N
    bytes, or a list or tuple of at most N C chars (ints of -128..255, a negative one
    stored as a signed char stores it, as cuda-bindings takes them), and zero-fills the
    rest (ctypes' own setter for `c_char * N` stops at the value's first zero byte and
    leaves the old bytes after it). `offset` and `size` are
    the member's, as ctypes' field descriptor reports them, so layout checks read it
    like any other member.
    """

    __slots__ = ("offset", "size")

    def __init__(self, field: object) -> None:
        self.offset: int = getattr(field, "offset")  # noqa: B009 - ctypes' CField
        self.size: int = getattr(field, "size")  # noqa: B009

    def __get__(
        self, obj: ctypes.Structure | ctypes.Union | None, cls: type | None = None
    ) -> bytes | BinaryField:
        if obj is None:
            return self
        return ctypes.string_at(ctypes.addressof(obj) + self.offset, self.size)

    def __set__(
        self, obj: ctypes.Structure | ctypes.Union, value: bytes | list[int] | tuple[int, ...]
    ) -> None:
        if isinstance(value, (list, tuple)):
            data = _char_bytes(value)
        else:
            data = memoryview(value).tobytes()
        if len(data) > self.size:
            raise ValueError(f"{len(data)} bytes for a member of {self.size}")
        # Not ctypes' own setter, which copies up to the first zero byte (strlen).
        ctypes.memmove(ctypes.addressof(obj) + self.offset, data.ljust(self.size, b"\0"), self.size)

    def __repr__(self) -> str:
        return f"<BinaryField offset={self.offset} size={self.size}>"


def _char_bytes(chars: Sequence[int]) -> bytes:
    """C chars as bytes: each an integer (by __index__: a float is no char) that a signed
    or an unsigned char holds, so -1 and 255 are the same byte."""
    out = bytearray()
    for i, char in enumerate(chars):
        value = operator.index(char)
        if not -128 <= value <= 255:
            raise OverflowError(f"item {i}: {value} is no C char (-128..255)")
        out.append(value & 0xFF)
    return bytes(out)


def binary_fields(cls: type, *names: str) -> None:
    """Make each named `c_char * N` member of `cls` read and write all N bytes.

    Call it right after `cls._fields_` is set. A member ctypes promotes from an
    anonymous one is named too: the promoted descriptor is a copy of the member's. A
    member ctypes does not lay out as a `c_char` array is an error: the generator and
    the class disagree.
    """
    declared = _member_types(cls)
    for name in names:
        ctype = declared.get(name)
        if not (
            isinstance(ctype, type)
            and issubclass(ctype, ctypes.Array)
            and getattr(ctype, "_type_", None) is ctypes.c_char
        ):
            raise LayoutError(f"{cls.__name__}.{name} is not a c_char array member")
        setattr(cls, name, BinaryField(cls.__dict__[name]))


class _StoringField:
    """A record member whose stores are cudart's and whose reads are ctypes' own. It
    says `offset` and `size` as ctypes' field does: users and the gcc judge read
    Record.member.offset."""

    __slots__ = ("field", "ctype", "name", "offset", "size")

    def __init__(self, field: object, ctype: type, name: str) -> None:
        self.field = field
        self.ctype = ctype
        self.name = name
        self.offset: int = getattr(field, "offset")  # noqa: B009 - ctypes' CField
        self.size: int = getattr(field, "size")  # noqa: B009

    def __get__(self, obj: object, cls: type | None = None) -> object:
        if obj is None:
            return self
        return self.field.__get__(obj, cls)  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} offset={self.offset} size={self.size}>"


class ConvertedField(_StoringField):
    """A pointer member whose stores go through a conversion of cudart._convert.

    Reading is ctypes' own. Storing converts the value (a Function to its handle, a
    KernelArguments to its `void **`) and stores it as a ctypes object that carries the
    value, so the record (or the record that embeds it) keeps it alive until the member
    is stored again; ctypes' own objects and None are stored as ctypes stores them.
    """

    __slots__ = ("convert",)

    def __init__(self, field: object, ctype: type, convert: object, name: str) -> None:
        super().__init__(field, ctype, name)
        self.convert = convert

    def __set__(self, obj: object, value: object) -> None:
        from ._convert import field_value

        stored = field_value(value, self.ctype, self.convert, self.name)
        if stored is value and value is not None:
            # ctypes' own object: what the member held before is released first (ctypes
            # replaces what it keeps only when the new value keeps something).
            self.field.__set__(obj, field_value(None, self.ctype, self.convert, self.name))  # type: ignore[attr-defined]
        self.field.__set__(obj, stored)  # type: ignore[attr-defined]


class MemoryField(ConvertedField):
    """A `void *` member that takes what a checked pointer parameter takes: an int,
    None, a HostMemory, a buffer, a ctypes object (its address), an object with
    __int__ or __cuda_array_interface__; never a handle (cudart._convert.address). The
    record keeps the memory alive until the member is stored again. Reading is ctypes'
    own: the address as an int, or None."""

    __slots__ = ()

    def __set__(self, obj: object, value: object) -> None:
        from ._convert import memory_field

        self.field.__set__(obj, memory_field(value, self.name))  # type: ignore[attr-defined]


def memory_fields(cls: type, *names: str) -> None:
    """Make the named `void *` members of `cls` take memory (MemoryField). Call it right
    after `cls._fields_` is set."""
    from ._convert import address

    declared = _member_types(cls)
    for name in names:
        if declared.get(name) is not ctypes.c_void_p:
            raise LayoutError(f"{cls.__name__}.{name} is not a void * member")
        setattr(cls, name, MemoryField(cls.__dict__[name], ctypes.c_void_p, address, name))


class HandleField(_StoringField):
    """A handle member (`CUlaunchConfig.hStream`) that takes what a checked handle
    parameter of its class takes (cudart._convert.handle): the other API's handle of the
    same kind (a cudaStream_t where a CUstream is declared), another version's, an int,
    None, an object with __cuda_stream__ or __int__; a destroyed handle object or one of
    another kind is refused. ctypes itself takes only ints and its own class. Reading
    is ctypes' own: a handle of the member's class."""

    __slots__ = ()

    def __set__(self, obj: object, value: object) -> None:
        if value.__class__ is not self.ctype:
            from ._convert import handle

            value = handle(value, self.ctype, self.name)
            if isinstance(value, ctypes.c_void_p):
                value = value.value
        self.field.__set__(obj, value)  # type: ignore[attr-defined]


def handle_fields(cls: type, *names: str) -> None:
    """Make the named handle members of `cls` take the handles a checked parameter of
    their class takes (HandleField). Call it right after `cls._fields_` is set."""
    from ._handles import Handle

    declared = _member_types(cls)
    for name in names:
        ctype = declared.get(name)
        if ctype is None or not issubclass(ctype, Handle):
            raise LayoutError(f"{cls.__name__}.{name} is not a handle member")
        setattr(cls, name, HandleField(cls.__dict__[name], ctype, name))


def kernel_fields(cls: type, functions: tuple[str, ...], arguments: tuple[str, ...]) -> None:
    """Make the named members of `cls` take a kernel handle (`functions`: device
    function pointers) or packed kernel arguments (`arguments`: `void **kernelParams`).
    Call it right after `cls._fields_` is set."""
    from ._convert import device_function, kernel_params_field

    declared = _member_types(cls)
    for names, convert in ((functions, device_function), (arguments, kernel_params_field)):
        for name in names:
            ctype = declared.get(name)
            # c_void_p or a handle class (the driver's CUfunction, CUkernel members).
            if ctype is None or not issubclass(ctype, (ctypes.c_void_p, ctypes._Pointer)):
                raise LayoutError(f"{cls.__name__}.{name} is not a pointer member")
            setattr(cls, name, ConvertedField(cls.__dict__[name], ctype, convert, name))


def cxx_defaults(cls: type, defaults: dict[str, int]) -> None:
    """Give `cls` its C++ constructor's member defaults (`dim3(512)` is (512, 1, 1),
    `dim3()` (1, 1, 1)): members given neither by position nor by name take them. C
    has no constructors; ctypes' own would zero them. `defaults` is in member order."""
    names, values = tuple(defaults), tuple(defaults.values())
    construct = getattr(cls, "__init__")  # noqa: B009 - ctypes' own, wrapped

    def __init__(self: object, *args: object, **kwargs: object) -> None:
        given = len(args)
        filled = dict(zip(names[given:], values[given:], strict=True))
        construct(self, *args, **{**filled, **kwargs})

    __init__.__doc__ = f"{cls.__name__}({', '.join(f'{n}={v}' for n, v in defaults.items())})"
    setattr(cls, "__init__", __init__)  # noqa: B010 - a method made here, mypy sees one


class Dim3Field(_StoringField):
    """A `dim3` member that takes what the checked launches take (an int, a 1-3 tuple,
    a dim3-like), converted and range-checked by cudart._convert.dim3."""

    __slots__ = ()

    def __set__(self, obj: object, value: object) -> None:
        from ._convert import dim3

        self.field.__set__(obj, dim3(value, self.ctype, self.name))  # type: ignore[attr-defined]


def dim3_fields(cls: type, names: tuple[str, ...]) -> None:
    """Make the named `dim3` members of `cls` take ints and tuples (Dim3Field). Call
    it right after `cls._fields_` is set."""
    declared = _member_types(cls)
    for name in names:
        setattr(cls, name, Dim3Field(cls.__dict__[name], declared[name], name))


# ---------------------------------------------------------------- integer members
#
# ctypes masks what an integer member cannot hold (`rec.count = 2**40` stores 0, -1 into
# an unsigned member 2**32-1) and takes nothing but an int for a CUdeviceptr member.
# integer_fields and device_address_fields put a descriptor over ctypes' own field that
# stores an exact int within the C type's range as ctypes does, and sends everything
# else to `slow`, the checked layer's conversion (cudart._convert.integer_of,
# device_pointer_of), which names the member and the C type's range. Where it is built
# (and $CUDART_BACKEND is not "ctypes") the descriptor is cudart._fields.IntegerField,
# in C: a store costs little more than ctypes' own. Elsewhere it is the Python
# IntegerField below, a property over ctypes' getter whose setter is a closure. One
# descriptor per member and no class per member: a module holds thousands of them.


class IntegerField(property):
    """A record's integer member that refuses what its C type cannot hold (OverflowError)
    and what is no integer (TypeError), as a checked integer parameter does; or, made by
    device_address_fields, a CUdeviceptr member that takes what a checked CUdeviceptr
    parameter takes and keeps it alive. Reading is ctypes' own getter. `offset` and
    `size` are ctypes' field's (users and the gcc judge read Record.member.offset). The
    Python twin of cudart._fields.IntegerField (cudart/_fields.c)."""

    offset: int
    size: int
    name: str

    def __repr__(self) -> str:
        return f"<IntegerField {self.name} offset={self.offset} size={self.size}>"


def _python_member(field: Any, low: int, high: int, slow: Any, release: Any, name: str) -> Any:
    store = field.__set__
    if release is None:

        def store_integer(obj: object, value: Any) -> None:
            if value.__class__ is int and low <= value <= high:
                store(obj, value)
            else:
                store(obj, slow(value))

    else:

        def store_integer(obj: object, value: Any) -> None:
            if value.__class__ is int and low <= value <= high:
                store(obj, release)  # an int keeps nothing: release what was kept
                store(obj, value)
            else:
                store(obj, slow(value))

    member = IntegerField(field.__get__, store_integer)
    member.offset = field.offset
    member.size = field.size
    member.name = name
    return member


_descriptor: list[Any] = []  # [the IntegerField class in force], chosen on first use


def _integer_member(cls: type, name: str, low: int, high: int, slow: Any, release: Any) -> None:
    if not _descriptor:
        from ._backend import fields_module

        compiled = fields_module()
        _descriptor.append(_python_member if compiled is None else compiled.IntegerField)
    setattr(cls, name, _descriptor[0](cls.__dict__[name], low, high, slow, release, name))


def _integer_slow(spec: tuple[int, int, str], what: str) -> Any:
    from ._convert import integer_of

    return lambda value: integer_of(value, spec, what)


# A CUdeviceptr that keeps nothing alive: storing it replaces what ctypes kept for the
# member, which storing an int leaves in place (ctypes keeps nothing for an int).
_KEEPS_NOTHING = ctypes.c_ulonglong.from_buffer(bytearray(8))


class _HeldAddress(ctypes.c_ulonglong):
    """A CUdeviceptr's value that carries the Python object it came from."""


def _device_address_slow(spec: tuple[int, int, str], what: str, written: bool) -> Any:
    from ._convert import device_pointer_of

    def convert(value: object) -> ctypes.c_ulonglong:
        # A c_ulonglong of the address that keeps `value` alive in whatever record (or
        # record enclosing it) it is stored into: ctypes keeps what a from_buffer object
        # was made from there, and a later store of another kept object replaces it.
        held = _HeldAddress(device_pointer_of(value, spec, what, written))
        held.source = value  # type: ignore[attr-defined]
        return ctypes.c_ulonglong.from_buffer(held)

    return convert


def integer_fields(cls: type, ranges: dict[str, tuple[int, int, str]]) -> None:
    """Make the named integer members of `cls` refuse what their C type cannot hold:
    `ranges` maps each to (low, high, C name), the checked layer's facts
    (generator/ctypes_map.py integer_range). Call it right after `cls._fields_` is set."""
    declared = _member_types(cls)
    for name, spec in ranges.items():
        ctype = declared.get(name)
        if not (isinstance(ctype, type) and issubclass(ctype, _INTEGER_TYPES)):
            raise LayoutError(f"{cls.__name__}.{name} is not an integer member")
        slow = _integer_slow(spec, f"{cls.__name__}.{name}")
        _integer_member(cls, name, spec[0], spec[1], slow, None)


def device_address_fields(
    cls: type, ranges: dict[str, tuple[int, int, str]], written: tuple[str, ...] = ()
) -> None:
    """Make the named CUdeviceptr members of `cls` take what a checked CUdeviceptr
    parameter takes (an int, a device array, a DLPack producer of CUDA memory, an
    object with __int__), keeping it alive until the member is stored again; `written`
    members (a copy's or a memset's destination) refuse read-only device memory. Call
    it right after `cls._fields_` is set."""
    declared = _member_types(cls)
    for name, spec in ranges.items():
        if declared.get(name) is not ctypes.c_ulonglong:
            raise LayoutError(f"{cls.__name__}.{name} is not a CUdeviceptr member")
        slow = _device_address_slow(spec, f"{cls.__name__}.{name}", name in written)
        _integer_member(cls, name, spec[0], spec[1], slow, _KEEPS_NOTHING)


# ctypes' integer scalars (c_bool among them, a C _Bool); c_char reads as bytes and
# range-checks an int itself.
_INTEGER_TYPES = (
    ctypes.c_byte,
    ctypes.c_ubyte,
    ctypes.c_short,
    ctypes.c_ushort,
    ctypes.c_int,
    ctypes.c_uint,
    ctypes.c_long,
    ctypes.c_ulong,
    ctypes.c_longlong,
    ctypes.c_ulonglong,
    ctypes.c_bool,
)


def _member_types(cls: type) -> dict[str, type]:
    """Each member's ctypes type, with the members ctypes promotes from anonymous ones."""
    fields = [(f[0], f[1]) for f in cls.__dict__.get("_fields_", ())]
    found = dict(fields)
    for name in cls.__dict__.get("_anonymous_", ()):
        found.update(_member_types(found[name]))
    return found


# ---------------------------------------------------------------- detached copies


def detached_copies(namespace: dict) -> None:
    """Give each record class of a generated module (`namespace`), and each array type
    its members use, `__copy__` and `__deepcopy__` that copy the bytes into a new object
    (what a C assignment does). Call it once, after every `_fields_` is set."""
    seen: set[type] = set()
    for value in list(namespace.values()):
        if isinstance(value, type) and issubclass(value, (ctypes.Structure, ctypes.Union)):
            if value.__module__ == namespace.get("__name__") and "_fields_" in value.__dict__:
                _copyable(value, seen)


def _copyable(cls: type, seen: set[type]) -> None:
    if cls in seen:
        return
    seen.add(cls)
    cls.__copy__ = _detached  # type: ignore[attr-defined]
    cls.__deepcopy__ = _deep_detached  # type: ignore[attr-defined]
    for member in _member_types(cls).values():
        ctype: object = member
        while isinstance(ctype, type) and issubclass(ctype, ctypes.Array):
            _copyable(ctype, seen)
            ctype = ctype._type_


def _detached(obj: ctypes.Structure | ctypes.Union | ctypes.Array) -> object:
    new = type(obj).from_buffer_copy(obj)
    new.__dict__.update(obj.__dict__)
    for klass in type(obj).__mro__:
        for slot in klass.__dict__.get("__slots__", ()):
            if hasattr(obj, slot):
                object.__setattr__(new, slot, getattr(obj, slot))
    kept = _kept(obj)
    if kept is not None:
        new.__dict__["_kept_"] = kept
    return new


def _deep_detached(obj: ctypes.Structure | ctypes.Union | ctypes.Array, memo: dict) -> object:
    # The bytes are the value; what pointer members refer to is shared, as in C.
    return _detached(obj)


def _kept(obj: object) -> object:
    """What ctypes keeps alive for the record `obj` belongs to (a view's keeps are its
    outermost record's), as they are now: a later store into the original replaces its
    own entries, not the copy's."""
    root = obj
    while getattr(root, "_b_base_", None) is not None:
        root = root._b_base_  # type: ignore[attr-defined]
    objects = _snapshot(getattr(root, "_objects", None))
    earlier = getattr(root, "__dict__", {}).get("_kept_")
    if objects is None and earlier is None:
        return None
    return (objects, earlier)


def _snapshot(objects: object) -> object:
    if isinstance(objects, dict):
        return {key: _snapshot(value) for key, value in objects.items()}
    return objects
