"""What the ports of the peers' runtime tests share: where each upstream file was read,
the optional packages some ports need, and version answers for their skips.

Each test names its upstream test as `repo@commit:path::test`, with the commit read
(the full hashes are below). The ports keep the upstream values, sizes and assertions;
they differ only where cudart's checked API differs in shape (an error raises instead
of coming back in an `(err, value)` tuple; outputs are returned, not written through
pointers; a handle read out of a struct field is a ctypes view).
"""

from __future__ import annotations

import ctypes
import importlib
from types import ModuleType

import pytest

import cudart
from cudart._contract import declares as _declares

# The upstream files as read for these ports (repository, commit, path).
CUDA_PYTHON = "NVIDIA/cuda-python"
LEGACY_CUDART = (
    "NVIDIA/cuda-python@77b08ffde34fd25cce3b16e4692a2797a8cc4fb9:"
    "cuda_bindings/tests/legacy_api/test_legacy_cudart.py"
)
TEST_CUDART = (
    "NVIDIA/cuda-python@11a9013d26c7f38a5f8a1e2aaf9f9a02a004b393:"
    "cuda_bindings/tests/test_cudart.py"
)
INTEROPERABILITY = (
    "NVIDIA/cuda-python@3ab96436137577d95d7517fa935bd457d57032d9:"
    "cuda_bindings/tests/test_interoperability.py"
)
UTILS = (
    "NVIDIA/cuda-python@0b5c438195d3ccf8e32c8aead36bbe780ee05b18:"
    "cuda_bindings/tests/test_utils.py"
)
CUPY_RUNTIME = (
    "cupy/cupy@01812b53ad27ec30c932dab35a32a8b730b87680:"
    "tests/cupy_tests/cuda_tests/test_runtime.py"
)
CUPY_STREAM = (
    "cupy/cupy@0130cf4086bf7a8791b3d2bf50432e63663500fe:"
    "tests/cupy_tests/cuda_tests/test_stream.py"
)
CUPY_GRAPH = (
    "cupy/cupy@00faa33b94c30fe3476b6d4bbc90c26a6ad71c2a:"
    "tests/cupy_tests/cuda_tests/test_graph.py"
)


def numpy() -> ModuleType:
    """NumPy, which the upstream tests build their host buffers with: a requirement of
    the suite (requirements/dev.txt), so its absence fails rather than skips."""
    return importlib.import_module("numpy")


def cupy() -> ModuleType:
    """CuPy, for ports whose upstream computes on the GPU with CuPy arrays."""
    return pytest.importorskip(
        "cupy", reason="the upstream test computes with CuPy arrays; CuPy is not installed"
    )


def cuda_bindings_driver() -> ModuleType:
    """cuda-bindings' driver module: cudart binds the runtime only."""
    try:
        return importlib.import_module("cuda.bindings.driver")
    except ImportError:
        pytest.skip("the driver API side needs cuda-bindings (cuda.bindings.driver)")


def cuda_bindings_runtime() -> ModuleType:
    try:
        return importlib.import_module("cuda.bindings.runtime")
    except ImportError:
        pytest.skip("needs cuda-bindings (cuda.bindings.runtime)")


def declares(name: str) -> bool:
    """Whether the loaded runtime's bindings declare the function `name`."""
    return _declares(cudart.sys, name)


def runtime_version() -> int:
    return int(cudart.cudaRuntimeGetVersion())


def driver_version() -> int:
    return int(cudart.cudaDriverGetVersion())


def require(name: str, since: int | None = None) -> None:
    """Skip, as upstream does, where the function is not declared by the loaded
    runtime's header or the driver is older than `since`."""
    if not declares(name):
        pytest.skip(f"{name} is not in the CUDA {runtime_version()} runtime's headers")
    if since is not None and driver_version() < since:
        pytest.skip(f"{name} needs a CUDA {since // 1000}.{since % 1000 // 10}+ driver")


def device_attribute(attr: int, device: int = 0) -> int:
    return int(cudart.cudaDeviceGetAttribute(attr, device))


def clear_last_error() -> None:
    """The runtime keeps the last failure; the raw call reads and resets it."""
    cudart.sys.cudaGetLastError()


def address(buffer) -> int:
    """The address of a NumPy array's data, or of a ctypes object."""
    if hasattr(buffer, "ctypes"):
        return int(buffer.ctypes.data)
    return ctypes.addressof(buffer)
