"""Runtime and driver handles are one value (issue 22, items 3 and 4), without a GPU.

cudaStream_t and CUstream are both `struct CUstream_st *` in C: each checked layer takes
the other's objects (a different struct is still refused before C), they are equal and
hash alike at one address, and a destroy through either API marks the object for both.
The driver's launches take a cudart.kernels.Function and a tuple of argument values,
and its host callbacks Python callables, as the runtime's do.

What reaches C is seen by replacing a checked module's C function with a recorder
(as tests/runtime/test_handle_lifetimes.py does), so a "successful" destroy can be
driven here; `test_the_objects_reach_a_driver_library` also goes through ctypes into
a stand-in libcuda built here, whose every function answers 34
(CUDA_ERROR_STUB_LIBRARY). The GPU side is tests/gpu/test_driver_interop.py.
"""

from __future__ import annotations

import ctypes
import gc
import shutil
import subprocess
import types
import weakref

import needs
import pytest
from fast_support import python_checked, stand_in_for_c
from suite import run_python

import cudart
from cudart import HandleDestroyedError, _convert, _serving, callbacks
from cudart._handles import StreamHandle, destroyed_by
from cudart.kernels._function import Function
from cudart.kernels._launch import KernelArguments

# The runtime's calls go through the backend in force (make test-ctypes: ctypes too).
pytestmark = pytest.mark.backend

ADDRESS = 0x7F00_0000_1000  # a handle's value; nothing reads through it here

# (runtime typedef, driver typedef): one struct each.
PAIRS = [
    ("cudaStream_t", "CUstream"),
    ("cudaEvent_t", "CUevent"),
    ("cudaGraph_t", "CUgraph"),
    ("cudaGraphExec_t", "CUgraphExec"),
    ("cudaGraphNode_t", "CUgraphNode"),
    ("cudaFunction_t", "CUfunction"),
    ("cudaKernel_t", "CUkernel"),
    ("cudaLibrary_t", "CUlibrary"),
    ("cudaMemPool_t", "CUmemoryPool"),
    ("cudaArray_t", "CUarray"),
]

# Per pair: a driver call and a runtime call taking the handle (its position among the
# C arguments, the other arguments), none with an output, so the recorder sees the call.
# A kernel and a function go to the runtime as `func` (a device function).
DRIVER_CALLS = {
    "CUstream": ("cuStreamQuery", 0, ()),
    "CUevent": ("cuEventQuery", 0, ()),
    "CUgraph": ("cuGraphDebugDotPrint", 0, (b"/dev/null", 0)),
    "CUgraphExec": ("cuGraphLaunch", 0, (None,)),
    "CUgraphNode": ("cuGraphNodeSetEnabled", 1, (None, 1)),
    "CUfunction": ("cuFuncSetCacheConfig", 0, (0,)),
    "CUkernel": ("cuKernelSetCacheConfig", 0, (0, 0)),
    "CUlibrary": ("cuLibraryUnload", 0, ()),
    "CUmemoryPool": ("cuMemPoolTrimTo", 0, (0,)),
    "CUarray": ("cuArrayDestroy", 0, ()),
}
RUNTIME_CALLS = {
    "cudaStream_t": ("cudaStreamQuery", 0, ()),
    "cudaEvent_t": ("cudaEventQuery", 0, ()),
    "cudaGraph_t": ("cudaGraphDebugDotPrint", 0, (b"/dev/null", 0)),
    "cudaGraphExec_t": ("cudaGraphLaunch", 0, (None,)),
    "cudaGraphNode_t": ("cudaGraphNodeSetEnabled", 1, (None, 1)),
    "cudaFunction_t": ("cudaFuncSetCacheConfig", 0, (0,)),
    "cudaKernel_t": ("cudaFuncSetCacheConfig", 0, (0,)),
    "cudaLibrary_t": ("cudaLibraryUnload", 0, ()),
    "cudaMemPool_t": ("cudaMemPoolTrimTo", 0, (0,)),
    "cudaArray_t": ("cudaFreeArray", 0, ()),
}


@pytest.fixture(scope="module")
def drv():
    """The driver's (raw, checked) modules cudart.driver serves (no libcuda needed to
    import them: functions bind on first call)."""
    return _serving.driver_modules()


@pytest.fixture(scope="module")
def rt():
    return _serving.raw_module(), _serving.checked_module()


class Recorder:
    """Stands for a checked module's C function: the arguments C would get; `status`."""

    def __init__(self, status: int = 0) -> None:
        self.calls: list[tuple] = []
        self.status = status

    def __call__(self, *args):
        self.calls.append(args)
        return self.status


def record(monkeypatch, module, name: str, status: int = 0) -> Recorder:
    recorder = Recorder(status)
    stand_in_for_c(monkeypatch, module, name, recorder)
    return recorder


def pairs_of(rt, drv):
    raw_rt, raw_drv = rt[0], drv[0]
    found = [
        (getattr(raw_rt, r), getattr(raw_drv, d))
        for r, d in PAIRS
        if r in vars(raw_rt) and d in vars(raw_drv)
    ]
    assert len(found) >= 9  # cudaLibrary_t is 12.8+
    return found


def call(module, function: str, position: int, handle, rest: tuple):
    args = list(rest)
    args.insert(position, handle)
    return getattr(module, function)(*args)


# ---------------------------------------------------------------- one value


def test_each_pair_is_one_kind_equal_and_hashed_alike(rt, drv):
    for rt_cls, drv_cls in pairs_of(rt, drv):
        a, b = rt_cls(ADDRESS), drv_cls(ADDRESS)
        assert rt_cls._kind_ == drv_cls._kind_ and rt_cls._kind_.endswith("_st")
        assert a == b and b == a and hash(a) == hash(b), rt_cls
        assert {a: "x"}[b] == "x"
        assert a != drv_cls(ADDRESS + 16) and int(a) == int(b) == ADDRESS
        assert repr(b) == f"<{drv_cls.__name__} {ADDRESS:#x}>"  # its own name still


def test_different_structs_stay_different(rt, drv):
    stream, event = drv[0].CUstream(ADDRESS), rt[0].cudaEvent_t(ADDRESS)
    assert stream != event and hash(stream) != hash(event)
    # A const handle is its own kind, taking its non-const twin of either API.
    assert rt[0].cudaArray_const_t._accepts_ == (drv[0].CUarray._kind_,)
    assert rt[0].cudaArray_const_t(ADDRESS) != drv[0].CUarray(ADDRESS)


def test_the_driver_stream_is_a_cuda_stream(drv):
    stream = drv[0].CUstream(ADDRESS)
    assert isinstance(stream, StreamHandle)
    assert stream.__cuda_stream__() == (0, ADDRESS)
    assert drv[0].CUstream().__cuda_stream__() == (0, 0)


@pytest.mark.parametrize("pair", PAIRS, ids=[d for _, d in PAIRS])
def test_the_driver_takes_the_runtimes_handle(rt, drv, monkeypatch, pair):
    runtime_name, driver_name = pair
    if runtime_name not in vars(rt[0]) or driver_name not in vars(drv[0]):
        pytest.skip(f"{runtime_name} is not in these headers")
    function, position, rest = DRIVER_CALLS[driver_name]
    c = record(monkeypatch, drv[1], function)
    handle = getattr(rt[0], runtime_name)(ADDRESS)
    call(drv[1], function, position, handle, rest)
    assert c.calls[0][position] is handle  # as is: ctypes passes any c_void_p
    # Another struct's handle is refused before C, from either API.
    other = rt[0].cudaEvent_t if driver_name != "CUevent" else drv[0].CUstream
    with pytest.raises(TypeError, match=f"must be a {driver_name}, not a {other.__name__}"):
        call(drv[1], function, position, other(ADDRESS), rest)
    assert len(c.calls) == 1


@pytest.mark.parametrize("pair", PAIRS, ids=[r for r, _ in PAIRS])
def test_the_runtime_takes_the_drivers_handle(rt, drv, monkeypatch, pair):
    runtime_name, driver_name = pair
    if runtime_name not in vars(rt[0]) or driver_name not in vars(drv[0]):
        pytest.skip(f"{runtime_name} is not in these headers")
    function, position, rest = RUNTIME_CALLS[runtime_name]
    c = record(monkeypatch, rt[1], function)
    handle = getattr(drv[0], driver_name)(ADDRESS)
    call(rt[1], function, position, handle, rest)
    assert c.calls[0][position] is handle
    other = drv[0].CUevent if runtime_name != "cudaEvent_t" else rt[0].cudaStream_t
    with pytest.raises(TypeError, match=f"not a {other.__name__}"):
        call(rt[1], function, position, other(ADDRESS), rest)
    assert len(c.calls) == 1


# ---------------------------------------------------------------- destroy marks


@pytest.mark.parametrize("through", ["driver", "runtime"])
def test_a_destroy_through_one_api_is_refused_by_the_other(rt, drv, monkeypatch, through):
    raw_rt, checked_rt = rt
    raw_drv, checked_drv = drv
    if through == "driver":
        stream, destroy, destroyer = raw_rt.cudaStream_t(ADDRESS), "cuStreamDestroy", checked_drv
        use, user = "cudaStreamQuery", checked_rt
    else:
        stream, destroy, destroyer = raw_drv.CUstream(ADDRESS), "cudaStreamDestroy", checked_rt
        use, user = "cuStreamQuery", checked_drv
    c_destroy = record(monkeypatch, destroyer, destroy)
    c_use = record(monkeypatch, user, use)
    getattr(destroyer, destroy)(stream)
    assert len(c_destroy.calls) == 1 and destroyed_by(stream) == destroy
    with pytest.raises(HandleDestroyedError, match=destroy):
        getattr(user, use)(stream)
    with pytest.raises(HandleDestroyedError):
        getattr(destroyer, destroy)(stream)  # no second destroy reaches C
    assert c_use.calls == [] and len(c_destroy.calls) == 1
    # The mark is the object's: another object at the address is the caller's promise.
    getattr(user, use)(type(stream).__mro__[1](ADDRESS))
    assert len(c_use.calls) == 1


# ---------------------------------------------------------------- device addresses


class DeviceMemory:
    """Stands for a CuPy array: __cuda_array_interface__, and an __index__ that is an
    element's value (which C must not get as the address)."""

    def __init__(self, address: int) -> None:
        self.__cuda_array_interface__ = {
            "shape": (16,),
            "typestr": "|u1",
            "data": (address, False),
            "version": 3,
        }

    def __index__(self) -> int:
        raise TypeError("only size-1 arrays convert to an index")


def test_a_cudeviceptr_parameter_takes_what_the_runtimes_device_pointer_takes(drv, monkeypatch):
    # CUdeviceptr is an integer typedef: its parameters took ints and __index__ only.
    # NumPy first: a skip after the checks below ran would drop the rest unseen.
    numpy = needs.numpy()
    raw, checked = drv
    memset = record(monkeypatch, checked, "cuMemsetD8")
    to_host = record(monkeypatch, checked, "cuMemcpyDtoH")
    for given in (DeviceMemory(ADDRESS), ctypes.c_void_p(ADDRESS), ADDRESS):
        checked.cuMemsetD8(given, 7, 16)
        assert memset.calls[-1] == (ADDRESS, 7, 16)
    host = bytearray(16)
    checked.cuMemcpyDtoH(host, DeviceMemory(ADDRESS + 8), 16)
    assert to_host.calls[0][1] == ADDRESS + 8 and type(to_host.calls[0][1]) is int
    # A handle, host memory and a float are no device address; refused before C.
    with pytest.raises(TypeError):
        checked.cuMemsetD8(numpy.zeros(16, numpy.uint8), 0, 16)
    for wrong, what in (
        (raw.CUstream(ADDRESS), "is a handle"),
        (bytearray(16), "is host memory"),
        (1.5, "must be a device address"),
    ):
        with pytest.raises(TypeError, match=what):
            checked.cuMemsetD8(wrong, 0, 16)
    # The interface's address is checked as the interface is read (cudart/_convert.py).
    with pytest.raises(ValueError, match=r"0 <= address < 2\*\*64"):
        checked.cuMemsetD8(DeviceMemory(-1), 0, 16)
    assert len(memset.calls) == 3


def test_a_device_array_passes_as_a_cudeviceptr(drv, monkeypatch):
    # cudart.arrays.DeviceArray, as the runtime's checked layer takes it for `void *`.
    from cudart.arrays import DeviceArray

    _, checked = drv
    memset = record(monkeypatch, checked, "cuMemsetD8")
    array = DeviceArray(ADDRESS, (4,), "<f4", None, None, None, False, (2, 0))
    checked.cuMemsetD8(array, 0, 16)
    assert memset.calls == [(ADDRESS, 0, 16)]


# ---------------------------------------------------------------- record handle members


# The pairs some record of either API has a handle member of (CUlaunchConfig.hStream,
# CUDA_EVENT_RECORD_NODE_PARAMS.event, CUDA_MEMCPY3D.srcArray, cudaLaunchParams.func...).
MEMBER_PAIRS = [
    p
    for p in PAIRS
    if p[1] in ("CUstream", "CUevent", "CUgraph", "CUgraphNode", "CUfunction", "CUarray")
]


@pytest.mark.parametrize("pair", MEMBER_PAIRS, ids=[d for _, d in MEMBER_PAIRS])
def test_a_record_handle_member_takes_the_other_apis_handle(rt, drv, pair):
    # ctypes took only ints and the member's own class: `config.hStream = stream`
    # (a cudaStream_t into CUlaunchConfig) was a TypeError.
    runtime_name, driver_name = pair
    raw_rt, raw_drv = rt[0], drv[0]
    members = {
        raw: [
            (cls, name)
            for cls in vars(raw).values()
            if isinstance(cls, type) and issubclass(cls, (ctypes.Structure, ctypes.Union))
            for name, ctype, *_ in cls.__dict__.get("_fields_", ())
            if ctype is getattr(raw, typedef)
        ]
        for raw, typedef in ((raw_drv, driver_name), (raw_rt, runtime_name))
    }
    other = {raw_drv: getattr(raw_rt, runtime_name), raw_rt: getattr(raw_drv, driver_name)}
    seen = 0
    for raw, found in members.items():
        for cls, name in found:
            if name in ("func", "kern"):
                continue  # kernel_fields: a Function too (test_a_kernel_node_record_...)
            record_ = cls()
            setattr(record_, name, other[raw](ADDRESS))
            assert int(getattr(record_, name)) == ADDRESS, (cls.__name__, name)
            assert getattr(record_, name) == other[raw](ADDRESS)
            seen += 1
    assert seen


def test_a_record_handle_member_refuses_another_kind_and_a_destroyed_handle(rt, drv):
    raw_rt, raw_drv = rt[0], drv[0]
    config = raw_drv.CUlaunchConfig(hStream=raw_rt.cudaStream_t(ADDRESS))
    assert config.hStream == raw_drv.CUstream(ADDRESS)
    with pytest.raises(TypeError, match="'hStream' must be a CUstream, not a cudaEvent_t"):
        config.hStream = raw_rt.cudaEvent_t(ADDRESS)
    with pytest.raises(OverflowError):
        config.hStream = -1
    dead = raw_rt.cudaStream_t(ADDRESS + 16)
    cudart._handles.mark_destroyed(dead, "cudaStreamDestroy")
    with pytest.raises(HandleDestroyedError):
        config.hStream = dead
    for value, address in ((None, 0), (ADDRESS + 32, ADDRESS + 32)):
        config.hStream = value
        assert int(config.hStream) == address
    # The runtime's records take the driver's handles as well.
    params = raw_rt.cudaMemcpy3DParms()
    params.srcArray = raw_drv.CUarray(ADDRESS)
    assert params.srcArray == raw_rt.cudaArray_t(ADDRESS)
    assert raw_drv.CUlaunchConfig.hStream.offset == raw_drv.CUlaunchConfig_st.hStream.offset


# ---------------------------------------------------------------- kernels


def library_function(handle=0x1234, name="_Z4axpyfPKfPfi") -> Function:
    """A Function of the library route (its handle is a cudaKernel_t, a CUkernel):
    made up, as no image loads without a GPU."""
    module = types.SimpleNamespace(_rt=cudart.sys, route="library")
    fn = Function(module, name, handle)
    fn._params = (4, 8, 8, 4)  # what cudaFuncGetParamInfo answers on a GPU
    return fn


def test_cu_launch_kernel_takes_a_function_and_packs_a_tuple(drv, monkeypatch):
    raw, checked = drv
    c = record(monkeypatch, checked, "cuLaunchKernel")
    fn = library_function()
    stream = cudart.sys.cudaStream_t(ADDRESS)
    checked.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, stream, (2.0, 0x10, 0x20, 4), None)
    f, *_, hStream, kernel_params, extra = c.calls[0]
    assert isinstance(f, ctypes.c_void_p) and f.value == 0x1234  # its CUkernel
    assert hStream is stream and extra is None
    assert isinstance(kernel_params, KernelArguments) and kernel_params.values[1] == 0x10
    slots = ctypes.cast(int(kernel_params), ctypes.POINTER(ctypes.c_void_p))
    assert ctypes.c_float.from_address(slots[0]).value == 2.0
    assert ctypes.c_int.from_address(slots[3]).value == 4
    # What Function.pack gave passes as it is; so do the driver's and the runtime's
    # kernel handles, and a CUfunction with an address as kernelParams.
    packed = fn.pack(1.0, 0, 0, 1)
    checked.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, packed, None)
    assert c.calls[1][9] is packed
    for kernel in (raw.CUfunction(0x99), cudart.sys.cudaKernel_t(0x99)):
        checked.cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, None, 0x5000, None)
        assert c.calls[-1][0] is kernel and c.calls[-1][9] == 0x5000
    # A tuple of Python values needs parameter types (a Function's, or a signature
    # given by cudart.kernels.typed; else ctypes values: test_driver_kernel_args.py); an
    # event is no kernel.
    with pytest.raises(TypeError, match="argument 0 is int: .*kernels.typed"):
        checked.cuLaunchKernel(raw.CUfunction(0x99), 1, 1, 1, 1, 1, 1, 0, None, (1,), None)
    with pytest.raises(TypeError, match="must be a CUfunction, not a CUevent"):
        checked.cuLaunchKernel(raw.CUevent(0x99), 1, 1, 1, 1, 1, 1, 0, None, None, None)
    with pytest.raises(TypeError, match="kernel '_Z4axpyfPKfPfi'"):
        checked.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, (1.0, 0, 0, 1.5), None)
    assert len(c.calls) == 4


def test_the_other_launches_take_a_function_too(drv, monkeypatch):
    raw, checked = drv
    fn = library_function()
    cooperative = record(monkeypatch, checked, "cuLaunchCooperativeKernel")
    checked.cuLaunchCooperativeKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, (1.0, 0, 0, 1))
    assert cooperative.calls[0][0].value == 0x1234
    assert isinstance(cooperative.calls[0][9], KernelArguments)
    ex = record(monkeypatch, checked, "cuLaunchKernelEx")
    config = raw.CUlaunchConfig(gridDimX=1, gridDimY=1, gridDimZ=1, blockDimX=1)
    checked.cuLaunchKernelEx(config, fn, (1.0, 0, 0, 1), None)
    assert ex.calls[0][1].value == 0x1234 and isinstance(ex.calls[0][2], KernelArguments)
    # A CUkernel parameter gets the library route's handle itself.
    cache = record(monkeypatch, checked, "cuKernelSetCacheConfig")
    checked.cuKernelSetCacheConfig(fn, 0, 0)
    assert cache.calls[0][0] == cudart.sys.cudaKernel_t(0x1234)


def test_the_function_lives_for_the_call_and_a_closed_one_is_refused(drv, monkeypatch):
    raw, checked = drv
    seen = []

    def launch(f, *rest):
        gc.collect()
        seen.append(watch())  # the Function is alive while C runs
        return 0

    monkeypatch.setitem(vars(checked), "_cuLaunchKernel", launch)
    watch = weakref.ref(library_function())
    # A temporary Function: nothing but the call holds it.
    checked.cuLaunchKernel(library_function(), 1, 1, 1, 1, 1, 1, 0, None, (1.0, 0, 0, 1), None)
    assert seen and seen[0] is None  # (the first one, never passed, is gone)
    seen.clear()
    fn = library_function()
    watch = weakref.ref(fn)
    checked.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, (1.0, 0, 0, 1), None)
    assert seen == [fn]
    fn._invalidate()
    with pytest.raises(ValueError, match="module is closed"):
        checked.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, None, None)
    assert len(seen) == 1


def test_a_registered_kernel_asks_the_runtime_for_its_cufunction(drv, monkeypatch):
    # The registration route's handle is a host address: its CUfunction comes from
    # cudaGetFuncBySymbol, which the runtime refuses without a GPU: nothing reaches C.
    raw, checked = drv
    c = record(monkeypatch, checked, "cuLaunchKernel")
    fn = Function(types.SimpleNamespace(_rt=cudart.sys), "_Z4axpyfPKfPfi", 0x1234)
    looked_up = []

    def get_func(out, handle):
        looked_up.append(handle)
        ctypes.c_void_p.from_address(ctypes.addressof(out._obj)).value = 0xF00
        return 0

    monkeypatch.setitem(vars(cudart.sys), "cudaGetFuncBySymbol", get_func)
    checked.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, 0x5000, None)
    assert looked_up == [0x1234] and c.calls[0][0].value == 0xF00
    # A CUfunction parameter asks for it on either route, in the current device's
    # context each time. The library route's handle is a CUkernel: its CUfunction is
    # the driver's cuKernelGetFunction's (the GPU showed cudaGetFuncBySymbol refuse a
    # cudaKernel_t).
    cache = record(monkeypatch, checked, "cuFuncSetCacheConfig")
    kernels = record(monkeypatch, checked, "cuKernelGetFunction")
    checked.cuFuncSetCacheConfig(library_function(0x4321), 0)
    checked.cuFuncSetCacheConfig(fn, 0)
    assert looked_up == [0x1234, 0x1234]
    assert [int(call[1]) for call in kernels.calls] == [0x4321]
    assert [call[0] for call in cache.calls][1:] == [cudart.sys.cudaFunction_t(0xF00)]


def test_a_kernel_node_record_takes_a_function_and_keeps_it(drv):
    raw, _ = drv
    fn = library_function()
    watch = weakref.ref(fn)
    params = raw.CUDA_KERNEL_NODE_PARAMS(gridDimX=1, blockDimX=32)
    params.kern = fn  # the library route's CUkernel
    params.kernelParams = fn.pack(1.0, 0x10, 0x20, 4)
    del fn
    gc.collect()
    assert watch() is not None  # the record holds the Function and the arguments
    assert params.kern == raw.CUkernel(0x1234) and not params.func
    slots = ctypes.cast(params.kernelParams, ctypes.POINTER(ctypes.c_void_p))
    assert ctypes.c_int.from_address(slots[3]).value == 4
    # Either API's handle of the member's kind, by address; another kind is refused.
    params.func = cudart.sys.cudaFunction_t(0x77)
    assert params.func == raw.CUfunction(0x77)
    params.kern = None
    gc.collect()
    assert watch() is None and not params.kern
    with pytest.raises(TypeError, match="'func' must be a CUfunction, not a CUevent"):
        params.func = raw.CUevent(0x77)
    with pytest.raises(TypeError, match="pack the values first"):
        params.kernelParams = (1.0, 0, 0, 1)


def test_a_kernel_parameter_gets_a_registered_functions_kernel(monkeypatch):
    # A cudaKernel_t / CUkernel parameter (the runtime's cudaKernelSetAttributeForDevice,
    # the driver's cuKernelSetAttribute) took a Function's host entry address (its
    # _as_parameter_) before: the registration route's Function gives its kernel.
    raw = cudart.sys
    fn = Function(types.SimpleNamespace(_rt=raw), "_Z4axpyfPKfPfi", 0x1234)
    looked_up = []

    def get_kernel(out, entry):
        looked_up.append(entry)
        ctypes.c_void_p.from_address(ctypes.addressof(out._obj)).value = 0xABC
        return 0

    monkeypatch.setitem(vars(raw), "cudaGetKernel", get_kernel)
    assert _convert.handle(fn, raw.cudaKernel_t, "kernel") == raw.cudaKernel_t(0xABC)
    assert looked_up == [0x1234]
    with pytest.raises(TypeError, match="not a CUevent_st handle"):
        _convert.handle(fn, raw.cudaEvent_t, "event")


# ---------------------------------------------------------------- callbacks


@pytest.fixture
def not_capturing(drv, monkeypatch):
    # The capture query goes to the raw layer: answered here, as no libcuda loads.
    monkeypatch.setitem(vars(drv[0]), "cuStreamIsCapturing", lambda stream, state: 1)


def test_cu_launch_host_func_runs_a_python_callable(drv, monkeypatch, not_capturing):
    raw, checked = drv
    c = record(monkeypatch, checked, "cuLaunchHostFunc")
    got = []
    before = callbacks.pending()
    stream = cudart.sys.cudaStream_t(ADDRESS)
    checked.cuLaunchHostFunc(stream, got.append, {"any": "object"})
    hStream, trampoline, token = c.calls[0]
    assert hStream is stream and isinstance(trampoline, raw.CUhostFn)
    assert callbacks.pending() == before + 1
    trampoline(token)  # what the driver does once the stream gets there
    assert got == [{"any": "object"}] and callbacks.pending() == before


def test_cu_stream_add_callback_gets_stream_and_status(drv, monkeypatch):
    raw, checked = drv
    c = record(monkeypatch, checked, "cuStreamAddCallback")
    got = []
    checked.cuStreamAddCallback(None, lambda s, status, data: got.append((s, status, data)), 7, 0)
    _, trampoline, token, flags = c.calls[0]
    assert isinstance(trampoline, raw.CUstreamCallback) and flags == 0
    trampoline(ADDRESS, 0, token)
    assert got == [(ADDRESS, 0, 7)]


def test_a_non_callable_is_refused_and_a_c_function_passes(drv, monkeypatch, not_capturing):
    # (A call C refuses releases its callable: test_the_objects_reach_a_driver_library.)
    raw, checked = drv
    c = record(monkeypatch, checked, "cuLaunchHostFunc")
    before = callbacks.pending()
    for wrong in (1.5, b"code", object()):
        with pytest.raises(TypeError, match="'fn'"):
            checked.cuLaunchHostFunc(None, wrong, None)
    assert callbacks.pending() == before and c.calls == []
    pointer = raw.CUhostFn(lambda data: None)
    checked.cuLaunchHostFunc(None, pointer, 0x10)
    assert c.calls[0][1] is pointer and c.calls[0][2] == 0x10
    assert callbacks.pending() == before


def test_a_host_node_record_holds_its_callable_until_the_graph_goes(drv, monkeypatch):
    raw, checked = drv
    add = record(monkeypatch, checked, "cuGraphAddHostNode")
    record(monkeypatch, checked, "cuGraphDestroy")
    got = []
    graph = cudart.sys.cudaGraph_t(ADDRESS)  # a runtime graph: one value with CUgraph's
    params = checked.CUDA_HOST_NODE_PARAMS(fn=got.append, userData="data")
    before = callbacks.pending()
    checked.cuGraphAddHostNode(graph, None, 0, params)
    record_arg = add.calls[0][4]._obj
    assert isinstance(record_arg.fn, raw.CUhostFn)
    record_arg.fn(record_arg.userData)  # a launch of the graph runs it, and again
    record_arg.fn(record_arg.userData)
    assert got == ["data", "data"] and callbacks.pending() == before + 1
    assert callbacks.held(raw.CUgraph(ADDRESS)) == callbacks.held(graph) != frozenset()
    checked.cuGraphDestroy(graph)
    assert callbacks.pending() == before and destroyed_by(graph) == "cuGraphDestroy"


# ---------------------------------------------------------------- through ctypes, into C

STUB_PROBE = r"""
import json, types
import cudart
from cudart import driver, callbacks
from cudart.kernels._function import Function

rt = cudart.sys
outcomes = {}

def outcome(name, thunk):
    try:
        thunk()
        outcomes[name] = "returned"
    except cudart.CudaDriverError as exc:
        outcomes[name] = type(exc).__name__
    except TypeError as exc:
        outcomes[name] = "TypeError"

A = 0x7F0000001000
outcome("runtime stream", lambda: driver.cuStreamQuery(rt.cudaStream_t(A)))
outcome("runtime event", lambda: driver.cuEventRecord(rt.cudaEvent_t(A), rt.cudaStream_t(A)))
outcome("event as stream", lambda: driver.cuStreamQuery(rt.cudaEvent_t(A)))
outcome("runtime graph exec", lambda: driver.cuGraphLaunch(rt.cudaGraphExec_t(A), None))
outcome("callable", lambda: driver.cuLaunchHostFunc(None, print, "x"))
outcome("stream callback", lambda: driver.cuStreamAddCallback(None, print, None, 0))
outcome("not callable", lambda: driver.cuLaunchHostFunc(None, 2.5, None))
fn = Function(types.SimpleNamespace(_rt=rt, route="library"), "_Z4axpyfPKfPfi", 0x1234)
fn._params = (4, 8, 8, 4)
outcome("function", lambda: driver.cuLaunchKernel(
    fn, 1, 1, 1, 1, 1, 1, 0, rt.cudaStream_t(A), (1.0, 0, 0, 1), None))
event = rt.cudaEvent_t(A)
outcome("destroy", lambda: driver.cuEventDestroy(event))
outcomes["destroy leaves it live"] = type(event) is rt.cudaEvent_t
outcomes["pending"] = callbacks.pending()
print(json.dumps(outcomes))
"""


@pytest.fixture(scope="module")
def stub_driver(drv, tmp_path_factory):
    """A libcuda whose every function returns 34 (CUDA_ERROR_STUB_LIBRARY)."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no C compiler")
    raw = drv[0]
    symbols = sorted({*raw.SYMBOLS_LEGACY.values(), *raw.SYMBOLS_PER_THREAD.values()})
    folder = tmp_path_factory.mktemp("stub_libcuda")
    source = folder / "stub.c"
    source.write_text("".join(f"int {s}(void) {{ return 34; }}\n" for s in symbols))
    library = folder / "libcuda.so.1"
    subprocess.run([gcc, "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    return library


def test_the_objects_reach_a_driver_library(stub_driver):
    import json

    proc = run_python(STUB_PROBE, env={"CUDART_DRIVER_LIBRARY": str(stub_driver)})
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    stub = "CudaDriverErrorStubLibrary"
    assert found == {
        "runtime stream": stub,
        "runtime event": stub,
        "event as stream": "TypeError",
        "runtime graph exec": stub,
        "callable": stub,
        "stream callback": stub,
        "not callable": "TypeError",
        "function": stub,
        "destroy": stub,
        "destroy leaves it live": True,  # C refused: the object lives on
        "pending": 0,  # the refused calls' callables were released
    }


# ---------------------------------------------------------------- children die with parents


class Maker(Recorder):
    """Stands for a create: writes `address` into the output handle C gets first."""

    def __init__(self, address: int) -> None:
        super().__init__()
        self.address = address

    def __call__(self, *args):
        args[0].value = self.address
        return super().__call__(*args)


def make(monkeypatch, module, name: str, address: int) -> Maker:
    maker = Maker(address)
    stand_in_for_c(monkeypatch, module, name, maker)
    return maker


def refused_before_c(monkeypatch, checked, use: str, position: int, handle, rest: tuple) -> None:
    """A call with `handle` raises HandleDestroyedError before C: through the public
    function (the compiled one where it is built) and the Python one alike."""
    c = Recorder()
    monkeypatch.setitem(vars(checked), "_" + use, c)
    for fn in (getattr(checked, use), python_checked(checked, use)):
        args = list(rest)
        args.insert(position, handle)
        with pytest.raises(HandleDestroyedError):
            fn(*args)
    assert c.calls == []


def reaches_c(monkeypatch, checked, use: str, position: int, handle, rest: tuple) -> None:
    c = record(monkeypatch, checked, use)
    call(checked, use, position, handle, rest)
    assert len(c.calls) == 1


def test_a_modules_functions_die_with_it(drv, monkeypatch):
    """cuModuleUnload unloads the functions got from the module (lifetimes.PARENTS): a
    CUfunction of it is refused before C, and a function of another module lives."""
    raw, checked = drv
    module, other = raw.CUmodule(0x71000), raw.CUmodule(0x71100)
    make(monkeypatch, checked, "cuModuleGetFunction", 0x72000)
    f = checked.cuModuleGetFunction(module, "k")
    make(monkeypatch, checked, "cuModuleGetFunction", 0x72100)
    g = checked.cuModuleGetFunction(other, "k")
    reaches_c(monkeypatch, checked, "cuFuncSetCacheConfig", 0, f, (0,))
    record(monkeypatch, checked, "cuModuleUnload")
    checked.cuModuleUnload(module)
    assert destroyed_by(f) == "cuModuleUnload" and destroyed_by(g) is None
    refused_before_c(monkeypatch, checked, "cuFuncSetCacheConfig", 0, f, (0,))
    reaches_c(monkeypatch, checked, "cuFuncSetCacheConfig", 0, g, (0,))


def test_a_child_is_recorded_by_its_parents_kind_and_address(drv, monkeypatch):
    """The parent given as an int or a plain c_void_p records the child as the handle
    object would: a checked destroy of a module object at that address marks it."""
    raw, checked = drv
    made = []
    for i, parent in enumerate((0x78000, ctypes.c_void_p(0x78000))):
        make(monkeypatch, checked, "cuModuleGetFunction", 0x78100 + i)
        made.append(checked.cuModuleGetFunction(parent, "k"))
    record(monkeypatch, checked, "cuModuleUnload")
    checked.cuModuleUnload(raw.CUmodule(0x78000))
    assert [destroyed_by(f) for f in made] == ["cuModuleUnload"] * 2


def test_a_librarys_kernels_and_their_functions_die_with_it(drv, monkeypatch):
    raw, checked = drv
    library = raw.CUlibrary(0x73000)
    make(monkeypatch, checked, "cuLibraryGetKernel", 0x73100)
    kernel = checked.cuLibraryGetKernel(library, "k")
    make(monkeypatch, checked, "cuKernelGetFunction", 0x73200)
    function = checked.cuKernelGetFunction(kernel)
    make(monkeypatch, checked, "cuLibraryGetModule", 0x73300)
    module = checked.cuLibraryGetModule(library)
    record(monkeypatch, checked, "cuLibraryUnload")
    checked.cuLibraryUnload(library)
    assert {destroyed_by(h) for h in (kernel, function, module)} == {"cuLibraryUnload"}
    refused_before_c(monkeypatch, checked, "cuKernelSetCacheConfig", 0, kernel, (0, 0))
    refused_before_c(monkeypatch, checked, "cuFuncSetCacheConfig", 0, function, (0,))


def test_a_destroyed_graphs_nodes_are_refused(drv, rt, monkeypatch):
    """A node added to a graph dies with the graph, whichever API destroys it."""
    for (raw, checked), add, destroy, use in (
        (drv, "cuGraphAddEmptyNode", "cuGraphDestroy", "cuGraphNodeSetEnabled"),
        (rt, "cudaGraphAddEmptyNode", "cudaGraphDestroy", "cudaGraphNodeSetEnabled"),
    ):
        cls = raw.CUgraph if hasattr(raw, "CUgraph") else raw.cudaGraph_t
        graph, kept = cls(0x74000), cls(0x74100)
        make(monkeypatch, checked, add, 0x74010)
        node = getattr(checked, add)(graph, None, 0)
        make(monkeypatch, checked, add, 0x74110)
        other = getattr(checked, add)(kept, None, 0)
        record(monkeypatch, checked, destroy)
        getattr(checked, destroy)(graph)
        assert destroyed_by(node) == destroy and destroyed_by(other) is None
        refused_before_c(monkeypatch, checked, use, 1, node, (None, 1))
        reaches_c(monkeypatch, checked, use, 1, other, (None, 1))


def test_a_destroyed_contexts_streams_events_and_modules_are_refused(drv, monkeypatch):
    """A stream, event or module made while a context is current dies with it
    (cuCtxDestroy); one made in another context lives."""
    raw, checked = drv
    ctx, other = raw.CUcontext(0x75000), raw.CUcontext(0x75100)
    made = {}
    for current in (ctx, other):
        make(monkeypatch, checked, "cuCtxGetCurrent", current.value)
        base = current.value
        make(monkeypatch, checked, "cuStreamCreate", base + 0x10)
        make(monkeypatch, checked, "cuEventCreate", base + 0x20)
        make(monkeypatch, checked, "cuModuleLoadData", base + 0x30)
        made[current.value] = (
            checked.cuStreamCreate(0),
            checked.cuEventCreate(0),
            checked.cuModuleLoadData(0x1000),
        )
    # The module's function dies with the context too, through the module.
    make(monkeypatch, checked, "cuModuleGetFunction", 0x75040)
    function = checked.cuModuleGetFunction(made[ctx.value][2], "k")
    record(monkeypatch, checked, "cuCtxDestroy")
    checked.cuCtxDestroy(ctx)
    stream, event, module = made[ctx.value]
    assert {destroyed_by(h) for h in (stream, event, module, function)} == {"cuCtxDestroy"}
    assert {destroyed_by(h) for h in made[other.value]} == {None}
    refused_before_c(monkeypatch, checked, "cuStreamQuery", 0, stream, ())
    refused_before_c(monkeypatch, checked, "cuEventQuery", 0, event, ())
    refused_before_c(monkeypatch, checked, "cuFuncSetCacheConfig", 0, function, (0,))
    reaches_c(monkeypatch, checked, "cuStreamQuery", 0, made[other.value][0], ())


def test_a_failed_parent_destroy_and_a_dropped_child_mark_nothing(drv, monkeypatch):
    """C refusing the parent's destroy leaves its children alive; a child the program
    dropped is not kept alive by its parent's record."""
    raw, checked = drv
    module = raw.CUmodule(0x76000)
    maker = make(monkeypatch, checked, "cuModuleGetFunction", 0x76100)
    f = checked.cuModuleGetFunction(module, "k")
    dropped = weakref.ref(checked.cuModuleGetFunction(module, "k2"))
    maker.calls.clear()  # the stand-in's own record of what C got
    gc.collect()
    assert dropped() is None
    record(monkeypatch, checked, "cuModuleUnload", status=raw.CUDA_ERROR_INVALID_VALUE)
    # The failure is named by the driver's own error functions, which need a libcuda.
    with pytest.raises((cudart.CudaDriverError, cudart.DriverNotFoundError)):
        checked.cuModuleUnload(module)
    assert destroyed_by(f) is None and destroyed_by(module) is None
    record(monkeypatch, checked, "cuModuleUnload")
    checked.cuModuleUnload(module)
    assert destroyed_by(f) == "cuModuleUnload"
