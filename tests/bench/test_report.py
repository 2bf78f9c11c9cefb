"""bench/report.py prints only what its run measured: every number of a rendered report
follows from the run's own data (its figures, the ratios and differences of a row's
figures, the words and settings the run recorded) or from the targets' definitions;
none comes from fixed text. The figures of a real quick run on this machine, and of a
run where every target misses (so that every reason is printed)."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys

from suite import REPO

from bench import report
from bench.names import C_CUPY, FLOOR
from bench.rows import Row

NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _formats(value: float) -> set[str]:
    """How the report may print a figure: _num at each display scale, or a ratio."""
    return {
        form
        for scaled in (value, value * 1e3, value * 1e6, value / 1e3, value / 1e6)
        for form in (report._num(abs(scaled)), f"{scaled:.2f}", f"{scaled:g}")
    }


def derivable(data: dict) -> set[str]:
    """Every number the report of this run may print."""
    allowed = set(NUMBER.findall(json.dumps(data, ensure_ascii=False)))
    for t in report.TARGETS:  # the targets' own definitions: limits, not figures
        allowed |= set(NUMBER.findall(t.text)) | _formats(t.limit)
    for row in data["rows"]:
        figures = [i[k] for i in row.get("impls", []) for k in ("median", "min", "max") if k in i]
        for a in figures:
            allowed |= _formats(a)
        medians = [i["median"] for i in row.get("impls", []) if "median" in i]
        gil = [i["median"] for r in data["rows"] if r["id"] == "call.gil" for i in r["impls"]]
        for a, b in itertools.permutations(medians + gil, 2):
            allowed |= _formats(a / b) | _formats(a - b) | _formats((a + b) / b)
        for a, b, c in itertools.permutations(medians, 3):
            allowed |= _formats(a - b - c) | _formats((a + b) / c)
    return allowed


def unexplained_numbers(data: dict) -> list[str]:
    text = report.markdown(data)
    allowed = derivable(data)
    return sorted({n for n in NUMBER.findall(text) if n not in allowed})


def _row(row_id: str, unit: str, ref: str | None, figures: dict[str, float]) -> dict:
    row = Row(row_id, f"row {row_id}", unit, ref)
    for name, median in figures.items():
        row.measured(name, [median * 0.98, median, median * 1.03])
    return row.data


def every_target_missed() -> dict:
    """Rows for every target, each target with a reason missed by its figures (odd
    ones, which no fixed text would happen to print)."""
    rows: dict[str, dict] = {}
    for t in report.TARGETS:
        row = rows.setdefault(t.row, _row(t.row, "ns", None, {}))
        have = {i["name"] for i in row["impls"]}
        base = 317.3 + 11.7 * len(rows)
        for name, median in (
            (t.against.rstrip("*"), base),
            (t.impl, base * (t.limit + 0.437)),
            ("C", base * 0.611),
            (C_CUPY, base * 0.523),
            (FLOOR, base * 0.207),
        ):
            if name not in have:
                have.add(name)
                row["impls"].append(_row("", "", None, {name: median})["impls"][0])
    rows["call.gil"] = _row("call.gil", "ns", None, {"C": 83.71})
    env = {"machine": "test", "gpu": True, "date": "2026-12-02 12:00 UTC", "commit": "abc1234"}
    for row in rows.values():
        row["env"] = env
    return {"format": report.FORMAT, "command": "python -m bench", "rows": list(rows.values())}


def test_every_target_with_a_reason_is_missed_and_given_it():
    data = every_target_missed()
    statuses = {v["id"]: v["status"] for v in report.verdicts(data["rows"])}
    assert {statuses[t] for t in report.WHY} == {"missed"}, statuses
    text = report.markdown(data)
    for why in report.WHY.values():
        assert why in text


def test_a_report_prints_no_number_its_run_did_not_produce():
    """The 2026-12-02 record printed 1.14× C beside "1.08-1.13x" of fixed text."""
    assert unexplained_numbers(every_target_missed()) == []


def test_a_missed_targets_reason_cites_this_runs_figures():
    data = every_target_missed()
    why = {v["id"]: v["why"] for v in report.verdicts(data["rows"])}
    cited = "Releasing and re-taking the GIL: 83.7 ns in this run (call.gil)."
    assert cited in why["launch4.grid.C"], why["launch4.grid.C"]


def test_a_real_runs_report_prints_only_what_it_measured(tmp_path):
    """A quick run of two rows on this machine (no GPU here: the error path), rendered."""
    out = tmp_path / "run.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "--only",
            "cpu",
            "--rows",
            "get_device,gil",
            "--quick",
            "--output",
            str(out),
            "--markdown",
            str(tmp_path / "run.md"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    data = report.load(out)
    assert {r["id"] for r in data["rows"]} == {"call.cudaGetDevice", "call.gil"}
    assert unexplained_numbers(data) == []
