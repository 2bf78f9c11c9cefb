"""Calls into each pinned version's real libcudart that need no GPU.

Each version runs in its own interpreter with CUDART_LIBRARY pointing at the library
from that version's pinned wheel and CUDART_BINDINGS_VERSION unset, so these tests
also show that dispatch picks the module of the library's own version.
"""

from __future__ import annotations

import json

import pytest
from suite import probe_each_version, run_python, version_keys

# The calls go through the backend in force: make test-ctypes runs them on ctypes too.
pytestmark = pytest.mark.backend

PROBE = r"""
import ctypes, json, sys, warnings
import cudart
m = cudart.sys
out = {"module": m.__name__, "library": cudart.load_runtime().path,
       "found_by": cudart.load_runtime().found_by}
v = ctypes.c_int(-1)
out["runtime_status"] = m.cudaRuntimeGetVersion(ctypes.byref(v))
out["runtime_version"] = v.value
out["error_name"] = m.cudaGetErrorName(m.cudaErrorMemoryAllocation).decode()
out["error_string"] = m.cudaGetErrorString(m.cudaErrorInvalidValue).decode()
n = ctypes.c_int(-7)
out["device_count_status"] = m.cudaGetDeviceCount(ctypes.byref(n))
out["device_count"] = n.value
d = ctypes.c_int(-7)
out["get_device_status"] = m.cudaGetDevice(ctypes.byref(d))
out["last_error"] = m.cudaGetLastError()
prop = m.cudaDeviceProp()
out["props_status"] = m.cudaGetDeviceProperties(ctypes.byref(prop), 0)
try:
    m.cudaGetDeviceCount(1.5)
except ctypes.ArgumentError as exc:
    out["wrong_type"] = str(exc)
# A deprecated getter that only writes one value: safe to call on any machine.
getter = next(n for n, e in sorted(m._FUNCTIONS.items())
              if e[3] & 1 and e[2] == (ctypes.c_void_p,) and "Get" in n)
sink = ctypes.c_longlong()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    getattr(m, getter)(ctypes.byref(sink))
    getattr(m, getter)(ctypes.byref(sink))
out["deprecated"] = getter
out["replacement"] = m._REPLACEMENTS.get(getter)
out["deprecation_warnings"] = [str(w.message) for w in caught]
import pydoc
# Bare: the ctypes function, or the compiled backend's (cudart._backend) own.
out["bare"] = isinstance(m.cudaMalloc, ctypes._CFuncPtr) or type(m.cudaMalloc).__name__ == (
    "builtin_function_or_method"
)
out["help"] = pydoc.render_doc(m.cudaMalloc, renderer=pydoc.plaintext)
out["deprecated_doc"] = getattr(m, getter).__doc__
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def results(header_sets):
    return probe_each_version(PROBE, header_sets)


@pytest.mark.parametrize("key", version_keys())
def test_dispatch_selects_the_library_version(results, manifest, key):
    r = results[key]
    pin = manifest.get(key)
    assert r["module"] == f"cudart.{pin.module_name}"
    assert r["found_by"] == "$CUDART_LIBRARY"
    assert r["runtime_status"] == 0
    assert r["runtime_version"] == pin.number


@pytest.mark.parametrize("key", version_keys())
def test_error_names_and_strings(results, key):
    assert results[key]["error_name"] == "cudaErrorMemoryAllocation"
    assert results[key]["error_string"] == "invalid argument"


@pytest.mark.parametrize("key", version_keys())
def test_device_queries_return_an_error_code_without_a_gpu(results, key):
    r = results[key]
    if r["device_count_status"] == 0:
        pytest.skip(
            f"a GPU is present ({r['device_count']} devices): the no-GPU path is not reachable"
        )
    # cudaErrorNoDevice (100) or cudaErrorInsufficientDriver (35), never a crash
    assert r["device_count_status"] in (35, 100), r
    assert r["get_device_status"] in (35, 100), r
    assert r["props_status"] in (35, 100, 101), r


@pytest.mark.parametrize("key", version_keys())
def test_wrong_argument_type_is_a_python_error(results, key):
    assert "argument 1" in results[key]["wrong_type"]


@pytest.mark.parametrize("key", version_keys())
def test_deprecated_function_warns_once(results, key):
    name = results[key]["deprecated"]
    expected = f"{name} is deprecated in the CUDA runtime"
    if results[key]["replacement"]:  # what the header says to use instead
        expected += f"; use {results[key]['replacement']} instead"
    assert results[key]["deprecation_warnings"] == [expected]


@pytest.mark.parametrize("key", version_keys())
def test_help_shows_the_prototype_and_the_header_docs(results, key):
    """A bound raw function is the bare ctypes (or compiled) function, carrying its
    _DOCS entry (the compiled one has the same text as its own)."""
    r = results[key]
    assert r["bare"]
    text = r["help"]
    compiled_twin = r["module"].replace(".sys_", "._fast_")
    assert f"in module {r['module']}" in text or f"in module {compiled_twin}" in text
    assert "cudaError_t cudaMalloc(void **devPtr, size_t size)" in text
    assert "Allocate memory on the device." in text
    assert "devPtr: Pointer to allocated device memory" in text
    assert r["deprecated_doc"].startswith("cudaError_t " + r["deprecated"] + "(")
    assert "Deprecated." in r["deprecated_doc"]


def test_importing_a_module_loads_no_library(header_sets):
    code = r"""
import sys
import cudart.sys_12050 as m
import cudart._loader as loader
assert loader.load_runtime.loaded is None, "a library was loaded by import"
assert "cudaMalloc" not in vars(m), "a function was bound by import"
assert "cudaMalloc" in dir(m)
m.cudaMalloc  # first lookup binds
assert loader.load_runtime.loaded is not None and "cudaMalloc" in vars(m)
print("ok")
"""
    assert run_python(code).stdout.strip() == "ok"


def test_function_absent_from_an_older_runtime_raises_on_call(header_sets):
    """The 12.5 bindings on the 12.2 library: a 12.5-only function names both versions."""
    old = header_sets["12.2"].library
    code = r"""
import cudart
import cudart.sys_12050 as m
import cudart.sys_12020 as old
missing = sorted(set(m.SYMBOLS.values()) - set(old.SYMBOLS.values()))
name = next(n for n, s in m.SYMBOLS.items() if s in missing and n == s)
fn = getattr(m, name)  # looking it up is fine
try:
    fn()
except cudart.FunctionNotFoundError as exc:
    print(name, "|", exc)
"""
    out = run_python(code, env={"CUDART_LIBRARY": str(old)}).stdout
    name, message = out.split(" | ", 1)
    assert name in message
    assert "CUDA 12.5 headers" in message and "libcudart 12.2" in message


@pytest.mark.parametrize("name", ["python3.12", "python3.13"])
def test_runtime_package_on_other_pythons(header_sets, manifest, name):
    """The package supports 3.11-3.13; the GPU machine runs 3.12 from a plain copy."""
    from abi_support import find_interpreter

    python, why = find_interpreter(name)
    if python is None:
        pytest.skip(f"{name} is not available: {why}")
    newest = manifest.keys()[-1]
    proc = run_python(
        PROBE, env={"CUDART_LIBRARY": str(header_sets[newest].library)}, python=python
    )
    r = json.loads(proc.stdout)
    assert r["module"] == f"cudart.{manifest.get(newest).module_name}"
    assert r["runtime_version"] == manifest.get(newest).number
    assert r["error_name"] == "cudaErrorMemoryAllocation"
