"""Python bindings to the CUDA runtime API, exact per CUDA version.

`cudart.sys` is the raw ctypes module generated for the loaded libcudart: the first
access finds the library (see cudart._loader), asks its version and imports the
matching `cudart.sys_<version>` module. `import cudart` itself loads nothing, so it
works on machines without CUDA; what it needs is found when it is first used.
"""

from __future__ import annotations

import importlib
import os
import re
import sys as _sys
import warnings
from pathlib import Path

from ._loader import LIBRARY_ENV, format_version, load_runtime
from .errors import (
    BindingsVersionError,
    CudartError,
    FunctionNotFoundError,
    LibraryNotFoundError,
)

__all__ = [
    "BindingsVersionError",
    "CudartError",
    "FunctionNotFoundError",
    "LibraryNotFoundError",
    "available_versions",
    "load_runtime",
    "select_version",
    "sys",
]

FORCE_ENV = "CUDART_BINDINGS_VERSION"

# The generated modules live in generated/ beside this package in a source tree and
# in cudart/_generated in an installed wheel (see pyproject.toml); both are searched
# as part of this package, so they import as cudart.sys_12050.
_here = Path(__file__).resolve().parent
for _dir in (_here / "_generated", _here.parent / "generated"):
    if _dir.is_dir() and str(_dir) not in __path__:
        __path__.append(str(_dir))

_MODULE_NAME = re.compile(r"^sys_(\d{5,})\.py$")


def available_versions() -> list[int]:
    """CUDA versions with generated bindings, ascending (12050 for 12.5)."""
    found = set()
    for folder in __path__:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            match = _MODULE_NAME.match(name)
            if match:
                found.add(int(match.group(1)))
    return sorted(found)


def select_version(runtime: int, available: list[int], forced: str | None = None) -> tuple[int, str | None]:
    """The bindings version for a runtime version, and a warning to give, if any.

    An exact match wins. Otherwise the newest bindings below the runtime within the
    same major version serve it: CUDA keeps its ABI within a major version, not across.
    """
    if forced:
        try:
            wanted = int(forced)
        except ValueError:
            raise BindingsVersionError(f"${FORCE_ENV}={forced!r} is not a version number like 12050") from None
        if wanted not in available:
            raise BindingsVersionError(
                f"${FORCE_ENV}={wanted}: no such bindings; available: {_listing(available)}"
            )
        return wanted, None
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
        f"{_listing(available)}. Generate them with `cudart-bindgen add {format_version(runtime)}`, "
        f"or point ${LIBRARY_ENV} at a runtime of a version listed"
    )


def _listing(versions: list[int]) -> str:
    return ", ".join(format_version(v) for v in versions) or "none"


def _load_selected():
    runtime = load_runtime()
    version, warning = select_version(
        runtime.version, available_versions(), os.environ.get(FORCE_ENV)
    )
    if warning:
        warnings.warn(warning, RuntimeWarning, stacklevel=3)
    return importlib.import_module(f"{__name__}.sys_{version}")


def __getattr__(name: str):
    if name == "sys":
        module = _load_selected()
        globals()["sys"] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
