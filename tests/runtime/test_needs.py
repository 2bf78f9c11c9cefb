"""tests/support/needs.py: in CI a missing NumPy or compiled build fails its test, elsewhere
it skips naming what is missing; and the suite asks for NumPy through it only."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from suite import REPO, TESTS

# A test module that needs NumPy and the compiled backend, run where neither is there:
# NumPy blocked in sys.modules, the backend found as ctypes without being asked for.
PROBE = """
import sys
sys.modules["numpy"] = None
import needs

def test_numpy():
    needs.numpy()

def test_compiled():
    needs.compiled_backend("ctypes", "the probe")
"""


def _outcomes(tmp_path, **env: str) -> str:
    (tmp_path / "test_probe.py").write_text(PROBE)
    base = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(TESTS / "support")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rfs", "-p", "no:cacheprovider", "-p", "no:xdist"]
        + ["--rootdir", str(tmp_path), str(tmp_path / "test_probe.py")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**base, **env},
    )
    return proc.stdout


@pytest.mark.parametrize("ci", ["true", "1"])
def test_in_ci_what_is_missing_fails(tmp_path, ci):
    out = _outcomes(tmp_path, CI=ci)
    assert "2 failed" in out, out
    assert "$CI is set, and numpy is not importable" in out, out
    assert "$CI is set, and the probe found the ctypes backend" in out, out


@pytest.mark.parametrize("ci", [None, "", "0", "false"])
def test_elsewhere_what_is_missing_skips_naming_it(tmp_path, ci):
    out = _outcomes(tmp_path, **({} if ci is None else {"CI": ci}))
    assert "2 skipped" in out, out
    assert "numpy is not importable" in out and "requirements/dev.txt" in out, out
    assert "the probe found the ctypes backend" in out, out


def test_ctypes_chosen_is_no_missing_build(tmp_path):
    out = _outcomes(tmp_path, CI="1", CUDART_BACKEND="ctypes")
    assert "1 failed" in out and "1 skipped" in out, out
    assert "CUDART_BACKEND=ctypes: the compiled backend is not in force" in out, out


def test_the_suite_asks_for_numpy_through_needs():
    # importorskip would skip in CI too, where NumPy is installed by requirements/dev.txt.
    found = [
        f"{path.relative_to(REPO)}:{n}"
        for path in sorted(TESTS.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"importorskip\(\s*['\"]numpy['\"]", line)
    ]
    assert found == []
