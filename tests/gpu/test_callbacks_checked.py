"""The seed's two walls under their C names, on a GPU: Python callables through the
checked cudaLaunchHostFunc, cudaStreamAddCallback and host nodes, and the occupancy
templates at the top level, equal to cudart.occupancy's results."""

from __future__ import annotations

import threading
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
    cudart.cudaStreamSynchronize(stream)
    assert seen == [None]
    assert callbacks.failure_count() == 1
    assert isinstance(callbacks.failures()[0].exception, ValueError)


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
        assert callbacks.release_captured() >= 1
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
