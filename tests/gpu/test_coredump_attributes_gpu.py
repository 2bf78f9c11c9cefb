"""Coredump attributes on a GPU (issue 33, items 7 and 15): the checked driver getters
return the Python value typed by attrib and the setters take it, the size C is told
computed for the caller. The CPU side is tests/runtime/test_output_shapes.py.

Only what cuda.h documents is asserted: a Bool attribute reads back as a bool, a value
set (globally or for the context) reads back as set, ENABLE_USER_TRIGGER and PIPE are
global only ("cannot be set on a per-context basis"), and CU_COREDUMP_MAX is refused
before C.

The settings are the process's. When these checks ran in the suite's process (the GPU
run of 2026-12-03 at 04b322f, H200, driver 580), every later module load of that
process failed with CUDA_ERROR_INVALID_VALUE, CuPy's too, on every runtime from 12.5.
So every check runs in one child process of its own (`observed`), and the suite's
process never sees them.
"""

from __future__ import annotations

import json
import os

import pytest
from suite import run_python

CHILD = r"""
import json, os, sys
import cudart
from cudart import driver

cudart.cudaSetDevice(0)
cudart.cudaFree(0)
driver.cuInit(0)
context = driver.cuDevicePrimaryCtxRetain(0)
driver.cuCtxSetCurrent(context)
out = {}
if not hasattr(driver, "cuCoredumpGetAttribute"):
    print(json.dumps({"skip": "no coredump attributes before CUDA 12.1"}))
    sys.exit(0)


def attempt(key, fn, *args):
    try:
        value = fn(*args)
        out[key] = {"type": type(value).__name__, "value": value}
    except Exception as exc:
        out[key] = {"error": type(exc).__name__, "message": str(exc)}
    return out[key]


BOOLS = ("CU_COREDUMP_ENABLE_ON_EXCEPTION", "CU_COREDUMP_TRIGGER_HOST",
         "CU_COREDUMP_LIGHTWEIGHT", "CU_COREDUMP_ENABLE_USER_TRIGGER")
for scope in ("", "Global"):
    get = getattr(driver, "cuCoredumpGetAttribute" + scope)
    for name in (*BOOLS, "CU_COREDUMP_FILE", "CU_COREDUMP_PIPE"):
        attempt(f"get{scope}:{name}", get, getattr(driver, name))
for scope in ("", "Global"):
    get = getattr(driver, "cuCoredumpGetAttribute" + scope)
    set_ = getattr(driver, "cuCoredumpSetAttribute" + scope)
    path = os.path.join(sys.argv[1], f"core{scope}.cuda")
    before = get(driver.CU_COREDUMP_FILE)
    attempt(f"set{scope}:FILE", set_, driver.CU_COREDUMP_FILE, path)
    attempt(f"reread{scope}:FILE", get, driver.CU_COREDUMP_FILE)
    if before:
        set_(driver.CU_COREDUMP_FILE, before)
    for short in ("TRIGGER_HOST", "ENABLE_ON_EXCEPTION"):
        attrib = getattr(driver, "CU_COREDUMP_" + short)
        before = get(attrib)
        for value in (not before, before):
            attempt(f"set{scope}:{short}={value}", set_, attrib, value)
            attempt(f"reread{scope}:{short}={value}", get, attrib)
# The raw getters with a 1024-byte buffer: the size the driver writes back beside the
# value, against the size the checked getter types each attribute by.
import ctypes
from cudart import _checked
for scope in ("", "Global"):
    raw_get = getattr(driver.sys, "cuCoredumpGetAttribute" + scope)
    for name in (*BOOLS, "CU_COREDUMP_FILE", "CU_COREDUMP_PIPE", "CU_COREDUMP_GENERATION_FLAGS"):
        if not hasattr(driver, name):
            continue  # GENERATION_FLAGS: 12.5+
        attrib = getattr(driver, name)
        table = driver.cuCoredumpGetAttribute.__globals__["_CUcoredumpSettings_enum_values"]
        typed = _checked.attribute_size(_checked.attribute_storage(attrib, table, "probe")).value
        buffer = ctypes.create_string_buffer(1024)
        size = ctypes.c_size_t(1024)
        err = raw_get(attrib, buffer, ctypes.byref(size))
        out[f"size{scope}:{name}"] = {"err": int(err), "written": size.value, "typed": typed}
for call, args in (("cuCoredumpGetAttribute", ()), ("cuCoredumpSetAttributeGlobal", (True,))):
    attempt(f"max:{call}", getattr(driver, call), driver.CU_COREDUMP_MAX, *args)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def observed(tmp_path_factory):
    """What the child saw, by check (a value's type and value, or the error raised)."""
    env = {k: v for k, v in os.environ.items() if k.startswith("CUDART_")}
    folder = tmp_path_factory.mktemp("coredump")
    code = CHILD.replace("sys.argv[1]", repr(str(folder)))
    found = json.loads(run_python(code, env=env).stdout)
    if "skip" in found:
        pytest.skip(found["skip"])
    return found


CONTEXT_BOOLS = (
    "CU_COREDUMP_ENABLE_ON_EXCEPTION",
    "CU_COREDUMP_TRIGGER_HOST",
    "CU_COREDUMP_LIGHTWEIGHT",
)


@pytest.mark.parametrize("name", [*CONTEXT_BOOLS, "CU_COREDUMP_ENABLE_USER_TRIGGER"])
def test_global_bool_attributes_read_as_bools(observed, name):
    assert observed[f"getGlobal:{name}"]["type"] == "bool", observed[f"getGlobal:{name}"]


@pytest.mark.parametrize("name", CONTEXT_BOOLS)
def test_context_bool_attributes_read_as_bools(observed, name):
    assert observed[f"get:{name}"]["type"] == "bool", observed[f"get:{name}"]


@pytest.mark.parametrize("scope", ["", "Global"])
def test_paths_read_as_strings(observed, scope):
    for name in ("CU_COREDUMP_FILE",) + (("CU_COREDUMP_PIPE",) if scope else ()):
        got = observed[f"get{scope}:{name}"]
        assert got["type"] == "str", (name, got)


@pytest.mark.parametrize("scope", ["", "Global"])
def test_file_round_trip(observed, scope):
    assert "error" not in observed[f"set{scope}:FILE"], observed[f"set{scope}:FILE"]
    got = observed[f"reread{scope}:FILE"]
    assert got["type"] == "str" and got["value"].endswith(f"core{scope}.cuda"), got


@pytest.mark.parametrize("short", ["TRIGGER_HOST", "ENABLE_ON_EXCEPTION"])
@pytest.mark.parametrize("scope", ["", "Global"])
def test_bool_round_trip(observed, scope, short):
    """Set to the other value, then back: each reads back as set."""
    prefix = f"reread{scope}:{short}="
    rereads = {k: v for k, v in observed.items() if k.startswith(prefix)}
    assert len(rereads) == 2, sorted(observed)
    for key, got in rereads.items():
        assert got.get("type") == "bool" and str(got["value"]) == key.rpartition("=")[2], got


@pytest.mark.parametrize("call", ["cuCoredumpGetAttribute", "cuCoredumpSetAttributeGlobal"])
def test_max_is_refused_before_c(observed, call):
    got = observed[f"max:{call}"]
    assert got.get("error") == "ValueError" and "CU_COREDUMP_MAX" in got["message"], got


@pytest.mark.parametrize("scope", ["", "Global"])
def test_written_back_size_fits_the_typed_value(observed, scope, record_property):
    """What the driver writes back through `size`, told 1024 bytes, is at most the size
    the checked getter types the attribute by: a larger one would mean the checked
    getter's buffer is too small for what C writes. Recorded per attribute."""
    probes = {k: v for k, v in observed.items() if k.startswith(f"size{scope}:")}
    assert probes, sorted(observed)
    record_property("sizes", json.dumps(probes, sort_keys=True))  # the JUnit record
    for key, got in probes.items():
        if got["err"]:
            continue  # a context-scoped read of a global-only attribute: INVALID_VALUE
        assert got["written"] <= got["typed"] or got["written"] == 1024, (key, got)
