"""C's alignment for records that ctypes cannot align on its own before Python 3.13.

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

Standard library only, like the rest of the runtime package.
"""

from __future__ import annotations

import ctypes
import gc
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs milliseconds at import; annotations only need it here
    from typing import TypeVar

    _Scalar = TypeVar("_Scalar", ctypes.c_ssize_t, ctypes.c_size_t, ctypes.c_ushort)

__all__ = ["require_alignment"]

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
