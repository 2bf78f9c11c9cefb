"""Kernel handles and kernel arguments without a GPU: parameter types from mangled names
and declared signatures, packing (Function.pack, KernelArguments), refusals, the per-call
choice of a slot, a refused launch leaving the configuration, and the checked layer and
records taking a Function and packed arguments.

A Function is built on the real runtime (cudart.sys) with a NULL handle: no GPU here,
so cudaLaunchKernelExC answers an error after the arguments are packed and the
configuration written, which is what these tests read. The kernel's parameter sizes,
which the runtime tells only with a GPU, are given where a test needs them.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import importlib
import struct
import types
import weakref

import numpy as np
import pytest
from kernel_support import module_of
from suite import KERNELS, run_python

import cudart
from cudart import CudaError
from cudart._layout import ConvertedField
from cudart.kernels import KernelArguments as PublicKernelArguments
from cudart.kernels._demangle import parameter_types
from cudart.kernels._function import Function
from cudart.kernels._images import _libzstd, inspect_image
from cudart.kernels._launch import KernelArguments, configure, param_type, param_types
from generator import device_functions
from generator.model import Builtin, Pointer

# The calls go through the backend in force: make test-ctypes runs them on ctypes too.
pytestmark = pytest.mark.backend


def function(name="axpy", sizes=None, signature=None) -> Function:
    fn = Function(types.SimpleNamespace(_rt=cudart.sys), name, 0, signature)
    if sizes is not None:
        fn._params = tuple(sizes)  # what cudaFuncGetParamInfo answers on a GPU
    return fn


def attempt(fn, *args, **kwargs):
    """A launch whose arguments and configuration are prepared; without a GPU the
    runtime then refuses it (with one, a NULL kernel launches nothing or is refused)."""
    try:
        fn.launch(*args, **kwargs)
    except CudaError:
        pass


def slot_bytes(sig, k: int, size: int) -> bytes:
    return ctypes.string_at(sig._pointers[k], size)


class DevicePointer:
    """A foreign device pointer (as CuPy or cuda-bindings give): an address by __int__."""

    def __init__(self, address: int):
        self.address = address

    def __int__(self) -> int:
        return self.address


# ---------------------------------------------------------------- parameter types


@pytest.mark.parametrize(
    "text, kind, size, signed",
    [
        ("float", "float", 4, True),
        ("double d", "float", 8, True),
        ("const float *x", "pointer", 8, False),
        ("float const*", "pointer", 8, False),
        ("int &r", "pointer", 8, False),
        ("int", "int", 4, True),
        ("unsigned n", "int", 4, False),
        ("long unsigned int", "int", 8, False),
        ("unsigned long long", "int", 8, False),
        ("size_t count", "int", 8, False),
        ("int8_t", "int", 1, True),
        ("short", "int", 2, True),
        ("bool flag", "bool", 1, False),
        ("__half h", "float", 2, True),
        ("Pair p", None, None, True),
        ("ns::Pair", None, None, True),
    ],
)
def test_param_type_from_c_text(text, kind, size, signed):
    t = param_type(text)
    assert (t.kind, t.size) == (kind, size)
    if kind == "int":
        assert t.signed is signed


def test_declared_signatures():
    assert [t.kind for t in param_types("float, float*, float*, int")] == [
        "float",
        "pointer",
        "pointer",
        "int",
    ]
    kinds = [(t.kind, t.size) for t in param_types("(float a, const float *x)")]
    assert kinds == [(t.kind, t.size) for t in param_types("float, const float*")]
    assert param_types("") == param_types("void") == ()
    assert [t.kind for t in param_types("Tuple<int, float> t, int n")] == [None, "int"]
    declared = param_types([ctypes.c_float, ctypes.POINTER(ctypes.c_float), ctypes.c_uint])
    assert [(t.kind, t.size) for t in declared] == [("float", 4), ("pointer", 8), ("int", 4)]
    assert declared[2].signed is False
    assert param_types([ctypes.c_void_p, "int", ctypes.c_bool])[1].kind == "int"

    class Pair(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double)]

    assert (param_types([Pair])[0].kind, param_types([Pair])[0].size) == (None, 16)
    with pytest.raises(ValueError, match="empty parameter"):
        param_types("float, , int")
    with pytest.raises(TypeError, match="ctypes type"):
        param_types([3])
    with pytest.raises(TypeError, match="signature must be"):
        param_types(3)


def test_types_from_mangled_names():
    assert parameter_types("_Z6squarePfi") == ("float*", "int")
    assert parameter_types("_Z3fooPKfjmd") == (
        "const float*",
        "unsigned int",
        "unsigned long",
        "double",
    )
    assert parameter_types("_ZN3ops4fillIiEEvPT_iS1_") == ("int*", "int", "int")
    assert parameter_types("_Z1fv") == ()
    assert parameter_types("axpy") is None  # extern "C": nothing to read
    fn = function("_Z5scalePKfPffi")
    assert [t.kind for t in fn.param_types] == ["pointer", "pointer", "float", "int"]
    assert function("axpy").param_types is None
    declared = function("axpy", signature="float a, const float *x, float *y, int n")
    assert [t.text for t in declared.param_types] == [
        "float a",
        "const float *x",
        "float *y",
        "int n",
    ]


# ---------------------------------------------------------------- packing


def test_pack_owns_slots_and_values():
    fn = function("_Z4axpyfPKfPfi")
    x = DevicePointer(0x7000_0000_0000)
    watch = weakref.ref(x)
    packed = fn.pack(2.5, x, 0x7000_0001_0000, 7)
    assert isinstance(packed, KernelArguments) and KernelArguments is PublicKernelArguments
    assert len(packed) == 4 and packed.values[1] is x
    del x
    gc.collect()
    assert watch() is not None  # the packed values live as long as the pack
    # `void **`: four pointers, each to its argument's bytes.
    argv = (ctypes.c_void_p * 4).from_address(int(packed))
    assert packed.argv.value == int(packed) == packed._as_parameter_.value
    assert struct.unpack("<f", ctypes.string_at(argv[0], 4))[0] == 2.5
    assert struct.unpack("<Q", ctypes.string_at(argv[1], 8))[0] == 0x7000_0000_0000
    assert struct.unpack("<Q", ctypes.string_at(argv[2], 8))[0] == 0x7000_0001_0000
    assert struct.unpack("<i", ctypes.string_at(argv[3], 4))[0] == 7
    # Each pack has its own slots: packing again does not change the first.
    other = fn.pack(1.0, 0, 0, 1)
    assert int(other) != int(packed)
    assert struct.unpack("<f", ctypes.string_at(argv[0], 4))[0] == 2.5
    del packed, other
    gc.collect()
    assert watch() is None
    assert repr(fn.pack(1.0, 0, 0, 1)).startswith("<cudart.kernels.KernelArguments for ")


def test_pack_without_arguments_and_closed_kernels():
    fn = function("_Z1fv")
    empty = fn.pack()
    assert len(empty) == 0 and int(empty) == 0
    with pytest.raises(TypeError, match="takes 0 arguments"):
        fn.pack(1)
    fn._invalidate()
    with pytest.raises(ValueError, match="module is closed"):
        fn.pack()


@pytest.mark.parametrize(
    "args, error, match",
    [
        ((2, 0, 0, 1), TypeError, r"argument 0 \(float\): an int"),
        ((2.0, 1.5, 0, 1), TypeError, r"argument 1 \(const float\*\): a float"),
        ((2.0, 0, 0, 1.0), TypeError, r"argument 3 \(int\): a float"),
        ((2.0, 0, 0, 2**31), OverflowError, r"argument 3 \(int\).*\[-2147483648, 2147483647\]"),
        ((2.0, 0, 0, -(2**31) - 1), OverflowError, "argument 3"),
        ((2.0, -1, 0, 1), OverflowError, "argument 1.*not a 64-bit address"),
        ((2.0, 0, 0, DevicePointer(5)), TypeError, r"argument 3 \(int\): DevicePointer"),
        ((ctypes.c_int(2), 0, 0, 1), TypeError, "c_int given for a float"),
        ((2.0, 0, 0, ctypes.c_float(1)), TypeError, "c_float given for a int"),
        ((2.0, 0, 0), TypeError, "takes 4 arguments"),
    ],
)
def test_typed_parameters_refuse_the_wrong_kind(args, error, match):
    fn = function("_Z4axpyfPKfPfi")  # axpy(float, const float*, float*, int)
    with pytest.raises(error, match=match):
        fn.pack(*args)
    with pytest.raises(error, match=match):
        fn.launch(1, 1, *args)


def test_unsigned_and_bool_ranges():
    fn = function("u", signature=[ctypes.c_uint, ctypes.c_bool, ctypes.c_uint8])
    packed = fn.pack(2**32 - 1, True, 255)
    argv = (ctypes.c_void_p * 3).from_address(int(packed))
    assert struct.unpack("<I", ctypes.string_at(argv[0], 4))[0] == 2**32 - 1
    assert ctypes.string_at(argv[1], 1) == b"\x01"
    for bad in ((-1, 0, 0), (2**32, 0, 0), (0, 2, 0), (0, 0, 256)):
        with pytest.raises(OverflowError):
            fn.pack(*bad)
    with pytest.raises(TypeError, match="a float given for a c_bool"):
        fn.pack(0, 1.0, 0)


def test_declared_signature_checked_against_the_kernel():
    fn = function("axpy", sizes=(4, 8, 8, 4), signature="double, float*, float*, int")
    with pytest.raises(TypeError, match="parameter 0 is 4 bytes; its signature declares double"):
        fn.pack(1.0, 0, 0, 1)
    fn = function("axpy", sizes=(4, 8, 8, 4), signature="float, float*, float*")
    with pytest.raises(TypeError, match="has 4 parameters; its signature declares 3"):
        fn.pack(1.0, 0, 0)


def test_untyped_choice_is_made_per_call():
    # axpy as extern "C" from an image without PTX: only sizes are known. A typed
    # float packs as its type, an int as an int, whatever the previous launch passed
    # (issue 11: after 3.0, a 3 was a float).
    fn = function("axpy", sizes=(4, 8, 8, 4))
    f32 = np.float32(2.0)
    attempt(fn, 1, 1, f32, 0x1000, 0x2000, np.float32(3.0))
    assert struct.unpack("<f", slot_bytes(fn._sig, 3, 4))[0] == 3.0
    attempt(fn, 1, 1, f32, 0x1000, 0x2000, 3)
    assert struct.unpack("<i", slot_bytes(fn._sig, 3, 4))[0] == 3
    attempt(fn, 1, 1, f32, 0x1000, 0x2000, ctypes.c_float(3.0))
    assert struct.unpack("<f", slot_bytes(fn._sig, 3, 4))[0] == 3.0
    # The fast path reuses a signature only for the same kinds of values.
    attempt(fn, 1, 1, 2, 0x1000, 0x2000, 4)
    assert struct.unpack("<i", slot_bytes(fn._sig, 0, 4))[0] == 2
    assert struct.unpack("<i", slot_bytes(fn._sig, 3, 4))[0] == 4
    # Without sizes an int packs in 8 bytes.
    blind = function("axpy")
    blind._params = None
    assert len(blind.pack(5)) == 1


@pytest.mark.parametrize("sizes", [(4, 8, 8, 4), None])
def test_untyped_python_floats_are_refused(sizes):
    # Issue 21: 3.0 for an extern "C" kernel's int reached it as 1077936128 (its IEEE
    # bits), and for a pointer as a double. Without types, a float is ambiguous.
    fn = function("axpy", sizes=sizes)
    for k, args in ((0, (3.0, 0x1000, 0x2000, 4)), (3, (np.float32(3.0), 0x1000, 0x2000, 3.0))):
        for act in (fn.pack, functools.partial(fn.launch, 1, 1)):
            with pytest.raises(TypeError) as err:
                act(*args)
            message = str(err.value)
            assert f"argument {k}:" in message and "ambiguous" in message
            for hint in ("signature=", "numpy.float32(3.0)", "ctypes.c_float(3.0)"):
                assert hint in message
    # Ints stay accepted, checked against the parameter's size.
    packed = fn.pack(np.float32(2.5), 0x1000, 0x2000, -1)
    argv = (ctypes.c_void_p * 4).from_address(int(packed))
    assert struct.unpack("<f", ctypes.string_at(argv[0], 4))[0] == 2.5
    assert ctypes.string_at(argv[3], 4 if sizes else 8) == b"\xff" * (4 if sizes else 8)
    if sizes is not None:
        with pytest.raises(OverflowError, match="argument 3"):
            fn.pack(np.float32(2.5), 0, 0, 2**32)
        with pytest.raises(TypeError, match="float64 is 8 bytes, the kernel's parameter 4"):
            fn.pack(np.float64(2.5), 0, 0, 1)


# nvcc 13's default fatbin (kernels.fatbin) compresses its PTX with zstd, which the
# system's libzstd reads where there is one.
ZSTD = pytest.mark.skipif(_libzstd() is None, reason="no libzstd on this system")
PTX_IMAGES = [
    "kernels.ptx",
    "kernels_plain.fatbin",
    "kernels_lz4.fatbin",
    pytest.param("kernels.fatbin", marks=ZSTD),
    pytest.param("kernels_zstd.fatbin", marks=ZSTD),
]


@pytest.mark.parametrize("image", PTX_IMAGES)
def test_ptx_declares_extern_c_parameter_types(image):
    data = (KERNELS / image).read_bytes()
    module = module_of(data, names=inspect_image((KERNELS / "kernels.ptx").read_bytes()).functions)
    fn = module.get_function("axpy")  # axpy(float a, const float *x, float *y, int n)
    assert [(t.kind, t.size, t.text) for t in fn.param_types] == [
        ("float", 4, ".f32"),
        ("word", 8, ".u64"),
        ("word", 8, ".u64"),
        ("word", 4, ".u32"),
    ]
    packed = fn.pack(3.0, DevicePointer(0x7000_0000_0000), 0x2000, -7)
    argv = (ctypes.c_void_p * 4).from_address(int(packed))
    assert struct.unpack("<f", ctypes.string_at(argv[0], 4))[0] == 3.0
    assert struct.unpack("<Q", ctypes.string_at(argv[1], 8))[0] == 0x7000_0000_0000
    assert struct.unpack("<i", ctypes.string_at(argv[3], 4))[0] == -7  # C's int is .u32
    refused = [
        ((3.0, 0, 0, 3.0), TypeError, r"argument 3 \(\.u32\): a float given"),
        ((3.0, 1.5, 0, 3), TypeError, r"argument 1 \(\.u64\): a float given"),
        ((3, 0, 0, 3), TypeError, r"argument 0 \(\.f32\): an int given"),
        ((3.0, 0, 0, 2**32), OverflowError, r"argument 3 \(\.u32\)"),
        ((3.0, 0, 0, DevicePointer(8)), TypeError, r"argument 3 \(\.u32\): DevicePointer"),
        ((3.0, 0, 0), TypeError, "takes 4 arguments"),
    ]
    for args, error, match in refused:
        with pytest.raises(error, match=match):
            fn.pack(*args)
    # mixed(char, short, int, long long, float, double, double*); take_pair(Pair, double*)
    mixed = module.get_function("mixed")
    packed = mixed.pack(-1, 2, 3, -(2**63), 1.5, 0.25, 0x1000)
    argv = (ctypes.c_void_p * 7).from_address(int(packed))
    assert struct.unpack("<d", ctypes.string_at(argv[5], 8))[0] == 0.25
    assert struct.unpack("<q", ctypes.string_at(argv[3], 8))[0] == -(2**63)
    pair = module.get_function("take_pair")
    assert (pair.param_types[0].kind, pair.param_types[0].size) == (None, 16)
    with pytest.raises(TypeError, match=r"argument 0 \(\.b8\[16\]\)"):
        pair.pack(1.0, 0x1000)
    assert len(pair.pack(bytes(16), 0x1000)) == 2
    # A declared signature still has the last word.
    typed = module.get_function("axpy", signature="double, float*, float*, int")
    assert typed.param_types[0].text == "double"


def test_images_without_ptx_leave_extern_c_kernels_untyped():
    for image in ("kernels.cubin", "kernels_lz4_sass.fatbin"):
        fn = module_of((KERNELS / image).read_bytes()).get_function("axpy")
        assert fn.param_types is None
        with pytest.raises(TypeError, match="ambiguous"):
            fn.pack(3.0, 0, 0, 1)


def test_refused_launch_leaves_the_configuration():
    fn = function("axpy", sizes=(4, 8, 8, 4), signature="float, float*, float*, int")
    args = (2.0, 0x1000, 0x2000, 4)
    attempt(fn, 1, 32, *args)
    assert (fn._config.gridDim.x, fn._config.blockDim.x) == (1, 32)
    with pytest.raises(ValueError, match="shared_mem"):
        fn.launch(4096, 32, *args, shared_mem=-1)
    with pytest.raises(TypeError, match="stream"):
        fn.launch(4096, 64, *args, stream=1.5)
    with pytest.raises(ValueError, match="grid"):
        fn.launch((4096, 1, 1, 1), 32, *args)
    with pytest.raises(TypeError, match="argument 3"):
        fn.launch(4096, 32, 2.0, 0x1000, 0x2000, "4")
    assert (fn._config.gridDim.x, fn._config.blockDim.x, fn._config.dynamicSmemBytes) == (1, 32, 0)
    # The next launch with the first launch's geometry runs with it, not with 4096 blocks.
    attempt(fn, 1, 32, *args)
    assert (fn._config.gridDim.x, fn._config.blockDim.x) == (1, 32)
    attempt(fn, 2, 64, *args, shared_mem=128)
    assert (fn._config.gridDim.x, fn._config.blockDim.x, fn._config.dynamicSmemBytes) == (
        2,
        64,
        128,
    )


def test_configure_writes_nothing_it_refuses():
    config = cudart.sys.cudaLaunchConfig_t()
    configure(config, (3, 2), 16, 0, None, False)
    for bad in (
        ((4096,), 32, -1, None),
        ((4096,), 32, 2**32, None),
        ((4096,), 32, 0, "stream"),
        ((4096,), 2**33, 0, None),
    ):
        with pytest.raises((ValueError, TypeError, OverflowError)):
            configure(config, *bad, False)
        assert (config.gridDim.x, config.gridDim.y, config.blockDim.x) == (3, 2, 16)


# ---------------------------------------------------------------- the checked layer


def test_checked_functions_take_a_function_and_refuse_memory():
    fn = function("_Z4axpyfPKfPfi")
    dim = cudart.sys.dim3
    with pytest.raises(TypeError, match="'func' must be a device function.*not bytes"):
        cudart.cudaFuncGetName(b"axpy")
    with pytest.raises(TypeError, match="'func' must be a device function.*not float"):
        cudart.cudaFuncGetAttributes(1.5)
    # A tuple of Python values needs the parameter types: a Function's, else ctypes
    # values, each its own C type (tests/runtime/test_driver_kernel_args.py).
    with pytest.raises(TypeError, match="'args': argument 0 is int: .* give ctypes values"):
        cudart.cudaLaunchKernel(0x1234, dim(1, 1, 1), dim(1, 1, 1), (1, 2), 0, None)
    # Packed with fn's types: refused before C.
    with pytest.raises(TypeError, match=r"argument 0 \(float\): an int"):
        cudart.cudaLaunchCooperativeKernel(fn, dim(1, 1, 1), dim(1, 1, 1), (1, 0, 0, 4), 0, None)
    # Accepted: C is reached (no GPU: an error code, raised).
    for args in ((2.0, 0, 0, 4), fn.pack(2.0, 0, 0, 4)):
        with pytest.raises(CudaError):
            cudart.cudaLaunchKernel(fn, dim(1, 1, 1), dim(1, 1, 1), args, 0, None)
    with pytest.raises(CudaError):
        cudart.cudaFuncGetAttributes(fn)
    fn._invalidate()
    with pytest.raises(ValueError, match="module is closed"):
        cudart.cudaFuncGetAttributes(fn)


def test_checked_kernel_arguments_in_memory_hold_a_pointer_per_parameter():
    # C reads one pointer per kernel parameter from `args`, with no length (issue 20:
    # a 1-byte buffer reached C). Where the parameters are unknown (a raw address),
    # at least one pointer, pointer-aligned.
    dim = cudart.sys.dim3
    fn = function("_Z4axpyfPKfPfi", sizes=(4, 8, 8, 4))
    config = cudart.cudaLaunchConfig_t(gridDim=dim(1, 1, 1), blockDim=dim(1, 1, 1))
    one = dim(1, 1, 1)
    launches = (
        lambda f, a: cudart.cudaLaunchKernel(f, one, one, a, 0, None),
        lambda f, a: cudart.cudaLaunchCooperativeKernel(f, one, one, a, 0, None),
        lambda f, a: cudart.cudaLaunchKernelExC(config, f, a),
    )
    for launch in launches:
        for args in (b"x", bytearray(24), (ctypes.c_void_p * 3)()):
            with pytest.raises(ValueError, match=r"C reads 4 pointers, one per parameter"):
                launch(fn, args)
        with pytest.raises(ValueError, match=r"C reads one pointer \(8 bytes\)"):
            launch(0x10000, bytearray(4))
        with pytest.raises(ValueError, match="8-byte aligned"):
            launch(0x10000, memoryview(bytearray(17))[1:])
        with pytest.raises(TypeError, match="must be an array of pointers, not of c_int"):
            launch(0x10000, (ctypes.c_int * 2)())
        # Enough pointers: C is reached (no GPU: an error code, raised).
        for f, args in (
            (fn, (ctypes.c_void_p * 4)()),
            (fn, bytearray(32)),
            (0x10000, bytes(8)),
            (0x10000, (ctypes.c_char * 8)()),
        ):
            with pytest.raises(CudaError):
                launch(f, args)


class Index:
    """An int-like that counts its conversions."""

    def __init__(self, value: int):
        self.value = value
        self.calls = 0

    def __index__(self) -> int:
        self.calls += 1
        return self.value


def test_checked_launches_take_ints_tuples_and_dim3_likes():
    # Issue 21: the checked launches refused what Function.launch takes (`expected a
    # dim3 instance, got int`).
    fn = function("_Z4axpyfPKfPfi", sizes=(4, 8, 8, 4))
    args = fn.pack(2.0, 0, 0, 4)
    for launch in (cudart.cudaLaunchKernel, cudart.cudaLaunchCooperativeKernel):
        for grid, block in (
            (1, 32),
            ((2, 3), (32,)),
            (cudart.dim3(4), types.SimpleNamespace(x=1, y=2, z=1)),
        ):
            with pytest.raises(CudaError):  # reached C (no GPU: an error code, raised)
                launch(fn, grid, block, args, 0, None)
        for grid, error, match in (
            (2**32, ValueError, "gridDim dimension 4294967296 out of range"),
            ((1, 1, 1, 1), ValueError, "gridDim must have 1 to 3 dimensions"),
            (1.5, TypeError, "gridDim must be an int or a tuple"),
            (("1",), TypeError, "gridDim dimensions must be ints"),
        ):
            with pytest.raises(error, match=match):
                launch(fn, grid, 1, args, 0, None)
        x, y = Index(5), Index(2**32 + 1)  # converted once: the int C gets is checked
        with pytest.raises(ValueError, match="blockDim dimension"):
            launch(fn, 1, (x, y), args, 0, None)
        assert (x.calls, y.calls) == (1, 1)
    config = cudart.cudaLaunchConfig_t(gridDim=(2, 2), blockDim=128)
    assert (config.gridDim.x, config.gridDim.y, config.gridDim.z) == (2, 2, 1)
    assert (config.blockDim.x, config.blockDim.y, config.blockDim.z) == (128, 1, 1)
    with pytest.raises(CudaError):
        cudart.cudaLaunchKernelExC(config, fn, args)


def test_raw_functions_take_a_function_and_packed_arguments():
    fn = function("_Z4axpyfPKfPfi")
    rt = cudart.sys
    packed = fn.pack(2.0, 0, 0, 4)
    status = rt.cudaLaunchKernel(fn, rt.dim3(1, 1, 1), rt.dim3(1, 1, 1), packed, 0, None)
    assert status != 0  # reached C (ctypes converted both); no GPU here


# ---------------------------------------------------------------- records


def _raw_modules():
    from cudart._views import versions

    return [importlib.import_module(f"cudart.sys_{v}") for v in versions("sys")]


RAW_MODULES = _raw_modules()


@pytest.mark.parametrize("lib", RAW_MODULES, ids=lambda m: m.__name__)
def test_records_take_a_function_and_packed_arguments(lib):
    expected = {
        "cudaKernelNodeParams": ("func", "kernelParams"),
        "cudaKernelNodeParamsV2": ("func", "kernelParams"),
        "cudaLaunchParams": ("func", "args"),
    }
    present = [name for name in expected if hasattr(lib, name)]
    assert "cudaKernelNodeParams" in present
    for name in present:
        cls = getattr(lib, name)
        func, params = expected[name]
        assert isinstance(vars(cls)[func], ConvertedField)
        assert isinstance(vars(cls)[params], ConvertedField)
        assert not isinstance(vars(cls).get("extra"), ConvertedField)
    # The records are lib's; the kernel belongs to the loaded runtime (a module of another
    # major refuses to call it: cudart._binding).
    fn = Function(types.SimpleNamespace(_rt=cudart.sys), "_Z4axpyfPKfPfi", 0x1234)
    node = lib.cudaKernelNodeParams(func=fn, gridDim=lib.dim3(1, 1, 1))
    assert node.func == 0x1234
    packed = fn.pack(2.0, 0, 0, 4)
    watch_fn, watch_packed = weakref.ref(fn), weakref.ref(packed)
    node.kernelParams = packed
    assert ctypes.cast(node.kernelParams, ctypes.c_void_p).value == int(packed)
    del fn, packed
    gc.collect()
    assert watch_fn() is not None and watch_packed() is not None  # the record holds them
    node.func = 0x99
    node.kernelParams = None
    gc.collect()
    assert watch_fn() is None and watch_packed() is None  # released by the next store
    assert node.func == 0x99 and not node.kernelParams
    with pytest.raises(TypeError, match="'func' must be a device function"):
        node.func = b"axpy"
    with pytest.raises(TypeError, match="pack the values first"):
        node.kernelParams = (1, 2)
    # ctypes' own objects still go in as ctypes takes them.
    argv = (ctypes.c_void_p * 2)(1, 2)
    node.kernelParams = argv
    assert node.kernelParams[1] == 2
    node.func = ctypes.c_void_p(0x55)
    assert node.func == 0x55


@pytest.mark.parametrize(
    "lib",
    [m for m in RAW_MODULES if hasattr(m, "cudaGraphNodeParams")],
    ids=lambda m: m.__name__,
)
def test_nested_records_keep_the_function(lib):
    fn = Function(types.SimpleNamespace(_rt=cudart.sys), "_Z4axpyfPKfPfi", 0x4321)
    watch = weakref.ref(fn)
    params = lib.cudaGraphNodeParams()
    params.kernel.func = fn  # a view into `params`: ctypes keeps it in `params`
    params.kernel.kernelParams = fn.pack(1.0, 0, 0, 1)
    del fn
    gc.collect()
    assert watch() is not None
    assert params.kernel.func == 0x4321
    copy = lib.cudaKernelNodeParamsV2()
    copy.func = watch()
    outer = lib.cudaGraphNodeParams()
    outer.kernel = copy  # a record stored into another carries what it keeps
    del copy, params
    gc.collect()
    assert watch() is not None and outer.kernel.func == 0x4321


@pytest.mark.parametrize("lib", RAW_MODULES, ids=lambda m: m.__name__)
def test_dim3_is_cpp_dim3(lib):
    # C++'s dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) (vector_types.h);
    # ctypes' own constructor zeroed what was not given: dim3(512) was (512, 0, 0).
    def dims(d):
        return (d.x, d.y, d.z)

    assert dims(lib.dim3(512)) == (512, 1, 1)
    assert dims(lib.dim3()) == (1, 1, 1)
    assert dims(lib.dim3(2, 3)) == (2, 3, 1)
    assert dims(lib.dim3(4, z=5)) == (4, 1, 5)
    assert dims(lib.dim3(7, 8, 9)) == (7, 8, 9)
    node = lib.cudaKernelNodeParams(gridDim=64, blockDim=(8, 4))
    assert (dims(node.gridDim), dims(node.blockDim)) == ((64, 1, 1), (8, 4, 1))
    node.gridDim = lib.dim3(3)
    assert dims(node.gridDim) == (3, 1, 1)
    with pytest.raises(ValueError, match="gridDim dimension -1 out of range"):
        node.gridDim = (1, -1)
    assert dims(node.gridDim) == (3, 1, 1)


# ---------------------------------------------------------------- the generator's rules


def test_device_function_rules():
    void_p = Pointer(Builtin("void"), pointee_const=True)
    void_pp = Pointer(Pointer(Builtin("void")))
    classify = device_functions.classify
    assert classify("cudaLaunchKernel", [("func", void_p, ""), ("args", void_pp, "")]) == {
        "func": "device_function",
        "args": "kernel_arguments",
    }
    assert classify(
        "cudaGetKernel", [("entryFuncAddr", void_p, "Address of device entry function")]
    ) == {"entryFuncAddr": "device_function"}
    # Memory is not a function, and `args` alone is not a kernel's arguments.
    assert classify("cudaMemcpyToSymbol", [("symbol", void_p, "Device symbol address")]) == {}
    assert classify("f", [("args", void_pp, "")]) == {}
    assert classify("cudaKernelNodeParams", [("func", void_p, ""), ("extra", void_pp, "")]) == {
        "func": "device_function"
    }
    for (owner, member), (what, reason) in device_functions.REVIEWED.items():
        assert owner and member and len(reason) > 20
        assert what in (None, device_functions.DEVICE_FUNCTION, device_functions.KERNEL_ARGUMENTS)


def test_numpy_is_not_imported_and_its_scalars_are_typed_once_it_is():
    """cudart.kernels leaves NumPy unimported (it cost the import 55 ms), and
    cudart.arrays too; a NumPy scalar exists only where the program imported NumPy, and
    is then packed by its dtype."""
    code = r"""
import ctypes, struct, sys, types
import cudart, cudart.kernels
from cudart.kernels._function import Function
assert "numpy" not in sys.modules, "cudart.kernels imported NumPy"
assert "cudart.arrays" not in sys.modules, "cudart.kernels imported cudart.arrays"
import numpy as np
fn = Function(types.SimpleNamespace(_rt=cudart.sys), "axpy", 0, None)
fn._params = (4, 8, 8, 4)
try:
    fn.launch(1, 1, np.float32(2.5), 0x1000, 0x2000, np.int32(-3))
except cudart.CudaError:
    pass  # no GPU: refused after the arguments were packed
a, n = (ctypes.string_at(fn._sig._pointers[k], 4) for k in (0, 3))
print(struct.unpack("<f", a)[0], struct.unpack("<i", n)[0])
"""
    assert run_python(code).stdout.split() == ["2.5", "-3"]
