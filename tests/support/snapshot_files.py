"""The reviewed files the suite holds its output to (tests/snapshots/, tests/expectations/):
what a test makes is compared with the file, and a difference fails, showing it.

Only an explicit CUDART_UPDATE_EXPECTATIONS=1 rewrites a file that would change (the
test then passes, and `git diff` is the review). In CI ($CI set) the flag itself fails:
there a snapshot is checked, never rewritten. A rewrite does not end the test: the
checks after it still run.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest
from needs import in_ci

UPDATE_ENV = "CUDART_UPDATE_EXPECTATIONS"
# Lines of the difference shown in a failure.
SHOWN = 60


def updating() -> bool:
    return os.environ.get(UPDATE_ENV) == "1"


def hold(path: Path, text: str) -> None:
    """`text` must be the reviewed file at `path`, byte for byte."""
    if updating() and in_ci():
        pytest.fail(f"${UPDATE_ENV}=1 in CI: snapshots are checked there, never rewritten")
    old = path.read_bytes().decode() if path.is_file() else None
    if old == text:
        return
    if updating():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
        return
    if old is None:
        pytest.fail(f"{path} is missing: run with {UPDATE_ENV}=1 and review it", pytrace=False)
    diff = list(
        difflib.unified_diff(
            old.splitlines(), text.splitlines(), "reviewed", "made now", lineterm="", n=1
        )
    )
    shown = "\n".join(diff[:SHOWN]) + (f"\n... {len(diff) - SHOWN} more" if diff[SHOWN:] else "")
    pytest.fail(
        f"{path.name} would change: after a deliberate change run with {UPDATE_ENV}=1 and "
        f"review `git diff`\n{shown}",
        pytrace=False,
    )
