"""Summarize the JUnit files of a GPU run (tests/gpu/run_on_device.sh) as Markdown.

One table of the whole suite per runtime, then one per part named in PARTS (the ports
of the peers' runtime tests), counted from the test cases under that folder.
"""

from __future__ import annotations

import datetime
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


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


# A part of the suite with its own table: its folder, as pytest's JUnit classnames
# spell it (the node id's path with dots).
PARTS = {"tests/gpu/peer": "tests.gpu.peer."}


def part_counts(suite: ET.Element, prefix: str) -> tuple[int, int, int]:
    """(passed, failed, skipped) of the test cases whose classname starts with prefix;
    a case with a failure or an error counts as failed."""
    passed = failed = skipped = 0
    for case in suite.iter("testcase"):
        if not case.get("classname", "").startswith(prefix):
            continue
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped


def main(folder: str) -> None:
    rows = []
    parts: dict[str, list[tuple[object, ...]]] = {name: [] for name in PARTS}
    for path in sorted(Path(folder).glob("junit-*.xml")):
        root = ET.parse(path).getroot()
        suite = root if root.tag == "testsuite" else root.find("testsuite")
        if suite is None:
            raise SystemExit(f"{path}: no <testsuite> element")
        tests = int(suite.get("tests", 0))
        failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skipped = int(suite.get("skipped", 0))
        log = Path(folder) / f"log-{path.stem[6:]}.txt"
        runtime = (
            next(
                (
                    line.split("runtime:", 1)[1].strip()
                    for line in log.read_text().splitlines()
                    if "runtime:" in line
                ),
                "?",
            )
            if log.exists()
            else "?"
        )
        rows.append((path.stem[6:], runtime, tests - failed - skipped, failed, skipped))
        for name, prefix in PARTS.items():
            counts = part_counts(suite, prefix)
            if any(counts):
                parts[name].append((path.stem[6:], runtime, *counts))
    print(
        f"GPU run of {datetime.date.today().isoformat()} on {machine()}, "
        f"Python {sys.version.split()[0]}\n"
    )
    print("| runtime set | libcudart | passed | failed | skipped |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    for name, part_rows in parts.items():
        if not part_rows:
            continue
        print(f"\nOf which `{name}/`:\n")
        print("| runtime set | libcudart | passed | failed | skipped |")
        print("| --- | --- | --- | --- | --- |")
        for row in part_rows:
            print("| " + " | ".join(str(c) for c in row) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
