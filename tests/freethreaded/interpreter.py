"""A free-threaded CPython 3.13 for `make test-freethreaded` (issue 25), built once per machine.

Debian publishes no free-threaded interpreter, and python.org is not reachable from every
machine this project runs on, but Debian's own source package of python3.13 (trixie) carries
the upstream release tarball unchanged. This script downloads that tarball from Debian's
archive, checks it against the upstream release's SHA-256 (the value python.org publishes,
which the official Docker image pins as PYTHON_SHA256), builds it with `--disable-gil` and
installs it under the user's cache folder. It prints the interpreter's path.

The install is made in a scratch folder and renamed into place only once it works, so an
interrupted or failed build (network, checksum, compiler) leaves nothing half-written: the
next run starts again from the download.

Standard library only: it runs under whatever python3 the machine has.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

VERSION = "3.13.5"
# Debian's orig tarball of python3.13 3.13.5-2+deb13u5 (trixie) is upstream's
# Python-3.13.5.tar.xz byte for byte: both have this SHA-256 and this size.
UPSTREAM_SHA256 = "93e583f243454e6e9e4588ca2c2662206ad961659863277afcdb96801647d640"
UPSTREAM_SIZE = 22856016
TARBALL_URL = "https://deb.debian.org/debian/pool/main/p/python3.13/python3.13_3.13.5.orig.tar.xz"
# What a build needs beyond the interpreter: pip from ensurepip (the test venv's packages)
# and the modules the suite imports (ctypes, ssl for pip, zlib, lzma, bz2).
REQUIRED_MODULES = ("ctypes", "ssl", "zlib", "lzma", "bz2", "sqlite3")


class InterpreterError(RuntimeError):
    """What stopped the interpreter from being made, in one sentence."""


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cudart-freethreaded"


def install_dir(root: Path) -> Path:
    return root / f"python-{VERSION}t"


def interpreter_path(prefix: Path) -> Path:
    return prefix / "bin" / "python3.13t"


def probe(python: Path | str, modules: tuple[str, ...] = (), version: str = "") -> str | None:
    """Its extension suffix where `python` answers as a free-threaded build with its GIL
    off, importing `modules`, its version starting with `version`; else None."""
    if not Path(python).exists():
        return None
    code = (
        "import sys, sysconfig, importlib, importlib.machinery as m;"
        f"[importlib.import_module(x) for x in {modules!r}];"
        "assert sysconfig.get_config_var('Py_GIL_DISABLED') == 1;"
        "assert not sys._is_gil_enabled();"
        f"assert sys.version.startswith({version!r});"
        "print(m.EXTENSION_SUFFIXES[0])"
    )
    answer = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    return answer.stdout.strip() if answer.returncode == 0 else None


def is_usable(python: Path) -> bool:
    """The install answers as a free-threaded 3.13 with every module the suite needs."""
    return probe(python, REQUIRED_MODULES, VERSION) is not None


def download(url: str, target: Path) -> None:
    try:
        with urllib.request.urlopen(url, timeout=60) as response, target.open("wb") as out:
            shutil.copyfileobj(response, out, length=1 << 20)
    except (urllib.error.URLError, OSError) as exc:
        raise InterpreterError(f"could not download {url}: {exc}") from exc


def verify(tarball: Path) -> None:
    size = tarball.stat().st_size
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    if size != UPSTREAM_SIZE or digest != UPSTREAM_SHA256:
        raise InterpreterError(
            f"{tarball.name}: sha256 {digest} ({size} bytes) is not upstream Python-{VERSION}'s "
            f"{UPSTREAM_SHA256} ({UPSTREAM_SIZE} bytes); refusing to build it"
        )


def build(source: Path, prefix: Path, staging: Path, jobs: int, log: Path) -> None:
    steps = [
        ["./configure", "--disable-gil", f"--prefix={prefix}", "--with-ensurepip=install"],
        ["make", f"-j{jobs}"],
        ["make", "install", f"DESTDIR={staging}"],
    ]
    with log.open("w") as out:
        for step in steps:
            done = subprocess.run(step, cwd=source, stdout=out, stderr=subprocess.STDOUT)
            if done.returncode != 0:
                tail = log.read_text(errors="replace").splitlines()[-15:]
                raise InterpreterError(
                    f"`{' '.join(step)}` failed ({done.returncode}); last lines of {log}:\n"
                    + "\n".join(tail)
                )


def cached(root: Path) -> Path:
    """The interpreter already published under `root`, never building: the tests ask
    this (tests/support/abi_support.py). No lock is needed, a build publishes by rename."""
    python = interpreter_path(install_dir(root))
    if not is_usable(python):
        raise InterpreterError(f"no working {python} (make test-freethreaded builds it)")
    return python


def ensure(root: Path, jobs: int, url: str = TARBALL_URL) -> Path:
    """The cached interpreter, built first where it is missing or broken. Concurrent
    callers (two checkouts' `make test-freethreaded`) wait for one build. `url` is where
    the tarball comes from (a file: URL in the tests): whatever it is, its bytes must be
    upstream's."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure_locked(root, jobs, url)


def _ensure_locked(root: Path, jobs: int, url: str) -> Path:
    prefix = install_dir(root)
    python = interpreter_path(prefix)
    if is_usable(python):
        return python
    shutil.rmtree(prefix, ignore_errors=True)
    with tempfile.TemporaryDirectory(dir=root, prefix=".build-") as scratch:
        tarball = Path(scratch) / f"Python-{VERSION}.tar.xz"
        print(f"free-threaded python: downloading {url}", file=sys.stderr)
        download(url, tarball)
        verify(tarball)
        with tarfile.open(tarball) as archive:
            archive.extractall(scratch, filter="data")
        source = Path(scratch) / f"Python-{VERSION}"
        log = root / "build.log"
        print(f"free-threaded python: building (log: {log})", file=sys.stderr)
        # CPython bakes its prefix into sysconfig, so it is configured for its final place
        # and installed under DESTDIR in the scratch folder; one rename publishes it whole.
        staging = Path(scratch) / "staging"
        build(source, prefix, staging, jobs, log)
        (staging / prefix.relative_to(prefix.anchor)).rename(prefix)
    if not is_usable(python):
        shutil.rmtree(prefix, ignore_errors=True)
        raise InterpreterError(f"the built {python} is not a working free-threaded {VERSION}")
    return python


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=cache_root())
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--url", default=TARBALL_URL, help="where the tarball comes from")
    parser.add_argument(
        "--cached", action="store_true", help="the published interpreter only; never build"
    )
    args = parser.parse_args(argv)
    try:
        print(cached(args.cache) if args.cached else ensure(args.cache, args.jobs, args.url))
    except InterpreterError as exc:
        print(f"free-threaded python: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
