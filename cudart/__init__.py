"""Python bindings to the CUDA runtime API, exact per CUDA version.

`cudart.cudaMalloc(...)`, and every other function, enum, constant and struct of the
CUDA runtime API, is the checked API of the version that matches the loaded libcudart:
failures raise `cudart.CudaError` subclasses and results are returned (see
`cudart.checked_<version>`). `cudart.sys` is the raw ctypes module of that version
(`cudart.sys_<version>`), which mirrors C.

The first access of either finds the library (see cudart._loader), asks its version
and imports the matching modules. `import cudart` itself loads nothing, so it works
on machines without CUDA; what it needs is found when it is first used.
"""

from __future__ import annotations

import importlib
import os
import warnings

from ._backend import backend
from ._binding import CudaDeprecationWarning, per_thread_default_stream
from ._loader import LIBRARY_ENV, format_version, load_runtime
from .errors import (
    BindingsVersionError,
    CompileError,
    CudaError,
    CudartError,
    FunctionNotFoundError,
    HandleDestroyedError,
    LibraryNotFoundError,
    NvrtcError,
    NvrtcNotFoundError,
)

# The package's own API. Every other public name is the checked API of the selected
# version, resolved on first access by __getattr__ below.
__all__ = [
    "BindingsVersionError",
    "CompileError",
    "CudaDeprecationWarning",
    "CudaError",
    "CudartError",
    "FunctionNotFoundError",
    "HandleDestroyedError",
    "HostMemory",
    "LibraryNotFoundError",
    "NvrtcError",
    "NvrtcNotFoundError",
    "available_versions",
    "backend",
    "check",
    "compile",
    "load_module",
    "load_runtime",
    "per_thread_default_stream",
    "select_version",
    "sys",
]

FORCE_ENV = "CUDART_BINDINGS_VERSION"

# The generated modules are modules of this package (cudart.sys_12050): in a checkout,
# cudart/sys_12050.py is a link to generated/sys_12050.py, made by the generator; in
# an installed wheel it is the file itself. One name each, found by every tool.


def _module_version(file_name: str) -> int | None:
    """12050 for "sys_12050.py"; None for any other name. String methods, not re:
    `import cudart` would pay several milliseconds to import re."""
    digits = file_name.removeprefix("sys_").removesuffix(".py")
    if (
        len(digits) + 7 == len(file_name)
        and len(digits) >= 5
        and digits.isascii()
        and digits.isdigit()
    ):
        return int(digits)
    return None


def available_versions() -> list[int]:
    """CUDA versions with generated bindings, ascending (12050 for 12.5)."""
    found = set()
    for folder in __path__:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            version = _module_version(name)
            if version is not None and os.path.exists(os.path.join(folder, name)):
                found.add(version)  # (exists: not a dangling link)
    return sorted(found)


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


def _listing(versions: list[int]) -> str:
    return ", ".join(format_version(v) for v in versions) or "none"


_selected: int | None = None


def _selected_version() -> int:
    global _selected
    if _selected is None:
        runtime = load_runtime()
        version, warning = select_version(
            runtime.version, available_versions(), os.environ.get(FORCE_ENV)
        )
        if warning:
            warnings.warn(warning, RuntimeWarning, stacklevel=4)
        _selected = version
    return _selected


def check(status: int) -> None:
    """Raise what the checked API would for a `cudaError_t` status: the CudaError
    subclass of its code (CudaErrorMemoryAllocation for 2, ...), with the loaded
    runtime's name and message. Returns None for cudaSuccess (0).

    For code that holds a raw status: the raw layer's return values, a stream
    callback's `status` argument, a status passed across threads.
    """
    if isinstance(status, bool) or not isinstance(status, int):
        raise TypeError(f"status must be an int (a cudaError_t), not {type(status).__name__}")
    if status:
        from ._checked import error

        raise error(status, _load_selected())


def _load_selected():
    return importlib.import_module(f"{__name__}.sys_{_selected_version()}")


def _load_checked():
    return importlib.import_module(f"{__name__}.checked_{_selected_version()}")


# Names the raw modules import for their own use (ctypes, enum): not the CUDA API.
_NOT_API = frozenset(
    {
        "annotations",
        "bind_on_first_lookup",
        "IntEnumBase",
        "int_enum",
        "per_thread_default_stream",
        "require_alignment",
        "SYMBOLS",
        "SYMBOLS_LEGACY",
        "SYMBOLS_PER_THREAD",
        "TYPE_CHECKING",
    }
)


# Helpers beyond the generated API, imported on first use to keep `import cudart` cheap.
_SUBMODULES = frozenset({"kernels", "occupancy", "callbacks", "nvrtc"})


def __getattr__(name: str):
    if name == "sys":
        module = _load_selected()
        globals()["sys"] = module
        return module
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "HostMemory":  # what the checked cudaHostAlloc & co. return
        from ._hostmem import HostMemory

        globals()[name] = HostMemory
        return HostMemory
    if name == "compile":  # NVRTC: loaded on the first compile, not here
        from .nvrtc import compile

        globals()[name] = compile
        return compile
    if name.startswith("NvrtcError"):  # NvrtcErrorInvalidOption, ...: of the loaded NVRTC
        from .nvrtc import _bindings

        return getattr(_bindings()[1], name)
    if name == "load_module":
        from .kernels import load_module

        globals()[name] = load_module
        return load_module
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # The checked module holds the functions and error classes; the raw module the
    # enums, constants, records and handle types (the checked one imports those it uses).
    checked = _load_checked()
    value = checked.__dict__.get(name, _MISSING)
    if value is _MISSING:
        value = _load_selected().__dict__.get(name, _MISSING)
    if value is _MISSING and name.startswith("CudaError"):
        value = getattr(checked, name, _MISSING)  # made on first use
    if value is _MISSING or name in _NOT_API or name.startswith("_") or _from_ctypes(name, value):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later lookups are plain attribute reads
    return value


_MISSING = object()


def _from_ctypes(name: str, value) -> bool:
    import ctypes

    return getattr(ctypes, name, None) is value
