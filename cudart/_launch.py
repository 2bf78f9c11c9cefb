"""Kernel arguments and launch configuration, as cudaLaunchKernelExC takes them.

A launch passes `void **args`: one pointer per kernel parameter, each to that
argument's bytes. A `Signature` lays those bytes out once per combination of argument
types, so a launch only writes the values (one struct.pack_into). Argument sizes are
checked against the kernel's own parameter sizes where the runtime or driver can tell
them (`param_sizes`).
"""

from __future__ import annotations

import ctypes
import functools
import struct
from typing import Any

from ._checked import call_error
from ._contract import exported
from ._convert import device_address, stream_handle
from ._hostmem import HostMemory

_INT_FORMATS = {1: "b", 2: "h", 4: "i", 8: "q"}
_FLOAT_FORMATS = {2: "e", 4: "f", 8: "d"}
_CTYPES_VALUES = (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)

try:  # NumPy is optional; with it, its scalars are typed by their dtype
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the environment
    _np = None


# ---------------------------------------------------------------- configuration


def configure(config, grid, block, shared_mem: int, stream, cooperative: bool) -> None:
    """Write a launch's geometry into a cudaLaunchConfig_t whose attrs already hold
    the cooperative attribute (counted only when `cooperative`)."""
    config.gridDim.x, config.gridDim.y, config.gridDim.z = dims(grid, "grid")
    config.blockDim.x, config.blockDim.y, config.blockDim.z = dims(block, "block")
    if shared_mem < 0:
        raise ValueError("shared_mem must be >= 0")
    config.dynamicSmemBytes = shared_mem
    config.stream = stream_handle(stream)
    config.numAttrs = 1 if cooperative else 0


def dims(value, what: str) -> tuple[int, int, int]:
    """An int, a 1-3 tuple or a dim3-like object (x, y, z) -> three dimensions."""
    given: tuple[Any, ...]
    if isinstance(value, int):
        given = (value, 1, 1)
    elif hasattr(value, "x") and hasattr(value, "y") and hasattr(value, "z"):
        given = (value.x, value.y, value.z)
    else:
        try:
            given = tuple(value)
        except TypeError:
            raise TypeError(
                f"{what} must be an int or a tuple of 1 to 3 ints, not {type(value).__name__}"
            ) from None
        if not 1 <= len(given) <= 3:
            raise ValueError(f"{what} must have 1 to 3 dimensions, not {len(given)}")
        given = given + (1,) * (3 - len(given))
    for d in given:
        if not isinstance(d, int) and not hasattr(d, "__index__"):
            raise TypeError(f"{what} dimensions must be ints, not {type(d).__name__}")
        if d < 0 or d > 0xFFFFFFFF:
            raise ValueError(f"{what} dimension {d} out of range")
    x, y, z = (int(d) for d in given)
    return x, y, z


# ---------------------------------------------------------------- argument slots


def _slot(index: int, arg, size: int | None):
    """(struct format, converter, size) for one argument of a kernel parameter.

    `size` is the parameter's size, None where the runtime cannot tell it. Ints and
    floats follow C's conversions to the parameter's size; anything else must be
    exactly the parameter's size.
    """
    where = f"argument {index}"
    if isinstance(arg, ctypes.c_void_p) or arg is None:
        return _pointer_slot(where, size)
    if isinstance(arg, HostMemory):  # an address (mapped, managed), not its bytes by value
        return _pointer_slot(where, size)
    if isinstance(arg, _CTYPES_VALUES):
        native = ctypes.sizeof(arg)
        if size is not None and native != size:
            raise TypeError(
                f"{where}: {type(arg).__name__} is {native} bytes, the kernel's parameter {size}"
            )
        return f"{native}s", bytes, native
    if isinstance(arg, (bytes, bytearray)):
        if size is not None and len(arg) != size:
            raise TypeError(f"{where}: {len(arg)} bytes given for a {size}-byte parameter")
        return f"{len(arg)}s", bytes, len(arg)
    if isinstance(arg, float) or (_np is not None and isinstance(arg, _np.floating)):
        return _float_slot(where, size)
    if isinstance(arg, int) or (_np is not None and isinstance(arg, (_np.integer, _np.bool_))):
        return _int_slot(where, size)
    if hasattr(arg, "__array_interface__") and not hasattr(arg, "__cuda_array_interface__"):
        raise TypeError(f"{where}: a host array is not a kernel argument; pass a device pointer")
    if device_address(arg) is not None:
        return _pointer_slot(where, size)
    raise TypeError(f"{where}: {type(arg).__name__} is not a kernel argument type")


def _pointer_slot(where, size):
    if size is not None and size != 8:
        raise TypeError(f"{where}: a pointer (8 bytes) given for a {size}-byte parameter")
    return "Q", device_address, 8


def _int_slot(where, size):
    if size is None:
        size = 8  # little-endian: the low bytes of an 8-byte slot are any narrower int
    fmt = _INT_FORMATS.get(size)
    if fmt is None:
        raise TypeError(f"{where}: an int given for a {size}-byte parameter (a struct?)")
    bits = size * 8
    low, span, half = -(1 << (bits - 1)), 1 << bits, 1 << (bits - 1)

    def to_int(v):
        v = int(v)
        if not low <= v < span:
            raise OverflowError(f"{where}: {v} does not fit a {size}-byte integer parameter")
        return v - span if v >= half else v  # unsigned values keep their bits

    return fmt, to_int, size


def _float_slot(where, size):
    if size is None:
        raise TypeError(
            f"{where}: this runtime cannot tell the kernel's parameter sizes, so a Python "
            "float is ambiguous: pass ctypes.c_float or ctypes.c_double"
        )
    fmt = _FLOAT_FORMATS.get(size)
    if fmt is None:
        raise TypeError(f"{where}: a float given for a {size}-byte parameter")
    return fmt, float, size


class Signature:
    """Argument slots for one combination of argument types, allocated once.

    `argv` is the kernel's `void **args`: pointers into one buffer that holds every
    argument at its natural alignment. `pack(*args)` writes the values: for plain ints
    and floats it is struct's own pack_into, whose checks (integer range, number of
    values, numeric type) send anything unusual to `pack_checked`.
    """

    __slots__ = ("types", "argv", "pack", "pack_checked", "_buffer", "_pointers")

    def __init__(self, args, params):
        self.types = tuple(map(type, args))
        layout, offsets, converters = _layout(args, params)
        self._buffer = ctypes.create_string_buffer(max(8, layout.size))
        base = ctypes.addressof(self._buffer)
        self._pointers = (ctypes.c_void_p * max(1, len(args)))(*[base + o for o in offsets])
        self.argv = ctypes.c_void_p(ctypes.addressof(self._pointers) if args else None)
        raw = functools.partial(layout.pack_into, self._buffer, 0)
        types = self.types

        def pack_checked(values):
            raw(*[c(v) for c, v in zip(converters, values, strict=True)])

        self.pack_checked = pack_checked
        if all(t in (int, float, bool) for t in types):
            self.pack = raw
        else:

            def pack(*values):
                if tuple(map(type, values)) != types:
                    raise TypeError("argument types changed")
                raw(*[c(v) for c, v in zip(converters, values, strict=True)])

            self.pack = pack


def _layout(args, params):
    """(struct.Struct, offsets, converters) placing each argument at its alignment."""
    parts = ["<"]
    offsets = []
    converters = []
    offset = 0
    for k, arg in enumerate(args):
        fmt, convert, size = _slot(k, arg, params[k] if params is not None else None)
        align = min(8, size & -size) if size else 1
        pad = -offset % align
        if pad:
            parts.append(f"{pad}x")
        offset += pad
        offsets.append(offset)
        parts.append(fmt)
        offset += size
        converters.append(convert)
    return struct.Struct("".join(parts)), offsets, converters


class Unpacked:
    """A Function's signature before its first launch: packing fails, so the first
    launch builds a real Signature."""

    argv = None

    @staticmethod
    def pack(*args):
        raise TypeError("no arguments packed yet")


# ---------------------------------------------------------------- parameter sizes


def param_sizes(rt, cdll, handle: int, name: str) -> tuple[int, ...] | None:
    """Each parameter's size in bytes of the kernel `handle`, or None where neither
    runtime (cudaFuncGetParamInfo, 12.4+) nor driver (cuFuncGetParamInfo) can tell."""
    offset, size = ctypes.c_size_t(), ctypes.c_size_t()
    if exported(rt, cdll, "cudaFuncGetParamInfo"):

        def query(i: int) -> int:
            return int(rt.cudaFuncGetParamInfo(handle, i, ctypes.byref(offset), ctypes.byref(size)))

        past_end = rt.cudaErrorInvalidValue
    else:
        driver = _driver_param_info()
        if driver is None:
            return None
        cufunc = ctypes.c_void_p()
        if rt.cudaGetFuncBySymbol(ctypes.byref(cufunc), handle):
            return None

        def query(i: int) -> int:
            return int(driver(cufunc, i, ctypes.byref(offset), ctypes.byref(size)))

        past_end = 1  # CUDA_ERROR_INVALID_VALUE
    # The probe past the last parameter is how the count is found; the runtime
    # records that as the thread's last error, which must not leak to the caller.
    pending = rt.cudaPeekAtLastError()
    sizes: list[int] = []
    while True:
        status = query(len(sizes))
        if status == past_end:
            if not pending:
                rt.cudaGetLastError()
            return tuple(sizes)
        if status:
            if not sizes:
                return None
            raise call_error(rt, f"cudaFuncGetParamInfo({name!r}, {len(sizes)})", status)
        sizes.append(size.value)


_libcuda = None


def _driver_param_info():
    """libcuda's cuFuncGetParamInfo (driver 12.4+), or None."""
    global _libcuda
    if _libcuda is None:
        try:
            fn = ctypes.CDLL("libcuda.so.1")["cuFuncGetParamInfo"]
            fn.restype = ctypes.c_int
            fn.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p)
            _libcuda = fn
        except (OSError, AttributeError):
            _libcuda = False
    return _libcuda or None
