"""kill -9 of `generate --all` at every step of its write, and at random moments: the
output folder is always the whole old tree or the whole new one, `import cudart` works
from it, and the next run leaves no stray folder (issue 11, "Generator trust").

It runs on a copy of the checkout's cudart/ and generated/ in a temporary folder (the
real ones are never at risk), with a manifest of one version so that a run takes about a
second and the new tree (4 files: the runtime's modules, the package files; the other
header families only lengthen each run) differs from the old one (the committed tree).
"""

from __future__ import annotations

import dataclasses
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from suite import GENERATED, REPO

from generator.generate import version_files
from generator.manifest import DEFAULT_SURFACE, Manifest

KEY = "12.5"
KILLED = Path(__file__).resolve().parent / "generate_killed.py"


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix in (".py", ".pyi")}


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """A checkout-like folder: cudart/ (its links into ../generated kept as links),
    generated/, and a manifest of KEY alone; with the old and the new tree's bytes."""
    root = tmp_path_factory.mktemp("kill") / "repo"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO / "cudart", root / "cudart", symlinks=True, ignore=ignore)
    shutil.copytree(GENERATED, root / "generated", ignore=ignore)
    small = _runtime_only(Manifest.load(REPO / "cuda_headers_manifest.toml"), KEY)
    (root / "manifest.toml").write_text(small.dumps())
    old = _tree(GENERATED)
    # What the generator makes of KEY alone (its merged modules hold it alone).
    _, files = version_files(small, KEY, lambda _message: None, root / "none")
    new = {name: text.encode() for name, text in files.items() if name.endswith((".py", ".pyi"))}
    # (new also holds KEY's type stubs, the newest of its manifest: a file old lacks.)
    assert old != new
    return root, old, new


def _runtime_only(full: Manifest, key: str) -> Manifest:
    """A manifest of `key` alone and its runtime surface alone: the write is what is
    killed, and the other header families would only make each run slower."""
    family = full.major_for(key)
    family = dataclasses.replace(
        family, wheels=tuple(w for w in family.wheels if w.surface == DEFAULT_SURFACE)
    )
    pin = full.get(key)
    pin = dataclasses.replace(pin, wheels={r: pin.wheels[r] for r in family.roles})
    return type(full)({family.name: family}, {key: pin})


def _start(
    root: Path, kill_at: int | str | None = None, args: tuple[str, ...] = ("generate", "--all")
) -> subprocess.Popen:
    """`generate --all` (or `args`) of the checkout; killed by itself at write step
    `kill_at` (the test-only entry point tests/generator/generate_killed.py), or run as
    users run it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDART_BINDGEN")}
    env |= {"PYTHONPATH": str(REPO), "CUDART_BINDGEN_JOBS": "1"}
    command = ["-m", "generator"] if kill_at is None else [str(KILLED), str(kill_at)]
    return subprocess.Popen(
        [
            sys.executable,
            *command,
            "--manifest",
            str(root / "manifest.toml"),
            "--output",
            str(root / "generated"),
            *args,
        ],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _reset(root: Path, old: dict[str, bytes]) -> None:
    """generated/ back to the old tree (a kill may have left the new one)."""
    out = root / "generated"
    if _tree(out) != old:
        shutil.rmtree(out)
        shutil.copytree(GENERATED, out, ignore=shutil.ignore_patterns("__pycache__"))


def _assert_usable(root: Path, old: dict[str, bytes], new: dict[str, bytes], what: str) -> str:
    out = root / "generated"
    assert out.is_dir() and not out.is_symlink(), what
    tree = _tree(out)
    assert tree in (old, new), f"{what}: a mixed tree {sorted(tree)}"
    # Nothing beside generated/ but what was there: a killed run's staging tree may
    # wait in build/cudart-bindgen/ (ignored) for the next run to remove it.
    assert sorted(p.name for p in root.iterdir() if p.name != "build") == [
        "cudart",
        "generated",
        "manifest.toml",
    ], what
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDART_")}
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import cudart; assert cudart.__file__.startswith({str(root)!r}), cudart.__file__; "
            "print(cudart.available_versions(), cudart.sys.__name__)",
        ],
        cwd=root,
        env=env | {"PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, f"{what}: import cudart failed: {proc.stderr}"
    return "old" if tree == old else "new"


def test_kill_at_every_step_and_at_random_moments(checkout):
    root, old, new = checkout
    seen = []
    # Every step of the write, in turn, until a run gets past the last one and finishes.
    for step in range(1, 30):
        _reset(root, old)
        started = time.perf_counter()
        proc = _start(root, kill_at=step)
        _, stderr = proc.communicate(timeout=120)
        duration = time.perf_counter() - started
        if proc.returncode == 0:
            break
        assert proc.returncode == -signal.SIGKILL, stderr
        seen.append(_assert_usable(root, old, new, f"killed at step {step}"))
    else:
        pytest.fail("the write never finished")
    assert _tree(root / "generated") == new
    # The steps are each file, the folder's mode, and the exchange: both trees were seen,
    # the old one before the exchange and the new one after it.
    assert step >= len(new) + 3 and "old" in seen and seen[-1] == "new", seen

    # And from outside, at random moments of whole runs (fixed seed: reproducible).
    rng = random.Random(11)
    for _ in range(3):
        _reset(root, old)
        proc = _start(root)
        delay = rng.uniform(0.3, 1.1) * duration
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        _assert_usable(root, old, new, f"killed after {delay:.2f} s")

    # The next run removes whatever the killed ones left, and leaves nothing of its own.
    _reset(root, old)
    for leftover in (
        root / "build" / "cudart-bindgen" / "generated.999999999.deadrun",
        root / ".generated-k1lled00-old",
    ):
        leftover.mkdir(parents=True, exist_ok=True)
        (leftover / "sys_12050.py").write_text("")
    proc = _start(root)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert _assert_usable(root, old, new, "after the next run") == "new"
    assert sorted(p.name for p in root.iterdir()) == ["cudart", "generated", "manifest.toml"]


def test_a_single_version_run_removes_what_a_killed_one_left(checkout):
    """A kill -9 of `generate 12.5` between a file's write and its rename left
    generated/.<file>.<random>.tmp, which later single-version runs kept. Each run now
    removes the temporaries of generated files whose writer is dead, and nothing else."""
    root, old, new = checkout
    out = root / "generated"
    _reset(root, old)
    proc = _start(root, kill_at="replace:2", args=("generate", KEY))
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, stderr
    left = sorted(p.name for p in out.iterdir() if p.name.endswith(".tmp"))
    assert len(left) == 1 and left[0].startswith(tuple(f".{name}." for name in new)), left
    # Temporary-looking files that are not a dead writer's temporary of a generated file:
    # a running process's (this one's parent: a concurrent run), a file the generator
    # does not make, a name of another pattern, a link and a folder of the pattern.
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()
    live = os.getppid()
    kept = [
        f".sys_12050.py.{live}.abcd1234.tmp",
        f".notes.txt.{dead.pid}.abcd1234.tmp",
        ".sys_12050.py.tmp",
        f"sys_12050.py.{dead.pid}.abcd1234.tmp",
        f".sys_12050.py.{dead.pid}.abcd1234.tmp.bak",
    ]
    for name in kept:
        (out / name).write_text("mine\n")
    (out / f".cudart_12050.py.{dead.pid}.abcd1234.tmp").symlink_to("sys_12050.py")
    (out / f".sys_12050.pyi.{dead.pid}.abcd1234.tmp").mkdir()
    kept += [f".cudart_12050.py.{dead.pid}.abcd1234.tmp", f".sys_12050.pyi.{dead.pid}.abcd1234.tmp"]
    try:
        proc = _start(root, args=("generate", KEY))
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        assert sorted(p.name for p in out.iterdir() if ".tmp" in p.name) == sorted(kept)
        assert all((out / name).read_text() == "mine\n" for name in kept[:5])
    finally:
        for name in kept:
            path = out / name
            path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()
