"""The per-thread default stream switch, against each pinned version's real libcudart.

C code built with -DCUDA_API_PER_THREAD_DEFAULT_STREAM calls cudaMemcpy_ptds,
cudaMemcpyAsync_ptsz, ... instead of the legacy symbols; $CUDART_PER_THREAD_DEFAULT_STREAM
(or cuda-python's $CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM) makes the bindings do the
same. No GPU is needed: what is checked is which exported function each name binds to
(the address of the bound ctypes function against dlsym's), and that raw calls of
per-thread functions go through and return an error code.

The switch is read once per process, so each version runs one interpreter: its
environment turns the switch on, and that case goes through the package as users reach
it (cudart.sys, the checked API). The other settings are then tried on fresh copies of
the same generated module, each after resetting the cached switch and setting the
environment: one process per version, not one per case.
"""

from __future__ import annotations

import json

import pytest
from suite import run_python, version_keys

from cudart._binding import CUDA_PYTHON_PER_THREAD_ENV, PER_THREAD_ENV, per_thread_from_environment

# The calls go through the backend in force: make test-ctypes runs them on ctypes too.
pytestmark = pytest.mark.backend

VERSIONS = version_keys()

# Case name -> the two variables (absent: unset). "on" is the process's own environment.
CASES = {
    "on": {PER_THREAD_ENV: "1"},
    "off": {PER_THREAD_ENV: "0"},
    "unset": {},
    "cuda-python": {CUDA_PYTHON_PER_THREAD_ENV: "1"},
    "both agree": {PER_THREAD_ENV: "True", CUDA_PYTHON_PER_THREAD_ENV: "on"},
    "bad value": {PER_THREAD_ENV: "2"},
    "bad cuda-python value": {CUDA_PYTHON_PER_THREAD_ENV: "maybe"},
    "disagree": {PER_THREAD_ENV: "1", CUDA_PYTHON_PER_THREAD_ENV: "0"},
}
EXPECTED_MODE = {"on": True, "off": False, "unset": False, "cuda-python": True, "both agree": True}
EXPECTED_ERROR = {
    "bad value": [PER_THREAD_ENV],
    "bad cuda-python value": [CUDA_PYTHON_PER_THREAD_ENV],
    "disagree": [PER_THREAD_ENV, CUDA_PYTHON_PER_THREAD_ENV],
}

PROBE = r"""
import ctypes, importlib.util, json, os, sys
import cudart
from cudart import _binding, _contract, kernels

VARS = (_binding.PER_THREAD_ENV, _binding.CUDA_PYTHON_PER_THREAD_ENV)
cdll = cudart.load_runtime().cdll


def address(fn):
    fn = getattr(fn, "__wrapped__", fn)  # deprecated functions warn through a wrapper
    owner = getattr(fn, "__self__", None)
    if owner is not None and hasattr(owner, "address"):  # the compiled backend's
        return owner.address(fn.__name__)
    return ctypes.cast(fn, ctypes.c_void_p).value


def exported(symbol):
    return address(cdll[symbol])


def inspect(mod):
    per_thread = {n: s for n, s in mod.SYMBOLS_PER_THREAD.items() if s != mod.SYMBOLS_LEGACY[n]}
    in_force = ("per_thread" if mod.SYMBOLS is mod.SYMBOLS_PER_THREAD
                else "legacy" if mod.SYMBOLS is mod.SYMBOLS_LEGACY else "neither")
    wrong, same = [], []
    for name in per_thread:
        try:
            bound = address(getattr(mod, name))
        except Exception as exc:
            wrong.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        if bound != exported(mod.SYMBOLS[name]):
            wrong.append(f"{name}: bound to {bound:#x}, not {mod.SYMBOLS[name]}")
        if exported(per_thread[name]) == exported(mod.SYMBOLS_LEGACY[name]):
            same.append(name)
    return {
        "mode": cudart.per_thread_default_stream(),
        "in_force": in_force,
        "per_thread_names": len(per_thread),
        "memcpy_async": mod.SYMBOLS["cudaMemcpyAsync"],
        "wrong": wrong,
        "same_address": same,
        # Raw calls of per-thread functions; without a GPU they return an error code.
        "statuses": [mod.cudaStreamSynchronize(None),
                     mod.cudaMemcpy(None, None, 0, mod.cudaMemcpyHostToDevice)],
    }


out = {"module": cudart.sys.__name__, "cases": {}}
out["cases"]["on"] = inspect(cudart.sys)

# The checked layer binds through the same map.
try:
    cudart.cudaStreamSynchronize(None)
except cudart.CudaError:
    pass
checked = sys.modules[cudart.sys.__name__.replace(".sys_", ".checked_")]
# What the checked call called: its `_<name>`, or, where the compiled checked function
# took the call itself (issue 23), the slot it calls, its extension's.
bound = checked.__dict__["_cudaStreamSynchronize"]
if type(bound).__name__ == "_Unbound":
    from cudart._backend import compiled_module
    fast = compiled_module(cudart.sys.CUDA_VERSION)
    out["checked_bound"] = fast.address("cudaStreamSynchronize")
else:
    out["checked_bound"] = address(bound)
out["checked_expected"] = exported(cudart.sys.SYMBOLS_PER_THREAD["cudaStreamSynchronize"])
out["has_launch"] = _contract.exported(cudart.sys, cdll, "cudaLaunchKernelExC")

for case, env in CASES.items():
    if case == "on":
        continue
    for var in VARS:
        os.environ.pop(var, None)
    os.environ.update(env)
    _binding._per_thread = None  # the switch is read once: forget it for this case
    # A fresh module of the same view (its name says which version the merged file
    # runs as: cudart/_views.py), not the one in sys.modules.
    spec = importlib.util.spec_from_file_location(cudart.sys.__name__, cudart.sys.__file__)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except ValueError as exc:
        out["cases"][case] = {"error": str(exc)}
        continue
    out["cases"][case] = inspect(mod)
print(json.dumps(out))
"""


_RESULTS: dict[str, dict] = {}


@pytest.fixture
def results(header_sets):
    """Version -> what its interpreter, started with the switch on, found; each version
    runs once per session, when a test first asks for it."""

    def get(key: str) -> dict:
        if key not in _RESULTS:
            env = {
                "CUDART_LIBRARY": str(header_sets[key].library),
                PER_THREAD_ENV: "1",
                CUDA_PYTHON_PER_THREAD_ENV: "",  # empty is unset: keeps the caller's out
            }
            _RESULTS[key] = json.loads(run_python(f"CASES = {CASES!r}\n{PROBE}", env=env).stdout)
        return _RESULTS[key]

    return get


@pytest.mark.parametrize("key", VERSIONS)
def test_modes_bind_their_symbols(results, key):
    """Each setting gives its mode, SYMBOLS is that mode's map, and every per-thread
    name is bound to the exported function of the symbol in force."""
    r = results(key)
    for case, mode in EXPECTED_MODE.items():
        got = r["cases"][case]
        assert "error" not in got, f"{case}: {got}"
        assert got["mode"] is mode, case
        assert got["in_force"] == ("per_thread" if mode else "legacy"), case
        assert got["memcpy_async"] == ("cudaMemcpyAsync_ptsz" if mode else "cudaMemcpyAsync"), case
        assert got["wrong"] == [], case
        # Per-thread and legacy symbols are distinct functions, so the binding check can fail.
        assert got["same_address"] == [], case
        assert got["per_thread_names"] >= 50, case
        # The calls went through (a cudaError_t came back: an error without a GPU, 0 with one).
        assert all(isinstance(s, int) for s in got["statuses"]), (case, got["statuses"])


@pytest.mark.parametrize("key", VERSIONS)
def test_bad_settings_are_refused(results, key):
    """A value outside 1/0/true/false/yes/no/on/off, or the two variables disagreeing,
    is a ValueError naming the variable(s), raised when the module is imported."""
    for case, names in EXPECTED_ERROR.items():
        error = results(key)["cases"][case].get("error")
        assert error is not None, f"{case}: accepted"
        for name in names:
            assert name in error, (case, error)


@pytest.mark.parametrize("key", VERSIONS)
def test_checked_layer_and_kernels_follow_the_switch(results, key):
    r = results(key)
    assert r["checked_bound"] == r["checked_expected"]
    assert r["has_launch"] is True


@pytest.mark.parametrize(
    "environ, expected",
    [({}, False), ({PER_THREAD_ENV: ""}, False)]
    + [({PER_THREAD_ENV: v}, True) for v in ("1", "true", "YES", "On", " on ")]
    + [({PER_THREAD_ENV: v}, False) for v in ("0", "false", "No", "OFF")]
    + [({CUDA_PYTHON_PER_THREAD_ENV: "1"}, True), ({CUDA_PYTHON_PER_THREAD_ENV: "0"}, False)]
    + [
        ({PER_THREAD_ENV: "1", CUDA_PYTHON_PER_THREAD_ENV: "yes"}, True),
        ({PER_THREAD_ENV: "0", CUDA_PYTHON_PER_THREAD_ENV: "off"}, False),
        ({PER_THREAD_ENV: "", CUDA_PYTHON_PER_THREAD_ENV: "1"}, True),
    ],
)
def test_switch_values(environ, expected):
    assert per_thread_from_environment(environ) is expected


@pytest.mark.parametrize(
    "environ, named",
    [
        ({PER_THREAD_ENV: "2"}, [PER_THREAD_ENV]),
        ({PER_THREAD_ENV: "enabled"}, [PER_THREAD_ENV]),
        ({CUDA_PYTHON_PER_THREAD_ENV: "y"}, [CUDA_PYTHON_PER_THREAD_ENV]),
        (
            {PER_THREAD_ENV: "1", CUDA_PYTHON_PER_THREAD_ENV: "0"},
            [PER_THREAD_ENV, CUDA_PYTHON_PER_THREAD_ENV],
        ),
        (
            {PER_THREAD_ENV: "off", CUDA_PYTHON_PER_THREAD_ENV: "true"},
            [PER_THREAD_ENV, CUDA_PYTHON_PER_THREAD_ENV],
        ),
    ],
)
def test_switch_refuses(environ, named):
    with pytest.raises(ValueError) as info:
        per_thread_from_environment(environ)
    for name in named:
        assert name in str(info.value)


def test_switch_is_read_once():
    """Changing the environment after the first answer changes nothing in the process."""
    code = (
        "import os, cudart\n"
        "first = cudart.per_thread_default_stream()\n"
        f"os.environ[{PER_THREAD_ENV!r}] = '0'\n"
        "print(first, cudart.per_thread_default_stream(),\n"
        "      'per_thread_default_stream' in cudart.__all__)\n"
    )
    out = run_python(code, env={PER_THREAD_ENV: "1", CUDA_PYTHON_PER_THREAD_ENV: ""}).stdout.split()
    assert out == ["True", "True", "True"]
