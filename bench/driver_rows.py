"""The driver API rows: cuda.h's functions through cudart.driver, against C calling the
same libcuda symbol in this process (c_loops.c) and cuda-bindings' driver module.

cuCtxGetCurrent and cuDeviceGetAttribute are call rows (ns per call); cuEventRecord and
a 4-argument cuLaunchKernel run in bursts with cuCtxSynchronize between them (µs per
call), as the runtime's event and launch rows do. Every row needs libcuda and a GPU,
and says so where either is missing. All run in the device's primary context, which the
runtime made current on this thread (rows.Context), as an application mixing the two
APIs does.
"""

from __future__ import annotations

import ctypes
from ctypes import c_float, c_int, c_void_p
from typing import Any

from .rows import (
    Context,
    Row,
    Timed,
    _Axpy,
    _candidate,
    _check,
    _first_call,
    _reason,
    _time_bursts,
    _time_calls,
)


def _driver(ctx: Context):
    """cudart.driver, initialized: cuInit once; an exception (no libcuda) is cached."""

    def make():
        from cudart import driver

        driver.cuInit(0)
        return driver

    return ctx.once("driver", make)


def _unavailable(ctx: Context) -> str | None:
    """Why the driver rows cannot run here, or None."""
    if ctx.runtime.rt is None:
        return ctx.runtime.error
    if not ctx.runtime.has_gpu:
        return f"no GPU here: {ctx.runtime.no_gpu_reason}"
    try:
        _driver(ctx)
    except Exception as exc:
        return f"no driver API: {_reason(exc)}"
    return None


def _symbol(ctx: Context, name: str) -> tuple[str, Any]:
    """(symbol, function object of its own) in the libcuda cudart.driver loaded."""
    from cudart._contract import symbol_of
    from cudart._loader import load_driver

    drv = _driver(ctx)
    symbol = symbol_of(drv.sys, name) or name
    return symbol, load_driver().cdll[symbol]  # indexing: a private function object


def _pointer(ctx: Context, name: str) -> int:
    symbol, fn = _symbol(ctx, name)
    address = ctypes.cast(fn, c_void_p).value
    if not address:
        raise LookupError(f"no {symbol} in libcuda")
    return address


def _raw(ctx: Context, name: str, kind: str):
    """The raw layer's function as the compiled backend ('compiled') or ctypes
    ('ctypes') binds it, whichever is in force: the same libcuda symbol, argtypes and
    restype from cudart.driver.sys's _FUNCTIONS entry."""
    from cudart._backend import compiled_for, compiled_function
    from cudart._contract import unpack
    from cudart._loader import load_driver

    drv = _driver(ctx)
    _, restype, argtypes, _flags = unpack(drv.sys._FUNCTIONS[name])
    if kind == "ctypes":
        fn = _symbol(ctx, name)[1]
        fn.restype = restype
        fn.argtypes = argtypes
        return fn
    module = compiled_for("driver", drv.sys.CUDA_VERSION)
    if module is None:
        raise LookupError("the compiled backend is not built here, or CUDART_BACKEND=ctypes")
    symbol = drv.sys.SYMBOLS[name]
    fn = compiled_function(module, name, symbol, restype, argtypes, load_driver().cdll._handle)
    if fn is None:
        raise LookupError(f"{module.__name__} could not bind {symbol}")
    return fn


def _handwritten(ctx: Context, name: str, argtypes: tuple):
    fn = _symbol(ctx, name)[1]
    fn.argtypes = argtypes
    fn.restype = c_int
    return fn


def _checked(ctx: Context, name: str):
    return getattr(_driver(ctx), name)


def _cuda_bindings(ctx: Context):
    return ctx.cuda_bindings("driver")


def _c_calls(ctx: Context, name: str, call) -> Timed:
    """C calling `name` n times, timed in C: call(loops, pointer, n) -> ns per call."""
    loops, detail = ctx.loops()
    fn = _pointer(ctx, name)
    n = ctx.s.calls

    def first() -> int:
        call(loops, fn, 1)
        return loops.status

    return Timed(lambda: call(loops, fn, n), first, detail)


def _c_bursts(ctx: Context, name: str, call) -> Timed:
    """As _c_calls in bursts, cuCtxSynchronize between them (not timed):
    call(loops, pointer, sync, burst, bursts) -> ns per call; the row's figure is µs."""
    loops, detail = ctx.loops()
    fn = _pointer(ctx, name)
    sync = _pointer(ctx, "cuCtxSynchronize")
    s = ctx.s

    def first() -> int:
        call(loops, fn, sync, 1, 1)
        return loops.status

    return Timed(lambda: call(loops, fn, sync, s.burst, s.bursts) / 1000.0, first, detail)


def _note(row: Row) -> None:
    row.note(
        "driver API (libcuda) through cudart.driver, on the backend in force for the "
        "checked layer; C calls the symbol cudart.driver binds, in this process"
    )


def row_cu_ctx_get_current(ctx: Context) -> Row:
    row = Row("driver.cuCtxGetCurrent", "cuCtxGetCurrent(&ctx): one handle out", "ns", ref="C")
    why = _unavailable(ctx)
    if why:
        return row.skip_row(why)
    _note(row)
    out = c_void_p()

    def raw(kind: str):
        fn = _raw(ctx, "cuCtxGetCurrent", kind)
        return "f(byref(o))", {"f": fn, "byref": ctypes.byref, "o": out}

    def handwritten():
        fn = _handwritten(ctx, "cuCtxGetCurrent", (ctypes.POINTER(c_void_p),))
        return "f(byref(o))", {"f": fn, "byref": ctypes.byref, "o": out}

    candidates = {
        "C": _candidate(
            lambda: _c_calls(ctx, "cuCtxGetCurrent", lambda lp, fn, n: lp.out_pointer(fn, n))
        ),
        "cudart raw, compiled": _candidate(lambda: raw("compiled")),
        "cudart raw, ctypes": _candidate(lambda: raw("ctypes")),
        "cudart checked": _candidate(lambda: ("f()", {"f": _checked(ctx, "cuCtxGetCurrent")})),
        "ctypes, POINTER(c_void_p) + byref": _candidate(handwritten),
        "cuda-bindings": _candidate(lambda: ("f()", {"f": _cuda_bindings(ctx).cuCtxGetCurrent})),
    }
    return _time_calls(ctx, row, candidates)


def row_cu_device_get_attribute(ctx: Context) -> Row:
    row = Row(
        "driver.cuDeviceGetAttribute",
        "cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0)",
        "ns",
        ref="C",
    )
    why = _unavailable(ctx)
    if why:
        return row.skip_row(why)
    _note(row)
    drv = _driver(ctx)
    attrib = int(drv.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
    value = c_int()
    stmt_out = "f(byref(v), a, 0)"

    def raw(kind: str):
        fn = _raw(ctx, "cuDeviceGetAttribute", kind)
        return stmt_out, {"f": fn, "byref": ctypes.byref, "v": value, "a": attrib}

    def handwritten():
        fn = _handwritten(ctx, "cuDeviceGetAttribute", (ctypes.POINTER(c_int), c_int, c_int))
        return stmt_out, {"f": fn, "byref": ctypes.byref, "v": value, "a": attrib}

    def bindings():
        cb = _cuda_bindings(ctx)
        a = cb.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
        return "f(a, 0)", {"f": cb.cuDeviceGetAttribute, "a": a}

    candidates = {
        "C": _candidate(
            lambda: _c_calls(
                ctx,
                "cuDeviceGetAttribute",
                lambda lp, fn, n: lp.device_attribute(fn, attrib, 0, n),
            )
        ),
        "cudart raw, compiled": _candidate(lambda: raw("compiled")),
        "cudart raw, ctypes": _candidate(lambda: raw("ctypes")),
        "cudart checked": _candidate(
            lambda: ("f(a, 0)", {"f": _checked(ctx, "cuDeviceGetAttribute"), "a": attrib})
        ),
        "ctypes": _candidate(handwritten),
        "cuda-bindings": _candidate(bindings),
    }
    return _time_calls(ctx, row, candidates)


def _cuda_bindings_event(ctx: Context, event: int):
    """cuda-bindings' cuEventRecord and the event in a form it takes: the handle as an
    int where it accepts one, else wrapped in its CUevent."""
    cb = _cuda_bindings(ctx)
    errors = []
    for form in (event, "wrapped"):
        try:
            e = cb.CUevent(init_value=event) if form == "wrapped" else form
            _check(cb.cuEventRecord(e, 0), "cuEventRecord")
            _driver(ctx).cuCtxSynchronize()
            return "f(e, 0)", {"f": cb.cuEventRecord, "e": e}
        except Exception as exc:
            errors.append(_reason(exc))
    raise RuntimeError("; ".join(errors))


def row_cu_event_record(ctx: Context) -> Row:
    row = Row("driver.cuEventRecord", "cuEventRecord(event, 0)", "µs", ref="C")
    why = _unavailable(ctx)
    if why:
        return row.skip_row(why)
    drv = _driver(ctx)
    row.note(
        f"one event (CU_EVENT_DISABLE_TIMING) recorded on stream 0 in bursts of {ctx.s.burst}, "
        "cuCtxSynchronize between bursts (not timed)"
    )
    _note(row)
    try:
        event = drv.cuEventCreate(int(drv.CU_EVENT_DISABLE_TIMING))
    except Exception as exc:
        return row.skip_row(_reason(exc))
    ctx.keep.append(event)
    e = int(event)
    stmt = "f(e, 0)"

    def handwritten():
        return stmt, {"f": _handwritten(ctx, "cuEventRecord", (c_void_p, c_void_p)), "e": e}

    cands = {
        "C": _candidate(
            lambda: _c_bursts(
                ctx,
                "cuEventRecord",
                lambda lp, fn, sync, burst, bursts: lp.event_record(
                    fn, e, None, burst, bursts, sync
                ),
            )
        ),
        "cudart raw, compiled": _candidate(
            lambda: (stmt, {"f": _raw(ctx, "cuEventRecord", "compiled"), "e": e})
        ),
        "cudart raw, ctypes": _candidate(
            lambda: (stmt, {"f": _raw(ctx, "cuEventRecord", "ctypes"), "e": e})
        ),
        "cudart checked": _candidate(
            lambda: (stmt, {"f": _checked(ctx, "cuEventRecord"), "e": event})
        ),
        "ctypes": _candidate(handwritten),
        "cuda-bindings": _candidate(lambda: _cuda_bindings_event(ctx, e)),
    }
    _first_call(ctx, cands)
    _time_bursts(ctx, row, cands, scale=1000.0)
    return row


def row_cu_launch_kernel(ctx: Context) -> Row:
    row = Row(
        "driver.cuLaunchKernel",
        "cuLaunchKernel, 4-argument kernel (axpy), host time per launch",
        "µs",
        ref="C",
    )
    why = _unavailable(ctx)
    if why:
        return row.skip_row(why)
    drv = _driver(ctx)
    try:
        image, how = ctx.kernel_image()
        data = image.read_bytes()
        module = ctx.once("driver.module", lambda: drv.cuModuleLoadData(data))
        function = drv.cuModuleGetFunction(module, "axpy")
        ax = _Axpy(ctx)
    except Exception as exc:
        return row.skip_row(f"could not set up the kernel: {_reason(exc)}")
    row.note(
        f"bursts of {ctx.s.burst} launches, cuCtxSynchronize between bursts (not timed); "
        f"axpy from bench/kernels.cu ({how}), loaded with cuModuleLoadData; "
        f"{ctx.s.axpy_n} floats; kernelParams packed once (the same slots for every path)"
    )
    _note(row)
    # Slots packed once: the loops then time the launch, which is what a binding adds.
    a, n = c_float(ax.A), c_int(ax.n)
    xa, ya = c_void_p(ax.x), c_void_p(ax.y)
    slots = (c_void_p * 4)(*(ctypes.addressof(v) for v in (a, xa, ya, n)))
    ctx.keep += [a, n, xa, ya, slots, function]
    f, grid, block = int(function), ax.grid, ax.block
    stmt = "f(k, gx, 1, 1, bx, 1, 1, 0, None, p, None)"
    args = {"k": f, "gx": grid, "bx": block, "p": slots}

    def verified(fn, k) -> tuple[str, dict]:
        ax.verify(lambda: _check(fn(k, grid, 1, 1, block, 1, 1, 0, None, slots, None), "launch"))
        return stmt, {**args, "f": fn, "k": k}

    def c_loop() -> Timed:
        timed = _c_bursts(
            ctx,
            "cuLaunchKernel",
            lambda lp, fn, sync, burst, bursts: lp.cu_launch(
                fn, f, grid, block, slots, burst, bursts, sync
            ),
        )
        ax.verify(lambda: _check(timed.first(), "the C loop's cuLaunchKernel"))
        return timed

    def checked():
        fn = _checked(ctx, "cuLaunchKernel")
        ax.verify(lambda: fn(function, grid, 1, 1, block, 1, 1, 0, None, slots, None))
        return stmt, {**args, "f": fn, "k": function}

    def handwritten():
        u = ctypes.c_uint
        argtypes = (c_void_p, u, u, u, u, u, u, u, c_void_p, c_void_p, c_void_p)
        return verified(_handwritten(ctx, "cuLaunchKernel", argtypes), f)

    def bindings():
        cb = _cuda_bindings(ctx)
        k = cb.CUfunction(init_value=f)
        stream = cb.CUstream(0)
        p = ctypes.addressof(slots)
        launch = cb.cuLaunchKernel
        ax.verify(
            lambda: _check(launch(k, grid, 1, 1, block, 1, 1, 0, stream, p, 0), "cuLaunchKernel")
        )
        return "f(k, gx, 1, 1, bx, 1, 1, 0, s, p, 0)", {
            "f": launch,
            "k": k,
            "gx": grid,
            "bx": block,
            "s": stream,
            "p": p,
        }

    cands = {
        "C": _candidate(c_loop),
        "cudart raw, compiled": _candidate(
            lambda: verified(_raw(ctx, "cuLaunchKernel", "compiled"), f)
        ),
        "cudart raw, ctypes": _candidate(
            lambda: verified(_raw(ctx, "cuLaunchKernel", "ctypes"), f)
        ),
        "cudart checked": _candidate(checked),
        "ctypes": _candidate(handwritten),
        "cuda-bindings, cuLaunchKernel packed once": _candidate(bindings),
    }
    _time_bursts(ctx, row, cands, scale=1000.0)
    return row


ROWS = [
    row_cu_ctx_get_current,
    row_cu_device_get_attribute,
    row_cu_event_record,
    row_cu_launch_kernel,
]
