"""Python bindings to the CUDA runtime API, exact per CUDA version.

`cudart.cudaMalloc(...)`, and every other function, enum, constant and struct of the
CUDA runtime API, is the checked API of the version that matches the loaded libcudart:
failures raise `cudart.CudaError` subclasses and results are returned (see
`cudart.checked_<version>`). `cudart.sys` is the raw ctypes module of that version
(`cudart.sys_<version>`), which mirrors C.

The first access of either finds the library (see cudart._loader), asks its version
and imports the matching modules (cudart._serving picks them). `import cudart` itself
loads nothing, so it works on machines without CUDA; what it needs is found when it is
first used.
"""

from __future__ import annotations

from . import _views

# Before anything imports a version's module: cudart.sys_12050 and the other views are
# made from one merged file per family and major (cudart/_views.py).
_views.install()

from . import _serving  # noqa: E402
from ._backend import backend  # noqa: E402
from ._binding import CudaDeprecationWarning, per_thread_default_stream  # noqa: E402
from ._loader import load_runtime  # noqa: E402
from ._serving import FORCE_ENV as FORCE_ENV  # noqa: E402  (the switch's name, as before)
from ._serving import available_versions, select_version  # noqa: E402
from .errors import (  # noqa: E402
    BindingsVersionError,
    CompileError,
    CudaDriverError,
    CudaError,
    CudartError,
    DriverNotFoundError,
    FunctionNotFoundError,
    HandleDestroyedError,
    LibraryNotFoundError,
    LinkError,
    NvjitlinkError,
    NvjitlinkNotFoundError,
    NvrtcError,
    NvrtcNotFoundError,
)

# The package's own API. Every other public name is the checked API of the selected
# version, resolved on first access by __getattr__ below.
__all__ = [
    "BindingsVersionError",
    "CompileError",
    "CudaDeprecationWarning",
    "CudaDriverError",
    "CudaError",
    "CudartError",
    "DriverNotFoundError",
    "FunctionNotFoundError",
    "HandleDestroyedError",
    "HostMemory",
    "LibraryNotFoundError",
    "LinkError",
    "NvjitlinkError",
    "NvjitlinkNotFoundError",
    "NvrtcError",
    "NvrtcNotFoundError",
    "OptionsWritten",
    "as_array",
    "available_versions",
    "backend",
    "check",
    "compile",
    "link",
    "load_module",
    "load_runtime",
    "per_thread_default_stream",
    "select_version",
    "sys",
]


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

        raise error(status, _serving.raw_module())


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
_SUBMODULES = frozenset(
    {"kernels", "occupancy", "callbacks", "nvrtc", "linking", "arrays", "driver"}
)
# Functions of those submodules offered as cudart.<name>: NVRTC and nvJitLink load on
# the first compile and link, not at import.
_LAZY = {"compile": "nvrtc", "link": "linking", "as_array": "arrays", "load_module": "kernels"}


def __getattr__(name: str):
    # Threads (free-threaded Python too): nothing here is check-then-act. A thread that
    # asks for a submodule another is still importing waits on cudart._lazy's lock; the
    # version is picked once (cudart._serving); what is stored in globals() is the same
    # object whichever thread stores it.
    if name == "sys":
        module = _serving.raw_module()
        globals()["sys"] = module
        return module
    if name in _SUBMODULES or name in _LAZY:
        # Under cudart's import lock (cudart._lazy): threads whose first calls import
        # these at once would otherwise see one another's half-imported modules.
        from . import _lazy

        module = _lazy.module("." + (name if name in _SUBMODULES else _LAZY[name]))
        if name in _SUBMODULES:
            return module
        value = globals()[name] = getattr(module, name)
        return value
    if name == "HostMemory":  # what the checked cudaHostAlloc & co. return
        from ._hostmem import HostMemory

        globals()[name] = HostMemory
        return HostMemory
    if name == "OptionsWritten":  # what typed JIT options return (cuModuleLoadDataEx, ...)
        from ._jitoptions import OptionsWritten

        globals()[name] = OptionsWritten
        return OptionsWritten
    if name.startswith("NvrtcError"):  # NvrtcErrorInvalidOption, ...: of the loaded NVRTC
        from ._serving import nvrtc_modules

        return getattr(nvrtc_modules()[1], name)
    if name.startswith("NvjitlinkError"):  # NvjitlinkErrorInvalidInput, ...
        from ._serving import nvjitlink_modules

        return getattr(nvjitlink_modules()[1], name)
    if name.startswith("_"):
        # Never the API's (below): and `from cudart import _checked`, which the generated
        # modules run, asks here before importing the submodule, so a private name must
        # not load libcudart: the driver API serves without one.
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # The checked module holds the functions and error classes; the raw module the
    # enums, constants, records and handle types (the checked one imports those it uses).
    checked = _serving.checked_module()
    value = checked.__dict__.get(name, _MISSING)
    if value is _MISSING:
        value = _serving.raw_module().__dict__.get(name, _MISSING)
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
