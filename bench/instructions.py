"""Instructions per call, counted by valgrind's callgrind: deterministic where the timing
rows are not, and split by function, so a gap says whose code it is.

    python -m bench.instructions                 # every case this machine can run
    python -m bench.instructions launch floor    # some of them

Each case is a Python loop run twice in a fresh interpreter under callgrind, with 0 and
with N iterations (PYTHONHASHSEED=0); the difference over N is one iteration: the loop's
own cost (the `floor` case: `abs(5)`), the call, and what the callee runs. CuPy's cases
need CuPy importable, and compare best where cudart loads the runtime version CuPy links
in ($CUDART_LIBRARY). The launch case launches through Function.launch's C launcher into
a stand-in of cudaLaunchKernelExC that returns at once (gcc builds it), a new grid each
launch.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections import Counter
from pathlib import Path

from .env import REPO

N = 20_000

# The loop in a function, its names local, as the timing rows' loops (measure.py) have them.
_LOOP = """
import sys
def _main(n):
{setup}
    for _i in range(n):
        {stmt}
_main(int(sys.argv[1]))
"""

_LAUNCH_SETUP = """
import ctypes, types
import cudart
from cudart.kernels import _fastlaunch
from cudart.kernels._function import Function
lib = ctypes.CDLL({library!r})
entry = ctypes.cast(lib.stand_in, ctypes.c_void_p).value
fn = Function(types.SimpleNamespace(_rt=cudart.sys), "axpy", 0x5EED000, None,
              (("f32", 4), ("u64", 8), ("u64", 8), ("u32", 4)))
fn._params = (4, 8, 8, 4)
fn._launch = lib.stand_in
fn._fast = _fastlaunch.Launcher(entry, fn._config, ctypes.addressof(fn._config), fn._func,
                                ctypes.addressof(fn._func), fn._launch_slow, fn._fail)
launch, a, grids = fn._fast.launch, ctypes.c_float(2.0), (16, 17)
launch(16, 256, a, 0x1000, 0x2000, 4096)
launch(17, 256, a, 0x1000, 0x2000, 4096)
"""
_STAND_IN = "int stand_in(const void *c, const void *f, void **a) { return 0; }\n"

# name: (setup, statement, what it counts)
CASES = {
    "floor": ("f = abs", "f(5)", "the loop and a C builtin taking one int"),
    "checked.cudaRuntimeGetVersion": (
        "import cudart; f = cudart.cudaRuntimeGetVersion",
        "f()",
        "cudart's checked call",
    ),
    "cupy.runtimeGetVersion": (
        "from cupy_backends.cuda.api import runtime; f = runtime.runtimeGetVersion",
        "f()",
        "CuPy's call",
    ),
    "checked.cudaDriverGetVersion": (
        "import cudart; f = cudart.cudaDriverGetVersion",
        "f()",
        "cudart's checked call",
    ),
    "cupy.driverGetVersion": (
        "from cupy_backends.cuda.api import runtime; f = runtime.driverGetVersion",
        "f()",
        "CuPy's call",
    ),
    "raw.cudaGetDevice": (
        "import ctypes, cudart; f = cudart.sys.cudaGetDevice; a = ctypes.addressof(ctypes.c_int())",
        "f(a)",
        "cudart's raw call, an int address",
    ),
    "launch": (
        _LAUNCH_SETUP,
        "launch(grids[_i & 1], 256, a, 0x1000, 0x2000, 4096)",
        "Function.launch in C, a new grid each launch, into a stand-in",
    ),
}


def _collect(script: Path, n: int, out: Path) -> Counter[str]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
         str(script), str(n)],
        check=True, capture_output=True, env=env,
    )  # fmt: skip
    report = subprocess.run(
        ["callgrind_annotate", "--threshold=100", str(out)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    counts: Counter[str] = Counter()
    for line in report.splitlines():
        found = re.match(r"\s*([\d,]+) \([^)]*\)\s+(\S.*)$", line)
        if found and "PROGRAM TOTALS" not in line:
            function = found.group(2).split(":")[-1].split(" [")[0]
            counts[function] += int(found.group(1).replace(",", ""))
    return counts


def count(name: str, work: Path) -> tuple[float, list[tuple[str, float]]]:
    """(instructions per iteration, the functions that take the most of them)."""
    setup, stmt, _ = CASES[name]
    if name == "launch":
        library = work / "stand_in.so"
        if not library.exists():
            (work / "stand_in.c").write_text(_STAND_IN)
            gcc = shutil.which("gcc") or "cc"
            subprocess.run([gcc, "-O2", "-shared", "-fPIC", "-o", str(library),
                            str(work / "stand_in.c")], check=True)  # fmt: skip
        setup = setup.format(library=str(library))
    script = work / f"{name}.py"
    script.write_text(_LOOP.format(setup=textwrap.indent(setup.strip(), "    "), stmt=stmt))
    empty, full = (_collect(script, n, work / f"{name}.{n}.out") for n in (0, N))
    per = {f: (full[f] - empty[f]) / N for f in set(full) | set(empty)}
    top = sorted(((f, v) for f, v in per.items() if v >= 1), key=lambda fv: -fv[1])[:8]
    return sum(per.values()), top


def main(argv: list[str]) -> int:
    if shutil.which("valgrind") is None:
        print("bench.instructions needs valgrind (callgrind)", file=sys.stderr)
        return 2
    names = argv or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        print(f"unknown cases: {', '.join(unknown)}; known: {', '.join(CASES)}", file=sys.stderr)
        return 2
    print("| case | what | instructions per iteration | most of them |")
    print("|---|---|---:|---|")
    with tempfile.TemporaryDirectory(prefix="cudart-instructions-") as tmp:
        for name in names:
            try:
                total, top = count(name, Path(tmp))
            except subprocess.CalledProcessError as exc:
                tail = (exc.stderr or b"").decode(errors="replace").strip().splitlines()[-1:]
                print(f"| {name} | {CASES[name][2]} | — | failed: {' '.join(tail)} |")
                continue
            most = ", ".join(f"{f} {v:.0f}" for f, v in top)
            print(f"| {name} | {CASES[name][2]} | {total:.0f} | {most} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
