"""Issue 11, item 1 on a GPU: a size ctypes would mask is refused before C, and a legal
but impossible one still reaches C and gets C's own answer.

Before the range checks, cudart.cudaMalloc((1 << 64) + 16) allocated 16 bytes and
returned a pointer (ctypes masked the size to 64 bits).
"""

from __future__ import annotations

import pytest

import cudart


def last_error() -> int:
    """The runtime's last error, read and reset (the raw call: the checked one raises it)."""
    return cudart.sys.cudaGetLastError()


@pytest.mark.device_exclusive  # the device's free memory: no other run may allocate meanwhile
def test_a_size_beyond_size_t_is_refused_before_c():
    last_error()
    free_before, _ = cudart.cudaMemGetInfo()
    for size in ((1 << 64) + 16, 1 << 70, -1):
        with pytest.raises(OverflowError, match="cudaMalloc.*'size'.*size_t"):
            cudart.cudaMalloc(size)
    assert last_error() == 0  # C was never asked, so it recorded no error
    free_after, _ = cudart.cudaMemGetInfo()
    assert free_after == free_before


def test_a_legal_huge_size_reaches_c_and_fails_there():
    # The largest size_t is in range: C decides, and no device has that much memory.
    with pytest.raises(cudart.CudaErrorMemoryAllocation):
        cudart.cudaMalloc((1 << 64) - 1)
    assert last_error() == cudart.cudaErrorMemoryAllocation  # C answered, and recorded it
    with pytest.raises(cudart.CudaErrorMemoryAllocation):
        cudart.cudaMalloc(1 << 60)
    last_error()


def test_a_normal_allocation_still_works():
    p = cudart.cudaMalloc(16)
    try:
        assert p
        cudart.cudaMemset(p, 0, 16)
        with pytest.raises(OverflowError):
            cudart.cudaMemset(p, 0, (1 << 64) + 16)
        with pytest.raises(ValueError, match="not a cudaMemcpyKind"):
            cudart.cudaMemcpy(p, p, 16, 7)
    finally:
        cudart.cudaFree(p)


def test_wrong_kinds_never_reach_c():
    event = cudart.cudaEventCreate()
    try:
        with pytest.raises(TypeError, match="cudaStream_t.*cudaEvent_t"):
            cudart.cudaStreamSynchronize(event)
        with pytest.raises(TypeError, match="cudaEvent_t"):
            cudart.cudaGetExportTable(event)
        with pytest.raises(OverflowError):
            cudart.cudaGetExportTable(-1)
        with pytest.raises(OverflowError):
            cudart.cudaStreamSynchronize(-1)
    finally:
        cudart.cudaEventDestroy(event)
