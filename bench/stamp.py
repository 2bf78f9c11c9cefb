"""The commit of the tree a bench run measured, carried with the tree.

The GPU machine runs a copy of the working tree, and git there does not describe it:
the copy's git metadata (where it has any) is not this checkout's, so
`git rev-parse HEAD` there named a commit hours older than the tree and every file
changed since as uncommitted ("eda8d42 + uncommitted changes" on the runs at 6152bd1
and bbe6a59). So the commit travels with the tree:

    python -m bench stamp [FILE]   (here; default .device/bench-stamp, carried with .device)

writes the commit of this checkout, each tracked file's git blob id as the working tree
has it, and which of them differ from the commit. A run reads the stamp and trusts it
only where the tree it runs is the one stamped (every file's blob id recomputed), so a
stamp left from an older tree never names a commit the run did not measure.

Standard library only (the GPU machine has no git of this tree).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STAMP = REPO / ".device" / "bench-stamp"
SHOWN = 3  # changed files named in a commit's description; the rest are counted


def blob_id(path: Path) -> str:
    """git's blob id of the file as it is on disk (a link: of its target, as git stores
    it)."""
    data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def write(path: Path = STAMP, repo: Path = REPO) -> str:
    """Stamp the checkout at repo into path; returns the commit's description."""
    commit = _git(repo, "rev-parse", "HEAD").strip()
    tracked = [p for p in _git(repo, "ls-files", "-z").split("\0") if p]
    changed = {p for p in _git(repo, "diff", "--name-only", "-z", "HEAD").split("\0") if p}
    lines = [f"commit {commit}"]
    for name in tracked:
        file = repo / name
        if file.is_symlink() or file.is_file():
            lines.append(f"{'changed' if name in changed else 'file'} {blob_id(file)} {name}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return _describe(commit, sorted(changed & set(tracked)), [])


def _describe(commit: str, changed: list[str], absent: list[str]) -> str:
    text = commit[:7]
    if changed:
        named = ", ".join(changed[:SHOWN]) + (", ..." if len(changed) > SHOWN else "")
        text += f" + uncommitted changes ({_files(len(changed))}: {named})"
    if absent:
        text += f"; {_files(len(absent))} of its tracked ones absent from this copy"
    return text


def _files(n: int) -> str:
    return f"{n} file{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class Stamped:
    commit: str  # the stamp's commit, in full
    text: str  # the commit as a record gives it
    differing: tuple[str, ...]  # tracked files whose content is not the stamped one


def read(path: Path = STAMP, repo: Path = REPO) -> Stamped | None:
    """The stamp at path checked against the tree at repo (None: there is none). Its
    text describes the tree only where `differing` is empty."""
    if not path.is_file():
        return None
    commit, changed, absent, differing = "", [], [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "commit":
            commit = rest.strip()
            continue
        blob, _, name = rest.partition(" ")
        file = repo / name
        if not (file.is_symlink() or file.is_file()):
            absent.append(name)
        elif blob_id(file) != blob:
            differing.append(name)
        elif kind == "changed":
            changed.append(name)
    return Stamped(commit, _describe(commit, changed, absent), tuple(differing))
