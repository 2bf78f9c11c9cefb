"""The commit a bench run records is the commit of the tree it ran, also on a copy of the
tree without this checkout's git (the GPU machine's copy: there git named a commit
hours older, "eda8d42 + uncommitted changes", on every H200 record).

A real repository in a temporary folder holding the bench package, stamped with
`python -m bench stamp`, then copied as the device gets it: without .git, and with the
.git of an older commit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from suite import REPO

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        [*GIT, "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def recorded_commit(tree: Path) -> str:
    """What a bench run in `tree` records as its commit (bench/env.py, as a run calls it)."""
    code = "from bench import env; print(env.describe(env.Runtime())['commit'])"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(tree)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A repository with two commits of the bench package (the second changes a file)."""
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    repo = tmp_path / "checkout"
    shutil.copytree(REPO / "bench", repo / "bench", ignore=shutil.ignore_patterns("__pycache__"))
    (repo / ".gitignore").write_text("/.device/\n__pycache__/\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    (repo / "bench" / "README.md").write_text("changed\n")
    git(repo, "commit", "-qam", "second")
    return repo


def stamp(repo: Path) -> str:
    return subprocess.run(
        [sys.executable, "-m", "bench", "stamp"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def device_copy(repo: Path, where: Path, git_of: str | None) -> Path:
    """The tree as the device gets it: its files and .device/, and either no git or
    the git metadata of an older state (checked out at `git_of`, files left as they are)."""
    shutil.copytree(repo, where, ignore=shutil.ignore_patterns(".git"))
    if git_of is not None:
        shutil.copytree(repo / ".git", where / ".git")
        git(where, "update-ref", "HEAD", git_of)
    return where


def test_the_stamp_names_the_commit_on_a_copy_without_git(checkout, tmp_path):
    head = git(checkout, "rev-parse", "--short=7", "HEAD")
    assert stamp(checkout) == head
    assert recorded_commit(device_copy(checkout, tmp_path / "device", None)) == head


def test_the_stamp_wins_over_the_git_of_an_older_tree(checkout, tmp_path):
    head = git(checkout, "rev-parse", "--short=7", "HEAD")
    older = git(checkout, "rev-parse", "HEAD~1")
    stamp(checkout)
    copy = device_copy(checkout, tmp_path / "device", older)
    assert git(copy, "rev-parse", "--short=7", "HEAD") == older[:7]  # what git says there
    assert recorded_commit(copy) == head


def test_uncommitted_changes_are_named(checkout, tmp_path):
    head = git(checkout, "rev-parse", "--short=7", "HEAD")
    (checkout / "bench" / "README.md").write_text("changed again\n")
    assert stamp(checkout) == f"{head} + uncommitted changes (1 file: bench/README.md)"
    copy = device_copy(checkout, tmp_path / "device", None)
    assert recorded_commit(copy) == f"{head} + uncommitted changes (1 file: bench/README.md)"


def test_a_stamp_of_another_tree_is_not_believed(checkout, tmp_path):
    head = git(checkout, "rev-parse", "--short=7", "HEAD")
    stamp(checkout)
    copy = device_copy(checkout, tmp_path / "device", None)
    (copy / "bench" / "report.py").write_text("# not the stamped file\n")
    recorded = recorded_commit(copy)
    assert head not in recorded.split(" (")[0], recorded
    assert f"its stamp, of {head}, is not of this tree: 1 file differs" in recorded
