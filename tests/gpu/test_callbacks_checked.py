"""The seed's two walls under their C names, on a GPU: Python callables through the
checked cudaLaunchHostFunc, cudaStreamAddCallback and host nodes, and the occupancy
templates at the top level, equal to cudart.occupancy's results."""

from __future__ import annotations

import gc
import threading
import weakref
from pathlib import Path

import pytest

import cudart
from cudart import callbacks, occupancy
from cudart.kernels import load_module

KERNELS = Path(__file__).resolve().parent.parent / "kernels"

pytestmark = pytest.mark.usefixtures("clean_callback_failures")


@pytest.fixture
def stream():
    s = cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking)
    yield s
    cudart.cudaStreamSynchronize(s)
    cudart.cudaStreamDestroy(s)


def test_launch_host_func_runs_a_callable_with_its_data(stream):
    seen = []
    before = callbacks.pending()
    data = {"payload": [1, 2, 3]}
    cudart.cudaLaunchHostFunc(stream, lambda d: seen.append((d, threading.get_ident())), data)
    cudart.cudaStreamSynchronize(stream)
    assert len(seen) == 1 and seen[0][0] is data
    assert seen[0][1] != threading.get_ident()  # the runtime's callback thread
    assert callbacks.pending() == before  # forgotten once run
    assert callbacks.failure_count() == 0


def test_launch_host_func_default_data_and_failures_are_counted(stream):
    seen = []
    cudart.cudaLaunchHostFunc(stream, seen.append)

    def boom(_):
        raise ValueError("inside the callback")

    cudart.cudaLaunchHostFunc(stream, boom, 1)
    with pytest.raises(callbacks.CallbackError, match="inside the callback") as caught:
        cudart.cudaStreamSynchronize(stream)
    assert isinstance(caught.value.__cause__, ValueError)
    assert seen == [None]
    assert callbacks.failure_count() == 1
    assert isinstance(callbacks.failures()[0].exception, ValueError)
    cudart.cudaStreamSynchronize(stream)  # raised once


def _fail(*args):
    raise KeyError(args[-1])


@pytest.fixture
def other_stream():
    s = cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking)
    yield s
    cudart.cudaStreamSynchronize(s)
    cudart.cudaStreamDestroy(s)


def test_a_failure_is_raised_by_its_streams_checked_sync_only(stream, other_stream):
    cudart.cudaLaunchHostFunc(stream, _fail, "host")
    assert cudart.sys.cudaStreamSynchronize(stream) == 0  # the raw layer reports nothing
    cudart.cudaLaunchHostFunc(other_stream, lambda _: None, None)
    cudart.cudaStreamSynchronize(other_stream)  # another stream's failure is not its own
    cudart.cudaStreamQuery(other_stream)
    with pytest.raises(callbacks.CallbackError) as caught:
        cudart.cudaStreamQuery(stream)
    assert isinstance(caught.value.__cause__, KeyError)
    (failure,) = caught.value.failures
    assert failure.stream == stream.value and failure.args == ("host",)
    cudart.cudaStreamSynchronize(stream)
    cudart.cudaDeviceSynchronize()


def test_stream_callback_failure_is_raised_by_device_sync(stream):
    cudart.cudaStreamAddCallback(stream, _fail, "cb", 0)
    assert cudart.sys.cudaStreamSynchronize(stream) == 0
    with pytest.raises(callbacks.CallbackError, match="KeyError") as caught:
        cudart.cudaDeviceSynchronize()
    assert caught.value.failures[0].stream == stream.value
    cudart.cudaDeviceSynchronize()
    assert callbacks.failure_count() == 1


def test_event_sync_raises_failures_and_raise_failures_after_raw_syncs(stream):
    event = cudart.cudaEventCreate()
    try:
        cudart.cudaLaunchHostFunc(stream, _fail, "before the event")
        cudart.cudaEventRecord(event, stream)
        with pytest.raises(callbacks.CallbackError, match="before the event"):
            cudart.cudaEventSynchronize(event)
        cudart.cudaEventQuery(event)
    finally:
        cudart.cudaEventDestroy(event)
    cudart.cudaLaunchHostFunc(stream, _fail, "raw")
    assert cudart.sys.cudaStreamSynchronize(stream) == 0
    with pytest.raises(callbacks.CallbackError, match="raw"):
        callbacks.raise_failures()
    assert callbacks.take_failures() == []


def test_stream_add_callback_gets_the_status(stream):
    seen = []
    cudart.cudaStreamAddCallback(stream, lambda s, status, d: seen.append((s, status, d)), "d", 0)
    cudart.cudaStreamSynchronize(stream)
    assert len(seen) == 1
    s, status, d = seen[0]
    assert status == 0 and d == "d" and s == int(stream)


def test_raw_function_pointers_still_work(rt, stream):
    seen = []
    raw = rt.cudaHostFn_t(lambda p: seen.append(p))
    cudart.cudaLaunchHostFunc(stream, raw, 42)
    cudart.cudaStreamSynchronize(stream)
    assert seen == [42]


def test_host_node_from_a_callable_runs_per_launch(stream):
    seen = []
    graph = cudart.cudaGraphCreate(0)
    params = cudart.cudaHostNodeParams(fn=seen.append, userData="node")
    before = callbacks.pending()
    cudart.cudaGraphAddHostNode(graph, None, 0, params)
    assert callbacks.pending() == before + 1  # kept for the graph
    exec_ = cudart.cudaGraphInstantiate(graph, 0)
    try:
        for _ in range(3):
            cudart.cudaGraphLaunch(exec_, stream)
        cudart.cudaStreamSynchronize(stream)
        assert seen == ["node"] * 3
    finally:
        cudart.cudaGraphExecDestroy(exec_)
        cudart.cudaGraphDestroy(graph)
    assert callbacks.pending() == before  # released with the last of graph and exec
    assert callbacks.release_captured() == 0
    assert callbacks.failure_count() == 0


def test_host_node_params_update_in_an_executable_graph(stream):
    seen = []
    graph = cudart.cudaGraphCreate(0)
    node = cudart.cudaGraphAddHostNode(
        graph, None, 0, cudart.cudaHostNodeParams(fn=seen.append, userData="first")
    )
    exec_ = cudart.cudaGraphInstantiate(graph, 0)
    try:
        cudart.cudaGraphLaunch(exec_, stream)
        cudart.cudaStreamSynchronize(stream)
        cudart.cudaGraphExecHostNodeSetParams(
            exec_, node, cudart.cudaHostNodeParams(fn=seen.append, userData="second")
        )
        cudart.cudaGraphLaunch(exec_, stream)
        cudart.cudaStreamSynchronize(stream)
        assert seen == ["first", "second"]
    finally:
        cudart.cudaGraphExecDestroy(exec_)
        cudart.cudaGraphDestroy(graph)
        callbacks.release_captured()


def test_captured_host_func_runs_per_graph_launch(stream):
    seen = []
    cudart.cudaStreamBeginCapture(stream, cudart.cudaStreamCaptureModeThreadLocal)
    cudart.cudaLaunchHostFunc(stream, seen.append, "captured")
    graph = cudart.cudaStreamEndCapture(stream)
    exec_ = cudart.cudaGraphInstantiate(graph, 0)
    try:
        cudart.cudaGraphLaunch(exec_, stream)
        cudart.cudaGraphLaunch(exec_, stream)
        cudart.cudaStreamSynchronize(stream)
        assert seen == ["captured", "captured"]
    finally:
        cudart.cudaGraphExecDestroy(exec_)
        cudart.cudaGraphDestroy(graph)
        callbacks.release_captured()


def test_occupancy_forms_at_the_top_level_equal_the_port():
    def per_warp(block_size: int) -> int:
        return (block_size // 32) * 256

    with load_module(KERNELS / "occupancy.cubin", route="register") as module:
        fn = module.get_function("occ_regs")
        assert cudart.cudaOccupancyMaxPotentialBlockSize(fn) == (
            occupancy.max_potential_block_size(fn)
        )
        assert cudart.cudaOccupancyMaxPotentialBlockSize(fn, 4096, 200) == (
            occupancy.max_potential_block_size(fn, 4096, 200)
        )
        assert cudart.cudaOccupancyMaxPotentialBlockSizeWithFlags(
            fn, 4096, 200, cudart.cudaOccupancyDisableCachingOverride
        ) == occupancy.max_potential_block_size(
            fn, 4096, 200, cudart.cudaOccupancyDisableCachingOverride
        )
        assert cudart.cudaOccupancyMaxPotentialBlockSizeVariableSMem(
            fn, per_warp, 300
        ) == occupancy.max_potential_block_size_variable_smem(fn, per_warp, 300)
        assert cudart.cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(
            fn, per_warp, 0, cudart.cudaOccupancyDefault
        ) == occupancy.max_potential_block_size_variable_smem(fn, per_warp)
    with pytest.raises(cudart.CudaErrorInvalidValue):
        cudart.cudaOccupancyMaxPotentialBlockSize(None)


# ---------------------------------------------------------------- released per graph


class Recorder:
    """A callable a weakref can follow, recording what it is called with."""

    def __init__(self):
        self.seen = []

    def __call__(self, data):
        self.seen.append(data)


def launch(exec_, stream, times=1):
    for _ in range(times):
        cudart.cudaGraphLaunch(exec_, stream)
    cudart.cudaStreamSynchronize(stream)


def gone(ref) -> bool:
    gc.collect()
    return ref() is None


def host_node_graph(recorder, data="node"):
    graph = cudart.cudaGraphCreate(0)
    node = cudart.cudaGraphAddHostNode(
        graph, None, 0, cudart.cudaHostNodeParams(fn=recorder, userData=data)
    )
    return graph, node


def test_graph_destroyed_while_an_exec_lives_the_callable_still_runs(stream):
    before = callbacks.pending()
    recorder = Recorder()
    ref = weakref.ref(recorder)
    graph, _ = host_node_graph(recorder)
    exec_ = cudart.cudaGraphInstantiate(graph, 0)
    assert callbacks.held(graph) == callbacks.held(exec_) and len(callbacks.held(exec_)) == 1
    del recorder
    cudart.cudaGraphDestroy(graph)
    assert callbacks.pending() == before + 1 and not gone(ref)
    launch(exec_, stream, 2)
    assert ref().seen == ["node", "node"]
    cudart.cudaGraphExecDestroy(exec_)
    assert callbacks.pending() == before and gone(ref)
    assert callbacks.failure_count() == 0


def test_exec_destroyed_first_then_the_graph_releases(stream):
    before = callbacks.pending()
    recorder = Recorder()
    ref = weakref.ref(recorder)
    graph, _ = host_node_graph(recorder)
    del recorder
    for instantiate in (cudart.cudaGraphInstantiate, cudart.cudaGraphInstantiateWithFlags):
        exec_ = instantiate(graph, 0)
        launch(exec_, stream)
        cudart.cudaGraphExecDestroy(exec_)
        assert callbacks.pending() == before + 1
    cudart.cudaGraphDestroy(graph)
    assert callbacks.pending() == before and gone(ref)


def test_clone_and_child_graph_keep_the_callable(stream):
    before = callbacks.pending()
    recorder = Recorder()
    ref = weakref.ref(recorder)
    graph, _ = host_node_graph(recorder, "copied")
    del recorder
    clone = cudart.cudaGraphClone(graph)
    parent = cudart.cudaGraphCreate(0)
    cudart.cudaGraphAddChildGraphNode(parent, None, 0, graph)
    cudart.cudaGraphDestroy(graph)
    for copy in (clone, parent):
        exec_ = cudart.cudaGraphInstantiate(copy, 0)
        launch(exec_, stream)
        cudart.cudaGraphExecDestroy(exec_)
    assert ref().seen == ["copied", "copied"]
    cudart.cudaGraphDestroy(clone)
    assert callbacks.pending() == before + 1
    cudart.cudaGraphDestroy(parent)
    assert callbacks.pending() == before and gone(ref)
    assert callbacks.failure_count() == 0


def test_set_params_callables_belong_to_the_graph_or_the_exec(stream):
    before = callbacks.pending()
    first, second, third = Recorder(), Recorder(), Recorder()
    refs = [weakref.ref(r) for r in (first, second, third)]
    graph, node = host_node_graph(first, "first")
    cudart.cudaGraphHostNodeSetParams(node, cudart.cudaHostNodeParams(fn=second, userData="2"))
    exec_ = cudart.cudaGraphInstantiate(graph, 0)
    cudart.cudaGraphExecHostNodeSetParams(
        exec_, node, cudart.cudaHostNodeParams(fn=third, userData="3")
    )
    launch(exec_, stream)
    assert (first.seen, second.seen, third.seen) == ([], [], ["3"])
    del first, second, third
    cudart.cudaGraphExecDestroy(exec_)
    assert callbacks.pending() == before + 2  # the graph's two
    cudart.cudaGraphDestroy(graph)
    assert callbacks.pending() == before and all(gone(r) for r in refs)


def test_exec_update_keeps_the_new_graphs_callable(stream):
    before = callbacks.pending()
    old, new = Recorder(), Recorder()
    refs = [weakref.ref(old), weakref.ref(new)]
    graph, _ = host_node_graph(old, "old")
    exec_ = cudart.cudaGraphInstantiate(graph, 0)
    update, _ = host_node_graph(new, "new")
    cudart.cudaGraphExecUpdate(exec_, update)
    cudart.cudaGraphDestroy(update)
    del old
    cudart.cudaGraphDestroy(graph)
    launch(exec_, stream)
    assert new.seen == ["new"]
    del new
    cudart.cudaGraphExecDestroy(exec_)
    assert callbacks.pending() == before and all(gone(r) for r in refs)


def test_captured_host_func_is_released_with_its_graph(stream):
    before = callbacks.pending()
    recorder = Recorder()
    ref = weakref.ref(recorder)
    cudart.cudaStreamBeginCapture(stream, cudart.cudaStreamCaptureModeThreadLocal)
    capturing = cudart.cudaStreamGetCaptureInfo(stream)[2]
    cudart.cudaLaunchHostFunc(stream, recorder, "captured")
    graph = cudart.cudaStreamEndCapture(stream)
    del recorder
    assert graph == capturing and len(callbacks.held(graph)) == 1
    exec_ = cudart.cudaGraphInstantiate(graph, 0)
    cudart.cudaGraphDestroy(graph)
    launch(exec_, stream, 2)
    assert ref().seen == ["captured", "captured"]
    cudart.cudaGraphExecDestroy(exec_)
    assert callbacks.pending() == before and gone(ref)
    assert callbacks.release_captured() == 0 and callbacks.failure_count() == 0


def test_capture_into_an_existing_graph_belongs_to_it(stream):
    if not hasattr(cudart, "cudaStreamBeginCaptureToGraph"):
        pytest.skip("cudaStreamBeginCaptureToGraph is CUDA 12.3+")
    before = callbacks.pending()
    graph = cudart.cudaGraphCreate(0)
    cudart.cudaStreamBeginCaptureToGraph(
        stream, graph, None, None, 0, cudart.cudaStreamCaptureModeThreadLocal
    )
    cudart.cudaLaunchHostFunc(stream, print, "never launched")
    assert cudart.cudaStreamEndCapture(stream) == graph
    assert len(callbacks.held(graph)) == 1
    cudart.cudaGraphDestroy(graph)
    assert callbacks.pending() == before
