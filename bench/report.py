"""Targets, the Markdown table, and merging partial result files.

Ratios and target verdicts are computed here from the stored figures, never stored, so
a merged file's verdicts always follow from the rows it holds. A row is never split
across files: all its implementations come from one run, so each ratio compares
figures taken in the same process on the same machine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .names import C_CUPY, FLOOR

FORMAT = 1

# Which row ids the section headings group, in table order.
GROUPS = [
    ("Calls (raw and checked)", ("call.",)),
    ("Kernel launches, copies and event records", ("launch.", "memcpy.", "event.", "alloc.")),
    ("Import and memory", ("import", "memory")),
    ("Generator", ("generator",)),
    ("Compiling with NVRTC", ("compile.",)),
    ("Driver API (cudart.driver)", ("driver.",)),
]


@dataclass(frozen=True)
class Target:
    id: str
    text: str
    row: str
    impl: str
    against: str  # an implementation's name; a trailing '*' means the fastest one so named
    limit: float
    strict: bool = False  # ratio must be below the limit, not at or below


TARGETS = [
    # The targets for the compiled backend: against cuda-bindings and the C loop
    # run in the same process (bench/c_loops.c) on the same arguments.
    Target(
        "raw.cudaGetDevice.cuda-bindings",
        "raw cudaGetDevice (compiled backend) at or below cuda-bindings",
        "call.cudaGetDevice",
        "cudart raw, compiled",
        "cuda-bindings",
        1.0,
    ),
    Target(
        "checked.cudaGetDevice.cuda-bindings",
        "checked cudaGetDevice within 1.3× of cuda-bindings",
        "call.cudaGetDevice",
        "cudart checked",
        "cuda-bindings",
        1.3,
    ),
    Target(
        "launch4.C",
        "4-argument Function.launch within 1.05× of the in-process C loop on the same "
        "config, function and slots",
        "launch.axpy",
        "cudart kernels",
        "C",
        1.05,
    ),
    # Issue 23: every launch in C, a new grid or device arrays included.
    Target(
        "launch4.grid.C",
        "4-argument Function.launch with a new grid each launch within 1.10× of the "
        "in-process C loop writing the grid the same way",
        "launch.axpy.grid",
        "cudart kernels",
        "C",
        1.10,
    ),
    Target(
        "raw23.cudaGetDevice.C",
        "raw cudaGetDevice (compiled backend) within 1.5× of C",
        "call.cudaGetDevice",
        "cudart raw, compiled",
        "C",
        1.5,
    ),
    Target(
        "launch4.arrays.C",
        "4-argument Function.launch with device arrays (__cuda_array_interface__) within "
        "1.10× of the in-process C loop on the same slots",
        "launch.axpy.arrays",
        "cudart kernels",
        "C",
        1.10,
    ),
    # The ctypes backend's targets (it serves where the extension is not built).
    Target(
        "raw.cudaGetDevice",
        "raw cudaGetDevice, ctypes backend, within 1.1× of the best hand-written ctypes call",
        "call.cudaGetDevice",
        "cudart raw, ctypes",
        "ctypes*",
        1.1,
    ),
    Target(
        "raw.cudaStreamQuery",
        "raw cudaStreamQuery, ctypes backend, within 1.1× of hand-written ctypes",
        "call.cudaStreamQuery",
        "cudart raw, ctypes",
        "ctypes*",
        1.1,
    ),
    Target(
        "raw.cudaGetLastError",
        "raw cudaGetLastError, ctypes backend, within 1.1× of hand-written ctypes",
        "call.cudaGetLastError",
        "cudart raw, ctypes",
        "ctypes*",
        1.1,
    ),
    Target(
        "checked.cudaGetDevice",
        "checked cudaGetDevice within 1.5× of the best hand-written ctypes call",
        "call.cudaGetDevice",
        "cudart checked",
        "ctypes*",
        1.5,
    ),
    Target(
        "checked.cudaStreamQuery",
        "checked cudaStreamQuery within 1.5× of hand-written ctypes",
        "call.cudaStreamQuery",
        "cudart checked",
        "ctypes*",
        1.5,
    ),
    Target(
        "checked.cudaGetLastError",
        "checked cudaGetLastError within 1.5× of hand-written ctypes",
        "call.cudaGetLastError",
        "cudart checked",
        "ctypes*",
        1.5,
    ),
    Target(
        "launch4.cuda-bindings",
        "4-argument launch ahead of cuda-bindings (its fastest form)",
        "launch.axpy",
        "cudart kernels",
        "cuda-bindings*",
        1.0,
        strict=True,
    ),
    Target(
        "launch4.CuPy",
        "4-argument launch ahead of CuPy",
        "launch.axpy",
        "cudart kernels",
        "CuPy*",
        1.0,
        strict=True,
    ),
    Target(
        "import",
        "`import cudart` under a quarter of `import cuda.bindings.runtime`",
        "import",
        "cudart: import cudart",
        "cuda-bindings: import cuda.bindings.runtime",
        0.25,
        strict=True,
    ),
]

# Issue 23's targets for the compiled checked functions: at or below CuPy, within 1.2x
# of the raw compiled call (rows ids, the call's words).
_CHECKED_CALLS = [
    ("call.cudaGetDevice", "cudaGetDevice"),
    ("call.cudaRuntimeGetVersion", "cudaRuntimeGetVersion"),
    ("call.cudaDriverGetVersion", "cudaDriverGetVersion"),
    ("call.cudaGetDevice.raising", "cudaGetDevice raising"),
    ("call.cudaStreamQuery.object", "cudaStreamQuery(stream object)"),
    ("event.record", "cudaEventRecord"),
    ("memcpy.h2d4", "cudaMemcpyAsync of 4 bytes"),
    ("alloc.mallocfreeasync", "cudaMallocAsync + cudaFreeAsync"),
    ("call.cudaStreamCreate+Destroy", "cudaStreamCreate + cudaStreamDestroy"),
]
TARGETS += [
    Target(
        f"checked23.{row}.CuPy",
        f"checked {words} at or below CuPy",
        row,
        "cudart checked",
        "CuPy",
        1.0,
    )
    for row, words in _CHECKED_CALLS
] + [
    Target(
        f"checked23.{row}.raw",
        f"checked {words} within 1.2× of the raw compiled call",
        row,
        "cudart checked",
        "cudart raw, compiled",
        1.2,
    )
    for row, words in _CHECKED_CALLS
    if row != "call.cudaGetDevice.raising"  # the raw call returns the status, raises nothing
]

# Why a target is missed, keyed by target id: the reason in words, printed beside a miss
# (and ignored where the target is met). No figures: a report prints only what its own
# run measured, so what a reason rests on is cited from the run's rows (CITES) and the
# row's own split (_split, _floor); figures of other runs live in bench/README.md, each
# with the run it comes from. tests/bench/test_report.py holds both to that.
WHY: dict[str, str] = {
    "checked.cudaGetDevice.cuda-bindings": (
        "The checked function is Python around the compiled call, which provides the "
        "output itself (a slot of the call's own, returned with the status): a Python "
        "frame, the status check and a tuple, where cuda-bindings' Cython function has no "
        "Python frame."
    ),
    "launch4.C": (
        "What remains over the C loop is the call into C and the GIL's release (kept: a "
        "launch may wait on a full queue behind a Python host function)."
    ),
    "launch4.grid.C": (
        "What Function.launch adds to the C loop's call: the interpreter's loop and call, "
        "releasing and re-taking the GIL (kept: a launch may wait on a full queue), and the "
        "C launcher's reading of the arguments, the new grid and the configuration; "
        "`python -m bench.instructions launch floor` counts each by instruction."
    ),
    "launch4.arrays.C": (
        "As a launch with a new grid (that target's reason), and each array's address: C "
        "reads a cupy.ndarray's data.ptr and size, a cudart.arrays.DeviceArray's ptr, which "
        "give what __cuda_array_interface__ would without building its dict (the row's "
        "'no launch' line times that dict)."
    ),
    "checked23.call.cudaStreamQuery.object.CuPy": (
        "CuPy's streamQuery holds the GIL through the call; cudart releases it for every "
        "call that may wait (generator/gil.py): see bench/README.md, 'Against CuPy: which "
        "calls hold the GIL'."
    ),
    "launch4.cuda-bindings": (
        "cuda-bindings' fastest form is Cython calling cuLaunchKernel with arguments packed "
        "once and no Python frame in between; cudart's launch is a foreign call behind a "
        "Python method."
    ),
}

# Rows of the same run a reason rests on, by target id: (row id, implementation, what
# it is), printed with the run's own figure where the run measured it.
CITES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "launch4.C": (("call.gil", "C", "releasing and re-taking the GIL"),),
    "launch4.grid.C": (("call.gil", "C", "releasing and re-taking the GIL"),),
    "launch4.arrays.C": (("call.gil", "C", "releasing and re-taking the GIL"),),
    "checked23.call.cudaStreamQuery.object.CuPy": (
        ("call.gil", "C", "releasing and re-taking the GIL"),
    ),
}


# --------------------------------------------------------------------- verdicts


def _impl(row: dict, name: str) -> dict | None:
    """The measured implementation of that name; 'prefix*' picks the fastest so named."""
    measured = [i for i in row.get("impls", []) if "median" in i and not i.get("no_ratio")]
    if name.endswith("*"):
        matching = [i for i in measured if i["name"].startswith(name[:-1])]
        return min(matching, key=lambda i: i["median"]) if matching else None
    return next((i for i in measured if i["name"] == name), None)


def _why_absent(row: dict | None, name: str) -> str:
    if row is None:
        return "row not run"
    if row.get("skipped"):
        return row["skipped"]
    for impl in row.get("impls", []):
        if impl["name"] == name or (name.endswith("*") and impl["name"].startswith(name[:-1])):
            if "skipped" in impl:
                return f"{impl['name']}: {impl['skipped']}"
    return f"{name.rstrip('*')} not measured"


def _split(row: dict | None, t: Target) -> str:
    """Against CuPy, what each side adds over C through its own libcudart (CuPy's wheels
    link a copy of the runtime of their own; bench/cupy_cudart.py): a gap that is all the
    libraries' shows as equal additions. '' where either C was not measured."""
    if row is None or t.against != "CuPy":
        return ""
    c, c_cupy = _impl(row, "C"), _impl(row, C_CUPY)
    ours, cupy = _impl(row, t.impl), _impl(row, t.against)
    if c is None or c_cupy is None or ours is None or cupy is None:
        return ""
    unit = row["unit"]
    return (
        f"C through CuPy's own libcudart: {_num(c_cupy['median'])} {unit}, through "
        f"cudart's: {_num(c['median'])} {unit}. Over its own library's C, {t.impl} adds "
        f"{_num(ours['median'] - c['median'])} {unit} and CuPy "
        f"{_num(cupy['median'] - c_cupy['median'])} {unit}."
    )


def _floor(row: dict | None, t: Target) -> str:
    """Against C, what the Python loop and a builtin call cost by themselves (the row's
    floor, where it has one). '' where it has none."""
    if row is None or t.against != "C":
        return ""
    floor, c, ours = _impl(row, FLOOR), _impl(row, t.against), _impl(row, t.impl)
    if floor is None or c is None or ours is None:
        return ""
    unit = row["unit"]
    above = ours["median"] - floor["median"] - c["median"]
    return (
        f"{FLOOR}: {_num(floor['median'])} {unit}, so C's call plus the floor is "
        f"{(floor['median'] + c['median']) / c['median']:.2f}× C; {t.impl} adds "
        f"{_num(above)} {unit} to those two."
    )


def _cited(by_id: dict[str, dict], target_id: str) -> str:
    """The figures of this run that the target's reason rests on ('' where it measured
    none of them)."""
    said = []
    for row_id, name, words in CITES.get(target_id, ()):
        row = by_id.get(row_id)
        impl = _impl(row, name) if row is not None else None
        if row is not None and impl is not None:
            said.append(f"{words}: {_num(impl['median'])} {row['unit']} in this run ({row_id})")
    text = "; ".join(said)
    return f"{text[:1].upper()}{text[1:]}." if text else ""


def verdicts(rows: list[dict]) -> list[dict]:
    by_id = {r["id"]: r for r in rows}
    out = []
    for t in TARGETS:
        row = by_id.get(t.row)
        ours = _impl(row, t.impl) if row else None
        base = _impl(row, t.against) if row else None
        entry = {"id": t.id, "text": t.text, "limit": t.limit, "strict": t.strict}
        if ours is None or base is None:
            missing = t.impl if ours is None else t.against
            entry.update(status="not measured", why=_why_absent(row, missing))
        else:
            ratio = ours["median"] / base["median"]
            met = ratio < t.limit if t.strict else ratio <= t.limit
            why = (
                ""
                if met
                else " ".join(
                    filter(
                        None,
                        (WHY.get(t.id), _cited(by_id, t.id), _split(row, t), _floor(row, t)),
                    )
                )
            )
            entry.update(
                status="met" if met else "missed",
                ratio=ratio,
                against=base["name"],
                why=why,
            )
        out.append(entry)
    return out


# --------------------------------------------------------------------- markdown


def _display_unit(row: dict) -> tuple[str, float]:
    """A row's unit and the factor its figures are shown at: seconds that all fall
    under a tenth show as ms (or µs), which two decimals of a second would hide."""
    unit = row["unit"]
    figures = [i[k] for i in row.get("impls", []) for k in ("min", "max") if k in i]
    if unit != "s" or not figures or max(figures) >= 0.1:
        return unit, 1.0
    if max(figures) >= 1e-4:
        return "ms", 1e3
    return "µs", 1e6


def _num(value: float) -> str:
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _env_key(env: dict) -> str:
    return json.dumps(env, sort_keys=True)


def _where_labels(rows: list[dict]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for row in rows:
        key = _env_key(row.get("env", {}))
        if key not in labels:
            labels[key] = chr(ord("A") + len(labels))
    return labels


def _ordered(rows: list[dict]) -> list[tuple[str, list[dict]]]:
    sections = []
    used: set[int] = set()
    for title, prefixes in GROUPS:
        members = [r for r in rows if r["id"].startswith(prefixes)]
        used.update(id(r) for r in members)
        if members:
            sections.append((title, members))
    rest = [r for r in rows if id(r) not in used]
    if rest:
        sections.append(("Other", rest))
    return sections


def _ratios(impl: dict, ref: dict | None, also: dict | None) -> str:
    """The Ratio cell: to the row's reference; for cudart's own implementations also to
    the row's second reference (`also`, cuda-bindings in the cudaGetDevice row). None
    for a figure from another process (`no_ratio`)."""
    if impl.get("no_ratio"):
        return "— (another process)"
    parts = []
    for base in (ref, also if impl["name"].startswith("cudart") else None):
        if base is not None:
            parts.append(
                f"{impl['median'] / base['median']:.2f}× {_cell(base['name'].split(':')[0])}"
            )
    return "; ".join(parts)


def markdown(data: dict) -> str:
    rows = data["rows"]
    labels = _where_labels(rows)
    lines = [
        "# Benchmarks",
        "",
        "What cudart adds on top of C, as ratios to baselines measured in the same run on the same "
        "machine. Medians over repeats, spread as min–max; nothing is subtracted. Each row's "
        "figures all come from one run (see *Where*); only whole rows are merged.",
        "",
        "Reproduce (see bench/README.md):",
        "",
        "```sh",
        *data.get("reproduce", []),
        "```",
        "",
        f"This file: `{data.get('command', '?')}`"
        + "".join(
            f"{', merging' if n == 0 else ' and'} `{c}`"
            for n, c in enumerate(data.get("sources", []))
        ),
        "",
    ]
    for title, members in _ordered(rows):
        lines += [
            f"## {title}",
            "",
            "| Row | Implementation | Median | Spread (min–max) | Ratio | Where |",
            "|---|---|---:|---|---:|:-:|",
        ]
        for row in members:
            unit, scale = _display_unit(row)
            where = labels[_env_key(row.get("env", {}))]
            title_cell = _cell(row["title"])
            if row.get("skipped"):
                lines.append(
                    f"| {title_cell} | — | — | skipped: {_cell(row['skipped'])} | | {where} |"
                )
                continue
            ref = _impl(row, row["ref"]) if row.get("ref") else None
            also = _impl(row, row["also"]) if row.get("also") else None
            for n, impl in enumerate(row["impls"]):
                first = title_cell if n == 0 else ""
                name = _cell(impl["name"])
                if "median" not in impl:
                    lines.append(
                        f"| {first} | {name} | — | skipped: {_cell(impl['skipped'])} | | {where} |"
                    )
                    continue
                ratio = _ratios(impl, ref, also)
                low, high = _num(impl["min"] * scale), _num(impl["max"] * scale)
                spread = f"{low}–{high} ({impl['repeats']}×)"
                lines.append(
                    f"| {first} | {name} | {_num(impl['median'] * scale)} {unit} | {spread} "
                    f"| {ratio} | {where} |"
                )
        lines.append("")
        notes = [(r, note) for r in members for note in r.get("notes", [])]
        details = [(r, i) for r in members for i in r.get("impls", []) if i.get("detail")]
        for row, note in notes:
            lines.append(f"- {_cell(row['title'])}: {note}")
        said = set()
        for _row, impl in details:
            if (impl["name"], impl["detail"]) not in said:  # one build serves several rows
                said.add((impl["name"], impl["detail"]))
                lines.append(f"- {impl['name']}: {impl['detail']}")
        if notes or details:
            lines.append("")
    lines += [
        "## Targets",
        "",
        "| Target | Ratio | Limit | Status | Why |",
        "|---|---:|---:|---|---|",
    ]
    for v in verdicts(rows):
        ratio = f"{v['ratio']:.2f}× {v['against']}" if "ratio" in v else "—"
        limit = f"{'<' if v['strict'] else '≤'} {v['limit']:g}×"
        lines.append(
            f"| {_cell(v['text'])} | {_cell(ratio)} | {limit} | {v['status']} | {_cell(v['why'])} |"
        )
    lines += ["", "## Where", ""]
    for key, label in labels.items():
        env = json.loads(key)
        parts = [
            f"{k}: {env[k]}"
            for k in ("machine", "runtime", "python", "os", "date", "commit")
            if k in env
        ]
        lines.append(f"- **{label}**: " + "; ".join(parts))
    lines.append("")
    return "\n".join(lines)


# ------------------------------------------------------------------------ files


def load(path: Path) -> dict:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a bench result file of format {FORMAT}")
    return data


def _measured(row: dict) -> int:
    return 0 if row.get("skipped") else sum("median" in i for i in row.get("impls", []))


def merge(files: list[dict]) -> list[dict]:
    """One row per id. A row measured with a GPU beats one measured without (the GPU
    machine's call figures are the real ones); otherwise the row with more measured
    implementations wins, then the file given first."""
    best: dict[str, tuple] = {}
    order: list[str] = []
    for rank, data in enumerate(files):
        for row in data["rows"]:
            score = (_measured(row) > 0, bool(row.get("env", {}).get("gpu")), _measured(row), -rank)
            if row["id"] not in best:
                order.append(row["id"])
            if row["id"] not in best or score > best[row["id"]][0]:
                best[row["id"]] = (score, row)
    return [best[i][1] for i in order]
