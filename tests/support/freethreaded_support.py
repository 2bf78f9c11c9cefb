"""A free-threaded CPython (3.13t) for the tests that need one beside the interpreter
running the suite (issue 25): $CUDART_FREETHREADED_PYTHON, else the one
tests/freethreaded/interpreter.py builds into the user's cache (`make test-freethreaded`).
The tests that need it skip, saying why, where neither answers as a free-threaded Python."""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import sysconfig
from pathlib import Path

import pytest

FREETHREADED_ENV = "CUDART_FREETHREADED_PYTHON"
# The script that builds it and knows where it lies (never run here to build).
INTERPRETER_SCRIPT = Path(__file__).resolve().parents[1] / "freethreaded" / "interpreter.py"
# Whether the interpreter running the suite is free-threaded (then it is its own 3.13t).
RUNNING_FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


@functools.cache
def _script():
    """tests/freethreaded/interpreter.py, loaded as a module (it is a script)."""
    spec = importlib.util.spec_from_file_location("_freethreaded_interpreter", INTERPRETER_SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def _cached() -> tuple[str | None, str]:
    """(path, '') of the interpreter interpreter.py published, or (None, why not)."""
    script = _script()
    try:
        return str(script.cached(script.cache_root())), ""
    except script.InterpreterError as exc:
        return None, str(exc)


@functools.cache
def find_freethreaded() -> tuple[str | None, str, str]:
    """(path, its own extension suffix, why not) of the free-threaded interpreter:
    this one where it is free-threaded, else $CUDART_FREETHREADED_PYTHON, else the one
    tests/freethreaded/interpreter.py published in the user's cache."""
    explicit = os.environ.get(FREETHREADED_ENV)
    found, why = (explicit, f"${FREETHREADED_ENV}={explicit}") if explicit else _cached()
    candidates = [sys.executable] if RUNNING_FREE_THREADED else []
    for path in [*candidates, found]:
        if path is None:
            continue
        if not Path(path).exists():
            continue
        suffix = _script().probe(path)
        if suffix is not None:
            return path, suffix, ""
        why = f"{path} is not a free-threaded Python with its GIL off"
    return None, "", f"no free-threaded Python ({why}): `make test-freethreaded` makes one"


def freethreaded_python() -> str:
    """The free-threaded interpreter's path; skips the test where there is none, and
    fails it where $CUDART_FREETHREADED_PYTHON names one that does not work."""
    path, _, why = find_freethreaded()
    if path is None:
        if os.environ.get(FREETHREADED_ENV):
            pytest.fail(why)
        pytest.skip(why)
    return path


def freethreaded_suffix() -> str:
    """The extension suffix of the free-threaded interpreter's own builds
    (`.cpython-313t-x86_64-linux-gnu.so`)."""
    freethreaded_python()
    return find_freethreaded()[1]


def gil_enabled() -> bool:
    """Whether this process runs with a GIL (always, before 3.13)."""
    return getattr(sys, "_is_gil_enabled", lambda: True)()
