"""bench/RESULTS.md from the recorded runs in bench/results/: each row as the latest run
that measured it printed it, naming that run.

    python -m bench.latest           write bench/RESULTS.md
    python -m bench.latest --check   exit 1 where bench/RESULTS.md is not what it would write

A record is a report of bench/report.py (one or more, each from `# Benchmarks`), with
an optional first-line comment saying what the run was. A row is chosen by title: one
measured over one skipped, one measured with a GPU over one without (the GPU machine's
call figures are the real ones), then the later run (its Where line's date), then the
later file name. Its lines are copied as the run printed them, figures and ratios
alike: nothing here computes or retypes a figure. Targets likewise, each from the
latest run that measured it (without the reason, which is its run's: see the record).
Deterministic: the same records give the same file.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .report import GROUPS, TARGETS

HERE = Path(__file__).resolve().parent
RECORDS = HERE / "results"
RESULTS_MD = HERE / "RESULTS.md"
DATE = re.compile(r"date: (\d{4}-\d\d-\d\d \d\d:\d\d) UTC")


@dataclass
class Row:
    title: str
    section: str
    lines: list[str]  # as the run printed them, the Where cell last
    notes: list[str] = field(default_factory=list)

    @property
    def measured(self) -> bool:
        return any(_cells(line)[2] not in ("—", "") for line in self.lines)

    @property
    def where(self) -> str:
        return _cells(self.lines[0])[-1]


@dataclass(eq=False)  # one object per report read: identity is equality
class Part:
    """One report of a record file: its rows, targets and Where lines."""

    record: str  # the file's name
    index: int  # which report of the file, from 1
    of: int
    note: str  # the file's first-line comment
    rows: list[Row]
    targets: list[str]  # the Targets table's lines
    where: dict[str, str]  # letter -> the Where line's text


def _where(line: str, label: str) -> str:
    """The line with its last cell (Where, or a target's Why) replaced by `label`."""
    return re.sub(r"(?<!\\)\|(?:[^|]|\\\|)*\|\s*$", f"| {label} |", line)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def parse(path: Path) -> list[Part]:
    text = path.read_text(encoding="utf-8")
    first = text.splitlines()[0] if text else ""
    note = first[4:-3].strip() if first.startswith("<!--") and first.endswith("-->") else ""
    chunks = re.split(r"^# Benchmarks$", text, flags=re.MULTILINE)[1:]
    parts = []
    for n, chunk in enumerate(chunks, start=1):
        rows: list[Row] = []
        targets: list[str] = []
        where: dict[str, str] = {}
        section = ""
        for line in chunk.splitlines():
            if line.startswith("## "):
                section = line[3:].strip()
            elif section == "Targets":
                if line.startswith("| ") and not line.startswith("| Target |"):
                    targets.append(line)
            elif section == "Where":
                if m := re.match(r"- \*\*(\w+)\*\*: (.*)", line):
                    where[m[1]] = m[2]
            elif line.startswith("| ") and not line.startswith("| Row |"):
                title = _cells(line)[0]
                if title:
                    rows.append(Row(title, section, [line]))
                elif rows:
                    rows[-1].lines.append(line)
            elif line.startswith("- "):
                _attach(rows, section, line)
        parts.append(Part(path.name, n, len(chunks), note, rows, targets, where))
    return parts


def _attach(rows: list[Row], section: str, line: str) -> None:
    """A note line goes to the row it names; an implementation's detail line to each row
    of the section with that implementation."""
    for row in rows:
        if row.section == section and line.startswith(f"- {row.title}: "):
            row.notes.append(line)
            return
    for row in rows:
        names = [_cells(x)[1] for x in row.lines]
        if row.section == section and any(line.startswith(f"- {name}: ") for name in names):
            row.notes.append(line)


@dataclass(frozen=True)
class Run:
    part: Part
    letter: str

    @property
    def env(self) -> str:
        return self.part.where.get(self.letter, "")

    @property
    def rank(self) -> tuple:
        date = DATE.search(self.env)
        gpu = "GPU: none" not in self.env and "GPU: unknown" not in self.env
        return (gpu, date[1] if date else "", self.part.record, self.part.index)


def runs(records: Path = RECORDS) -> list[Part]:
    return [part for path in sorted(records.glob("*.md")) for part in parse(path)]


def render(parts: list[Part]) -> str:
    chosen: dict[str, tuple[tuple, Row, Run]] = {}
    for part in parts:
        for row in part.rows:
            run = Run(part, row.where)
            key = (row.measured, *run.rank)
            if row.title not in chosen or key > chosen[row.title][0]:
                chosen[row.title] = (key, row, run)
    targets: dict[str, tuple[tuple, str, Run]] = {}
    for part in parts:
        letters = sorted(part.where)
        for line in part.targets:
            # A target's row is one of the part's; where the part merged runs, the
            # target's run is not said, so the part's latest run stands for it.
            run = max((Run(part, x) for x in letters), key=lambda r: r.rank)
            cells = _cells(line)
            key = (cells[3] != "not measured", *run.rank)
            if cells[0] not in targets or key > targets[cells[0]][0]:
                targets[cells[0]] = (key, line, run)

    used = sorted(
        {run for _, _, run in chosen.values()} | {run for _, _, run in targets.values()},
        key=lambda r: r.rank[1:] + (r.letter,),
    )
    label = {run: f"R{n}" for n, run in enumerate(used, start=1)}
    lines = [
        "# Benchmarks: the latest recorded run of each row",
        "",
        "Made by `python -m bench.latest` from the records in [results/](results/): each row "
        "as the latest run that measured it printed it (one with a GPU before one without), "
        "its figures and ratios unchanged, and *Where* names that run (below). Rows of "
        "different runs do not compare: within a row, every figure comes from one run. "
        "Do not edit by hand: record a run under results/ and run the script.",
        "",
    ]
    order = [title for title, _ in GROUPS]
    sections = sorted(
        {row.section for _, row, _ in chosen.values()},
        key=lambda s: (order.index(s) if s in order else len(order), s),
    )
    for section in sections:
        members = [(row, run) for _, row, run in chosen.values() if row.section == section]
        members.sort(key=lambda m: (m[1].rank[1:], m[0].title))
        lines += [
            f"## {section}",
            "",
            "| Row | Implementation | Median | Spread (min–max) | Ratio | Where |",
            "|---|---|---:|---|---:|:-:|",
        ]
        notes: list[str] = []
        for row, run in members:
            for line in row.lines:
                lines.append(_where(line, label[run]))
            notes += [n for n in row.notes if n not in notes]
        lines += ["", *notes, ""] if notes else [""]
    lines += [
        "## Targets",
        "",
        "Each as the latest run that measured it gave it; the reason for a miss is in that "
        "run's record.",
        "",
        "| Target | Ratio | Limit | Status | Where |",
        "|---|---:|---:|---|:-:|",
    ]
    known = [t.text for t in TARGETS]
    ranked = sorted(
        targets.items(), key=lambda t: (known.index(t[0]) if t[0] in known else 99, t[0])
    )
    for _, (_, line, run) in ranked:
        lines.append(_where(line, label[run]))
    lines += ["", "## Where", ""]
    for run in used:
        part = run.part
        which = f", report {part.index} of {part.of}" if part.of > 1 else ""
        said = f" {part.note}" if part.note else ""
        lines.append(
            f"- **{label[run]}**: [results/{part.record}](results/{part.record}){which}, "
            f"its Where {run.letter}.{said} Where: {run.env}"
        )
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    text = render(runs())
    if argv == ["--check"]:
        if RESULTS_MD.read_text(encoding="utf-8") != text:
            print("bench/RESULTS.md is not what python -m bench.latest writes", file=sys.stderr)
            return 1
        return 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    RESULTS_MD.write_text(text, encoding="utf-8")
    print(f"wrote {RESULTS_MD}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
