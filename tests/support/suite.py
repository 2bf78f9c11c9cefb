"""What every test module shares: the checkout's paths, the manifest's versions, and
fresh interpreters that import this checkout.

The fixtures built on these are in tests/conftest.py; this module imports nothing of
pytest, so the support scripts (abi_support.py, fuzz_ranges.py) use it too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
GENERATED = REPO / "generated"
MANIFEST = REPO / "cuda_headers_manifest.toml"
# The tests' data: gcc-judged construct headers and their expectations, the reviewed
# output-shape snapshots, committed kernel images, the demangler's corpus.
HEADERS = TESTS / "headers"
EXPECTATIONS = TESTS / "expectations"
SNAPSHOTS = TESTS / "snapshots"
KERNELS = TESTS / "kernels"
DEMANGLE = TESTS / "demangle"


def quiet(*_args: object, **_kwargs: object) -> None:
    """A progress callback that says nothing."""


def version_keys() -> list[str]:
    from generator.manifest import Manifest

    return Manifest.load(MANIFEST).keys()


def run_python(
    code: str,
    env: dict[str, str] | None = None,
    python: str = sys.executable,
    check: bool = True,
    cwd: Path = REPO,
) -> subprocess.CompletedProcess:
    """Run code in a fresh interpreter that imports this checkout's packages (`cwd`, the
    first place `-c` code imports from, is the checkout unless said otherwise)."""
    # The backend switch is the suite's own (`make test-ctypes` runs the backend's tests
    # on ctypes); every other CUDART_ setting is the test's to give.
    full_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CUDART_", "CUDA_HOME", "CUDA_PATH")) or k == "CUDART_BACKEND"
    }
    full_env["PYTHONPATH"] = str(REPO)
    full_env.update(env or {})
    proc = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, env=full_env, cwd=cwd
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"subprocess failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


def bindgen(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """cudart-bindgen with `args`, in a fresh interpreter, from the checkout."""
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, **(env or {})},
    )


def probe_each_version(code: str, header_sets) -> dict[str, dict]:
    """Run `code` once per version against that version's library; its JSON output."""
    return {
        key: json.loads(run_python(code, env={"CUDART_LIBRARY": str(headers.library)}).stdout)
        for key, headers in header_sets.items()
    }
