"""Which generated version serves the loaded library: the runtime's and NVRTC's alike.

The generated modules are modules of this package (cudart.sys_12050, cudart.nvrtc_12050):
each is a view of its family's merged module for one CUDA major (cudart/_views.py), which
in a checkout is a link to generated/ made by the generator, and in an installed wheel
the file itself. A loaded library's version picks
one of them by select_version's rules, once per process, here and nowhere else: the
package's `cudart.sys` and every helper module (kernels, nvrtc, occupancy, callbacks)
reach the serving module through raw_module / checked_module / nvrtc_modules, never
through the top-level package.
"""

from __future__ import annotations

import importlib
import os
import threading
import warnings

from . import _views
from ._loader import (
    DRIVER_LIBRARY_ENV,
    LIBRARY_ENV,
    format_version,
    load_driver,
    load_nvjitlink,
    load_nvrtc,
    load_runtime,
)
from .errors import BindingsVersionError

FORCE_ENV = "CUDART_BINDINGS_VERSION"

_PACKAGE = __name__.rpartition(".")[0]


def _versions(prefix: str) -> list[int]:
    """Versions of the generated modules named `<prefix><version>` (cudart._views'
    table: each is a view of its family's merged module), ascending."""
    return _views.versions(prefix.rstrip("_"))


def available_versions() -> list[int]:
    """CUDA versions with generated bindings, ascending (12050 for 12.5)."""
    return _versions("sys_")


def select_version(
    runtime: int, available: list[int], forced: str | None = None
) -> tuple[int, str | None]:
    """The bindings version for a runtime version, and a warning to give, if any.

    An exact match wins. Otherwise the newest bindings below the runtime within the
    same major version serve it: CUDA keeps its ABI within a major version, not across.
    A forced version must be of the runtime's major version; one newer than the
    runtime is allowed, with a warning.
    """
    if forced:
        return _forced(runtime, available, forced)
    if runtime in available:
        return runtime, None
    same_major = [v for v in available if v // 1000 == runtime // 1000 and v < runtime]
    if same_major:
        chosen = same_major[-1]
        return chosen, (
            f"no bindings for CUDA runtime {format_version(runtime)}; using the CUDA "
            f"{format_version(chosen)} bindings ({FORCE_ENV} overrides)"
        )
    raise BindingsVersionError(
        f"no bindings fit CUDA runtime {format_version(runtime)}; available: "
        f"{_listing(available)}. "
        f"Generate them with `cudart-bindgen add {format_version(runtime)}`, "
        f"or point ${LIBRARY_ENV} at a runtime of a version listed"
    )


def _forced(runtime: int, available: list[int], forced: str) -> tuple[int, str | None]:
    try:
        wanted = int(forced)
    except ValueError:
        raise BindingsVersionError(
            f"${FORCE_ENV}={forced!r} is not a version number like 12050"
        ) from None
    if wanted not in available:
        raise BindingsVersionError(
            f"${FORCE_ENV}={wanted}: no such bindings; available: {_listing(available)}"
        )
    if wanted // 1000 != runtime // 1000:
        # Struct layouts and argument types change across majors (cudaDeviceProp
        # is 1,032 bytes in 12.x, 1,008 in 13.x): such bindings would misread C.
        fitting = [v for v in available if v // 1000 == runtime // 1000]
        instead = f"force one of {_listing(fitting)}" if fitting else "unset it"
        raise BindingsVersionError(
            f"${FORCE_ENV}={wanted}: the CUDA {format_version(wanted)} bindings do not "
            f"fit the loaded CUDA {format_version(runtime)} runtime (CUDA's ABI changes "
            f"across major versions); {instead}, or point ${LIBRARY_ENV} at a CUDA "
            f"{wanted // 1000} runtime"
        )
    if wanted > runtime:
        return wanted, (
            f"${FORCE_ENV}={wanted}: the CUDA {format_version(wanted)} bindings are newer "
            f"than the loaded CUDA {format_version(runtime)} runtime; functions it lacks "
            "raise cudart.FunctionNotFoundError"
        )
    return wanted, None


def _listing(versions: list[int]) -> str:
    return ", ".join(format_version(v) for v in versions) or "none"


# -- the runtime: cudart.sys_<ver> (raw) and cudart.checked_<ver>

_selected: int | None = None
# Taken on the first call only (later ones read _selected): threads that race on the
# first `cudart.<name>` pick the version once, and its warning is given once, not once
# per thread that found _selected unset while the first was still loading libcudart.
_selecting = threading.Lock()


def runtime_version() -> int:
    """The bindings version serving the loaded libcudart (loads it on first call)."""
    global _selected
    if _selected is None:
        warning = None
        with _selecting:
            if _selected is None:
                runtime = load_runtime()
                version, warning = select_version(
                    runtime.version, available_versions(), os.environ.get(FORCE_ENV)
                )
                _selected = version
        if warning:
            # Given by the thread that picked, after the lock: a warnings hook that uses
            # cudart finds the version picked. Frames: this, raw_module/checked_module,
            # cudart.__getattr__, the user's line.
            warnings.warn(warning, RuntimeWarning, stacklevel=4)
    return _selected


def raw_module():
    """cudart.sys: the raw module serving the loaded libcudart."""
    return importlib.import_module(f"{_PACKAGE}.sys_{runtime_version()}")


def checked_module():
    """The checked module serving the loaded libcudart (what `cudart.<name>` reads)."""
    return importlib.import_module(f"{_PACKAGE}.checked_{runtime_version()}")


# -- the other header families: cudart.<family>_<ver> (raw), <family>_checked_<ver>


def _served(family: str, version):
    """`modules()`: the (raw, checked) modules of a header family at the version
    `version()` picks, imported on its first call, once for the process."""
    lock = threading.Lock()
    found: list[tuple] = []

    def modules() -> tuple:
        if found:
            return found[0]
        with lock:
            if not found:
                found.append(family_modules(family, version()))
        return found[0]

    return modules


def family_modules(family: str, number: int) -> tuple:
    """The (raw, checked) modules of a header family at one version: cudart.<family>_<ver>
    and cudart.<family>_checked_<ver>."""
    raw = importlib.import_module(f"{_PACKAGE}.{family}_{number}")
    return raw, importlib.import_module(f"{_PACKAGE}.{family}_checked_{number}")


def _own_library(load, family: str, label: str):
    """The version of a family with a library of its own (NVRTC, nvJitLink): the loaded
    library's, by the runtime's rules (no forced version: $CUDART_BINDINGS_VERSION is
    the runtime's)."""

    def version() -> int:
        number, warning = select_version(load().version, _versions(f"{family}_"))
        if warning:
            # Frames: this, _served's modules(), its caller, the user's line.
            warnings.warn(f"{label}: {warning}", RuntimeWarning, stacklevel=5)
        return number

    return version


# (raw, checked) NVRTC modules for the loaded libnvrtc.
nvrtc_modules = _served("nvrtc", _own_library(load_nvrtc, "nvrtc", "NVRTC"))
# (raw, checked) nvJitLink modules for the loaded libnvJitLink.
nvjitlink_modules = _served("nvjitlink", _own_library(load_nvjitlink, "nvjitlink", "nvJitLink"))


# -- the driver API: cudart.driver_<ver> (raw) and cudart.driver_checked_<ver>


def driver_versions() -> list[int]:
    """Versions with generated driver API bindings (cudart.driver_<ver>), ascending."""
    return _versions("driver_")


def driver_version() -> int:
    """The cuda.h version serving the driver API: the runtime's bindings version where
    a libcudart loads (the two APIs then share their records and handles' headers),
    else the newest not newer than the driver's cuDriverGetVersion."""
    from .errors import LibraryNotFoundError

    try:
        version = runtime_version()
    except LibraryNotFoundError:
        version = None
    available = driver_versions()
    if version in available:
        return version
    driver = load_driver()
    if not driver.version:
        # NVIDIA's stub libcuda (and a broken driver) fails cuDriverGetVersion: nothing
        # then says which headers it keeps the ABI of.
        raise BindingsVersionError(
            f"the driver ({driver.path}) cannot report its version (cuDriverGetVersion "
            "failed: a stub libcuda?), and no libcudart loaded to pick the driver API "
            f"bindings by; point ${LIBRARY_ENV} at a CUDA runtime, or ${DRIVER_LIBRARY_ENV} "
            "at the NVIDIA driver's libcuda.so.1"
        )
    fitting = [v for v in available if v <= driver.version]
    if not fitting:
        raise BindingsVersionError(
            f"no driver API bindings fit the CUDA {driver.version_text} driver "
            f"({driver.path}); available: {_listing(available)}"
        )
    return fitting[-1]


# (raw, checked) driver API modules, imported on first use (driver_version).
driver_modules = _served("driver", driver_version)
