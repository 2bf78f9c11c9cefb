"""A tuple of kernel arguments for a bare CUfunction (issue 33 item 14), without a GPU.

cuModuleGetFunction gives a CUfunction that says nothing of its parameters, so the
checked cuLaunchKernel packs a tuple for it in two ways: ctypes values, each its own C
type, or Python values by a signature the caller gives the handle
(cudart.kernels.typed). Where libcuda tells the kernel's parameters
(cuFuncGetParamInfo), the count and sizes are checked before C. What C reads is judged
by C: gcc builds a libcuda of four functions (SHIM) whose cuFuncGetParamInfo describes
one kernel, `axpy(float a, float *x, float *y, int n)` at handle 0xF00, and whose
cuLaunchKernel logs the bytes behind each parameter pointer as that kernel would read
them. Each case runs in a fresh interpreter on the backend in force (make test-ctypes
runs them on ctypes too).
"""

from __future__ import annotations

import json
import re
import struct
import subprocess

import pytest
from fast_support import compiler
from suite import run_python

pytestmark = pytest.mark.backend

SHIM = r"""
#include <stddef.h>
#include <stdio.h>

#define KNOWN ((void *)0xF00)
static const size_t offsets[] = {0, 8, 16, 24}, sizes[] = {4, 8, 8, 4};
char shim_log[4096];

int cuDriverGetVersion(int *version) { *version = 12050; return 0; }

int cuFuncGetParamInfo(void *f, size_t index, size_t *offset, size_t *size) {
    if (f != KNOWN) return 400; /* CUDA_ERROR_INVALID_HANDLE: it cannot tell */
    if (index >= 4) return 1;   /* CUDA_ERROR_INVALID_VALUE: past the last one */
    *offset = offsets[index];
    *size = sizes[index];
    return 0;
}

int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                   unsigned by, unsigned bz, unsigned shared, void *stream,
                   void **params, void **extra) {
    char *at = shim_log;
    at += sprintf(at, "f=%p", f);
    if (f != KNOWN || !params) {
        sprintf(at, " params=%p", (void *)params);
        return 0;
    }
    for (int k = 0; k < 4; k++) {
        const unsigned char *bytes = params[k];
        at += sprintf(at, " ");
        for (size_t j = 0; j < sizes[k]; j++) at += sprintf(at, "%02x", bytes[j]);
    }
    return 0;
}
"""

PROBE = r"""
import ctypes, json, sys
from ctypes import c_double, c_float, c_int, c_void_p
import cudart
from cudart import _backend, _loader, driver
from cudart.kernels import KernelArguments, typed

log = (ctypes.c_char * 4096).in_dll(_loader.load_driver().cdll, "shim_log")
out = {"backend": _backend.backend()}


def launch(f, params):
    ctypes.memset(log, 0, 4096)
    try:
        driver.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, None, params, None)
        outcome = "returned"
    except Exception as exc:
        outcome = type(exc).__name__ + ": " + str(exc)
    return {"outcome": outcome, "c": log.value.decode()}


known, unknown = driver.CUfunction(0xF00), driver.CUfunction(0xBAD)
axpy = (c_float(2.0), c_void_p(0x10), c_void_p(0x20), c_int(4))
out["ctypes"] = launch(known, axpy)
out["ctypes_list"] = launch(known, list(axpy))
out["too_few"] = launch(known, axpy[:3])
out["wrong_size"] = launch(known, (c_double(2.0),) + axpy[1:])
out["python_values"] = launch(known, (2.0, 0x10, 0x20, 4))
out["unknown"] = launch(unknown, (c_double(2.0), c_int(1)))
out["function_pointer"] = launch(known, (ctypes.CFUNCTYPE(None)(lambda: None),) + axpy[1:])
k = typed(known, "float a, const float *x, float *y, int n")
out["repr"] = repr(k)
out["typed"] = launch(k, (2.0, 0x10, 0x20, 4))
out["typed_numpy_like"] = launch(k, (c_float(2.0), 0x10, 0x20, 4))
out["typed_int_for_float"] = launch(k, (2, 0x10, 0x20, 4))
out["typed_float_for_int"] = launch(k, (2.0, 0x10, 0x20, 4.0))
out["typed_out_of_range"] = launch(k, (2.0, 0x10, 0x20, 2**31))
out["typed_too_many"] = launch(k, (2.0, 0x10, 0x20, 4, 5))
packed = k.pack(2.0, 0x10, 0x20, 4)
out["pack_type"] = type(packed).__name__
out["packed"] = launch(known, packed)
out["wrong_declaration"] = launch(typed(known, "double, float*, float*, int"), (2.0, 0, 0, 4))
out["unknown_typed"] = launch(typed(unknown, "double, int"), (2.0, 1))
refusals = {}
kinds = (("int", 0xF00), ("stream", driver.CUstream(0x10)), ("null", driver.CUfunction(0)))
for name, value in kinds:
    try:
        typed(value, "int")
        refusals[name] = "accepted"
    except Exception as exc:
        refusals[name] = type(exc).__name__ + ": " + str(exc)
out["refusals"] = refusals
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory, header_sets):
    cc = compiler()
    if cc is None:
        pytest.skip("no C compiler: the libcuda of this test cannot be built")
    folder = tmp_path_factory.mktemp("kernel_args_shim")
    (folder / "shim.c").write_text(SHIM)
    lib = folder / "libcuda.so.1"
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O1", "-Wall", "-Werror", str(folder / "shim.c"), "-o", str(lib)],
        check=True,
    )
    env = {"CUDART_LIBRARY": str(header_sets["12.5"].library), "CUDART_DRIVER_LIBRARY": str(lib)}
    proc = run_python(PROBE, env=env)
    return json.loads(proc.stdout.strip().splitlines()[-1])


# What axpy(2.0, 0x10, 0x20, 4) reads: each parameter's bytes, little-endian.
AXPY = " ".join(
    struct.pack(fmt, value).hex()
    for fmt, value in (("<f", 2.0), ("<Q", 0x10), ("<Q", 0x20), ("<i", 4))
)


def test_ctypes_values_reach_c_as_the_kernel_reads_them(probe):
    for case in ("ctypes", "ctypes_list", "typed", "typed_numpy_like", "packed"):
        seen = probe[case]
        assert seen["outcome"] == "returned", (case, seen)
        assert seen["c"] == f"f=0xf00 {AXPY}", (case, seen)
    assert probe["pack_type"] == "KernelArguments"


@pytest.mark.parametrize(
    ("case", "error", "match"),
    [
        ("too_few", "TypeError", r"the kernel takes 4 arguments \(3 given; cuFuncGetParamInfo\)"),
        (
            "wrong_size",
            "TypeError",
            r"argument 0 is c_double \(8 bytes\); the kernel's parameter 0 is 4",
        ),
        ("python_values", "TypeError", r"argument 0 is float: .*ctypes values.*typed\(f"),
        ("function_pointer", "TypeError", r"argument 0 is CFunctionType"),
        ("typed_int_for_float", "TypeError", r"argument 0 \(float a\): an int"),
        ("typed_float_for_int", "TypeError", r"argument 3 \(int n\): a float"),
        ("typed_out_of_range", "OverflowError", r"argument 3"),
        ("typed_too_many", "TypeError", r"takes 4 arguments \(5 given\)"),
        (
            "wrong_declaration",
            "TypeError",
            r"parameter 0 is 4 bytes; its signature declares double",
        ),
    ],
)
def test_what_the_kernel_cannot_read_is_refused_before_c(probe, case, error, match):
    seen = probe[case]
    assert seen["c"] == "", (case, seen)  # C was not called
    assert seen["outcome"].startswith(error + ": "), (case, seen)
    assert re.search(match, seen["outcome"]), (case, seen)


def test_where_libcuda_cannot_tell_the_values_pass_as_given(probe):
    # cuFuncGetParamInfo refuses the handle: the count and sizes are the caller's.
    for case in ("unknown", "unknown_typed"):
        seen = probe[case]
        assert seen["outcome"] == "returned", (case, seen)
        assert seen["c"].startswith("f=0xbad params=0x"), (case, seen)
        assert seen["c"] != "f=0xbad params=(nil)", (case, seen)


def test_typed_takes_kernel_handles_only(probe):
    assert probe["repr"] == (
        "<cudart.kernels.TypedKernel CUfunction 0xf00 (float a, const float *x, float *y, int n)>"
    )
    refusals = probe["refusals"]
    assert refusals["int"].startswith("TypeError: typed() takes a CUfunction or CUkernel"), refusals
    assert refusals["stream"].startswith("TypeError: typed() takes a CUfunction"), refusals
    assert refusals["null"] == "ValueError: typed(): a NULL kernel handle", refusals
    assert probe["backend"] in ("compiled", "ctypes")
