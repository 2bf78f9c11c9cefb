"""Record a stream's work into a CUDA graph once, then replay it: capture, instantiate,
launch, update one node of the executable graph in place, launch again.

    python examples/graph_capture.py
"""

import ctypes
import sys

import cudart
from cudart import callbacks

SIZE = 8 << 20
LAUNCHES = 10


def check(rt, status):
    if status != rt.cudaSuccess:
        name = rt.cudaGetErrorName(status).decode()
        sys.exit(f"CUDA error {name} ({status}): {rt.cudaGetErrorString(status).decode()}")


def main():
    rt = cudart.sys
    stream = rt.cudaStream_t()
    check(rt, rt.cudaStreamCreateWithFlags(ctypes.byref(stream), rt.cudaStreamNonBlocking))
    a, b, host = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    check(rt, rt.cudaMalloc(ctypes.byref(a), SIZE))
    check(rt, rt.cudaMalloc(ctypes.byref(b), SIZE))
    check(rt, rt.cudaMallocHost(ctypes.byref(host), SIZE))  # capture needs pinned memory
    seen = []

    # Nothing runs while the stream is captured: each call adds a node to the graph.
    check(rt, rt.cudaStreamBeginCapture(stream, rt.cudaStreamCaptureModeThreadLocal))
    check(rt, rt.cudaMemsetAsync(a, 0x2A, SIZE, stream))
    check(rt, rt.cudaMemcpyAsync(b, a, SIZE, rt.cudaMemcpyDeviceToDevice, stream))
    check(rt, rt.cudaMemcpyAsync(host, b, SIZE, rt.cudaMemcpyDeviceToHost, stream))
    # A captured host function runs at every launch of the graph.
    check(
        rt, callbacks.launch_host_func(stream, lambda: seen.append(ctypes.string_at(host.value, 1)))
    )
    graph = rt.cudaGraph_t()
    check(rt, rt.cudaStreamEndCapture(stream, ctypes.byref(graph)))

    count = ctypes.c_size_t()
    check(rt, rt.cudaGraphGetNodes(graph, None, ctypes.byref(count)))
    nodes = (ctypes.c_void_p * count.value)()
    check(rt, rt.cudaGraphGetNodes(graph, nodes, ctypes.byref(count)))
    kinds = []
    for node in nodes:
        kind = ctypes.c_int()
        check(rt, rt.cudaGraphNodeGetType(node, ctypes.byref(kind)))
        kinds.append(rt.cudaGraphNodeType(kind.value).name.removeprefix("cudaGraphNodeType"))
    print(f"captured graph: {count.value} nodes ({', '.join(kinds)})")

    graph_exec = rt.cudaGraphExec_t()
    check(rt, rt.cudaGraphInstantiate(ctypes.byref(graph_exec), graph, 0))

    start, stop = rt.cudaEvent_t(), rt.cudaEvent_t()
    check(rt, rt.cudaEventCreate(ctypes.byref(start)))
    check(rt, rt.cudaEventCreate(ctypes.byref(stop)))
    check(rt, rt.cudaEventRecord(start, stream))
    for _ in range(LAUNCHES):
        check(rt, rt.cudaGraphLaunch(graph_exec, stream))
    check(rt, rt.cudaEventRecord(stop, stream))
    check(rt, rt.cudaStreamSynchronize(stream))
    ms = ctypes.c_float()
    check(rt, rt.cudaEventElapsedTime(ctypes.byref(ms), start, stop))
    ok = ctypes.string_at(host.value, SIZE) == b"\x2a" * SIZE and seen == [b"\x2a"] * LAUNCHES
    print(
        f"launched {LAUNCHES} times in {ms.value:.3f} ms; host node ran {len(seen)} times; "
        f"data {'ok' if ok else 'WRONG'}"
    )

    # Update the memset node of the executable graph without re-instantiating it.
    memset_node = next(n for n, k in zip(nodes, kinds, strict=True) if k == "Memset")
    params = rt.cudaMemsetParams(
        dst=a.value, pitch=0, value=0x55, elementSize=1, width=SIZE, height=1
    )
    check(rt, rt.cudaGraphExecMemsetNodeSetParams(graph_exec, memset_node, ctypes.byref(params)))
    check(rt, rt.cudaGraphLaunch(graph_exec, stream))
    check(rt, rt.cudaStreamSynchronize(stream))
    updated = ctypes.string_at(host.value, SIZE) == b"\x55" * SIZE and seen[-1] == b"\x55"
    print(f"after updating the memset node in place: data {'ok' if updated else 'WRONG'}")

    check(rt, rt.cudaGraphExecDestroy(graph_exec))
    check(rt, rt.cudaGraphDestroy(graph))
    callbacks.release_captured()  # no graph holds the host function any more
    for event in (start, stop):
        check(rt, rt.cudaEventDestroy(event))
    check(rt, rt.cudaFreeHost(host))
    check(rt, rt.cudaFree(a))
    check(rt, rt.cudaFree(b))
    check(rt, rt.cudaStreamDestroy(stream))
    if not (ok and updated):
        sys.exit("FAILED")
    print("OK: graph captured, launched and updated")


if __name__ == "__main__":
    main()
