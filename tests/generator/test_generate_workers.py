"""kill -9 of `generate --all` while its workers render: the workers end with it.

They once waited forever on pipes they held open themselves, about 190 MB a pair (24
were found after a series of kills). The run uses a manifest of two versions and two
workers, in a temporary folder, with the pinned wheels of the cache (nothing is
downloaded).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from suite import REPO

from generator.manifest import Manifest

KEYS = ("12.4", "12.5")


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return found
    for task in tasks:
        try:
            found.update(
                int(n) for n in Path(f"/proc/{pid}/task/{task}/children").read_text().split()
            )
        except FileNotFoundError:
            pass
    return found


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's reaper may not have collected it yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _wait_for(condition, timeout: float, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return condition()


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
def test_workers_die_with_a_killed_parent(tmp_path, header_sets):
    full = Manifest.load(REPO / "cuda_headers_manifest.toml")
    manifest = tmp_path / "manifest.toml"
    manifest.write_text(type(full)(full.majors, {k: full.get(k) for k in KEYS}).dumps())
    log = tmp_path / "stderr.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDART_BINDGEN_TEST")}
    with open(log, "w") as stderr:
        parent = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "generator",
                "--manifest",
                str(manifest),
                "--output",
                str(tmp_path / "generated"),
                "generate",
                "--all",
                "--jobs",
                "2",
            ],
            cwd=REPO,
            env=env | {"PYTHONPATH": str(REPO)},
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    workers: set[int] = set()
    try:
        # Both workers started, and the parent waiting for their modules.
        assert _wait_for(
            lambda: "rendering 2 versions in 2 processes" in log.read_text()
            and len(_children(parent.pid)) == 2,
            timeout=120,
        ), log.read_text()
        workers = _children(parent.pid)
        time.sleep(0.5)  # into the parse
        assert parent.poll() is None and all(_running(w) for w in workers), log.read_text()
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert _wait_for(lambda: not any(_running(w) for w in workers), timeout=5), [
            w for w in workers if _running(w)
        ]
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        for worker in workers:  # only on failure: what the test left running
            if _running(worker):
                os.kill(worker, signal.SIGKILL)
