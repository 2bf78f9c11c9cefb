"""cudart.kernels on a GPU: every image kind, every route the runtime offers."""

from __future__ import annotations

import ctypes
import struct
import threading

import needs
import pytest

from cudart import CudaError, _backend
from cudart.errors import CudartError
from cudart.kernels import ImageError, NameNotFoundError, load_module

from .support import ALL_KERNELS, KERNELS, axpy, check, routes

IMAGES = ("fatbin", "cubin", "ptx", "lz4.fatbin")


def image_path(kind):
    return KERNELS / ("kernels_lz4.fatbin" if kind == "lz4.fatbin" else f"kernels.{kind}")


@pytest.fixture(
    params=[(k, r) for k in IMAGES for r in ("register", "library")], ids=lambda p: f"{p[0]}-{p[1]}"
)
def module(request, rt):
    kind, route = request.param
    if route not in routes(rt):
        pytest.skip(
            f"the {route} route needs cudaLibraryLoadData (CUDA 12.8+); bindings {rt.__name__}"
        )
    with load_module(image_path(kind), route=route) as m:
        yield m


@pytest.fixture(params=["c-launch", "python-launch"])
def launch_path(request, monkeypatch):
    """Function.launch in C (cudart.kernels._fastlaunch, where built) or the Python one: the
    Functions a test gets from then on launch through it."""
    if request.param == "python-launch":
        monkeypatch.setitem(_backend._modules, "cudart.kernels._fastlaunch", None)
    elif _backend.launcher_module() is None:
        pytest.skip("cudart.kernels._fastlaunch is not built (or CUDART_BACKEND=ctypes)")
    return request.param


def run_axpy(rt, dev, fn, a, n, launch):
    x = dev.alloc(4 * n, (ctypes.c_float * n)(*range(n)))
    y = dev.alloc(4 * n, (ctypes.c_float * n)(*[1.0] * n))
    launch(fn, a, x, y, n)
    return dev.read(y, ctypes.c_float, n)


def test_loads_and_lists_kernels(module):
    assert set(module.function_names()) == ALL_KERNELS
    assert module.kind in ("fatbin", "cubin", "ptx")


def test_launch_axpy(rt, dev, module, launch_path):
    fn = axpy(module)
    n = 1000
    got = run_axpy(
        rt, dev, fn, 2.0, n, lambda f, a, x, y, n: f.launch((n + 255) // 256, 256, a, x, y, n)
    )
    assert got == [2.0 * i + 1.0 for i in range(n)]
    # A second launch with other values reuses the slots.
    y = dev.alloc(4 * 4, (ctypes.c_float * 4)(1, 1, 1, 1))
    x = dev.alloc(4 * 4, (ctypes.c_float * 4)(1, 2, 3, 4))
    fn.launch(1, (32,), 0.5, x, y, 3)
    fn.launch((1, 1, 1), 32, 1.0, x, y, 2)
    assert dev.read(y, ctypes.c_float, 4) == [2.5, 4.0, 2.5, 1.0]


def test_param_sizes(module):
    assert module.get_function("axpy").param_sizes == (4, 8, 8, 4)
    assert module.get_function("mixed").param_sizes == (1, 2, 4, 8, 4, 8, 8)
    assert module.get_function("empty").param_sizes == ()


def test_each_parameter_size(rt, dev, module, launch_path):
    np = needs.numpy()
    fn = module.get_function("mixed")
    out = dev.alloc(8 * 6)
    # Typed floats: a cubin says only sizes, and a Python float is refused without types.
    fn.launch(1, 1, -5, -300, 2**31 + 5, -(2**40), np.float32(1.5), np.float64(2.25), out)
    # 2**31 + 5 in an int parameter keeps its bits, as an unsigned value would.
    assert dev.read(out, ctypes.c_double, 6) == [
        -5.0,
        -300.0,
        float(-(2**31) + 5),
        float(-(2**40)),
        1.5,
        2.25,
    ]
    fn.launch(
        1,
        1,
        ctypes.c_char(b"A"),
        ctypes.c_short(7),
        ctypes.c_int(8),
        ctypes.c_longlong(9),
        ctypes.c_float(0.25),
        ctypes.c_double(0.5),
        ctypes.c_void_p(out),
    )
    assert dev.read(out, ctypes.c_double, 6) == [65.0, 7.0, 8.0, 9.0, 0.25, 0.5]


def test_struct_and_numpy_arguments(rt, dev, module):
    class Pair(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double)]

    out = dev.alloc(16)
    module.get_function("take_pair").launch(1, 1, Pair(3, 4.5), out)
    assert dev.read(out, ctypes.c_double, 2) == [3.0, 4.5]
    np = needs.numpy()
    fn = axpy(module)
    got = run_axpy(
        rt,
        dev,
        fn,
        np.float32(3),
        8,
        lambda f, a, x, y, n: f.launch(1, 32, a, np.uint64(x), y, np.int32(n)),
    )
    assert got == [3.0 * i + 1.0 for i in range(8)]


def test_argument_errors(rt, dev, module, launch_path):
    fn = axpy(module)
    x = dev.alloc(16)
    with pytest.raises(TypeError, match="takes 4 arguments"):
        fn.launch(1, 1, 1.0, x, x)
    with pytest.raises(TypeError, match="takes 4 arguments"):
        fn.launch(1, 1, 1.0, x, x, 4, 5)
    with pytest.raises(TypeError, match="argument 1"):
        fn.launch(1, 1, 1.0, ctypes.c_int(2), x, 4)  # 4 bytes where a pointer goes
    with pytest.raises(TypeError, match="argument 0"):
        fn.launch(1, 1, ctypes.c_double(1.0), x, x, 4)  # 8 bytes for a 4-byte float
    with pytest.raises(OverflowError):
        fn.launch(1, 1, 1.0, x, x, 2**32)
    with pytest.raises(TypeError, match="argument 3"):
        fn.launch(1, 1, 1.0, x, x, "4")
    with pytest.raises(ValueError):
        fn.launch((1, 1, 1, 1), 1, 1.0, x, x, 4)
    # After the errors the function still launches correctly.
    y = dev.alloc(8, (ctypes.c_float * 2)(1, 1))
    fn.launch(1, 32, 1.0, y, y, 2)
    assert dev.read(y, ctypes.c_float, 2) == [2.0, 2.0]


def test_launch_error_is_an_exception(rt, module):
    fn = module.get_function("empty")
    with pytest.raises(CudaError) as info:
        fn.launch(1, 4096)  # more threads per block than any device allows
    # 12.x calls it an invalid configuration, 13.0 an invalid value.
    assert info.value.code in (rt.cudaErrorInvalidConfiguration, rt.cudaErrorInvalidValue)
    rt.cudaGetLastError()


def test_raw_layer_takes_the_handle(rt, dev, module, runtime_version):
    fn = axpy(module)
    n = 64
    x = dev.alloc(4 * n, (ctypes.c_float * n)(*range(n)))
    y = dev.alloc(4 * n)
    a, px, py, cn = ctypes.c_float(3.0), ctypes.c_void_p(x), ctypes.c_void_p(y), ctypes.c_int(n)
    argv = (ctypes.c_void_p * 4)(*[ctypes.addressof(v) for v in (a, px, py, cn)])
    check(rt, rt.cudaLaunchKernel(fn, rt.dim3(1, 1, 1), rt.dim3(n, 1, 1), argv, 0, None))
    assert dev.read(y, ctypes.c_float, n) == [3.0 * i for i in range(n)]
    config = rt.cudaLaunchConfig_t()
    config.gridDim, config.blockDim = rt.dim3(1, 1, 1), rt.dim3(n, 1, 1)
    check(rt, rt.cudaLaunchKernelExC(ctypes.byref(config), int(fn), argv))
    assert dev.read(y, ctypes.c_float, n) == [6.0 * i for i in range(n)]

    attrs = rt.cudaFuncAttributes()
    check(rt, rt.cudaFuncGetAttributes(ctypes.byref(attrs), fn))
    assert attrs.numRegs > 0 and attrs.maxThreadsPerBlock > 0
    check(
        rt, rt.cudaFuncSetAttribute(fn, rt.cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024)
    )
    check(rt, rt.cudaFuncGetAttributes(ctypes.byref(attrs), fn))
    assert attrs.maxDynamicSharedSizeBytes == 64 * 1024
    status = rt.cudaFuncSetCacheConfig(fn, rt.cudaFuncCachePreferL1)
    if module.route == "library" and runtime_version < 13000:
        # The 12.8 and 12.9 runtimes take a cudaKernel_t in launches, attribute and
        # occupancy calls, but not in cudaFuncSetCacheConfig (13.0+ does): recorded on
        # an H200 with driver 580, so a change in the runtime shows up here.
        assert status == rt.cudaErrorInvalidDeviceFunction
    else:
        check(rt, status)
    blocks = ctypes.c_int()
    check(rt, rt.cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(blocks), fn, 256, 0))
    assert blocks.value > 0
    check(
        rt,
        rt.cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
            ctypes.byref(blocks), fn, 256, 0, 0
        ),
    )
    assert blocks.value > 0
    smem = ctypes.c_size_t()
    check(rt, rt.cudaOccupancyAvailableDynamicSMemPerBlock(ctypes.byref(smem), fn, 1, 256))
    assert smem.value > 0


def test_cooperative_launch(rt, dev, module, launch_path):
    fn = module.get_function("coop_sum")
    blocks = ctypes.c_int()
    check(rt, rt.cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(blocks), fn, 64, 0))
    assert blocks.value > 0
    grid = 8
    buf = dev.alloc(8)
    p0, p1 = ctypes.c_void_p(buf), ctypes.c_void_p(buf + 4)
    argv = (ctypes.c_void_p * 2)(ctypes.addressof(p0), ctypes.addressof(p1))
    check(
        rt,
        rt.cudaLaunchCooperativeKernel(fn, rt.dim3(grid, 1, 1), rt.dim3(64, 1, 1), argv, 0, None),
    )
    total = grid * (grid + 1) // 2
    assert dev.read(buf, ctypes.c_int, 2) == [total, total]
    check(rt, rt.cudaMemset(buf, 0, 8))
    fn.launch(grid, 64, buf, buf + 4, cooperative=True)
    assert dev.read(buf, ctypes.c_int, 2) == [total, total]


def test_globals(rt, dev, module):
    table = module.get_global("dev_table")
    scale = module.get_global("const_scale")
    counter = module.get_global("dev_counter")
    assert (table.size, scale.size, counter.size) == (64, 16, 4)
    values = (ctypes.c_float * 16)(*range(16))
    factors = (ctypes.c_float * 4)(1, 2, 3, 4)
    if module.route == "register":
        check(rt, rt.cudaMemcpyToSymbol(table.symbol, values, 64, 0, rt.cudaMemcpyHostToDevice))
        check(rt, rt.cudaMemcpyToSymbol(scale.symbol, factors, 16, 0, rt.cudaMemcpyHostToDevice))
        size, address = ctypes.c_size_t(), ctypes.c_void_p()
        check(rt, rt.cudaGetSymbolSize(ctypes.byref(size), table.symbol))
        check(rt, rt.cudaGetSymbolAddress(ctypes.byref(address), table.symbol))
        assert (size.value, address.value) == (64, table.address)
    else:
        with pytest.raises(CudartError, match="library route"):
            _ = table.symbol
        table.write(values)
        scale.write(factors)
    out = dev.alloc(64)
    module.get_function("read_table").launch(1, 16, out)
    assert dev.read(out, ctypes.c_float, 16) == [i * (i % 4 + 1) for i in range(16)]
    counter.write(struct.pack("<i", 10))
    module.get_function("add_counter").launch(4, 32, 2)
    check(rt, rt.cudaDeviceSynchronize())
    if module.route == "register":
        got = ctypes.c_int()
        check(
            rt,
            rt.cudaMemcpyFromSymbol(
                ctypes.byref(got), counter.symbol, 4, 0, rt.cudaMemcpyDeviceToHost
            ),
        )
        assert got.value == 10 + 4 * 32 * 2
    assert struct.unpack("<i", counter.read())[0] == 10 + 4 * 32 * 2
    with pytest.raises(ValueError):
        counter.write(b"12345")


def test_streams(rt, dev, module, launch_path):
    fn = module.get_function("add_counter")
    counter = module.get_global("dev_counter")
    counter.write(bytes(4))
    stream = ctypes.c_void_p()
    check(rt, rt.cudaStreamCreate(ctypes.byref(stream)))
    try:

        class Protocol:
            def __cuda_stream__(self):
                return (0, stream.value)

        class AsInt:
            def __int__(self):
                return stream.value

        for s in (stream, stream.value, Protocol(), AsInt(), None):
            fn.launch(1, 1, 1, stream=s)
        check(rt, rt.cudaStreamSynchronize(stream))
        check(rt, rt.cudaDeviceSynchronize())
        assert struct.unpack("<i", counter.read())[0] == 5
        with pytest.raises(TypeError):
            fn.launch(1, 1, 1, stream="default")
    finally:
        rt.cudaStreamDestroy(stream)


def test_threads_launch_their_own_arguments(rt, dev, module, launch_path):
    fn = axpy(module)
    n = 256
    ys = [dev.alloc(4 * n) for _ in range(4)]
    x = dev.alloc(4 * n, (ctypes.c_float * n)(*[1.0] * n))

    def work(k):
        for _ in range(50):
            fn.launch(1, n, float(k + 1), x, ys[k], n)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        assert dev.read(ys[k], ctypes.c_float, n) == [50.0 * (k + 1)] * n


def test_repeated_launches(rt, dev, module, launch_path):
    # A launch loop: the same grid, block and stream objects, new values each time (C
    # packs them where the Launcher is primed), then a new grid and a type change.
    fn = axpy(module)
    n = 512
    x = dev.alloc(4 * n, (ctypes.c_float * n)(*range(n)))
    y = dev.alloc(4 * n, (ctypes.c_float * n)(*[0.0] * n))
    grid, block = (n + 127) // 128, 128
    for k in range(20):
        fn.launch(grid, block, float(k), x, y, n)
    assert (fn._fast is not None and fn._fast.primed) == (launch_path == "c-launch")
    expected = [190.0 * i for i in range(n)]
    assert dev.read(y, ctypes.c_float, n) == expected
    fn.launch((grid, 1), block, 1.0, x, y, n // 2)  # a new grid object
    fn.launch((grid, 1), block, 1.0, x, y, n // 2)
    for _ in range(2):  # an int for the float: refused, primed or not
        with pytest.raises(TypeError, match="an int given"):
            fn.launch(grid, block, 1, x, y, n)
    got = dev.read(y, ctypes.c_float, n)
    assert got[: n // 2] == [e + 2.0 * i for i, e in enumerate(expected[: n // 2])]
    assert got[n // 2 :] == expected[n // 2 :]
    with pytest.raises(OverflowError):
        fn.launch(grid, block, 1.0, x, y, 2**32)
    fn.launch(grid, block, 0.0, x, y, n)
    fn.launch(grid, block, 0.0, x, y, n)
    assert dev.read(y, ctypes.c_float, n)[: n // 2] == got[: n // 2]


def test_every_launch_in_c(rt, dev, module, launch_path):
    """Issue 23: a new grid and block each launch, a CuPy array and NumPy scalars as
    arguments, streams changing: all packed and configured in C (after the first launch
    of each argument kind), and the kernel sees every value."""
    np = needs.numpy()
    cupy = pytest.importorskip("cupy")
    fn = axpy(module)
    n = 1000
    x = cupy.arange(n, dtype=cupy.float32)
    y = cupy.zeros(n, dtype=cupy.float32)
    stream = cupy.cuda.Stream(non_blocking=False)
    streams = (None, stream.ptr) + ((stream,) if hasattr(stream, "__cuda_stream__") else ())
    total = 0.0
    for k in range(40):
        block = (32, 64, 128, 256)[k % 4]
        grid = ((n + block - 1) // block + k % 3,)  # a new tuple each launch
        # Four phases of ten launches, each with its own argument kinds: the first
        # launch of each takes the Python path (a new Signature), the others C.
        typed = k // 10 % 2 == 0
        a = np.float32(k) if typed else float(k)
        count = np.int32(n) if k < 20 else n
        on = streams[k % len(streams)]
        fn.launch(grid, (block,), a, x, y, count, stream=on)
        stream.synchronize()
        cupy.cuda.runtime.deviceSynchronize()
        total += k
    if launch_path == "c-launch":
        # A fallback primes each new combination of argument kinds (four here) and a
        # stream class; everything else is C's.
        assert fn._fast.launches >= 30, (fn._fast.launches, fn._fast.fallbacks)
    assert cupy.asnumpy(y).tolist() == [total * i for i in range(n)]


# Each pointer argument's value, as the kernel received it.
WHERE = r"""
extern "C" __global__ void where(unsigned long long *out, const float *a, const float *b,
                                 const float *c, const float *d)
{
    out[0] = (unsigned long long)a;
    out[1] = (unsigned long long)b;
    out[2] = (unsigned long long)c;
    out[3] = (unsigned long long)d;
}
"""


def test_cupy_arrays_reach_the_kernel_as_their_interface_says(rt, launch_path):
    """Issue 23: C reads a cupy.ndarray's address from data.ptr and size, not from the
    __cuda_array_interface__ dict CuPy builds per read; the kernel gets what that
    interface says for a whole array, an offset slice, a strided view and an empty one,
    on the first launch (Python primes) and the later ones (C). A subclass of
    cupy.ndarray takes the interface."""
    cupy = pytest.importorskip("cupy")
    import cudart
    from cudart.kernels import _launch

    fn = cudart.compile(WHERE, cache=False).get_function("where")
    base = cupy.arange(64, dtype=cupy.float32)
    arrays = (base, base[5:], base[::3], base[:0])
    expected = [a.__cuda_array_interface__["data"][0] for a in arrays]
    assert expected[1] == expected[0] + 20 and expected[2] == expected[0] and expected[3] == 0
    out = cupy.zeros(4, dtype=cupy.uint64)
    for _ in range(3):
        out.fill(0)
        fn.launch(1, 1, out, *arrays)
        check(rt, rt.cudaDeviceSynchronize())
        assert out.tolist() == expected
    assert _launch._address_route(cupy.ndarray) == _launch._ROUTE_CUPY

    class Sub(cupy.ndarray):
        pass

    assert _launch._address_route(Sub) == _launch._ROUTE_ARRAY
    if launch_path == "c-launch":
        assert fn._fast.launches >= 2, (fn._fast.launches, fn._fast.fallbacks)


def test_extern_c_kernels_see_the_values_given(rt, dev, module, launch_path):
    # Issue 21: 3.0 for an extern "C" kernel's int reached it as 1077936128 (the float's
    # bits), and a float for a pointer as a double. mixed(char, short, int, long long,
    # float, double, double *out): typed by the image's PTX where it has some (the PTX
    # image, fatbins whose PTX entry is readable), untyped in a cubin.
    np = needs.numpy()
    fn = module.get_function("mixed")
    typed = fn.param_types is not None
    assert typed != (module.kind == "cubin")  # (a fatbin's zstd PTX: read with libzstd)
    if typed:
        assert [t.kind for t in fn.param_types][4:] == ["float", "float", "word"]
    out = dev.alloc(8 * 6)
    with pytest.raises(TypeError, match="argument 2" if typed else "signature="):
        fn.launch(1, 1, 1, 2, 3.0, 4, np.float32(5.0), np.float64(6.0), out)
    with pytest.raises(TypeError, match="argument 6"):
        fn.launch(1, 1, 1, 2, 3, 4, np.float32(5.0), np.float64(6.0), 7.0)
    if typed:  # Python floats go as the PTX's .f32 and .f64
        fn.launch(1, 1, 1, 2, 3, 4, 5.0, 6.0, out)
        check(rt, rt.cudaDeviceSynchronize())
        assert dev.read(out, ctypes.c_double, 6) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    else:
        with pytest.raises(TypeError, match=r"numpy\.float32\(3\.0\)"):
            fn.launch(1, 1, 1, 2, 3, 4, 5.0, np.float64(6.0), out)
    fn.launch(1, 1, -1, 2, 3, 4, np.float32(0.5), ctypes.c_double(0.25), out)
    check(rt, rt.cudaDeviceSynchronize())
    assert dev.read(out, ctypes.c_double, 6) == [-1.0, 2.0, 3.0, 4.0, 0.5, 0.25]


def test_unknown_names(module):
    with pytest.raises(NameNotFoundError):
        module.get_function("no_such_kernel")
    with pytest.raises(NameNotFoundError):
        module.get_global("no_such_global")


def test_close(rt, dev):
    for route in routes(rt):
        module = load_module(image_path("cubin"), route=route)
        fn = module.get_function("empty")
        fn.launch(1, 1)
        module.close()
        assert module.closed
        with pytest.raises(ValueError):
            int(fn)
        with pytest.raises(ValueError):
            fn.launch(1, 1)
        with pytest.raises(ValueError):
            module.get_function("empty")
        module.close()  # twice is fine
        rt.cudaGetLastError()
        # The same image loads again after unloading.
        with load_module((KERNELS / "kernels.cubin").read_bytes(), route=route) as again:
            again.get_function("empty").launch(1, 1)
            check(rt, rt.cudaDeviceSynchronize())


def test_bad_images(rt):
    with pytest.raises(ImageError):
        load_module(b"\x00" * 64)
    with pytest.raises(TypeError):
        load_module(12345)


def test_zstd_only_fatbin(rt, tmp_path):
    data = (KERNELS / "kernels_zstd.fatbin").read_bytes()
    with pytest.raises(ImageError, match="zstd"):
        load_module(data, route="register")
    with load_module(data, route="register", functions=["empty"]) as m:
        m.get_function("empty").launch(1, 1)
        check(rt, rt.cudaDeviceSynchronize())
    if "library" in routes(rt):
        with load_module(data, route="library") as m:
            m.get_function("axpy")


def test_auto_route(rt):
    with load_module(image_path("fatbin")) as m:
        assert m.route == routes(rt)[-1]


def test_loading_and_launching_leave_no_last_error(rt, module, dev):
    """Probing parameter counts past the end must not leave cudaErrorInvalidValue behind."""
    check(rt, rt.cudaGetLastError())
    fn = axpy(module)
    assert fn.param_sizes is not None
    n = 64
    x = dev.alloc(4 * n, (ctypes.c_float * n)(*range(n)))
    y = dev.alloc(4 * n)
    fn.launch(1, n, 2.0, x, y, n)
    check(rt, rt.cudaDeviceSynchronize())
    assert rt.cudaGetLastError() == 0


# -- C++ kernels (tests/kernels/cxx_kernels.cu): found by their source name or signature

CXX_KERNELS = {
    "_Z6squarePfi": "square(float*, int)",
    "_Z6squarePdi": "square(double*, int)",
    "_Z5scalePKfPffi": "scale(float const*, float*, float, int)",
    "_ZN3ops5shiftEPii": "ops::shift(int*, int)",
    "_ZN3ops4fillIiEEvPT_S1_i": "void ops::fill<int>(int*, int, int)",
    "_ZN3ops4fillIfEEvPT_S1_i": "void ops::fill<float>(float*, float, int)",
    "_Z5timesILi2EEvPi": "void times<2>(int*)",
    "_Z5timesILi3EEvPi": "void times<3>(int*)",
    "plain": None,
}


@pytest.fixture(
    params=[(k, r) for k in ("fatbin", "cubin", "ptx") for r in ("register", "library")],
    ids=lambda p: f"{p[0]}-{p[1]}",
)
def cxx_module(request, rt):
    kind, route = request.param
    if route not in routes(rt):
        pytest.skip(
            f"the {route} route needs cudaLibraryLoadData (CUDA 12.8+); bindings {rt.__name__}"
        )
    with load_module(KERNELS / f"cxx_kernels.{kind}", route=route) as m:
        yield m


def test_cxx_names_are_mangled_and_paired(cxx_module):
    assert set(cxx_module.function_names()) == set(CXX_KERNELS)
    assert dict(cxx_module.functions()) == CXX_KERNELS


def test_cxx_overloads_by_signature(rt, dev, cxx_module):
    f32 = cxx_module.get_function("square(float*, int)")
    f64 = cxx_module.get_function("square(double *, int)")
    assert (f32.name, f64.name) == ("_Z6squarePfi", "_Z6squarePdi")
    assert f32.demangled == "square(float*, int)"
    assert cxx_module.get_function("_Z6squarePfi") is f32
    xs = dev.alloc(4 * 4, (ctypes.c_float * 4)(1, 2, 3, 4))
    ds = dev.alloc(8 * 4, (ctypes.c_double * 4)(1, 2, 3, 4))
    f32.launch(1, 32, xs, 4)
    f64.launch(1, 32, ds, 4)
    assert dev.read(xs, ctypes.c_float, 4) == [1.0, 4.0, 9.0, 16.0]
    assert dev.read(ds, ctypes.c_double, 4) == [1.5, 4.5, 9.5, 16.5]


def test_cxx_unique_source_names(rt, dev, cxx_module):
    n = 8
    src = dev.alloc(4 * n, (ctypes.c_float * n)(*range(n)))
    out = dev.alloc(4 * n)
    cxx_module.get_function("scale").launch(1, 32, src, out, 3.0, n)
    assert dev.read(out, ctypes.c_float, n) == [3.0 * i for i in range(n)]
    ints = dev.alloc(4 * 4, (ctypes.c_int * 4)(1, 2, 3, 4))
    cxx_module.get_function("ops::shift").launch(1, 4, ints, 10)
    cxx_module.get_function("shift(int*, int)").launch(1, 4, ints, 1)
    cxx_module.get_function("times<3>").launch(1, 4, ints)
    assert dev.read(ints, ctypes.c_int, 4) == [36, 39, 42, 45]
    cxx_module.get_function("ops::fill<int>").launch(1, 4, ints, 5, 4)
    assert dev.read(ints, ctypes.c_int, 4) == [5, 5, 5, 5]
    floats = dev.alloc(4 * 4)
    cxx_module.get_function("void ops::fill<float>(float*, float, int)").launch(
        1, 4, floats, 2.5, 4
    )
    assert dev.read(floats, ctypes.c_float, 4) == [2.5] * 4
    cxx_module.get_function("plain").launch(1, 1, ints)
    assert dev.read(ints, ctypes.c_int, 1) == [7]


def test_cxx_ambiguous_and_unknown_names(cxx_module):
    from cudart.kernels import AmbiguousKernelNameError

    with pytest.raises(AmbiguousKernelNameError, match=r"square\(double\*, int\)") as err:
        cxx_module.get_function("square")
    assert "_Z6squarePfi" in str(err.value) and "_Z6squarePdi" in str(err.value)
    with pytest.raises(AmbiguousKernelNameError, match="times<2>"):
        cxx_module.get_function("times")
    with pytest.raises(NameNotFoundError) as err:
        cxx_module.get_function("no_such_kernel")
    # The same listing on both routes.
    assert str(err.value).startswith("no kernel 'no_such_kernel' in the image; it has: ")
    assert "'square(float*, int)' (_Z6squarePfi)" in str(err.value)
    assert "'plain'" in str(err.value)
