"""Device memory as an array other libraries take without a copy.

    ptr = cudart.cudaMalloc(4 * 1024)
    a = cudart.arrays.as_array(ptr, (1024,), "float32")
    x = cupy.asarray(a)          # __cuda_array_interface__ v3
    t = torch.from_dlpack(a)     # __dlpack__ / __dlpack_device__

`as_array` copies nothing and frees nothing: the memory stays the caller's, and
`owner` (or `ptr` itself, when it is an object) is kept alive by the array and by every
DLPack capsule made from it until the consumer lets go. Standard library only.
"""

from __future__ import annotations

import ctypes
import re
import sys
from typing import Any

from . import _dlpack
from ._convert import device_address, stream_handle

__all__ = ["DeviceArray", "as_array"]

# ctypes' type codes by kind: the signed/unsigned integer codes, the float codes.
_CTYPES_KINDS = {
    **dict.fromkeys("bhilq", "i"),
    **dict.fromkeys("BHILQ", "u"),
    **dict.fromkeys("fdg", "f"),
    "?": "b",
}
_TYPESTR = re.compile(r"([<>|=]?)([iufcb])(\d+)")
_NAMES = re.compile(r"(int|uint|float|complex)(\d+)")
_NAME_KINDS = {"int": "i", "uint": "u", "float": "f", "complex": "c"}


def typestr(dtype: Any) -> str:
    """`dtype` as __cuda_array_interface__'s typestr ("<f4"): a typestr, a name
    ("float32", "uint8", "bool"), a ctypes scalar type (c_float), or a NumPy dtype or
    scalar type. Little-endian only: that is what CUDA devices hold."""
    if isinstance(dtype, type) and issubclass(dtype, ctypes._SimpleCData):
        kind = _CTYPES_KINDS.get(dtype._type_)  # type: ignore[attr-defined]
        if kind is None:
            raise TypeError(f"dtype: {dtype.__name__} is not a number type")
        return _typestr(kind, ctypes.sizeof(dtype))
    text = getattr(dtype, "str", None)  # a NumPy dtype
    if not isinstance(text, str) and "numpy" in sys.modules and not isinstance(dtype, str):
        text = getattr(sys.modules["numpy"].dtype(dtype), "str", None)
    if not isinstance(text, str):
        text = dtype
    if not isinstance(text, str):
        raise TypeError(f"dtype must be a typestr, a name or a ctypes type, not {dtype!r}")
    if text == "bool":
        return "|b1"
    named = _NAMES.fullmatch(text)
    if named:
        bits = int(named[2])
        if bits % 8:
            raise ValueError(f"dtype {text!r}: not a whole number of bytes")
        return _typestr(_NAME_KINDS[named[1]], bits // 8)
    found = _TYPESTR.fullmatch(text)
    if found is None:
        raise ValueError(f"dtype {text!r} is not a typestr (like '<f4') or a name ('float32')")
    order, kind, size = found.groups()
    if order == ">" and int(size) > 1:
        raise ValueError(f"dtype {text!r}: big-endian data is not what a CUDA device holds")
    return _typestr(kind, int(size))


def _typestr(kind: str, size: int) -> str:
    if size <= 0:
        raise ValueError(f"dtype: {size}-byte items")
    return f"{'|' if size == 1 else '<'}{kind}{size}"


def _dimensions(values: Any, what: str) -> tuple[int, ...]:
    if isinstance(values, int):
        values = (values,)
    try:
        result = tuple(v.__index__() for v in values)
    except (TypeError, AttributeError):
        raise TypeError(f"{what} must be a tuple of ints, not {values!r}") from None
    return result


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


class DeviceArray:
    """CUDA memory with a shape and an item type, for CuPy, PyTorch, JAX and the like:
    `__cuda_array_interface__` (version 3), `__dlpack__` and `__dlpack_device__`.
    cudart's own memory parameters and kernel arguments take it as its address."""

    __slots__ = ("ptr", "shape", "typestr", "strides", "stream", "owner", "readonly", "_device")

    def __init__(
        self,
        ptr: int,
        shape: tuple[int, ...],
        typestr: str,
        strides: tuple[int, ...] | None,
        stream: int | None,
        owner: Any,
        readonly: bool,
        device: tuple[int, int] | None,
    ) -> None:
        self.ptr = ptr
        self.shape = shape
        self.typestr = typestr
        # Stored in bytes; None: C-contiguous.
        self.strides = strides
        self.stream = stream
        self.owner = owner
        self.readonly = readonly
        self._device = device

    @property
    def itemsize(self) -> int:
        return int(self.typestr[2:])

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    def __repr__(self) -> str:
        return (
            f"DeviceArray(ptr={self.ptr:#x}, shape={self.shape}, typestr={self.typestr!r}"
            + (f", strides={self.strides}" if self.strides is not None else "")
            + ")"
        )

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        interface: dict[str, Any] = {
            "shape": self.shape,
            "typestr": self.typestr,
            "data": (self.ptr, self.readonly),
            "version": 3,
            "strides": self.strides,
            "descr": [("", self.typestr)],
        }
        if self.stream is not None:
            interface["stream"] = self.stream
        return interface

    # ------------------------------------------------------------ DLPack

    def __dlpack_device__(self) -> tuple[int, int]:
        if self._device is None:
            self._device = _device_of(self.ptr)
        return self._device

    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        if copy:
            raise BufferError("cudart.arrays.DeviceArray exports its memory, never a copy")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"the memory is on {self.__dlpack_device__()}, not {dl_device}")
        versioned = max_version is not None and tuple(max_version) >= (1, 0)
        if self.readonly and not versioned:
            # As NumPy: an unversioned capsule cannot say the memory is read-only.
            raise BufferError("read-only memory needs DLPack 1.0 (max_version=(1, 0))")
        self._order_for(stream)
        return _export(self, versioned)

    def _order_for(self, stream: Any) -> None:
        """Make the consumer's `stream` wait for ours (DLPack's rule): an event recorded
        on ours, waited for on theirs. Nothing where either is unknown or they agree."""
        if stream is None or stream == -1 or self.stream is None:
            return
        if stream == 0:
            raise ValueError("DLPack: stream 0 is ambiguous on CUDA; 1 is the legacy default")
        if stream == self.stream:
            return
        from ._serving import checked_module, raw_module

        rt = checked_module()
        event = rt.cudaEventCreateWithFlags(raw_module().cudaEventDisableTiming)
        try:
            rt.cudaEventRecord(event, self.stream)
            rt.cudaStreamWaitEvent(stream, event, 0)
        finally:
            rt.cudaEventDestroy(event)


def _device_of(ptr: int) -> tuple[int, int]:
    from ._serving import checked_module, raw_module

    # The checked module holds the functions, the raw one the constants.
    attributes = checked_module().cudaPointerGetAttributes(ptr)
    rt = raw_module()
    kind = {
        int(rt.cudaMemoryTypeDevice): _dlpack.KDL_CUDA,
        int(rt.cudaMemoryTypeHost): _dlpack.KDL_CUDA_HOST,
        int(rt.cudaMemoryTypeManaged): _dlpack.KDL_CUDA_MANAGED,
    }.get(int(attributes.type))
    if kind is None:
        raise ValueError(f"{ptr:#x} is not memory CUDA knows (not allocated or registered)")
    return kind, int(attributes.device)


# What each exported capsule's tensor needs alive until its deleter runs, by the
# managed tensor's address: the structure, its shape and strides, the array.
# Threads: keyed by an address no other live export has; one store and one pop each,
# atomic dict operations (the deleter may run on the consumer's thread).
_exported: dict[int, tuple[Any, ...]] = {}


def _deleter(address: int) -> None:
    _exported.pop(address, None)


_DELETER = _dlpack.Deleter(_deleter)


def _export(array: DeviceArray, versioned: bool) -> Any:
    itemsize = array.itemsize
    strides = array.strides or _c_strides(array.shape, itemsize)
    if any(s % itemsize for s in strides):
        raise BufferError(f"strides {strides} are not whole items: DLPack counts items")
    ndim = len(array.shape)
    shape_c = (ctypes.c_int64 * ndim)(*array.shape)
    strides_c = (ctypes.c_int64 * ndim)(*(s // itemsize for s in strides))
    managed: Any
    if versioned:
        managed = _dlpack.DLManagedTensorVersioned()
        managed.version.major, managed.version.minor = _dlpack.VERSION
        managed.flags = _dlpack.FLAG_READ_ONLY if array.readonly else 0
        name = _dlpack.VERSIONED_NAME
    else:
        managed = _dlpack.DLManagedTensor()
        name = _dlpack.LEGACY_NAME
    tensor = managed.dl_tensor
    tensor.data = array.ptr or None
    tensor.device.device_type, tensor.device.device_id = array.__dlpack_device__()
    tensor.ndim = ndim
    tensor.dtype.code = _dlpack.TYPE_CODES[array.typestr[1]]
    tensor.dtype.bits = 8 * itemsize
    tensor.dtype.lanes = 1
    tensor.shape = ctypes.cast(shape_c, ctypes.POINTER(ctypes.c_int64))
    tensor.strides = ctypes.cast(strides_c, ctypes.POINTER(ctypes.c_int64))
    tensor.byte_offset = 0
    managed.deleter = _DELETER
    address = ctypes.addressof(managed)
    _exported[address] = (managed, shape_c, strides_c, array)
    return _dlpack.new_capsule(address, name)


def as_array(
    ptr: Any,
    shape: Any,
    dtype: Any,
    strides: Any = None,
    stream: Any = None,
    owner: Any = None,
    *,
    readonly: bool = False,
    device: tuple[int, int] | None = None,
) -> DeviceArray:
    """CUDA memory at `ptr` as a DeviceArray of `shape` and `dtype`, without a copy.

    `ptr`: an int (what cudaMalloc returns) or anything cudart takes as a device address
    (a c_void_p, an object with __cuda_array_interface__ or __dlpack__); `dtype`: a
    typestr ("<f4"), a name ("float32"), a ctypes type or a NumPy dtype; `strides`: in
    bytes, None for C order; `stream`: the stream whose work writes the memory
    (consumers wait for it; None: nothing to wait for); `owner`: kept alive by the
    array and its DLPack exports (default: `ptr`, when it is an object);
    `device`: DLPack's (device type, id), found with cudaPointerGetAttributes when None.
    """
    address = device_address(ptr)
    if address is None or not 0 <= address < 1 << 64:
        raise TypeError(f"ptr must be a device address, not {type(ptr).__name__}")
    dims = _dimensions(shape, "shape")
    if any(d < 0 for d in dims):
        raise ValueError(f"shape {dims} has a negative dimension")
    kind = typestr(dtype)
    steps = None if strides is None else _dimensions(strides, "strides")
    if steps is not None and len(steps) != len(dims):
        raise ValueError(f"strides {steps} and shape {dims} differ in length")
    if steps == _c_strides(dims, int(kind[2:])):
        steps = None  # C order: CAI v3 says None
    if owner is None and type(ptr) is not int:
        owner = ptr
    return DeviceArray(address, dims, kind, steps, _stream_value(stream), owner, readonly, device)


def _stream_value(stream: Any) -> int | None:
    """CAI's and DLPack's stream number: 0 is ambiguous there, so the default stream is
    1 (legacy) or 2 (per-thread), as the process's default stream is."""
    if stream is None:
        return None
    value = stream_handle(stream)
    if value:
        return value
    from ._binding import per_thread_default_stream

    return 2 if per_thread_default_stream() else 1
