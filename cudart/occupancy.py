"""The occupancy calculators cuda_runtime.h defines as C++ templates, in Python.

`cudaOccupancyMaxPotentialBlockSize` and its `VariableSMem`/`WithFlags` variants
exist only as inline templates in cuda_runtime.h, so libcudart exports nothing to
call. This is a line-by-line port of
`cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags` (identical in the 12.2,
12.5, 12.9 and 13.0 headers): it asks the same runtime calls in the same order and
walks block sizes from the largest down in warp-size steps, so it returns what the
C++ template returns for the same kernel, device and inputs.

Two forms: the C names take the header's arguments (`minGridSize` and `blockSize`
as ctypes ints, `byref(...)` of them, or pointers) and return a cudaError_t; the
snake_case forms return `(min_grid_size, block_size)` and raise cudart.CudaError subclasses.
`func` is anything the raw layer takes as a function: a `cudart.kernels.Function`,
or an int handle.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

from ._convert import device_function, integer
from ._serving import raw_module

__all__ = [
    "cudaOccupancyMaxPotentialBlockSize",
    "cudaOccupancyMaxPotentialBlockSizeVariableSMem",
    "cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags",
    "cudaOccupancyMaxPotentialBlockSizeWithFlags",
    "max_potential_block_size",
    "max_potential_block_size_variable_smem",
    "potential_block_size",
]


def potential_block_size(
    max_threads_per_multiprocessor: int,
    warp_size: int,
    device_max_threads_per_block: int,
    multiprocessor_count: int,
    function_max_threads_per_block: int,
    block_size_to_dynamic_smem: Callable[[int], int],
    block_size_limit: int,
    occupancy_in_blocks: Callable[[int, int], int],
) -> tuple[int, int]:
    """The template's search, given the limits it reads and an occupancy query.

    `occupancy_in_blocks(block_size, dynamic_smem)` stands for
    cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags. Returns
    (min_grid_size, block_size).
    """
    occupancy_limit = max_threads_per_multiprocessor
    granularity = warp_size
    max_block_size = 0
    num_blocks = 0
    max_occupancy = 0

    if block_size_limit == 0:
        block_size_limit = device_max_threads_per_block
    if device_max_threads_per_block < block_size_limit:
        block_size_limit = device_max_threads_per_block
    if function_max_threads_per_block < block_size_limit:
        block_size_limit = function_max_threads_per_block

    # C's int division truncates toward zero; these operands are never negative.
    block_size_limit_aligned = ((block_size_limit + (granularity - 1)) // granularity) * granularity

    block_size_to_try_aligned = block_size_limit_aligned
    while block_size_to_try_aligned > 0:
        # The first aligned size can exceed the limit; the limit itself is tried instead.
        if block_size_limit < block_size_to_try_aligned:
            block_size_to_try = block_size_limit
        else:
            block_size_to_try = block_size_to_try_aligned

        dynamic_smem = block_size_to_dynamic_smem(block_size_to_try)
        occupancy = occupancy_in_blocks(block_size_to_try, dynamic_smem)
        occupancy_in_threads = block_size_to_try * occupancy

        if occupancy_in_threads > max_occupancy:
            max_block_size = block_size_to_try
            num_blocks = occupancy
            max_occupancy = occupancy_in_threads

        if occupancy_limit == max_occupancy:
            break
        block_size_to_try_aligned -= granularity

    return num_blocks * multiprocessor_count, max_block_size


_NAME = "cudaOccupancyMaxPotentialBlockSize"
_INT = (-(1 << 31), (1 << 31) - 1, "int")
_UNSIGNED_INT = (0, (1 << 32) - 1, "unsigned int")
_SIZE_T = (0, (1 << 64) - 1, "size_t")


class _Failed(Exception):
    def __init__(self, status: int):
        self.status = status


def _run(rt, func, block_size_to_dynamic_smem, block_size_limit, flags):
    """The template's body: (status, min_grid_size, block_size)."""
    if rt is None:
        rt = raw_module()
    # What the raw calls below take, checked as the checked layer checks them: ctypes
    # would pass memory as the kernel and mask an integer outside its C type.
    func = device_function(func, "func")
    block_size_limit = integer(block_size_limit, _INT, _NAME, "blockSizeLimit")
    flags = integer(flags, _UNSIGNED_INT, _NAME, "flags")
    if not func:
        return rt.cudaErrorInvalidValue, 0, 0

    def ok(status):
        if status != rt.cudaSuccess:
            raise _Failed(status)

    try:
        device = ctypes.c_int()
        ok(rt.cudaGetDevice(ctypes.byref(device)))

        def attribute(which):
            value = ctypes.c_int()
            ok(rt.cudaDeviceGetAttribute(ctypes.byref(value), which, device.value))
            return value.value

        max_threads_per_sm = attribute(rt.cudaDevAttrMaxThreadsPerMultiProcessor)
        warp_size = attribute(rt.cudaDevAttrWarpSize)
        dev_max_threads_per_block = attribute(rt.cudaDevAttrMaxThreadsPerBlock)
        sm_count = attribute(rt.cudaDevAttrMultiProcessorCount)
        attrs = rt.cudaFuncAttributes()
        ok(rt.cudaFuncGetAttributes(ctypes.byref(attrs), func))

        query = rt.cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags
        blocks = ctypes.c_int()

        def occupancy(block_size, dynamic_smem):
            dynamic_smem = integer(dynamic_smem, _SIZE_T, _NAME, "dynamic shared memory size")
            ok(query(ctypes.byref(blocks), func, block_size, dynamic_smem, flags))
            return blocks.value

        min_grid, block = potential_block_size(
            max_threads_per_sm,
            warp_size,
            dev_max_threads_per_block,
            sm_count,
            attrs.maxThreadsPerBlock,
            block_size_to_dynamic_smem,
            block_size_limit,
            occupancy,
        )
    except _Failed as failed:
        return failed.status, 0, 0
    return rt.cudaSuccess, min_grid, block


def _store(target, value: int) -> None:
    """Write through what C would take as `int *`: c_int, byref(c_int), POINTER(c_int), address."""
    target = getattr(target, "_obj", target)  # byref(x) keeps x as _obj
    if isinstance(target, ctypes.c_int):
        target.value = value
    elif isinstance(target, ctypes._Pointer):
        target[0] = value
    elif isinstance(target, int):
        ctypes.c_int.from_address(target).value = value
    else:
        raise TypeError(
            "expected a ctypes int, byref() of one, a pointer or an address, "
            f"not {type(target).__name__}"
        )


def _constant(size: int) -> Callable[[int], int]:
    return lambda block_size: size  # __cudaOccupancyB2DHelper


def cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(
    minGridSize, blockSize, func, blockSizeToDynamicSMemSize, blockSizeLimit=0, flags=0, *, rt=None
) -> int:
    if minGridSize is None or blockSize is None:
        return (rt or _default_rt()).cudaErrorInvalidValue
    status, grid, block = _run(rt, func, blockSizeToDynamicSMemSize, blockSizeLimit, flags)
    if status == 0:
        # As in the header, outputs are written only on success.
        _store(minGridSize, grid)
        _store(blockSize, block)
    return status


def cudaOccupancyMaxPotentialBlockSizeVariableSMem(
    minGridSize, blockSize, func, blockSizeToDynamicSMemSize, blockSizeLimit=0, *, rt=None
) -> int:
    return cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(
        minGridSize, blockSize, func, blockSizeToDynamicSMemSize, blockSizeLimit, 0, rt=rt
    )


def cudaOccupancyMaxPotentialBlockSize(
    minGridSize, blockSize, func, dynamicSMemSize=0, blockSizeLimit=0, *, rt=None
) -> int:
    return cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(
        minGridSize, blockSize, func, _constant(dynamicSMemSize), blockSizeLimit, 0, rt=rt
    )


def cudaOccupancyMaxPotentialBlockSizeWithFlags(
    minGridSize, blockSize, func, dynamicSMemSize=0, blockSizeLimit=0, flags=0, *, rt=None
) -> int:
    return cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(
        minGridSize, blockSize, func, _constant(dynamicSMemSize), blockSizeLimit, flags, rt=rt
    )


def max_potential_block_size(
    func, dynamic_smem_size: int = 0, block_size_limit: int = 0, flags: int = 0, *, rt=None
) -> tuple[int, int]:
    """(min_grid_size, block_size) of the best occupancy; raises a cudart.CudaError subclass."""
    return max_potential_block_size_variable_smem(
        func, _constant(dynamic_smem_size), block_size_limit, flags, rt=rt
    )


def max_potential_block_size_variable_smem(
    func,
    block_size_to_dynamic_smem: Callable[[int], int],
    block_size_limit: int = 0,
    flags: int = 0,
    *,
    rt=None,
) -> tuple[int, int]:
    """As max_potential_block_size, with dynamic shared memory a function of block size."""
    rt = rt or _default_rt()
    status, grid, block = _run(rt, func, block_size_to_dynamic_smem, block_size_limit, flags)
    if status:
        from ._checked import call_error

        raise call_error(rt, "cudaOccupancyMaxPotentialBlockSize", status)
    return grid, block


def _default_rt():
    return raw_module()
