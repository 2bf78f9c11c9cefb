"""The machine's libcuda exports every symbol the driver API bindings would call.

The gcc judge (tests/generator/test_abi.py) checks each cudart.driver_<ver> module's
symbols against cuda.h's own expansion, but the development machine has no libcuda:
this is the other half, on the GPU machine. A driver serves every cuda.h up to its own
version, so each module no newer than cuDriverGetVersion must find all of its symbols,
legacy and per-thread (cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds), in the real library.
"""

from __future__ import annotations

import ctypes
import importlib

import pytest

from cudart._loader import format_version, load_driver
from cudart._serving import driver_versions
from cudart.errors import DriverNotFoundError

from .conftest import gpu_required


@pytest.fixture(scope="module")
def driver():
    try:
        return load_driver()
    except DriverNotFoundError as exc:
        if gpu_required():
            raise
        pytest.skip(f"no libcuda.so.1: {exc}")


def module_symbols(version: int) -> set[str]:
    """Every symbol a driver module binds, under either stream mode."""
    ns = vars(importlib.import_module(f"cudart.driver_{version}"))
    return set(ns["SYMBOLS_LEGACY"].values()) | set(ns["SYMBOLS_PER_THREAD"].values())


# Symbols cuda.h names that the driver does not export, seen on the H200 machine (driver
# 580.159.04, CUDA 13.0): cuda.h maps cuGetProcAddress to cuGetProcAddress_v2_ptsz under
# CUDA_API_PER_THREAD_DEFAULT_STREAM (every version pinned) and defines it `static
# inline` (it calls cuGetProcAddress_v2 with the per-thread flag), so libcuda exports
# only cuGetProcAddress_v2. The generator's reviewed table (generator/render/raw.py
# PER_THREAD_INLINES) names them, each raw module's _PER_THREAD_INLINES its own: where
# the library lacks one, the bindings call what the inline calls, with its flags.
def not_exported(version: int) -> set[str]:
    ns = vars(importlib.import_module(f"cudart.driver_{version}"))
    return set(ns.get("_PER_THREAD_INLINES", {}))


def test_driver_exports_every_symbol_of_the_modules_it_serves(driver):
    assert driver.version > 0, f"{driver.path}: cuDriverGetVersion failed (a stub libcuda?)"
    served = [v for v in driver_versions() if v <= driver.version]
    assert served, f"no driver module at or below {format_version(driver.version)}"
    lib = ctypes.CDLL(driver.path)
    missing = {}
    checked = 0
    for version in served:
        symbols = module_symbols(version)
        checked += len(symbols)
        inline = not_exported(version)
        assert inline == {"cuGetProcAddress_v2_ptsz"}, version
        absent = sorted(s for s in symbols - inline if not hasattr(lib, s))
        # The table stays true: a driver that starts exporting one fails here.
        assert not [s for s in inline & symbols if hasattr(lib, s)], version
        if absent:
            missing[version] = absent
    assert checked > 500 * len(served)
    assert not missing, "\n".join(
        f"cudart.driver_{v}: {len(names)} symbols {driver.path} "
        f"({format_version(driver.version)}) lacks: {', '.join(names[:40])}"
        for v, names in missing.items()
    )


def test_per_thread_symbols_are_exported(driver):
    """Not vacuous: the per-thread twins of the stream-ordered calls are real symbols."""
    served = [v for v in driver_versions() if v <= driver.version]
    assert served, f"no driver module at or below {format_version(driver.version)}"
    ns = vars(importlib.import_module(f"cudart.driver_{served[-1]}"))
    per_thread = ns["SYMBOLS_PER_THREAD"]
    assert per_thread["cuMemcpyAsync"] == "cuMemcpyAsync_ptsz"
    assert per_thread["cuMemcpyHtoD"] == "cuMemcpyHtoD_v2_ptds"
    lib = ctypes.CDLL(driver.path)
    for name in ("cuMemcpyAsync", "cuMemcpyHtoD", "cuLaunchKernel", "cuStreamSynchronize"):
        assert hasattr(lib, per_thread[name]), per_thread[name]
