"""The suite's own rules, run as the suite runs them (a pytest in a fresh process):
tests/support/needs.py (in CI a missing NumPy or compiled build fails its test, elsewhere
it skips naming what is missing; the suite asks for NumPy through it only) and
tests/support/snapshot_files.py (a snapshot that would change fails unless
CUDART_UPDATE_EXPECTATIONS=1, which CI refuses)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

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


def _outcomes(tmp_path, probe: str = PROBE, **env: str) -> str:
    (tmp_path / "test_probe.py").write_text(probe)
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


# A snapshot test: the text it makes, held to tests' reviewed file beside it.
SNAPSHOT_PROBE = """
from pathlib import Path
import snapshot_files

def test_snapshot():
    snapshot_files.hold(Path(__file__).with_name("reviewed.txt"), "made now\\n")
    print("after the hold")
"""


@pytest.mark.parametrize("flag", [None, "", "0", "yes"])
def test_a_snapshot_that_would_change_fails_and_stays(tmp_path, flag):
    reviewed = tmp_path / "reviewed.txt"
    reviewed.write_text("reviewed\n")
    out = _outcomes(
        tmp_path, SNAPSHOT_PROBE, **({} if flag is None else {"CUDART_UPDATE_EXPECTATIONS": flag})
    )
    assert "1 failed" in out and "reviewed.txt would change" in out, out
    assert "-reviewed" in out and "+made now" in out, out
    assert reviewed.read_text() == "reviewed\n"


def test_a_missing_snapshot_fails(tmp_path):
    out = _outcomes(tmp_path, SNAPSHOT_PROBE)
    assert "1 failed" in out and "reviewed.txt is missing" in out, out
    assert not (tmp_path / "reviewed.txt").exists()


def test_the_update_flag_rewrites_and_the_test_goes_on(tmp_path):
    reviewed = tmp_path / "reviewed.txt"
    reviewed.write_text("reviewed\n")
    out = _outcomes(tmp_path, SNAPSHOT_PROBE, CUDART_UPDATE_EXPECTATIONS="1")
    assert "1 passed" in out, out
    assert reviewed.read_text() == "made now\n"


def test_in_ci_the_update_flag_fails_and_rewrites_nothing(tmp_path):
    reviewed = tmp_path / "reviewed.txt"
    reviewed.write_text("made now\n")  # even unchanged: the flag itself is the error
    out = _outcomes(tmp_path, SNAPSHOT_PROBE, CUDART_UPDATE_EXPECTATIONS="1", CI="1")
    assert "1 failed" in out and "never rewritten" in out, out
    assert reviewed.read_text() == "made now\n"


def test_the_suite_holds_its_snapshots_through_hold():
    # A test writing into tests/snapshots or tests/expectations itself could pass while
    # rewriting them: only snapshot_files.hold writes there.
    writers = [
        f"{path.relative_to(REPO)}:{n}"
        for path in sorted(TESTS.rglob("test_*.py"))
        if path.name != Path(__file__).name
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "CUDART_UPDATE_EXPECTATIONS" in line and "os.environ" in line
    ]
    assert writers == []
