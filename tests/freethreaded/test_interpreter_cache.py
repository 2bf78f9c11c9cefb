"""tests/freethreaded/interpreter.py, the free-threaded 3.13 of `make test-freethreaded`:
it builds only from upstream's exact tarball, publishes nothing that failed, and once
published answers at once. No network: the tarball comes from a local file (its --url),
never from Debian's archive."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import abi_support
import interpreter
import pytest

SCRIPT = Path(interpreter.__file__)


def _leftovers(root: Path) -> list[str]:
    """What a failed attempt left under the cache root besides the lock and the log."""
    return sorted(p.name for p in root.iterdir() if p.name not in (".lock", "build.log"))


def test_a_tarball_that_is_not_upstreams_is_refused_and_nothing_is_published(tmp_path):
    wrong = tmp_path / "Python-3.13.5.tar.xz"
    wrong.write_bytes(b"\xfd7zXZ\x00" + b"not upstream's bytes" * 1000)
    root = tmp_path / "cache"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--cache", str(root), "--url", wrong.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    assert "refusing to build it" in proc.stderr and interpreter.UPSTREAM_SHA256 in proc.stderr
    assert _leftovers(root) == []  # no install, no scratch folder
    with pytest.raises(interpreter.InterpreterError, match="no working"):
        interpreter.cached(root)


def test_a_download_that_fails_says_so_and_publishes_nothing(tmp_path):
    root = tmp_path / "cache"
    missing = (tmp_path / "absent.tar.xz").as_uri()
    with pytest.raises(interpreter.InterpreterError, match="could not download"):
        interpreter.ensure(root, jobs=1, url=missing)
    assert _leftovers(root) == []


def test_only_a_free_threaded_313_is_taken_as_built():
    python, why = abi_support.find_interpreter("python3.11")
    if python is None:
        pytest.skip(f"python3.11 unusable: {why}")
    assert not interpreter.is_usable(Path(python))
    assert not interpreter.is_usable(Path("/nonexistent/python3.13t"))


def test_a_published_interpreter_is_returned_at_once_without_a_download(tmp_path):
    """The cache a `make test-freethreaded` built, seen through a root of this test's own
    (a link to its install): `ensure` returns it with a tarball URL that cannot be read."""
    try:
        built = interpreter.cached(interpreter.cache_root())
    except interpreter.InterpreterError as exc:
        pytest.skip(str(exc))
    root = tmp_path / "cache"
    root.mkdir()
    interpreter.install_dir(root).symlink_to(interpreter.install_dir(interpreter.cache_root()))
    start = time.monotonic()
    python = interpreter.ensure(root, jobs=1, url=(tmp_path / "absent.tar.xz").as_uri())
    assert time.monotonic() - start < 30  # one probe of the interpreter, no build
    assert python == interpreter.interpreter_path(interpreter.install_dir(root))
    assert python.resolve() == built.resolve()
    assert interpreter.cached(root) == python
