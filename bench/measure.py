"""Timing loops and statistics shared by every row.

Loops are compiled from source with the callable and its arguments as *local*
variables, as timeit does, so every implementation pays the same loop and lookup cost
and the figures differ only by what each call itself costs. Nothing is subtracted.
"""

from __future__ import annotations

import gc
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

_TIMER = time.perf_counter_ns


def summarize(samples: list[float]) -> dict:
    """Median and min-max of per-repeat figures (already per call)."""
    ordered = sorted(samples)
    return {
        "median": statistics.median(ordered),
        "min": ordered[0],
        "max": ordered[-1],
        "repeats": len(ordered),
    }


def _compile(source: str, name: str) -> Callable:
    namespace: dict = {}
    exec(compile(source, f"<bench {name}>", "exec"), namespace)
    return namespace[name]


def call_loop(stmt: str, bindings: dict) -> Callable[[int], int]:
    """A function running `stmt` n times and returning the elapsed ns."""
    names = ", ".join(bindings)
    source = (
        f"def _loop(_n, _timer, {names}):\n"
        f"    _t0 = _timer()\n"
        f"    for _i in range(_n):\n"
        f"        {stmt}\n"
        f"    return _timer() - _t0\n"
    )
    loop = _compile(source, "_loop")
    values = tuple(bindings.values())
    return lambda n: loop(n, _TIMER, *values)


def burst_loop(stmt: str, bindings: dict, sync: Callable[[], object]) -> Callable[[int, int], int]:
    """A function running `bursts` bursts of `burst` statements, timing only the
    statements: the sync between bursts keeps the queue from filling and is not timed."""
    names = ", ".join(bindings)
    source = (
        f"def _bursts(_burst, _bursts, _timer, _sync, {names}):\n"
        f"    _total = 0\n"
        f"    for _b in range(_bursts):\n"
        f"        _t0 = _timer()\n"
        f"        for _i in range(_burst):\n"
        f"            {stmt}\n"
        f"        _total += _timer() - _t0\n"
        f"        _sync()\n"
        f"    return _total\n"
    )
    loop = _compile(source, "_bursts")
    values = tuple(bindings.values())
    return lambda burst, bursts: loop(burst, bursts, _TIMER, sync, *values)


def interleaved(runs: dict[str, Callable[[], float]], repeats: int) -> dict[str, list[float]]:
    """Each repeat runs every implementation once, in turn, so drift in the machine's
    state (clocks, caches, other load) falls on all of them alike rather than on
    whichever happened to run last. A run returns one per-call figure."""
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for run in runs.values():  # warm-up: first-call binding, caches, lazy init
        run()
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for name, run in runs.items():
                samples[name].append(run())
    finally:
        if enabled:
            gc.enable()
    return samples


def run_python(code: str, env: dict, timeout: float = 120) -> str:
    """stdout of `python -c code` in a fresh interpreter (the one running the bench)."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines() or ["(no output)"]
        raise RuntimeError(lines[-1])
    return done.stdout
