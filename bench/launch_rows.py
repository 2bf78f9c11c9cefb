"""Issue 23's launch rows: the 4-argument axpy launch with a new grid each launch, and
with device arrays for its pointers, each against C calling cudaLaunchKernelExC in
this process (c_loops.c) on the config, function handle and slots a Function of the
same kernel packed, and against CuPy and cuda-bindings where installed.

A new grid: every launch alternates between two grid objects (`grids[_i & 1]`, the
burst loop's index), which Function.launch configures each time; C writes gridDim.x
before each call the same way (loop_launch_grids). Device arrays: CuPy arrays where
CuPy is installed, else cudart.arrays' DeviceArray over the same buffers (both have
__cuda_array_interface__); C's slots hold the addresses, packed once. Both need a GPU
and say so without one, as the other launch rows do.
"""

from __future__ import annotations

from ctypes import c_float, c_int, c_void_p
from typing import Any

from .rows import (
    Context,
    Row,
    Timed,
    _Axpy,
    _c_bursts,
    _candidate,
    _check,
    _cudart_module,
    _reason,
    _time_bursts,
)

A_GRID = ("launch.axpy.grid", "4-argument kernel launch (axpy), a new grid each launch")
A_ARRAY = ("launch.axpy.arrays", "4-argument kernel launch (axpy), device arrays as pointers")
# Not a launch: what reading the arrays' interfaces would add to one.
READ_INTERFACES = "x.__cuda_array_interface__ and y's, read (no launch)"


def _setup(ctx: Context, rows: list[Row]):
    """(image, data, axpy buffers), or a reason every row is skipped."""
    if ctx.runtime.rt is None:
        return ctx.runtime.error
    if not ctx.runtime.has_gpu:
        return f"no GPU here: {ctx.runtime.no_gpu_reason}"
    try:
        image, how = ctx.kernel_image()
        ax = _Axpy(ctx)
    except Exception as exc:
        return f"no kernel image or buffers: {_reason(exc)}"
    for r in rows:
        r.note(
            f"bursts of {ctx.s.burst} launches, cudaDeviceSynchronize between bursts (not "
            f"timed); bench/kernels.cu's axpy ({how}) over {ctx.s.axpy_n} floats"
        )
    return image, image.read_bytes(), ax


def _c_on_a_function(ctx: Context, fn, geometry, args, loop) -> Timed:
    """C calling cudaLaunchKernelExC on the config, handle and slots of `fn`, a Function
    of its own (so that C's writes to its config touch no timed Function), launched
    once on `geometry` (grid, block) with `args` to configure and pack them;
    `loop(loops, pointer, config, func, argv, sync, burst, bursts)` is the C loop."""
    fn.launch(*geometry, _typed(args[0]), *args[1:])
    _check(ctx.runtime.rt.cudaDeviceSynchronize(), "cudaDeviceSynchronize")
    config, func, argv = (o.value for o in (fn._config_ptr, fn._func, fn._sig.argv))
    ctx.keep.append(fn)
    return _c_bursts(
        ctx,
        "cudaLaunchKernelExC",
        lambda lp, f, sync, burst, bursts: loop(lp, f, config, func, argv, sync, burst, bursts),
    )


def _cupy_kernel(ctx: Context, image):
    cp = ctx.cupy()
    module = ctx.once("cupy.module", lambda: cp.RawModule(path=str(image)))
    return cp, module.get_function("axpy")


def _bindings_kernel(ctx: Context, data):
    drv = ctx.cuda_bindings("driver")

    def make():
        _check(drv.cuInit(0), "cuInit")
        err, module = drv.cuModuleLoadData(data)
        _check(err, "cuModuleLoadData")
        ctx.keep.append(module)
        return module

    err, fn = drv.cuModuleGetFunction(ctx.once("cb.module.issue23", make), b"axpy")
    _check(err, "cuModuleGetFunction")
    return drv, fn


def _typed(a) -> c_float:
    """axpy's `a` as a typed scalar: bench/kernels.cu's cubin has no PTX to say that the
    parameter is a float, so Function.launch refuses a Python float there (ambiguous),
    and a ctypes scalar is one of the kinds the C launcher packs itself."""
    return a if isinstance(a, c_float) else c_float(a)


def row_launch_new_grid(ctx: Context) -> list[Row]:
    row = Row(*A_GRID, "µs", ref="C")
    setup = _setup(ctx, [row])
    if isinstance(setup, str):
        return [row.skip_row(setup)]
    image, data, ax = setup
    g, b = ax.grid, ax.block
    grids = (g, g + 1)  # the second's extra block does nothing (i >= n)
    values = (ax.A, ax.x, ax.y, ax.n)
    row.note(f"grids {g} and {g + 1} in turn, block {b}")
    cands: dict[str, Any] = {}

    def module():
        return _cudart_module(ctx, data, image, None)

    def c_loop():
        timed = _c_on_a_function(
            ctx,
            module().get_function("axpy"),
            (g, b),
            values,
            lambda lp, f, c, k, p, sync, burst, bursts: lp.launch_grids(
                f, c, k, p, g, burst, bursts, sync
            ),
        )
        ax.verify(lambda: _check(timed.first(), "the C loop's cudaLaunchKernelExC"))
        return timed

    def cudart():
        fn = module().get_function("axpy")
        typed = (_typed(ax.A), *values[1:])
        ax.verify(lambda: fn.launch(grids[1], b, *typed))
        return "launch(grids[_i & 1], b, a, x, y, n)", {
            "launch": fn.launch,
            "grids": grids,
            "b": b,
            **dict(zip("axyn", typed, strict=True)),
        }

    def bindings():
        drv, fn = _bindings_kernel(ctx, data)
        params = (values, (c_float, c_void_p, c_void_p, c_int))
        stream = drv.CUstream(0)
        ax.verify(
            lambda: _check(
                drv.cuLaunchKernel(fn, grids[1], 1, 1, b, 1, 1, 0, stream, params, 0),
                "cuLaunchKernel",
            )
        )
        stmt = "f(k, grids[_i & 1], 1, 1, b, 1, 1, 0, s, p, 0)"
        return stmt, {
            "f": drv.cuLaunchKernel,
            "k": fn,
            "grids": grids,
            "b": b,
            "s": stream,
            "p": params,
        }

    def cupy():
        cp, kernel = _cupy_kernel(ctx, image)
        x, y = cp.ones(ax.n, dtype=cp.float32), cp.zeros(ax.n, dtype=cp.float32)
        ctx.keep += [x, y]
        args = (cp.float32(ax.A), x, y, cp.int32(ax.n))
        tuples = ((g,), (g + 1,))
        ax.verify(lambda: kernel(tuples[1], (b,), args), y=y, read=lambda: y.get().tolist())
        return "k(grids[_i & 1], b, a)", {"k": kernel, "grids": tuples, "b": (b,), "a": args}

    cands["C"] = _candidate(c_loop)
    cands["cudart kernels"] = _candidate(cudart)
    cands["cuda-bindings, cuLaunchKernel (values, types)"] = _candidate(bindings)
    cands["CuPy RawKernel"] = _candidate(cupy)
    _time_bursts(ctx, row, cands, scale=1000.0)
    return [row]


def _device_arrays(ctx: Context, ax):
    """Two device arrays over float buffers (x = 1, y), and how to read and zero y:
    CuPy's where installed, else cudart.arrays' over the row's own buffers."""
    try:
        cp = ctx.cupy()
    except Exception:
        import cudart

        x = cudart.as_array(ax.x, ax.n, "float32")
        y = cudart.as_array(ax.y, ax.n, "float32")
        return "cudart.arrays.DeviceArray", x, y, {}
    x, y = cp.ones(ax.n, dtype=cp.float32), cp.zeros(ax.n, dtype=cp.float32)
    ctx.keep += [x, y]
    return "CuPy arrays", x, y, {"y": y, "read": lambda: y.get().tolist()}


def row_launch_device_arrays(ctx: Context) -> list[Row]:
    row = Row(*A_ARRAY, "µs", ref="C")
    setup = _setup(ctx, [row])
    if isinstance(setup, str):
        return [row.skip_row(setup)]
    image, data, ax = setup
    g, b = ax.grid, ax.block
    try:
        kind, x, y, verify_y = _device_arrays(ctx, ax)
    except Exception as exc:
        return [row.skip_row(f"no device arrays: {_reason(exc)}")]
    row.note(f"x and y are {kind} (__cuda_array_interface__); grid {g}, block {b}")
    if verify_y:
        row.note(
            "Function.launch reads a cupy.ndarray's data.ptr and size in C, which give its "
            "interface's address without the dict CuPy builds per read (the last line times "
            "that dict for both arrays)"
        )
    addresses = tuple(int(v.__cuda_array_interface__["data"][0]) for v in (x, y))
    cands: dict[str, Any] = {}

    def module():
        return _cudart_module(ctx, data, image, None)

    def c_loop():
        values = (ax.A, *addresses, ax.n)
        timed = _c_on_a_function(
            ctx,
            module().get_function("axpy"),
            (g, b),
            values,
            lambda lp, f, c, k, p, sync, burst, bursts: lp.launch(f, c, k, p, burst, bursts, sync),
        )
        ax.verify(lambda: _check(timed.first(), "the C loop's cudaLaunchKernelExC"), **verify_y)
        return timed

    def cudart(xs=x, ys=y):
        fn = module().get_function("axpy")
        a = _typed(ax.A)
        ax.verify(lambda: fn.launch(g, b, a, xs, ys, ax.n), **verify_y)
        return "launch(g, b, a, x, y, n)", {
            "launch": fn.launch,
            "g": g,
            "b": b,
            "a": a,
            "x": xs,
            "y": ys,
            "n": ax.n,
        }

    def bindings():
        drv, fn = _bindings_kernel(ctx, data)
        stream = drv.CUstream(0)
        # cuda-bindings takes no device array: the addresses, read once.
        params = ((ax.A, *addresses, ax.n), (c_float, c_void_p, c_void_p, c_int))
        ax.verify(
            lambda: _check(
                drv.cuLaunchKernel(fn, g, 1, 1, b, 1, 1, 0, stream, params, 0), "cuLaunchKernel"
            ),
            **verify_y,
        )
        stmt = "f(k, g, 1, 1, b, 1, 1, 0, s, p, 0)"
        return stmt, {"f": drv.cuLaunchKernel, "k": fn, "g": g, "b": b, "s": stream, "p": params}

    def cupy():
        cp, kernel = _cupy_kernel(ctx, image)
        if not verify_y:
            raise LookupError("CuPy is not installed")
        args = (cp.float32(ax.A), x, y, cp.int32(ax.n))
        ax.verify(lambda: kernel((g,), (b,), args), **verify_y)
        return "k(g, b, a)", {"k": kernel, "g": (g,), "b": (b,), "a": args}

    def own_arrays():
        """cudart's own arrays over the same memory: what a launch costs where reading
        the interface costs little."""
        from cudart import as_array

        if not verify_y:
            raise LookupError("the row's arrays are cudart's already")
        return cudart(*(as_array(address, ax.n, "float32") for address in addresses))

    def interfaces():
        """What a launch would pay to read the two arrays' __cuda_array_interface__
        (CuPy builds the dict on each read); no launch."""
        if not verify_y:
            raise LookupError("the row's arrays are cudart's")
        return "(x.__cuda_array_interface__, y.__cuda_array_interface__)", {"x": x, "y": y}

    cands["C"] = _candidate(c_loop)
    cands["cudart kernels"] = _candidate(cudart)
    cands["cudart kernels, cudart.arrays over the same memory"] = _candidate(own_arrays)
    cands["cuda-bindings, cuLaunchKernel (the arrays' addresses, values, types)"] = _candidate(
        bindings
    )
    cands["CuPy RawKernel"] = _candidate(cupy)
    cands[READ_INTERFACES] = _candidate(interfaces)
    _time_bursts(ctx, row, cands, scale=1000.0)
    return [row]


ROWS = [row_launch_new_grid, row_launch_device_arrays]
