"""CPython 3.14 for `make test-py314` (issue 25): Debian sid's python3.14 in a minimal chroot,
made once per machine under the user's cache folder, and commands run in it on this checkout.

Debian stable has no 3.14 and python.org is not reachable from every machine this project
runs on; sid has it, and `debootstrap --variant=minbase sid` with python3.14 takes about
80 s. The chroot is made in a scratch folder and renamed into place only once its
interpreter works, so an interrupted or failed debootstrap leaves nothing half-written.

`run` shows the chroot this checkout (at /src), the header and library cache the tests
fetch into (cudart-bindgen's, at /cache/cudart-bindgen) and a scratch /tmp of its own, by
bind mounts in a private mount namespace (unshare): they end with the command, however it
ends, and the cached chroot is never written. It needs root (debootstrap, chroot, mount).

Standard library only (and the checkout's generator.fetch for the cache's place): it runs
under whatever python3 the machine has.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from generator.fetch import cache_root as bindgen_cache  # noqa: E402

SUITE = "sid"
MIRROR = "https://deb.debian.org/debian"
# The interpreter, venv with ensurepip for the tests' own venv (python3.14-venv), and a C
# compiler with Python's headers: not for the compiled backend (make build's abi3
# extensions serve 3.14 as they are) but for the tests, which build stand-in libraries
# and recording extensions and ask gcc for the headers' layouts and include folders.
PACKAGES = ("python3.14", "python3.14-venv", "python3.14-dev", "gcc", "libc6-dev")
PYTHON = "/usr/bin/python3.14"
CHECKOUT = "/src"
CACHE = "/cache/cudart-bindgen"
# The machine's trust store and resolver: pip inside reaches PyPI as the host does
# (behind a proxy with its own certificate authority, where there is one).
HOST_FILES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/resolv.conf")
# What a command inside sees of the caller's environment.
PASSED = ("CUDART_BACKEND", "PYTHONFAULTHANDLER", "TERM")


class ChrootError(RuntimeError):
    """What stopped the chroot from being made or used, in one sentence."""


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cudart-py314"


def chroot_dir(root: Path) -> Path:
    return root / SUITE


def is_usable(chroot: Path) -> bool:
    """The chroot's python3.14 runs, with what the tests' venv and the suite need."""
    if not (chroot / PYTHON.lstrip("/")).exists():
        return False
    probe = (
        "import sys, venv, ensurepip, ssl, ctypes, shutil, sysconfig, os;"
        "assert sys.version_info[:2] == (3, 14);"
        "assert os.path.isfile(sysconfig.get_paths()['include'] + '/Python.h');"
        "assert shutil.which('gcc', path='/usr/bin') and shutil.which('cc', path='/usr/bin')"
    )
    done = subprocess.run(["chroot", str(chroot), PYTHON, "-c", probe], capture_output=True)
    return done.returncode == 0


def _require_root() -> None:
    if os.geteuid() != 0:
        raise ChrootError("debootstrap, chroot and mount need root")


def ensure(root: Path) -> Path:
    """The cached chroot, made first where it is missing or broken. Concurrent callers
    wait for one debootstrap."""
    _require_root()
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure_locked(root)


def _ensure_locked(root: Path) -> Path:
    chroot = chroot_dir(root)
    if is_usable(chroot):
        return chroot
    if shutil.which("debootstrap") is None:
        raise ChrootError("no debootstrap: apt-get install -y debootstrap")
    shutil.rmtree(chroot, ignore_errors=True)
    with tempfile.TemporaryDirectory(dir=root, prefix=".build-") as scratch:
        target = Path(scratch) / SUITE
        log = root / "debootstrap.log"
        print(f"python3.14: debootstrap {SUITE} (log: {log})", file=sys.stderr)
        include = "--include=" + ",".join(PACKAGES)
        command = ["debootstrap", "--variant=minbase", include, SUITE, str(target), MIRROR]
        with log.open("w") as out:
            done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT)
        if done.returncode != 0:
            tail = log.read_text(errors="replace").splitlines()[-10:]
            raise ChrootError(f"debootstrap failed ({done.returncode}):\n" + "\n".join(tail))
        if not is_usable(target):
            raise ChrootError(f"the chroot's {PYTHON} does not work")
        target.rename(chroot)
    return chroot


def mounts(chroot: Path, checkout: Path, scratch: Path) -> list[str]:
    """The shell lines that show the chroot what a command needs, all bind mounts."""
    binds = [
        (checkout, CHECKOUT),
        (bindgen_cache(), CACHE),
        (scratch, "/tmp"),
        (Path("/dev"), "/dev"),
        *((Path(f), f) for f in HOST_FILES if Path(f).is_file()),
    ]
    lines = []
    for source, inside in binds:
        target = chroot / inside.lstrip("/")
        make = "touch" if source.is_file() else "mkdir -p"
        lines.append(f"{make} {shlex.quote(str(target))}")
        lines.append(f"mount --bind {shlex.quote(str(source))} {shlex.quote(str(target))}")
    lines.append(f"mount -t proc proc {shlex.quote(str(chroot / 'proc'))}")
    return lines


def run(root: Path, checkout: Path, command: str) -> int:
    """`command` (a shell line) in the chroot, in the checkout, as the tests run it."""
    _require_root()
    chroot = chroot_dir(root)
    if not is_usable(chroot):
        raise ChrootError(f"no working chroot at {chroot} (make test-py314 makes it)")
    bindgen_cache().mkdir(parents=True, exist_ok=True)
    env = {
        "HOME": "/tmp/home",
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "CUDART_BINDGEN_CACHE": CACHE,
        # pip verifies against the machine's trust store (bound in), not its own bundle.
        "PIP_CERT": HOST_FILES[0],
        "SSL_CERT_FILE": HOST_FILES[0],
        **{k: os.environ[k] for k in PASSED if k in os.environ},
    }
    inner = ["chroot", str(chroot), "/usr/bin/env", "-i"]
    inner += [f"{k}={v}" for k, v in env.items()]
    inner += ["/bin/sh", "-c", f"mkdir -p /tmp/home && cd {CHECKOUT} && {command}"]
    with tempfile.TemporaryDirectory(prefix="cudart-py314-") as scratch:
        os.chmod(scratch, 0o1777)
        script = "set -e\n" + "\n".join(mounts(chroot, checkout, Path(scratch)))
        script += "\nexec " + shlex.join(inner) + "\n"
        private = ["unshare", "--mount", "--propagation", "private"]
        done = subprocess.run([*private, "sh", "-c", script])
    return done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=cache_root())
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("ensure", help="make the chroot once; print its path")
    runner = sub.add_parser("run", help="run a shell line in the chroot, in the checkout")
    runner.add_argument("--checkout", type=Path, default=REPO)
    runner.add_argument("command")
    args = parser.parse_args(argv)
    try:
        if args.action == "ensure":
            print(ensure(args.cache))
            return 0
        return run(args.cache, args.checkout.resolve(), args.command)
    except ChrootError as exc:
        print(f"python3.14: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
