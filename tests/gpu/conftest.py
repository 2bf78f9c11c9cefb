"""GPU tests: marked `gpu`. Where no usable GPU is present they skip with the reason
(the CPU CI), unless $CUDART_REQUIRE_GPU is set (tests/gpu/run_on_device.sh sets it):
then each of them fails with that reason, so a GPU run that saw no GPU cannot pass.

A module that sets `CPU_CHECKS = True` holds CPU checks of this suite's own machinery
(the harness, argument handling of calls the device's driver cannot run): it is neither
marked nor skipped here, and the GPU run (no generator cache there) deselects it.

They run in-process against whichever libcudart cudart finds ($CUDART_LIBRARY picks
one); the GPU run records the runtime each time (see tests/gpu/RESULTS.md).

Several runs can share the GPU (run_on_device.sh's JOBS): then $CUDART_GPU_LOCK names a
file each test holds a shared lock on while it runs, and a test marked
`device_exclusive` (it reads device-wide state, such as cudaMemGetInfo's free memory,
that another process changes) an exclusive one.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
from pathlib import Path

import pytest

KERNELS = Path(__file__).resolve().parent.parent / "kernels"
REQUIRE_GPU = "CUDART_REQUIRE_GPU"
GPU_LOCK = "CUDART_GPU_LOCK"


def gpu_required() -> bool:
    return os.environ.get(REQUIRE_GPU, "") not in ("", "0")


def _gpu_state() -> tuple[bool, str]:
    try:
        import cudart

        rt = cudart.sys
    except Exception as exc:  # no library, no bindings: say which
        return False, f"no CUDA runtime: {type(exc).__name__}: {exc}"
    count = ctypes.c_int(0)
    status = rt.cudaGetDeviceCount(ctypes.byref(count))
    if status != 0:
        name = rt.cudaGetErrorName(status).decode()
        return False, f"no usable GPU: cudaGetDeviceCount returned {name} ({status})"
    if count.value == 0:
        return False, "no GPU: cudaGetDeviceCount found 0 devices"
    return True, ""


_STATE = _gpu_state()


def _cpu_checks(item) -> bool:
    return bool(getattr(getattr(item, "module", None), "CPU_CHECKS", False))


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    available, reason = _STATE
    ours = [i for i in items if here in Path(str(i.fspath)).resolve().parents]
    cpu = [i for i in ours if _cpu_checks(i)]
    if gpu_required() and cpu:  # the CPU CI's business: not run, so not counted as skips
        config.hook.pytest_deselected(items=cpu)
        items[:] = [i for i in items if i not in cpu]
    for item in ours:
        if item in cpu:
            continue
        item.add_marker(pytest.mark.gpu)
        if not available and not gpu_required():
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Set-up, call and tear-down of a test under the GPU lock, where runs share a GPU."""
    path = os.environ.get(GPU_LOCK)
    if not path:
        yield
        return
    exclusive = item.get_closest_marker("device_exclusive") is not None
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def pytest_runtest_setup(item):
    available, reason = _STATE
    if not available and gpu_required() and item.get_closest_marker("gpu"):
        pytest.fail(f"${REQUIRE_GPU} is set and there is {reason}", pytrace=False)


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


@pytest.fixture(scope="module")
def primary_driver():
    """cudart.driver with the runtime's primary context of device 0 current on this
    thread (the runtime makes it current; the driver then launches into it), released
    after the module's tests; a skip where this version has no driver bindings."""
    import cudart
    from cudart import _serving, driver

    try:
        _serving.driver_modules()
    except ModuleNotFoundError as exc:  # a version whose driver bindings are not generated
        pytest.skip(f"no driver bindings: {exc}")
    cudart.cudaSetDevice(0)
    cudart.cudaFree(0)
    driver.cuInit(0)
    context = driver.cuDevicePrimaryCtxRetain(0)
    driver.cuCtxSetCurrent(context)
    yield driver
    driver.cuDevicePrimaryCtxRelease(0)


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
