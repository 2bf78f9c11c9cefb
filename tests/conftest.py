"""Shared fixtures: the pinned header sets, their real libraries, and subprocess runs.

Each test that loads a libcudart does so in a fresh interpreter: a process can hold
only one libcudart.so.12, and the package loads it once.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

import pytest
from models import models_for
from suite import MANIFEST, quiet

from generator.fetch import HeaderSet, fetch_version
from generator.manifest import Manifest

# On a free-threaded interpreter (make test-freethreaded) nothing may turn the GIL back on:
# 3.13t does that for an extension that does not declare Py_mod_gil, with only a
# RuntimeWarning, and PYTHON_GIL=0 would hide it. The warning is an error in every
# interpreter the tests start, and each pytest process checks its own GIL at its end.
FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
GIL_WARNING_IS_AN_ERROR = "error:The global interpreter lock (GIL) has been enabled:RuntimeWarning"
if FREE_THREADED:
    os.environ["PYTHONWARNINGS"] = ",".join(
        filter(None, [os.environ.get("PYTHONWARNINGS"), GIL_WARNING_IS_AN_ERROR])
    )


@pytest.fixture(scope="session", autouse=True)
def the_gil_stays_off():
    yield
    if FREE_THREADED:
        assert (
            not sys._is_gil_enabled()
        ), "this test process turned the GIL on (its warning says how)"


@pytest.fixture(scope="session")
def manifest() -> Manifest:
    return Manifest.load(MANIFEST)


@pytest.fixture(scope="session")
def header_sets(manifest) -> dict[str, HeaderSet]:
    """Every manifest version's headers and library, fetched (or cached) once."""
    return {key: fetch_version(manifest, key, quiet) for key in manifest.keys()}


@pytest.fixture(scope="session")
def models(header_sets):
    """Every manifest version's parsed model (tests/support/models.py: once per run)."""
    return models_for(header_sets)


@pytest.fixture(scope="session")
def plans(models):
    """Every version's checked-layer plans, resolved once per process."""
    from generator.resolve import resolve

    return {key: resolve(model) for key, model in models.items()}


@pytest.fixture(scope="session")
def driver_stub(tmp_path_factory):
    """driver_stub(key, driver_version=None, omit=(), record=False): the path of a
    stand-in libcuda.so.1 built from version `key`'s cuda.h model (tests/support/
    driver_stub.py), in this session's temporary folder: never where `import cudart`
    or the system loader looks. Each variant is built once per run."""
    from driver_stub import StubBuilder

    return StubBuilder(tmp_path_factory.mktemp("libcuda"))


@pytest.fixture
def clean_callback_failures():
    """cudart.callbacks' failure record, empty before and after the test."""
    from cudart import callbacks

    callbacks.clear_failures()
    yield
    callbacks.clear_failures()


@pytest.fixture
def escaped(monkeypatch):
    """Exceptions that got past a callback trampoline into ctypes (which reports them here)."""
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u.exc_value))
    return seen


# An NVRTC compile in this process changes how libclang parses afterwards: libnvrtc
# carries its own LLVM, and once it has compiled, the parser attaches other comments to
# declarations (seen: cudaMemGetDefaultMemPool's `location` read as an output). The
# generator never loads NVRTC; in the suite, the NVRTC tests run after everything that
# parses headers in-process, whatever order pytest was asked for. The versions' models
# are parsed in fresh interpreters anyway (tests/support/models.py).
_LAST = ("test_nvrtc.py",)
# The longest file (it builds the wheel and the sdist) starts first, so that under
# `make test` one worker runs it while the others share the rest.
_FIRST = ("test_packaging.py",)


def pytest_collection_modifyitems(config, items):
    def rank(item) -> int:
        name = Path(str(item.fspath)).name
        return 0 if name in _FIRST else 2 if name in _LAST else 1

    items.sort(key=rank)  # stable: the order within each rank is pytest's
