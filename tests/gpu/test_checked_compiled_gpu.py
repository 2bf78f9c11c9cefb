"""The compiled checked functions (issue 23) on a GPU: each call of issue 23's bench
through the public name (the C function where the compiled backend is in force) and
through the Python checked function it stands for (the module's `_reference`), with the
same results: handles of the same class, values that round trip, the same exception
class and message for a failing call, and a destroy that marks its handle.
"""

from __future__ import annotations

import ctypes

import pytest

import cudart
from cudart import HandleDestroyedError, _serving
from cudart._handles import destroyed_by


def _both(name: str):
    """(public, reference): the reference is the public function where nothing is
    compiled (the ctypes backend), so each test also runs there."""
    checked = _serving.checked_module()
    public = getattr(checked, name)
    return public, vars(checked).get("_reference", {}).get(name, public)


def test_the_public_names_are_compiled_where_the_backend_is(rt):
    public, reference = _both("cudaStreamQuery")
    if cudart.backend() == "compiled":
        assert type(public).__name__ == "compiled_checked_function"
        assert type(reference).__name__ == "function" and public.__wrapped__ is reference
    else:
        assert public is reference


@pytest.mark.parametrize("which", [0, 1])
def test_streams_events_copies_and_allocations(rt, which):
    def fn(name):
        return _both(name)[which]

    stream = fn("cudaStreamCreate")()
    assert type(stream) is rt.cudaStream_t and int(stream)
    event = cudart.cudaEventCreate()
    try:
        assert fn("cudaGetDevice")() == cudart.cudaGetDevice()
        assert fn("cudaRuntimeGetVersion")() == cudart.cudaRuntimeGetVersion()
        assert fn("cudaDriverGetVersion")() == cudart.cudaDriverGetVersion()
        pointer = fn("cudaMallocAsync")(4, stream)
        assert isinstance(pointer, int) and pointer
        host = (ctypes.c_char * 4).from_buffer(bytearray(b"abcd"))
        fn("cudaMemcpyAsync")(pointer, ctypes.addressof(host), 4, 1, stream)
        fn("cudaEventRecord")(event, stream)
        fn("cudaEventRecord")(event)  # the default stream, by the omitted default
        back = bytearray(4)
        cudart.cudaStreamSynchronize(stream)
        cudart.cudaMemcpy(back, pointer, 4, cudart.cudaMemcpyDeviceToHost)
        assert back == b"abcd"
        fn("cudaFreeAsync")(pointer, stream)
        assert fn("cudaStreamQuery")(stream) in (True, False)
        cudart.cudaStreamSynchronize(stream)
        assert fn("cudaStreamQuery")(stream) is True
        assert fn("cudaStreamQuery")(int(stream)) is True  # an int handle, as is
    finally:
        cudart.cudaEventDestroy(event)
        fn("cudaStreamDestroy")(stream)
    assert destroyed_by(stream) == "cudaStreamDestroy"
    with pytest.raises(HandleDestroyedError):
        fn("cudaStreamQuery")(stream)


def test_a_failing_call_raises_alike(rt):
    public, reference = _both("cudaSetDevice")
    raised = []
    for fn in (public, reference, public):  # the second raise from C: the cached class
        with pytest.raises(cudart.CudaError) as info:
            fn(1 << 20)
        raised.append((type(info.value), str(info.value), info.value.args))
    assert raised[0] == raised[1] == raised[2]
    # The runtime keeps the failure as its last error: read and reset it.
    with pytest.raises(raised[0][0]):
        cudart.cudaGetLastError()
    assert cudart.sys.cudaGetLastError() == 0
