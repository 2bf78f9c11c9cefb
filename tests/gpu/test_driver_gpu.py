"""The driver API (cudart.driver) on a GPU: tensor maps (TMA) passed by value to a
kernel, virtual memory management, thread block clusters, contexts, pointer attributes,
cuGetProcAddress, JIT options and green contexts.

Written against cuda.h as each version declares it, through the checked layer
(`driver.cuX(...)` returns C's outputs and raises cudart.CudaDriverError subclasses).
Where the checked shape of a call is the subject of review (cuLaunchKernel's
kernelParams/extra, cuDevSmResourceSplitByCount's
counted outputs, cuDevResourceGenerateDesc's input array), the test calls it in the
shape the header implies and says so: one place to adjust.

Kernels are compiled with NVRTC (cudart.compile(load=False): the image only) and loaded
with cuModuleLoadData, so nothing but the driver API touches them. They run in the
primary context, made current by a runtime call, as an application mixing the two APIs
does; test_context_create_destroy makes a context of its own.
"""

from __future__ import annotations

import ctypes
import os
import uuid
from ctypes import addressof, c_float, c_int, c_uint, c_void_p, sizeof
from pathlib import Path

import pytest

import cudart
from cudart import driver

DEVICE = 0


# ---------------------------------------------------------------------- helpers


@pytest.fixture(scope="module", autouse=True)
def primary_context():
    """cuInit, and the primary context current on this thread through the runtime."""
    driver.cuInit(0)
    cudart.cudaSetDevice(DEVICE)
    cudart.cudaFree(0)
    return driver.cuCtxGetCurrent()


def declares(name: str) -> bool:
    """Whether the served cuda.h declares `name` (the bindings' version, not the driver's)."""
    return hasattr(driver, name)


def require(name: str) -> None:
    if not declares(name):
        pytest.skip(f"{name} is not in CUDA {driver.bindings_version}'s cuda.h")


def attribute(name: str) -> int:
    return int(driver.cuDeviceGetAttribute(getattr(driver, name), DEVICE))


def compute_capability() -> tuple[int, int]:
    return (
        attribute("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR"),
        attribute("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR"),
    )


def require_sm90(what: str) -> None:
    cc = compute_capability()
    if cc < (9, 0):
        pytest.skip(f"{what} needs compute capability 9.0+; device {DEVICE} is {cc[0]}.{cc[1]}")


class Module:
    """A cubin NVRTC compiled for the device, loaded with cuModuleLoadData; unloaded at
    the end of the test."""

    def __init__(self, source: str, output: str = "cubin"):
        self.image = cudart.compile(source, load=False, output=output, cache=False)
        self.handle = driver.cuModuleLoadData(self.image)

    def function(self, name: str):
        return driver.cuModuleGetFunction(self.handle, name)

    def close(self) -> None:
        driver.cuModuleUnload(self.handle)


@pytest.fixture
def modules():
    opened: list[Module] = []

    def load(source: str, output: str = "cubin") -> Module:
        m = Module(source, output)
        opened.append(m)
        return m

    yield load
    for m in opened:
        m.close()


@pytest.fixture
def device_memory():
    """cuMemAlloc'd buffers, freed at the end of the test."""
    pointers: list[int] = []

    def alloc(nbytes: int, data: bytes | None = None) -> int:
        p = driver.cuMemAlloc(nbytes)
        pointers.append(p)
        if data is not None:
            driver.cuMemcpyHtoD(p, data, len(data))
        else:
            driver.cuMemsetD8(p, 0, nbytes)
        # Both may still run on the legacy stream when they return (device memory), and a
        # non-blocking stream (a green context's) is not ordered after that stream: a
        # test's first write there could land before this one.
        driver.cuCtxSynchronize()
        return p

    yield alloc
    driver.cuCtxSynchronize()
    for p in pointers:
        driver.cuMemFree(p)


def read(ptr: int, ctype, n: int) -> list:
    out = (ctype * n)()
    driver.cuCtxSynchronize()
    driver.cuMemcpyDtoH(out, ptr, sizeof(out))
    return list(out)


def kernel_params(*values) -> ctypes.Array:
    """`void **kernelParams`: one pointer per parameter, to a host copy of its value
    (ctypes objects, kept alive by the array's _objects)."""
    slots = (c_void_p * len(values))(*(addressof(v) for v in values))
    slots._keep = values  # type: ignore[attr-defined]
    return slots


def launch_config(grid: int, block: int, attrs=None):
    config = driver.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = grid, 1, 1
    config.blockDimX, config.blockDimY, config.blockDimZ = block, 1, 1
    config.sharedMemBytes = 0
    if attrs is not None:
        config.attrs = attrs
        config.numAttrs = len(attrs)
    return config


def launch_ex(function, grid: int, block: int, *values, attrs=None) -> None:
    driver.cuLaunchKernelEx(
        launch_config(grid, block, attrs), function, kernel_params(*values), None
    )


# ------------------------------------------------------------------- TMA (sm_90)

TILE = 16
WIDTH = HEIGHT = 64

# One tile through a tensor map into shared memory (cp.async.bulk.tensor with an
# mbarrier counting the bytes), then out to global memory. The struct is CUtensorMap as
# cuda.h declares it, so no include path is needed.
TMA_SOURCE = r"""
struct alignas(64) TensorMap { unsigned long long opaque[16]; };

extern "C" __global__ void tma_tile(const __grid_constant__ TensorMap tmap, float *out,
                                    int x, int y)
{
    __shared__ alignas(128) float tile[TILE * TILE];
    __shared__ alignas(8) unsigned long long bar;
    unsigned int bar_addr = static_cast<unsigned int>(__cvta_generic_to_shared(&bar));
    unsigned int tile_addr = static_cast<unsigned int>(__cvta_generic_to_shared(tile));
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(bar_addr) : "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     :: "r"(bar_addr), "r"((unsigned int)sizeof(tile)) : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3}], [%4];"
            :: "r"(tile_addr), "l"(reinterpret_cast<unsigned long long>(&tmap)),
               "r"(x), "r"(y), "r"(bar_addr)
            : "memory");
    }
    unsigned int done = 0;
    while (!done) {
        asm volatile(
            "{\n .reg .pred p;\n"
            " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
            " selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done) : "r"(bar_addr) : "memory");
    }
    for (int i = threadIdx.x; i < TILE * TILE; i += blockDim.x)
        out[i] = tile[i];
}
""".replace("TILE", str(TILE))


def encode_checked(address: int):
    """cuTensorMapEncodeTiled through the checked layer: the map comes back."""
    return driver.cuTensorMapEncodeTiled(
        driver.CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        2,
        address,
        [WIDTH, HEIGHT],  # innermost dimension first
        [WIDTH * sizeof(c_float)],  # bytes between rows: rank - 1 strides
        [TILE, TILE],
        [1, 1],
        driver.CU_TENSOR_MAP_INTERLEAVE_NONE,
        driver.CU_TENSOR_MAP_SWIZZLE_NONE,
        driver.CU_TENSOR_MAP_L2_PROMOTION_NONE,
        driver.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    )


def tensor_map_alignment() -> int:
    """cuda.h's alignas for CUtensorMap: 64 in 12.x, 128 from 13.0."""
    return 128 if driver.bindings_version >= 13000 else 64


def encode_raw(address: int):
    """The raw layer's call into a map at an address aligned as cuda.h aligns the record
    (its docs ask 64 bytes of `tensorMap`; ctypes aligns an instance to at most 16)."""
    raw = driver.sys
    align = tensor_map_alignment()
    space = (ctypes.c_ubyte * (sizeof(raw.CUtensorMap) + align))()
    aligned = (addressof(space) + align - 1) & ~(align - 1)
    tmap = raw.CUtensorMap.from_address(aligned)
    tmap._space = space  # type: ignore[attr-defined]
    u64, u32 = raw.cuuint64_t, raw.cuuint32_t
    status = raw.cuTensorMapEncodeTiled(
        ctypes.byref(tmap),
        raw.CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        2,
        c_void_p(address),
        (u64 * 2)(WIDTH, HEIGHT),
        (u64 * 1)(WIDTH * sizeof(c_float)),
        (u32 * 2)(TILE, TILE),
        (u32 * 2)(1, 1),
        raw.CU_TENSOR_MAP_INTERLEAVE_NONE,
        raw.CU_TENSOR_MAP_SWIZZLE_NONE,
        raw.CU_TENSOR_MAP_L2_PROMOTION_NONE,
        raw.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    )
    assert status == 0, driver.cuGetErrorName(status)
    return tmap


@pytest.mark.parametrize("encode", [encode_checked, encode_raw], ids=["checked", "raw-aligned"])
def test_tma_tile_through_tensor_map_by_value(modules, device_memory, encode):
    require_sm90("cp.async.bulk.tensor (TMA)")
    require("cuTensorMapEncodeTiled")
    assert sizeof(driver.CUtensorMap) == 128
    assert ctypes.alignment(driver.CUtensorMap) == tensor_map_alignment()
    source = [float(i) for i in range(WIDTH * HEIGHT)]
    src = device_memory(WIDTH * HEIGHT * 4, bytes((c_float * len(source))(*source)))
    out = device_memory(TILE * TILE * 4)
    tmap = encode(src)
    assert isinstance(tmap, driver.CUtensorMap)
    assert any(tmap.opaque), "the driver wrote nothing into the map"
    fn = modules(TMA_SOURCE).function("tma_tile")
    x, y = 16, 32  # the tile's corner: column, row
    launch_ex(fn, 1, 128, tmap, c_void_p(out), c_int(x), c_int(y))
    got = read(out, c_float, TILE * TILE)
    want = [source[(y + r) * WIDTH + x + c] for r in range(TILE) for c in range(TILE)]
    assert got == want


def test_tensor_map_refuses_misaligned_global_address(device_memory):
    """cuda.h: globalAddress must be 16-byte aligned; the driver's refusal arrives as
    its CudaDriverError (the same call on the aligned address succeeds, so it is the
    address that is refused)."""
    require("cuTensorMapEncodeTiled")
    require_sm90("tensor maps")
    src = device_memory(WIDTH * HEIGHT * 4)
    encode_checked(src)
    with pytest.raises(driver.CudaDriverErrorInvalidValue):
        encode_checked(src + 4)


# ------------------------------------------------------------ virtual memory


def allocation_prop():
    prop = driver.CUmemAllocationProp()
    prop.type = driver.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = driver.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = DEVICE
    return prop


def read_write_access():
    desc = driver.CUmemAccessDesc()
    desc.location.type = driver.CU_MEM_LOCATION_TYPE_DEVICE
    desc.location.id = DEVICE
    desc.flags = driver.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
    return desc


def pattern(n: int, seed: int) -> bytes:
    return bytes((i * 7 + seed) & 0xFF for i in range(n))


def test_virtual_memory_reserve_map_grow(device_memory):
    if not attribute("CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED"):
        pytest.skip("the device does not support virtual memory management")
    prop = allocation_prop()
    gran = driver.cuMemGetAllocationGranularity(prop, driver.CU_MEM_ALLOC_GRANULARITY_MINIMUM)
    assert gran > 0 and gran & (gran - 1) == 0
    # Room for two chunks, reserved up front; the second is mapped later (the growth).
    ptr = driver.cuMemAddressReserve(2 * gran, 0, 0, 0)
    assert ptr and ptr % gran == 0
    handles: list[int] = []
    mapped: list[int] = []
    try:
        first = driver.cuMemCreate(gran, prop, 0)
        handles.append(first)
        driver.cuMemMap(ptr, gran, 0, first, 0)
        mapped.append(ptr)
        driver.cuMemSetAccess(ptr, gran, read_write_access(), 1)
        data = pattern(gran, 1)
        driver.cuMemcpyHtoD(ptr, data, gran)
        back = bytearray(gran)
        driver.cuMemcpyDtoH(back, ptr, gran)
        assert bytes(back) == data

        second = driver.cuMemCreate(gran, prop, 0)
        handles.append(second)
        driver.cuMemMap(ptr + gran, gran, 0, second, 0)
        mapped.append(ptr + gran)
        driver.cuMemSetAccess(ptr, 2 * gran, [read_write_access()], 1)
        # A copy across the boundary of the two physical chunks, as one range.
        span, at = 8192, gran - 4096
        across = pattern(span, 2)
        driver.cuMemcpyHtoD(ptr + at, across, span)
        whole = bytearray(2 * gran)
        driver.cuMemcpyDtoH(whole, ptr, 2 * gran)
        assert bytes(whole[:at]) == data[:at]  # the first chunk's data kept
        assert bytes(whole[at : at + span]) == across
        # Device to device across it too (cuMemcpyDtoD sees one range).
        other = device_memory(span)
        driver.cuMemcpyDtoD(other, ptr + at, span)
        assert bytes(read(other, ctypes.c_ubyte, span)) == across
        driver.cuMemUnmap(ptr, 2 * gran)
        mapped.clear()
    finally:
        driver.cuCtxSynchronize()
        for at in mapped:  # only after a failure: leave the range as it was
            driver.cuMemUnmap(at, gran)
        for h in handles:
            driver.cuMemRelease(h)
        driver.cuMemAddressFree(ptr, 2 * gran)


# ------------------------------------------------------------- clusters (sm_90)

CLUSTER_SOURCE = r"""
extern "C" __global__ void cluster_ranks(unsigned int *out)
{
    unsigned int rank, size;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
    if (threadIdx.x == 0) {
        out[2 * blockIdx.x] = rank;
        out[2 * blockIdx.x + 1] = size;
    }
}
"""


def cluster_attribute(x: int):
    attrs = (driver.CUlaunchAttribute * 1)()
    attrs[0].id = driver.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    attrs[0].value.clusterDim.x = x
    attrs[0].value.clusterDim.y = 1
    attrs[0].value.clusterDim.z = 1
    return attrs


def test_cluster_launch_ranks(modules, device_memory):
    require_sm90("thread block clusters")
    blocks = 8
    fn = modules(CLUSTER_SOURCE).function("cluster_ranks")
    out = device_memory(2 * blocks * 4)
    launch_ex(fn, blocks, 32, c_void_p(out), attrs=cluster_attribute(2))
    got = read(out, c_uint, 2 * blocks)
    assert got[0::2] == [b % 2 for b in range(blocks)]
    assert got[1::2] == [2] * blocks
    # Without the attribute each block is a cluster of its own: the attribute did it.
    launch_ex(fn, blocks, 32, c_void_p(out))
    got = read(out, c_uint, 2 * blocks)
    assert got == [0, 1] * blocks


def test_cluster_dimension_must_divide_grid(modules, device_memory):
    require_sm90("thread block clusters")
    fn = modules(CLUSTER_SOURCE).function("cluster_ranks")
    out = device_memory(2 * 3 * 4)
    with pytest.raises(cudart.CudaDriverError):
        launch_ex(fn, 3, 32, c_void_p(out), attrs=cluster_attribute(2))


# ------------------------------------------------------------------- launches

AXPY_SOURCE = r"""
extern "C" __global__ void axpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
"""


def test_launch_kernel_four_arguments(modules, device_memory):
    """cuLaunchKernel as cuda.h declares it: kernelParams and extra are inputs (void **,
    the caller's slots; extra NULL)."""
    n = 1000
    fn = modules(AXPY_SOURCE).function("axpy")
    x = device_memory(4 * n, bytes((c_float * n)(*range(n))))
    y = device_memory(4 * n, bytes((c_float * n)(*([1.0] * n))))
    params = kernel_params(c_float(2.0), c_void_p(x), c_void_p(y), c_int(n))
    driver.cuLaunchKernel(fn, (n + 255) // 256, 1, 1, 256, 1, 1, 0, None, params, None)
    assert read(y, c_float, n) == [2.0 * i + 1.0 for i in range(n)]


def test_a_bare_cufunction_takes_ctypes_values_or_a_signature(modules, device_memory):
    """A CUfunction of cuModuleGetFunction says nothing of its parameters (issue 33 item
    14): cuLaunchKernel takes its arguments as a tuple of ctypes values, each its own C
    type, or as Python values once cudart.kernels.typed gives the handle a signature.
    The driver tells the count and sizes (cuFuncGetParamInfo, driver 12.4+), so a tuple
    the kernel cannot read is refused before the launch."""
    from cudart.kernels import typed

    n = 1000
    fn = modules(AXPY_SOURCE).function("axpy")
    assert type(fn).__name__ == "CUfunction"
    x = device_memory(4 * n, bytes((c_float * n)(*range(n))))
    grid = (n + 255) // 256
    k = typed(fn, "float a, const float *x, float *y, int n")
    for make in (
        lambda y: (c_float(2.0), c_void_p(x), c_void_p(y), c_int(n)),
        lambda y: [c_float(2.0), c_void_p(x), c_void_p(y), c_int(n)],
    ):
        y = device_memory(4 * n, bytes((c_float * n)(*([1.0] * n))))
        driver.cuLaunchKernel(fn, grid, 1, 1, 256, 1, 1, 0, None, make(y), None)
        assert read(y, c_float, n) == [2.0 * i + 1.0 for i in range(n)]
    for launch in (
        lambda y: driver.cuLaunchKernel(k, grid, 1, 1, 256, 1, 1, 0, None, (2.0, x, y, n), None),
        lambda y: driver.cuLaunchKernel(
            fn, grid, 1, 1, 256, 1, 1, 0, None, k.pack(2.0, x, y, n), None
        ),
        lambda y: driver.cuLaunchKernelEx(launch_config(grid, 256), k, (2.0, x, y, n), None),
    ):
        y = device_memory(4 * n, bytes((c_float * n)(*([1.0] * n))))
        launch(y)
        assert read(y, c_float, n) == [2.0 * i + 1.0 for i in range(n)]
    y = device_memory(4 * n, bytes((c_float * n)(*([1.0] * n))))
    for bad, error, match in (
        ((c_float(2.0), c_void_p(x), c_void_p(y)), TypeError, "takes 4 arguments"),
        ((ctypes.c_double(2.0), c_void_p(x), c_void_p(y), c_int(n)), TypeError, "is 4 bytes"),
        ((2.0, x, y, n), TypeError, "give ctypes values"),
    ):
        with pytest.raises(error, match=match):
            driver.cuLaunchKernel(fn, grid, 1, 1, 256, 1, 1, 0, None, bad, None)
    with pytest.raises(OverflowError):
        driver.cuLaunchKernel(k, grid, 1, 1, 256, 1, 1, 0, None, (2.0, x, y, 2**31), None)
    with pytest.raises(TypeError, match="parameter 0 is 4 bytes; its signature declares double"):
        typed(fn, "double, float*, float*, int").pack(2.0, x, y, n)
    assert read(y, c_float, n) == [1.0] * n  # nothing refused reached the kernel


class AxpyArguments(ctypes.Structure):
    """axpy's parameters as C lays them out: a at 0, x at 8 (4 bytes of padding), y at
    16, n at 24; 28 bytes the kernel reads, 32 with the record's tail padding."""

    _fields_ = [("a", c_float), ("x", c_void_p), ("y", c_void_p), ("n", c_int)]


def test_launch_kernel_extra_argument_buffer(modules, device_memory):
    """cuLaunchKernel and cuLaunchKernelEx with `extra` the packed argument buffer
    (cuda.h's CU_LAUNCH_PARAM_BUFFER_POINTER form, which the checked layer builds): the
    same result as kernelParams. The buffers: 28 bytes packed with struct at the
    parameters' offsets and alignments (exactly what the kernel reads), and a ctypes
    Structure of them, 32 bytes with tail padding. C is told the 28 bytes the kernel's
    parameters span (cuFuncGetParamInfo): driver 580 refuses a larger size with
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (the GPU run at 3732ff4) and takes a smaller one,
    reading past the buffer, which the checked layer refuses."""
    import struct

    n = 1000
    fn = modules(AXPY_SOURCE).function("axpy")
    x = device_memory(4 * n, bytes((c_float * n)(*range(n))))
    grid = (n + 255) // 256
    results = []
    y = device_memory(4 * n, bytes((c_float * n)(*([1.0] * n))))
    params = kernel_params(c_float(2.0), c_void_p(x), c_void_p(y), c_int(n))
    driver.cuLaunchKernel(fn, grid, 1, 1, 256, 1, 1, 0, None, params, None)
    results.append(read(y, c_float, n))
    for make in (
        lambda y: struct.pack("=f4xQQi", 2.0, x, y, n),
        lambda y: AxpyArguments(2.0, x, y, n),
    ):
        buffer = make(y := device_memory(4 * n, bytes((c_float * n)(*([1.0] * n)))))
        assert len(bytes(buffer)) in (28, 32)
        driver.cuLaunchKernel(fn, grid, 1, 1, 256, 1, 1, 0, None, None, buffer)
        results.append(read(y, c_float, n))
        y = device_memory(4 * n, bytes((c_float * n)(*([1.0] * n))))
        driver.cuLaunchKernelEx(launch_config(grid, 256), fn, None, make(y))
        results.append(read(y, c_float, n))
    assert results[0] == [2.0 * i + 1.0 for i in range(n)]
    assert all(r == results[0] for r in results), [r[:4] for r in results]
    with pytest.raises(ValueError, match="mutually exclusive"):
        driver.cuLaunchKernel(fn, grid, 1, 1, 256, 1, 1, 0, None, params, bytes(32))
    with pytest.raises(ValueError, match="holds 24 bytes, but the kernel's parameters span 28"):
        driver.cuLaunchKernel(fn, grid, 1, 1, 256, 1, 1, 0, None, None, bytes(24))


def test_launch_kernel_error_is_driver_error(modules, device_memory):
    fn = modules(AXPY_SOURCE).function("axpy")
    y = device_memory(16)
    params = kernel_params(c_float(1.0), c_void_p(y), c_void_p(y), c_int(4))
    with pytest.raises(driver.CudaDriverErrorInvalidValue):
        driver.cuLaunchKernel(fn, 1, 1, 1, 4096, 1, 1, 0, None, params, None)  # block too big


# ------------------------------------------------------- contexts and misc


def test_device_get_and_count():
    count = driver.cuDeviceGetCount()
    assert count >= 1
    assert int(driver.cuDeviceGet(DEVICE)) == DEVICE
    with pytest.raises(driver.CudaDriverErrorInvalidDevice):
        driver.cuDeviceGet(count)
    name = driver.cuDeviceGetName(256, DEVICE)
    assert name and "\0" not in name


def test_primary_context_is_current_after_runtime_call(primary_context):
    cudart.cudaFree(0)
    current = driver.cuCtxGetCurrent()
    assert int(current) != 0
    assert current == primary_context
    retained = driver.cuDevicePrimaryCtxRetain(DEVICE)
    try:
        assert int(retained) == int(current)
        flags, active = driver.cuDevicePrimaryCtxGetState(DEVICE)
        assert active == 1
    finally:
        driver.cuDevicePrimaryCtxRelease(DEVICE)
    assert driver.cuCtxGetDevice() == DEVICE


def create_context(flags: int = 0):
    """cuCtxCreate in the version's shape: cuda.h 13.x maps it to cuCtxCreate_v4
    (CUctxCreateParams *, NULL allowed), 12.x to cuCtxCreate_v2 (flags, dev)."""
    if driver.bindings_version >= 13000:
        return driver.cuCtxCreate(None, flags, DEVICE)
    return driver.cuCtxCreate(flags, DEVICE)


def test_context_create_destroy(primary_context):
    ctx = create_context()
    try:
        assert int(ctx) != 0 and ctx != primary_context
        assert driver.cuCtxGetCurrent() == ctx  # cuCtxCreate pushes it
        assert driver.cuCtxGetDevice() == DEVICE
        # Memory of the new context works in it.
        p = driver.cuMemAlloc(64)
        driver.cuMemcpyHtoD(p, pattern(64, 3), 64)
        back = bytearray(64)
        driver.cuMemcpyDtoH(back, p, 64)
        assert bytes(back) == pattern(64, 3)
        driver.cuMemFree(p)
        assert driver.cuCtxPopCurrent() == ctx
        assert driver.cuCtxGetCurrent() == primary_context
        driver.cuCtxPushCurrent(ctx)
    finally:
        driver.cuCtxDestroy(ctx)  # pops it too
    assert driver.cuCtxGetCurrent() == primary_context


def test_pointer_attribute_of_runtime_allocation():
    """cuPointerGetAttribute returns each attribute's value in its documented type."""
    p = cudart.cudaMalloc(256)
    try:
        memory_type = driver.cuPointerGetAttribute(driver.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p)
        assert memory_type == driver.CU_MEMORYTYPE_DEVICE
        ordinal = driver.cuPointerGetAttribute(driver.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p)
        assert ordinal == DEVICE
        start = driver.cuPointerGetAttribute(driver.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p + 16)
        assert start == p
    finally:
        cudart.cudaFree(p)


def test_pointer_attributes_of_runtime_allocation():
    """cuPointerGetAttributes(numAttributes, attributes, ptr): each value in its
    attribute's own type, as cuPointerGetAttribute returns it."""
    p = cudart.cudaMalloc(256)
    try:
        attrs = [
            driver.CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            driver.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            driver.CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        ]
        memory_type, ordinal, size = driver.cuPointerGetAttributes(len(attrs), attrs, p)
        assert memory_type == driver.CU_MEMORYTYPE_DEVICE
        assert ordinal == DEVICE
        assert size >= 256
    finally:
        cudart.cudaFree(p)


def test_pointer_attributes_of_a_driver_allocation_are_typed(primary_context, device_memory):
    """cuPointerGetAttributes on cuMemAlloc memory: the context comes back as the
    CUcontext handle cuCtxGetCurrent gives, the rest as numbers; each equals what
    cuPointerGetAttribute says of it."""
    p = device_memory(1 << 16)
    names = [
        "CU_POINTER_ATTRIBUTE_CONTEXT",
        "CU_POINTER_ATTRIBUTE_MEMORY_TYPE",
        "CU_POINTER_ATTRIBUTE_DEVICE_POINTER",
        "CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL",
        "CU_POINTER_ATTRIBUTE_RANGE_START_ADDR",
        "CU_POINTER_ATTRIBUTE_RANGE_SIZE",
        "CU_POINTER_ATTRIBUTE_IS_MANAGED",
        "CU_POINTER_ATTRIBUTE_BUFFER_ID",
    ]
    attrs = [getattr(driver, n) for n in names]
    values = dict(zip(names, driver.cuPointerGetAttributes(len(attrs), attrs, p + 64), strict=True))
    context = values["CU_POINTER_ATTRIBUTE_CONTEXT"]
    assert isinstance(context, driver.CUcontext)
    assert context == driver.cuCtxGetCurrent() == primary_context
    assert values["CU_POINTER_ATTRIBUTE_MEMORY_TYPE"] == driver.CU_MEMORYTYPE_DEVICE
    assert values["CU_POINTER_ATTRIBUTE_DEVICE_POINTER"] == p + 64
    assert values["CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL"] == DEVICE == 0
    assert values["CU_POINTER_ATTRIBUTE_RANGE_START_ADDR"] == p
    assert values["CU_POINTER_ATTRIBUTE_RANGE_SIZE"] >= 1 << 16
    assert values["CU_POINTER_ATTRIBUTE_IS_MANAGED"] == 0
    assert values["CU_POINTER_ATTRIBUTE_BUFFER_ID"] != 0
    for name, attr in zip(names, attrs, strict=True):
        assert driver.cuPointerGetAttribute(attr, p + 64) == values[name], name
    with pytest.raises(ValueError):  # a record: refused before C, as by cuPointerGetAttribute
        driver.cuPointerGetAttributes(1, [driver.CU_POINTER_ATTRIBUTE_P2P_TOKENS], p)


def test_mempool_attribute_of_a_pool_allocation_is_the_pool():
    """CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE comes back as a CUmemoryPool handle, the
    runtime's cudaMemPool_t of the same pool."""
    pool = cudart.cudaDeviceGetDefaultMemPool(DEVICE)
    stream = cudart.cudaStreamCreate()
    try:
        p = cudart.cudaMallocAsync(256, stream)
        cudart.cudaStreamSynchronize(stream)
        got = driver.cuPointerGetAttribute(driver.CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p)
        assert isinstance(got, driver.CUmemoryPool) and got == pool
        (again,) = driver.cuPointerGetAttributes(1, [driver.CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE], p)
        assert again == pool
        cudart.cudaFreeAsync(p, stream)
        cudart.cudaStreamSynchronize(stream)
    finally:
        cudart.cudaStreamDestroy(stream)


def test_cupy_arrays_pass_as_cudeviceptr():
    """A CuPy array's __cuda_array_interface__ where cuda.h takes a CUdeviceptr."""
    cupy = pytest.importorskip("cupy")
    a = cupy.arange(64, dtype=cupy.uint8)
    cupy.cuda.runtime.deviceSynchronize()
    back = bytearray(64)
    driver.cuMemcpyDtoH(back, a, 64)
    assert bytes(back) == bytes(range(64))
    driver.cuMemsetD8(a, 7, 32)
    driver.cuCtxSynchronize()
    assert a.get().tolist() == [7] * 32 + list(range(32, 64))
    driver.cuMemcpyHtoD(a, bytes(range(100, 164)), 64)
    driver.cuCtxSynchronize()
    assert a.get().tolist() == list(range(100, 164))


def test_a_runtime_stream_in_a_launch_config_launches(modules, device_memory):
    """A cudaStreamCreate stream stored into CUlaunchConfig.hStream (ctypes refused it)."""
    n = 256
    fn = modules(AXPY_SOURCE).function("axpy")
    x = device_memory(4 * n, bytes((c_float * n)(*range(n))))
    y = device_memory(4 * n, bytes((c_float * n)(*([1.0] * n))))
    stream = cudart.cudaStreamCreate()
    try:
        config = launch_config(1, n)
        config.hStream = stream
        assert config.hStream == stream
        params = kernel_params(c_float(3.0), c_void_p(x), c_void_p(y), c_int(n))
        driver.cuLaunchKernelEx(config, fn, params, None)
        cudart.cudaStreamSynchronize(stream)
        assert read(y, c_float, n) == [3.0 * i + 1.0 for i in range(n)]
    finally:
        cudart.cudaStreamDestroy(stream)


def test_exported_handles_come_back_as_file_descriptors(device_memory):
    """cuMemExportToShareableHandle and cuMemGetHandleForAddressRange return the OS handle
    their handle type names (a POSIX fd, a dma_buf fd: an int), not a pointer to fill."""
    if not attribute("CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED"):
        pytest.skip("the device does not support virtual memory management")
    prop = allocation_prop()
    prop.requestedHandleTypes = driver.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
    size = driver.cuMemGetAllocationGranularity(prop, driver.CU_MEM_ALLOC_GRANULARITY_MINIMUM)
    handle = driver.cuMemCreate(size, prop, 0)
    try:
        fd = driver.cuMemExportToShareableHandle(
            handle, driver.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0
        )
        assert type(fd) is int and fd >= 0
        os.fstat(fd)  # an open descriptor of this process
        os.close(fd)
    finally:
        driver.cuMemRelease(handle)
    if not attribute("CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED"):
        pytest.skip("the device does not support dma_buf")
    p = device_memory(1 << 21)
    dma_buf = driver.cuMemGetHandleForAddressRange(
        p, 1 << 21, driver.CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0
    )
    assert type(dma_buf) is int and dma_buf >= 0
    os.close(dma_buf)


def test_get_proc_address_is_callable():
    version = driver.cuDriverGetVersion()
    pfn, status = driver.cuGetProcAddress("cuMemAlloc", version, 0)
    assert pfn != 0
    assert status == driver.CU_GET_PROC_ADDRESS_SUCCESS
    # The address is cuMemAlloc_v2 (the version asked for is past 3.2): call it.
    mem_alloc = ctypes.CFUNCTYPE(c_int, ctypes.POINTER(ctypes.c_ulonglong), ctypes.c_size_t)(pfn)
    dptr = ctypes.c_ulonglong()
    assert mem_alloc(ctypes.byref(dptr), 256) == 0
    assert dptr.value != 0
    driver.cuMemFree(dptr.value)
    # An unknown name: CUDA_ERROR_NOT_FOUND, or success with no address and the status
    # saying why (the docs allow both readings).
    try:
        pfn, status = driver.cuGetProcAddress("cuNoSuchFunction", version, 0)
    except driver.CudaDriverErrorNotFound:
        return
    assert pfn == 0
    assert status == driver.CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND


_PER_THREAD_PROC_ADDRESS = """
import ctypes, json
import cudart
from cudart import driver, _loader
driver.cuInit(0)
version = driver.cuDriverGetVersion()
lib = ctypes.CDLL(_loader.load_driver().path)
found = {name: driver.cuGetProcAddress("cuStreamQuery", version, getattr(driver, name))[0]
         for name in ("CU_GET_PROC_ADDRESS_DEFAULT", "CU_GET_PROC_ADDRESS_LEGACY_STREAM",
                      "CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM")}
found["exported"] = hasattr(lib, driver.sys.SYMBOLS["cuGetProcAddress"])
found["per_thread"] = cudart.per_thread_default_stream()
print(json.dumps(found))
"""


@pytest.mark.parametrize("switch", ["0", "1"])
def test_get_proc_address_default_follows_the_per_thread_switch(switch):
    """cuda.h's CU_GET_PROC_ADDRESS_DEFAULT: per-thread versions under
    CUDA_API_PER_THREAD_DEFAULT_STREAM (its inline cuGetProcAddress_v2_ptsz, which no
    driver exports), legacy ones otherwise; the bindings, under their switch, the same
    (cudart._binding.per_thread_inline). In a fresh interpreter: the switch is per process."""
    import json
    import subprocess
    import sys

    repo = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, CUDART_PER_THREAD_DEFAULT_STREAM=switch)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [repo, env.get("PYTHONPATH")]))
    env["CUDART_LIBRARY"] = str(cudart.load_runtime().path)
    env.pop("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", None)
    proc = subprocess.run(
        [sys.executable, "-c", _PER_THREAD_PROC_ADDRESS], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    # The symbol the bindings bind cuGetProcAddress to under the switch: the legacy
    # cuGetProcAddress_v2 is exported; the per-thread _ptsz form is cuda.h's inline only.
    assert found["per_thread"] is (switch == "1")
    assert found["exported"] is (switch == "0")
    legacy = found["CU_GET_PROC_ADDRESS_LEGACY_STREAM"]
    per_thread = found["CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM"]
    assert legacy and per_thread and legacy != per_thread  # cuStreamQuery, cuStreamQuery_ptsz
    assert found["CU_GET_PROC_ADDRESS_DEFAULT"] == (per_thread if switch == "1" else legacy)


JIT_SOURCE = 'extern "C" __global__ void jit_kernel(int *out) { *out = 42; }'


def jit_ptx(*options: str) -> bytes:
    """The kernel's PTX, NUL-terminated as cuModuleLoadDataEx reads it, with a comment
    of its own: the driver's JIT cache keeps compiled PTX, and a hit logs nothing."""
    ptx = cudart.compile(
        JIT_SOURCE, load=False, output="ptx", cache=False, options=list(options)
    ).rstrip(b"\0")
    return ptx + f"\n// {uuid.uuid4()}\n".encode() + b"\0"


def run_jit_kernel(function, device_memory) -> None:
    out = device_memory(4)
    launch_ex(function, 1, 1, c_void_p(out))
    assert read(out, c_int, 1) == [42]


def test_module_load_data_ex_with_jit_options(device_memory):
    """A PTX image JIT-compiled with typed options (issue 33 item 14b): an info log of
    8 KiB cudart allocates, verbose, the wall time and an optimization level. The log
    comes back as text cut at the bytes the driver says it wrote (ptxas names the entry
    it compiled), the wall time as a float; the kernel it makes runs."""
    module, written = driver.cuModuleLoadDataEx(
        jit_ptx(),
        options={
            driver.CU_JIT_INFO_LOG_BUFFER: 8192,
            driver.CU_JIT_LOG_VERBOSE: 1,
            driver.CU_JIT_WALL_TIME: None,
            driver.CU_JIT_OPTIMIZATION_LEVEL: 3,
        },
    )
    try:
        log = written[driver.CU_JIT_INFO_LOG_BUFFER]
        used = written[driver.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES]  # cudart added it: 8192 in
        assert "jit_kernel" in log, log
        assert len(log.encode()) <= used <= 8192  # with or without the NUL
        wall = written[driver.CU_JIT_WALL_TIME]
        assert isinstance(wall, float) and 0.0 <= wall < 60_000.0, wall  # milliseconds
        run_jit_kernel(driver.cuModuleGetFunction(module, "jit_kernel"), device_memory)
    finally:
        driver.cuModuleUnload(module)


def test_module_load_data_ex_in_cuda_bindings_form(device_memory):
    """cuda-bindings' call, `cuModuleLoadDataEx(image, numOptions, options, values)` with
    two lists, the log buffer a bytearray of the caller's: the driver writes into it."""
    log = bytearray(4096)
    options = [
        driver.CU_JIT_INFO_LOG_BUFFER,
        driver.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        driver.CU_JIT_LOG_VERBOSE,
    ]
    module, written = driver.cuModuleLoadDataEx(jit_ptx(), 3, options, [log, len(log), 1])
    try:
        text = written[driver.CU_JIT_INFO_LOG_BUFFER]
        assert "jit_kernel" in text
        assert bytes(log).split(b"\0", 1)[0].decode(errors="replace") == text
        run_jit_kernel(driver.cuModuleGetFunction(module, "jit_kernel"), device_memory)
    finally:
        driver.cuModuleUnload(module)


def test_module_load_data_ex_error_log():
    """PTX the JIT refuses: CudaDriverErrorInvalidPtx, and the error log asked for comes
    back on the exception (`written`) with ptxas's message (a failure is never served
    from the JIT cache)."""
    ptx = jit_ptx().replace(b"ret;", b"no_such_instruction;")
    with pytest.raises(driver.CudaDriverErrorInvalidPtx) as info:
        driver.cuModuleLoadDataEx(
            ptx, options={driver.CU_JIT_ERROR_LOG_BUFFER: 8192, driver.CU_JIT_LOG_VERBOSE: 1}
        )
    log = info.value.written[driver.CU_JIT_ERROR_LOG_BUFFER]
    assert "no_such_instruction" in log, log
    assert info.value.written[driver.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES] >= len(log.encode())


def test_link_create_add_data_complete_with_logs(device_memory):
    """cuLinkCreate with an info and an error log and the wall time, cuLinkAddData of
    relocatable PTX, cuLinkComplete: the driver writes the logs and the time until
    cuLinkDestroy ("will accumulate data until the CUlinkState is destroyed"), so the
    OptionsWritten cuLinkCreate returned is read after cuLinkComplete. The cubin it
    made (the state's memory) loads and runs before the state is destroyed."""
    state, written = driver.cuLinkCreate(
        options={
            driver.CU_JIT_INFO_LOG_BUFFER: 8192,
            driver.CU_JIT_ERROR_LOG_BUFFER: 8192,
            driver.CU_JIT_LOG_VERBOSE: 1,
            driver.CU_JIT_WALL_TIME: None,
        }
    )
    try:
        ptx = jit_ptx("-rdc=true")
        added = driver.cuLinkAddData(
            state,
            driver.CU_JIT_INPUT_PTX,
            bytearray(ptx),
            len(ptx),
            "jit_kernel.ptx",
            options={driver.CU_JIT_OPTIMIZATION_LEVEL: 3},
        )
        assert len(added) == 0  # no option of its own that the driver writes
        cubin, size = driver.cuLinkComplete(state)
        assert cubin and size > 0
        info_log = written[driver.CU_JIT_INFO_LOG_BUFFER]
        assert info_log, "the linker's info log is empty"
        assert isinstance(written[driver.CU_JIT_ERROR_LOG_BUFFER], str)  # warnings, if any
        assert written[driver.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES] >= len(info_log.encode())
        wall = written[driver.CU_JIT_WALL_TIME]
        assert isinstance(wall, float) and 0.0 <= wall < 60_000.0, wall
        module = driver.cuModuleLoadData(cubin)
        try:
            run_jit_kernel(driver.cuModuleGetFunction(module, "jit_kernel"), device_memory)
        finally:
            driver.cuModuleUnload(module)
    finally:
        driver.cuLinkDestroy(state)


def test_library_load_data_with_jit_options(device_memory):
    """cuLibraryLoadData of PTX with JIT options (an info log, verbose, an optimization
    level) and no library options. The log is read once the kernel was taken for this
    context: with lazy loading the library is compiled for a context when a function is
    needed there, and the option values are kept with the library object until then."""
    require("cuLibraryLoadData")
    require("cuKernelGetFunction")
    library, written = driver.cuLibraryLoadData(
        jit_ptx(),
        {
            driver.CU_JIT_INFO_LOG_BUFFER: 8192,
            driver.CU_JIT_LOG_VERBOSE: 1,
            driver.CU_JIT_OPTIMIZATION_LEVEL: 2,
        },
    )
    try:
        kernel = driver.cuLibraryGetKernel(library, "jit_kernel")
        function = driver.cuKernelGetFunction(kernel)
        run_jit_kernel(function, device_memory)
        log = written[driver.CU_JIT_INFO_LOG_BUFFER]
        assert "jit_kernel" in log, log
    finally:
        driver.cuLibraryUnload(library)


def test_runtime_library_load_data_with_jit_options():
    """The runtime's cudaLibraryLoadData (12.8+ bindings) takes the runtime's typed
    cudaJitOption values the same way: an info log and verbose; its kernel is found."""
    if not hasattr(cudart, "cudaLibraryLoadData"):
        pytest.skip("cudaLibraryLoadData is CUDA 12.8+; these bindings have none")
    library, written = cudart.cudaLibraryLoadData(
        jit_ptx(), {cudart.cudaJitInfoLogBuffer: 8192, cudart.cudaJitLogVerbose: 1}
    )
    try:
        kernel = cudart.cudaLibraryGetKernel(library, "jit_kernel")
        assert kernel
        assert isinstance(written[cudart.cudaJitInfoLogBuffer], str)
        assert written[cudart.cudaJitInfoLogBufferSizeBytes] >= 0
    finally:
        cudart.cudaLibraryUnload(library)


def test_error_name_and_string():
    assert driver.cuGetErrorName(0) == "CUDA_SUCCESS"
    assert driver.cuGetErrorName(driver.CUDA_ERROR_INVALID_DEVICE) == "CUDA_ERROR_INVALID_DEVICE"
    assert driver.cuGetErrorString(driver.CUDA_ERROR_INVALID_DEVICE) == "invalid device ordinal"
    with pytest.raises(driver.CudaDriverErrorInvalidDevice) as info:
        driver.cuDeviceGet(-1)
    assert isinstance(info.value, cudart.CudaDriverError)


# ----------------------------------------------------------- green contexts


def test_green_context(device_memory):
    """cuDeviceGetDevResource -> cuDevSmResourceSplitByCount -> cuDevResourceGenerateDesc
    -> cuGreenCtxCreate, then work in it. Split and GenerateDesc in cuda.h's shape:
    `nbGroups` in/out (0 and no result array: the count), `result` and `remaining`
    outputs; GenerateDesc's `resources` an input array."""
    for name in ("cuGreenCtxCreate", "cuDevSmResourceSplitByCount", "cuDevResourceGenerateDesc"):
        require(name)
    whole = driver.cuDeviceGetDevResource(DEVICE, driver.CU_DEV_RESOURCE_TYPE_SM)
    assert whole.type == driver.CU_DEV_RESOURCE_TYPE_SM
    assert whole.sm.smCount == attribute("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")
    groups, count, remaining = driver.cuDevSmResourceSplitByCount(0, whole, 0, 8)
    assert count > 0 and len(groups) == 0
    groups, made, remaining = driver.cuDevSmResourceSplitByCount(1, whole, 0, 8)
    assert made == 1 and len(groups) == 1
    group = groups[0]
    assert group.type == driver.CU_DEV_RESOURCE_TYPE_SM
    assert 8 <= group.sm.smCount <= whole.sm.smCount
    desc = driver.cuDevResourceGenerateDesc([group], 1)
    green = driver.cuGreenCtxCreate(desc, DEVICE, driver.CU_GREEN_CTX_DEFAULT_STREAM)
    try:
        got = driver.cuGreenCtxGetDevResource(green, driver.CU_DEV_RESOURCE_TYPE_SM)
        assert got.sm.smCount == group.sm.smCount
        if declares("cuGreenCtxStreamCreate"):  # CUDA 12.5+
            stream = driver.cuGreenCtxStreamCreate(green, driver.CU_STREAM_NON_BLOCKING, 0)
            try:
                out = device_memory(4)
                driver.cuMemsetD32Async(out, 7, 1, stream)
                driver.cuStreamSynchronize(stream)
                assert read(out, c_int, 1) == [7]
            finally:
                driver.cuStreamDestroy(stream)
        ctx = driver.cuCtxFromGreenCtx(green)
        assert int(ctx) != 0
    finally:
        driver.cuGreenCtxDestroy(green)
