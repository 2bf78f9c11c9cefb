"""Handles are values, and a const handle takes the handle C converts to it (issue #10).

Each version's checks run in one fresh interpreter against that version's real library
(no GPU: calls that reach C come back with an error code, which is all these need).
"""

from __future__ import annotations

import pytest
from suite import probe_each_version

# The calls go through the backend in force: make test-ctypes runs them on ctypes too.
pytestmark = pytest.mark.backend

PROBE = r"""
import ctypes, json
import cudart
from cudart import _checked, _convert
from cudart._handles import Handle, StreamHandle

rt = cudart.sys
out = {"version": rt.CUDA_VERSION, "problems": []}
problems = out["problems"]

def check(ok, what):
    if not ok:
        problems.append(what)

def raises(fn, *args):
    try:
        fn(*args)
    except Exception as exc:
        return exc
    return None

# ---- every handle class of the raw module is a Handle, and a value
handles = {
    name: obj for name, obj in vars(rt).items()
    if isinstance(obj, type) and issubclass(obj, ctypes.c_void_p) and obj.__module__ == rt.__name__
}
out["handles"] = sorted(handles)
for name, cls in handles.items():
    check(issubclass(cls, Handle), f"{name} is no Handle")
    check(ctypes.sizeof(cls) == 8 and ctypes.alignment(cls) == 8, f"{name}: size/alignment")
    h = cls(0x7B)
    check(int(h) == 0x7B and int(cls()) == 0 and int(cls(None)) == 0, f"{name}: int")
    check(bool(h) and not bool(cls()), f"{name}: bool")
    check(h == cls(0x7B) and not (h != cls(0x7B)) and h != cls(0x7C), f"{name}: ==")
    check(cls() == cls(None) == cls(0), f"{name}: NULL ==")
    check(h != 0x7B and h != ctypes.c_void_p(0x7B), f"{name}: equal to a non-handle")
    check(hash(h) == hash(cls(0x7B)) and {h: 1}.get(cls(0x7B)) == 1, f"{name}: hash")
    check(repr(h) == f"<{name} 0x7b>" and repr(cls()) == f"<{name} 0x0>", f"{name}: {h!r}")
    for other_name, other in handles.items():
        if other_name != name:
            check(h != other(0x7B) and other(0x7B) not in {h: 1}, f"{name} == {other_name}")
    check(hasattr(h, "__cuda_stream__") == (name == "cudaStream_t"), f"{name}: __cuda_stream__")

# ---- streams speak the CUDA stream protocol, and take it back
s = rt.cudaStream_t(0x1234)
check(isinstance(s, StreamHandle) and s.__cuda_stream__() == (0, 0x1234), "__cuda_stream__")
check(rt.cudaStream_t().__cuda_stream__() == (0, 0), "NULL __cuda_stream__")
check(_convert.stream_handle(s) == 0x1234, "stream_handle")
class Foreign:
    def __init__(self, stream):
        self.stream = stream
    def __cuda_stream__(self):
        return self.stream.__cuda_stream__()
check(_convert.stream_handle(Foreign(s)) == 0x1234, "a foreign stream wrapping ours")
# Any version's cudaStream_t is the same kind (the struct it points at, as in conversion).
check(_convert.cudaStream_t(5) == rt.cudaStream_t(5), "cross-module ==")
check(hash(_convert.cudaStream_t(5)) == hash(rt.cudaStream_t(5)), "cross-module hash")

# ---- raw calls still take handles directly as c_void_p arguments
status = rt.cudaStreamQuery(s)
check(type(status) is int and status != 0, f"raw cudaStreamQuery(stream) -> {status!r}")
check(type(rt.cudaEventQuery(rt.cudaEvent_t(0x10))) is int, "raw cudaEventQuery(event)")

# ---- handles read out of structs and arrays
p = rt.cudaMemcpy3DParms()
check(type(p.srcArray) is rt.cudaArray_t and int(p.srcArray) == 0, "NULL handle field")
p.srcArray = rt.cudaArray_t(0x55)
field = p.srcArray
check(type(field) is rt.cudaArray_t and int(field) == 0x55, "handle field")
check(field == rt.cudaArray_t(0x55) and repr(field) == "<cudaArray_t 0x55>", "handle field value")
nodes = (rt.cudaGraphNode_t * 3)(rt.cudaGraphNode_t(1), rt.cudaGraphNode_t(2))
check([int(n) for n in nodes] == [1, 2, 0], "array items")
check(all(type(n) is rt.cudaGraphNode_t for n in nodes[:3]), "array slice items")
# What the checked layer hands back from the runtime's own memory is a copy.
copied = _checked.borrowed(ctypes.addressof(nodes), rt.cudaGraphNode_t, 2)
nodes[0] = rt.cudaGraphNode_t(9)
check(copied == [rt.cudaGraphNode_t(1), rt.cudaGraphNode_t(2)], f"borrowed: {copied}")
check(all(type(n) is rt.cudaGraphNode_t for n in copied), "borrowed kinds")

# ---- const handles: decided from the model, a const pointer to the same record
out["accepts"] = {
    name: list(cls._accepts_) for name, cls in sorted(handles.items()) if cls._accepts_
}

def reaches_c(fn, *args):
    exc = raises(fn, *args)
    return type(exc).__name__ if isinstance(exc, cudart.CudaError) else repr(exc)

def refused(fn, *args):
    exc = raises(fn, *args)
    return type(exc).__name__ if isinstance(exc, TypeError) else repr(exc)

out["calls"] = {
    # The issue's example: a cudaArray_t where cudaArray_const_t is declared.
    "cudaGetChannelDesc(cudaArray_t)": reaches_c(cudart.cudaGetChannelDesc, cudart.cudaArray_t(1)),
    "cudaGetChannelDesc(cudaArray_const_t)": reaches_c(
        cudart.cudaGetChannelDesc, cudart.cudaArray_const_t(1)
    ),
    "cudaGetChannelDesc(int)": reaches_c(cudart.cudaGetChannelDesc, 1),
    "cudaGetMipmappedArrayLevel(cudaMipmappedArray_t)": reaches_c(
        cudart.cudaGetMipmappedArrayLevel, cudart.cudaMipmappedArray_t(1), 0
    ),
    # Another kind is still refused, and C does not convert const T to T either.
    "cudaGetChannelDesc(cudaStream_t)": refused(cudart.cudaGetChannelDesc, cudart.cudaStream_t(1)),
    "cudaGetChannelDesc(cudaMipmappedArray_t)": refused(
        cudart.cudaGetChannelDesc, cudart.cudaMipmappedArray_t(1)
    ),
    "cudaArrayGetInfo(cudaArray_const_t)": refused(
        cudart.cudaArrayGetInfo, cudart.cudaArray_const_t(1)
    ),
    "cudaStreamQuery(cudaEvent_t)": refused(cudart.cudaStreamQuery, cudart.cudaEvent_t(1)),
    "cudaStreamQuery(cudaStream_t)": reaches_c(cudart.cudaStreamQuery, cudart.cudaStream_t(1)),
}
message = str(raises(cudart.cudaGetChannelDesc, cudart.cudaStream_t(1)))
check(message == "'array' must be a cudaArray_const_t, not a cudaStream_t", message)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def results(header_sets):
    return probe_each_version(PROBE, header_sets)


def test_every_version_was_probed(results, header_sets):
    assert set(results) == set(header_sets)
    for result in results.values():
        assert "cudaStream_t" in result["handles"] and "cudaArray_const_t" in result["handles"]


def test_handles_are_values(results):
    problems = {key: r["problems"] for key, r in results.items() if r["problems"]}
    assert not problems


def test_const_handles_accept_their_non_const_twins(results):
    for key, result in results.items():
        # Kinds: what cudaArray_t (a CUarray of the driver) points at.
        assert result["accepts"] == {
            "cudaArray_const_t": ["CUarray_st"],
            "cudaMipmappedArray_const_t": ["CUmipmappedArray_st"],
        }, key


def test_const_handle_arguments_reach_c_and_other_kinds_are_refused(results):
    for key, result in results.items():
        calls = result["calls"]
        # Without a GPU the runtime answers with an error code: a CudaError, so the
        # argument got past conversion.
        for call in (
            "cudaGetChannelDesc(cudaArray_t)",
            "cudaGetChannelDesc(cudaArray_const_t)",
            "cudaGetChannelDesc(int)",
            "cudaGetMipmappedArrayLevel(cudaMipmappedArray_t)",
            "cudaStreamQuery(cudaStream_t)",
        ):
            assert calls[call].startswith("CudaError"), (key, call, calls[call])
        for call in (
            "cudaGetChannelDesc(cudaStream_t)",
            "cudaGetChannelDesc(cudaMipmappedArray_t)",
            "cudaArrayGetInfo(cudaArray_const_t)",
            "cudaStreamQuery(cudaEvent_t)",
        ):
            assert calls[call] == "TypeError", (key, call, calls[call])
