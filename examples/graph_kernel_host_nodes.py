"""A CUDA graph built node by node from kernels and a Python function.

Two kernel nodes (y = 2*x + y, then y = 0.5*x + y) made from cudart.kernels Function
objects and their packed arguments (`fn.pack`), and a host node that runs a Python
callable after them; the graph is instantiated, launched twice and checked. Everything
goes through the checked API: errors raise, handles come back, no ctypes.

Run from the repository root: python examples/graph_kernel_host_nodes.py
"""

from array import array
from pathlib import Path

import cudart
from cudart import callbacks
from cudart.kernels import load_module

IMAGE = Path(__file__).resolve().parent.parent / "tests" / "kernels" / "kernels.fatbin"
N = 1 << 16
BLOCK = 256


def kernel_node(graph, depends_on, fn, *args):
    """A kernel node running `fn` over N elements with `args` (packed with fn's types)."""
    params = cudart.cudaKernelNodeParams(
        func=fn,
        gridDim=cudart.dim3((N + BLOCK - 1) // BLOCK, 1, 1),
        blockDim=cudart.dim3(BLOCK, 1, 1),
        sharedMemBytes=0,
        kernelParams=fn.pack(*args),  # the record keeps the packed values alive
    )
    return cudart.cudaGraphAddKernelNode(graph, depends_on, len(depends_on), params)


def main():
    host_x = array("f", (float(i % 1000) for i in range(N)))
    host_y = array("f", [1.0] * N)
    nbytes = N * host_x.itemsize
    x = cudart.cudaMalloc(nbytes)
    y = cudart.cudaMalloc(nbytes)
    cudart.cudaMemcpy(x, host_x, nbytes, cudart.cudaMemcpyHostToDevice)
    cudart.cudaMemcpy(y, host_y, nbytes, cudart.cudaMemcpyHostToDevice)

    finished = []  # what the host node saw, in order
    with load_module(IMAGE) as module:
        # axpy is extern "C": its signature, declared, makes wrong argument types errors.
        axpy = module.get_function("axpy", signature="float a, const float *x, float *y, int n")
        graph = cudart.cudaGraphCreate(0)
        first = kernel_node(graph, [], axpy, 2.0, x, y, N)
        second = kernel_node(graph, [first], axpy, 0.5, x, y, N)
        done = cudart.cudaHostNodeParams(fn=finished.append, userData="axpy twice")
        cudart.cudaGraphAddHostNode(graph, [second], 1, done)
        print(f"graph: {len(cudart.cudaGraphGetNodes(graph))} nodes (2 kernels, 1 host function)")

        graph_exec = cudart.cudaGraphInstantiate(graph, 0)
        stream = cudart.cudaStreamCreate()
        for _ in range(2):
            cudart.cudaGraphLaunch(graph_exec, stream)
        cudart.cudaStreamSynchronize(stream)
        cudart.cudaGraphExecDestroy(graph_exec)
        cudart.cudaGraphDestroy(graph)
        cudart.cudaStreamDestroy(stream)
        callbacks.release_captured()  # no graph holds the host function any more
        route = module.route

    cudart.cudaMemcpy(host_y, y, nbytes, cudart.cudaMemcpyDeviceToHost)
    cudart.cudaFree(x)
    cudart.cudaFree(y)
    print(f"host node ran {len(finished)} times with {finished[0]!r}")
    # Two launches of (2 + 0.5) * x each: y = 1 + 5x, exact in float for these x.
    bad = [i for i in range(N) if host_y[i] != 1.0 + 5.0 * host_x[i]]
    print(f"y = 1 + 5x on {N} floats via the {route} route: {'ok' if not bad else bad[:5]}")
    if bad or finished != ["axpy twice"] * 2:
        raise SystemExit("FAILED")
    print("OK: graph of kernel and host nodes built, launched twice and checked")


if __name__ == "__main__":
    main()
