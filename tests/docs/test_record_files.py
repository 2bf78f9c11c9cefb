"""The committed records of runs (tests/gpu/results/, bench/results/) and the writers that
make them name no folder of the checkout that ran: a path inside the tree is written
relative to it, since the record is read on other machines, where the folder that one
copy lay in means nothing."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
from suite import REPO

RECORDS = sorted(
    p
    for folder in (REPO / "tests" / "gpu" / "results", REPO / "bench" / "results")
    for p in folder.iterdir()
    if p.is_file()
)
# An absolute path: a slash that starts a word, then path characters.
ABSOLUTE = re.compile(r"(?<![\w.~+-])/(?:[\w.+-]+/)*[\w.+-]+")
# Folders only a checkout of this project has: the device payload's, and the tree's own.
CHECKOUT_FOLDERS = {".device"} | {
    p.name for p in REPO.iterdir() if p.is_dir() and (REPO / ".git").exists() and p.name[0] != "."
}
INSTALLED = ("site-packages", "dist-packages")


def _checkouts() -> list[str]:
    """This checkout and the repository's other worktrees, where git can say."""
    roots = [str(REPO), str(REPO.resolve())]
    if shutil.which("git") and (REPO / ".git").exists():
        listed = subprocess.run(
            ["git", "-C", str(REPO), "worktree", "list", "--porcelain"],
            capture_output=True,
            text=True,
        ).stdout
        roots += [
            line.split(" ", 1)[1] for line in listed.splitlines() if line.startswith("worktree ")
        ]
    return sorted(set(roots))


def checkout_paths(text: str, checkouts: list[str]) -> list[str]:
    """The absolute paths in text that lie in a checkout: under one of `checkouts`, or
    through a folder only a checkout of this project has (an installed package's own
    folders, under site-packages, are not one)."""
    found = []
    for path in ABSOLUTE.findall(text):
        parts = path.split("/")[1:]
        inside = any(path == root or path.startswith(root.rstrip("/") + "/") for root in checkouts)
        through = not any(p in INSTALLED for p in parts) and any(
            p in CHECKOUT_FOLDERS for p in parts[1:]
        )
        if inside or through:
            found.append(path)
    return found


def test_the_rule_finds_what_it_should():
    checkouts = ["/work/main"]
    text = (
        "| 12.9 | 12.9 /work/main/.device/libs/12.9/libcudart.so.12 | (/x/y/tests/gpu/a.py) "
        "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13 "
        "/usr/local/cuda/lib64/libcudart.so.13 `tests/gpu/test_kernels.py::t` "
        "/srv/x/site-packages/cudart/_fast.so 12.0/12.1 .device/libs/12.0/libcudart.so.12"
    )
    assert checkout_paths(text, checkouts) == [
        "/work/main/.device/libs/12.9/libcudart.so.12",
        "/x/y/tests/gpu/a.py",
    ]


@pytest.mark.parametrize("record", RECORDS, ids=lambda p: str(p.relative_to(REPO)))
def test_no_record_names_a_checkout_folder(record):
    found = checkout_paths(record.read_text(encoding="utf-8"), _checkouts())
    assert found == [], f"{record.relative_to(REPO)} names the checkout that ran: {found[:5]}"


def test_the_gpu_digest_names_libraries_relative_to_the_checkout(tmp_path):
    """summarize.py's digest, from a run's JUnit file and log as run_on_device.sh leaves
    them, where the runtime was one of the payload's (inside the checkout) and the
    machine's own (outside it)."""
    results = tmp_path / "results"
    results.mkdir()
    inside = REPO / ".device" / "libs" / "13.0" / "libcudart.so.13"
    outside = "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13"
    for label, library in (("13.0", str(inside)), ("machine", outside)):
        (results / f"log-{label}.txt").write_text(f"runtime: 13.0 {library}\n")
        (results / f"junit-{label}.xml").write_text(
            '<testsuites><testsuite name="pytest"><testcase classname="tests.gpu.test_x" '
            'name="test_y"/></testsuite></testsuites>'
        )
    stamp = tmp_path / "COMMIT"
    stamp.write_text("commit 0123456789abcdef0123456789abcdef01234567\ndirty no\n")
    subprocess.run(
        [sys.executable, str(REPO / "tests" / "gpu" / "summarize.py"), str(results), str(stamp)],
        capture_output=True,
        text=True,
        check=True,
    )
    (digest,) = results.glob("digest-*.md")
    text = digest.read_text()
    assert "| 13.0 | 13.0 .device/libs/13.0/libcudart.so.13 | 1 | 0 | 0 |" in text, text
    assert f"| machine | 13.0 {outside} | 1 | 0 | 0 |" in text, text
    assert str(REPO) not in text


def test_the_bench_names_its_runtime_relative_to_the_checkout():
    import cudart
    from bench import env

    inside = REPO / ".device" / "libs" / "13.0" / "libcudart.so.13"
    described = env.describe(env.Runtime(rt=cudart.sys, path=str(inside), version=13000))
    assert described["runtime"].startswith("libcudart 13.0 (.device/libs/13.0/libcudart.so.13)")
    assert str(REPO) not in described["runtime"]


# ----------------------------------------------- what tests/gpu/RESULTS.md says of a digest

GPU_RESULTS = REPO / "tests" / "gpu" / "RESULTS.md"
COUNTED = re.compile(r"(\d+) failures? in (\d+) runs?")
DIGEST = re.compile(r"results/(\d{4}-\d\d-\d\d-[\w.-]+?\.md)")


def _bullets(text: str) -> list[str]:
    """Each list item of the file with its continuation lines, nested items included."""
    items: list[str] = []
    for line in text.splitlines():
        if line.startswith("- "):
            items.append(line)
        elif items and line.startswith("  "):
            items[-1] += "\n" + line
        else:
            items.append("")
    return [i for i in items if i]


def digest_failures(name: str) -> tuple[int, int, int]:
    """(failed tests, runs with a failure, runs) of a digest's whole-suite table."""
    text = (REPO / "tests" / "gpu" / "results" / name).read_text(encoding="utf-8")
    table = text.split("Of which", 1)[0]
    failed = [
        int(cells[4])
        for line in table.splitlines()
        if line.startswith("| ") and len(cells := [c.strip() for c in line.split("|")]) > 5
        if cells[4].isdigit()
    ]
    return sum(failed), sum(f > 0 for f in failed), len(failed)


def test_results_counts_failures_as_its_digests_do():
    """Where an entry of tests/gpu/RESULTS.md names its digests and counts "N failures in
    M runs" (M: the runs that failed, or all of them where none did), one of its counts
    is the digests' own. At bec1204 it said 7 in 6; the digests show 6 in 5."""
    checked = 0
    for bullet in _bullets(GPU_RESULTS.read_text(encoding="utf-8")):
        said = {(int(n), int(m)) for n, m in COUNTED.findall(bullet)}
        names = sorted(set(DIGEST.findall(bullet)))
        if not said or not names:
            continue
        failed, failing_runs, runs = (
            sum(x) for x in zip(*map(digest_failures, names), strict=True)
        )
        expected = (failed, failing_runs if failed else runs)
        assert expected in said, (f"the digests show {expected}, the entry says {said}", names)
        checked += 1
    assert checked >= 2
