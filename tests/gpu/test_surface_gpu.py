"""The runtime surface beyond cuda_runtime_api.h on a GPU: the profiler calls of
cuda_profiler_api.h and the inline helpers of driver_functions.h, through the checked
top level (`cudart.<name>`)."""

from __future__ import annotations

import ctypes

import cudart


def test_profiler_start_and_stop_succeed_with_a_device():
    # With a device they return cudaSuccess whether or not a profiler is attached.
    cudart.cudaSetDevice(0)
    assert cudart.cudaProfilerStart() is None
    assert cudart.cudaProfilerStop() is None


def test_make_cudaExtent_and_make_cudaPos_drive_a_3d_allocation_and_copy():
    """make_cudaExtent sizes a cudaMalloc3D, make_cudaPitchedPtr wraps host memory, and
    make_cudaPos places a cudaMemcpy3D: the bytes come back where C would put them."""
    width, height, depth = 64, 4, 3
    extent = cudart.make_cudaExtent(width, height, depth)
    device = cudart.cudaMalloc3D(extent)
    try:
        assert device.pitch >= width and device.xsize == width and device.ysize == height
        cudart.cudaMemset3D(device, 0x5A, extent)
        host = (ctypes.c_ubyte * (width * height * depth))()
        params = cudart.cudaMemcpy3DParms()
        params.srcPtr = device
        params.srcPos = cudart.make_cudaPos(0, 0, 0)
        params.dstPtr = cudart.make_cudaPitchedPtr(ctypes.addressof(host), width, width, height)
        params.dstPos = cudart.make_cudaPos(0, 0, 0)
        params.extent = extent
        params.kind = cudart.cudaMemcpyDeviceToHost
        cudart.cudaMemcpy3D(ctypes.byref(params))
        assert bytes(host) == b"\x5a" * len(host)
    finally:
        cudart.cudaFree(device.ptr)
