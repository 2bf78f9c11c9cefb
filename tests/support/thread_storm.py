"""Many threads released at once onto one piece of work (issue 25's stress tests): the
in-process GPU tests import it, and the fresh interpreters of tests/runtime/test_threads.py
run it too (it imports nothing from the suite, so either can)."""

from __future__ import annotations

import sys
import sysconfig
import threading
import traceback
from collections.abc import Callable
from typing import Any

FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


def gil_enabled() -> bool:
    """Whether this process runs with a GIL (always, on a GIL build)."""
    return sys._is_gil_enabled() if FREE_THREADED else True  # type: ignore[attr-defined]


def storm(fn: Callable[[int], Any], threads: int) -> list:
    """fn(i) in `threads` threads that a barrier releases together; their results, or
    AssertionError with the first one's traceback where any raised."""
    barrier = threading.Barrier(threads)
    results: list = [None] * threads
    errors: list[str] = []

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = fn(i)
        except BaseException:
            errors.append(traceback.format_exc())

    workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if errors:
        raise AssertionError(errors[0])
    return results
