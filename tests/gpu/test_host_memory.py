"""cudart.HostMemory on a GPU: what the checked cudaHostAlloc, cudaMallocHost and
cudaMallocManaged return is the memory (memoryview, numpy.frombuffer) and its address
(every pointer parameter), through kernel-free round trips with the device, zero-copy
mapped memory, and the release that cudaFreeHost / cudaFree make."""

from __future__ import annotations

import ctypes
from pathlib import Path

import needs
import pytest

import cudart
from cudart import HostMemory
from cudart.kernels import load_module

from .support import axpy

KERNELS = Path(__file__).resolve().parent.parent / "kernels"

N = 4096  # bytes
H2D, D2H = cudart.cudaMemcpyHostToDevice, cudart.cudaMemcpyDeviceToHost


def test_host_alloc_is_a_buffer_and_an_address():
    memory = cudart.cudaHostAlloc(N, cudart.cudaHostAllocDefault)
    try:
        assert isinstance(memory, HostMemory) and len(memory) == N
        assert int(memory) != 0 and memory == int(memory)
        view = memoryview(memory)
        assert view.nbytes == N and not view.readonly
        memory.view("f")[3] = 1.5
        assert ctypes.c_float.from_address(int(memory) + 12).value == 1.5
        # The runtime knows it as its own page-locked memory.
        assert isinstance(cudart.cudaHostGetFlags(memory), int)
    finally:
        cudart.cudaFreeHost(memory)


def test_numpy_frombuffer_on_each_kind_of_host_memory():
    numpy = needs.numpy()
    allocations = [
        cudart.cudaHostAlloc(N, cudart.cudaHostAllocDefault),
        cudart.cudaMallocHost(N),
        cudart.cudaMallocManaged(N, cudart.cudaMemAttachGlobal),
    ]
    try:
        for i, memory in enumerate(allocations):
            array = numpy.frombuffer(memory, dtype=numpy.float32)
            assert array.size == N // 4 and array.flags.writeable
            array[:] = numpy.arange(N // 4, dtype=numpy.float32) * (i + 1)
            assert memory.view("f")[10] == 10.0 * (i + 1)
    finally:
        cudart.cudaFreeHost(allocations[0])
        cudart.cudaFreeHost(allocations[1])
        cudart.cudaFree(allocations[2])


def test_memcpy_round_trip_through_the_device():
    source = cudart.cudaHostAlloc(N, cudart.cudaHostAllocDefault)
    back = cudart.cudaMallocHost(N)
    device = cudart.cudaMalloc(N)
    try:
        assert type(device) is int  # device memory stays an address
        words = source.view("I")
        for i in range(len(words)):
            words[i] = i * 2654435761 % 2**32
        back.view()[:] = bytes(N)
        cudart.cudaMemcpy(device, source, N, H2D)
        cudart.cudaMemcpy(back, device, N, D2H)
        assert back.view().tobytes() == source.view().tobytes()
        assert memoryview(back).cast("B").tobytes() == memoryview(source).cast("B").tobytes()
    finally:
        cudart.cudaFree(device)
        cudart.cudaFreeHost(source)
        cudart.cudaFreeHost(back)


def test_managed_memory_written_by_the_device_is_read_through_the_buffer():
    memory = cudart.cudaMallocManaged(N, cudart.cudaMemAttachGlobal)
    try:
        assert isinstance(memory, HostMemory) and len(memory) == N
        cudart.cudaMemset(memory, 0x5A, N)
        cudart.cudaDeviceSynchronize()
        assert memory.view().tobytes() == b"\x5a" * N
    finally:
        cudart.cudaFree(memory)
    assert memory.released


def test_zero_copy_mapped_memory_is_its_own_device_pointer():
    memory = cudart.cudaHostAlloc(N, cudart.cudaHostAllocMapped)
    try:
        device = cudart.cudaHostGetDevicePointer(memory, 0)
        unified = cudart.cudaDeviceGetAttribute(cudart.cudaDevAttrUnifiedAddressing, 0)
        if unified:
            assert device is memory  # the same memory at the same address
        else:
            assert type(device) is int
        memory.view()[:] = bytes(N)
        cudart.cudaMemset(device, 7, N)  # the device writes host memory, zero-copy
        cudart.cudaDeviceSynchronize()
        assert memory.view().tobytes() == b"\x07" * N
    finally:
        cudart.cudaFreeHost(memory)
    assert memory.released


def test_kernel_reads_and_writes_mapped_and_managed_memory_by_address():
    n = N // 4
    x = cudart.cudaHostAlloc(N, cudart.cudaHostAllocMapped)
    y = cudart.cudaMallocManaged(N, cudart.cudaMemAttachGlobal)
    try:
        xs, ys = x.view("f"), y.view("f")
        for i in range(n):
            xs[i], ys[i] = float(i), 1.0
        device_x = cudart.cudaHostGetDevicePointer(x, 0)  # x itself under UVA
        with load_module(KERNELS / "kernels.cubin") as module:
            axpy(module).launch((n + 255) // 256, 256, 2.0, device_x, y, n)
        cudart.cudaDeviceSynchronize()
        assert [ys[i] for i in (0, 1, n - 1)] == [1.0, 3.0, 2.0 * (n - 1) + 1.0]
    finally:
        cudart.cudaFreeHost(x)
        cudart.cudaFree(y)


def test_registered_memory_of_unknown_size_maps_to_an_int():
    buffer = bytearray(N)
    cudart.cudaHostRegister(buffer, N, cudart.cudaHostRegisterMapped)
    try:
        assert type(cudart.cudaHostGetDevicePointer(buffer, 0)) is int
    finally:
        cudart.cudaHostUnregister(buffer)


def test_free_releases_and_a_second_free_is_refused():
    memory = cudart.cudaMallocHost(N)
    address = int(memory)
    view = memory.view()  # taken before the free: the caller's to drop, as in C
    view.release()
    cudart.cudaFreeHost(memory)
    assert memory.released and memory == address and "released" in repr(memory)
    with pytest.raises(ValueError, match="was freed"):
        cudart.cudaFreeHost(memory)
    with pytest.raises(ValueError, match="was freed"):
        int(memory)
    with pytest.raises(ValueError, match="was freed"):
        cudart.cudaMemcpy(memory, memory, 1, cudart.cudaMemcpyHostToHost)


def test_raw_layer_takes_it_as_an_address(rt):
    memory = cudart.cudaMallocHost(N)
    try:
        flags = ctypes.c_uint(99)
        assert rt.cudaHostGetFlags(ctypes.byref(flags), memory) == 0 and flags.value != 99
        assert rt.cudaMemcpy(memory, b"\x03" * 16, 16, rt.cudaMemcpyHostToHost) == 0
        assert memory.view()[:16].tobytes() == b"\x03" * 16
    finally:
        cudart.cudaFreeHost(memory)
