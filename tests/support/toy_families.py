"""What the toy families' tests (tests/families/) share: wheels laid out as NVIDIA's are,
the checkout's state (which they must leave untouched), an install of a generation beside
a copy of the hand-written package, and child interpreters run against it."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from suite import REPO

# For a child's code: [the class, its two bases, the message] of what a call raised, or
# None where it returned.
REFUSED = """
def refused(call, *args):
    try:
        call(*args)
    except Exception as exc:
        return [type(exc).__name__, [c.__name__ for c in type(exc).__mro__[1:3]], str(exc)]
    return None
"""


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(path: Path, package: str, version: str, files: dict[str, bytes]) -> None:
    """A wheel of `files` (its members' paths -> bytes) and a RECORD with every member's
    sha256 (what the fetcher checks an unpacked tree by)."""
    info = f"{package.replace('-', '_')}-{version}.dist-info"
    members = {
        **files,
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n".encode()
        ),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-any\n",
    }
    record = [record_line(n, d) for n, d in members.items()] + [f"{info}/RECORD,,"]
    members[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            # A fixed time: the same members make the same wheel, and the same sha256.
            zf.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data)


def checkout_state() -> dict[str, tuple[int, int]]:
    """(size, mtime) of every file of the checkout's product and generated trees."""
    found = {}
    for folder in ("cudart", "generator", "generated", "families", "templates", "tests/snapshots"):
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                info = path.stat()
                found[str(path.relative_to(REPO))] = (info.st_size, info.st_mtime_ns)
    info = (REPO / "cuda_headers_manifest.toml").stat()
    found["cuda_headers_manifest.toml"] = (info.st_size, info.st_mtime_ns)
    return found


def families_folder(root: Path, *descriptors: Path) -> Path:
    """The checkout's descriptors plus `descriptors`, in a folder of their own."""
    families = root / "families"
    families.mkdir()
    for descriptor in [*sorted((REPO / "families").glob("*.toml")), *descriptors]:
        shutil.copy(descriptor, families)
    return families


def install(out: Path, root: Path) -> Path:
    """An install of the generated folder `out`, laid out as the wheel lays it: the
    checkout's hand-written package (no compiled extensions: ctypes serves) with `out`
    as cudart/_generated and its family table as cudart/_versions.py; the site folder."""
    package = root / "site" / "cudart"
    shutil.copytree(
        REPO / "cudart",
        package,
        ignore=shutil.ignore_patterns("__pycache__", "*.so", "_generated", "*.pyi", "_versions.py"),
    )
    shutil.copytree(out, package / "_generated", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(out / "_versions.py", package / "_versions.py")
    return root / "site"


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("CUDART_", "PYTHON"))}


def child(site: Path, code: str, env: dict[str, str] | None = None, extra_path: str = ""):
    """Run `code` against the package installed in `site`, its JSON output."""
    path = os.pathsep.join(
        filter(None, [str(site), extra_path, str(REPO), str(REPO / "tests" / "support")])
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**clean_env(), "PYTHONPATH": path, **(env or {})},
        cwd=site,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])
