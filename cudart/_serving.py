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
from ._contract import CUDA_SCALE
from ._loader import RUNTIME, facts, format_version, load_library, load_runtime, release_text
from .errors import BindingsVersionError

FORCE_ENV = "CUDART_BINDINGS_VERSION"

_PACKAGE = __name__.rpartition(".")[0]


def available_versions() -> list[int]:
    """CUDA versions with generated bindings, ascending (12050 for 12.5)."""
    return _views.versions(facts(RUNTIME)["raw"])


def _runtime_env() -> str:
    return facts(RUNTIME)["env"]


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
    chosen = fitting_version(runtime, available, CUDA_SCALE)
    if chosen == runtime:
        return runtime, None
    if chosen is not None:
        return chosen, (
            f"no bindings for CUDA runtime {format_version(runtime)}; using the CUDA "
            f"{format_version(chosen)} bindings ({FORCE_ENV} overrides)"
        )
    raise BindingsVersionError(
        f"no bindings fit CUDA runtime {format_version(runtime)}; available: "
        f"{_listing(available)}. "
        f"Generate them with `cudart-bindgen add {format_version(runtime)}`, "
        f"or point ${_runtime_env()} at a runtime of a version listed"
    )


def fitting_version(version: int, available: list[int], scale: tuple[int, int]) -> int | None:
    """The rule of every axis: the bindings of the release `version` is of (its patch,
    what is below minor_scale, dropped: NCCL's 22105 is release 22100), else the newest
    older release of the same major (a library keeps its ABI within a major, not
    across), else None. `available` ascending; `scale` the family's numbering."""
    major_scale, minor_scale = scale
    release = version - version % minor_scale
    if release in available:
        return release
    older = [v for v in available if v // major_scale == version // major_scale and v < release]
    return older[-1] if older else None


def select_release(family: str, version: int, available: list[int]) -> tuple[int, str | None]:
    """The bindings release for an own-axis family's loaded library (its version, on its
    own scale), and a warning to give, if any: fitting_version's rule, never forced."""
    row = facts(family)
    chosen = fitting_version(version, available, row["scale"])
    if chosen is None:
        listing = ", ".join(format_version(v, row["scale"]) for v in available) or "none"
        raise BindingsVersionError(
            f"no bindings fit {release_text(row, version)}; available: {listing}. "
            f"Generate them with `cudart-bindgen add --family {family} "
            f"{format_version(version, row['scale'])}`, or point ${row['env']} at a "
            f"{row['library']} of a release listed"
        )
    if chosen == version - version % row["scale"][1]:
        return chosen, None
    return chosen, (
        f"no bindings for {release_text(row, version)}; using the "
        f"{release_text(row, chosen)} bindings"
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
            f"across major versions); {instead}, or point ${_runtime_env()} at a CUDA "
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
    return importlib.import_module(f"{_PACKAGE}.{facts(RUNTIME)['raw']}_{runtime_version()}")


def checked_module():
    """The checked module serving the loaded libcudart (what `cudart.<name>` reads)."""
    return importlib.import_module(f"{_PACKAGE}.{facts(RUNTIME)['checked']}_{runtime_version()}")


# -- every header family: cudart.<raw>_<ver> and cudart.<checked>_<ver>, by its table row


def family_modules(family: str, number: int) -> tuple:
    """The (raw, checked) modules of a header family at one version (cudart.nvrtc_12050
    and cudart.nvrtc_checked_12050: the names the family table gives)."""
    row = facts(family)
    raw = importlib.import_module(f"{_PACKAGE}.{row['raw']}_{number}")
    return raw, importlib.import_module(f"{_PACKAGE}.{row['checked']}_{number}")


def _own_library(family: str):
    """The version of a family with a library of its own (NVRTC, nvJitLink): the loaded
    library's, by the runtime's rules (no forced version: $CUDART_BINDINGS_VERSION is
    the runtime's); an own-axis family's (NCCL) by the same rule on its own releases."""

    def version() -> int:
        row = facts(family)
        found, available = load_library(family).version, _views.versions(row["raw"])
        if row["axis"] == "cuda":
            number, warning = select_version(found, available)
        else:
            number, warning = select_release(family, found, available)
        if warning:
            # Frames: this, served's modules(), its caller, the user's line.
            warnings.warn(f"{row['provider']}: {warning}", RuntimeWarning, stacklevel=5)
        return number

    return version


def _follows_runtime(family: str):
    """The version of a family whose library serves every older API (the driver's): the
    runtime's bindings version where a libcudart loads (the two APIs then share their
    records and handles' headers), else the newest not newer than the library's."""

    def version() -> int:
        from .errors import LibraryNotFoundError

        row = facts(family)
        try:
            number = runtime_version()
        except LibraryNotFoundError:
            number = None
        available = _views.versions(row["raw"])
        if number in available:
            return number
        library = load_library(family)
        if not library.version:
            # NVIDIA's stub libcuda (and a broken driver) fails cuDriverGetVersion:
            # nothing then says which headers it keeps the ABI of.
            raise BindingsVersionError(
                f"the {row['provider']} ({library.path}) cannot report its version "
                f"({row['probe']} failed: a stub {row['library']}?), and no libcudart "
                f"loaded to pick the {family} API bindings by; point ${_runtime_env()} at a "
                f"CUDA runtime, or ${row['env']} at the {row['provider']}'s "
                f"{row['sonames'][0]}"
            )
        fitting = [v for v in available if v <= library.version]
        if not fitting:
            raise BindingsVersionError(
                f"no {family} API bindings fit the CUDA {library.version_text} "
                f"{row['provider']} ({library.path}); available: {_listing(available)}"
            )
        return fitting[-1]

    return version


def served(family: str):
    """`modules()` of a family: (raw, checked) at the version its table row's `serve`
    rule picks for the loaded library, imported on the first call, once for the
    process (the table is read then too: `import cudart` does not need it)."""
    lock = threading.Lock()
    found: list = []

    def modules() -> tuple:
        if not found:
            with lock:
                if not found:
                    found.append(family_modules(family, version_rule(family)()))
        return found[0]

    return modules


def version_rule(family: str):
    """The function that picks a family's bindings version, by its table row's `serve`."""
    rule = facts(family)["serve"]
    if rule == "runtime":
        return runtime_version
    if rule == "driver":
        return _follows_runtime(family)
    return _own_library(family)


def driver_versions() -> list[int]:
    """Versions with generated driver API bindings (cudart.driver_<ver>), ascending."""
    return _views.versions(facts("driver")["raw"])


# The families whose own modules ask for them by name (cudart.nvrtc, cudart.link,
# cudart.driver): (raw, checked) for the loaded library, imported on first use.
driver_modules = served("driver")
nvrtc_modules = served("nvrtc")
nvjitlink_modules = served("nvjitlink")
