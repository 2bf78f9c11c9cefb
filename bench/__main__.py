"""python -m bench: run the benchmark rows, print the table, write the result files.

python -m bench [--only cpu|gpu|all] [--rows compile,...] [--output F.json] [--markdown F.md|-]
                [--quick]
python -m bench merge A.json B.json ... [--output FILE.json] [--markdown FILE.md|-]
python -m bench stamp [FILE]   the commit of this tree, for a copy of it that runs elsewhere
                               (default .device/bench-stamp; bench/stamp.py)
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
from pathlib import Path

from . import env as envmod
from . import latest, registry, report, rows, stamp

HERE = Path(__file__).resolve().parent
RESULTS_JSON = HERE / "results.json"
# A full run's or a merge's report is recorded as bench/results/<date>-<what>.md, and
# bench/RESULTS.md remade from the records (bench/latest.py): never written directly.
RECORDS = HERE / "results"

REPRODUCE = [
    "make bench                      # every row here -> a record in bench/results/, RESULTS.md",
    "# or: CPU rows here, GPU rows on the GPU machine (no generator tools there), then merge",
    "make bench BENCH_ARGS='--only cpu --output cpu.json --markdown -'",
    ".venv/bin/python -m bench stamp   # the commit, for the copy there (.device/bench-stamp)",
    "python3 setup.py --quiet build_ext --inplace   # GPU machine: the compiled backend",
    "PYTHONPATH=$PWD python3 -m bench --only gpu --output gpu.json --markdown -   # GPU machine",
    ".venv/bin/python -m bench merge gpu.json cpu.json   # -> results.json, a record, RESULTS.md",
]


def _progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def _command(argv: list[str]) -> str:
    return shlex.join(["python", "-m", "bench", *argv])


def _write(data: dict, output: Path | None, md_path: Path | None) -> str:
    text = report.markdown(data)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        _progress(f"wrote {output}")
    if md_path is not None:
        md_path.parent.mkdir(parents=True, exist_ok=True)
        md_path.write_text(text, encoding="utf-8")
        _progress(f"wrote {md_path}")
        if md_path.resolve().parent == RECORDS.resolve():
            latest.main([])  # a new record: RESULTS.md follows it
    return text


def _record(what: str) -> Path:
    return RECORDS / f"{time.strftime('%Y-%m-%d', time.gmtime())}-{what}.md"


def _md_arg(value: str | None, default: Path | None) -> Path | None:
    if value is None:
        return default
    return None if value == "-" else Path(value)


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        choices=("cpu", "gpu", "all"),
        default="all",
        help="cpu: rows that need no GPU; gpu: rows worth running on the GPU machine",
    )
    parser.add_argument("--output", type=Path, help="result file (JSON), the input of `merge`")
    parser.add_argument("--markdown", help="Markdown table file, or - for none")
    parser.add_argument(
        "--quick", action="store_true", help="few repeats: a smoke test, not figures"
    )
    parser.add_argument(
        "--rows",
        help="only these row functions, comma-separated, by name without row_ (compile,import)",
    )
    args = parser.parse_args(argv)
    wanted = set(args.rows.split(",")) if args.rows else None
    full = args.only == "all" and wanted is None
    output = args.output or (RESULTS_JSON if full else HERE / f"results-{args.only}.json")
    md_path = _md_arg(args.markdown, _record("full") if full else None)

    started = time.perf_counter()
    runtime = envmod.load()
    environment = envmod.describe(runtime)
    _progress(f"{environment['machine']}; {environment['runtime']}; {environment['python']}")
    settings = rows.QUICK if args.quick else rows.FULL
    results = []
    with tempfile.TemporaryDirectory(prefix="cudart-bench-") as build:
        ctx = rows.Context(runtime, settings, Path(build))
        for tags, make in registry.all_rows():
            if args.only != "all" and args.only not in tags:
                continue
            if wanted is not None and make.__name__.removeprefix("row_") not in wanted:
                continue
            t0 = time.perf_counter()
            try:
                made = make(ctx)
            except Exception as exc:  # a bug in one row must not lose the others' figures
                name = make.__name__.removeprefix("row_")
                made = rows.Row(f"error.{name}", name, "", None).skip_row(
                    f"the row crashed: {type(exc).__name__}: {exc}"
                )
            for row in made if isinstance(made, list) else [made]:
                row.data["env"] = environment
                results.append(row.data)
                _progress(f"{row.data['id']}: {time.perf_counter() - t0:.1f} s")
    data = {
        "format": report.FORMAT,
        "command": _command(argv) + (" (--quick: smoke test, not figures)" if args.quick else ""),
        "reproduce": REPRODUCE,
        "env": environment,
        "rows": results,
    }
    print(_write(data, output, md_path))
    _progress(f"done in {time.perf_counter() - started:.0f} s")
    return 0


def merge(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench merge", description="merge partial result files into one table"
    )
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--output", type=Path, default=RESULTS_JSON)
    parser.add_argument(
        "--markdown", help="Markdown file, or - for none (default bench/results/<date>-merge.md)"
    )
    args = parser.parse_args(argv)
    try:
        files = [report.load(p) for p in args.files]
    except (OSError, ValueError) as exc:
        print(f"bench merge: {exc}", file=sys.stderr)
        return 2
    data = {
        "format": report.FORMAT,
        "command": _command(["merge", *argv]),
        "sources": [d.get("command", "?") for d in files],
        "reproduce": REPRODUCE,
        "rows": report.merge(files),
    }
    print(_write(data, args.output, _md_arg(args.markdown, _record("merge"))))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # The table has µ, × and –: under an ASCII locale print them escaped, not crash
    # after the whole run (the files are written as UTF-8 whatever the locale).
    if (sys.stdout.encoding or "").lower().replace("-", "") != "utf8":
        reconfigure = getattr(sys.stdout, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    if argv[:1] == ["merge"]:
        return merge(argv[1:])
    if argv[:1] == ["stamp"] and len(argv) <= 2:
        print(stamp.write(Path(argv[1]) if len(argv) == 2 else stamp.STAMP))
        return 0
    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
