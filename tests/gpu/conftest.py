"""GPU tests: marked `gpu`, and skipped with the reason where no usable GPU is present.

They run in-process against whichever libcudart cudart finds ($CUDART_LIBRARY picks
one); the GPU run records the runtime each time (see tests/gpu/RESULTS.md).
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest

KERNELS = Path(__file__).resolve().parent.parent / "kernels"


def _gpu_state() -> tuple[bool, str]:
    try:
        import cudart

        rt = cudart.sys
    except Exception as exc:  # no library, no bindings: say which
        return False, f"no CUDA runtime: {exc}"
    count = ctypes.c_int(0)
    status = rt.cudaGetDeviceCount(ctypes.byref(count))
    if status != 0:
        name = rt.cudaGetErrorName(status).decode()
        return False, f"no usable GPU: cudaGetDeviceCount returned {name} ({status})"
    if count.value == 0:
        return False, "no GPU: cudaGetDeviceCount found 0 devices"
    return True, ""


_STATE = _gpu_state()


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    available, reason = _STATE
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.gpu)
            if not available:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def rt():
    """The raw bindings module selected for the loaded runtime."""
    import cudart

    return cudart.sys


@pytest.fixture(scope="session")
def runtime_version(rt) -> int:
    v = ctypes.c_int()
    assert rt.cudaRuntimeGetVersion(ctypes.byref(v)) == 0
    return v.value


def check(rt, status: int) -> None:
    """Assert a raw call succeeded, naming the error if not."""
    if status != 0:
        raise AssertionError(
            f"{rt.cudaGetErrorName(status).decode()} ({status}): "
            f"{rt.cudaGetErrorString(status).decode()}"
        )


def pytest_report_header(config):
    try:
        import cudart

        r = cudart.load_runtime()
        return [
            f"runtime: {r.version_text} ({r.path}, found by {r.found_by}; "
            f"bindings {cudart.sys.__name__})"
        ]
    except Exception as exc:
        return [f"runtime: none ({exc})"]


@pytest.fixture
def dev(rt):
    """Device memory (tests/gpu/support.py's Device), freed at the end of the test."""
    from .support import Device

    d = Device(rt)
    yield d
    for p in d.pointers:
        rt.cudaFree(p)
