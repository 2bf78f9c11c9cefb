"""Ports of cuda-python's runtime tests to cudart's checked API.

Upstream: NVIDIA/cuda-python `cuda_bindings/tests/legacy_api/test_legacy_cudart.py` at
77b08ffde34fd25cce3b16e4692a2797a8cc4fb9 (the newest copy, 53 tests). Its first 32
tests are also `cuda_bindings/tests/test_cudart.py` at 11a9013d26c7f38a5f8a1e2aaf9f9a02a004b393
(the same code before the bindings moved to `cuda.bindings`); each is ported once and
names both. One function here per upstream test, under the upstream name; its
docstring starts `Upstream: <file>@<commit>, <test name>`.

Adaptations, the same throughout: `err, x = f(...)` / `assertSuccess(err)` becomes
`x = f(...)` (a failure raises cudart.CudaError); an expected error code becomes
`pytest.raises(cudart.CudaError<Name>)`; `(err, values..., count) = f(graph, count)`
becomes one call returning the lists (their length is the count).
"""

from __future__ import annotations

import ctypes
import math

import pytest

import cudart
from cudart import _loader

from ._support import (
    address,
    clear_last_error,
    declares,
    device_attribute,
    numpy,
    require,
    runtime_version,
)


def supports_memory_pool() -> bool:
    return bool(device_attribute(cudart.cudaDevAttrMemoryPoolsSupported))


def supports_sparse_textures() -> bool:
    return bool(device_attribute(cudart.cudaDevAttrSparseCudaArraySupported))


def uint8_pair(np, size):
    h1 = np.full(size, 1).astype(np.uint8)
    h2 = np.full(size, 2).astype(np.uint8)
    assert np.array_equal(h1, h2) is False
    return h1, h2


def uchar_desc():
    return cudart.cudaCreateChannelDesc(8, 0, 0, 0, cudart.cudaChannelFormatKindUnsigned)


def graph_get_edges(graph):
    """cudaGraphGetEdges with edge data: cudaGraphGetEdges_v2 in 12.3-12.9, the plain
    name from 13.0; upstream's bindings are 13.x."""
    if runtime_version() >= 13000:
        return cudart.cudaGraphGetEdges(graph)
    if declares("cudaGraphGetEdges_v2"):
        return cudart.cudaGraphGetEdges_v2(graph)
    pytest.skip("graph edge data (cudaGraphGetEdges_v2) is CUDA 12.3+")


def node_dependencies(node, dependents=False):
    name = "cudaGraphNodeGetDependentNodes" if dependents else "cudaGraphNodeGetDependencies"
    if runtime_version() >= 13000:
        return getattr(cudart, name)(node)
    if declares(name + "_v2"):
        return getattr(cudart, name + "_v2")(node)
    pytest.skip(f"graph edge data ({name}_v2) is CUDA 12.3+")


def graph_add_node(graph, params):
    """cudaGraphAddNode(graph, None, None, 0, params) as upstream (13.x) calls it: the
    edge-data form is cudaGraphAddNode_v2 in 12.4-12.9; 12.3 has only the plain one."""
    if runtime_version() >= 13000:
        return cudart.cudaGraphAddNode(graph, None, None, 0, params)
    if declares("cudaGraphAddNode_v2"):
        return cudart.cudaGraphAddNode_v2(graph, None, None, 0, params)
    return cudart.cudaGraphAddNode(graph, None, 0, params)


def test_supportsCudaAPI():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff, test_supportsCudaAPI

    Upstream checks its own helper; ours (`declares`, asking the loaded runtime's
    bindings) is checked the same way. Its driver-module half (`cuInit`) has no
    counterpart: cudart binds the runtime only."""
    assert declares("cudaMalloc") is True
    assert declares("this_is_not_a_cuda_api") is False


def test_cudart_memcpy():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_memcpy"""
    np = numpy()
    size = 1024 * np.uint8().itemsize
    dptr = cudart.cudaMalloc(size)
    h1, h2 = uint8_pair(np, size)
    cudart.cudaMemcpy(dptr, h1, size, cudart.cudaMemcpyHostToDevice)
    cudart.cudaMemcpy(h2, dptr, size, cudart.cudaMemcpyDeviceToHost)
    assert np.array_equal(h1, h2)
    cudart.cudaFree(dptr)


def test_cudart_hostRegister():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_hostRegister

    The sizes are upstream's `(16 * page_size) / 8`, a float there; C takes a size_t,
    so the port passes the same value as an int."""
    np = numpy()
    page_size = 80
    addr_host = np.full(page_size * 3, 1).astype(np.uint8)
    addr = addr_host.ctypes.data

    size_0 = int((16 * page_size) / 8)
    addr_0 = addr + int((0 * page_size) / 8)
    size_1 = int((16 * page_size) / 8)
    addr_1 = addr + int((8 * page_size) / 8)

    cudart.cudaHostRegister(addr_0, size_0, 3)
    with pytest.raises(cudart.CudaErrorHostMemoryAlreadyRegistered):
        cudart.cudaHostRegister(addr_1, size_1, 3)
    clear_last_error()
    with pytest.raises(cudart.CudaErrorInvalidValue):
        cudart.cudaHostUnregister(addr_1)
    clear_last_error()
    cudart.cudaHostUnregister(addr_0)


def test_cudart_class_reference():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_class_reference"""
    offset = 1
    width = 4
    height = 5
    depth = 6
    flags = 0
    numMipLevels = 1

    extent = cudart.cudaExtent()
    formatDesc = cudart.cudaChannelFormatDesc()
    externalMemoryMipmappedArrayDesc = cudart.cudaExternalMemoryMipmappedArrayDesc()

    extent.width = width
    extent.height = height
    extent.depth = depth

    formatDesc.x = 8
    formatDesc.y = 0
    formatDesc.z = 0
    formatDesc.w = 0
    formatDesc.f = cudart.cudaChannelFormatKindSigned

    desc = externalMemoryMipmappedArrayDesc
    desc.offset = offset
    desc.formatDesc = formatDesc
    desc.extent = extent
    desc.flags = flags
    desc.numLevels = numMipLevels

    # Can manipulate child structure values directly
    desc.extent.width = width + 1
    desc.extent.height = height + 1
    desc.extent.depth = depth + 1
    assert desc.extent.width == width + 1
    assert desc.extent.height == height + 1
    assert desc.extent.depth == depth + 1

    desc.formatDesc.x = 20
    desc.formatDesc.y = 21
    desc.formatDesc.z = 22
    desc.formatDesc.w = 23
    desc.formatDesc.f = cudart.cudaChannelFormatKindFloat
    assert desc.formatDesc.x == 20
    assert desc.formatDesc.y == 21
    assert desc.formatDesc.z == 22
    assert desc.formatDesc.w == 23
    assert desc.formatDesc.f == cudart.cudaChannelFormatKindFloat

    # Can copy classes over
    desc.extent = extent
    assert desc.extent.width == width
    assert desc.extent.height == height
    assert desc.extent.depth == depth

    desc.formatDesc = formatDesc
    assert desc.formatDesc.x == 8
    assert desc.formatDesc.y == 0
    assert desc.formatDesc.z == 0
    assert desc.formatDesc.w == 0
    assert desc.formatDesc.f == cudart.cudaChannelFormatKindSigned


def _external_semaphore_signal_node_params():
    """The tail upstream repeats in two tests: filling a cudaExternalSemaphoreSignalNodeParams.

    Its pointer members take ctypes arrays (upstream assigns Python lists)."""
    example = cudart.cudaExternalSemaphoreSignalNodeParams()
    sems = (cudart.cudaExternalSemaphore_t * 3)(
        cudart.cudaExternalSemaphore_t(0),
        cudart.cudaExternalSemaphore_t(123),
        cudart.cudaExternalSemaphore_t(999),
    )
    example.extSemArray = sems
    params = []
    for flags in (1, 2, 3):
        a = cudart.cudaExternalSemaphoreSignalParams()
        a.params.fence.value = 7
        a.params.nvSciSync.fence = 999
        a.params.keyedMutex.key = 9
        a.flags = flags
        params.append(a)
    a1, _a2, a3 = params
    array = (cudart.cudaExternalSemaphoreSignalParams * 1)(a1)
    example.paramsArray = array
    # Setting is by value: changing a3 afterwards does not reach the array.
    a3.params.fence.value = 4
    a3.params.nvSciSync.fence = 4
    a3.params.keyedMutex.key = 4
    a3.flags = 4
    example.numExtSems = 3
    assert [int(example.extSemArray[i]) for i in range(3)] == [0, 123, 999]
    assert example.paramsArray[0].flags == 1
    assert example.paramsArray[0].params.fence.value == 7
    return sems, array  # the arrays the pointer members point into


def test_cudart_class_inline():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_class_inline"""
    if not supports_sparse_textures():
        pytest.skip("Sparse Texture Device Filter")
    extent = cudart.cudaExtent()
    extent.width = 1000
    extent.height = 500
    extent.depth = 0

    desc = cudart.cudaChannelFormatDesc()
    desc.x = 32
    desc.y = 32
    desc.z = 32
    desc.w = 32
    desc.f = cudart.cudaChannelFormatKindFloat

    flags = cudart.cudaArraySparse
    maxDim = max(extent.width, extent.height)
    numLevels = int(1.0 + math.log(maxDim, 2))

    mipmap = cudart.cudaMallocMipmappedArray(desc, extent, numLevels, flags)
    sparseProp = cudart.cudaMipmappedArrayGetSparseProperties(mipmap)

    assert sparseProp.tileExtent.width == 64
    assert sparseProp.tileExtent.height == 64
    assert sparseProp.tileExtent.depth == 1

    sparsePropNew = cudart.cudaArraySparseProperties()
    sparsePropNew.tileExtent.width = 15
    sparsePropNew.tileExtent.height = 16
    sparsePropNew.tileExtent.depth = 17

    # Check that we can copy inner structs
    sparseProp.tileExtent = sparsePropNew.tileExtent
    assert sparseProp.tileExtent.width == 15
    assert sparseProp.tileExtent.height == 16
    assert sparseProp.tileExtent.depth == 17

    assert sparseProp.miptailFirstLevel == 3
    assert sparseProp.miptailSize == 196608
    assert sparseProp.flags == 0

    cudart.cudaFreeMipmappedArray(mipmap)
    _external_semaphore_signal_node_params()


def test_cudart_graphs():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_graphs

    Upstream calls cudaGraphGetNodes twice (count, then nodes); ours returns the list."""
    graph = cudart.cudaGraphCreate(0)
    pGraphNode0 = cudart.cudaGraphAddEmptyNode(graph, None, 0)
    pGraphNode1 = cudart.cudaGraphAddEmptyNode(graph, [pGraphNode0], 1)
    cudart.cudaGraphAddEmptyNode(graph, [pGraphNode0, pGraphNode1], 2)

    nodes = cudart.cudaGraphGetNodes(graph)
    assert len(nodes) == 3

    stream_legacy = cudart.cudaStream_t(cudart.cudaStreamLegacy)
    stream_per_thread = cudart.cudaStream_t(cudart.cudaStreamPerThread)
    assert int(stream_legacy) == 1 and int(stream_per_thread) == 2
    stream_with_flags = cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking)
    cudart.cudaStreamDestroy(stream_with_flags)
    cudart.cudaGraphDestroy(graph)


def test_cudart_cudaGraphGetEdges_edgeData_outlives_call():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff,
    test_cudart_cudaGraphGetEdges_edgeData_outlives_call"""
    graph = cudart.cudaGraphCreate(0)
    try:
        n0 = cudart.cudaGraphAddEmptyNode(graph, None, 0)
        n1 = cudart.cudaGraphAddEmptyNode(graph, [n0], 1)
        cudart.cudaGraphAddEmptyNode(graph, [n0, n1], 2)

        from_nodes, to_nodes, edge_data = graph_get_edges(graph)
        num_edges = len(from_nodes)
        assert num_edges == 3
        assert len(edge_data) == num_edges == len(to_nodes) == 3

        # Stir the heap, as upstream does, to surface a use-after-free.
        for _ in range(64):
            graph_get_edges(graph)

        for ed in edge_data:
            assert ed.from_port == 0
            assert ed.to_port == 0
            assert int(ed.type) == 0
    finally:
        cudart.cudaGraphDestroy(graph)


def test_cudart_cudaGraphNodeGetDependencies_edgeData_outlives_call():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff,
    test_cudart_cudaGraphNodeGetDependencies_edgeData_outlives_call"""
    graph = cudart.cudaGraphCreate(0)
    try:
        n0 = cudart.cudaGraphAddEmptyNode(graph, None, 0)
        n1 = cudart.cudaGraphAddEmptyNode(graph, [n0], 1)

        deps, edge_data = node_dependencies(n1)
        num_deps = len(deps)
        assert num_deps == 1
        assert len(edge_data) == num_deps == 1

        dependents, dep_edge_data = node_dependencies(n0, dependents=True)
        num_dependents = len(dependents)
        assert num_dependents == 1
        assert len(dep_edge_data) == num_dependents == 1

        for _ in range(64):
            node_dependencies(n1)
            node_dependencies(n0, dependents=True)

        for ed in list(edge_data) + list(dep_edge_data):
            assert ed.from_port == 0
            assert ed.to_port == 0
            assert int(ed.type) == 0
    finally:
        cudart.cudaGraphDestroy(graph)


def test_cudart_list_access():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_list_access"""
    prop = cudart.cudaGetDeviceProperties(0)
    prop.name = prop.name + b" " * (256 - len(prop.name))


def test_cudart_class_setters():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_class_setters"""
    dim = cudart.dim3()
    dim.x = 1
    dim.y = 2
    dim.z = 3
    assert dim.x == 1
    assert dim.y == 2
    assert dim.z == 3


def test_cudart_both_type():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_both_type"""
    mode = cudart.cudaThreadExchangeStreamCaptureMode(cudart.cudaStreamCaptureModeGlobal)
    mode = cudart.cudaThreadExchangeStreamCaptureMode(cudart.cudaStreamCaptureModeRelaxed)
    assert mode == cudart.cudaStreamCaptureModeGlobal
    mode = cudart.cudaThreadExchangeStreamCaptureMode(cudart.cudaStreamCaptureModeThreadLocal)
    assert mode == cudart.cudaStreamCaptureModeRelaxed
    mode = cudart.cudaThreadExchangeStreamCaptureMode(cudart.cudaStreamCaptureModeGlobal)
    assert mode == cudart.cudaStreamCaptureModeThreadLocal


# The newest list, upstream's (77b08ff). The last seven members came with CUDA 13.0's
# header; on a 12.x runtime its own cudaDeviceProp lacks them, as C's does.
DEVICE_PROP_ATTRS = """
name uuid luid luidDeviceNodeMask totalGlobalMem sharedMemPerBlock regsPerBlock warpSize
memPitch maxThreadsPerBlock maxThreadsDim maxGridSize totalConstMem major minor
textureAlignment texturePitchAlignment multiProcessorCount integrated canMapHostMemory
maxTexture1D maxTexture1DMipmap maxTexture2D maxTexture2DMipmap maxTexture2DLinear
maxTexture2DGather maxTexture3D maxTexture3DAlt maxTextureCubemap maxTexture1DLayered
maxTexture2DLayered maxTextureCubemapLayered maxSurface1D maxSurface2D maxSurface3D
maxSurface1DLayered maxSurface2DLayered maxSurfaceCubemap maxSurfaceCubemapLayered
surfaceAlignment concurrentKernels ECCEnabled pciBusID pciDeviceID pciDomainID tccDriver
asyncEngineCount unifiedAddressing memoryBusWidth l2CacheSize persistingL2CacheMaxSize
maxThreadsPerMultiProcessor streamPrioritiesSupported globalL1CacheSupported
localL1CacheSupported sharedMemPerMultiprocessor regsPerMultiprocessor managedMemory
isMultiGpuBoard multiGpuBoardGroupID hostNativeAtomicSupported pageableMemoryAccess
concurrentManagedAccess computePreemptionSupported canUseHostPointerForRegisteredMem
cooperativeLaunch sharedMemPerBlockOptin pageableMemoryAccessUsesHostPageTables
directManagedMemAccessFromHost maxBlocksPerMultiProcessor accessPolicyMaxWindowSize
reservedSharedMemPerBlock hostRegisterSupported sparseCudaArraySupported
hostRegisterReadOnlySupported timelineSemaphoreInteropSupported memoryPoolsSupported
gpuDirectRDMASupported gpuDirectRDMAFlushWritesOptions gpuDirectRDMAWritesOrdering
memoryPoolSupportedHandleTypes deferredMappingCudaArraySupported ipcEventSupported
clusterLaunch unifiedFunctionPointers deviceNumaConfig deviceNumaId mpsEnabled hostNumaId
gpuPciDeviceID gpuPciSubsystemID hostNumaMultinodeIpcSupported
""".split()
DEVICE_PROP_SINCE_13 = DEVICE_PROP_ATTRS[-7:]
# What the 12.x-era list (test_cudart.py@11a9013) also checks: members 12.x has and
# CUDA 13.0 removed (its getPtr is a cuda-bindings method, not a member).
DEVICE_PROP_UNTIL_13 = """
clockRate computeMode cooperativeMultiDeviceLaunch deviceOverlap kernelExecTimeoutEnabled
maxTexture1DLinear memoryClockRate singleToDoublePrecisionPerfRatio
""".split()


def test_cudart_cudaGetDeviceProperties():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaGetDeviceProperties

    The attribute list is the newer file's; its last seven members are CUDA 13.0's. On
    12.x the older file's list is checked too, whose eight members 13.0 removed."""
    prop = cudart.cudaGetDeviceProperties(0)
    if runtime_version() >= 13000:
        attrs = DEVICE_PROP_ATTRS
    else:
        attrs = DEVICE_PROP_ATTRS[: -len(DEVICE_PROP_SINCE_13)] + DEVICE_PROP_UNTIL_13
    for attr in attrs:
        assert hasattr(prop, attr), attr
    assert len(prop.name.decode("utf-8")) != 0
    assert len(prop.uuid.bytes.hex()) != 0
    _external_semaphore_signal_node_params()


def test_cudart_MemPool_attr():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_MemPool_attr

    Needs the attribute values as Python values (issue 10 item 6): the getter returns
    the value, the setter takes it (upstream passes `cuda.cuuint64_t(9)`; here 9)."""
    if not supports_memory_pool():
        pytest.skip("When new attributes were introduced")
    poolProps = cudart.cudaMemPoolProps()
    poolProps.allocType = cudart.cudaMemAllocationTypePinned
    poolProps.location.id = 0
    poolProps.location.type = cudart.cudaMemLocationTypeDevice

    attr_list = [None] * 8
    pool = cudart.cudaMemPoolCreate(poolProps)

    for idx, attr in enumerate(
        [
            cudart.cudaMemPoolReuseFollowEventDependencies,
            cudart.cudaMemPoolReuseAllowOpportunistic,
            cudart.cudaMemPoolReuseAllowInternalDependencies,
            cudart.cudaMemPoolAttrReleaseThreshold,
            cudart.cudaMemPoolAttrReservedMemCurrent,
            cudart.cudaMemPoolAttrReservedMemHigh,
            cudart.cudaMemPoolAttrUsedMemCurrent,
            cudart.cudaMemPoolAttrUsedMemHigh,
        ]
    ):
        attr_list[idx] = cudart.cudaMemPoolGetAttribute(pool, attr)

    for attr in [
        cudart.cudaMemPoolReuseFollowEventDependencies,
        cudart.cudaMemPoolReuseAllowOpportunistic,
        cudart.cudaMemPoolReuseAllowInternalDependencies,
    ]:
        cudart.cudaMemPoolSetAttribute(pool, attr, 0)
    cudart.cudaMemPoolSetAttribute(pool, cudart.cudaMemPoolAttrReleaseThreshold, 9)

    for idx, attr in enumerate(
        [
            cudart.cudaMemPoolReuseFollowEventDependencies,
            cudart.cudaMemPoolReuseAllowOpportunistic,
            cudart.cudaMemPoolReuseAllowInternalDependencies,
            cudart.cudaMemPoolAttrReleaseThreshold,
        ]
    ):
        attr_list[idx] = cudart.cudaMemPoolGetAttribute(pool, attr)
    assert attr_list[0] == 0
    assert attr_list[1] == 0
    assert attr_list[2] == 0
    assert int(attr_list[3]) == 9

    cudart.cudaMemPoolDestroy(pool)


def test_cudart_make_api():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_make_api

    Needs the inline helpers of driver_functions.h (issue 10 item 4)."""
    channelDesc = cudart.cudaCreateChannelDesc(32, 0, 0, 0, cudart.cudaChannelFormatKindFloat)
    assert channelDesc.x == 32
    assert channelDesc.y == 0
    assert channelDesc.z == 0
    assert channelDesc.w == 0
    assert channelDesc.f == cudart.cudaChannelFormatKindFloat

    cudaPitchedPtr = cudart.make_cudaPitchedPtr(1, 2, 3, 4)
    assert cudaPitchedPtr.ptr == 1
    assert cudaPitchedPtr.pitch == 2
    assert cudaPitchedPtr.xsize == 3
    assert cudaPitchedPtr.ysize == 4

    cudaPos = cudart.make_cudaPos(1, 2, 3)
    assert cudaPos.x == 1
    assert cudaPos.y == 2
    assert cudaPos.z == 3

    cudaExtent = cudart.make_cudaExtent(1, 2, 3)
    assert cudaExtent.width == 1
    assert cudaExtent.height == 2
    assert cudaExtent.depth == 3


def test_cudart_cudaStreamGetCaptureInfo():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaStreamGetCaptureInfo"""
    stream = cudart.cudaStreamCreate()
    status, *info = cudart.cudaStreamGetCaptureInfo(stream)
    assert status == cudart.cudaStreamCaptureStatusNone

    cudart.cudaStreamBeginCapture(stream, cudart.cudaStreamCaptureModeGlobal)
    status, *info = cudart.cudaStreamGetCaptureInfo(stream)
    assert status == cudart.cudaStreamCaptureStatusActive

    cudart.cudaStreamEndCapture(stream)


def test_cudart_cudaArrayGetInfo():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaArrayGetInfo"""
    x, y, z, w = 8, 0, 0, 0
    f = cudart.cudaChannelFormatKindUnsigned
    desc = cudart.cudaCreateChannelDesc(x, y, z, w, f)

    width = 10
    height = 0
    inFlags = 0
    arr = cudart.cudaMallocArray(desc, width, height, inFlags)

    desc, extent, outFlags = cudart.cudaArrayGetInfo(arr)
    assert desc.x == x
    assert desc.y == y
    assert desc.z == z
    assert desc.w == w
    assert desc.f == f
    assert extent.width == width
    assert extent.height == height
    assert inFlags == outFlags

    cudart.cudaFreeArray(arr)


def test_cudart_cudaMemcpy2DToArray():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaMemcpy2DToArray"""
    np = numpy()
    size = int(1024 * np.uint8().itemsize)
    h1, h2 = uint8_pair(np, size)
    arr = cudart.cudaMallocArray(uchar_desc(), size, 0, 0)
    cudart.cudaMemcpy2DToArray(arr, 0, 0, h1, size, size, 1, cudart.cudaMemcpyHostToDevice)
    cudart.cudaMemcpy2DFromArray(h2, size, arr, 0, 0, size, 1, cudart.cudaMemcpyDeviceToHost)
    assert np.array_equal(h1, h2)
    cudart.cudaFreeArray(arr)


def test_cudart_cudaMemcpy2DToArray_DtoD():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaMemcpy2DToArray_DtoD"""
    np = numpy()
    size = 1024 * np.uint8().itemsize
    d1 = cudart.cudaMalloc(size)
    d2 = cudart.cudaMalloc(size)
    h1, h2 = uint8_pair(np, size)
    arr = cudart.cudaMallocArray(uchar_desc(), size, 0, 0)
    cudart.cudaMemcpy(d1, h1, size, cudart.cudaMemcpyHostToDevice)
    cudart.cudaMemcpy2DToArray(arr, 0, 0, d1, size, size, 1, cudart.cudaMemcpyDeviceToDevice)
    cudart.cudaMemcpy2DFromArray(d2, size, arr, 0, 0, size, 1, cudart.cudaMemcpyDeviceToDevice)
    cudart.cudaMemcpy(h2, d2, size, cudart.cudaMemcpyDeviceToHost)
    assert np.array_equal(h1, h2)
    cudart.cudaFreeArray(arr)
    cudart.cudaFree(d2)
    cudart.cudaFree(d1)


def test_cudart_cudaMemcpy2DArrayToArray():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaMemcpy2DArrayToArray"""
    np = numpy()
    size = 1024 * np.uint8().itemsize
    h1, h2 = uint8_pair(np, size)
    a1 = cudart.cudaMallocArray(uchar_desc(), size, 0, 0)
    a2 = cudart.cudaMallocArray(uchar_desc(), size, 0, 0)
    cudart.cudaMemcpy2DToArray(a1, 0, 0, h1, size, size, 1, cudart.cudaMemcpyHostToDevice)
    cudart.cudaMemcpy2DArrayToArray(a2, 0, 0, a1, 0, 0, size, 1, cudart.cudaMemcpyDeviceToDevice)
    cudart.cudaMemcpy2DFromArray(h2, size, a2, 0, 0, size, 1, cudart.cudaMemcpyDeviceToHost)
    assert np.array_equal(h1, h2)
    cudart.cudaFreeArray(a2)
    cudart.cudaFreeArray(a1)


def test_cudart_cudaMemcpyArrayToArray():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaMemcpyArrayToArray"""
    np = numpy()
    size = 1024 * np.uint8().itemsize
    h1, h2 = uint8_pair(np, size)
    a1 = cudart.cudaMallocArray(uchar_desc(), size, 0, 0)
    a2 = cudart.cudaMallocArray(uchar_desc(), size, 0, 0)
    cudart.cudaMemcpy2DToArray(a1, 0, 0, h1, size, size, 1, cudart.cudaMemcpyHostToDevice)
    cudart.cudaMemcpyArrayToArray(a2, 0, 0, a1, 0, 0, size, cudart.cudaMemcpyDeviceToDevice)
    cudart.cudaMemcpy2DFromArray(h2, size, a2, 0, 0, size, 1, cudart.cudaMemcpyDeviceToHost)
    assert np.array_equal(h1, h2)
    cudart.cudaFreeArray(a2)
    cudart.cudaFreeArray(a1)


def test_cudart_cudaGetChannelDesc():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaGetChannelDesc"""
    x, y, z, w = 8, 0, 0, 0
    f = cudart.cudaChannelFormatKindUnsigned
    desc = cudart.cudaCreateChannelDesc(x, y, z, w, f)
    arr = cudart.cudaMallocArray(desc, 10, 0, 0)
    desc = cudart.cudaGetChannelDesc(arr)
    assert desc.x == x
    assert desc.y == y
    assert desc.z == z
    assert desc.w == w
    assert desc.f == f
    cudart.cudaFreeArray(arr)


def _field_value(value):
    """A field as a comparable value: ctypes arrays compare by identity, lists by items."""
    if isinstance(value, ctypes.Array):
        return [_field_value(v) for v in value]
    return value


def test_cudart_cudaGetTextureObjectTextureDesc():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaGetTextureObjectTextureDesc

    Upstream compares every public attribute but borderColor (and its getPtr); here
    the struct's C fields but borderColor."""
    channelDesc = uchar_desc()
    arr = cudart.cudaMallocArray(channelDesc, 1024, 0, 0)

    resDesc = cudart.cudaResourceDesc()
    resDesc.res.array.array = arr
    inTexDesc = cudart.cudaTextureDesc()

    texObject = cudart.cudaCreateTextureObject(resDesc, inTexDesc, None)
    outTexDesc = cudart.cudaGetTextureObjectTextureDesc(texObject)

    for name, *_ in type(outTexDesc)._fields_:
        if name == "borderColor" or name.startswith("_"):
            continue
        assert _field_value(getattr(outTexDesc, name)) == _field_value(
            getattr(inTexDesc, name)
        ), name

    cudart.cudaDestroyTextureObject(texObject)
    cudart.cudaFreeArray(arr)


def test_cudart_cudaMemset3D():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaMemset3D (needs make_cudaExtent, issue 10 item 4)"""
    np = numpy()
    size = 1024 * np.uint8().itemsize
    h1, h2 = uint8_pair(np, size)
    devExtent = cudart.make_cudaExtent(32, 32, 1)
    devPitchedPtr = cudart.cudaMalloc3D(devExtent)
    memExtent = cudart.make_cudaExtent(devPitchedPtr.pitch, devPitchedPtr.ysize, 1)
    cudart.cudaMemset3D(devPitchedPtr, 1, memExtent)
    cudart.cudaMemcpy(h2, devPitchedPtr.ptr, size, cudart.cudaMemcpyDeviceToHost)
    assert np.array_equal(h1, h2)
    cudart.cudaFree(devPitchedPtr.ptr)


def test_cudart_cudaMemset3D_2D():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaMemset3D_2D (needs make_cudaExtent, issue 10 item 4)"""
    np = numpy()
    size = 512 * np.uint8().itemsize
    h1, h2 = uint8_pair(np, size)
    devExtent = cudart.make_cudaExtent(1024, 1, 1)
    devPitchedPtr = cudart.cudaMalloc3D(devExtent)
    memExtent = cudart.make_cudaExtent(size, devPitchedPtr.ysize, 1)
    cudart.cudaMemset3D(devPitchedPtr, 1, memExtent)
    cudart.cudaMemcpy(h2, devPitchedPtr.ptr, size, cudart.cudaMemcpyDeviceToHost)
    assert np.array_equal(h1, h2)
    cudart.cudaFree(devPitchedPtr.ptr)


def test_cudart_cudaMemcpyToArray():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaMemcpyToArray"""
    np = numpy()
    size = 1024 * np.uint8().itemsize
    h1, h2 = uint8_pair(np, size)
    arr = cudart.cudaMallocArray(uchar_desc(), size, 0, 0)
    cudart.cudaMemcpyToArray(arr, 0, 0, h1, size, cudart.cudaMemcpyHostToDevice)
    cudart.cudaMemcpyFromArray(h2, arr, 0, 0, size, cudart.cudaMemcpyDeviceToHost)
    assert np.array_equal(h1, h2)
    cudart.cudaFreeArray(arr)


def test_cudart_cudaMemcpyToArray_DtoD():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaMemcpyToArray_DtoD"""
    np = numpy()
    size = int(1024 * np.uint8().itemsize)
    d1 = cudart.cudaMalloc(size)
    d2 = cudart.cudaMalloc(size)
    h1, h2 = uint8_pair(np, size)
    arr = cudart.cudaMallocArray(uchar_desc(), size, 0, 0)
    cudart.cudaMemcpy(d1, h1, size, cudart.cudaMemcpyHostToDevice)
    cudart.cudaMemcpyToArray(arr, 0, 0, d1, size, cudart.cudaMemcpyDeviceToDevice)
    cudart.cudaMemcpyFromArray(d2, arr, 0, 0, size, cudart.cudaMemcpyDeviceToDevice)
    cudart.cudaMemcpy(h2, d2, size, cudart.cudaMemcpyDeviceToHost)
    assert np.array_equal(h1, h2)
    cudart.cudaFreeArray(arr)
    cudart.cudaFree(d2)
    cudart.cudaFree(d1)


def test_cudart_cudaMemcpy3DAsync():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaMemcpy3DAsync (needs make_cudaPitchedPtr/make_cudaExtent,
    issue 10 item 4). The pitched pointer holds h1's address, as C's does."""
    np = numpy()
    size = int(1024 * np.uint8().itemsize)
    h1, h2 = uint8_pair(np, size)
    arr = cudart.cudaMallocArray(uchar_desc(), size, 0, 0)
    stream = cudart.cudaStreamCreate()

    params = cudart.cudaMemcpy3DParms()
    params.srcPtr = cudart.make_cudaPitchedPtr(address(h1), size, 1, 1)
    params.dstArray = arr
    params.extent = cudart.make_cudaExtent(size, 1, 1)
    params.kind = cudart.cudaMemcpyHostToDevice

    cudart.cudaMemcpy3DAsync(params, stream)
    cudart.cudaStreamSynchronize(stream)
    cudart.cudaMemcpy2DFromArray(h2, size, arr, 0, 0, size, 1, cudart.cudaMemcpyDeviceToHost)
    assert np.array_equal(h1, h2)
    cudart.cudaFreeArray(arr)
    cudart.cudaStreamDestroy(stream)


def test_cudart_cudaGraphAddMemcpyNode1D():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaGraphAddMemcpyNode1D"""
    np = numpy()
    size = 1024 * np.uint8().itemsize
    dptr = cudart.cudaMalloc(size)
    h1, h2 = uint8_pair(np, size)
    graph = cudart.cudaGraphCreate(0)
    hToDNode = cudart.cudaGraphAddMemcpyNode1D(
        graph, [], 0, dptr, h1, size, cudart.cudaMemcpyHostToDevice
    )
    cudart.cudaGraphAddMemcpyNode1D(
        graph, [hToDNode], 1, h2, dptr, size, cudart.cudaMemcpyDeviceToHost
    )
    stream = cudart.cudaStreamCreate()
    execGraph = cudart.cudaGraphInstantiate(graph, 0)
    cudart.cudaGraphLaunch(execGraph, stream)
    cudart.cudaStreamSynchronize(stream)
    assert np.array_equal(h1, h2)
    cudart.cudaGraphExecDestroy(execGraph)
    cudart.cudaGraphDestroy(graph)
    cudart.cudaStreamDestroy(stream)
    cudart.cudaFree(dptr)


def test_cudart_cudaGraphAddMemsetNode():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaGraphAddMemsetNode"""
    np = numpy()
    size = 1024 * np.uint8().itemsize
    dptr = cudart.cudaMalloc(size)
    h1, h2 = uint8_pair(np, size)
    graph = cudart.cudaGraphCreate(0)

    params = cudart.cudaMemsetParams()
    params.dst = dptr
    params.pitch = size
    params.value = 1
    params.elementSize = 1
    params.width = size
    params.height = 1

    setNode = cudart.cudaGraphAddMemsetNode(graph, [], 0, params)
    cudart.cudaGraphAddMemcpyNode1D(
        graph, [setNode], 1, h2, dptr, size, cudart.cudaMemcpyDeviceToHost
    )
    stream = cudart.cudaStreamCreate()
    execGraph = cudart.cudaGraphInstantiate(graph, 0)
    cudart.cudaGraphLaunch(execGraph, stream)
    cudart.cudaStreamSynchronize(stream)
    assert np.array_equal(h1, h2)
    cudart.cudaGraphExecDestroy(execGraph)
    cudart.cudaGraphDestroy(graph)
    cudart.cudaStreamDestroy(stream)
    cudart.cudaFree(dptr)


def _memcpy3d_peer(asynchronous: bool):
    np = numpy()
    size = int(1024 * np.uint8().itemsize)
    dptr = cudart.cudaMalloc(size)
    h1, h2 = uint8_pair(np, size)
    arr = cudart.cudaMallocArray(uchar_desc(), size, 0, 0)
    stream = cudart.cudaStreamCreate() if asynchronous else None

    params = cudart.cudaMemcpy3DPeerParms()
    params.srcPtr = cudart.make_cudaPitchedPtr(dptr, size, 1, 1)
    params.dstArray = arr
    params.extent = cudart.make_cudaExtent(size, 1, 1)

    cudart.cudaMemcpy(dptr, h1, size, cudart.cudaMemcpyHostToDevice)
    if asynchronous:
        cudart.cudaStreamSynchronize(0)  # upstream: the DMA to device memory has completed
        cudart.cudaMemcpy3DPeerAsync(params, stream)
        cudart.cudaStreamSynchronize(stream)
    else:
        cudart.cudaMemcpy3DPeer(params)
    cudart.cudaMemcpy2DFromArray(h2, size, arr, 0, 0, size, 1, cudart.cudaMemcpyDeviceToHost)
    assert np.array_equal(h1, h2)
    cudart.cudaFreeArray(arr)
    cudart.cudaFree(dptr)
    if stream is not None:
        cudart.cudaStreamDestroy(stream)


def test_cudart_cudaMemcpy3DPeer():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaMemcpy3DPeer (needs make_cudaPitchedPtr/make_cudaExtent)"""
    _memcpy3d_peer(asynchronous=False)


def test_cudart_cudaMemcpy3DPeerAsync():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_cudaMemcpy3DPeerAsync (needs make_cudaPitchedPtr/make_cudaExtent)"""
    _memcpy3d_peer(asynchronous=True)


def test_profiler():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_profiler (needs cudaProfilerStart/Stop, issue 10 item 4)"""
    cudart.cudaProfilerStart()
    cudart.cudaProfilerStop()


def _pitch(p):
    return [int(p.ptr or 0), int(p.pitch), int(p.xsize), int(p.ysize)]


def test_cudart_eglFrame():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_eglFrame (needs the EGL interop types, issue 10 item 4)

    Arrays are assigned as ctypes arrays (upstream assigns lists), and `x`, a struct
    read out of the frame, is copied before it is kept: a ctypes field is a view of the
    frame, where upstream's wrapper is a copy."""
    frame = cudart.cudaEglFrame()
    pArray = type(frame.frame.pArray)
    pPitch = type(frame.frame.pPitch)
    assert [int(frame.frame.pArray[i]) for i in range(3)] == [0, 0, 0]
    frame.frame.pArray = pArray(1, 2, 3)
    assert [int(frame.frame.pArray[i]) for i in range(3)] == [1, 2, 3]
    frame.frame.pArray = pArray(1, 2, cudart.cudaArray_t(4))
    assert [int(frame.frame.pArray[i]) for i in range(3)] == [1, 2, 4]
    # pArray and pPitch share the union's bytes.
    assert _pitch(frame.frame.pPitch[0]) == [1, 2, 4, 0]
    assert _pitch(frame.frame.pPitch[1]) == [0, 0, 0, 0]
    assert _pitch(frame.frame.pPitch[2]) == [0, 0, 0, 0]
    frame.frame.pPitch = pPitch(
        cudart.cudaPitchedPtr(), cudart.cudaPitchedPtr(), cudart.cudaPitchedPtr()
    )
    for i in range(3):
        assert _pitch(frame.frame.pPitch[i]) == [0, 0, 0, 0]
    x = cudart.cudaPitchedPtr.from_buffer_copy(frame.frame.pPitch[0])
    x.pitch = 123
    frame.frame.pPitch = pPitch(x, x, x)
    for i in range(3):
        assert _pitch(frame.frame.pPitch[i]) == [0, 123, 0, 0]
    x.pitch = 1234
    for i in range(3):
        assert _pitch(frame.frame.pPitch[i]) == [0, 123, 0, 0]


class _TestStruct(ctypes.Structure):
    _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_int), ("c", ctypes.c_int)]


def _cudart_func_stream_callback(use_host_api: bool):
    """Upstream's helper: C function pointers (ctypes) with a ctypes struct's address
    as userData. The callbacks record what they read; the test asserts it afterwards
    (an assert inside a ctypes callback would only be printed)."""
    seen = []

    def task_callback_host(userData):
        data = _TestStruct.from_address(userData)
        seen.append((data.a, data.b, data.c))

    def task_callback_stream(stream, status, userData):
        data = _TestStruct.from_address(userData)
        seen.append((data.a, data.b, data.c))

    if use_host_api:
        callback = cudart.sys.cudaHostFn_t(task_callback_host)
    else:
        callback = cudart.sys.cudaStreamCallback_t(task_callback_stream)
    c_data = _TestStruct(1, 2, 3)

    stream = cudart.cudaStreamCreate()
    if use_host_api:
        cudart.cudaLaunchHostFunc(stream, callback, ctypes.addressof(c_data))
    else:
        cudart.cudaStreamAddCallback(stream, callback, ctypes.addressof(c_data), 0)
    cudart.cudaDeviceSynchronize()
    assert seen == [(1, 2, 3)]
    cudart.cudaStreamDestroy(stream)


def test_cudart_func_callback():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_func_callback"""
    _cudart_func_stream_callback(use_host_api=False)
    _cudart_func_stream_callback(use_host_api=True)


def test_cudart_conditional():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff and test_cudart.py@11a9013,
    test_cudart_conditional

    `phGraph_out` is a `cudaGraph_t *` the runtime fills in: NULL before the node is
    added (upstream: a list of one NULL handle), the body graph after."""
    require("cudaGraphConditionalHandleCreate", since=12030)
    graph = cudart.cudaGraphCreate(0)
    handle = cudart.cudaGraphConditionalHandleCreate(graph, 0, 0)

    params = cudart.cudaGraphNodeParams()
    params.type = cudart.cudaGraphNodeTypeConditional
    params.conditional.handle = handle
    params.conditional.type = cudart.cudaGraphCondTypeIf
    params.conditional.size = 1

    assert not params.conditional.phGraph_out
    graph_add_node(graph, params)

    assert params.conditional.phGraph_out
    assert int(params.conditional.phGraph_out[0]) != 0
    cudart.cudaGraphDestroy(graph)


HANDLE_KINDS = (
    "cudaStream_t",
    "cudaEvent_t",
    "cudaGraph_t",
    "cudaGraphNode_t",
    "cudaGraphExec_t",
    "cudaMemPool_t",
)


@pytest.mark.parametrize("target", HANDLE_KINDS)
def test_struct_pointer_comparison(target):
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff, test_struct_pointer_comparison"""
    kind = getattr(cudart, target)
    a = kind(123)
    b = kind(123)
    assert a == b
    assert hash(a) == hash(b)
    c = kind(456)
    assert a != c
    assert hash(a) != hash(c)


def test_getLocalRuntimeVersion():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff, test_getLocalRuntimeVersion

    cuda-bindings' getLocalRuntimeVersion finds and loads libcudart afresh at each call
    and asks it its version; the regression was that doing so again crashed. cudart's
    own search and load (what load_runtime does once per process) runs ten times here,
    and each finds the library the process loaded, which still answers after it."""
    loaded = cudart.load_runtime()
    for _ in range(10):
        found = _loader._load_first()
        assert (found.path, found.version) == (loaded.path, loaded.version)
        assert found.version >= 12000
        assert cudart.cudaRuntimeGetVersion() == loaded.version


# ---- CUDA 13.1 additions: upstream skips them below a 13.1 driver, and so do these.


def test_cudaGraphGetId():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff, test_cudaGraphGetId"""
    require("cudaGraphGetId", since=13010)
    graph = cudart.cudaGraphCreate(0)
    graph_id = cudart.cudaGraphGetId(graph)
    assert isinstance(graph_id, int)
    assert graph_id > 0
    graph2 = cudart.cudaGraphCreate(0)
    graph_id2 = cudart.cudaGraphGetId(graph2)
    assert graph_id2 != graph_id
    cudart.cudaGraphDestroy(graph)
    cudart.cudaGraphDestroy(graph2)


def test_cudaGraphExecGetId():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff, test_cudaGraphExecGetId"""
    require("cudaGraphExecGetId", since=13010)
    stream = cudart.cudaStreamCreate()
    graph = cudart.cudaGraphCreate(0)
    cudart.cudaGraphAddEmptyNode(graph, None, 0)
    graphExec = cudart.cudaGraphInstantiate(graph, 0)
    graph_exec_id = cudart.cudaGraphExecGetId(graphExec)
    assert isinstance(graph_exec_id, int)
    assert graph_exec_id > 0

    graph2 = cudart.cudaGraphCreate(0)
    cudart.cudaGraphAddEmptyNode(graph2, None, 0)
    graphExec2 = cudart.cudaGraphInstantiate(graph2, 0)
    graph_exec_id2 = cudart.cudaGraphExecGetId(graphExec2)
    assert graph_exec_id2 != graph_exec_id

    cudart.cudaGraphExecDestroy(graphExec)
    cudart.cudaGraphExecDestroy(graphExec2)
    cudart.cudaGraphDestroy(graph)
    cudart.cudaGraphDestroy(graph2)
    cudart.cudaStreamDestroy(stream)


def test_cudaGraphNodeGetLocalId():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff, test_cudaGraphNodeGetLocalId"""
    require("cudaGraphNodeGetLocalId", since=13010)
    graph = cudart.cudaGraphCreate(0)
    node1 = cudart.cudaGraphAddEmptyNode(graph, None, 0)
    node2 = cudart.cudaGraphAddEmptyNode(graph, [node1], 1)
    node3 = cudart.cudaGraphAddEmptyNode(graph, [node1, node2], 2)

    node_id1 = cudart.cudaGraphNodeGetLocalId(node1)
    assert isinstance(node_id1, int)
    assert node_id1 >= 0
    node_id2 = cudart.cudaGraphNodeGetLocalId(node2)
    assert isinstance(node_id2, int)
    assert node_id2 >= 0
    assert node_id2 != node_id1
    node_id3 = cudart.cudaGraphNodeGetLocalId(node3)
    assert isinstance(node_id3, int)
    assert node_id3 >= 0
    assert node_id3 != node_id1
    assert node_id3 != node_id2
    cudart.cudaGraphDestroy(graph)


def test_cudaGraphNodeGetToolsId():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff, test_cudaGraphNodeGetToolsId"""
    require("cudaGraphNodeGetToolsId", since=13010)
    graph = cudart.cudaGraphCreate(0)
    node = cudart.cudaGraphAddEmptyNode(graph, None, 0)
    tools_node_id = cudart.cudaGraphNodeGetToolsId(node)
    assert isinstance(tools_node_id, int)
    assert tools_node_id >= 0
    node2 = cudart.cudaGraphAddEmptyNode(graph, [node], 1)
    tools_node_id2 = cudart.cudaGraphNodeGetToolsId(node2)
    assert tools_node_id2 != tools_node_id
    cudart.cudaGraphDestroy(graph)


def test_cudaGraphNodeGetContainingGraph():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff,
    test_cudaGraphNodeGetContainingGraph"""
    require("cudaGraphNodeGetContainingGraph", since=13010)
    graph = cudart.cudaGraphCreate(0)
    node = cudart.cudaGraphAddEmptyNode(graph, None, 0)
    containing_graph = cudart.cudaGraphNodeGetContainingGraph(node)
    assert int(containing_graph) == int(graph)

    child_graph = cudart.cudaGraphCreate(0)
    child_node = cudart.cudaGraphAddEmptyNode(child_graph, None, 0)

    childGraphNodeParams = cudart.cudaGraphNodeParams()
    childGraphNodeParams.type = cudart.cudaGraphNodeTypeGraph
    childGraphNodeParams.graph.graph = child_graph
    try:
        child_graph_node = cudart.cudaGraphAddNode(graph, None, None, 0, childGraphNodeParams)
    except cudart.CudaError:  # upstream: `if isSuccess(err)`
        clear_last_error()
    else:
        containing_graph_for_child = cudart.cudaGraphNodeGetContainingGraph(child_graph_node)
        assert int(containing_graph_for_child) == int(graph)
        containing_graph_for_nested = cudart.cudaGraphNodeGetContainingGraph(child_node)
        assert int(containing_graph_for_nested) == int(child_graph)

    cudart.cudaGraphDestroy(graph)
    cudart.cudaGraphDestroy(child_graph)


def assert_device_sm_resource(resource) -> None:
    """What upstream's `resource is not None` stands for (a cudaDevResource is never
    None here): an SM resource, filled in with the whole device's SMs."""
    assert resource.type == cudart.cudaDevResourceTypeSm
    assert resource.sm.smCount == device_attribute(cudart.cudaDevAttrMultiProcessorCount)


def assert_handle(handle) -> None:
    """What upstream's `handle is not None` stands for: a handle the call made, which
    here is a non-NULL one (a NULL handle is an object too, so `is not None` passes it)."""
    assert int(handle) != 0


def test_cudaStreamGetDevResource():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff, test_cudaStreamGetDevResource"""
    require("cudaStreamGetDevResource", since=13010)
    stream = cudart.cudaStreamCreate()
    resource = cudart.cudaStreamGetDevResource(stream, cudart.cudaDevResourceTypeSm)
    assert_device_sm_resource(resource)
    cudart.cudaStreamDestroy(stream)


def test_cudaDeviceGetDevResource():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff, test_cudaDeviceGetDevResource"""
    require("cudaDeviceGetDevResource", since=13010)
    resource = cudart.cudaDeviceGetDevResource(0, cudart.cudaDevResourceTypeSm)
    assert_device_sm_resource(resource)


def test_cudaExecutionCtxGetDevResource():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff,
    test_cudaExecutionCtxGetDevResource"""
    require("cudaDeviceGetExecutionCtx", since=13010)
    exec_ctx = cudart.cudaDeviceGetExecutionCtx(0)
    assert_handle(exec_ctx)
    resource = cudart.cudaExecutionCtxGetDevResource(exec_ctx, cudart.cudaDevResourceTypeSm)
    assert_device_sm_resource(resource)


def test_cudaExecutionCtxGetDevice():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff, test_cudaExecutionCtxGetDevice"""
    require("cudaDeviceGetExecutionCtx", since=13010)
    device = 0
    exec_ctx = cudart.cudaDeviceGetExecutionCtx(device)
    assert_handle(exec_ctx)
    device_from_ctx = cudart.cudaExecutionCtxGetDevice(exec_ctx)
    assert device_from_ctx == device


def test_cudaExecutionCtxGetId():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff, test_cudaExecutionCtxGetId"""
    require("cudaDeviceGetExecutionCtx", since=13010)
    exec_ctx = cudart.cudaDeviceGetExecutionCtx(0)
    assert_handle(exec_ctx)
    ctx_id = cudart.cudaExecutionCtxGetId(exec_ctx)
    assert isinstance(ctx_id, int)
    assert ctx_id > 0
    exec_ctx2 = cudart.cudaDeviceGetExecutionCtx(0)
    assert int(exec_ctx2) == int(exec_ctx)
    ctx_id2 = cudart.cudaExecutionCtxGetId(exec_ctx2)
    assert ctx_id2 == ctx_id


def _sm_groups(n):
    group_params = (cudart.cudaDevSmResourceGroupParams * n)()
    for g in group_params:
        g.smCount = 4
        g.coscheduledSmCount = 2
    return group_params


def assert_split_of(whole, groups, remainder) -> None:
    """What upstream's `rem is not None or len(res) > 0` stands for: the groups are SM
    resources of the 4 SMs each that _sm_groups asks for, and with the remainder they
    account for every SM of the input."""
    assert [(g.type, g.sm.smCount) for g in groups] == [(cudart.cudaDevResourceTypeSm, 4)] * len(
        groups
    )
    assert remainder.type in (cudart.cudaDevResourceTypeSm, cudart.cudaDevResourceTypeInvalid)
    left = remainder.sm.smCount if remainder.type == cudart.cudaDevResourceTypeSm else 0
    assert 4 * len(groups) + left == whole.sm.smCount


def test_cudaDevSmResourceSplit():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff, test_cudaDevSmResourceSplit

    Written against the C shape: `result` is an output array of nbGroups resources and
    `remainder` an output, so the call is
    cudaDevSmResourceSplit(nbGroups, input, flags, groupParams) -> (result, remainder),
    the generated form since `result` is sized by nbGroups ("the number of groups in
    result") and `remainder` is an exceptions-table output."""
    require("cudaDevSmResourceSplit", since=13010)
    device = 0
    resource_in = cudart.cudaDeviceGetDevResource(device, cudart.cudaDevResourceTypeSm)

    nb_groups = 1
    res, rem = cudart.cudaDevSmResourceSplit(nb_groups, resource_in, 0, _sm_groups(1))
    assert len(res) == nb_groups
    assert_split_of(resource_in, res, rem)

    resource_in = cudart.cudaDeviceGetDevResource(device, cudart.cudaDevResourceTypeSm)
    nb_groups = 2
    try:
        res, rem = cudart.cudaDevSmResourceSplit(nb_groups, resource_in, 0, _sm_groups(2))
    except (cudart.CudaErrorInvalidResourceConfiguration, cudart.CudaErrorInvalidValue):
        clear_last_error()  # too few SMs: a CUDA error, not a binding error
    else:
        assert len(res) == nb_groups
        assert_split_of(resource_in, res, rem)

    nb_groups = 0
    try:
        res, rem = cudart.cudaDevSmResourceSplit(nb_groups, resource_in, 0, [])
    except (cudart.CudaErrorInvalidValue, cudart.CudaErrorInvalidResourceConfiguration):
        clear_last_error()
    else:
        assert len(res) == 0


def test_cudaDevSmResourceSplitByCount():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff,
    test_cudaDevSmResourceSplitByCount

    Written against the C shape: `nbGroups` is in/out (0 with a NULL result asks for
    the count), `result` an output array, `remaining` an output, so the call is
    cudaDevSmResourceSplitByCount(nbGroups, input, flags, minCount)
    -> (result, nbGroups, remaining), the generated form (exceptions-table entries and
    resolve.COUNTED_ARRAYS). It needs a 13.1+ driver; test_cuda_python_cudart_cpu.py
    checks its arguments on the CPU."""
    require("cudaDevSmResourceSplitByCount", since=13010)
    resource_in = cudart.cudaDeviceGetDevResource(0, cudart.cudaDevResourceTypeSm)
    res, count, rem = cudart.cudaDevSmResourceSplitByCount(0, resource_in, 0, 2)
    assert count > 0
    assert len(res) == 0
    res, count_same, rem = cudart.cudaDevSmResourceSplitByCount(count, resource_in, 0, 2)
    assert count == count_same
    assert len(res) == count


def test_cudaDevResourceGenerateDesc():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff, test_cudaDevResourceGenerateDesc

    Written against the C shape: `resources` is an input array, so the call is
    cudaDevResourceGenerateDesc(resources, nbResources) -> phDesc, the generated form
    since `resources` is an exceptions-table input."""
    require("cudaDevResourceGenerateDesc", since=13010)
    resource = cudart.cudaDeviceGetDevResource(0, cudart.cudaDevResourceTypeSm)
    resources = [resource]
    desc = cudart.cudaDevResourceGenerateDesc(resources, len(resources))
    assert_handle(desc)


def test_cudaGreenCtxCreate():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff, test_cudaGreenCtxCreate
    (the same cudaDevResourceGenerateDesc shape as test_cudaDevResourceGenerateDesc)"""
    require("cudaGreenCtxCreate", since=13010)
    device = 0
    cudart.cudaSetDevice(device)
    resource = cudart.cudaDeviceGetDevResource(device, cudart.cudaDevResourceTypeSm)
    resources = [resource]
    desc = cudart.cudaDevResourceGenerateDesc(resources, len(resources))
    green_ctx = cudart.cudaGreenCtxCreate(desc, device, 0)
    assert_handle(green_ctx)
    cudart.cudaExecutionCtxDestroy(green_ctx)


def test_cudaExecutionCtxStreamCreate():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff,
    test_cudaExecutionCtxStreamCreate"""
    require("cudaExecutionCtxStreamCreate", since=13010)
    exec_ctx = cudart.cudaDeviceGetExecutionCtx(0)
    assert_handle(exec_ctx)
    stream = cudart.cudaExecutionCtxStreamCreate(exec_ctx, 0, 0)
    assert_handle(stream)
    cudart.cudaStreamDestroy(stream)


def test_cudaGraphConditionalHandleCreate_v2():
    """Upstream NVIDIA/cuda-python: test_legacy_cudart.py@77b08ff,
    test_cudaGraphConditionalHandleCreate_v2"""
    require("cudaGraphConditionalHandleCreate_v2", since=13010)
    graph = cudart.cudaGraphCreate(0)
    exec_ctx = cudart.cudaDeviceGetExecutionCtx(0)
    handle = cudart.cudaGraphConditionalHandleCreate_v2(graph, exec_ctx, 0, 0)
    # A conditional handle is an integer the graph numbers (0 is a valid one): what
    # upstream's `is not None` can mean is that each create makes its own.
    assert isinstance(handle, int)
    assert cudart.cudaGraphConditionalHandleCreate_v2(graph, exec_ctx, 0, 0) != handle
    cudart.cudaGraphDestroy(graph)
