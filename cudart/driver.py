"""The CUDA driver API (cuda.h), checked: `cudart.driver.cuMemAlloc(n)` returns the
device address, and a failure raises a cudart.CudaDriverError subclass (one per
CUresult code, named after it: CUDA_ERROR_INVALID_VALUE raises
cudart.driver.CudaDriverErrorInvalidValue).

The module serving the names is generated from cuda.h: `cudart.driver_checked_<ver>`
(and `cudart.driver.sys`, the raw layer, `cudart.driver_<ver>`) of the version
`bindings_version` names: the loaded runtime's where a libcudart loads, so that both
APIs share one set of headers, else the newest not newer than the driver. Nothing is
loaded until a name is first looked up; without libcuda.so.1 (no NVIDIA driver) that
lookup still works and the first call raises cudart.DriverNotFoundError. `dir()` works
without either library: with neither to pick the version, it lists the newest
bindings' names.
"""

from __future__ import annotations

from . import _serving
from .errors import BindingsVersionError, LibraryNotFoundError


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raw, checked = _serving.driver_modules()
    if name == "sys":
        globals()["sys"] = raw
        return raw
    if name == "bindings_version":
        return raw.CUDA_VERSION
    value = checked.__dict__.get(name, _MISSING)
    if value is _MISSING:
        value = raw.__dict__.get(name, _MISSING)
    if value is _MISSING and name.startswith("CudaDriverError"):
        return getattr(checked, name)  # the per-code classes, made on first use
    if value is _MISSING:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return value


def __dir__() -> list[str]:
    try:
        raw, checked = _serving.driver_modules()
    except (LibraryNotFoundError, BindingsVersionError):
        # No driver (or none that says its version) and no runtime: nothing picks the
        # version that would serve, so the names are the newest bindings' (the module
        # serves none of them; a lookup says why).
        versions = _serving.driver_versions()
        if not versions:
            raise
        raw, checked = _serving.family_modules("driver", versions[-1])
    public = {n for n in (*vars(checked), *vars(raw)) if not n.startswith("_")}
    return sorted(public | {"bindings_version", "sys"})


_MISSING = object()
