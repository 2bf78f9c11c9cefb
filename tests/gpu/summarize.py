"""Summarize the JUnit files of a GPU run (tests/gpu/run_on_device.sh) as Markdown.

    summarize.py stamp FILE   (here, by prepare_device_libs.sh) the commit of this tree
                              and whether it has uncommitted changes, into FILE
    summarize.py OUT [STAMP]  (there) the table of each runtime set, printed, and the
                              digest of the run written to OUT/digest-<date>-<commit>.md

The table: the whole suite per runtime set, then one per part named in PARTS (the ports
of the peers' runtime tests). The digest adds the commit the run tested (from STAMP,
which travels with the tree: the device's copy may have no git metadata) and every
failed and skipped test id with its reason and the runtime sets it happened on; the
lead commits it as tests/gpu/results/<date>-<commit>.md.
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

# A part of the suite with its own table: its folder, as pytest's JUnit classnames
# spell it (the node id's path with dots).
PARTS = {"tests/gpu/peer": "tests.gpu.peer."}
UNKNOWN_COMMIT = "unknown"
CHECKOUT = Path(__file__).resolve().parents[2]


def machine() -> str:
    try:
        out = (
            subprocess.run(
                ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                check=True,
            )
            .stdout.strip()
            .splitlines()
        )
        return "; ".join(out)
    except (OSError, subprocess.CalledProcessError):
        return "unknown (nvidia-smi failed)"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def stamp(path: Path, repo: Path) -> str:
    """Write `commit <sha>` and `dirty <yes|no>` for the tree at repo into path."""
    commit = _git(repo, "rev-parse", "HEAD")
    dirty = "yes" if _git(repo, "status", "--porcelain", "--untracked-files=no") else "no"
    text = f"commit {commit}\ndirty {dirty}\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return text


def read_stamp(path: Path | None) -> tuple[str, bool]:
    """(commit, dirty) from a stamp file; (UNKNOWN_COMMIT, False) where there is none."""
    if path is None or not path.is_file():
        return UNKNOWN_COMMIT, False
    fields = dict(line.split(" ", 1) for line in path.read_text().splitlines() if " " in line)
    return fields.get("commit", UNKNOWN_COMMIT), fields.get("dirty") == "yes"


@dataclass(frozen=True)
class Case:
    test_id: str  # the pytest node id
    outcome: str  # passed | failed | skipped
    reason: str  # the first line of the failure, error or skip message


def _test_id(case: ET.Element) -> str:
    classname = case.get("classname", "")
    module, _, cls = classname.partition(".Test")
    path = module.replace(".", "/") + ".py"
    return f"{path}::{'Test' + cls + '::' if cls else ''}{case.get('name', '')}"


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0].strip() if lines else ""


def cases(suite: ET.Element) -> list[Case]:
    found = []
    for case in suite.iter("testcase"):
        outcome, reason = "passed", ""
        for tag, name in (("failure", "failed"), ("error", "failed"), ("skipped", "skipped")):
            element = case.find(tag)
            if element is not None:
                outcome = name
                reason = _first_line(element.get("message")) or _first_line(element.text)
                break
        found.append(Case(_test_id(case), outcome, reason))
    return found


def counts(found: list[Case]) -> tuple[int, int, int]:
    """(passed, failed, skipped); a case with a failure or an error counts as failed."""
    return tuple(sum(c.outcome == o for c in found) for o in ("passed", "failed", "skipped"))


@dataclass
class Run:
    label: str  # the runtime set: a version or "machine", "-ctypes" for that backend
    runtime: str  # what the log says was loaded
    cases: list[Case]


def read_runs(folder: Path) -> list[Run]:
    runs = []
    for path in sorted(folder.glob("junit-*.xml")):
        root = ET.parse(path).getroot()
        suite = root if root.tag == "testsuite" else root.find("testsuite")
        if suite is None:
            raise SystemExit(f"{path}: no <testsuite> element")
        label = path.stem[len("junit-") :]
        runs.append(Run(label, _runtime(folder / f"log-{label}.txt"), cases(suite)))
    return runs


def _runtime(log: Path) -> str:
    if not log.exists():
        return "?"
    for line in log.read_text().splitlines():
        if "runtime:" in line:
            return checkout_relative(line.split("runtime:", 1)[1].strip(), CHECKOUT)
    return "?"


def checkout_relative(text: str, checkout: Path) -> str:
    """text with each path inside the checkout written relative to it. A record is
    committed and read on other machines: the folder that machine's copy of the tree
    happened to lie in tells them nothing, and names that machine."""
    for root in dict.fromkeys((str(checkout), str(checkout.resolve()))):
        text = re.sub(rf"(?<![\w./-]){re.escape(root.rstrip('/'))}/", "", text)
    return text


def table(runs: list[Run], prefix: str = "") -> list[str]:
    lines = [
        "| runtime set | libcudart | passed | failed | skipped |",
        "| --- | --- | --- | --- | --- |",
    ]
    for run in runs:
        chosen = [c for c in run.cases if c.test_id.replace("/", ".").startswith(prefix)]
        if prefix and not chosen:
            continue
        lines.append(
            "| " + " | ".join(str(x) for x in (run.label, run.runtime, *counts(chosen))) + " |"
        )
    return lines


def tables(runs: list[Run]) -> list[str]:
    lines = table(runs)
    for name, prefix in PARTS.items():
        part = table(runs, prefix)
        if len(part) > 2:
            lines += ["", f"Of which `{name}/`:", "", *part]
    return lines


def outcomes(runs: list[Run], outcome: str) -> list[str]:
    """One line per (test, reason) with that outcome, naming the runtime sets."""
    where: dict[tuple[str, str], list[str]] = defaultdict(list)
    for run in runs:
        for case in run.cases:
            if case.outcome == outcome:
                where[(case.test_id, case.reason)].append(run.label)
    return [
        f"- `{test_id}`: {reason or '(no message)'} [{', '.join(labels)}]"
        for (test_id, reason), labels in sorted(where.items())
    ]


def digest(runs: list[Run], commit: str, dirty: bool, header: str) -> str:
    state = " (with uncommitted changes)" if dirty else ""
    lines = [f"# GPU run at {commit}{state}", "", header, "", *tables(runs)]
    for outcome in ("failed", "skipped"):
        found = outcomes(runs, outcome)
        lines += ["", f"## {outcome.capitalize()} ({len(found)} test/reason pairs)", ""]
        lines += found or ["None."]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if argv[:1] == ["stamp"] and len(argv) == 2:
        print(stamp(Path(argv[1]), CHECKOUT), end="")
        return 0
    if len(argv) not in (1, 2):
        print(__doc__, file=sys.stderr)
        return 2
    folder = Path(argv[0])
    commit, dirty = read_stamp(Path(argv[1]) if len(argv) == 2 else None)
    runs = read_runs(folder)
    today = datetime.date.today().isoformat()
    header = (
        f"GPU run of {today} on {machine()}, Python {sys.version.split()[0]}, "
        f"commit {commit}{' (dirty)' if dirty else ''}"
    )
    name = f"digest-{today}-{commit[:12]}.md"
    (folder / name).write_text(digest(runs, commit, dirty, header))
    print(header + "\n")
    print("\n".join(tables(runs)))
    print(f"\nDigest: {folder / name} (commit it as tests/gpu/results/{name[7:]})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
