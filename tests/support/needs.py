"""What a test needs and may not find here: NumPy (a test requirement, requirements/dev.txt)
and the compiled backend (`make setup` builds it). Where $CI is set, a missing one fails
the test: CI installs and builds both, so a skip there could only hide a broken setup.
Elsewhere the test skips, and its reason names what is missing.

CUDART_BACKEND=ctypes is a choice, not a missing build (`make test-ctypes` makes it in
CI): a test of the compiled backend skips under it everywhere.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest
from fast_support import compiled_missing_reason

CI_ENV = "CI"


def in_ci() -> bool:
    """Whether $CI says this is a CI run (set, and not "0" or "false")."""
    return os.environ.get(CI_ENV, "").strip().lower() not in ("", "0", "false")


def missing(what: str) -> NoReturn:
    """Fail in CI, skip elsewhere; `what` says what is missing."""
    if in_ci():
        pytest.fail(f"${CI_ENV} is set, and {what}", pytrace=False)
    pytest.skip(what, allow_module_level=True)


def numpy() -> ModuleType:
    """numpy, imported: a test requirement, so its absence is a broken setup in CI."""
    try:
        return importlib.import_module("numpy")
    except ImportError as exc:
        missing(f"numpy is not importable ({exc}): pip install -r requirements/dev.txt")


def ctypes_forced() -> bool:
    return os.environ.get("CUDART_BACKEND", "").strip().lower() == "ctypes"


def compiled_backend(found: str, where: str = "this interpreter") -> None:
    """Given the backend a run found ('compiled' or 'ctypes'): return where it is the
    compiled one; skip where CUDART_BACKEND=ctypes chose ctypes; otherwise the build is
    missing (fail in CI, skip elsewhere, naming it)."""
    if found == "compiled":
        return
    if ctypes_forced():
        pytest.skip("CUDART_BACKEND=ctypes: the compiled backend is not in force")
    missing(f"{where} found the {found} backend: {compiled_missing_reason()}")
