"""Kernel handles and packed arguments on a GPU, on every route the runtime offers:
a Function wherever C takes a device function (graph kernel nodes, the checked launch,
attribute and occupancy functions), Function.pack as `kernelParams`, typed arguments
refused when wrong, the per-call choice of untyped slots, and a refused launch leaving
the previous configuration (issues 11 and 14)."""

from __future__ import annotations

import ctypes
import gc
import struct

import pytest

import cudart
from cudart._contract import declares
from cudart.kernels import KernelArguments, load_module

from .support import KERNELS, axpy, check, routes

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(params=["register", "library"])
def module(request, rt):
    if request.param not in routes(rt):
        pytest.skip(
            f"the {request.param} route needs cudaLibraryLoadData (CUDA 12.8+); "
            f"bindings {rt.__name__}"
        )
    with load_module(KERNELS / "kernels.fatbin", route=request.param) as m:
        yield m


@pytest.fixture(params=["register", "library"])
def cxx_module(request, rt):
    if request.param not in routes(rt):
        pytest.skip(f"the {request.param} route needs CUDA 12.8+; bindings {rt.__name__}")
    with load_module(KERNELS / "cxx_kernels.fatbin", route=request.param) as m:
        yield m


def floats(dev, values):
    return dev.alloc(4 * len(values), (ctypes.c_float * len(values))(*values))


# ---------------------------------------------------------------- graph kernel nodes


def test_graph_kernel_node_from_a_function(rt, dev, module):
    fn = axpy(module)
    n = 1000
    x = floats(dev, [float(i % 17) for i in range(n)])
    y = floats(dev, [1.0] * n)
    params = rt.cudaKernelNodeParams(
        func=fn,  # the Function itself, not fn.handle
        gridDim=rt.dim3((n + 127) // 128, 1, 1),
        blockDim=rt.dim3(128, 1, 1),
        sharedMemBytes=0,
        kernelParams=fn.pack(2.0, x, y, n),  # held by `params`
    )
    gc.collect()  # the pack lives in the record, not in a local
    assert params.func == fn.handle
    graph = cudart.cudaGraphCreate(0)
    try:
        node = cudart.cudaGraphAddKernelNode(graph, None, 0, params)
        exec_ = cudart.cudaGraphInstantiate(graph, 0)
        try:
            cudart.cudaGraphLaunch(exec_, None)
            cudart.cudaDeviceSynchronize()
            expected = [2.0 * (i % 17) + 1.0 for i in range(n)]
            assert dev.read(y, ctypes.c_float, n) == expected
            # Updating the instantiated graph's node with new packed arguments.
            params.kernelParams = fn.pack(3.0, x, y, n)
            cudart.cudaGraphExecKernelNodeSetParams(exec_, node, params)
            cudart.cudaGraphLaunch(exec_, None)
            cudart.cudaDeviceSynchronize()
            expected = [3.0 * (i % 17) + e for i, e in enumerate(expected)]
            assert dev.read(y, ctypes.c_float, n) == expected
            # And the graph's own node (a new record, a Function assigned afterwards).
            update = rt.cudaKernelNodeParams()
            update.func = fn
            update.gridDim, update.blockDim = params.gridDim, params.blockDim
            update.kernelParams = fn.pack(1.0, x, y, n)
            cudart.cudaGraphKernelNodeSetParams(node, update)
        finally:
            cudart.cudaGraphExecDestroy(exec_)
        exec_ = cudart.cudaGraphInstantiate(graph, 0)
        try:
            cudart.cudaGraphLaunch(exec_, None)
            cudart.cudaDeviceSynchronize()
            expected = [1.0 * (i % 17) + e for i, e in enumerate(expected)]
            assert dev.read(y, ctypes.c_float, n) == expected
        finally:
            cudart.cudaGraphExecDestroy(exec_)
    finally:
        cudart.cudaGraphDestroy(graph)


def test_generic_graph_node_from_a_function(rt, dev, module):
    if not hasattr(rt, "cudaGraphNodeParams"):
        pytest.skip(f"cudaGraphAddNode / cudaGraphNodeParams are CUDA 12.4+; {rt.__name__}")
    fn = axpy(module)
    n = 256
    x = floats(dev, [float(i) for i in range(n)])
    y = floats(dev, [0.0] * n)
    p = rt.cudaGraphNodeParams()
    p.type = rt.cudaGraphNodeTypeKernel
    p.kernel.func = fn  # through the union's view: kept by `p`
    p.kernel.gridDim, p.kernel.blockDim = rt.dim3(1, 1, 1), rt.dim3(n, 1, 1)
    p.kernel.kernelParams = fn.pack(4.0, x, y, n)
    gc.collect()
    graph = cudart.cudaGraphCreate(0)
    try:
        if "dependencyData" in _params(cudart.cudaGraphAddNode):  # 12.9+ / 13.x
            cudart.cudaGraphAddNode(graph, None, None, 0, p)
        else:
            cudart.cudaGraphAddNode(graph, None, 0, p)
        exec_ = cudart.cudaGraphInstantiate(graph, 0)
        try:
            cudart.cudaGraphLaunch(exec_, None)
            cudart.cudaDeviceSynchronize()
        finally:
            cudart.cudaGraphExecDestroy(exec_)
    finally:
        cudart.cudaGraphDestroy(graph)
    assert dev.read(y, ctypes.c_float, n) == [4.0 * i for i in range(n)]


def _params(f) -> list[str]:
    import inspect

    return list(inspect.signature(f).parameters)


# ---------------------------------------------------------------- checked functions


def test_checked_functions_take_a_function(rt, dev, module, runtime_version):
    fn = axpy(module)
    n = 64
    x = floats(dev, [float(i) for i in range(n)])
    y = floats(dev, [0.0] * n)
    # A tuple of values, packed with fn's parameters; and a KernelArguments.
    cudart.cudaLaunchKernel(fn, rt.dim3(1, 1, 1), rt.dim3(n, 1, 1), (2.0, x, y, n), 0, None)
    packed = fn.pack(1.0, x, y, n)
    assert isinstance(packed, KernelArguments)
    cudart.cudaLaunchKernel(fn, rt.dim3(1, 1, 1), rt.dim3(n, 1, 1), packed, 0, None)
    assert dev.read(y, ctypes.c_float, n) == [3.0 * i for i in range(n)]
    attrs = cudart.cudaFuncGetAttributes(fn)
    assert attrs.numRegs > 0
    cudart.cudaFuncSetAttribute(fn, rt.cudaFuncAttributeMaxDynamicSharedMemorySize, 1024)
    assert cudart.cudaOccupancyMaxActiveBlocksPerMultiprocessor(fn, 128, 0) > 0
    if declares(rt, "cudaFuncGetName"):
        assert cudart.cudaFuncGetName(fn) == "axpy"
    if module.route == "register":
        assert cudart.cudaGetFuncBySymbol(fn)  # the driver's CUfunction
        if declares(rt, "cudaGetKernel"):
            assert cudart.cudaGetKernel(fn)
    with pytest.raises(TypeError, match="'func' must be a device function"):
        cudart.cudaFuncGetAttributes(b"axpy")


def test_cooperative_launch_with_a_tuple(rt, dev, module):
    fn = module.get_function("coop_sum")
    grid = 8
    buf = dev.alloc(8)
    cudart.cudaLaunchCooperativeKernel(
        fn, rt.dim3(grid, 1, 1), rt.dim3(64, 1, 1), (buf, buf + 4), 0, None
    )
    total = grid * (grid + 1) // 2
    assert dev.read(buf, ctypes.c_int, 2) == [total, total]


# ---------------------------------------------------------------- argument types


def test_declared_signature_refuses_wrong_types(rt, dev, module):
    fn = module.get_function("axpy", signature="float a, const float *x, float *y, int n")
    assert module.get_function("axpy") is not fn  # the undeclared Function stays as it was
    x = floats(dev, [1.0, 2.0, 3.0, 4.0])
    y = floats(dev, [0.0] * 4)
    with pytest.raises(TypeError, match=r"argument 3 \(int n\): a float"):
        fn.launch(1, 4, 2.0, x, y, 3.0)
    with pytest.raises(TypeError, match=r"argument 1 \(const float \*x\): a float"):
        fn.launch(1, 4, 2.0, 1.5, y, 3)
    with pytest.raises(TypeError, match=r"argument 0 \(float a\): an int"):
        fn.launch(1, 4, 2, x, y, 3)
    with pytest.raises(OverflowError, match="argument 3"):
        fn.launch(1, 4, 2.0, x, y, 2**31)
    fn.launch(1, 4, 2.0, x, y, 3)
    assert dev.read(y, ctypes.c_float, 4) == [2.0, 4.0, 6.0, 0.0]
    typed = module.get_function(
        "axpy",
        signature=[ctypes.c_float, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int],
    )
    with pytest.raises(TypeError, match="argument 3"):
        typed.pack(2.0, x, y, 3.0)
    bad = module.get_function("axpy", signature="double, float*, float*, int")
    with pytest.raises(TypeError, match="parameter 0 is 4 bytes"):
        bad.launch(1, 4, 2.0, x, y, 3)


def test_mangled_names_type_the_arguments(rt, dev, cxx_module):
    scale = cxx_module.get_function("scale")  # scale(const float*, float*, float, int)
    n = 8
    src = floats(dev, [float(i) for i in range(n)])
    out = dev.alloc(4 * n)
    with pytest.raises(TypeError, match="an int given for a float"):
        scale.launch(1, 32, src, out, 3, n)
    with pytest.raises(TypeError, match="a float given for a int"):
        scale.launch(1, 32, src, out, 3.0, 8.0)
    with pytest.raises(TypeError, match="a float given for a const float"):
        scale.launch(1, 32, 0.5, out, 3.0, n)
    scale.launch(1, 32, src, out, 3.0, n)
    assert dev.read(out, ctypes.c_float, n) == [3.0 * i for i in range(n)]
    shift = cxx_module.get_function("shift(int*, int)")
    ints = dev.alloc(16, (ctypes.c_int * 4)(1, 2, 3, 4))
    with pytest.raises(OverflowError):
        shift.launch(1, 4, ints, -(2**31) - 1)
    shift.launch(1, 4, ints, -1)
    assert dev.read(ints, ctypes.c_int, 4) == [0, 1, 2, 3]


def test_refused_launch_keeps_the_configuration(rt, module):
    fn = module.get_function("add_counter")
    counter = module.get_global("dev_counter")
    counter.write(ctypes.c_int(0))
    fn.launch(1, 32, 1)
    with pytest.raises(ValueError, match="shared_mem"):
        fn.launch(4096, 32, 1, shared_mem=-1)
    with pytest.raises(TypeError):
        fn.launch(4096, 32, 1, stream=1.5)
    with pytest.raises(TypeError):
        fn.launch(4096, 32, "1")
    fn.launch(1, 32, 1)  # 32 threads, not 4096 blocks of them
    check(rt, rt.cudaDeviceSynchronize())
    assert struct.unpack("<i", counter.read())[0] == 64
