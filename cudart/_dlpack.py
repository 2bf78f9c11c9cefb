"""DLPack's C structures (dlpack.h, v1.0) and its PyCapsules, with ctypes alone.

cudart.arrays exports device memory through them (`__dlpack__`), and cudart._convert
reads another library's export where a device address is taken. A capsule is named
"dltensor" (a DLManagedTensor) or "dltensor_versioned" (a DLManagedTensorVersioned);
a consumer that takes one renames it "used_dltensor" / "used_dltensor_versioned" and
calls the tensor's deleter when done; a capsule never taken calls it when collected.
"""

from __future__ import annotations

import ctypes
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
    """The CUDA address a DLPack producer's memory starts at (data + byte_offset), or None
    where `value` is no producer of CUDA memory (a CPU array, no __dlpack__).

    The capsule is not taken: its destructor hands the tensor back when it is collected.
    The memory belongs to `value`, which the caller holds for its call."""
    device = getattr(value, "__dlpack_device__", None)
    if device is None or not hasattr(value, "__dlpack__"):
        return None
    if int(device()[0]) not in CUDA_DEVICE_TYPES:
        return None
    capsule = value.__dlpack__()
    address = capsule_pointer(capsule, LEGACY_NAME)
    if address is not None:
        tensor = DLManagedTensor.from_address(address).dl_tensor
    else:
        address = capsule_pointer(capsule, VERSIONED_NAME)
        if address is None:
            raise TypeError(f"{type(value).__name__}.__dlpack__() returned no DLPack capsule")
        tensor = DLManagedTensorVersioned.from_address(address).dl_tensor
    return (tensor.data or 0) + tensor.byte_offset
