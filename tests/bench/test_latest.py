"""bench/RESULTS.md is what `python -m bench.latest` makes of the recorded runs in
bench/results/: each row, figures and ratios, exactly as the run it names printed it,
the latest run that measured it (it was a hand-built table of 2026-11-30 showing the
checked cudaGetDevice at 284 ns, which later runs superseded)."""

from __future__ import annotations

import re
import subprocess
import sys

from suite import REPO

from bench import latest

RESULTS = REPO / "bench" / "RESULTS.md"


def test_results_md_is_what_the_script_makes_of_the_records():
    proc = subprocess.run(
        [sys.executable, "-m", "bench.latest", "--check"], cwd=REPO, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert latest.render(latest.runs()) == latest.render(latest.runs())  # deterministic


def _runs_named(text: str) -> dict[str, str]:
    """R<n> -> the record file its Where line names."""
    return dict(re.findall(r"^- \*\*(R\d+)\*\*: \[results/([^\]]+)\]", text, re.MULTILINE))


def test_every_figure_is_a_line_its_named_run_printed():
    text = RESULTS.read_text(encoding="utf-8")
    named = _runs_named(text)
    records = {name: (REPO / "bench" / "results" / name).read_text() for name in named.values()}
    lines = [line for line in text.splitlines() if re.match(r"\| .* \| R\d+ \|$", line)]
    assert len(lines) > 100
    for line in lines:
        body, run = line.rsplit(" | ", 1)
        record = records[named[run.rstrip(" |")]]
        assert body + " | " in record, f"{line!r} is not a line of {named[run.rstrip(' |')]}"


def test_each_row_comes_from_the_latest_run_that_measured_it():
    text = RESULTS.read_text(encoding="utf-8")
    checked = [line for line in text.splitlines() if line.startswith("|  | cudart checked |")]
    get_device = text.split("| cudaGetDevice(&device): one pointer out |", 1)[1]
    first_checked = next(line for line in get_device.splitlines() if "| cudart checked |" in line)
    assert checked and "284 ns" not in first_checked, first_checked
    assert first_checked.endswith(" |") and "2026-12-02-launch-after-trim.md" in text
    run = first_checked.rsplit(" | ", 1)[1].rstrip(" |")
    assert _runs_named(text)[run] == "2026-12-02-launch-after-trim.md"
