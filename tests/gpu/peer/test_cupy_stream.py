"""Ports of CuPy's `tests/cupy_tests/cuda_tests/test_stream.py` at
0130cf4086bf7a8791b3d2bf50432e63663500fe, from CuPy's Stream objects to cudart's
checked calls on cudaStream_t handles (Stream() -> cudaStreamCreate, Stream.null ->
cudaStream_t(0), Stream.ptds -> cudaStream_t(cudaStreamPerThread),
add_callback -> cudaStreamAddCallback, launch_host_func -> cudaLaunchHostFunc,
`.ptr` -> int(handle), Stream.from_external(obj) -> passing obj where a stream goes).
The device arrays CuPy copies to the host before each callback are cudart buffers here,
copied with cudaMemcpyAsync on the same stream.

Not ported (CuPy's own "current stream" layer, which the runtime API does not have):
TestStream::test_del_default, test_del, test_with_statement, test_use, test_per_device,
test_per_device_failure, test_mix_use_context, test_stream_thread;
TestExternalStream::test_deprecation_warning (CuPy's ExternalStream class);
TestCUDAStreamProtocol::test_from_external_keeps_stream_alive (no cudart object keeps
a foreign stream).
"""

from __future__ import annotations

import pytest

import cudart

from ._support import clear_last_error, numpy

N = 100
SHAPE_BYTES = 2 * 3 * 4  # testing.shaped_random((2, 3)): float32


@pytest.fixture(params=["null", "ptds"])
def stream_name(request):
    return request.param


def named_stream(name):
    """Stream.null and Stream.ptds: the handles CuPy's singletons hold (0 and
    cudaStreamPerThread)."""
    return cudart.cudaStream_t(0 if name == "null" else cudart.cudaStreamPerThread)


@pytest.fixture
def new_stream():
    s = cudart.cudaStreamCreate()
    yield s
    cudart.cudaStreamDestroy(s)


def copies_then(stream, enqueue):
    """Upstream's loop: copy array i to the host on `stream`, then enqueue its callback
    with (i, the host copy); N times."""
    np = numpy()
    device = cudart.cudaMalloc(N * SHAPE_BYTES)
    cudart.cudaMemset(device, 0, N * SHAPE_BYTES)
    try:
        for i in range(N):
            numpy_array = np.empty((2, 3), dtype=np.float32)
            cudart.cudaMemcpyAsync(
                numpy_array,
                device + i * SHAPE_BYTES,
                SHAPE_BYTES,
                cudart.cudaMemcpyDeviceToHost,
                stream,
            )
            enqueue(i, numpy_array)
        cudart.cudaStreamSynchronize(stream)
    finally:
        cudart.cudaFree(device)


def test_eq(stream_name):
    """Upstream cupy/cupy: test_stream.py@0130cf4, TestStream::test_eq (both parametrizations)"""
    null0 = named_stream(stream_name)
    if stream_name == "null":
        null1 = named_stream("null")
        null2 = named_stream("null")
        null3 = named_stream("ptds")
    else:
        null1 = named_stream("ptds")
        null2 = named_stream("ptds")
        null3 = named_stream("null")
    null4 = cudart.cudaStreamCreate()
    try:
        assert null0 == null1
        assert null1 == null2
        assert null2 != null3
        assert null2 != null4
    finally:
        cudart.cudaStreamDestroy(null4)


def test_hash(stream_name):
    """Upstream cupy/cupy: test_stream.py@0130cf4, TestStream::test_hash

    Upstream hashes Stream(True), Stream(False) and keys a dict with two new streams;
    two distinct streams are two keys."""
    hash(named_stream(stream_name))
    hash(named_stream("null"))
    s1, s2, s3 = (cudart.cudaStreamCreate() for _ in range(3))
    try:
        hash(s1)
        mapping = {s2: 1, s3: 2}
        assert len(mapping) == 2 and mapping[cudart.cudaStream_t(int(s3))] == 2
    finally:
        for s in (s1, s2, s3):
            cudart.cudaStreamDestroy(s)


def test_get_and_add_callback(new_stream):
    """Upstream cupy/cupy: test_stream.py@0130cf4, TestStream::test_get_and_add_callback"""
    stream = new_stream
    out = []
    stream_list = []

    def _callback(s, _, t):
        out.append(t[0])
        stream_list.append(int(s or 0))

    copies_then(stream, lambda i, a: cudart.cudaStreamAddCallback(stream, _callback, (i, a), 0))
    assert out == list(range(N))
    assert all(s == int(stream) for s in stream_list)


def test_launch_host_func():
    """Upstream cupy/cupy: test_stream.py@0130cf4, TestStream::test_launch_host_func
    (Stream.null)"""
    stream = named_stream("null")
    out = []
    copies_then(
        stream, lambda i, a: cudart.cudaLaunchHostFunc(stream, lambda t: out.append(t[0]), (i, a))
    )
    assert out == list(range(N))


def test_create_with_flags():
    """Upstream cupy/cupy: test_stream.py@0130cf4, TestStream::test_create_with_flags"""
    s1 = cudart.cudaStreamCreate()
    s2 = cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking)
    try:
        assert bool(cudart.cudaStreamGetFlags(s1) & cudart.cudaStreamNonBlocking) is False
        assert bool(cudart.cudaStreamGetFlags(s2) & cudart.cudaStreamNonBlocking) is True
    finally:
        cudart.cudaStreamDestroy(s1)
        cudart.cudaStreamDestroy(s2)


def test_create_with_priority():
    """Upstream cupy/cupy: test_stream.py@0130cf4, TestStream::test_create_with_priority (CUDA)"""
    streams = [cudart.cudaStreamCreateWithPriority(0, p) for p in (0, -1, -3)]
    try:
        s1, s2, s3 = streams
        assert cudart.cudaStreamGetPriority(s1) == 0
        assert cudart.cudaStreamGetPriority(s2) == -1
        assert cudart.cudaStreamGetPriority(s3) == -3
    finally:
        for s in streams:
            cudart.cudaStreamDestroy(s)


@pytest.fixture
def external_stream():
    """TestExternalStream.setUp: a stream made by the runtime, used by its raw address."""
    s = cudart.cudaStreamCreate()
    yield int(s)
    cudart.cudaStreamDestroy(s)


def test_external_get_and_add_callback(external_stream):
    """Upstream cupy/cupy: test_stream.py@0130cf4, TestExternalStream::test_get_and_add_callback"""
    stream = external_stream
    out = []
    copies_then(
        stream,
        lambda i, a: cudart.cudaStreamAddCallback(
            stream, lambda _, __, t: out.append(t[0]), (i, a), 0
        ),
    )
    assert out == list(range(N))


def test_external_launch_host_func(external_stream):
    """Upstream cupy/cupy: test_stream.py@0130cf4, TestExternalStream::test_launch_host_func"""
    stream = external_stream
    out = []
    copies_then(
        stream, lambda i, a: cudart.cudaLaunchHostFunc(stream, lambda t: out.append(t[0]), (i, a))
    )
    assert out == list(range(N))


def test_cuda_stream_method(new_stream):
    """Upstream cupy/cupy: test_stream.py@0130cf4,
    TestCUDAStreamProtocol::test_cuda_stream_method"""
    stream = new_stream
    result = stream.__cuda_stream__()
    assert isinstance(result, tuple)
    assert len(result) == 2
    version, stream_ptr = result
    assert isinstance(version, int)
    assert isinstance(stream_ptr, int)
    assert version == 0
    assert stream_ptr == int(stream)


def test_cuda_stream_method_null_stream():
    """Upstream cupy/cupy: test_stream.py@0130cf4,
    TestCUDAStreamProtocol::test_cuda_stream_method_null_stream"""
    stream = named_stream("null")
    version, stream_ptr = stream.__cuda_stream__()
    assert version == 0
    assert stream_ptr == int(stream)


class MockStream:
    def __init__(self, ptr):
        self._ptr = ptr

    def __cuda_stream__(self):
        return (0, self._ptr)


def same_stream(a, b) -> bool:
    """Whether two stream arguments name one stream, by the runtime's own stream id."""
    return cudart.cudaStreamGetId(a) == cudart.cudaStreamGetId(b)


def test_from_external_with_mock_stream(new_stream):
    """Upstream cupy/cupy: test_stream.py@0130cf4,
    TestCUDAStreamProtocol::test_from_external_with_mock_stream

    CuPy wraps the object; cudart takes it wherever a stream goes. `.ptr` equality is
    the runtime's stream id here; the device is cudaStreamGetDevice's (12.8+)."""
    real_stream = new_stream
    mock_stream = MockStream(int(real_stream))
    assert same_stream(mock_stream, real_stream)
    if hasattr(cudart, "cudaStreamGetDevice"):
        assert cudart.cudaStreamGetDevice(mock_stream) >= 0


def test_from_external_with_cupy_stream(new_stream):
    """Upstream cupy/cupy: test_stream.py@0130cf4,
    TestCUDAStreamProtocol::test_from_external_with_cupy_stream

    The protocol round trip on cudart's own stream: its `__cuda_stream__` object passed
    as a foreign stream names the same stream."""
    original_stream = new_stream
    assert same_stream(MockStream(original_stream.__cuda_stream__()[1]), original_stream)


def test_from_external_without_protocol():
    """Upstream cupy/cupy: test_stream.py@0130cf4,
    TestCUDAStreamProtocol::test_from_external_without_protocol

    CuPy raises AttributeError; cudart's handle arguments raise TypeError."""
    with pytest.raises(TypeError, match="__cuda_stream__"):
        cudart.cudaStreamQuery(object())


class _Returns:
    def __init__(self, value):
        self.value = value

    def __cuda_stream__(self):
        return self.value


def test_from_external_invalid_return_type():
    """Upstream cupy/cupy: test_stream.py@0130cf4,
    TestCUDAStreamProtocol::test_from_external_invalid_return_type"""
    with pytest.raises(TypeError, match="2-tuple"):
        cudart.cudaStreamQuery(_Returns(123))


def test_from_external_invalid_tuple_length():
    """Upstream cupy/cupy: test_stream.py@0130cf4,
    TestCUDAStreamProtocol::test_from_external_invalid_tuple_length"""
    with pytest.raises(TypeError, match="2-tuple"):
        cudart.cudaStreamQuery(_Returns((0,)))


def test_from_external_invalid_element_types():
    """Upstream cupy/cupy: test_stream.py@0130cf4,
    TestCUDAStreamProtocol::test_from_external_invalid_element_types"""
    with pytest.raises(TypeError, match=r"\(int, int\)"):
        cudart.cudaStreamQuery(_Returns(("not_an_int", 0)))
    with pytest.raises(TypeError, match=r"\(int, int\)"):
        cudart.cudaStreamQuery(_Returns((0, "not_an_int")))


def test_from_external_invalid_version():
    """Upstream cupy/cupy: test_stream.py@0130cf4,
    TestCUDAStreamProtocol::test_from_external_invalid_version

    Version 1 is not a protocol version cudart knows: a ValueError, before any call."""
    with pytest.raises(ValueError, match="unsupported version"):
        cudart.cudaStreamQuery(_Returns((1, 12345)))
    clear_last_error()


def test_from_external_stream_usage(new_stream):
    """Upstream cupy/cupy: test_stream.py@0130cf4,
    TestCUDAStreamProtocol::test_from_external_stream_usage

    Upstream makes an array on the stream, synchronizes and reads `done`; here a
    memset on the foreign stream object, a synchronize and a query."""
    mock_stream = MockStream(int(new_stream))
    device = cudart.cudaMalloc(10 * 8)
    try:
        cudart.cudaMemsetAsync(device, 0, 10 * 8, mock_stream)
        cudart.cudaStreamSynchronize(mock_stream)
        assert cudart.cudaStreamQuery(mock_stream) is True  # synchronized: nothing pending
    finally:
        cudart.cudaFree(device)
