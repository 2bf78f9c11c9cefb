"""The checked layer on a GPU: memory round trips, streams, events, a captured graph,
errors from a real device, and streams and arrays from other libraries.

Everything goes through the top-level names (`cudart.cudaMalloc`), which dispatch to
the checked module of the loaded runtime, as users call them.
"""

from __future__ import annotations

import ctypes
import importlib
import threading

import needs
import pytest

import cudart

N = 1 << 16


@pytest.fixture
def device_buffer():
    ptr = cudart.cudaMalloc(N)
    yield ptr
    cudart.cudaFree(ptr)


@pytest.fixture
def stream():
    s = cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking)
    yield s
    cudart.cudaStreamDestroy(s)


def test_device_queries(rt):
    count = cudart.cudaGetDeviceCount()
    assert count >= 1
    assert 0 <= cudart.cudaGetDevice() < count
    prop = cudart.cudaGetDeviceProperties(0)
    assert isinstance(prop, rt.cudaDeviceProp) and prop.name and prop.major >= 3
    raw = rt.cudaDeviceProp()
    assert rt.cudaGetDeviceProperties(ctypes.byref(raw), 0) == 0
    assert bytes(prop) == bytes(raw)
    sms = cudart.cudaDeviceGetAttribute(cudart.cudaDevAttrMultiProcessorCount, 0)
    assert sms == prop.multiProcessorCount > 0
    free, total = cudart.cudaMemGetInfo()
    assert 0 < free <= total
    assert cudart.cudaDriverGetVersion() >= cudart.cudaRuntimeGetVersion() // 1000 * 1000


def test_bytes_round_trip(device_buffer):
    data = bytes(range(256)) * (N // 256)
    assert isinstance(device_buffer, int) and device_buffer
    cudart.cudaMemcpy(device_buffer, data, N, cudart.cudaMemcpyHostToDevice)
    back = bytearray(N)
    cudart.cudaMemcpy(back, device_buffer, N, cudart.cudaMemcpyDeviceToHost)
    assert back == data
    cudart.cudaMemset(device_buffer, 0x5A, N)
    view = memoryview(bytearray(N))
    cudart.cudaMemcpy(view, device_buffer, N, cudart.cudaMemcpyDefault)
    assert view.tobytes() == b"\x5a" * N
    with pytest.raises(TypeError, match="'dst'.*read-only"):
        cudart.cudaMemcpy(bytes(N), device_buffer, N, cudart.cudaMemcpyDeviceToHost)


def test_numpy_round_trip(device_buffer):
    np = needs.numpy()
    a = np.arange(N // 4, dtype=np.float32)
    cudart.cudaMemcpy(device_buffer, a, a.nbytes, cudart.cudaMemcpyHostToDevice)
    b = np.empty_like(a)
    cudart.cudaMemcpy(b, device_buffer, b.nbytes, cudart.cudaMemcpyDeviceToHost)
    assert (a == b).all()
    with pytest.raises(TypeError, match="C-contiguous"):
        cudart.cudaMemcpy(b[::2], device_buffer, 4, cudart.cudaMemcpyDeviceToHost)


def test_stream_and_events(device_buffer, stream):
    assert isinstance(stream, cudart.cudaStream_t)
    start, end = cudart.cudaEventCreate(), cudart.cudaEventCreate()
    try:
        host = bytearray(N)
        cudart.cudaEventRecord(start, stream)
        cudart.cudaMemsetAsync(device_buffer, 7, N, stream)
        cudart.cudaMemcpyAsync(host, device_buffer, N, cudart.cudaMemcpyDeviceToHost, stream)
        cudart.cudaEventRecord(end, stream)
        cudart.cudaEventSynchronize(end)
        assert cudart.cudaEventQuery(end) is True
        assert cudart.cudaStreamQuery(stream) is True
        assert host == b"\x07" * N
        ms = cudart.cudaEventElapsedTime(start, end)
        assert isinstance(ms, float) and ms >= 0.0
        assert cudart.cudaStreamGetFlags(stream) & cudart.cudaStreamNonBlocking
        # The legacy default stream as None, as the header's default (0) means.
        cudart.cudaEventRecord(start)
        cudart.cudaStreamWaitEvent(stream, start)
        cudart.cudaStreamSynchronize(stream)
    finally:
        cudart.cudaEventDestroy(start)
        cudart.cudaEventDestroy(end)


def test_query_is_false_while_work_is_pending(stream):
    """A host function that waits on the test holds the stream busy: not ready is False,
    not an exception."""
    release = threading.Event()
    started = threading.Event()

    @cudart.sys.cudaHostFn_t
    def hold(_user_data):
        started.set()
        release.wait(10)

    try:
        cudart.cudaLaunchHostFunc(stream, hold, None)
        assert started.wait(10)
        assert cudart.cudaStreamQuery(stream) is False
    finally:
        release.set()
    cudart.cudaStreamSynchronize(stream)
    assert cudart.cudaStreamQuery(stream) is True


def test_errors_from_the_device(rt):
    with pytest.raises(cudart.CudaErrorMemoryAllocation) as info:
        cudart.cudaMalloc(1 << 62)
    exc = info.value
    assert exc.code == rt.cudaErrorMemoryAllocation and exc.code is rt.cudaError(2)
    assert exc.name == "cudaErrorMemoryAllocation"
    assert exc.message == rt.cudaGetErrorString(2).decode()
    rt.cudaGetLastError()  # the runtime records the failure; clear it
    with pytest.raises(cudart.CudaErrorInvalidDevice):
        cudart.cudaSetDevice(cudart.cudaGetDeviceCount() + 5)
    rt.cudaGetLastError()


def test_captured_graph(device_buffer, stream):
    cudart.cudaStreamBeginCapture(stream, cudart.cudaStreamCaptureModeThreadLocal)
    cudart.cudaMemsetAsync(device_buffer, 3, N, stream)
    info = cudart.cudaStreamGetCaptureInfo(stream)
    assert info[0] == cudart.cudaStreamCaptureStatusActive
    assert isinstance(info[2], cudart.cudaGraph_t)
    assert len(info[3]) == 1  # the memset node, the runtime's own array copied out
    graph = cudart.cudaStreamEndCapture(stream)
    try:
        nodes = cudart.cudaGraphGetNodes(graph)
        assert len(nodes) == 1 and isinstance(nodes[0], cudart.cudaGraphNode_t)
        assert cudart.cudaGraphNodeGetType(nodes[0]) == cudart.cudaGraphNodeTypeMemset
        roots = cudart.cudaGraphGetRootNodes(graph)
        assert [n.value for n in roots] == [n.value for n in nodes]
        graph_exec = cudart.cudaGraphInstantiate(graph, 0)
        try:
            cudart.cudaGraphLaunch(graph_exec, stream)
            cudart.cudaStreamSynchronize(stream)
        finally:
            cudart.cudaGraphExecDestroy(graph_exec)
    finally:
        cudart.cudaGraphDestroy(graph)
    host = bytearray(N)
    cudart.cudaMemcpy(host, device_buffer, N, cudart.cudaMemcpyDeviceToHost)
    assert host == b"\x03" * N


def _cuda_bindings_runtime():
    # By name: cuda-bindings is optional, and has no stubs for mypy to find.
    try:
        return importlib.import_module("cuda.bindings.runtime")
    except ImportError:
        try:
            return importlib.import_module("cuda.cudart")  # cuda-python before 12.6
        except ImportError:
            pytest.skip("cuda-bindings is not installed")


def test_stream_from_cuda_bindings(device_buffer):
    cb = _cuda_bindings_runtime()
    err, foreign = cb.cudaStreamCreateWithFlags(cb.cudaStreamNonBlocking)
    assert int(err) == 0
    try:
        host = bytearray(N)
        cudart.cudaMemsetAsync(device_buffer, 9, N, foreign)  # converted through __int__
        cudart.cudaMemcpyAsync(host, device_buffer, N, cudart.cudaMemcpyDeviceToHost, foreign)
        cudart.cudaStreamSynchronize(foreign)
        assert cudart.cudaStreamQuery(foreign) is True
        assert host == b"\x09" * N
    finally:
        cb.cudaStreamDestroy(foreign)


def test_stream_and_array_from_cupy():
    cupy = pytest.importorskip("cupy")
    foreign = cupy.cuda.Stream(non_blocking=True)
    # The CUDA stream protocol where CuPy has it, its raw handle otherwise.
    handle = foreign if hasattr(foreign, "__cuda_stream__") else foreign.ptr
    with foreign:
        device = cupy.arange(N // 4, dtype=cupy.int32)
    host = bytearray(device.nbytes)
    # A CuPy array is a device pointer through __cuda_array_interface__.
    cudart.cudaMemcpyAsync(host, device, device.nbytes, cudart.cudaMemcpyDeviceToHost, handle)
    cudart.cudaStreamSynchronize(handle)
    assert bytes(host) == device.get().tobytes()


def test_mem_pool_exports_a_file_descriptor():
    """cudaMemPoolExportToShareableHandle returns the handle its type names: an int fd."""
    import os

    props = cudart.cudaMemPoolProps()
    props.allocType = cudart.cudaMemAllocationTypePinned
    props.handleTypes = cudart.cudaMemHandleTypePosixFileDescriptor
    props.location.type = cudart.cudaMemLocationTypeDevice
    props.location.id = cudart.cudaGetDevice()
    pool = cudart.cudaMemPoolCreate(props)
    try:
        fd = cudart.cudaMemPoolExportToShareableHandle(
            pool, cudart.cudaMemHandleTypePosixFileDescriptor, 0
        )
        assert type(fd) is int and fd >= 0
        os.fstat(fd)  # an open descriptor of this process, the caller's to close
        os.close(fd)
        with pytest.raises(ValueError, match="handleType"):
            cudart.cudaMemPoolExportToShareableHandle(pool, cudart.cudaMemHandleTypeNone, 0)
    finally:
        cudart.cudaMemPoolDestroy(pool)
