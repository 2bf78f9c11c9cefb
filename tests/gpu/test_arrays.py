"""cudart.arrays and device-address conversion with CuPy and PyTorch on a GPU: they read
memory cudart allocated and wrote (through __cuda_array_interface__ and __dlpack__),
and cudart reads theirs (memory parameters and kernel arguments, through both)."""

from __future__ import annotations

import ctypes
import gc
import weakref
from pathlib import Path

import pytest

import cudart
from cudart import arrays
from cudart.kernels import load_module

KERNELS = Path(__file__).resolve().parent.parent / "kernels"
N = 256


class DLPackOnly:
    """Another library's array seen through DLPack alone (no __cuda_array_interface__)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class Owner:
    pass


@pytest.fixture
def buffer():
    ptr = cudart.cudaMalloc(4 * N)
    cudart.cudaMemcpy(ptr, (ctypes.c_float * N)(*range(N)), 4 * N, cudart.cudaMemcpyHostToDevice)
    yield ptr
    cudart.cudaFree(ptr)


def read(source) -> list[float]:
    host = (ctypes.c_float * N)()
    cudart.cudaMemcpy(host, source, 4 * N, cudart.cudaMemcpyDeviceToHost)
    return list(host)


def cupy_module():
    return pytest.importorskip("cupy")


def torch_module():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("this PyTorch has no CUDA")
    return torch


def test_as_array_finds_its_device():
    ptr = cudart.cudaMalloc(16)
    try:
        assert cudart.as_array(ptr, 4, "f4").__dlpack_device__() == (2, cudart.cudaGetDevice())
    finally:
        cudart.cudaFree(ptr)
    host = cudart.cudaMallocHost(16)
    try:
        assert cudart.as_array(host, 4, "f4").__dlpack_device__()[0] == 3  # kDLCUDAHost
    finally:
        cudart.cudaFreeHost(host)


def test_cupy_reads_and_writes_cudart_memory(buffer):
    cupy = cupy_module()
    owner = Owner()
    watch = weakref.ref(owner)
    a = cudart.as_array(buffer, (N,), "float32", owner=owner)
    del owner
    by_cai = cupy.asarray(a)
    by_dlpack = cupy.from_dlpack(a)
    assert by_cai.data.ptr == by_dlpack.data.ptr == buffer
    assert by_cai.get().tolist() == by_dlpack.get().tolist() == [float(i) for i in range(N)]
    by_cai *= 2
    cupy.cuda.runtime.deviceSynchronize()
    assert read(a) == [2.0 * i for i in range(N)]
    del a, by_cai
    gc.collect()
    assert watch() is not None  # the DLPack import still holds it
    del by_dlpack
    gc.collect()
    assert watch() is None  # CuPy called the deleter


def test_cudart_reads_cupy_memory_through_both_protocols():
    cupy = cupy_module()
    x = cupy.arange(N, dtype=cupy.float32) * 3
    cupy.cuda.runtime.deviceSynchronize()
    expected = [3.0 * i for i in range(N)]
    assert read(x) == expected
    assert read(DLPackOnly(x)) == expected
    pitched = cudart.make_cudaPitchedPtr(DLPackOnly(x), 4 * N, N, 1)
    assert pitched.ptr == x.data.ptr


def test_kernel_arguments_from_cupy_and_as_array(buffer):
    cupy = cupy_module()
    y = cupy.ones(N, dtype=cupy.float32)
    x = cudart.as_array(buffer, (N,), "float32")
    with load_module(KERNELS / "kernels.fatbin") as module:
        axpy = module.get_function("axpy")
        axpy.launch(N // 64, 64, 2.0, x, DLPackOnly(y), N)  # y = 2x + y
        axpy.launch(N // 64, 64, 1.0, DLPackOnly(x), y, N)  # y += x
        cudart.cudaDeviceSynchronize()
    assert y.get().tolist() == [3.0 * i + 1 for i in range(N)]


def test_torch_reads_cudart_memory_and_cudart_reads_torch(buffer):
    torch = torch_module()
    a = cudart.as_array(buffer, (N // 4, 4), "float32")
    t = torch.from_dlpack(a)
    assert t.data_ptr() == buffer and tuple(t.shape) == (N // 4, 4)
    assert t.flatten().tolist() == [float(i) for i in range(N)]
    u = torch.as_tensor(a, device="cuda")  # __cuda_array_interface__
    assert u.data_ptr() == buffer
    v = torch.arange(N, dtype=torch.float32, device="cuda") * 5
    torch.cuda.synchronize()
    assert read(v) == read(DLPackOnly(v)) == [5.0 * i for i in range(N)]


def test_consumer_on_another_stream_waits_for_the_producers(buffer):
    stream = cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking)
    try:
        a = cudart.as_array(buffer, (N,), "float32", stream=stream)
        assert a.__cuda_array_interface__["stream"] == stream.value
        exported = len(arrays._exported)
        capsule = a.__dlpack__(stream=1)  # the legacy default stream waits for `stream`
        del capsule
        gc.collect()
        assert len(arrays._exported) == exported
        cudart.cudaDeviceSynchronize()
    finally:
        cudart.cudaStreamDestroy(stream)
