"""Where `import cudart` and the first call spend their time, against cuda-bindings,
in one run: each sample is a fresh interpreter, the two libraries' samples interleaved,
medians printed as a table.

    PYTHONPATH=$PWD python3 bench/import_breakdown.py [repeats]

cudart's columns: `import cudart`; finding and loading libcudart; the raw module of the
runtime's version; the checked module; the first call (cudart.cudaGetDevice()). With a
GPU the first call of either library starts the driver (about 185 ms on an H200), which
is CUDA's cost, not the binding's: the table shows the sum with and without it.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

CUDART = r"""
import time
t0 = time.perf_counter_ns()
import cudart
t1 = time.perf_counter_ns()
cudart.load_runtime()
t2 = time.perf_counter_ns()
import importlib
version = cudart._serving.runtime_version()
importlib.import_module(f"cudart.sys_{version}")
t3 = time.perf_counter_ns()
importlib.import_module(f"cudart.checked_{version}")
t4 = time.perf_counter_ns()
try:
    cudart.cudaGetDevice()
except cudart.CudaError:
    pass
t5 = time.perf_counter_ns()
print([(b - a) / 1e6 for a, b in ((t0, t1), (t1, t2), (t2, t3), (t3, t4), (t4, t5))])
"""

CUDA_BINDINGS = r"""
import time
t0 = time.perf_counter_ns()
from cuda.bindings import runtime
t1 = time.perf_counter_ns()
runtime.cudaGetDevice()
t2 = time.perf_counter_ns()
print([(t1 - t0) / 1e6, (t2 - t1) / 1e6])
"""


def sample(code: str, env: dict[str, str]) -> list[float] | None:
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    values: list[float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return values


def main(repeats: int) -> None:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # .pyc files, as users have them
    for code in (CUDART, CUDA_BINDINGS):  # warm-up: write the .pyc files
        sample(code, env)
    ours: list[list[float]] = []
    theirs: list[list[float]] = []
    for _ in range(repeats):
        for code, into in ((CUDART, ours), (CUDA_BINDINGS, theirs)):
            values = sample(code, env)
            if values is not None:
                into.append(values)
    if not ours:
        raise SystemExit("cudart failed to import or call here")
    med = [statistics.median(column) for column in zip(*ours, strict=True)]
    before_call = sum(med[:4])
    print(f"medians of {len(ours)} fresh interpreters, ms")
    print(
        "| | import | library | raw module | checked module | first call | all but the call | all |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    cells = " | ".join(f"{v:.1f}" for v in med)
    print(f"| cudart | {cells} | {before_call:.1f} | {sum(med):.1f} |")
    if theirs:
        imp, call = (statistics.median(column) for column in zip(*theirs, strict=True))
        print(f"| cuda-bindings | {imp:.1f} | | | | {call:.1f} | {imp:.1f} | {imp + call:.1f} |")
        without, with_call = before_call / imp, sum(med) / (imp + call)
        print(f"ratio without the call: {without:.2f}x; with it: {with_call:.2f}x")
    else:
        print("cuda-bindings: not importable here")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
