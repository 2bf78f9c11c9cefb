"""The runtime and the driver API on one GPU (issue 22, items 3 and 4): a handle of either
API is one value, so streams, events, kernels and graphs made by one are used by the
other; the driver's launches take cudart.kernels.Function and tuples of arguments, and
its host callbacks Python callables. The CPU side is tests/runtime/test_driver_handles.py.
"""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path

import pytest

import cudart
from cudart import HandleDestroyedError, callbacks, load_runtime
from cudart._contract import declares
from cudart._handles import destroyed_by
from cudart.kernels import load_module

from .support import KERNELS, axpy, nvcc, routes

pytestmark = pytest.mark.usefixtures("clean_callback_failures")

N = 256
SCALE = r"""
extern "C" __global__ void scale(float *y, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= a;
}
"""


@pytest.fixture(scope="module")
def driver(primary_driver):
    return primary_driver  # conftest.py: the runtime's primary context, current


@pytest.fixture
def stream():
    """A runtime stream, destroyed at the end unless the test destroyed it."""
    s = cudart.cudaStreamCreate()
    yield s
    if destroyed_by(s) is None:
        cudart.cudaStreamSynchronize(s)
        cudart.cudaStreamDestroy(s)


@pytest.fixture(params=["register", "library"])
def kernel(request, rt):
    if request.param not in routes(rt):
        pytest.skip(f"the {request.param} route needs CUDA 12.8+ (bindings {rt.__name__})")
    with load_module(KERNELS / "kernels.fatbin", route=request.param) as module:
        yield axpy(module)


def vectors(dev):
    x = dev.alloc(4 * N, (ctypes.c_float * N)(*range(N)))
    y = dev.alloc(4 * N, (ctypes.c_float * N)(*[1.0] * N))
    return x, y


def test_a_runtime_stream_runs_a_function_through_cu_launch_kernel(driver, dev, kernel, stream):
    x, y = vectors(dev)
    driver.cuLaunchKernel(kernel, 1, 1, 1, N, 1, 1, 0, stream, (2.0, x, y, N), None)
    driver.cuStreamSynchronize(stream)  # the driver waits on the runtime's stream
    assert dev.read(y, ctypes.c_float, N) == [2.0 * i + 1.0 for i in range(N)]
    packed = kernel.pack(1.0, x, y, N)
    driver.cuLaunchKernel(kernel, 1, 1, 1, N, 1, 1, 0, stream, packed, None)
    cudart.cudaStreamSynchronize(stream)
    assert dev.read(y, ctypes.c_float, N) == [3.0 * i + 1.0 for i in range(N)]
    # A destroy through the driver ends the object for the runtime too.
    driver.cuStreamDestroy(stream)
    with pytest.raises(HandleDestroyedError, match="cuStreamDestroy"):
        cudart.cudaStreamQuery(stream)


def test_a_driver_stream_runs_a_function_launch(driver, dev, kernel):
    s = driver.cuStreamCreate(0)
    x, y = vectors(dev)
    kernel.launch(1, N, 2.0, x, y, N, stream=s)
    driver.cuLaunchCooperativeKernel(kernel, 1, 1, 1, N, 1, 1, 0, s, (1.0, x, y, N))
    cudart.cudaStreamSynchronize(s)
    assert dev.read(y, ctypes.c_float, N) == [3.0 * i + 1.0 for i in range(N)]
    cudart.cudaStreamDestroy(s)
    with pytest.raises(HandleDestroyedError, match="cudaStreamDestroy"):
        driver.cuStreamQuery(s)


def test_a_driver_kernel_node_of_a_function_runs_in_a_runtime_graph(driver, dev, kernel, stream):
    x, y = vectors(dev)
    params = driver.CUDA_KERNEL_NODE_PARAMS(
        gridDimX=1, gridDimY=1, gridDimZ=1, blockDimX=N, blockDimY=1, blockDimZ=1
    )
    params.func = kernel  # its CUfunction (cudaGetFuncBySymbol), held by the record
    params.kernelParams = kernel.pack(2.0, x, y, N)
    graph = cudart.cudaGraphCreate(0)
    driver.cuGraphAddKernelNode(graph, None, 0, params)
    exec_ = cudart.cudaGraphInstantiate(graph)
    try:
        cudart.cudaGraphLaunch(exec_, stream)
        driver.cuStreamSynchronize(stream)
        assert dev.read(y, ctypes.c_float, N) == [2.0 * i + 1.0 for i in range(N)]
    finally:
        driver.cuGraphExecDestroy(exec_)
        cudart.cudaGraphDestroy(graph)


def test_device_addresses_are_the_same_ints_in_both_apis(driver, dev, kernel, stream):
    y = driver.cuMemAlloc(4 * N)  # a CUdeviceptr: an int, as cudaMalloc's address
    try:
        cudart.cudaMemset(y, 0, 4 * N)
        x = dev.alloc(4 * N, (ctypes.c_float * N)(*range(N)))
        kernel.launch(1, N, 1.0, x, y, N, stream=stream)
        cudart.cudaStreamSynchronize(stream)
        out = (ctypes.c_float * N)()
        driver.cuMemcpyDtoH(out, y, 4 * N)
        assert list(out) == [float(i) for i in range(N)]
    finally:
        driver.cuMemFree(y)


def _argv(*values):
    """C's `void **` kernel arguments for values given as ctypes objects."""
    return (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])


@pytest.fixture(scope="module")
def cubin(driver):
    return cudart.compile(SCALE, load=False)


def test_a_driver_library_kernel_runs_through_the_runtime(rt, driver, dev, stream, cubin):
    if not declares(rt, "cudaGetKernel"):
        pytest.skip(f"bindings {rt.__name__} have no cudaKernel_t for the runtime's func")
    library, _ = driver.cuLibraryLoadData(cubin)  # no options: nothing written back
    try:
        kernel = driver.cuLibraryGetKernel(library, "scale")
        y = dev.alloc(4 * N, (ctypes.c_float * N)(*range(N)))
        values = (ctypes.c_void_p(y), ctypes.c_float(3.0), ctypes.c_int(N))
        if not declares(rt, "cudaLibraryLoadData"):
            # Seen on the H200 (driver 580): a runtime without libraries of its own
            # (before 12.8; 12.5 here) refuses a driver library's kernel as `func`.
            with pytest.raises(cudart.CudaErrorInvalidDeviceFunction):
                cudart.cudaLaunchKernel(kernel, 1, N, _argv(*values), 0, stream)
            return
        # A CUkernel is a cudaKernel_t: the runtime launches it as `func`.
        cudart.cudaLaunchKernel(kernel, 1, N, _argv(*values), 0, stream)
        driver.cuStreamSynchronize(stream)
        assert dev.read(y, ctypes.c_float, N) == [3.0 * i for i in range(N)]
    finally:
        driver.cuLibraryUnload(library)


@pytest.fixture(scope="module")
def c_cu_function_as_func(driver, cubin, tmp_path_factory) -> dict[str, list[str]]:
    """What C gets from this libcudart for the test below (tests/gpu/cu_function_as_func.cu,
    built here): its lines by first word ("runtime", "launch", "last", "values")."""
    folder = tmp_path_factory.mktemp("cu_function_as_func")
    exe, image = folder / "cu_function_as_func", folder / "scale.cubin"
    image.write_bytes(cubin)
    source = Path(__file__).resolve().parent / "cu_function_as_func.cu"
    built = subprocess.run(
        [nvcc(), "-x", "c++", "-cudart", "none", "-o", str(exe), str(source), "-ldl"],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, f"nvcc could not build {source.name}:\n{built.stderr}"
    proc = subprocess.run(
        [str(exe), str(load_runtime().path), str(image)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, f"the C program failed:\n{proc.stdout}\n{proc.stderr}"
    return {line.split()[0]: line.split()[1:] for line in proc.stdout.splitlines()}


def test_a_cu_module_function_runs_through_both_apis(
    driver, dev, stream, cubin, runtime_version, c_cu_function_as_func
):
    c = c_cu_function_as_func
    assert c["runtime"] == [str(runtime_version)]
    module = driver.cuModuleLoadData(cubin)
    try:
        function = driver.cuModuleGetFunction(module, "scale")
        y = dev.alloc(4 * N, (ctypes.c_float * N)(*[1.0] * N))
        values = (ctypes.c_void_p(y), ctypes.c_float(2.0), ctypes.c_int(N))
        driver.cuLaunchKernel(function, 1, 1, 1, N, 1, 1, 0, stream, _argv(*values), None)
        cudart.cudaStreamSynchronize(stream)
        assert dev.read(y, ctypes.c_float, N) == [2.0] * N
        # The runtime's `func` is documented for entry functions and cudaKernel_t; given
        # a CUfunction, the bindings must answer what C answers on this libcudart
        # (measured on the H200: 98 on 12.0-12.6, 400 on 12.8 and 12.9, success on 13.x).
        status, name = int(c["launch"][0]), c["launch"][1]
        if status != 0:
            with pytest.raises(cudart.CudaError) as raised:
                cudart.cudaLaunchKernel(function, 1, N, _argv(*values), 0, stream)
            assert (int(raised.value.code), raised.value.name) == (status, name)
            assert type(raised.value).__name__ == "CudaError" + name[len("cudaError") :]
            # As C's cudaGetLastError after it: the launch's error, not sticky.
            assert int(cudart.sys.cudaGetLastError()) == int(c["last"][0])
            return
        cudart.cudaLaunchKernel(function, 1, N, _argv(*values), 0, stream)
        cudart.cudaStreamSynchronize(stream)
        assert c["values"] == ["4", "1"]
        assert dev.read(y, ctypes.c_float, N) == [4.0] * N
    finally:
        driver.cuModuleUnload(module)


def test_events_recorded_by_one_api_are_waited_on_by_the_other(driver, dev, kernel, stream):
    other = driver.cuStreamCreate(0)
    x, y = vectors(dev)
    try:
        # Driver event on the runtime's stream, waited on by the runtime on the driver's.
        event = driver.cuEventCreate(0)
        kernel.launch(1, N, 2.0, x, y, N, stream=stream)
        driver.cuEventRecord(event, stream)
        cudart.cudaStreamWaitEvent(other, event, 0)
        kernel.launch(1, N, 1.0, x, y, N, stream=other)
        driver.cuStreamSynchronize(other)
        assert dev.read(y, ctypes.c_float, N) == [3.0 * i + 1.0 for i in range(N)]
        # Runtime event on the driver's stream, waited on by the driver on the runtime's.
        event2 = cudart.cudaEventCreate()
        kernel.launch(1, N, 1.0, x, y, N, stream=other)
        driver.cuEventRecord(event2, other)
        driver.cuStreamWaitEvent(stream, event2, 0)
        kernel.launch(1, N, 1.0, x, y, N, stream=stream)
        cudart.cudaEventSynchronize(event2)
        driver.cuStreamSynchronize(stream)
        assert cudart.cudaEventQuery(event2) is True
        driver.cuEventQuery(event2)  # complete: no error
        assert dev.read(y, ctypes.c_float, N) == [5.0 * i + 1.0 for i in range(N)]
        cudart.cudaEventDestroy(event)
        driver.cuEventDestroy(event2)
        with pytest.raises(HandleDestroyedError):
            driver.cuEventQuery(event)
        with pytest.raises(HandleDestroyedError):
            cudart.cudaEventQuery(event2)
    finally:
        driver.cuStreamSynchronize(other)
        driver.cuStreamDestroy(other)


def test_cu_launch_host_func_runs_a_python_callable(driver, stream):
    seen = []
    before = callbacks.pending()
    data = {"payload": [1, 2]}
    driver.cuLaunchHostFunc(stream, seen.append, data)
    driver.cuStreamSynchronize(stream)
    assert seen == [data] and seen[0] is data
    assert callbacks.pending() == before

    def boom(_):
        raise ValueError("inside the driver's callback")

    driver.cuLaunchHostFunc(stream, boom, None)
    with pytest.raises(callbacks.CallbackError, match="inside the driver's callback"):
        cudart.cudaStreamSynchronize(stream)  # the runtime's wait reports it


def test_cu_stream_add_callback_gets_stream_and_status(driver, stream):
    got = []
    driver.cuStreamAddCallback(stream, lambda s, status, data: got.append((s, status, data)), 5, 0)
    driver.cuStreamSynchronize(stream)
    assert got == [(int(stream), 0, 5)]


def test_a_driver_host_node_runs_per_launch_and_goes_with_its_graph(driver, stream):
    seen = []
    before = callbacks.pending()
    graph = driver.cuGraphCreate(0)
    params = driver.CUDA_HOST_NODE_PARAMS(fn=seen.append, userData="node")
    driver.cuGraphAddHostNode(graph, None, 0, params)
    exec_ = driver.cuGraphInstantiate(graph, 0)
    cudart.cudaGraphLaunch(exec_, stream)  # the runtime launches the driver's exec
    driver.cuGraphLaunch(exec_, stream)
    cudart.cudaStreamSynchronize(stream)
    assert seen == ["node", "node"]
    assert callbacks.pending() == before + 1
    driver.cuGraphDestroy(graph)
    cudart.cudaGraphExecDestroy(exec_)  # the last holder, through the runtime
    assert callbacks.pending() == before
