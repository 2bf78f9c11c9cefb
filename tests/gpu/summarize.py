"""Summarize the JUnit files of a GPU run (tests/gpu/run_on_device.sh) as Markdown."""

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


def main(folder: str) -> None:
    rows = []
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
    print(
        f"GPU run of {datetime.date.today().isoformat()} on {machine()}, "
        f"Python {sys.version.split()[0]}\n"
    )
    print("| runtime set | libcudart | passed | failed | skipped |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
