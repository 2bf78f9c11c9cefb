"""Handle lifetimes on a GPU (issue 11, item 3): a second destroy, or any use, of a
handle object that a checked destroy ended raises cudart.HandleDestroyedError before
C sees it (before this, a second cudaStreamDestroy or cudaEventDestroy segfaulted).

Every handle kind the checked layer can create here is made through the checked API,
destroyed once for real, then destroyed again and used: each must raise the error,
and the process must live on (a signal would end the whole run). A create that
returns a destroyed handle's address gives a live object.
"""

from __future__ import annotations

import ctypes
import gc
import struct
from pathlib import Path

import pytest

import cudart
from cudart import HandleDestroyedError
from cudart._contract import declares
from cudart._handles import destroyed_by
from cudart.kernels import load_module

KERNELS = Path(__file__).resolve().parent.parent / "kernels"


def refused(destroy, handle, *, uses=(), name=None):
    """Destroy once, then again (refused), then each use refused, naming the handle,
    its address and the destroy (`name`, where `destroy` wraps it)."""
    name = name or destroy.__name__
    kind, address = type(handle).__name__, int(handle)
    assert address != 0 and destroyed_by(handle) is None
    destroy(handle)
    assert destroyed_by(handle) == name
    calls = [destroy, *uses]
    for call in calls:
        with pytest.raises(HandleDestroyedError) as caught:
            call(handle)
        error = caught.value
        assert (error.kind, error.address, error.destroyed_by) == (
            kind,
            address,
            name,
        )


def test_stream():
    stream = cudart.cudaStreamCreate()
    assert cudart.cudaStreamQuery(stream) is True
    refused(
        cudart.cudaStreamDestroy,
        stream,
        uses=[
            cudart.cudaStreamQuery,
            cudart.cudaStreamSynchronize,
            lambda s: cudart.cudaMemsetAsync(0, 0, 0, s),
        ],
    )


def test_stream_with_flags_and_the_default_stream_lives_on():
    stream = cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking)
    refused(cudart.cudaStreamDestroy, stream, uses=[cudart.cudaStreamQuery])
    # Work on the default stream is untouched by the destroyed one.
    for default in (None, 0, cudart.sys.cudaStream_t()):
        assert cudart.cudaStreamQuery(default) is True


def test_event():
    event = cudart.cudaEventCreate()
    cudart.cudaEventRecord(event, 0)
    cudart.cudaEventSynchronize(event)
    refused(
        cudart.cudaEventDestroy,
        event,
        uses=[cudart.cudaEventQuery, lambda e: cudart.cudaEventRecord(e, 0)],
    )


def test_graph_exec_and_node():
    graph = cudart.cudaGraphCreate(0)
    node = cudart.cudaGraphAddEmptyNode(graph, None, 0)
    kept = cudart.cudaGraphAddEmptyNode(graph, None, 0)
    refused(
        cudart.cudaGraphDestroyNode,
        node,
        uses=[
            cudart.cudaGraphNodeGetType,
            lambda n: cudart.cudaGraphAddEmptyNode(graph, [kept, n], 2),
        ],
    )
    exec_ = cudart.cudaGraphInstantiate(graph, 0)
    cudart.cudaGraphLaunch(exec_, 0)
    cudart.cudaDeviceSynchronize()
    refused(cudart.cudaGraphExecDestroy, exec_, uses=[lambda e: cudart.cudaGraphLaunch(e, 0)])
    refused(
        cudart.cudaGraphDestroy,
        graph,
        uses=[lambda g: cudart.cudaGraphInstantiate(g, 0), cudart.cudaGraphClone],
    )


def test_mem_pool():
    props = cudart.cudaMemPoolProps()
    props.allocType = cudart.cudaMemAllocationTypePinned
    props.location.type = cudart.cudaMemLocationTypeDevice
    props.location.id = cudart.cudaGetDevice()
    pool = cudart.cudaMemPoolCreate(props)
    refused(
        cudart.cudaMemPoolDestroy,
        pool,
        uses=[
            lambda p: cudart.cudaMemPoolGetAttribute(p, cudart.cudaMemPoolAttrReleaseThreshold),
            lambda p: cudart.cudaMemPoolTrimTo(p, 0),
        ],
    )


def _float_desc():
    return cudart.cudaCreateChannelDesc(32, 0, 0, 0, cudart.cudaChannelFormatKindFloat)


def test_array():
    array = cudart.cudaMallocArray(_float_desc(), 64, 0, 0)
    refused(cudart.cudaFreeArray, array, uses=[cudart.cudaArrayGetInfo])


def test_mipmapped_array():
    extent = cudart.cudaExtent(64, 64, 0)
    mipmapped = cudart.cudaMallocMipmappedArray(_float_desc(), extent, 2, 0)
    level = cudart.cudaGetMipmappedArrayLevel(mipmapped, 1)
    assert int(level) != 0
    refused(
        cudart.cudaFreeMipmappedArray,
        mipmapped,
        uses=[lambda m: cudart.cudaGetMipmappedArrayLevel(m, 0)],
    )


def _array_resource(flags):
    array = cudart.cudaMallocArray(_float_desc(), 64, 64, flags)
    resource = cudart.cudaResourceDesc()
    resource.resType = cudart.cudaResourceTypeArray
    resource.res.array.array = array
    return array, resource


def test_texture_object():
    array, resource = _array_resource(0)
    try:
        texture = cudart.cudaCreateTextureObject(resource, cudart.cudaTextureDesc(), None)
        assert isinstance(texture, int) and type(texture).__name__ == "cudaTextureObject_t"
        assert cudart.cudaGetTextureObjectResourceDesc(texture).resType == (
            cudart.cudaResourceTypeArray
        )
        refused(
            cudart.cudaDestroyTextureObject,
            texture,
            uses=[
                cudart.cudaGetTextureObjectResourceDesc,
                cudart.cudaGetTextureObjectTextureDesc,
            ],
        )
    finally:
        cudart.cudaFreeArray(array)


def test_surface_object():
    array, resource = _array_resource(cudart.cudaArraySurfaceLoadStore)
    try:
        surface = cudart.cudaCreateSurfaceObject(resource)
        assert type(surface).__name__ == "cudaSurfaceObject_t"
        with pytest.raises(TypeError, match="cudaTextureObject_t"):
            cudart.cudaDestroyTextureObject(surface)  # the wrong kind, refused before C
        refused(
            cudart.cudaDestroySurfaceObject,
            surface,
            uses=[cudart.cudaGetSurfaceObjectResourceDesc],
        )
    finally:
        cudart.cudaFreeArray(array)


def test_library(rt):
    if not declares(rt, "cudaLibraryLoadData"):
        pytest.skip(f"cudaLibraryLoadData is CUDA 12.8+; bindings {rt.__name__}")
    image = (KERNELS / "kernels.fatbin").read_bytes()
    library, _ = cudart.cudaLibraryLoadData(image)  # no options: nothing written back
    assert int(cudart.cudaLibraryGetKernel(library, b"axpy")) != 0
    refused(
        cudart.cudaLibraryUnload,
        library,
        uses=[lambda lib: cudart.cudaLibraryGetKernel(lib, b"axpy")],
    )


def test_async_notification_registration(rt):
    if not declares(rt, "cudaDeviceRegisterAsyncNotification"):
        pytest.skip(f"async notifications are CUDA 12.4+; bindings {rt.__name__}")
    callback_type = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    callback = callback_type(lambda info, data, handle: None)
    device = cudart.cudaGetDevice()
    try:
        handle = cudart.cudaDeviceRegisterAsyncNotification(device, callback, None)
    except cudart.CudaErrorNotSupported as exc:  # the one answer the docs give for "cannot"
        pytest.skip(f"the device takes no async notification callback: {exc}")
    refused(
        lambda h: cudart.cudaDeviceUnregisterAsyncNotification(device, h),
        handle,
        name="cudaDeviceUnregisterAsyncNotification",
    )


def test_logs_registration(rt):
    if not declares(rt, "cudaLogsRegisterCallback"):
        pytest.skip(f"cudaLogsRegisterCallback is CUDA 13.0+; bindings {rt.__name__}")
    callback_type = ctypes.CFUNCTYPE(
        None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t
    )
    callback = callback_type(lambda data, level, message, length: None)
    handle = cudart.cudaLogsRegisterCallback(callback, None)
    refused(cudart.cudaLogsUnregisterCallback, handle)
    del callback
    gc.collect()


def test_a_create_at_a_destroyed_address_is_a_live_object():
    seen = {}
    for _ in range(64):
        stream = cudart.cudaStreamCreate()
        address = int(stream)
        if address in seen:
            break
        seen[address] = stream
        cudart.cudaStreamDestroy(stream)
    else:  # no address came back in 64 tries: the last stream is destroyed, make a live one
        stream = cudart.cudaStreamCreate()
    old = seen.get(int(stream))
    try:
        assert cudart.cudaStreamQuery(stream) is True  # the new object lives
        if old is not None:  # the runtime reused the address
            assert old == stream and old is not stream
            with pytest.raises(HandleDestroyedError):
                cudart.cudaStreamQuery(old)
        # An int or another object at the address is the caller's promise: it works.
        assert cudart.cudaStreamQuery(int(stream)) is True
        assert cudart.cudaStreamQuery(cudart.sys.cudaStream_t(int(stream))) is True
    finally:
        cudart.cudaStreamDestroy(stream)


def test_graph_destroy_still_releases_host_node_callables():
    from cudart import callbacks

    graph = cudart.cudaGraphCreate(0)
    params = cudart.cudaHostNodeParams(fn=lambda data: None)
    cudart.cudaGraphAddHostNode(graph, None, 0, params)
    assert callbacks.held(graph)
    cudart.cudaGraphDestroy(graph)
    assert callbacks.held(graph) == frozenset()
    with pytest.raises(HandleDestroyedError):
        cudart.cudaGraphDestroy(graph)


def test_a_launch_repeating_a_destroyed_stream_is_refused():
    """Function.launch skips converting a configuration it repeats (C's launcher and the
    Python path alike: $CUDART_BACKEND runs this test once each). A stream the checked
    cudaStreamDestroy ended, given again as the same object or after an equal one, must
    be refused as cudaStreamQuery refuses it, with nothing launched.

    A new cudaStream_t(int(stream)) is another matter: an object of the value that no
    destroy marked, which nothing can tell from a stream created since at that address
    (test_a_create_at_a_destroyed_address_is_a_live_object). The checked layer takes it
    on the caller's word, as C does; launching on it here would be C's undefined
    behaviour, so this test only shows that the mark cannot be known from it."""
    with load_module(KERNELS / "kernels.fatbin") as module:
        counter = module.get_global("dev_counter")
        counter.write(struct.pack("<i", 0))
        add = module.get_function("add_counter")  # atomicAdd(&dev_counter, 1) per thread
        same, after_equal = cudart.cudaStreamCreate(), cudart.cudaStreamCreate()
        for _ in range(3):  # the first primes the C launcher, the others repeat
            add.launch(1, 32, 1, stream=same)
        cudart.cudaStreamSynchronize(same)
        cudart.cudaStreamDestroy(same)
        add.launch(1, 32, 1, stream=after_equal)
        add.launch(1, 32, 1, stream=cudart.sys.cudaStream_t(int(after_equal)))
        cudart.cudaStreamSynchronize(after_equal)
        cudart.cudaStreamDestroy(after_equal)
        for stream in (same, after_equal):
            with pytest.raises(HandleDestroyedError) as query:
                cudart.cudaStreamQuery(stream)
            for _ in range(3):
                with pytest.raises(HandleDestroyedError) as launch:
                    add.launch(1, 32, 1, stream=stream)
                assert str(launch.value) == str(query.value)
        assert destroyed_by(cudart.sys.cudaStream_t(int(same))) is None
        add.launch(1, 32, 1)  # the default stream: launches
        cudart.cudaDeviceSynchronize()
        assert struct.unpack("<i", counter.read())[0] == 32 * 6
