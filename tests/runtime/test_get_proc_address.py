"""cuGetProcAddress under the per-thread switch (issue 33 item 15), without a GPU.

cuda.h maps cuGetProcAddress to cuGetProcAddress_v2_ptsz under
CUDA_API_PER_THREAD_DEFAULT_STREAM, and defines that as a `static inline` function: no
driver exports it (tests/gpu/test_driver_exports.py). It calls cuGetProcAddress_v2 with
CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM where the flags name neither stream flag,
and so do the bindings where the library lacks the symbol
(generator/render/raw.py PER_THREAD_INLINES). What C received is read from the
recording stand-in libcuda (generator/render/stub.py: the symbol and each integer
argument), built with and without the symbol, in a fresh interpreter per case on the
backend in force (make test-ctypes runs this on ctypes too).
"""

from __future__ import annotations

import json

import pytest
from suite import run_python, version_keys

from generator.render.raw import PER_THREAD_INLINES
from generator.render.stub import ARGUMENTS_SYMBOL, RECORD_SIZE

pytestmark = pytest.mark.backend

INLINE = "cuGetProcAddress_v2_ptsz"
LEGACY = "cuGetProcAddress_v2"


def _newest_of_each_major() -> list[str]:
    newest: dict[str, str] = {}
    for key in version_keys():  # ascending
        newest[key.split(".")[0]] = key
    return list(newest.values())


KEYS = _newest_of_each_major()

_PROBE = """
import ctypes, json
from cudart import _backend, _loader, driver

lib = _loader.load_driver().cdll
log = (ctypes.c_char * LOG_SIZE).in_dll(lib, "LOG_NAME")
raw = driver.sys
out = {"backend": _backend.backend(), "symbol": raw.SYMBOLS["cuGetProcAddress"],
       "flags": {"DEFAULT": int(raw.CU_GET_PROC_ADDRESS_DEFAULT),
                 "LEGACY": int(raw.CU_GET_PROC_ADDRESS_LEGACY_STREAM),
                 "PER_THREAD": int(raw.CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)}}


def seen(fn, *args):
    ctypes.memset(log, 0, LOG_SIZE)
    try:
        outcome = f"returned {fn(*args)}"
    except Exception as exc:
        outcome = type(exc).__name__
    return [outcome, log.value.decode().splitlines()[:1]]


for flags in (0, 1, 2, 4, 5):
    out[f"checked {flags}"] = seen(driver.cuGetProcAddress, b"cuInit", 12000, flags)
out["checked_v2 0"] = seen(driver.cuGetProcAddress_v2, "cuInit", 12000, 0)
pfn, status = ctypes.c_void_p(), ctypes.c_int()
for flags in (0, ctypes.c_uint64(0), 1):
    out[f"raw {flags!r}"] = seen(raw.cuGetProcAddress, b"cuInit", ctypes.byref(pfn), 12000,
                                 flags, ctypes.byref(status))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def probe(header_sets, driver_stub):
    def run(key: str, switch: bool, exported: bool) -> dict:
        omit = () if exported else (INLINE,)
        stub = driver_stub(key, record=True, omit=omit)
        code = _PROBE.replace("LOG_SIZE", str(RECORD_SIZE)).replace("LOG_NAME", ARGUMENTS_SYMBOL)
        env = {
            "CUDART_LIBRARY": str(header_sets[key].library),
            "CUDART_DRIVER_LIBRARY": str(stub),
        }
        if switch:
            env["CUDART_PER_THREAD_DEFAULT_STREAM"] = "1"
        return json.loads(run_python(code, env=env).stdout.strip().splitlines()[-1])

    return run


def _reached(entry: list) -> tuple[str, int]:
    """(symbol, flags) of the call a probe's case made C see."""
    outcome, lines = entry
    # It reached the stub: the checked layer raises its status, the raw one returns it.
    assert outcome in ("CudaDriverErrorStubLibrary", "returned 34"), entry
    symbol, *fields = lines[0].split(" ")
    return symbol, int(dict(f.split("=") for f in fields)["flags"])


def test_the_table_is_cuda_h_s_inline():
    legacy, flags, mask, bit, why = PER_THREAD_INLINES[INLINE]
    assert (legacy, flags, bit) == (
        LEGACY,
        "flags",
        "CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM",
    )
    assert set(mask) == {bit, "CU_GET_PROC_ADDRESS_LEGACY_STREAM"} and "static inline" in why


@pytest.mark.parametrize("key", KEYS)
def test_without_the_exported_symbol_default_flags_ask_for_per_thread_versions(probe, key):
    out = probe(key, switch=True, exported=False)
    assert out["symbol"] == INLINE  # what C names; the library lacks it
    f = out["flags"]
    assert (f["DEFAULT"], f["LEGACY"], f["PER_THREAD"]) == (0, 1, 2)
    # cuda.h's body: flags with neither stream flag get the per-thread one; the rest stay.
    expected = {0: 2, 1: 1, 2: 2, 4: 6, 5: 5}
    for given, passed in expected.items():
        assert _reached(out[f"checked {given}"]) == (LEGACY, passed), given
    assert _reached(out["checked_v2 0"]) == (LEGACY, 2)
    assert _reached(out["raw 0"]) == (LEGACY, 2)
    assert _reached(out["raw c_ulong(0)"]) == (LEGACY, 2)
    assert _reached(out["raw 1"]) == (LEGACY, 1)


@pytest.mark.parametrize("key", KEYS)
def test_an_exported_per_thread_symbol_is_called_as_it_is(probe, key):
    out = probe(key, switch=True, exported=True)
    assert _reached(out["checked 0"]) == (INLINE, 0)
    assert _reached(out["raw 0"]) == (INLINE, 0)


@pytest.mark.parametrize("key", KEYS)
def test_without_the_switch_the_flags_are_the_callers(probe, key):
    out = probe(key, switch=False, exported=False)
    assert out["symbol"] == LEGACY
    for given in (0, 1, 2, 4, 5):
        assert _reached(out[f"checked {given}"]) == (LEGACY, given), given
    assert _reached(out["raw 0"]) == (LEGACY, 0)
