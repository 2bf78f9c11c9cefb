"""What the tests of the compiled backend share: whether it is built, and why not."""

from __future__ import annotations

import importlib
import os
import shutil
import sysconfig

import pytest

JUDGE_FLAGS = ["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-Wconversion", "-Wsign-conversion"]


def compiler() -> str | None:
    return shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")


def compiled_missing_reason() -> str:
    if os.environ.get("CUDART_BACKEND", "").strip().lower() == "ctypes":
        return "CUDART_BACKEND=ctypes: the compiled backend is not in force"
    if compiler() is None:
        return "no C compiler: the compiled backend is not built (the ctypes one serves)"
    return "the compiled backend is not built: run `make build`"


def fast_module(cuda_version: int):
    """cudart._fast_<ver>, imported (see `extension`)."""
    return extension(f"cudart._fast_{cuda_version}")


def extension(name: str):
    """The compiled extension `name`, imported; skips where it cannot be built here (no
    compiler), fails where it could be and is not."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if compiler() is None:
            pytest.skip(compiled_missing_reason(), allow_module_level=True)
        raise


def python_include() -> str:
    return sysconfig.get_paths()["include"]


def skip_or_fail_missing() -> None:
    """Where the compiled backend is absent: skip when that is expected here (no
    compiler, ctypes forced), fail when it should have been built."""
    reason = compiled_missing_reason()
    if reason.startswith("the compiled backend is not built"):
        pytest.fail(reason)
    pytest.skip(reason)
