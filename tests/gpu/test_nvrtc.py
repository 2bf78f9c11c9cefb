"""cudart.compile on a GPU: compile with NVRTC, load, launch, check the results.

The NVRTC is whichever cudart finds ($CUDART_NVRTC_LIBRARY: run_on_device.sh points
the 12.x runtimes at the pinned 12.5 NVRTC and leaves the 13.x ones the machine's);
the architecture is the current device's (compile's default). Each test compiles
with the cache off, except the one about the cache.
"""

from __future__ import annotations

import ctypes

import pytest

import cudart

from .support import check

AXPY = r"""
template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}
"""

CONSTANT = r"""
__constant__ float coeffs[4];
extern "C" __global__ void apply(float* out)
{
    out[threadIdx.x] = coeffs[threadIdx.x % 4] * threadIdx.x;
}
"""

# A grid-wide barrier of its own (atomics): correct only when every block is resident at
# once, which is what a cooperative launch guarantees (cooperative_groups' grid.sync()
# needs headers NVRTC does not bundle).
COOPERATIVE = r"""
extern "C" __global__ void coop_sum(int* partial, int* total, unsigned int* arrived)
{
    if (threadIdx.x == 0) {
        atomicAdd(partial, (int)blockIdx.x + 1);
        __threadfence();
        atomicAdd(arrived, 1u);
        while (atomicAdd(arrived, 0u) < gridDim.x) {
        }
    }
    __syncthreads();
    if (blockIdx.x == 0 && threadIdx.x == 0) *total = atomicAdd(partial, 0);
}
"""


@pytest.fixture(scope="module")
def nvrtc_found():
    try:
        library = cudart._loader.load_nvrtc()
    except cudart.NvrtcNotFoundError as exc:
        pytest.fail(f"the GPU run must carry an NVRTC for every runtime: {exc}")
    return library


def _axpy_check(dev, fn, ctype, n=1000, a=2.0):
    x = dev.alloc(ctypes.sizeof(ctype) * n, (ctype * n)(*range(n)))
    y = dev.alloc(ctypes.sizeof(ctype) * n, (ctype * n)(*([1] * n)))
    fn.launch((n + 127) // 128, 128, a, x, y, n)
    assert dev.read(y, ctype, n) == [1 + a * i for i in range(n)]


@pytest.mark.parametrize("output", ["cubin", "ptx"])
def test_templated_kernel(rt, dev, nvrtc_found, output):
    """Two instantiations by name expression, each found by it and launched."""
    module = cudart.compile(
        AXPY,
        name_expressions=["axpy<float>", "axpy<double>"],
        options=["-std=c++17"],
        output=output,
        cache=False,
    )
    with module:
        _axpy_check(dev, module.get_function("axpy<float>"), ctypes.c_float)
        _axpy_check(dev, module.get_function("axpy<double>"), ctypes.c_double, a=0.5)
        # The lowered (mangled) name finds the same kernel.
        lowered = module.lowered_names["axpy<float>"]
        assert lowered == "_Z4axpyIfEvT_PKS0_PS0_i"
        assert module.get_function(lowered).handle == module.get_function("axpy<float>").handle


def test_constant_data_through_memcpy_to_symbol(rt, dev, nvrtc_found):
    module = cudart.compile(CONSTANT, route="register", cache=False)
    with module:
        coeffs = module.get_global("coeffs")
        assert coeffs.size == 16
        values = (ctypes.c_float * 4)(1.5, -2.0, 3.0, 0.25)
        check(rt, rt.cudaMemcpyToSymbol(coeffs.symbol, values, 16, 0, rt.cudaMemcpyHostToDevice))
        out = dev.alloc(4 * 32)
        module.get_function("apply").launch(1, 32, out)
        assert dev.read(out, ctypes.c_float, 32) == [values[i % 4] * i for i in range(32)]


def test_cooperative_kernel(rt, dev, nvrtc_found):
    module = cudart.compile(COOPERATIVE, cache=False)
    with module:
        fn = module.get_function("coop_sum")
        blocks = ctypes.c_int()
        check(rt, rt.cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(blocks), fn, 64, 0))
        assert blocks.value > 0
        grid = 8
        buf = dev.alloc(12)
        fn.launch(grid, 64, buf, buf + 4, buf + 8, cooperative=True)
        total = grid * (grid + 1) // 2
        assert dev.read(buf, ctypes.c_int, 3) == [total, total, grid]


def test_cached_image_loads_and_runs(rt, dev, nvrtc_found, tmp_path, monkeypatch):
    monkeypatch.setenv(cudart.nvrtc.CACHE_ENV, str(tmp_path))
    first = cudart.compile(AXPY, name_expressions=["axpy<float>"])
    first.close()
    assert len(list(tmp_path.rglob("*.bin"))) == 1
    again = cudart.compile(AXPY, name_expressions=["axpy<float>"])  # from the cache
    with again:
        _axpy_check(dev, again.get_function("axpy<float>"), ctypes.c_float)


def test_default_arch_is_the_device(rt, nvrtc_found):
    device = cudart.cudaGetDevice()
    major = cudart.cudaDeviceGetAttribute(cudart.cudaDevAttrComputeCapabilityMajor, device)
    minor = cudart.cudaDeviceGetAttribute(cudart.cudaDevAttrComputeCapabilityMinor, device)
    ptx = cudart.compile(
        AXPY, name_expressions=["axpy<int>"], output="ptx", load=False, cache=False
    )
    assert f".target sm_{major}{minor}".encode() in ptx


NAMESPACED = r"""
namespace ns { __device__ int table[4]; }
extern "C" __global__ void sum_table(int* out)
{
    *out = ns::table[0] + ns::table[1] + ns::table[2] + ns::table[3];
}
"""


def test_get_global_by_name_expression(rt, dev, nvrtc_found):
    """A namespaced global by its name expression (`&ns::table`) and without the &."""
    module = cudart.compile(NAMESPACED, name_expressions=["&ns::table"], cache=False)
    with module:
        table = module.get_global("&ns::table")
        assert table.size == 16
        table.write((ctypes.c_int * 4)(1, 2, 3, 4))
        assert module.get_global("ns::table").read() == bytes(table.read())
        out = dev.alloc(4)
        module.get_function("sum_table").launch(1, 1, out)
        assert dev.read(out, ctypes.c_int, 1) == [10]


def test_a_repeated_compile_returns_the_loaded_module(rt, dev, nvrtc_found, tmp_path, monkeypatch):
    """The in-memory layer: the same open module for the same inputs on the same device;
    a closed one is loaded again, and works."""
    monkeypatch.setenv(cudart.nvrtc.CACHE_ENV, str(tmp_path))
    cudart.nvrtc.clear_cache()
    first = cudart.compile(AXPY, name_expressions=["axpy<float>"])
    assert cudart.compile(AXPY, name_expressions=["axpy<float>"]) is first
    _axpy_check(dev, first.get_function("axpy<float>"), ctypes.c_float)
    other_route = cudart.compile(AXPY, name_expressions=["axpy<float>"], route="register")
    assert other_route is not first and other_route.route == "register"
    first.close()
    again = cudart.compile(AXPY, name_expressions=["axpy<float>"])
    assert again is not first and not again.closed
    _axpy_check(dev, again.get_function("axpy<float>"), ctypes.c_float)
    again.close()
    other_route.close()
