"""Many host threads on one device (issue 25), under a GIL build and a free-threaded one:
one handle destroyed by many threads at once, host callbacks enqueued from many
threads onto many streams, and one loaded module's kernels first asked by many threads.
Counts are exact; on a free-threaded interpreter the GIL stays off.

(Concurrent launches of one Function are tests/gpu/test_launch_threads_gpu.py's.)
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from thread_storm import FREE_THREADED, gil_enabled, storm

import cudart
from cudart import HandleDestroyedError, callbacks
from cudart.kernels import load_module

KERNELS = Path(__file__).resolve().parent.parent / "kernels"
THREADS = 16

pytestmark = pytest.mark.usefixtures("clean_callback_failures")


def _storm(fn) -> list:
    """fn(i) in THREADS threads released together; the GIL stays off where there is none."""
    results = storm(fn, THREADS)
    if FREE_THREADED:
        assert not gil_enabled()
    return results


def _destroy_from_every_thread(destroy, handle) -> list[str]:
    def attempt(_i: int) -> str:
        try:
            destroy(handle)
        except HandleDestroyedError:
            return "refused"
        # Anything else (a CudaError above all: a second destroy that reached C) is
        # named, so that the counts below fail on it.
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        return "destroyed"

    return _storm(attempt)


@pytest.mark.parametrize("kind", ["Stream", "Event"])
def test_one_handle_destroyed_by_many_threads_at_once_succeeds_once(kind):
    """Exactly one thread's destroy reaches C and succeeds; every other thread gets
    HandleDestroyedError, refused before C (cudart._handles claims the object's mark
    under a lock), as tests/compiled/test_checked_compiled.py's CPU storm asserts. C's
    error for a second destroy would mean a destroy reached C twice."""
    create = getattr(cudart, f"cuda{kind}Create")
    destroy = getattr(cudart, f"cuda{kind}Destroy")
    for _ in range(50):
        outcomes = _destroy_from_every_thread(destroy, create())
        assert sorted(outcomes) == ["destroyed"] + ["refused"] * (THREADS - 1), outcomes


def test_host_callbacks_from_many_threads_onto_many_streams_run_once_each():
    """Each thread enqueues host functions and stream callbacks (Python callables,
    through the checked layer) onto a stream of its own and waits for it: every callable
    runs exactly once, nothing stays registered, nothing failed."""
    per_thread = 200
    before = callbacks.pending()
    ran = [0] * (THREADS * per_thread * 2)
    counting = threading.Lock()

    def hit(k: int) -> None:
        with counting:
            ran[k] += 1

    def stream_hit(_stream, status, k: int) -> None:
        assert status == 0
        hit(k)

    def work(i: int) -> int:
        stream = cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking)
        try:
            for j in range(per_thread):
                k = 2 * (i * per_thread + j)
                cudart.cudaLaunchHostFunc(stream, hit, k)
                cudart.cudaStreamAddCallback(stream, stream_hit, k + 1, 0)
            cudart.cudaStreamSynchronize(stream)
        finally:
            cudart.cudaStreamDestroy(stream)
        return i

    assert _storm(work) == list(range(THREADS))
    cudart.cudaDeviceSynchronize()
    assert ran == [1] * len(ran)
    assert callbacks.pending() == before
    assert callbacks.failure_count() == 0


def test_a_loaded_modules_kernels_first_asked_by_many_threads_are_one_each():
    """get_function / get_global of a real image, first asked by many threads: one object
    per name; close() from many threads unloads once, and each object is then closed."""
    module = load_module(KERNELS / "kernels_lz4.fatbin")
    names = module.function_names()
    results = _storm(lambda i: [id(module.get_function(n)) for n in names])
    kept = [module.get_function(n) for n in names]
    assert all(r == [id(f) for f in kept] for r in results)
    _storm(lambda i: module.close())
    assert module.closed
    for fn in kept:
        with pytest.raises(ValueError, match="closed"):
            fn.handle  # noqa: B018
