"""Shared fixtures: the pinned header sets, their real libraries, and subprocess runs.

Each test that loads a libcudart does so in a fresh interpreter: a process can hold
only one libcudart.so.12, and the package loads it once.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.fetch import HeaderSet, fetch_version
from generator.manifest import Manifest

REPO = Path(__file__).resolve().parent.parent
GENERATED = REPO / "generated"


def _quiet(message: str) -> None:
    pass


@pytest.fixture(scope="session")
def manifest() -> Manifest:
    return Manifest.load(REPO / "cuda_headers_manifest.toml")


def version_keys() -> list[str]:
    return Manifest.load(REPO / "cuda_headers_manifest.toml").keys()


@pytest.fixture(scope="session")
def header_sets(manifest) -> dict[str, HeaderSet]:
    """Every manifest version's headers and library, fetched (or cached) once."""
    return {key: fetch_version(manifest, key, _quiet) for key in manifest.keys()}


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


def probe_each_version(code: str, header_sets) -> dict[str, dict]:
    """Run `code` once per version against that version's library; its JSON output."""
    import json

    return {
        key: json.loads(run_python(code, env={"CUDART_LIBRARY": str(headers.library)}).stdout)
        for key, headers in header_sets.items()
    }


def run_python(
    code: str, env: dict[str, str] | None = None, python: str = sys.executable, check: bool = True
) -> subprocess.CompletedProcess:
    """Run code in a fresh interpreter that imports this checkout's packages."""
    # The backend switch is the suite's own (`make test-ctypes` runs it all on ctypes);
    # every other CUDART_ setting is the test's to give.
    full_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CUDART_", "CUDA_HOME", "CUDA_PATH")) or k == "CUDART_BACKEND"
    }
    full_env["PYTHONPATH"] = str(REPO)
    full_env.update(env or {})
    proc = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, env=full_env, cwd=REPO
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"subprocess failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


# An NVRTC compile in this process changes how libclang parses afterwards: libnvrtc
# carries its own LLVM, and once it has compiled, the parser attaches other comments to
# declarations (seen: cudaMemGetDefaultMemPool's `location` read as an output). The
# generator never loads NVRTC; in the suite, the NVRTC tests run after everything that
# parses headers in-process, whatever order pytest was asked for.
_NVRTC_TESTS = ("test_nvrtc.py",)


def pytest_collection_modifyitems(config, items):
    late = [i for i in items if Path(str(i.fspath)).name in _NVRTC_TESTS]
    if late:
        items[:] = [i for i in items if i not in late] + late
