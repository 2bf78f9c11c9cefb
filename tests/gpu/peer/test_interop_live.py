"""Handles crossing between cudart and the other Python CUDA libraries on a GPU
(issue 10, "Interop on the GPU"): cudart's streams, events and graphs handed to
cuda-bindings (`cuda.bindings.runtime`) and CuPy, as ints and as the objects
themselves, and theirs handed to cudart. Each direction does real work with the
handle (a copy, a record, a node, a launch), not only a query. Skipped where the
package is absent.
"""

from __future__ import annotations

import ctypes

import pytest

import cudart

from ._support import cuda_bindings_runtime, cupy

N = 1 << 12


def ok(cb, result):
    """cuda-bindings' `(err, *values)`: assert success, return the values."""
    err, *values = result
    assert int(err) == int(cb.cudaError_t.cudaSuccess), err
    return values[0] if len(values) == 1 else tuple(values)


@pytest.fixture
def stream():
    s = cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking)
    yield s
    cudart.cudaStreamSynchronize(s)
    cudart.cudaStreamDestroy(s)


@pytest.fixture
def buffer():
    p = cudart.cudaMalloc(N)
    yield p
    cudart.cudaFree(p)


# ---- streams


def test_cudart_stream_to_cuda_bindings(stream, buffer):
    cb = cuda_bindings_runtime()
    cudart.cudaMemsetAsync(buffer, 0x21, N, stream)
    host = (ctypes.c_char * N)()
    # As an int, then as the handle object (its __int__ / __cuda_stream__).
    kind = cb.cudaMemcpyKind.cudaMemcpyDeviceToHost
    ok(cb, cb.cudaMemcpyAsync(ctypes.addressof(host), buffer, N, kind, int(stream)))
    ok(cb, cb.cudaStreamSynchronize(stream))
    assert host.raw == b"\x21" * N
    ok(cb, cb.cudaStreamQuery(int(stream)))
    ok(cb, cb.cudaStreamQuery(stream))
    assert ok(cb, cb.cudaStreamGetId(stream)) == cudart.cudaStreamGetId(stream)
    flags = ok(cb, cb.cudaStreamGetFlags(stream))
    assert int(flags) & cudart.cudaStreamNonBlocking


def test_cuda_bindings_stream_to_cudart(buffer):
    cb = cuda_bindings_runtime()
    theirs = ok(cb, cb.cudaStreamCreateWithFlags(cb.cudaStreamNonBlocking))
    try:
        host = bytearray(N)
        cudart.cudaMemsetAsync(buffer, 0x42, N, theirs)
        cudart.cudaMemcpyAsync(host, buffer, N, cudart.cudaMemcpyDeviceToHost, int(theirs))
        cudart.cudaStreamSynchronize(theirs)
        assert host == b"\x42" * N
        assert cudart.cudaStreamQuery(theirs) is True
        assert cudart.cudaStreamGetId(theirs) == ok(cb, cb.cudaStreamGetId(theirs))
        assert cudart.cudaStreamGetFlags(theirs) & cudart.cudaStreamNonBlocking
    finally:
        ok(cb, cb.cudaStreamDestroy(theirs))


def test_cudart_stream_to_cupy(stream):
    cp = cupy()
    external = [cp.cuda.ExternalStream(int(stream))]
    if hasattr(cp.cuda.Stream, "from_external"):  # the CUDA stream protocol
        external.append(cp.cuda.Stream.from_external(stream))
    for view in external:
        assert view.ptr == int(stream)
        with view:
            a = cp.arange(N, dtype=cp.int32)
            b = a * 2
        cudart.cudaStreamSynchronize(stream)
        assert int(b.sum()) == 2 * (N * (N - 1) // 2)


def test_cupy_stream_to_cudart(buffer):
    cp = cupy()
    theirs = cp.cuda.Stream(non_blocking=True)
    # The stream protocol where CuPy has it, the raw pointer always.
    handles = [theirs.ptr] + ([theirs] if hasattr(theirs, "__cuda_stream__") else [])
    for handle in handles:
        host = bytearray(N)
        cudart.cudaMemsetAsync(buffer, 0x17, N, handle)
        cudart.cudaMemcpyAsync(host, buffer, N, cudart.cudaMemcpyDeviceToHost, handle)
        cudart.cudaStreamSynchronize(handle)
        assert host == b"\x17" * N
        assert cudart.cudaStreamGetFlags(handle) & cudart.cudaStreamNonBlocking
    with theirs:
        a = cp.arange(N, dtype=cp.int32)
    host = bytearray(a.nbytes)
    cudart.cudaMemcpyAsync(host, a, a.nbytes, cudart.cudaMemcpyDeviceToHost, theirs.ptr)
    cudart.cudaStreamSynchronize(theirs.ptr)
    assert bytes(host) == a.get().tobytes()


# ---- events


def test_cudart_event_to_cuda_bindings(stream):
    cb = cuda_bindings_runtime()
    start, end = cudart.cudaEventCreate(), cudart.cudaEventCreate()
    try:
        ok(cb, cb.cudaEventRecord(start, stream))
        ok(cb, cb.cudaEventRecord(int(end), int(stream)))
        ok(cb, cb.cudaEventSynchronize(end))
        ok(cb, cb.cudaEventQuery(int(end)))
        ms = ok(cb, cb.cudaEventElapsedTime(start, end))
        assert ms >= 0.0
        assert cudart.cudaEventQuery(end) is True
    finally:
        cudart.cudaEventDestroy(start)
        cudart.cudaEventDestroy(end)


def test_cuda_bindings_event_to_cudart(stream):
    cb = cuda_bindings_runtime()
    theirs = ok(cb, cb.cudaEventCreate())
    ours = cudart.cudaEventCreate()
    try:
        cudart.cudaEventRecord(theirs, stream)
        cudart.cudaEventRecord(ours, stream)
        cudart.cudaEventSynchronize(theirs)
        assert cudart.cudaEventQuery(int(theirs)) is True
        assert cudart.cudaEventElapsedTime(theirs, ours) >= 0.0
        cudart.cudaStreamWaitEvent(stream, theirs, 0)
    finally:
        cudart.cudaEventDestroy(ours)
        ok(cb, cb.cudaEventDestroy(theirs))


def test_events_with_cupy(stream):
    cp = cupy()
    theirs = cp.cuda.Event()
    theirs.record(cp.cuda.ExternalStream(int(stream)))
    cudart.cudaEventSynchronize(theirs.ptr)
    assert cudart.cudaEventQuery(theirs.ptr) is True
    ours = cudart.cudaEventCreate()
    try:
        cudart.cudaEventRecord(ours, stream)
        cp.cuda.runtime.eventSynchronize(int(ours))
        assert cp.cuda.runtime.eventQuery(int(ours)) == 0
        ms = cudart.cudaEventElapsedTime(theirs.ptr, ours)
        assert ms >= 0.0
    finally:
        cudart.cudaEventDestroy(ours)


# ---- graphs


def test_cudart_graph_to_cuda_bindings(stream, buffer):
    cb = cuda_bindings_runtime()
    graph = cudart.cudaGraphCreate(0)
    try:
        params = cudart.cudaMemsetParams()
        params.dst = buffer
        params.pitch = N
        params.value = 0x33
        params.elementSize = 1
        params.width = N
        params.height = 1
        node = cudart.cudaGraphAddMemsetNode(graph, None, 0, params)
        # Their calls on our graph and node, as ints and as the objects.
        _, count = ok(cb, cb.cudaGraphGetNodes(int(graph)))
        nodes, count = ok(cb, cb.cudaGraphGetNodes(graph, count))
        assert count == 1 and int(nodes[0]) == int(node)
        node_type = ok(cb, cb.cudaGraphNodeGetType(node))
        assert int(node_type) == int(cudart.cudaGraphNodeTypeMemset)
        graph_exec = ok(cb, cb.cudaGraphInstantiate(graph, 0))
        # Their executable graph, launched by us on our stream.
        cudart.cudaGraphLaunch(graph_exec, stream)
        cudart.cudaStreamSynchronize(stream)
        host = bytearray(N)
        cudart.cudaMemcpy(host, buffer, N, cudart.cudaMemcpyDeviceToHost)
        assert host == b"\x33" * N
        ok(cb, cb.cudaGraphExecDestroy(graph_exec))
    finally:
        cudart.cudaGraphDestroy(graph)


def test_cuda_bindings_graph_to_cudart(stream):
    cb = cuda_bindings_runtime()
    theirs = ok(cb, cb.cudaGraphCreate(0))
    try:
        their_node = ok(cb, cb.cudaGraphAddEmptyNode(theirs, None, 0))
        our_node = cudart.cudaGraphAddEmptyNode(theirs, [their_node], 1)
        nodes = cudart.cudaGraphGetNodes(int(theirs))
        assert {int(n) for n in nodes} == {int(their_node), int(our_node)}
        assert cudart.cudaGraphNodeGetType(their_node) == cudart.cudaGraphNodeTypeEmpty
        graph_exec = cudart.cudaGraphInstantiate(theirs, 0)
        ok(cb, cb.cudaGraphLaunch(graph_exec, stream))
        cudart.cudaStreamSynchronize(stream)
        cudart.cudaGraphExecDestroy(graph_exec)
    finally:
        ok(cb, cb.cudaGraphDestroy(theirs))


def test_graphs_with_cupy(stream):
    """A graph CuPy captured (its runtime module's raw calls) read and launched by
    cudart, and cudart's executable graph launched by CuPy."""
    cp = cupy()
    rt = cp.cuda.runtime
    needed = ("streamBeginCapture", "streamEndCapture", "graphLaunch", "graphDestroy")
    if not all(hasattr(rt, n) for n in needed):
        pytest.skip("this CuPy's runtime module lacks the raw graph calls")
    cs = cp.cuda.Stream(non_blocking=True)
    a = cp.arange(N, dtype=cp.float32)
    with cs:
        rt.streamBeginCapture(cs.ptr, rt.streamCaptureModeRelaxed)
        b = a + 1
        their_graph = rt.streamEndCapture(cs.ptr)
    try:
        nodes = cudart.cudaGraphGetNodes(their_graph)
        assert len(nodes) >= 1
        graph_exec = cudart.cudaGraphInstantiate(their_graph, 0)
        cudart.cudaGraphLaunch(graph_exec, stream)
        cudart.cudaStreamSynchronize(stream)
        cp.testing.assert_array_equal(b, a + 1)
        # Ours launched by CuPy's runtime module on its stream.
        rt.graphLaunch(int(graph_exec), cs.ptr)
        cs.synchronize()
        cudart.cudaGraphExecDestroy(graph_exec)
    finally:
        rt.graphDestroy(their_graph)
