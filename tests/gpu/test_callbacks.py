"""Python callables run by CUDA: cudaLaunchHostFunc and cudaStreamAddCallback through
cudart.callbacks, on real streams, from the runtime's own callback thread."""

from __future__ import annotations

import ctypes
import logging
import threading

import pytest

from cudart import callbacks


def check(rt, status: int) -> None:
    if status != 0:
        raise AssertionError(
            f"{rt.cudaGetErrorName(status).decode()} ({status}): "
            f"{rt.cudaGetErrorString(status).decode()}"
        )


@pytest.fixture
def streams(rt):
    made = []

    def make(n):
        for _ in range(n):
            s = rt.cudaStream_t()
            check(rt, rt.cudaStreamCreateWithFlags(ctypes.byref(s), rt.cudaStreamNonBlocking))
            made.append(s)
        return made[-n:]

    yield make
    for s in made:
        check(rt, rt.cudaStreamSynchronize(s))
        check(rt, rt.cudaStreamDestroy(s))


pytestmark = pytest.mark.usefixtures("clean_callback_failures")


LAUNCHERS = {
    "launch_host_func": lambda s, fn, *a: callbacks.launch_host_func(s, fn, *a),
    # The stream callback gets (stream, status) first; drop them to share the checks.
    "add_callback": lambda s, fn, *a: callbacks.add_callback(s, lambda _s, _st, *b: fn(*b), *a),
}


def test_host_func_runs_on_a_cuda_thread_after_earlier_work(rt, streams):
    (s,) = streams(1)
    n = 1 << 20
    dev = ctypes.c_void_p()
    check(rt, rt.cudaMalloc(ctypes.byref(dev), n))
    try:
        host = (ctypes.c_ubyte * n)()
        seen = {}

        def probe(tag):
            # Runs after the copy in stream order, so the bytes are there already.
            seen["tag"] = tag
            seen["thread"] = threading.get_ident()
            seen["first"], seen["last"] = host[0], host[n - 1]

        check(rt, rt.cudaMemsetAsync(dev, 0x5A, n, s))
        check(rt, rt.cudaMemcpyAsync(host, dev, n, rt.cudaMemcpyDeviceToHost, s))
        check(rt, callbacks.launch_host_func(s, probe, "done"))
        check(rt, rt.cudaStreamSynchronize(s))
    finally:
        check(rt, rt.cudaFree(dev))
    assert seen["tag"] == "done"
    assert seen["thread"] != threading.get_ident()
    assert (seen["first"], seen["last"]) == (0x5A, 0x5A)


def test_stream_callback_gets_its_stream_and_status(rt, streams):
    (s,) = streams(1)
    got = []
    check(
        rt,
        callbacks.add_callback(
            s, lambda stream, status, extra: got.append((stream, status, extra)), 42
        ),
    )
    check(rt, rt.cudaStreamSynchronize(s))
    assert got == [(s.value, rt.cudaSuccess, 42)]


@pytest.mark.parametrize("launch", LAUNCHERS.values(), ids=LAUNCHERS.keys())
def test_many_streams_lose_nothing_and_keep_stream_order(rt, streams, launch, escaped):
    n_streams, per_stream = 8, 200
    ss = streams(n_streams)
    before = callbacks.pending()
    ran = [[] for _ in ss]
    for i in range(per_stream):
        for k, s in enumerate(ss):
            check(rt, launch(s, ran[k].append, i))
    check(rt, rt.cudaDeviceSynchronize())
    assert ran == [list(range(per_stream))] * n_streams
    assert callbacks.pending() == before
    assert callbacks.failure_count() == 0
    assert escaped == []


def test_many_threads_launching_at_once(rt, streams, escaped):
    """The registry under concurrent registration from Python threads and the CUDA
    callback thread draining it at the same time."""
    n_streams, per_stream = 8, 200
    ss = streams(n_streams)
    before = callbacks.pending()
    ran = [[] for _ in ss]
    errors = []
    go = threading.Barrier(n_streams)

    def producer(k):
        go.wait()
        for i in range(per_stream):
            # Alternate the two APIs in one stream: both share the registry and order.
            if i % 2:
                status = callbacks.launch_host_func(ss[k], ran[k].append, i)
            else:
                status = callbacks.add_callback(ss[k], lambda _s, _st, v: ran[k].append(v), i)
            if status:
                errors.append(status)

    threads = [threading.Thread(target=producer, args=(k,)) for k in range(n_streams)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    check(rt, rt.cudaDeviceSynchronize())
    assert errors == []
    assert ran == [list(range(per_stream))] * n_streams
    assert callbacks.pending() == before
    assert escaped == []


@pytest.mark.parametrize("launch", LAUNCHERS.values(), ids=LAUNCHERS.keys())
def test_exception_in_callback_is_reported_and_stream_goes_on(rt, streams, launch, escaped, caplog):
    (s,) = streams(1)

    def failing_callback(x):
        raise ValueError(f"bad {x}")

    after = []
    with caplog.at_level(logging.ERROR, logger="cudart.callbacks"):
        check(rt, launch(s, failing_callback, 1))
        check(rt, launch(s, after.append, "still running"))
        check(rt, rt.cudaStreamSynchronize(s))
    assert after == ["still running"]
    assert escaped == []
    assert callbacks.failure_count() == 1
    failure = callbacks.failures()[0]
    assert isinstance(failure.exception, ValueError) and str(failure.exception) == "bad 1"
    assert "failing_callback" in failure.traceback
    assert any("bad 1" in r.getMessage() for r in caplog.records)
    # The stream itself saw nothing wrong.
    check(rt, rt.cudaStreamQuery(s))


def test_callable_is_kept_alive_until_it_runs(rt, streams):
    """The caller keeps no reference; the registry must, until CUDA calls it."""
    import gc

    (s,) = streams(1)
    blocker = threading.Event()
    ran = []
    # The first callback holds the stream until the others are queued and gc has run.
    check(rt, callbacks.launch_host_func(s, blocker.wait, 30))
    for i in range(50):
        check(rt, callbacks.launch_host_func(s, (lambda v: lambda: ran.append(v))(i)))
    gc.collect()
    blocker.set()
    check(rt, rt.cudaStreamSynchronize(s))
    assert ran == list(range(50))


def test_refused_launch_registers_nothing(rt, streams):
    """CUDA refuses a legacy stream callback in a capturing stream; nothing may stay
    registered for a call that will never come."""
    (s,) = streams(1)
    before = callbacks.pending()
    check(rt, rt.cudaStreamBeginCapture(s, rt.cudaStreamCaptureModeThreadLocal))
    try:
        status = callbacks.add_callback(s, lambda *a: None)
    finally:
        graph = rt.cudaGraph_t()
        rt.cudaStreamEndCapture(s, ctypes.byref(graph))  # invalidated by the refusal
        if graph.value:
            check(rt, rt.cudaGraphDestroy(graph))
    assert status != rt.cudaSuccess
    assert callbacks.pending() == before
