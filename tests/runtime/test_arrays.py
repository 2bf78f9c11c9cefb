"""cudart.arrays (device memory for CuPy, PyTorch, JAX) and DLPack producers taken as
device addresses, without a GPU: the capsules are read with this file's own ctypes
rendering of dlpack.h, as a consumer would read them."""

from __future__ import annotations

import ctypes
import gc
import struct
import types
import weakref

import needs
import pytest

import cudart
from cudart import CudaError, arrays
from cudart._convert import address, device_address
from cudart.kernels._function import Function

ADDRESS = 0x7F00_0000_0000
CUDA = (2, 0)  # kDLCUDA, device 0


# dlpack.h v1.0, written out again: a consumer's reading, not the producer's structures.
class Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", Device),
        ("ndim", ctypes.c_int32),
        ("dtype", DataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class Versioned(ctypes.Structure):
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", DELETER),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", Tensor),
    ]


_api = ctypes.PyDLL(None, handle=ctypes.pythonapi._handle)
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
USED = {b"dltensor": b"used_dltensor", b"dltensor_versioned": b"used_dltensor_versioned"}


def consume(capsule):
    """Take a capsule as a DLPack consumer does: (managed tensor, its address)."""
    name = _api.PyCapsule_GetName(capsule)
    pointer = _api.PyCapsule_GetPointer(capsule, name)
    _api.PyCapsule_SetName(capsule, USED[name])
    return (Versioned if name == b"dltensor_versioned" else Managed).from_address(pointer), pointer


class Owner:
    """Stands for whatever owns the memory (a CuPy array, a pool allocation)."""


class Producer:
    """Another library's array: DLPack only, no __cuda_array_interface__."""

    def __init__(self, array, device=CUDA, offset=0):
        self.array, self.device, self.offset = array, device, offset

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None):
        capsule = self.array.__dlpack__(stream=stream, max_version=max_version)
        if self.offset:  # as a producer of a sliced view may: data + byte_offset
            # Versioned where the consumer asked for max_version (1, 0), as cudart does.
            name = _api.PyCapsule_GetName(capsule)
            kind = Versioned if name == b"dltensor_versioned" else Managed
            managed = kind.from_address(_api.PyCapsule_GetPointer(capsule, name))
            managed.dl_tensor.byte_offset = self.offset
        return capsule


# ---------------------------------------------------------------- __cuda_array_interface__


def test_cuda_array_interface_is_version_3():
    a = cudart.as_array(ADDRESS, (4, 5), "float32", device=CUDA)
    assert a.__cuda_array_interface__ == {
        "shape": (4, 5),
        "typestr": "<f4",
        "data": (ADDRESS, False),
        "version": 3,
        "strides": None,
        "descr": [("", "<f4")],
    }
    # Strides in bytes where not C order; C-order strides given are None (v3's rule).
    t = cudart.as_array(ADDRESS, (4, 5), "<f8", strides=(8, 32), readonly=True, stream=0x55)
    cai = t.__cuda_array_interface__
    assert cai["strides"] == (8, 32) and cai["data"] == (ADDRESS, True) and cai["stream"] == 0x55
    assert cudart.as_array(ADDRESS, (4, 5), "f8", strides=(40, 8)).strides is None
    # 0 is no CAI stream: the default stream is 1 (legacy) or 2 (per-thread).
    default = cudart.as_array(ADDRESS, 3, "u1", stream=None).__cuda_array_interface__
    assert "stream" not in default
    assert cudart.as_array(ADDRESS, 3, "u1", stream=0).__cuda_array_interface__["stream"] == (
        2 if cudart.per_thread_default_stream() else 1
    )


@pytest.mark.parametrize(
    "dtype, expected",
    [
        ("float32", "<f4"),
        ("<i8", "<i8"),
        ("u1", "|u1"),
        ("bool", "|b1"),
        ("complex128", "<c16"),
        (ctypes.c_uint16, "<u2"),
        (ctypes.c_double, "<f8"),
        (ctypes.c_int8, "|i1"),
    ],
)
def test_dtypes(dtype, expected):
    assert arrays.typestr(dtype) == expected


def test_numpy_dtypes():
    np = needs.numpy()
    assert arrays.typestr(np.float16) == "<f2" and arrays.typestr(np.dtype("int32")) == "<i4"


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(dtype=">f4"), ValueError),
        (dict(dtype="x4"), ValueError),
        (dict(dtype=ctypes.c_char_p), TypeError),
        (dict(shape=(2, -1)), ValueError),
        (dict(shape=(2.0,)), TypeError),
        (dict(strides=(4,)), ValueError),
        (dict(ptr=b"host bytes"), TypeError),
        (dict(ptr=1.5), TypeError),
        (dict(ptr=-1), TypeError),
    ],
)
def test_as_array_refuses(kwargs, error):
    given = dict(ptr=ADDRESS, shape=(2, 3), dtype="float32") | kwargs
    with pytest.raises(error):
        cudart.as_array(**given)


def test_the_array_keeps_its_owner_and_is_a_device_address():
    owner = Owner()
    watch = weakref.ref(owner)
    a = cudart.as_array(ADDRESS, 8, "float32", owner=owner)
    del owner
    gc.collect()
    assert watch() is not None and a.owner is watch()
    inner = cudart.as_array(ADDRESS + 16, 2, "f4")
    outer = cudart.as_array(inner, 2, "f4")  # ptr an object: it is the owner
    assert outer.owner is inner and outer.ptr == ADDRESS + 16
    assert device_address(a) == ADDRESS
    del a
    gc.collect()
    assert watch() is None


# ---------------------------------------------------------------- __dlpack__


@pytest.mark.parametrize(
    "dtype, code, bits", [("float32", 2, 32), ("int16", 0, 16), ("uint64", 1, 64), ("bool", 6, 8)]
)
def test_unversioned_capsule_holds_the_tensor(dtype, code, bits):
    a = cudart.as_array(ADDRESS, (3, 4), dtype, strides=(bits // 8, 3 * bits // 8), device=(2, 1))
    assert a.__dlpack_device__() == (2, 1)
    capsule = a.__dlpack__()
    assert _api.PyCapsule_GetName(capsule) == b"dltensor"
    managed, _ = consume(capsule)
    t = managed.dl_tensor
    assert (t.data, t.ndim, t.byte_offset) == (ADDRESS, 2, 0)
    assert (t.device.device_type, t.device.device_id) == (2, 1)
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (code, bits, 1)
    assert t.shape[:2] == [3, 4] and t.strides[:2] == [1, 3]  # DLPack counts items
    managed.deleter(ctypes.addressof(managed))


def test_versioned_capsule_says_version_and_read_only():
    a = cudart.as_array(ADDRESS, (2, 2), "float64", readonly=True, device=CUDA)
    with pytest.raises(BufferError, match="read-only"):
        a.__dlpack__()  # an unversioned capsule cannot say so
    managed, address_ = consume(a.__dlpack__(max_version=(1, 3)))
    assert (managed.major, managed.minor) == (1, 0) and managed.flags & 1
    assert managed.dl_tensor.strides[:2] == [2, 1] and managed.dl_tensor.data == ADDRESS
    managed.deleter(address_)
    writable = cudart.as_array(ADDRESS, 1, "f4", device=CUDA).__dlpack__(max_version=(1, 0))
    assert _api.PyCapsule_GetName(writable) == b"dltensor_versioned"
    managed, address_ = consume(writable)
    assert managed.flags == 0
    managed.deleter(address_)


@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_owner_lives_until_the_consumer_calls_the_deleter_once(max_version):
    owner = Owner()
    watch = weakref.ref(owner)
    capsule = cudart.as_array(ADDRESS, 8, "f4", owner=owner, device=CUDA).__dlpack__(
        max_version=max_version
    )
    del owner
    gc.collect()
    assert watch() is not None  # the capsule holds the array, which holds the owner
    managed, pointer = consume(capsule)
    del capsule  # taken: dropping the capsule is the consumer's business, no deleter call
    gc.collect()
    assert watch() is not None
    managed.deleter(pointer)
    gc.collect()
    assert watch() is None


def test_a_capsule_nobody_takes_hands_the_tensor_back():
    owner = Owner()
    watch = weakref.ref(owner)
    capsule = cudart.as_array(ADDRESS, 8, "f4", owner=owner, device=CUDA).__dlpack__()
    del owner
    gc.collect()
    assert watch() is not None
    del capsule
    gc.collect()
    assert watch() is None


def test_dlpack_refusals():
    a = cudart.as_array(ADDRESS, 4, "f4", strides=(2,), device=CUDA)
    with pytest.raises(BufferError, match="whole items"):
        a.__dlpack__()
    b = cudart.as_array(ADDRESS, 4, "f4", device=CUDA, stream=7)
    with pytest.raises(BufferError, match="copy"):
        b.__dlpack__(copy=True)
    with pytest.raises(BufferError):
        b.__dlpack__(dl_device=(2, 3))
    with pytest.raises(ValueError, match="ambiguous"):
        b.__dlpack__(stream=0)
    managed, pointer = consume(b.__dlpack__(stream=7))  # its own stream: nothing to order
    managed.deleter(pointer)


# ---------------------------------------------------------------- DLPack producers taken


def test_device_address_takes_dlpack_producers_of_cuda_memory_only():
    array = cudart.as_array(ADDRESS, 16, "u1", device=CUDA)
    exported = len(arrays._exported)
    assert device_address(Producer(array)) == ADDRESS
    managed = cudart.as_array(ADDRESS, 16, "u1", device=(13, 0))
    assert device_address(Producer(managed, device=(13, 0), offset=8)) == ADDRESS + 8
    # A producer whose tensor is elsewhere than its __dlpack_device__ says is believed in
    # neither (issue 33 item 20: tests/runtime/test_lying_producers.py).
    with pytest.raises(ValueError, match=r"on device \(2, 0\), but .* said \(13, 0\)"):
        device_address(Producer(array, device=(13, 0)))
    assert device_address(Producer(array, device=(1, 0))) is None  # host memory
    gc.collect()
    assert len(arrays._exported) == exported  # the capsules read were handed back
    np = needs.numpy()
    # A one-element host array has __int__ (its value): no address for all that.
    assert device_address(np.array([ADDRESS])) is None
    # Where a `void *` member takes memory (cudart._convert.address), such an array is
    # host memory: its data's address, never its value.
    host = np.array([ADDRESS])
    assert address(host, "d").value == host.ctypes.data != ADDRESS


def test_record_fields_take_both_protocols():
    array = cudart.as_array(ADDRESS, 64, "u1", device=CUDA)
    for given in (array, Producer(array)):
        assert cudart.make_cudaPitchedPtr(given, 64, 64, 1).ptr == ADDRESS


@pytest.mark.backend
def test_checked_memory_parameters_take_both_protocols():
    """Without a GPU the runtime refuses the copy: a CudaError, where a pointer the
    conversion did not take would be a TypeError before C."""
    array = cudart.as_array(ADDRESS, 64, "u1", device=CUDA)
    for given in (array, Producer(array)):
        with pytest.raises(CudaError):
            cudart.cudaMemcpy(given, bytes(64), 64, cudart.cudaMemcpyHostToDevice)
    with pytest.raises(TypeError, match="__dlpack__"):
        cudart.cudaMemcpy(object(), bytes(64), 64, cudart.cudaMemcpyHostToDevice)


@pytest.mark.backend
def test_kernel_arguments_take_both_protocols():
    fn = Function(types.SimpleNamespace(_rt=cudart.sys), "_Z4axpyfPKfPfi", 0, None)
    array = cudart.as_array(ADDRESS, 4, "f4", device=CUDA)
    packed = fn.pack(2.0, array, Producer(cudart.as_array(ADDRESS + 64, 4, "f4", device=CUDA)), 4)
    argv = (ctypes.c_void_p * 4).from_address(int(packed))
    assert struct.unpack("<Q", ctypes.string_at(argv[1], 8))[0] == ADDRESS
    assert struct.unpack("<Q", ctypes.string_at(argv[2], 8))[0] == ADDRESS + 64


@pytest.mark.backend
def test_the_device_is_asked_of_the_runtime_when_not_given():
    """cudaPointerGetAttributes answers on a GPU (tests/gpu/test_arrays.py); here the
    runtime's error is what the consumer sees, not a guessed device."""
    with pytest.raises(CudaError):
        cudart.as_array(ADDRESS, 4, "f4").__dlpack_device__()
