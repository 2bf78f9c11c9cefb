"""Attribute values on a GPU (issue 10, item 6): the checked setters and getters take
and return the Python value of each attribute's type. Round trips on the default
memory pool, graph memory, a stream, a kernel node and managed memory, each held
against the raw layer (what C itself reads back through a pointer of the type).

Everything goes through the top-level names, as users call them.
"""

from __future__ import annotations

import ctypes

import pytest

import cudart

from .support import KERNELS, check

MIB = 1 << 20


def raw_pool_value(rt, pool, attr, ctype):
    """What the raw layer reads for a pool attribute through a `ctype` pointer."""
    value = ctype()
    check(rt, rt.cudaMemPoolGetAttribute(pool, attr, ctypes.byref(value)))
    return value.value


@pytest.fixture
def stream():
    s = cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking)
    yield s
    cudart.cudaStreamDestroy(s)


@pytest.fixture
def pool():
    """The default pool of device 0, its settable attributes restored afterwards."""
    pool = cudart.cudaDeviceGetDefaultMemPool(0)
    settable = [
        cudart.cudaMemPoolAttrReleaseThreshold,
        cudart.cudaMemPoolReuseFollowEventDependencies,
        cudart.cudaMemPoolReuseAllowOpportunistic,
        cudart.cudaMemPoolReuseAllowInternalDependencies,
    ]
    saved = {attr: cudart.cudaMemPoolGetAttribute(pool, attr) for attr in settable}
    yield pool
    for attr, value in saved.items():
        cudart.cudaMemPoolSetAttribute(pool, attr, value)


def test_pool_release_threshold_round_trip(rt, pool):
    attr = cudart.cudaMemPoolAttrReleaseThreshold
    for value in (2**40, 0, 2**64 - 1, 2**30):
        cudart.cudaMemPoolSetAttribute(pool, attr, value)
        got = cudart.cudaMemPoolGetAttribute(pool, attr)
        assert got == value and type(got) is int
        assert raw_pool_value(rt, pool, attr, ctypes.c_uint64) == value
    with pytest.raises(OverflowError):
        cudart.cudaMemPoolSetAttribute(pool, attr, 2**64)
    assert cudart.cudaMemPoolGetAttribute(pool, attr) == 2**30  # the refused value never reached C


def test_pool_reuse_flags_round_trip(rt, pool):
    for attr in (
        cudart.cudaMemPoolReuseFollowEventDependencies,
        cudart.cudaMemPoolReuseAllowOpportunistic,
        cudart.cudaMemPoolReuseAllowInternalDependencies,
    ):
        for value in (0, 1, False, True):
            cudart.cudaMemPoolSetAttribute(pool, attr, value)
            assert cudart.cudaMemPoolGetAttribute(pool, attr) == int(value)
            assert raw_pool_value(rt, pool, attr, ctypes.c_int) == int(value)


def test_pool_memory_counters(rt, pool, stream):
    used = cudart.cudaMemPoolAttrUsedMemCurrent
    reserved = cudart.cudaMemPoolAttrReservedMemCurrent
    before = cudart.cudaMemPoolGetAttribute(pool, used)
    ptr = cudart.cudaMallocAsync(4 * MIB, stream)
    cudart.cudaStreamSynchronize(stream)
    try:
        in_use = cudart.cudaMemPoolGetAttribute(pool, used)
        assert in_use >= before + 4 * MIB
        assert cudart.cudaMemPoolGetAttribute(pool, reserved) >= in_use
        assert cudart.cudaMemPoolGetAttribute(pool, cudart.cudaMemPoolAttrUsedMemHigh) >= in_use
        assert in_use == raw_pool_value(rt, pool, used, ctypes.c_uint64)
    finally:
        cudart.cudaFreeAsync(ptr, stream)
        cudart.cudaStreamSynchronize(stream)
    assert cudart.cudaMemPoolGetAttribute(pool, used) == before
    # High watermarks reset to zero only: 0 is a value here, not a NULL pointer.
    cudart.cudaMemPoolSetAttribute(pool, cudart.cudaMemPoolAttrUsedMemHigh, 0)
    assert cudart.cudaMemPoolGetAttribute(pool, cudart.cudaMemPoolAttrUsedMemHigh) == before
    with pytest.raises(cudart.CudaErrorInvalidValue):
        cudart.cudaMemPoolSetAttribute(pool, cudart.cudaMemPoolAttrUsedMemHigh, 1)


def test_pool_enum_attributes_come_back_as_members(pool):
    if not hasattr(cudart, "cudaMemPoolAttrAllocationType"):
        pytest.skip("this runtime's headers have no enum-valued memory pool attribute (13.2+)")
    if cudart.cudaDriverGetVersion() < 13020:
        # The 13.5 runtime on a 13.0 driver answers cudaErrorInvalidValue: the driver
        # predates these attributes.
        pytest.skip(
            f"the driver ({cudart.cudaDriverGetVersion()}) predates CUDA 13.2's pool attributes"
        )
    kind = cudart.cudaMemPoolGetAttribute(pool, cudart.cudaMemPoolAttrAllocationType)
    assert kind is cudart.cudaMemAllocationType.cudaMemAllocationTypePinned
    handles = cudart.cudaMemPoolGetAttribute(pool, cudart.cudaMemPoolAttrExportHandleTypes)
    assert isinstance(handles, int)
    if hasattr(cudart, "cudaMemPoolAttrLocationType"):
        location = cudart.cudaMemPoolGetAttribute(pool, cudart.cudaMemPoolAttrLocationType)
        assert location is cudart.cudaMemLocationType.cudaMemLocationTypeDevice
        assert cudart.cudaMemPoolGetAttribute(pool, cudart.cudaMemPoolAttrLocationId) == 0


def test_graph_memory_attributes(rt):
    for attr in (
        cudart.cudaGraphMemAttrUsedMemCurrent,
        cudart.cudaGraphMemAttrUsedMemHigh,
        cudart.cudaGraphMemAttrReservedMemCurrent,
        cudart.cudaGraphMemAttrReservedMemHigh,
    ):
        value = cudart.cudaDeviceGetGraphMemAttribute(0, attr)
        raw = ctypes.c_uint64()
        check(rt, rt.cudaDeviceGetGraphMemAttribute(0, attr, ctypes.byref(raw)))
        assert type(value) is int and value == raw.value >= 0
    for attr in (cudart.cudaGraphMemAttrUsedMemHigh, cudart.cudaGraphMemAttrReservedMemHigh):
        cudart.cudaDeviceSetGraphMemAttribute(0, attr, 0)  # reset: 0, not NULL
    with pytest.raises(cudart.CudaErrorInvalidValue):
        cudart.cudaDeviceSetGraphMemAttribute(0, cudart.cudaGraphMemAttrUsedMemHigh, 5)


def test_stream_priority_round_trip(rt, stream):
    least, greatest = cudart.cudaDeviceGetStreamPriorityRange()
    attr = cudart.cudaLaunchAttributePriority
    for value in (greatest, least):
        cudart.cudaStreamSetAttribute(stream, attr, value)
        got = cudart.cudaStreamGetAttribute(stream, attr)
        assert got == value and type(got) is int
        raw = rt.cudaLaunchAttributeValue()
        check(rt, rt.cudaStreamGetAttribute(stream, attr, ctypes.byref(raw)))
        assert raw.priority == value
    # The union itself is still accepted, as C takes it.
    union = rt.cudaLaunchAttributeValue()
    union.priority = greatest
    cudart.cudaStreamSetAttribute(stream, attr, union)
    assert cudart.cudaStreamGetAttribute(stream, attr) == greatest


def test_stream_synchronization_policy_is_an_enum_member(stream):
    attr = cudart.cudaLaunchAttributeSynchronizationPolicy
    cudart.cudaStreamSetAttribute(stream, attr, cudart.cudaSyncPolicyYield)
    got = cudart.cudaStreamGetAttribute(stream, attr)
    assert got is cudart.cudaSynchronizationPolicy.cudaSyncPolicyYield


def test_stream_access_policy_window_round_trip(rt, stream):
    prop = cudart.cudaGetDeviceProperties(0)
    if prop.accessPolicyMaxWindowSize == 0:
        pytest.skip(f"{prop.name.decode()} has no L2 access policy window")
    n = min(MIB, prop.accessPolicyMaxWindowSize)
    ptr = cudart.cudaMalloc(n)
    try:
        window = rt.cudaAccessPolicyWindow()
        window.base_ptr = ptr
        window.num_bytes = n
        window.hitRatio = 0.5
        window.hitProp = rt.cudaAccessPropertyPersisting
        window.missProp = rt.cudaAccessPropertyStreaming
        attr = cudart.cudaLaunchAttributeAccessPolicyWindow
        cudart.cudaStreamSetAttribute(stream, attr, window)
        got = cudart.cudaStreamGetAttribute(stream, attr)
        assert type(got).__name__ == "cudaAccessPolicyWindow"
        assert (got.base_ptr, got.num_bytes, got.hitRatio) == (ptr, n, 0.5)
        assert (got.hitProp, got.missProp) == (
            rt.cudaAccessPropertyPersisting,
            rt.cudaAccessPropertyStreaming,
        )
        # Reset the window so the stream leaves no persisting lines behind.
        window.num_bytes = 0
        cudart.cudaStreamSetAttribute(stream, attr, window)
    finally:
        cudart.cudaFree(ptr)


def test_kernel_node_priority_round_trip(rt):
    from cudart import kernels

    with kernels.load_module(KERNELS / "kernels.fatbin") as module:
        func = int(module.get_function("axpy"))
        # axpy(float a, const float* x, float* y, int n) with n = 0: never launched here.
        values = (ctypes.c_float(1.0), ctypes.c_void_p(0), ctypes.c_void_p(0), ctypes.c_int(0))
        pointers = (ctypes.c_void_p * 4)(*[ctypes.addressof(v) for v in values])
        params = rt.cudaKernelNodeParams()
        params.func = func
        params.gridDim = rt.dim3(1, 1, 1)
        params.blockDim = rt.dim3(32, 1, 1)
        params.kernelParams = ctypes.cast(pointers, ctypes.POINTER(ctypes.c_void_p))
        graph = cudart.cudaGraphCreate(0)
        try:
            node = cudart.cudaGraphAddKernelNode(graph, None, 0, params)
            least, greatest = cudart.cudaDeviceGetStreamPriorityRange()
            attr = cudart.cudaLaunchAttributePriority
            cudart.cudaGraphKernelNodeSetAttribute(node, attr, greatest)
            assert cudart.cudaGraphKernelNodeGetAttribute(node, attr) == greatest
            raw = rt.cudaLaunchAttributeValue()
            check(rt, rt.cudaGraphKernelNodeGetAttribute(node, attr, ctypes.byref(raw)))
            assert raw.priority == greatest
        finally:
            cudart.cudaGraphDestroy(graph)


def test_managed_memory_range_attributes(rt, runtime_version):
    if not cudart.cudaDeviceGetAttribute(cudart.cudaDevAttrConcurrentManagedAccess, 0):
        pytest.skip("device 0 has no concurrent managed access")
    n = 2 * MIB
    ptr = cudart.cudaMallocManaged(n, cudart.cudaMemAttachGlobal)

    def advise(advice):
        if runtime_version >= 13000:
            location = rt.cudaMemLocation()
            location.type = rt.cudaMemLocationTypeDevice
            location.id = 0
            cudart.cudaMemAdvise(ptr, n, advice, location)
        else:
            cudart.cudaMemAdvise(ptr, n, advice, 0)

    try:
        get = cudart.cudaMemRangeGetAttribute
        assert get(4, cudart.cudaMemRangeAttributeReadMostly, ptr, n) == 0
        advise(cudart.cudaMemAdviseSetReadMostly)
        assert get(4, cudart.cudaMemRangeAttributeReadMostly, ptr, n) == 1
        advise(cudart.cudaMemAdviseSetPreferredLocation)
        assert get(4, cudart.cudaMemRangeAttributePreferredLocation, ptr, n) == 0
        advise(cudart.cudaMemAdviseSetAccessedBy)
        invalid = rt.cudaInvalidDeviceId
        assert get(12, cudart.cudaMemRangeAttributeAccessedBy, ptr, n) == [0, invalid, invalid]
        raw = (ctypes.c_int * 3)()
        check(
            rt,
            rt.cudaMemRangeGetAttribute(raw, 12, cudart.cudaMemRangeAttributeAccessedBy, ptr, n),
        )
        assert list(raw) == [0, invalid, invalid]
        if hasattr(cudart, "cudaMemRangeAttributePreferredLocationType"):  # 12.2+
            kind = get(4, cudart.cudaMemRangeAttributePreferredLocationType, ptr, n)
            assert kind is cudart.cudaMemLocationType.cudaMemLocationTypeDevice
            assert get(4, cudart.cudaMemRangeAttributePreferredLocationId, ptr, n) == 0
        with pytest.raises(ValueError, match="the size must be 4 bytes"):
            get(8, cudart.cudaMemRangeAttributeReadMostly, ptr, n)
        several = cudart.cudaMemRangeGetAttributes(
            [4, 12, 4],
            [
                cudart.cudaMemRangeAttributeReadMostly,
                cudart.cudaMemRangeAttributeAccessedBy,
                cudart.cudaMemRangeAttributePreferredLocation,
            ],
            3,
            ptr,
            n,
        )
        assert several == [1, [0, invalid, invalid], 0]
    finally:
        cudart.cudaFree(ptr)
