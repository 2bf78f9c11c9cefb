"""DLPack's C structures (dlpack.h, v1.0) and its PyCapsules, with ctypes alone.

cudart.arrays exports device memory through them (`__dlpack__`), and cudart._convert
reads another library's export where a device address is taken. A capsule is named
"dltensor" (a DLManagedTensor) or "dltensor_versioned" (a DLManagedTensorVersioned);
a consumer that takes one renames it "used_dltensor" / "used_dltensor_versioned" and
calls the tensor's deleter when done; a capsule never taken calls it when collected.
"""

from __future__ import annotations

import ctypes
import os
from ctypes import (
    POINTER,
    Structure,
    c_char_p,
    c_int32,
    c_int64,
    c_uint8,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)

# For type checkers only: this module is imported on a device address's first DLPack read.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# DLDeviceType values for CUDA memory: device, pinned host, managed.
KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_CUDA_MANAGED = 13
CUDA_DEVICE_TYPES = frozenset({KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED})

# DLDataTypeCode by __cuda_array_interface__'s typestr kind.
TYPE_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}

VERSION = (1, 0)
FLAG_READ_ONLY = 1 << 0

LEGACY_NAME = b"dltensor"
VERSIONED_NAME = b"dltensor_versioned"


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


# The deleter takes the managed tensor's own address: one C signature serves both.
Deleter = ctypes.CFUNCTYPE(None, c_void_p)


class DLManagedTensor(Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", Deleter)]


class DLManagedTensorVersioned(Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", c_void_p),
        ("deleter", Deleter),
        ("flags", c_uint64),
        ("dl_tensor", DLTensor),
    ]


# Our own handle on the C API (ctypes.pythonapi's function objects are shared: argtypes
# set on them would change them for every other user in the process).
_api = ctypes.PyDLL(None, handle=ctypes.pythonapi._handle)
CapsuleDestructor = ctypes.CFUNCTYPE(None, c_void_p)
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [c_void_p, c_char_p, CapsuleDestructor]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, c_char_p]
_api.PyCapsule_GetPointer.restype = c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, c_char_p]
# The capsule destructor gets a bare PyObject *: the same two functions, taking that.
_raw = ctypes.PyDLL(None, handle=ctypes.pythonapi._handle)
_raw_is_valid = _raw.PyCapsule_IsValid
_raw_is_valid.restype = ctypes.c_int
_raw_is_valid.argtypes = [c_void_p, c_char_p]
_raw_get_pointer = _raw.PyCapsule_GetPointer
_raw_get_pointer.restype = c_void_p
_raw_get_pointer.argtypes = [c_void_p, c_char_p]


def capsule_pointer(capsule: object, name: bytes) -> int | None:
    """The address a capsule named `name` holds; None for any other object or name."""
    if type(capsule).__name__ != "PyCapsule" or not _api.PyCapsule_IsValid(capsule, name):
        return None
    return _api.PyCapsule_GetPointer(capsule, name) or None


def new_capsule(address: int, name: bytes) -> object:
    """A capsule holding `address` under `name` (one of the constants here, which live as
    long as the module), whose destructor calls the managed tensor's deleter unless a
    consumer took it."""
    return _api.PyCapsule_New(address, name, _DESTRUCTORS[name])


def _destructor(name: bytes, managed: Any) -> Any:
    def destroy(capsule: int) -> None:
        # Called with the capsule's PyObject *; a taken one was renamed "used_...".
        if not _raw_is_valid(capsule, name):
            return
        address = _raw_get_pointer(capsule, name)
        if address:
            tensor = managed.from_address(address)
            if tensor.deleter:
                tensor.deleter(address)

    return CapsuleDestructor(destroy)


_DESTRUCTORS = {
    LEGACY_NAME: _destructor(LEGACY_NAME, DLManagedTensor),
    VERSIONED_NAME: _destructor(VERSIONED_NAME, DLManagedTensorVersioned),
}


def exported_address(value: Any) -> int | None:
    """The CUDA address a DLPack producer's memory starts at: `exported_memory`'s."""
    memory = exported_memory(value)
    return None if memory is None else memory[0]


def exported_memory(value: Any) -> tuple[int, bool] | None:
    """(address, read-only) of a DLPack producer's CUDA memory (data + byte_offset; read-only
    where a versioned tensor's flags say so), or None where `value` is no producer of
    CUDA memory (a CPU array, no __dlpack__).

    Believed only where it can be what it claims: __dlpack_device__() a 2-tuple of ints,
    the capsule's pointer readable memory of a DLManagedTensor (`_read_managed`), a
    versioned one of DLPack major version 1 (another's layout is not this one), and the
    tensor itself on the device __dlpack_device__ named. Anything else is a ValueError
    or TypeError, never a read of memory that is not there.

    The capsule is not taken: its destructor hands the tensor back when it is collected.
    The memory belongs to `value`, which the caller holds for its call."""
    device = getattr(value, "__dlpack_device__", None)
    if device is None or not hasattr(value, "__dlpack__"):
        return None
    owner = type(value).__name__
    device_type, device_id = _device(device(), f"{owner}.__dlpack_device__()")
    if device_type not in CUDA_DEVICE_TYPES:
        return None
    try:
        capsule = value.__dlpack__(max_version=VERSION)
    except TypeError:  # a producer of DLPack before 1.0: no max_version, no versioned capsule
        capsule = value.__dlpack__()
    what = f"{owner}.__dlpack__()"
    versioned = False
    address = capsule_pointer(capsule, LEGACY_NAME)
    if address is None:
        address = capsule_pointer(capsule, VERSIONED_NAME)
        if address is None:
            raise TypeError(f"{what} returned no DLPack capsule")
        versioned = True
    managed = _read_managed(address, versioned, what)
    flags = 0
    if versioned:
        major, minor = managed.version.major, managed.version.minor
        if major != VERSION[0]:
            raise ValueError(
                f"{what} is a tensor of DLPack {major}.{minor}: cudart reads major version "
                f"{VERSION[0]}"
            )
        flags = managed.flags
    tensor = managed.dl_tensor
    found = (tensor.device.device_type, tensor.device.device_id)
    if found != (device_type, device_id):
        raise ValueError(
            f"{what} is a tensor on device {found}, but {owner}.__dlpack_device__() said "
            f"{(device_type, device_id)}"
        )
    start = (tensor.data or 0) + tensor.byte_offset
    if start >> 64:
        raise ValueError(f"{what}: data + byte_offset is {start:#x}, past the address space")
    return start, bool(flags & FLAG_READ_ONLY)


def _device(answer: Any, what: str) -> tuple[int, int]:
    """A __dlpack_device__() answer, (device type, device id), as ints: a float or a
    str there is a mistake, not a device."""
    if type(answer) is not tuple or len(answer) != 2:
        raise TypeError(f"{what} must return a 2-tuple (device type, device id), not {answer!r}")
    for item in answer:
        if isinstance(item, (bool, float, complex)) or not hasattr(type(item), "__index__"):
            raise TypeError(f"{what} must return ints, not {answer!r}")
    device_type, device_id = (int(item.__index__()) for item in answer)
    return device_type, device_id


def _read_managed(address: int, versioned: bool, what: str) -> Any:
    """A copy of the DLManagedTensor(Versioned) at a capsule's `address`, read through the
    kernel (`readable`), which answers EFAULT where ctypes would crash the process: a
    producer's capsule may hold any pointer (PyCapsule_New(0x10, "dltensor"))."""
    managed = DLManagedTensorVersioned if versioned else DLManagedTensor
    align = ctypes.alignment(managed)
    if address % align:
        raise ValueError(
            f"{what}: the capsule's pointer {address:#x} is not {align}-byte aligned, as a "
            f"{managed.__name__} is"
        )
    data = readable(address, ctypes.sizeof(managed))
    if data is None:
        raise ValueError(
            f"{what}: the capsule's pointer {address:#x} is not readable memory, so no "
            f"{managed.__name__}"
        )
    return managed.from_buffer_copy(data)


_libc = ctypes.CDLL(None, use_errno=True)
_write = _libc.write
_write.restype = ctypes.c_ssize_t
_write.argtypes = [ctypes.c_int, c_void_p, ctypes.c_size_t]


def readable(address: int, size: int) -> bytes | None:
    """The `size` bytes at `address`, or None where they are not all readable: write(2)
    copies them into a pipe, and the kernel answers EFAULT for an unmapped page instead
    of the SIGSEGV a read of ours would raise. A pipe of its own per call: nothing
    shared between threads or with a forked child."""
    r, w = os.pipe()
    try:
        if _write(w, address, size) != size:
            return None
        return os.read(r, size)
    finally:
        os.close(r)
        os.close(w)
