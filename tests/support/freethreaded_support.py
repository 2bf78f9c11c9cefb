"""A free-threaded CPython (3.13t) for the tests that need one beside the interpreter
running the suite (issue 25): $CUDART_FREETHREADED_PYTHON, else the one
tests/freethreaded/interpreter.py builds into the user's cache (`make test-freethreaded`).
The tests that need it skip, saying why, where neither answers as a free-threaded Python."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

FREETHREADED_ENV = "CUDART_FREETHREADED_PYTHON"
# Where tests/freethreaded/interpreter.py installs it (its cache_root / install_dir).
CACHED = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "cudart-freethreaded"
    / "python-3.13.5t"
    / "bin"
    / "python3.13t"
)
# Whether the interpreter running the suite is free-threaded (then it is its own 3.13t).
RUNNING_FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))

_PROBE = (
    "import sys, sysconfig, importlib.machinery as m;"
    "assert sysconfig.get_config_var('Py_GIL_DISABLED') and not sys._is_gil_enabled();"
    "print(m.EXTENSION_SUFFIXES[0])"
)


@functools.cache
def _find() -> tuple[str | None, str, str]:
    """(path, its own extension suffix, why not) of the free-threaded interpreter."""
    explicit = os.environ.get(FREETHREADED_ENV)
    candidates = [explicit] if explicit else [str(CACHED)]
    if RUNNING_FREE_THREADED:
        candidates.insert(0, sys.executable)
    for path in candidates:
        if not Path(path).exists():
            continue
        probe = subprocess.run([path, "-c", _PROBE], capture_output=True, text=True)
        if probe.returncode == 0:
            return path, probe.stdout.strip(), ""
    where = f"${FREETHREADED_ENV}={explicit}" if explicit else f"{CACHED} (or ${FREETHREADED_ENV})"
    return None, "", f"no free-threaded Python at {where}: make it with `make test-freethreaded`"


def freethreaded_python() -> str:
    """The free-threaded interpreter's path; skips the test where there is none."""
    path, _, why = _find()
    if path is None:
        pytest.skip(why)
    return path


def freethreaded_suffix() -> str:
    """The extension suffix of the free-threaded interpreter's own builds
    (`.cpython-313t-x86_64-linux-gnu.so`)."""
    freethreaded_python()
    return _find()[1]


def gil_enabled() -> bool:
    """Whether this process runs with a GIL (always, before 3.13)."""
    return getattr(sys, "_is_gil_enabled", lambda: True)()
