"""The seed's two walls under their C names, without a GPU: the occupancy templates at
the top level of every version, and Python callables through the checked
cudaLaunchHostFunc / cudaStreamAddCallback / host-node functions (they reach C, which
refuses without a driver, and nothing stays registered)."""

from __future__ import annotations

import ctypes
import importlib
import inspect

import pytest
from suite import probe_each_version

import cudart

# The calls go through the backend in force: make test-ctypes runs them on ctypes too.
pytestmark = pytest.mark.backend

VERSIONS = cudart.available_versions()
OCCUPANCY = {
    "cudaOccupancyMaxPotentialBlockSize": ["func", "dynamicSMemSize", "blockSizeLimit"],
    "cudaOccupancyMaxPotentialBlockSizeWithFlags": [
        "func",
        "dynamicSMemSize",
        "blockSizeLimit",
        "flags",
    ],
    "cudaOccupancyMaxPotentialBlockSizeVariableSMem": [
        "func",
        "blockSizeToDynamicSMemSize",
        "blockSizeLimit",
    ],
    "cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags": [
        "func",
        "blockSizeToDynamicSMemSize",
        "blockSizeLimit",
        "flags",
    ],
}


@pytest.fixture(params=VERSIONS, ids=[f"checked_{v}" for v in VERSIONS])
def checked(request):
    return importlib.import_module(f"cudart.checked_{request.param}")


@pytest.mark.parametrize("name", sorted(OCCUPANCY))
def test_occupancy_forms_in_every_checked_module(checked, name):
    fn = getattr(checked, name)
    params = inspect.signature(fn).parameters
    assert list(params) == OCCUPANCY[name]
    defaults = {k: p.default for k, p in params.items() if p.default is not p.empty}
    assert all(v == 0 for v in defaults.values()) and "func" not in defaults
    assert "blockSizeToDynamicSMemSize" not in defaults


def test_occupancy_forms_delegate_to_the_port(checked, monkeypatch):
    from cudart import occupancy

    seen = []
    monkeypatch.setattr(
        occupancy,
        "max_potential_block_size_variable_smem",
        lambda func, b2d, limit, flags, rt: seen.append((func, b2d(64), limit, flags, rt))
        or (7, 64),
    )
    assert checked.cudaOccupancyMaxPotentialBlockSizeWithFlags(5, 128, 256, 1) == (7, 64)
    assert checked.cudaOccupancyMaxPotentialBlockSizeVariableSMem(5, lambda b: b * 4) == (7, 64)
    lib = importlib.import_module(checked.__name__.replace("checked_", "sys_"))
    assert seen == [(5, 128, 256, 1, lib), (5, 256, 0, 0, lib)]


def test_callback_parameters_are_generated_as_callbacks(checked):
    sig = inspect.signature(checked.cudaLaunchHostFunc)
    assert list(sig.parameters) == ["stream", "fn", "userData"]
    assert sig.parameters["userData"].default is None
    sig = inspect.signature(checked.cudaStreamAddCallback)
    assert list(sig.parameters) == ["stream", "callback", "userData", "flags"]
    assert "_c.callback_record_class" in inspect.getsource(checked)
    assert checked.cudaHostNodeParams is not checked._lib.cudaHostNodeParams
    assert issubclass(checked.cudaHostNodeParams, checked._lib.cudaHostNodeParams)


def test_host_node_params_take_a_callable(checked):
    def work(data):
        pass

    params = checked.cudaHostNodeParams(fn=work, userData={"any": "object"})
    assert params._python_fn_ == (work, {"any": "object"})
    assert not ctypes.cast(params.fn, ctypes.c_void_p).value  # C sees NULL until a call
    params.userData = 3
    assert params._python_fn_ == (work, 3)
    raw = checked._lib.cudaHostFn_t(lambda p: None)
    plain = checked.cudaHostNodeParams(raw, 5)
    assert plain._python_fn_ is None and plain.userData == 5


# (function, its arguments with memory where C takes a function pointer) where the
# version declares it: the runtime would call into the buffer from its own thread.
MEMORY_AS_FUNCTION = (
    ("cudaLaunchHostFunc", (None, b"\x00" * 16, None)),
    ("cudaStreamAddCallback", (None, bytearray(16), None, 0)),
    ("cudaLaunchHostFunc_v2", (None, bytearray(16), None, 0)),
    ("cudaUserObjectCreate", (None, (ctypes.c_char * 16)(), 1, 1)),
    ("cudaDeviceRegisterAsyncNotification", (0, bytearray(16), None)),
    ("cudaLogsRegisterCallback", (bytearray(16), None)),
)


def test_memory_is_never_a_function_pointer(checked):
    # Refused before C (issue 20: a buffer reached C as cudaHostFn_t); an address and
    # a ctypes function pointer still pass (test_callables_reach_c_and_nothing_leaks).
    for name, args in MEMORY_AS_FUNCTION:
        fn = getattr(checked, name, None)
        if fn is None:
            continue
        with pytest.raises(
            TypeError, match=r"must be a \w+ \(a ctypes function pointer.*not memory"
        ):
            fn(*args)


PROBE = r"""
import ctypes, json, warnings
warnings.simplefilter("ignore")
import cudart
from cudart import callbacks

out = {}
def attempt(key, call):
    before = callbacks.pending()
    try:
        call()
        out[key] = ["ok", callbacks.pending() - before]
    except cudart.CudaError as exc:
        out[key] = [exc.name, callbacks.pending() - before]
    except TypeError as exc:
        out[key] = ["TypeError: " + str(exc), callbacks.pending() - before]

calls = []
attempt("host_callable", lambda: cudart.cudaLaunchHostFunc(None, calls.append, {"x": 1}))
attempt("host_default_data", lambda: cudart.cudaLaunchHostFunc(None, print))
attempt("stream_callable", lambda: cudart.cudaStreamAddCallback(None, lambda s, e, d: None, "d", 0))
raw = cudart.sys.cudaHostFn_t(lambda p: None)
attempt("host_raw_cfunc", lambda: cudart.cudaLaunchHostFunc(None, raw, None))
address = ctypes.cast(raw, ctypes.c_void_p).value
attempt("host_raw_int", lambda: cudart.cudaLaunchHostFunc(None, address, 0))
attempt("host_bad", lambda: cudart.cudaLaunchHostFunc(None, 1.5, 0))
node = cudart.cudaHostNodeParams(fn=calls.append, userData="node")
attempt("node_callable", lambda: cudart.cudaGraphAddHostNode(None, None, 0, node))
attempt("node_set", lambda: cudart.cudaGraphHostNodeSetParams(None, node))
attempt("node_exec_set", lambda: cudart.cudaGraphExecHostNodeSetParams(None, None, node))
out["ran"] = len(calls)
out["occupancy"] = None
try:
    cudart.cudaOccupancyMaxPotentialBlockSize(1)
except cudart.CudaError as exc:
    out["occupancy"] = exc.name
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def results(header_sets):
    return probe_each_version(PROBE, header_sets)


def test_callables_reach_c_and_nothing_leaks(results):
    for key, got in results.items():
        for call in (
            "host_callable",
            "host_default_data",
            "stream_callable",
            "host_raw_cfunc",
            "host_raw_int",
            "node_callable",
            "node_set",
            "node_exec_set",
        ):
            status, left = got[call]
            assert status.startswith("cudaError"), (key, call, status)
            assert left == 0, (key, call)  # the failed call's registration is released
        assert got["host_bad"][0].startswith("TypeError: 'fn' must be a cudaHostFn_t"), key
        assert got["ran"] == 0
        assert got["occupancy"].startswith("cudaError"), key
