"""The checked layer's call rows of issue 23 (item 7), beside rows.py's: each against C
calling the same libcudart symbol in this process (c_loops.c), the raw layer's two
backends, cuda-bindings and CuPy, with 'cudart checked' (the compiled checked function
where the compiled backend has it) and 'cudart checked, Python' (the Python checked
function it stands for) side by side.

Without a GPU, cudaRuntimeGetVersion and cudaDriverGetVersion return, and cudaGetDevice
raises its error (the raising row); the stream, allocation and create rows need a GPU
and say so. The GIL row is what a call that releases the GIL pays for it.
"""

from __future__ import annotations

import ctypes
from ctypes import c_int, c_void_p
from typing import Any

from . import measure
from .rows import (
    Context,
    Row,
    Timed,
    _backend_note,
    _c_both,
    _c_loop,
    _candidate,
    _checked_pair,
    _cupy_runtime,
    _first_call,
    _handwritten,
    _raw,
    _raw_pair,
    _reason,
    _status_note,
    _time_bursts,
    _time_calls,
)


def _version_row(ctx: Context, name: str, cupy: str) -> Row:
    row = Row(f"call.{name}", f"{name}(&version): one int out", "ns", ref="C")
    rt = ctx.runtime.rt
    if rt is None:
        return row.skip_row(ctx.runtime.error)
    value = c_int()
    address = ctypes.addressof(value)
    _status_note(ctx, row, getattr(rt, name)(address), name)
    _backend_note(ctx, row)
    candidates = {
        **_c_both(lambda lib: _c_loop(ctx, name, lambda lp, fn, n: lp.get_device(fn, n), lib)),
        **_raw_pair(ctx, name, "f(a)", {"a": address}),
        **_checked_pair(ctx, name, "f()", {}),
        "ctypes": _candidate(
            lambda: ("f(a)", {"f": _handwritten(ctx, name, (c_void_p,)), "a": address})
        ),
        "cuda-bindings": _candidate(lambda: ("f()", {"f": getattr(ctx.cuda_bindings(), name)})),
        "CuPy": _candidate(lambda: ("f()", {"f": _cupy_runtime(ctx, cupy)})),
    }
    return _time_calls(ctx, row, candidates)


def row_runtime_get_version(ctx: Context) -> Row:
    return _version_row(ctx, "cudaRuntimeGetVersion", "runtimeGetVersion")


def row_driver_get_version(ctx: Context) -> Row:
    return _version_row(ctx, "cudaDriverGetVersion", "driverGetVersion")


# The timed loop's statement (measure.call_loop puts its first line at 8 spaces).
_RAISING = "try:\n            f()\n        except E:\n            pass"


def _raising(ctx: Context, f, exc: type) -> Timed:
    """A Python loop calling `f` and catching its `exc`, timed as a Timed (the call rows'
    single-line statements cannot hold a try)."""
    loop = measure.call_loop(_RAISING, {"f": f, "E": exc})
    n = ctx.s.calls

    def first() -> int:
        loop(1)
        return 0

    return Timed(lambda: loop(n) / n, first, "a Python loop: try: f() except E: pass")


def row_get_device_raising(ctx: Context) -> Row:
    row = Row(
        "call.cudaGetDevice.raising",
        "cudaGetDevice() failing: the exception raised and caught",
        "ns",
        ref="C",
    )
    rt = ctx.runtime.rt
    if rt is None:
        return row.skip_row(ctx.runtime.error)
    address = ctypes.addressof(c_int())
    status = rt.cudaGetDevice(address)
    if status == 0:
        return row.skip_row("cudaGetDevice succeeds here (a GPU): nothing is raised")
    _status_note(ctx, row, status, "cudaGetDevice")
    _backend_note(ctx, row)
    row.note("C and the raw layer return the status; the checked layer and CuPy raise it")

    def checked(which: str):
        import cudart

        return _raising(ctx, _checked_fn(ctx, "cudaGetDevice", which), cudart.CudaError)

    def cupy():
        runtime = ctx.cupy().cuda.runtime
        return _raising(ctx, runtime.getDevice, runtime.CUDARuntimeError)

    candidates = {
        **_c_both(
            lambda lib: _c_loop(ctx, "cudaGetDevice", lambda lp, fn, n: lp.get_device(fn, n), lib)
        ),
        **_raw_pair(ctx, "cudaGetDevice", "f(a)", {"a": address}),
        "cudart checked": _candidate(lambda: checked("cudart checked")),
        "cudart checked, Python": _candidate(lambda: checked("cudart checked, Python")),
        "cuda-bindings": _candidate(lambda: ("f()", {"f": ctx.cuda_bindings().cudaGetDevice})),
        "CuPy": _candidate(cupy),
    }
    return _time_calls(ctx, row, candidates)


def _checked_fn(ctx: Context, name: str, which: str):
    """The function of one of _checked_pair's candidates ('cudart checked' or
    'cudart checked, Python'), or its exception raised."""
    got = _checked_pair(ctx, name, "", {})[which]
    if isinstance(got, BaseException):
        raise got
    return got[1]["f"]


def _gpu(ctx: Context, row: Row) -> Row | None:
    """The row skipped where it cannot run (no runtime, no GPU), else None."""
    if ctx.runtime.rt is None:
        return row.skip_row(ctx.runtime.error)
    if not ctx.runtime.has_gpu:
        return row.skip_row(f"no GPU here: {ctx.runtime.no_gpu_reason}")
    return None


def _stream(ctx: Context):
    """A stream of the checked layer's (a cudaStream_t object), kept for the run."""
    import cudart

    return ctx.once("stream", lambda: cudart.cudaStreamCreate())


def _gpu_stream(ctx: Context, row: Row) -> tuple[Any, Row | None]:
    """(the run's stream, None) where the row can run, else (None, the row skipped)."""
    skipped = _gpu(ctx, row)
    if skipped is not None:
        return None, skipped
    try:
        return _stream(ctx), None
    except Exception as exc:
        return None, row.skip_row(_reason(exc))


def row_stream_query_object(ctx: Context) -> Row:
    row = Row(
        "call.cudaStreamQuery.object",
        "cudaStreamQuery(stream): a created stream, as its handle object",
        "ns",
        ref="C",
    )
    stream, skipped = _gpu_stream(ctx, row)
    if skipped is not None:
        return skipped
    address = int(stream)
    _backend_note(ctx, row)
    row.note("the checked layer and cuda-bindings are given the stream object; the rest its int")

    def bindings():
        r = ctx.cuda_bindings()
        return "f(s)", {"f": r.cudaStreamQuery, "s": r.cudaStream_t(init_value=address)}

    candidates = {
        **_c_both(
            lambda lib: _c_loop(
                ctx, "cudaStreamQuery", lambda lp, fn, n: lp.handle(fn, address, n), lib
            )
        ),
        **_raw_pair(ctx, "cudaStreamQuery", "f(s)", {"s": address}),
        **_checked_pair(ctx, "cudaStreamQuery", "f(s)", {"s": stream}),
        "cuda-bindings": _candidate(bindings),
        "CuPy": _candidate(
            lambda: ("f(s)", {"f": _cupy_runtime(ctx, "streamQuery"), "s": address})
        ),
    }
    return _time_calls(ctx, row, candidates)


def row_malloc_free_async(ctx: Context) -> Row:
    row = Row(
        "alloc.mallocfreeasync",
        "cudaMallocAsync(4 bytes) + cudaFreeAsync on a stream",
        "µs",
        ref="C",
    )
    stream, skipped = _gpu_stream(ctx, row)
    if skipped is not None:
        return skipped
    s = int(stream)
    row.note(
        f"bursts of {ctx.s.burst} pairs on a created stream, cudaDeviceSynchronize between "
        "bursts (not timed)"
    )
    _backend_note(ctx, row)
    p = c_void_p()
    a = ctypes.addressof(p)

    def raw(kind: str):
        m, f = _raw(ctx, "cudaMallocAsync", kind), _raw(ctx, "cudaFreeAsync", kind)
        return "(m(a, 4, s), f(p.value, s))", {"m": m, "f": f, "a": a, "p": p, "s": s}

    def checked(which: str):
        m, f = _checked_fn(ctx, "cudaMallocAsync", which), _checked_fn(ctx, "cudaFreeAsync", which)
        return "f(m(4, s), s)", {"m": m, "f": f, "s": stream}

    def bindings():
        r = ctx.cuda_bindings()
        stmt = "f(m(4, s)[1], s)"
        return stmt, {"m": r.cudaMallocAsync, "f": r.cudaFreeAsync, "s": s}

    def cupy():
        runtime = ctx.cupy().cuda.runtime
        return "f(m(4, s), s)", {"m": runtime.mallocAsync, "f": runtime.freeAsync, "s": s}

    cands = {
        **_c_both(lambda lib: Timed(*_bursts_c(ctx, s, lib))),
        "cudart raw, compiled": _candidate(lambda: raw("compiled")),
        "cudart raw, ctypes": _candidate(lambda: raw("ctypes")),
        "cudart checked": _candidate(lambda: checked("cudart checked")),
        "cudart checked, Python": _candidate(lambda: checked("cudart checked, Python")),
        "cuda-bindings": _candidate(bindings),
        "CuPy": _candidate(cupy),
    }
    _first_call(ctx, cands)
    _time_bursts(ctx, row, cands, scale=1000.0)
    return row


def _bursts_c(ctx: Context, stream: int, lib: str):
    loops, detail = ctx.loops()
    fm, ff = ctx.pointer("cudaMallocAsync", lib), ctx.pointer("cudaFreeAsync", lib)
    sync = ctx.pointer("cudaDeviceSynchronize", lib)
    st = ctx.s

    def run() -> float:
        return loops.malloc_free_async(fm, ff, 4, stream, st.burst, st.bursts, sync) / 1000.0

    def first() -> int:
        loops.malloc_free_async(fm, ff, 4, stream, 1, 1, sync)
        return loops.status

    return run, first, detail


def row_stream_create_destroy(ctx: Context) -> Row:
    row = Row(
        "call.cudaStreamCreate+Destroy",
        "cudaStreamCreate() + cudaStreamDestroy(stream)",
        "ns",
        ref="C",
    )
    skipped = _gpu(ctx, row)
    if skipped is not None:
        return skipped
    _backend_note(ctx, row)
    h = c_void_p()
    a = ctypes.addressof(h)

    def c_loop(lib: str) -> Timed:
        loops, detail = ctx.loops()
        fc, fd = ctx.pointer("cudaStreamCreate", lib), ctx.pointer("cudaStreamDestroy", lib)
        n = ctx.s.calls // 10 or 1

        def first() -> int:
            loops.create_destroy(fc, fd, 1)
            return loops.status

        return Timed(lambda: loops.create_destroy(fc, fd, n), first, detail)

    def raw(kind: str):
        c, d = _raw(ctx, "cudaStreamCreate", kind), _raw(ctx, "cudaStreamDestroy", kind)
        return "(c(a), d(h.value))", {"c": c, "d": d, "a": a, "h": h}

    def checked(which: str):
        create = _checked_fn(ctx, "cudaStreamCreate", which)
        return "d(c())", {"c": create, "d": _checked_fn(ctx, "cudaStreamDestroy", which)}

    def bindings():
        r = ctx.cuda_bindings()
        return "d(c()[1])", {"c": r.cudaStreamCreate, "d": r.cudaStreamDestroy}

    def cupy():
        runtime = ctx.cupy().cuda.runtime
        return "d(c())", {"c": runtime.streamCreate, "d": runtime.streamDestroy}

    candidates = {
        **_c_both(c_loop),
        "cudart raw, compiled": _candidate(lambda: raw("compiled")),
        "cudart raw, ctypes": _candidate(lambda: raw("ctypes")),
        "cudart checked": _candidate(lambda: checked("cudart checked")),
        "cudart checked, Python": _candidate(lambda: checked("cudart checked, Python")),
        "cuda-bindings": _candidate(bindings),
        "CuPy": _candidate(cupy),
    }
    return _time_calls(ctx, row, candidates)


def row_gil(ctx: Context) -> Row:
    row = Row(
        "call.gil",
        "Releasing and taking back the GIL (Py_BEGIN/END_ALLOW_THREADS)",
        "ns",
        ref=None,
    )
    row.note(
        "what every compiled call that may wait pays (the raw and checked ones alike; "
        "generator/gil.py names those that keep the GIL): PyEval_SaveThread then "
        "PyEval_RestoreThread in a C loop, one thread"
    )

    def c_loop() -> Timed:
        loops, detail = ctx.loops()
        n = ctx.s.calls

        def first() -> int:
            loops.gil(1)
            return 0

        return Timed(lambda: loops.gil(n), first, detail)

    return _time_calls(ctx, row, {"C": _candidate(c_loop)})


ROWS = [
    (frozenset({"cpu", "gpu"}), row_runtime_get_version),
    (frozenset({"cpu", "gpu"}), row_driver_get_version),
    (frozenset({"cpu", "gpu"}), row_get_device_raising),
    (frozenset({"gpu"}), row_stream_query_object),
    (frozenset({"gpu"}), row_malloc_free_async),
    (frozenset({"gpu"}), row_stream_create_destroy),
    (frozenset({"cpu", "gpu"}), row_gil),
]
