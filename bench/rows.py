"""The benchmark rows. Each row measures cudart and its baselines in this one process
(or, for C, in a program this process builds and runs), so its ratios compare figures
taken minutes apart on one machine, never figures from different runs.

A row never crashes the run: an implementation that is missing or fails is recorded as
skipped with the reason, and so is a whole row that cannot run here.
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import importlib.util
import operator
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from ctypes import POINTER, byref, c_float, c_int, c_size_t, c_uint, c_void_p
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import measure, native
from .cupy_cudart import cupy_pointers
from .env import REPO, Runtime, Tools, format_version, one_line
from .names import C_CUPY, FLOOR

# ----------------------------------------------------------------------- settings


@dataclass(frozen=True)
class Settings:
    calls: int  # calls per timed loop (call rows)
    repeats: int  # timed loops per implementation
    burst: int  # launches or copies between two synchronizes
    bursts: int  # bursts per repeat
    launch_repeats: int
    axpy_n: int  # elements of the 4-argument kernel
    import_repeats: int
    memory_repeats: int
    generate_one: int
    generate_all: int
    check: int


# Sized so the CPU rows take under two minutes on two cores, most of it the generator
# (about 5 s a version in a fresh process, so `--all` and `check` get one or two runs).
FULL = Settings(
    calls=20_000,
    repeats=31,
    burst=256,
    bursts=8,
    launch_repeats=31,
    axpy_n=4096,
    import_repeats=15,
    memory_repeats=5,
    generate_one=3,
    generate_all=1,
    check=2,
)
QUICK = Settings(
    calls=2_000,
    repeats=3,
    burst=256,
    bursts=2,
    launch_repeats=3,
    axpy_n=4096,
    import_repeats=3,
    memory_repeats=2,
    generate_one=1,
    generate_all=1,
    check=1,
)

# ------------------------------------------------------------------------- results


class Row:
    def __init__(self, id: str, title: str, unit: str, ref: str | None):
        self.data: dict[str, Any] = {
            "id": id,
            "title": title,
            "unit": unit,
            "ref": ref,
            "impls": [],
            "notes": [],
        }

    def measured(
        self, name: str, samples: list[float], detail: str = "", ratio: bool = True
    ) -> None:
        """`ratio=False`: shown, but no ratio to the row's reference (a figure from
        another process)."""
        entry: dict[str, Any] = {"name": name, **measure.summarize(samples)}
        if detail:
            entry["detail"] = detail
        if not ratio:
            entry["no_ratio"] = True
        self.data["impls"].append(entry)

    def skipped(self, name: str, reason: str) -> None:
        self.data["impls"].append({"name": name, "skipped": one_line(reason)})

    def note(self, text: str) -> None:
        self.data["notes"].append(one_line(text, 400))

    def order(self, names: list[str]) -> None:
        """List the implementations in this order (the order candidates were given),
        whatever order they were measured or skipped in."""
        rank = {n: i for i, n in enumerate(names)}
        self.data["impls"].sort(key=lambda i: rank.get(i["name"], len(rank)))

    def skip_row(self, reason: str) -> Row:
        self.data["skipped"] = one_line(reason)
        return self


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {one_line(str(exc)) or '(no message)'}"


# ------------------------------------------------------------------------- context


class Context:
    """What the rows share: the runtime, the tools, a build folder, the baselines'
    libraries (imported once, on first need) and the C programs' results."""

    def __init__(self, runtime: Runtime, settings: Settings, build: Path):
        self.runtime = runtime
        self.s = settings
        self.build = build
        self.tools = Tools()
        self._cache: dict[str, object] = {}
        self.keep: list = []  # modules, buffers and handles that must outlive the loops
        rt = runtime.rt
        if rt is not None:
            # Create the context now: without one, every call takes the runtime's
            # slower no-context path. Without a GPU this fails once.
            rt.cudaSetDevice(0)
            rt.cudaFree(None)
            rt.cudaGetLastError()

    def once(self, key: str, make: Callable[[], object]):
        """make(), cached; an exception is cached too and re-raised on each use."""
        if key not in self._cache:
            try:
                self._cache[key] = make()
            except Exception as exc:
                self._cache[key] = exc
        value = self._cache[key]
        if isinstance(value, Exception):
            raise value
        return value

    @property
    def cdll(self) -> ctypes.CDLL:
        # dlopen of the file already mapped returns the same handle: the hand-written
        # baselines call the same code as cudart.
        return self.once("cdll", lambda: ctypes.CDLL(self.runtime.path))

    def cuda_bindings(self, sub: str = "runtime"):
        return self.once(f"cb.{sub}", lambda: importlib.import_module(f"cuda.bindings.{sub}"))

    def cupy(self):
        return self.once("cupy", lambda: importlib.import_module("cupy"))

    def checked(self, name: str):
        """cudart's checked function of that name, once the checked layer exists."""
        import cudart

        fn = getattr(cudart, name, None)
        if fn is None or fn is getattr(self.runtime.rt, name, None):
            raise LookupError(f"cudart.{name} does not exist yet (checked layer)")
        return fn

    def loops(self) -> tuple[native.Loops, str]:
        """The in-process C loops (c_loops.c), built and loaded once."""
        return self.once("loops", lambda: native.build_loops(self.tools, self.build))

    def pointer(self, name: str, lib: str = "cudart") -> int:
        """The address of the libcudart symbol cudart.sys binds `name` to (the
        per-thread default stream switch in force), in the library this process mapped;
        lib 'cupy': CuPy's own copy of `name` (bench/cupy_cudart.py)."""
        if lib == "cupy":
            self.cupy()
            return self.once(f"cupy.{name}", lambda: cupy_pointers([name])[name])
        symbol = _raw_entry(self.runtime.rt, name)[0]
        address = ctypes.cast(self.cdll[symbol], c_void_p).value
        if not address:
            raise LookupError(f"no {symbol} in {self.runtime.path}")
        return address

    def compiled_module(self):
        """cudart._fast_<bindings version>, imported whatever $CUDART_BACKEND says."""
        name = f"cudart._fast_{self.runtime.rt.CUDA_VERSION}"

        def make():
            try:
                return importlib.import_module(name)
            except ImportError as exc:
                raise LookupError(f"{name} is not built here ({one_line(str(exc))})") from None

        return self.once("compiled", make)

    @property
    def backend(self) -> str:
        """'compiled' or 'ctypes': what cudart.sys and the checked layer call through."""
        try:
            from cudart._backend import backend

            return backend()
        except Exception as exc:
            return f"unknown ({_reason(exc)})"

    def c_launch(self) -> tuple[dict, str]:
        def make():
            exe, detail = native.build_launch(self.runtime, self.tools, self.build)
            s = self.s
            return native.run_launch(exe, s.launch_repeats, s.burst, s.bursts, s.axpy_n), detail

        return self.once("c_launch", make)

    def kernel_image(self) -> tuple[Path, str]:
        return self.once("image", lambda: native.build_kernels(self.tools, self.build))


def _error_name(rt, status: int) -> str:
    try:
        return rt.cudaGetErrorName(status).decode()
    except Exception:
        return "?"


# -------------------------------------------------------------------- call rows


@dataclass
class Timed:
    """An implementation that times itself (the in-process C loops): `run` returns one
    per-call figure in the row's unit; `first` makes one call and returns its status."""

    run: Callable[[], float]
    first: Callable[[], int]
    detail: str = ""


def _candidate(make: Callable[[], Any]):
    try:
        return make()
    except Exception as exc:
        return exc


def _c_both(make: Callable[[str], Any]) -> dict:
    """The C candidates of a row: make('cudart') through the library cudart binds (the
    row's reference), make('cupy') through CuPy's own copy of the runtime."""
    return {"C": _candidate(lambda: make("cudart")), C_CUPY: _candidate(lambda: make("cupy"))}


def _c_loop(
    ctx: Context,
    name: str,
    call: Callable[[native.Loops, int, int], float],
    lib: str = "cudart",
) -> Timed:
    """C calling `name` (the symbol cudart binds; lib 'cupy': CuPy's copy) in a loop
    timed in C, in this process: call(loops, function pointer, n) returns ns per call."""
    loops, detail = ctx.loops()
    fn = ctx.pointer(name, lib)
    n = ctx.s.calls

    def first() -> int:
        call(loops, fn, 1)
        return loops.status

    return Timed(lambda: call(loops, fn, n), first, detail)


def _c_bursts(
    ctx: Context,
    name: str,
    call: Callable[[native.Loops, int, int, int, int], float],
    lib: str = "cudart",
) -> Timed:
    """As _c_loop, in bursts with cudaDeviceSynchronize between them (not timed):
    call(loops, function pointer, sync pointer, burst, bursts) returns ns per call; the
    row's figure is µs."""
    loops, detail = ctx.loops()
    fn = ctx.pointer(name, lib)
    sync = ctx.pointer("cudaDeviceSynchronize", lib)
    s = ctx.s

    def first() -> int:
        call(loops, fn, sync, 1, 1)
        return loops.status

    return Timed(lambda: call(loops, fn, sync, s.burst, s.bursts) / 1000.0, first, detail)


def _raw_entry(rt, name: str) -> tuple[str, Any, tuple]:
    """(symbol in force, restype, argtypes) of the raw module's _FUNCTIONS entry."""
    from cudart._contract import symbol_of, unpack

    _, restype, argtypes, _flags = unpack(rt._FUNCTIONS[name])
    return symbol_of(rt, name) or name, restype, argtypes


def _raw(ctx: Context, name: str, kind: str):
    """The raw function `name` as the compiled backend ('compiled') or ctypes ('ctypes')
    binds it, whichever backend is in force: the same symbol of the same dlopen()ed
    library, argtypes and restype from the raw module's _FUNCTIONS."""
    from cudart import load_runtime

    rt = ctx.runtime.rt
    symbol, restype, argtypes = _raw_entry(rt, name)
    runtime = load_runtime()
    if kind == "ctypes":
        fn = runtime.cdll[symbol]  # indexing: a function object of its own
        fn.restype = restype
        fn.argtypes = argtypes
        return fn
    from cudart._backend import compiled_function

    module = ctx.compiled_module()
    fn = compiled_function(module, name, symbol, restype, argtypes, runtime.cdll._handle)
    if fn is None:
        raise LookupError(f"{module.__name__} could not bind {symbol}")
    return fn


def _raw_pair(ctx: Context, name: str, stmt: str, args: dict) -> dict:
    """'cudart raw, compiled' and 'cudart raw, ctypes' candidates of one statement."""

    def make(kind: str) -> tuple[str, dict]:
        return stmt, {"f": _raw(ctx, name, kind), **args}

    return {
        "cudart raw, compiled": _candidate(lambda: make("compiled")),
        "cudart raw, ctypes": _candidate(lambda: make("ctypes")),
    }


def _time_calls(ctx: Context, row: Row, candidates: dict) -> Row:
    s = ctx.s
    runs: dict[str, Callable[[], float]] = {}
    details: dict[str, str] = {}
    for name, cand in candidates.items():
        if isinstance(cand, BaseException):
            row.skipped(name, _reason(cand))
            continue
        if isinstance(cand, Timed):
            try:
                cand.first()
            except Exception as exc:
                row.skipped(name, f"raises here: {_reason(exc)}")
                continue
            runs[name] = cand.run
            details[name] = cand.detail
            continue
        stmt, bindings = cand
        try:
            # One call outside the loop: binding happens here, and an implementation
            # that raises on this machine is reported instead of timed.
            eval(stmt, {}, dict(bindings))
        except Exception as exc:
            row.skipped(name, f"raises here: {_reason(exc)}")
            continue
        loop = measure.call_loop(stmt, bindings)

        def per_call(loop=loop) -> float:
            return loop(s.calls) / s.calls

        runs[name] = per_call
    for name, samples in measure.interleaved(runs, s.repeats).items():
        row.measured(name, samples, details.get(name, ""))
    row.order(list(candidates))
    return row


def _status_note(ctx: Context, row: Row, status: int, call: str) -> None:
    if status != 0:
        row.note(
            f"{call} returns {status} ({_error_name(ctx.runtime.rt, status)}) on this machine, "
            "in C and in every binding alike: the figures time that error path"
        )


def _backend_note(ctx: Context, row: Row) -> None:
    row.note(
        f"backend in force: {ctx.backend} (cudart.sys binds it; cudart checked calls it); "
        "'cudart raw, compiled' and 'cudart raw, ctypes' are bound here whatever is in force"
    )


def _cupy_runtime(ctx: Context, attr: str):
    fn = getattr(ctx.cupy().cuda.runtime, attr, None)
    if fn is None:
        raise LookupError(f"cupy.cuda.runtime has no {attr}")
    return fn


def _handwritten(ctx: Context, name: str, argtypes: tuple):
    """The baseline: the same symbol as a hand-written ctypes function."""
    symbol = _raw_entry(ctx.runtime.rt, name)[0]
    fn = ctx.cdll[symbol]  # indexing: a private function object, not the shared one
    fn.argtypes = argtypes
    fn.restype = c_int
    return fn


def _checked_pair(ctx: Context, name: str, stmt: str, args: dict) -> dict:
    """'cudart checked' (what `cudart.<name>` is: the compiled checked function where
    the compiled backend has it, issue 23) and 'cudart checked, Python' (the Python
    checked function it stands for, the layer as it was before)."""

    def reference():
        fn = ctx.checked(name)
        found = vars(sys.modules[fn.__module__]).get("_reference", {}).get(name)
        if found is None:
            raise LookupError(f"cudart.{name} is the Python checked function here")
        return stmt, {"f": found, **args}

    return {
        "cudart checked": _candidate(lambda: (stmt, {"f": ctx.checked(name), **args})),
        "cudart checked, Python": _candidate(reference),
    }


def row_get_device(ctx: Context) -> Row:
    row = Row("call.cudaGetDevice", "cudaGetDevice(&device): one pointer out", "ns", ref="C")
    row.data["also"] = "cuda-bindings"
    rt = ctx.runtime.rt
    if rt is None:
        return row.skip_row(ctx.runtime.error)
    dev = c_int()
    addr = ctypes.addressof(dev)
    _status_note(ctx, row, rt.cudaGetDevice(addr), "cudaGetDevice")
    _backend_note(ctx, row)

    def handwritten(argtype, stmt, arg):
        return stmt, {"f": _handwritten(ctx, "cudaGetDevice", (argtype,)), **arg}

    candidates = {
        **_c_both(
            lambda lib: _c_loop(ctx, "cudaGetDevice", lambda lp, fn, n: lp.get_device(fn, n), lib)
        ),
        **_raw_pair(ctx, "cudaGetDevice", "f(a)", {"a": addr}),
        FLOOR: _candidate(lambda: ("f(a)", {"f": operator.index, "a": addr})),
        "cudart raw, compiled, byref": _candidate(
            lambda: (
                "f(byref(d))",
                {"f": _raw(ctx, "cudaGetDevice", "compiled"), "byref": byref, "d": dev},
            )
        ),
        **_checked_pair(ctx, "cudaGetDevice", "f()", {}),
        "ctypes, c_void_p + int address": _candidate(
            lambda: handwritten(c_void_p, "f(a)", {"a": addr})
        ),
        "ctypes, POINTER(c_int) + byref": _candidate(
            lambda: handwritten(POINTER(c_int), "f(byref(d))", {"byref": byref, "d": dev})
        ),
        "cuda-bindings": _candidate(lambda: ("f()", {"f": ctx.cuda_bindings().cudaGetDevice})),
        "CuPy": _candidate(lambda: ("f()", {"f": _cupy_runtime(ctx, "getDevice")})),
    }
    return _time_calls(ctx, row, candidates)


def row_stream_query(ctx: Context) -> Row:
    row = Row("call.cudaStreamQuery", "cudaStreamQuery(0): one handle in", "ns", ref="C")
    rt = ctx.runtime.rt
    if rt is None:
        return row.skip_row(ctx.runtime.error)
    _status_note(ctx, row, rt.cudaStreamQuery(0), "cudaStreamQuery")
    _backend_note(ctx, row)

    def handwritten():
        return "f(0)", {"f": _handwritten(ctx, "cudaStreamQuery", (c_void_p,))}

    candidates = {
        **_c_both(
            lambda lib: _c_loop(
                ctx, "cudaStreamQuery", lambda lp, fn, n: lp.handle(fn, None, n), lib
            )
        ),
        **_raw_pair(ctx, "cudaStreamQuery", "f(0)", {}),
        **_checked_pair(ctx, "cudaStreamQuery", "f(0)", {}),
        "ctypes, c_void_p": _candidate(handwritten),
        "cuda-bindings": _candidate(lambda: ("f(0)", {"f": ctx.cuda_bindings().cudaStreamQuery})),
        "CuPy": _candidate(lambda: ("f(0)", {"f": _cupy_runtime(ctx, "streamQuery")})),
    }
    return _time_calls(ctx, row, candidates)


def row_get_last_error(ctx: Context) -> Row:
    row = Row("call.cudaGetLastError", "cudaGetLastError(): no arguments", "ns", ref="C")
    rt = ctx.runtime.rt
    if rt is None:
        return row.skip_row(ctx.runtime.error)
    rt.cudaGetLastError()  # clear whatever an earlier row left, so the status is steady
    _status_note(ctx, row, rt.cudaGetLastError(), "cudaGetLastError")
    _backend_note(ctx, row)

    def handwritten():
        return "f()", {"f": _handwritten(ctx, "cudaGetLastError", ())}

    candidates = {
        "C": _candidate(
            lambda: _c_loop(ctx, "cudaGetLastError", lambda lp, fn, n: lp.no_arg(fn, n))
        ),
        **_raw_pair(ctx, "cudaGetLastError", "f()", {}),
        "cudart checked": _candidate(lambda: ("f()", {"f": ctx.checked("cudaGetLastError")})),
        "ctypes": _candidate(handwritten),
        "cuda-bindings": _candidate(lambda: ("f()", {"f": ctx.cuda_bindings().cudaGetLastError})),
        "CuPy": _candidate(lambda: ("f()", {"f": _cupy_runtime(ctx, "getLastError")})),
    }
    return _time_calls(ctx, row, candidates)


# ---------------------------------------------------------- launches and copies


def _time_bursts(ctx: Context, row: Row, candidates: dict, scale: float) -> None:
    """Time the candidates, round-robin: (stmt, bindings) in a Python burst loop, or
    Timed (the in-process C loops, which time their own bursts). Every one has made a
    successful call before it gets here."""
    s = ctx.s
    sync = ctx.runtime.rt.cudaDeviceSynchronize
    per = s.burst * s.bursts
    runs: dict[str, Callable[[], float]] = {}
    details: dict[str, str] = {}
    for name, cand in candidates.items():
        if isinstance(cand, BaseException):
            row.skipped(name, _reason(cand))
            continue
        if isinstance(cand, Timed):
            runs[name] = cand.run
            details[name] = cand.detail
            continue
        stmt, bindings = cand
        loop = measure.burst_loop(stmt, bindings, sync)

        def per_launch(loop=loop) -> float:
            return loop(s.burst, s.bursts) / per / scale

        runs[name] = per_launch
    # Setting up may leave a benign error behind (a probe past the last kernel
    # parameter); only what the timed loops leave is worth a note.
    ctx.runtime.rt.cudaGetLastError()
    for name, samples in measure.interleaved(runs, s.launch_repeats).items():
        row.measured(name, samples, details.get(name, ""))
    row.order(list(candidates))
    status = ctx.runtime.rt.cudaGetLastError()
    if status != 0:
        row.note(f"the runtime reported error {status} after the timed loops")


def _first_call(ctx: Context, cands: dict) -> None:
    """One call of each candidate, then a synchronize: one that raises or returns an
    error is replaced by the exception, and reported instead of timed."""
    rt = ctx.runtime.rt
    for name, cand in list(cands.items()):
        if isinstance(cand, BaseException):
            continue
        try:
            if isinstance(cand, Timed):
                code: Any = cand.first()
            else:
                code = eval(cand[0], {}, dict(cand[1]))
            rt.cudaDeviceSynchronize()
            if isinstance(code, (int, tuple)) and not isinstance(code, bool):
                _check(code, name)
        except Exception as exc:
            rt.cudaGetLastError()
            cands[name] = exc


def _check(status, what: str) -> None:
    code = int(status[0] if isinstance(status, tuple) else status)
    if code != 0:
        raise RuntimeError(f"{what} returned {status}")


class _Axpy:
    """The 4-argument kernel's buffers and the check that a launch computed y = a*x + y
    (x = 1, y = 0 before it): every launch path is checked once before it is timed."""

    A = 2.0

    def __init__(self, ctx: Context):
        rt = ctx.runtime.rt
        n = self.n = ctx.s.axpy_n
        self.rt = rt
        self.grid, self.block = (n + 255) // 256, 256
        x, y = c_void_p(), c_void_p()
        _check(rt.cudaMalloc(byref(x), 4 * n), "cudaMalloc")
        _check(rt.cudaMalloc(byref(y), 4 * n), "cudaMalloc")
        self.x, self.y = x.value, y.value
        ones = (c_float * n)(*([1.0] * n))
        _check(rt.cudaMemcpy(self.x, ones, 4 * n, rt.cudaMemcpyHostToDevice), "cudaMemcpy")

    def verify(self, launch_once: Callable[[], object], x=None, y=None, read=None) -> None:
        rt = self.rt
        if y is None:
            _check(rt.cudaMemset(self.y, 0, 4 * self.n), "cudaMemset")
        else:
            y.fill(0)
        rt.cudaDeviceSynchronize()
        launch_once()
        _check(rt.cudaDeviceSynchronize(), "cudaDeviceSynchronize after the launch")
        if read is not None:
            got = read()
        else:
            out = (c_float * self.n)()
            _check(rt.cudaMemcpy(out, self.y, 4 * self.n, rt.cudaMemcpyDeviceToHost), "cudaMemcpy")
            got = list(out)
        if any(v != self.A for v in got):
            wrong = next(v for v in got if v != self.A)
            raise RuntimeError(
                f"the kernel computed {wrong}, not {self.A}: arguments did not arrive"
            )


def _launch_rows(ctx: Context) -> list[Row]:
    empty = Row("launch.empty", "Empty kernel launch, host time per launch", "µs", ref="C")
    axpy = Row(
        "launch.axpy", "4-argument kernel launch (axpy), host time per launch", "µs", ref="C"
    )
    rows = [empty, axpy]
    rt = ctx.runtime.rt
    if rt is None:
        return [r.skip_row(ctx.runtime.error) for r in rows]
    if not ctx.runtime.has_gpu:
        return [r.skip_row(f"no GPU here: {ctx.runtime.no_gpu_reason}") for r in rows]
    try:
        image, how = ctx.kernel_image()
    except Exception as exc:
        return [r.skip_row(f"no kernel image: {_reason(exc)}") for r in rows]
    for r in rows:
        r.note(
            f"bursts of {ctx.s.burst} launches, cudaDeviceSynchronize between bursts (not timed); "
            f"kernels from bench/kernels.cu ({how}); axpy over {ctx.s.axpy_n} floats"
        )
    data = image.read_bytes()
    try:
        ax = _Axpy(ctx)
    except Exception as exc:
        return [r.skip_row(f"could not set up the buffers: {_reason(exc)}") for r in rows]

    # The C program of c_launch.cu, in a process of its own: shown for comparison, never
    # a ratio's reference (figures from two processes moved by 30% on one machine).
    results: dict | Exception
    try:
        results, detail = ctx.c_launch()
    except Exception as exc:
        results, detail = exc, ""
    for r, key in ((empty, "empty"), (axpy, "axpy")):
        if isinstance(results, Exception):
            r.skipped(OWN_PROCESS, _reason(results))
        elif results.get(key, (0, []))[1]:
            r.measured(OWN_PROCESS, results[key][1], detail, ratio=False)
        else:
            r.skipped(OWN_PROCESS, f"cudaLaunchKernel returned {results.get(key, ('?',))[0]}")

    # Slots are packed once for every path that lets the caller do so: the loop then
    # times the launch, which is what a binding adds to.
    a, n = c_float(ax.A), c_int(ax.n)
    xa, ya = c_void_p(ax.x), c_void_p(ax.y)
    slots = (c_void_p * 4)(*(ctypes.addressof(v) for v in (a, xa, ya, n)))
    ctx.keep += [a, n, xa, ya, slots]

    for r in (empty, axpy):
        cands = _launch_candidates(ctx, rt, data, image, ax, slots, is_axpy=r is axpy)
        _time_bursts(ctx, r, cands, scale=1000.0)
    return rows


def _launch_candidates(ctx, rt, data, image, ax, slots, is_axpy: bool) -> dict:
    """The launch paths to time for one of the two kernels: built in a function of
    their own, so that every lambda binds this kernel's values."""
    cands: dict = {}
    name = b"axpy" if is_axpy else b"empty_kernel"
    grid, block = (ax.grid, ax.block) if is_axpy else (1, 1)
    launch_check = ax.verify if is_axpy else _launch_then_sync(rt)

    args = slots if is_axpy else None
    main = _candidate(
        lambda: _cudart_kernel(ctx, data, image, name, grid, block, is_axpy, ax, launch_check)
    )
    same = _same_arguments(ctx, main, launch_check)
    cands["C"] = same.pop("C")
    cands["cudart kernels"] = main
    # The same, and the hand-written call, on a kernel registered the way nvcc's
    # stubs register one (as C's is): this tells the cost of the route from the
    # cost of the binding.
    cands["cudart kernels, route='register'"] = _candidate(
        lambda: _cudart_kernel(
            ctx, data, image, name, grid, block, is_axpy, ax, launch_check, "register"
        )
    )
    cands.update(same)
    cands["ctypes, cudaLaunchKernel + dim3 by value"] = _candidate(
        lambda: _ctypes_launch(
            ctx, _library_kernel(ctx, data, name), grid, block, args, launch_check
        )
    )
    cands["ctypes, same, on the registered kernel"] = _candidate(
        lambda: _ctypes_launch(
            ctx,
            int(_cudart_module(ctx, data, image, "register").get_function(name.decode())),
            grid,
            block,
            args,
            launch_check,
        )
    )
    cands.update(
        _cuda_bindings_launch(ctx, data, name, grid, block, is_axpy, ax, slots, launch_check)
    )
    cands["CuPy RawModule"] = _candidate(
        lambda: _cupy_launch(ctx, image, name, grid, block, is_axpy, ax)
    )
    return cands


OWN_PROCESS = "C program, cudaLaunchKernel (own process, no ratio)"
SAME = "cudaLaunchKernelExC on Function.launch's config, function and slots"


def _same_arguments(ctx: Context, main, launch_check) -> dict:
    """C (in this process), the raw layer's two backends and a hand-written ctypes
    call, each calling cudaLaunchKernelExC (the symbol Function.launch calls) with the
    very config, function handle and argument slots Function.launch passes: primed by
    the check launch of the 'cudart kernels' candidate, and left as its timed launches
    keep them (same grid, block and values each time)."""
    names = [
        "C",
        f"cudart raw, compiled: {SAME}",
        f"cudart raw, ctypes: {SAME}",
        f"ctypes, no argtypes: {SAME}",
    ]
    if isinstance(main, BaseException):
        return {n: LookupError(f"needs cudart's Function.launch: {_reason(main)}") for n in names}
    function = main[1]["launch"].__self__
    if not hasattr(function, "_config_ptr"):  # the C launcher's: its Python path's Function
        function = function.slow.__self__
    try:
        objects = (function._config_ptr, function._func, function._sig.argv)
    except AttributeError as exc:
        reason = f"Function has no {exc.name or 'such attribute'} to take the arguments from"
        return {n: LookupError(reason) for n in names}
    ctx.keep.append(function)
    config, func, argv = (o.value for o in objects)
    out: dict[str, Any] = {}

    def c_loop() -> Timed:
        timed = _c_bursts(
            ctx,
            "cudaLaunchKernelExC",
            lambda lp, fn, sync, burst, bursts: lp.launch(
                fn, config, func, argv, burst, bursts, sync
            ),
        )
        launch_check(lambda: _check(timed.first(), "the C loop's cudaLaunchKernelExC"))
        return timed

    out["C"] = _candidate(c_loop)

    def raw(kind: str):
        fn = _raw(ctx, "cudaLaunchKernelExC", kind)
        launch_check(lambda: _check(fn(config, func, argv), "cudaLaunchKernelExC"))
        return "f(c, k, p)", {"f": fn, "c": config, "k": func, "p": argv}

    out[names[1]] = _candidate(lambda: raw("compiled"))
    out[names[2]] = _candidate(lambda: raw("ctypes"))

    def bare():
        # As Function.launch's ctypes launcher: prebuilt c_void_p objects, no argtypes.
        fn = ctx.cdll[_raw_entry(ctx.runtime.rt, "cudaLaunchKernelExC")[0]]
        fn.argtypes = None
        fn.restype = c_int
        launch_check(lambda: _check(fn(*objects), "cudaLaunchKernelExC"))
        return "f(c, k, p)", {"f": fn, "c": objects[0], "k": objects[1], "p": objects[2]}

    out[names[3]] = _candidate(bare)
    return out


def _launch_then_sync(rt):
    # The empty kernel computes nothing to check: a launch that does not fail is right.
    def check(once, **_unused):
        once()
        _check(rt.cudaDeviceSynchronize(), "cudaDeviceSynchronize after the launch")

    return check


def _cudart_module(ctx, data, image, route: str | None):
    def make():
        try:
            kernels = importlib.import_module("cudart.kernels")
        except ModuleNotFoundError:
            raise LookupError("cudart.kernels does not exist yet") from None
        options = {"route": route} if route else {}
        errors = []
        for source in (data, str(image)):  # the image as bytes, else as a path
            try:
                module = kernels.load_module(source, **options)
                ctx.keep.append(module)
                return module
            except Exception as exc:
                errors.append(_reason(exc))
        raise RuntimeError(f"load_module failed: {'; '.join(errors)}")

    return ctx.once(f"cudart.module.{route}", make)


def _cudart_kernel(ctx, data, image, name, grid, block, is_axpy, ax, launch_check, route=None):
    kernel = _cudart_module(ctx, data, image, route).get_function(name.decode())
    errors = []
    # Plain ints and floats first: that is how a caller writes a launch, and the
    # fast path of Function.launch. Each form must compute the right result before
    # it is timed; the others are there for a launch API that wants them.
    shapes = [(grid, block), ((grid, 1, 1), (block, 1, 1))]
    arg_forms = (
        [(ax.A, ax.x, ax.y, ax.n), (c_float(ax.A), c_void_p(ax.x), c_void_p(ax.y), c_int(ax.n))]
        if is_axpy
        else [()]
    )
    for g, b in shapes:
        for args in arg_forms:
            try:
                launch_check(functools.partial(kernel.launch, g, b, *args))
            except Exception as exc:
                errors.append(_reason(exc))
                ctx.runtime.rt.cudaGetLastError()
                continue
            ctx.keep.append(args)
            names = [f"a{i}" for i in range(len(args))]
            stmt = f"launch(g, b{''.join(', ' + v for v in names)})"
            return stmt, {
                "launch": kernel.launch,
                "g": g,
                "b": b,
                **dict(zip(names, args, strict=True)),
            }
    raise RuntimeError(f"no launch form worked: {'; '.join(errors[-2:])}")


class _Dim3(ctypes.Structure):
    _fields_ = [("x", c_uint), ("y", c_uint), ("z", c_uint)]


def _library_kernel(ctx, data, name) -> int | None:
    """A cudaKernel_t for the kernel, through hand-bound cudaLibraryLoadData."""
    lib = ctx.cdll
    try:
        load = lib["cudaLibraryLoadData"]
        get = lib["cudaLibraryGetKernel"]
    except AttributeError:
        raise LookupError(
            f"libcudart {format_version(ctx.runtime.version)} has no cudaLibraryLoadData, "
            "which hands out kernel handles cudaLaunchKernel accepts"
        ) from None
    load.argtypes = (c_void_p, c_void_p, c_void_p, c_void_p, c_uint, c_void_p, c_void_p, c_uint)
    load.restype = c_int
    get.argtypes = (c_void_p, c_void_p, ctypes.c_char_p)
    get.restype = c_int
    handle, kernel = c_void_p(), c_void_p()
    image = ctypes.create_string_buffer(data, len(data))
    _check(load(byref(handle), image, None, None, 0, None, None, 0), "cudaLibraryLoadData")
    _check(get(byref(kernel), handle, name), "cudaLibraryGetKernel")
    ctx.keep += [image, handle, kernel]
    return kernel.value


def _ctypes_launch(ctx, k: int | None, grid, block, slots, launch_check):
    launch = ctx.cdll["cudaLaunchKernel"]
    launch.argtypes = (c_void_p, _Dim3, _Dim3, c_void_p, c_size_t, c_void_p)
    launch.restype = c_int
    g, b = _Dim3(grid, 1, 1), _Dim3(block, 1, 1)
    ctx.keep += [g, b]
    launch_check(lambda: _check(launch(k, g, b, slots, 0, None), "cudaLaunchKernel"))
    return "f(k, g, b, p, 0, None)", {"f": launch, "k": k, "g": g, "b": b, "p": slots}


def _cuda_bindings_launch(ctx, data, name, grid, block, is_axpy, ax, slots, launch_check) -> dict:
    idiomatic = "cuda-bindings, cuLaunchKernel (values, types)"
    packed = "cuda-bindings, cuLaunchKernel packed once"
    try:
        drv = ctx.cuda_bindings("driver")

        def make_function():
            _check(drv.cuInit(0), "cuInit")
            # The runtime made the device's primary context current on this thread.
            err, module = drv.cuModuleLoadData(data)
            _check(err, "cuModuleLoadData")
            ctx.keep.append(module)
            return module

        module = ctx.once("cb.module", make_function)
        err, fn = drv.cuModuleGetFunction(module, name)
        _check(err, "cuModuleGetFunction")
        stream = drv.CUstream(0)
    except Exception as exc:
        return {idiomatic: exc, packed: exc}
    out: dict[str, tuple[str, dict[str, Any]] | Exception] = {}
    stmt = "f(k, gx, 1, 1, bx, 1, 1, 0, s, p, 0)"
    base = {"f": drv.cuLaunchKernel, "k": fn, "gx": grid, "bx": block, "s": stream}
    if is_axpy:
        params = ((ax.A, ax.x, ax.y, ax.n), (c_float, c_void_p, c_void_p, c_int))
        forms = {idiomatic: params, packed: ctypes.addressof(slots)}
    else:
        forms = {idiomatic: 0}
    for label, p in forms.items():
        try:
            launch_check(
                lambda p=p: _check(
                    drv.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, stream, p, 0),
                    "cuLaunchKernel",
                )
            )
            out[label] = (stmt, {**base, "p": p})
        except Exception as exc:
            ctx.runtime.rt.cudaGetLastError()
            out[label] = exc
    return out


def _cupy_launch(ctx, image, name, grid, block, is_axpy, ax):
    cp = ctx.cupy()
    module = ctx.once("cupy.module", lambda: cp.RawModule(path=str(image)))
    kernel = module.get_function(name.decode())
    if is_axpy:
        x = cp.ones(ax.n, dtype=cp.float32)
        y = cp.zeros(ax.n, dtype=cp.float32)
        args = (cp.float32(ax.A), x, y, cp.int32(ax.n))
        ctx.keep += [x, y]
        ax.verify(lambda: kernel((grid,), (block,), args), y=y, read=lambda: y.get().tolist())
    else:
        args = ()
        kernel((grid,), (block,), args)
        _check(ctx.runtime.rt.cudaDeviceSynchronize(), "sync")
    return "k(g, b, a)", {"k": kernel, "g": (grid,), "b": (block,), "a": args}


def row_memcpy(ctx: Context) -> Row:
    row = Row("memcpy.h2d4", "cudaMemcpyAsync of 4 bytes, pinned host to device", "µs", ref="C")
    rt = ctx.runtime.rt
    if rt is None:
        return row.skip_row(ctx.runtime.error)
    if not ctx.runtime.has_gpu:
        return row.skip_row(f"no GPU here: {ctx.runtime.no_gpu_reason}")
    row.note(
        f"bursts of {ctx.s.burst} copies on stream 0, "
        "cudaDeviceSynchronize between bursts (not timed)"
    )
    _backend_note(ctx, row)
    h, d = c_void_p(), c_void_p()
    try:
        _check(rt.cudaMallocHost(byref(h), 4), "cudaMallocHost")
        _check(rt.cudaMalloc(byref(d), 4), "cudaMalloc")
    except Exception as exc:
        return row.skip_row(_reason(exc))
    hv, dv = h.value, d.value
    kind = int(rt.cudaMemcpyHostToDevice)
    stmt = "f(d, h, 4, k, 0)"
    args = {"d": dv, "h": hv, "k": kind}

    def c_loop(lib: str):
        return _c_bursts(
            ctx,
            "cudaMemcpyAsync",
            lambda lp, fn, sync, burst, bursts: lp.memcpy_async(
                fn, dv, hv, 4, kind, None, burst, bursts, sync
            ),
            lib,
        )

    def handwritten():
        fn = _handwritten(ctx, "cudaMemcpyAsync", (c_void_p, c_void_p, c_size_t, c_int, c_void_p))
        return stmt, {"f": fn, **args}

    def bindings():
        r = ctx.cuda_bindings()
        return stmt, {**args, "f": r.cudaMemcpyAsync, "k": r.cudaMemcpyKind.cudaMemcpyHostToDevice}

    cands = {
        **_c_both(c_loop),
        **_raw_pair(ctx, "cudaMemcpyAsync", stmt, args),
        **_checked_pair(ctx, "cudaMemcpyAsync", stmt, args),
        "ctypes": _candidate(handwritten),
        "cuda-bindings": _candidate(bindings),
        "CuPy": _candidate(lambda: (stmt, {"f": _cupy_runtime(ctx, "memcpyAsync"), **args})),
    }
    _first_call(ctx, cands)
    _time_bursts(ctx, row, cands, scale=1000.0)
    return row


def _cuda_bindings_event(ctx: Context, event: int | None):
    """cuda-bindings' cudaEventRecord and the event in a form it takes: the handle as
    an int where it accepts one, else wrapped in its cudaEvent_t."""
    r = ctx.cuda_bindings()
    errors = []
    for form in (event, "wrapped"):
        try:
            e = r.cudaEvent_t(init_value=event) if form == "wrapped" else form
            _check(r.cudaEventRecord(e, 0), "cudaEventRecord")
            ctx.runtime.rt.cudaDeviceSynchronize()
            return "f(e, 0)", {"f": r.cudaEventRecord, "e": e}
        except Exception as exc:
            errors.append(_reason(exc))
    raise RuntimeError("; ".join(errors))


def row_event_record(ctx: Context) -> Row:
    row = Row("event.record", "cudaEventRecord(event, 0)", "µs", ref="C")
    rt = ctx.runtime.rt
    if rt is None:
        return row.skip_row(ctx.runtime.error)
    if not ctx.runtime.has_gpu:
        return row.skip_row(f"no GPU here: {ctx.runtime.no_gpu_reason}")
    row.note(
        f"one event (cudaEventDisableTiming) recorded on stream 0 in bursts of {ctx.s.burst}, "
        "cudaDeviceSynchronize between bursts (not timed)"
    )
    _backend_note(ctx, row)
    ev = c_void_p()
    try:
        flags = int(getattr(rt, "cudaEventDisableTiming", 2))
        _check(rt.cudaEventCreateWithFlags(byref(ev), flags), "cudaEventCreateWithFlags")
    except Exception as exc:
        return row.skip_row(_reason(exc))
    e = ev.value
    ctx.keep.append(ev)
    stmt = "f(e, 0)"

    def handwritten():
        return stmt, {"f": _handwritten(ctx, "cudaEventRecord", (c_void_p, c_void_p)), "e": e}

    cands = {
        **_c_both(
            lambda lib: _c_bursts(
                ctx,
                "cudaEventRecord",
                lambda lp, fn, sync, burst, bursts: lp.event_record(
                    fn, e, None, burst, bursts, sync
                ),
                lib,
            )
        ),
        **_raw_pair(ctx, "cudaEventRecord", stmt, {"e": e}),
        **_checked_pair(ctx, "cudaEventRecord", stmt, {"e": e}),
        "ctypes": _candidate(handwritten),
        "cuda-bindings": _candidate(lambda: _cuda_bindings_event(ctx, e)),
        "CuPy": _candidate(lambda: (stmt, {"f": _cupy_runtime(ctx, "eventRecord"), "e": e})),
    }
    _first_call(ctx, cands)
    _time_bursts(ctx, row, cands, scale=1000.0)
    return row


# ------------------------------------------------------- fresh-process rows


def _child_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env.pop("PYTHONSTARTUP", None)
    return env


_IMPORTS = {
    "cudart: import cudart": "import cudart",
    "cudart: import cudart; cudart.sys": "import cudart; cudart.sys",
    # The checked call loads the library, both generated modules and the error classes
    # (without a GPU it takes the error path; with one, it returns).
    "cudart: import cudart; cudart.cudaGetDevice()": (
        "import cudart\ntry:\n    cudart.cudaGetDevice()\nexcept cudart.CudaError:\n    pass"
    ),
    "cuda-bindings: import cuda.bindings.runtime": "import cuda.bindings.runtime",
}


def row_import(ctx: Context) -> Row:
    row = Row(
        "import",
        "Import in a fresh process (cold interpreter, warm disk cache)",
        "ms",
        ref="cuda-bindings: import cuda.bindings.runtime",
    )
    row.note(
        "one fresh interpreter per sample; the time runs from before the import statement to "
        "after it (interpreter start-up excluded); a warm-up run wrote the .pyc files first"
    )
    env = _child_env()
    runs: dict[str, Callable[[], float]] = {}
    for name, stmt in _IMPORTS.items():
        code = f"import time\nt = time.perf_counter_ns()\n{stmt}\nprint(time.perf_counter_ns() - t)"
        try:
            measure.run_python(code, env)
        except Exception as exc:
            row.skipped(name, f"fails here: {one_line(str(exc))}")
            continue

        def import_ms(code=code) -> float:
            return int(measure.run_python(code, env)) / 1e6

        runs[name] = import_ms
    for name, samples in measure.interleaved(runs, ctx.s.import_repeats).items():
        row.measured(name, samples)
    return row


_RSS = """
def rss():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
r0 = rss()
"""

_MEMORY = {
    # name: (code after r0 that sets r1, code that sets r2, which of r1/r2 to report)
    "cudart: import cudart": ("import cudart", "", "r1"),
    "cudart: + cudart.sys and one call": (
        "import cudart",
        "import ctypes\ncudart.sys.cudaGetDevice(ctypes.byref(ctypes.c_int()))",
        "r2",
    ),
    "ctypes: CDLL(libcudart) and one call": (
        "import ctypes",
        "lib = ctypes.CDLL({path!r})\nf = lib.cudaGetDevice\nf.argtypes = [ctypes.c_void_p]\n"
        "f(ctypes.byref(ctypes.c_int()))",
        "r2",
    ),
    "cuda-bindings: import cuda.bindings.runtime": ("from cuda.bindings import runtime", "", "r1"),
    "cuda-bindings: + one call": (
        "from cuda.bindings import runtime",
        "runtime.cudaGetDevice()",
        "r2",
    ),
}


def row_memory(ctx: Context) -> Row:
    row = Row(
        "memory", "Memory added in a fresh process (VmRSS after minus before)", "MiB", ref=None
    )
    if not os.path.exists("/proc/self/status"):
        return row.skip_row("no /proc/self/status on this system")
    env = _child_env()
    bare: list[float] = []
    runs: dict[str, Callable[[], float]] = {}
    for name, (first, second, report) in _MEMORY.items():
        if "{path" in second:
            if not ctx.runtime.path:
                row.skipped(name, ctx.runtime.error or "no libcudart loaded")
                continue
            second = second.format(path=ctx.runtime.path)
        code = f"{_RSS}{first}\nr1 = rss()\n{second}\nr2 = rss()\nprint(r0, {report})"

        def run(code=code):
            r0, after = map(int, measure.run_python(code, env).split())
            bare.append(r0 / 1024)
            return (after - r0) / 1024

        try:
            run()
        except Exception as exc:
            row.skipped(name, f"fails here: {one_line(str(exc))}")
            continue
        runs[name] = run
    for name, samples in measure.interleaved(runs, ctx.s.memory_repeats).items():
        row.measured(name, samples)
    if bare:
        bare.sort()
        row.note(
            f"a bare interpreter holds {bare[len(bare) // 2]:.1f} MiB before the import (median)"
        )
    return row


_GENERATOR_TOOLS = ("clang", "black", "jinja2", "tomli_w")


def row_generator(ctx: Context) -> Row:
    row = Row("generator", "cudart-bindgen in a fresh process, headers cached", "s", ref=None)
    missing = [m for m in _GENERATOR_TOOLS if importlib.util.find_spec(m) is None]
    if missing:
        return row.skip_row(
            f"the generator's tools are not installed here ({', '.join(missing)} missing); "
            "these rows run where `make setup` was run"
        )
    try:
        from generator.fetch import fetch_version
        from generator.manifest import Manifest

        manifest = Manifest.load()
        keys = manifest.keys()
        for key in keys:  # fill the cache now, so no timed run downloads
            fetch_version(manifest, key, lambda _msg: None)
    except Exception as exc:
        return row.skip_row(f"the pinned headers are not available: {_reason(exc)}")
    key = format_version(ctx.runtime.bindings) if ctx.runtime.bindings else keys[-1]
    if key not in keys:
        key = keys[-1]
    out_root = Path(tempfile.mkdtemp(prefix="gen-", dir=ctx.build))
    statuses: dict[str, set] = {}

    def timed(label: str, args: list[str]) -> Callable[[], float]:
        def run() -> float:
            target = Path(tempfile.mkdtemp(dir=out_root)) / "generated"
            output = [] if args[0] == "check" else ["--output", str(target)]
            cmd = [sys.executable, "-m", "generator", *output, *args]
            t0 = time.perf_counter_ns()
            done = subprocess.run(cmd, cwd=REPO, env=_child_env(), capture_output=True, text=True)
            elapsed = (time.perf_counter_ns() - t0) / 1e9
            shutil.rmtree(target.parent, ignore_errors=True)
            if done.returncode not in (0, 1) or (done.returncode == 1 and args[0] != "check"):
                lines = (done.stderr or done.stdout).strip().splitlines()
                raise RuntimeError(
                    f"exit {done.returncode}: {lines[-1] if lines else '(no output)'}"
                )
            statuses.setdefault(label, set()).add(done.returncode)
            return elapsed

        return run

    plan = [
        (f"generate {key}", ["generate", key], ctx.s.generate_one),
        (f"generate --all ({len(keys)} versions)", ["generate", "--all"], ctx.s.generate_all),
        ("check", ["check"], ctx.s.check),
    ]
    first = True
    for label, args, repeats in plan:
        run = timed(label, args)
        try:
            if first:  # writes the generator's .pyc files, which no later run then pays for
                run()
                first = False
            samples = [run() for _ in range(repeats)]
        except Exception as exc:
            row.skipped(label, f"fails here: {_reason(exc)}")
            continue
        row.measured(f"cudart-bindgen {label}", samples)
    if 1 in statuses.get("check", ()):
        row.note(
            "`cudart-bindgen check` found generated/ stale (exit 1); the time is still the check's"
        )
    row.note(
        "wall time of the whole command, interpreter start-up included; into a temporary --output"
    )
    return row


# ------------------------------------------------------------------------ compile

_COMPILE_SOURCE = r"""
template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}
"""


def row_compile(ctx: Context) -> list[Row]:
    """cudart.compile against CuPy's RawModule: a cold compile (nothing cached), a
    cached one (the on-disk cache primed, a fresh module object), and on a GPU the first
    launch of the compiled kernel (compile from the cache + load + launch + sync)."""
    cold = Row("compile.cold", "compile axpy<float> with NVRTC, nothing cached", "s", "cudart")
    warm = Row("compile.cached", "compile axpy<float>, on-disk cache primed", "s", "cudart")
    memory = Row(
        "compile.memory", "compile axpy<float> again in one process (in memory)", "s", "cudart"
    )
    first = Row(
        "compile.first_launch", "cached compile, load, get_function and launch", "s", "cudart"
    )
    rows = [cold, warm, memory, first]
    try:
        import cudart

        version = cudart.nvrtc.nvrtc_version()
    except Exception as exc:
        return [r.skip_row(f"no NVRTC: {_reason(exc)}") for r in rows]
    gpu = ctx.runtime.has_gpu
    arch = None if gpu else "sm_90"
    folder = Path(tempfile.mkdtemp(prefix="kernels-", dir=ctx.build))
    counter = iter(range(1 << 30))
    repeats = max(3, ctx.s.repeats // 4)

    def source(unique: bool) -> str:
        # A comment of its own makes every cold compile a different program to each
        # tool's caches (CuPy keeps compiled modules in memory too).
        return _COMPILE_SOURCE + (f"// {next(counter)}\n" if unique else "")

    def ours(cache: bool, unique: bool, launch: bool, remembered: bool) -> Callable[[], float]:
        def run() -> float:
            os.environ["CUDART_KERNEL_CACHE"] = str(folder)
            if not remembered:  # the disk's cost: the process has compiled nothing
                cudart.nvrtc.clear_cache()
            batch = _batch(remembered, launch)
            t0 = time.perf_counter_ns()
            for _ in range(batch):
                module = cudart.compile(
                    source(unique),
                    name_expressions=["axpy<float>"],
                    arch=arch,
                    load=gpu,
                    cache=cache,
                )
            if launch:
                fn = module.get_function("axpy<float>")
                fn.launch(1, 32, 2.0, 0, 0, 0)
                cudart.cudaDeviceSynchronize()
            elapsed = (time.perf_counter_ns() - t0) / 1e9 / batch
            if gpu and not remembered:  # a remembered module is the next run's
                module.close()
            return elapsed

        return run

    def theirs(unique: bool, launch: bool, remembered: bool) -> Callable[[], float]:
        cp = ctx.cupy()
        os.environ["CUPY_CACHE_DIR"] = str(folder / "cupy")

        def run() -> float:
            batch = _batch(remembered, launch)
            t0 = time.perf_counter_ns()
            for _ in range(batch):
                module = cp.RawModule(code=source(unique), name_expressions=["axpy<float>"])
                fn = module.get_function("axpy<float>")
            if launch:
                fn((1,), (32,), (cp.float32(2.0), 0, 0, cp.int32(0)))
                cp.cuda.Device().synchronize()
            return (time.perf_counter_ns() - t0) / 1e9 / batch

        return run

    saved = {k: os.environ.get(k) for k in ("CUDART_KERNEL_CACHE", "CUPY_CACHE_DIR")}
    try:
        _compile_rows(
            ctx,
            [
                (cold, False, True, False, False),
                (warm, True, False, False, False),
                (memory, True, False, False, True),
                (first, True, False, True, True),
            ],
            gpu,
            ours,
            theirs,
            repeats,
            version,
            arch,
        )
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return rows


def _batch(remembered: bool, launch: bool) -> int:
    """Calls per sample: a compile remembered in memory takes microseconds, which one
    call would time as much of the clock as of the call."""
    return 100 if remembered and not launch else 1


def _compile_rows(ctx, plans, gpu, ours, theirs, repeats, version, arch) -> None:
    for row, cache, unique, launch, remembered in plans:
        if launch and not gpu:
            row.skip_row("needs a GPU")
            continue
        runs = {"cudart": ours(cache, unique, launch, remembered)}
        if gpu:
            try:
                runs["CuPy RawModule"] = theirs(unique, launch, remembered)
            except Exception as exc:
                row.skipped("CuPy RawModule", _reason(exc))
        else:
            row.skipped("CuPy RawModule", "CuPy compiles for the current device: needs a GPU")
        for name, samples in measure.interleaved(runs, repeats).items():
            row.measured(name, samples)
        row.order(["cudart", "CuPy RawModule"])
        row.note(
            f"NVRTC {format_version(version)}, arch {arch or 'of the device'}; wall time of "
            "the call, cache in a temporary folder"
        )


# ------------------------------------------------------------------------ registry

# (tags, function): --only cpu runs rows tagged cpu, --only gpu rows tagged gpu. The
# call, import and memory rows run anywhere and are worth having from both machines.
ROWS: list[tuple[frozenset, Callable[[Context], Row | list[Row]]]] = [
    (frozenset({"cpu", "gpu"}), row_get_device),
    (frozenset({"cpu", "gpu"}), row_stream_query),
    (frozenset({"cpu", "gpu"}), row_get_last_error),
    (frozenset({"gpu"}), _launch_rows),
    (frozenset({"gpu"}), row_memcpy),
    (frozenset({"gpu"}), row_event_record),
    (frozenset({"cpu", "gpu"}), row_import),
    (frozenset({"cpu", "gpu"}), row_memory),
    (frozenset({"cpu"}), row_generator),
    (frozenset({"cpu", "gpu"}), row_compile),
]
