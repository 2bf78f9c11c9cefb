"""What libcuda says of a kernel's parameters: cuFuncGetParamInfo (driver 12.4+).

One place for the checks that need the kernel's own parameters where cudart does not
know its types: a packed argument buffer's span (cuLaunchKernel's `extra`), a tuple of
ctypes values for a CUfunction (its count and sizes), and the driver's answer for
older runtimes that lack cudaFuncGetParamInfo (cudart.kernels._launch). Standard
library only.
"""

from __future__ import annotations

import ctypes

from ._loader import load_library
from .errors import LibraryNotFoundError

# CUDA_ERROR_INVALID_VALUE: the answer for an index past the last parameter.
PAST_THE_END = 1

# Published once whole (the function, or False): racing first callers each look it up.
_libcuda = None


def driver_param_info():
    """libcuda's cuFuncGetParamInfo (driver 12.4+), or None: of the libcuda the driver
    API loads (cudart._loader, $CUDART_DRIVER_LIBRARY included)."""
    global _libcuda
    if _libcuda is None:
        try:
            fn = load_library("driver").cdll["cuFuncGetParamInfo"]
            fn.restype = ctypes.c_int
            fn.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p)
            _libcuda = fn
        except (LibraryNotFoundError, AttributeError):
            _libcuda = False
    return _libcuda or None


def read_params(query, past_end: int) -> tuple[tuple[tuple[int, int], ...], int]:
    """Each parameter's (offset, size) as `query(index, &offset, &size)` answers them
    (cuFuncGetParamInfo's or cudaFuncGetParamInfo's shape), in order: with 0 where it
    answered `past_end` after the last one, else with the status it failed with."""
    offset, size = ctypes.c_size_t(), ctypes.c_size_t()
    found: list[tuple[int, int]] = []
    while True:
        status = int(query(len(found), ctypes.byref(offset), ctypes.byref(size)))
        if status == past_end:
            return tuple(found), 0
        if status:
            return tuple(found), status
        found.append((offset.value, size.value))


def driver_params(cufunc: int) -> tuple[tuple[int, int], ...] | None:
    """Each parameter's (offset, size) of the CUfunction at `cufunc`, or None where
    libcuda cannot tell (no cuFuncGetParamInfo, or it refuses the handle)."""
    driver = driver_param_info()
    if driver is None:
        return None
    found, status = read_params(lambda *query: driver(cufunc, *query), PAST_THE_END)
    return None if status else found


def driver_param_span(cufunc: int) -> int | None:
    """The bytes a driver kernel's parameters span (the last one's offset + size, 0 for
    none): what the driver takes as a packed argument buffer's size. None where libcuda
    cannot tell."""
    params = driver_params(cufunc)
    if params is None:
        return None
    return max((offset + size for offset, size in params), default=0)
