"""Ports of cuda-python's runtime/driver interoperability tests.

Upstream: NVIDIA/cuda-python `cuda_bindings/tests/test_interoperability.py` at
3ab96436137577d95d7517fa935bd457d57032d9 (9 tests). The driver side stays
cuda-bindings' (`cuda.bindings.driver`), which cudart does not bind; the runtime side
is cudart's checked API. Each handle crosses both ways: a driver handle (a
cuda-bindings object with `__int__`) into cudart, and a cudart handle into the driver
API. Skipped where cuda-bindings is not installed.
"""

from __future__ import annotations

import pytest

import cudart

from ._support import cuda_bindings_driver, device_attribute, numpy


def ok(result):
    """cuda-bindings' `(err, *values)`: assert CUDA_SUCCESS, return the values."""
    cuda = cuda_bindings_driver()
    err, *values = result
    assert err == cuda.CUresult.CUDA_SUCCESS, err
    return values[0] if len(values) == 1 else tuple(values)


def ctx_create(cuda, device):
    """cuCtxCreate(None, 0, device) as upstream calls it (cuda-bindings 12.9+/13); older
    bindings take (flags, device)."""
    try:
        return cuda.cuCtxCreate(None, 0, device)
    except TypeError:
        return cuda.cuCtxCreate(0, device)


def driver_context():
    cuda = cuda_bindings_driver()
    ok(cuda.cuInit(0))
    device = ok(cuda.cuDeviceGet(0))
    ctx = ok(ctx_create(cuda, device))
    return cuda, ctx


def test_interop_stream():
    """Upstream NVIDIA/cuda-python: test_interoperability.py@3ab9643, test_interop_stream"""
    cuda, ctx = driver_context()
    # DRV to RT
    stream = ok(cuda.cuStreamCreate(0))
    cudart.cudaStreamDestroy(stream)
    # RT to DRV
    stream = cudart.cudaStreamCreate()
    ok(cuda.cuStreamDestroy(stream))
    ok(cuda.cuCtxDestroy(ctx))


def test_interop_event():
    """Upstream NVIDIA/cuda-python: test_interoperability.py@3ab9643, test_interop_event"""
    cuda, ctx = driver_context()
    event = ok(cuda.cuEventCreate(0))
    cudart.cudaEventDestroy(event)
    event = cudart.cudaEventCreate()
    ok(cuda.cuEventDestroy(event))
    ok(cuda.cuCtxDestroy(ctx))


def test_interop_graph():
    """Upstream NVIDIA/cuda-python: test_interoperability.py@3ab9643, test_interop_graph"""
    cuda, ctx = driver_context()
    graph = ok(cuda.cuGraphCreate(0))
    cudart.cudaGraphDestroy(graph)
    graph = cudart.cudaGraphCreate(0)
    ok(cuda.cuGraphDestroy(graph))
    ok(cuda.cuCtxDestroy(ctx))


def test_interop_graphNode():
    """Upstream NVIDIA/cuda-python: test_interoperability.py@3ab9643, test_interop_graphNode"""
    cuda, ctx = driver_context()
    graph = ok(cuda.cuGraphCreate(0))
    node = ok(cuda.cuGraphAddEmptyNode(graph, [], 0))
    cudart.cudaGraphDestroyNode(node)
    node = cudart.cudaGraphAddEmptyNode(graph, [], 0)
    ok(cuda.cuGraphDestroyNode(node))
    cudart.cudaGraphDestroy(graph)
    ok(cuda.cuCtxDestroy(ctx))


def test_interop_userObject():
    """Upstream NVIDIA/cuda-python: test_interoperability.py@3ab9643, test_interop_userObject

    Upstream's body is a TODO between creating and destroying a context; so is this."""
    cuda, ctx = driver_context()
    ok(cuda.cuCtxDestroy(ctx))


def test_interop_function():
    """Upstream NVIDIA/cuda-python: test_interoperability.py@3ab9643, test_interop_function

    Upstream's body is a TODO between creating and destroying a context; so is this."""
    cuda, ctx = driver_context()
    ok(cuda.cuCtxDestroy(ctx))


def test_interop_memPool():
    """Upstream NVIDIA/cuda-python: test_interoperability.py@3ab9643, test_interop_memPool"""
    if not device_attribute(cudart.cudaDevAttrMemoryPoolsSupported):
        pytest.skip("Requires mempool operations")
    cuda, ctx = driver_context()
    pool = ok(cuda.cuDeviceGetDefaultMemPool(0))
    cudart.cudaDeviceSetMemPool(0, pool)
    pool = cudart.cudaDeviceGetDefaultMemPool(0)
    ok(cuda.cuDeviceSetMemPool(0, pool))
    ok(cuda.cuCtxDestroy(ctx))


def test_interop_graphExec():
    """Upstream NVIDIA/cuda-python: test_interoperability.py@3ab9643, test_interop_graphExec"""
    cuda, ctx = driver_context()
    graph = ok(cuda.cuGraphCreate(0))
    ok(cuda.cuGraphAddEmptyNode(graph, [], 0))
    graphExec = ok(cuda.cuGraphInstantiate(graph, 0))
    cudart.cudaGraphExecDestroy(graphExec)
    graphExec = cudart.cudaGraphInstantiate(graph, 0)
    ok(cuda.cuGraphExecDestroy(graphExec))
    cudart.cudaGraphDestroy(graph)
    ok(cuda.cuCtxDestroy(ctx))


def test_interop_deviceptr():
    """Upstream NVIDIA/cuda-python: test_interoperability.py@3ab9643, test_interop_deviceptr"""
    np = numpy()
    cuda, ctx = driver_context()
    size = 1024 * np.uint8().itemsize
    dptr = ok(cuda.cuMemAlloc(size))
    h1 = np.full(size, 1).astype(np.uint8)
    h2 = np.full(size, 2).astype(np.uint8)
    assert np.array_equal(h1, h2) is False
    cudart.cudaMemset(dptr, 1, size)
    cudart.cudaMemcpy(h2, dptr, size, cudart.cudaMemcpyDeviceToHost)
    assert np.array_equal(h1, h2)
    ok(cuda.cuMemFree(dptr))
    ok(cuda.cuCtxDestroy(ctx))
