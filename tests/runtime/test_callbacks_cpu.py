"""cudart.callbacks without a GPU: the trampolines are called through C function
pointers (a real ctypes foreign call into the thunk C would call), so the registry,
the exception barrier and the thread safety are exercised as C would exercise them.
"""

from __future__ import annotations

import ctypes
import importlib
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from fast_support import python_checked

import cudart
from cudart import callbacks

REPO = Path(__file__).resolve().parents[2]
VERSIONS = cudart.available_versions()


@pytest.fixture(params=VERSIONS, ids=[f"sys_{v}" for v in VERSIONS])
def rt(request):
    # Importing a generated module loads no library: these tests need none.
    return importlib.import_module(f"cudart.sys_{request.param}")


# The calls go through the backend in force: make test-ctypes runs them on ctypes too.
pytestmark = [pytest.mark.usefixtures("clean_callback_failures"), pytest.mark.backend]


def host_from_c(rt):
    """The host trampoline as C sees it: a bare function pointer."""
    address = ctypes.cast(callbacks.trampolines(rt).host, ctypes.c_void_p).value
    return rt.cudaHostFn_t(address)


def stream_from_c(rt):
    address = ctypes.cast(callbacks.trampolines(rt).stream, ctypes.c_void_p).value
    return rt.cudaStreamCallback_t(address)


def test_trampolines_are_the_modules_callback_types(rt):
    t = callbacks.trampolines(rt)
    assert isinstance(t.host, rt.cudaHostFn_t)
    assert isinstance(t.stream, rt.cudaStreamCallback_t)
    # One per module for the process's life: C may hold the pointer at any time.
    assert callbacks.trampolines(rt) is t


def test_host_callback_runs_once_with_its_args_and_is_dropped(rt, escaped):
    calls = []
    before = callbacks.pending()
    token = callbacks.register(lambda *a: calls.append(a), "x", 2)
    assert callbacks.pending() == before + 1
    host_from_c(rt)(token)
    assert calls == [("x", 2)]
    assert callbacks.pending() == before
    # A second call through the same token finds nothing: reported, not run again.
    host_from_c(rt)(token)
    assert calls == [("x", 2)]
    assert callbacks.failure_count() == 1
    assert isinstance(callbacks.failures()[0].exception, LookupError)
    assert escaped == []


def test_stream_callback_gets_stream_status_then_args(rt, escaped):
    calls = []
    token = callbacks.register(lambda *a: calls.append(a), "tag")
    stream_from_c(rt)(0x1234, 700, token)
    assert calls == [(0x1234, 700, "tag")]
    assert escaped == []


def test_exception_is_reported_not_raised_into_c(rt, escaped, caplog):
    def broken_callback(n):
        raise RuntimeError(f"boom {n}")

    ran = []
    first = callbacks.register(broken_callback, 7)
    second = callbacks.register(ran.append, "after")
    with caplog.at_level(logging.ERROR, logger="cudart.callbacks"):
        host_from_c(rt)(first)
        host_from_c(rt)(second)
    assert escaped == []
    assert ran == ["after"]
    assert callbacks.failure_count() == 1
    failure = callbacks.failures()[0]
    assert failure.callback is broken_callback
    assert failure.args == (7,)
    assert isinstance(failure.exception, RuntimeError) and str(failure.exception) == "boom 7"
    assert "broken_callback" in failure.traceback and "RuntimeError: boom 7" in failure.traceback
    assert any("boom 7" in r.getMessage() for r in caplog.records)
    # A failed one-shot callback is still gone: it ran.
    assert callbacks.unregister(first) is False


def test_base_exceptions_are_contained_too(rt, escaped):
    def leaves():
        raise SystemExit(3)

    host_from_c(rt)(callbacks.register(leaves))
    assert escaped == []
    assert isinstance(callbacks.failures()[0].exception, SystemExit)


def test_persistent_registration_runs_until_unregistered(rt):
    calls = []
    token = callbacks.register(calls.append, "tick", once=False)
    for _ in range(3):
        host_from_c(rt)(token)
    assert calls == ["tick"] * 3
    assert callbacks.unregister(token) is True
    host_from_c(rt)(token)
    assert calls == ["tick"] * 3
    assert callbacks.failure_count() == 1


def test_register_rejects_non_callables():
    with pytest.raises(TypeError, match="callable"):
        callbacks.register(42)


def test_failure_record_is_bounded_but_count_is_not(rt):
    def fail():
        raise ValueError

    n = callbacks.MAX_RECORDED_FAILURES + 5
    for _ in range(n):
        host_from_c(rt)(callbacks.register(fail))
    assert callbacks.failure_count() == n
    assert len(callbacks.failures()) == callbacks.MAX_RECORDED_FAILURES


def test_many_threads_lose_nothing(rt, escaped):
    """8 producer threads x 200 callbacks, called from 8 other threads at once."""
    threads, per_thread = 8, 200
    seen = [[] for _ in range(threads)]
    tokens = [[] for _ in range(threads)]
    before = callbacks.pending()
    start = threading.Barrier(threads * 2)

    def producer(t):
        start.wait()
        for i in range(per_thread):
            tokens[t].append(callbacks.register(seen[t].append, i))

    def consumer(t):
        fn = host_from_c(rt)
        start.wait()
        done = 0
        while done < per_thread:
            if done < len(tokens[t]):
                fn(tokens[t][done])
                done += 1

    workers = [threading.Thread(target=producer, args=(t,)) for t in range(threads)]
    workers += [threading.Thread(target=consumer, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert not any(w.is_alive() for w in workers)
    assert seen == [list(range(per_thread))] * threads
    assert len({tok for ts in tokens for tok in ts}) == threads * per_thread
    assert callbacks.pending() == before
    assert callbacks.failure_count() == 0
    assert escaped == []


def test_failed_launch_leaves_nothing_registered():
    """With the real libcudart: a launch CUDA refuses (no GPU here) keeps nothing.

    On a machine with a GPU the launch succeeds instead, and the callable must run.
    """
    # A fresh interpreter: a process holds one libcudart, loaded once.
    env = {k: v for k, v in os.environ.items() if k != "CUDART_BINDINGS_VERSION"}
    env["PYTHONPATH"] = str(REPO)
    code = """
import ctypes, cudart
from cudart import callbacks
try:
    rt = cudart.sys
except cudart.CudartError as exc:
    print("NO-RUNTIME", exc); raise SystemExit(0)
ran = []
for launch in (callbacks.launch_host_func, callbacks.add_callback):
    status = launch(None, lambda *a: ran.append(a))
    if status == 0:
        assert rt.cudaDeviceSynchronize() == 0
        print("RAN", len(ran), callbacks.pending())
    else:
        print("REFUSED", rt.cudaGetErrorName(status).decode(), callbacks.pending(), len(ran))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.split("\n")
    if lines[0].startswith("NO-RUNTIME"):
        pytest.skip(f"no libcudart to call: {lines[0]}")
    outcomes = [line.split() for line in lines if line]
    assert len(outcomes) == 2, proc.stdout
    for i, outcome in enumerate(outcomes, start=1):
        if outcome[0] == "REFUSED":
            assert outcome[2:] == ["0", "0"], proc.stdout
        else:
            assert outcome == ["RAN", str(i), "0"], proc.stdout


# ---------------------------------------------------------------- surfacing failures


def _raise_key(*args):
    raise KeyError(args[-1])


def test_failure_is_raised_once_by_its_stream_and_chains_the_exception(rt, escaped):
    host_from_c(rt)(callbacks.register(_raise_key, "on a", stream=0x1000))
    host_from_c(rt)(callbacks.register(_raise_key, "on b", stream=0x2000))
    callbacks.report_failures(0, 0x3000)  # a third stream's sync: neither is its own
    with pytest.raises(callbacks.CallbackError, match="on a") as caught:
        callbacks.report_failures(0, 0x1000)
    assert isinstance(caught.value.__cause__, KeyError)
    assert [f.stream for f in caught.value.failures] == [0x1000]
    callbacks.report_failures(0, 0x1000)  # once
    (left,) = callbacks.take_failures()
    assert left.args == ("on b",) and left.stream == 0x2000
    callbacks.raise_failures()  # taken: nothing left
    assert callbacks.failure_count() == 2 and escaped == []


def test_stream_callback_failure_belongs_to_the_stream_c_names(rt):
    stream_from_c(rt)(0x4000, 0, callbacks.register(_raise_key, "cb", stream=0x1))
    stream_from_c(rt)(None, 0, callbacks.register(_raise_key, "default"))
    assert [f.stream for f in callbacks.failures()] == [0x4000, 0]
    assert [f.args for f in callbacks.take_failures(None)] == [("default",)]
    assert [f.args for f in callbacks.take_failures(0x4000)] == [("cb",)]


def test_failure_of_unknown_stream_is_any_streams_and_all_come_at_once(rt):
    host_from_c(rt)(callbacks.register(_raise_key, "graph node"))  # a host node: no stream
    host_from_c(rt)(callbacks.register(_raise_key, "second", stream=0x5000))
    with pytest.raises(callbacks.CallbackError, match=r"graph node.*\(and 1 more") as caught:
        callbacks.report_failures(600)  # cudaErrorNotReady: the stream's work goes on
    assert [f.args for f in caught.value.failures] == [("graph node",), ("second",)]


def test_a_failed_sync_raises_its_own_error_and_keeps_the_failures(rt):
    host_from_c(rt)(callbacks.register(_raise_key, "kept", stream=0))
    callbacks.report_failures(100)  # cudaErrorNoDevice: the caller raises that
    callbacks.clear_failures()
    callbacks.raise_failures()  # clear_failures forgets the unraised ones too
    host_from_c(rt)(callbacks.register(_raise_key, "later", stream=0))
    with pytest.raises(callbacks.CallbackError, match="later"):
        callbacks.raise_failures(0)


def test_checked_synchronize_reports_callback_failures():
    """The checked layer's waits go through report_failures. Without a GPU they fail, so
    they raise their CudaError and leave the failure for the next; the raised-on-success
    path runs on the GPU (tests/gpu/test_callbacks_checked.py)."""
    checked = cudart._serving.checked_module()
    host_from_c(cudart.sys)(callbacks.register(_raise_key, "waiting", stream=0))
    for name in ("cudaStreamSynchronize", "cudaStreamQuery", "cudaDeviceSynchronize"):
        args = () if name == "cudaDeviceSynchronize" else (None,)
        # The Python checked function (it binds the reporting wrapper), then the public
        # one (where compiled, C reports through cudart._checked itself).
        for fn in (python_checked(checked, name), getattr(cudart, name)):
            with pytest.raises(cudart.CudaError):
                fn(*args)
        reporter = vars(checked)["_" + name]
        assert reporter.__qualname__.startswith("_reporting_callback_failures")
    assert [f.args for f in callbacks.take_failures()] == [("waiting",)]
