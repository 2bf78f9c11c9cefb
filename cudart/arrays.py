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
from ._convert import device_memory, stream_handle

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


# The item sizes each kind has (NumPy's: float16 to float128, complex64 to complex256);
# any other is no number type a consumer knows.
_KIND_SIZES = {
    "i": (1, 2, 4, 8),
    "u": (1, 2, 4, 8),
    "f": (2, 4, 8, 16),
    "c": (8, 16, 32),
    "b": (1,),
}


def _typestr(kind: str, size: int) -> str:
    if size not in _KIND_SIZES[kind]:
        sizes = ", ".join(map(str, _KIND_SIZES[kind]))
        raise ValueError(f"dtype: {size}-byte items of kind {kind!r} (it has {sizes})")
    return f"{'|' if size == 1 else '<'}{kind}{size}"


_ADDRESS_END = 1 << 64
_SAME = object()  # DeviceArray._describes: the array's own value
_INT64_END = 1 << 63  # DLPack's shape and strides are int64_t


def _dimensions(values: Any, what: str) -> tuple[int, ...]:
    if isinstance(values, int):
        values = (values,)
    try:
        result = tuple(v.__index__() for v in values)
    except (TypeError, AttributeError):
        raise TypeError(f"{what} must be a tuple of ints, not {values!r}") from None
    return result


def _span(ptr: int, shape: tuple[int, ...], itemsize: int, strides: tuple[int, ...] | None) -> None:
    """ValueError unless every item of the array lies in the address space: C-order (or
    `strides`, in bytes, negative ones too) from `ptr`, each dimension and stride an int64
    as DLPack and CAI consumers read them."""
    for d in shape:
        if not 0 <= d < _INT64_END:
            raise ValueError(f"shape {shape}: a dimension is 0 <= d < 2**63, not {d}")
    for s in strides or ():
        if not -_INT64_END <= s < _INT64_END:
            raise ValueError(f"strides {strides}: a stride is an int64, not {s}")
    if 0 in shape:
        return  # no item: no memory
    steps = strides if strides is not None else _c_strides(shape, itemsize)
    low = sum((d - 1) * s for d, s in zip(shape, steps, strict=True) if s < 0)
    high = sum((d - 1) * s for d, s in zip(shape, steps, strict=True) if s > 0) + itemsize
    if ptr + low < 0 or ptr + high > _ADDRESS_END:
        raise ValueError(
            f"shape {shape} of {itemsize}-byte items at {ptr:#x} spans bytes {low} to {high} "
            "from there: more than the 64-bit address space holds"
        )


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

    # Its description is checked on every store, not only by as_array: a later
    # `a.ptr = 1.5` or `a.typestr = "<q8"` would otherwise reach C, or fail in an export.
    def __setattr__(self, name: str, value: Any) -> None:
        check = _CHECKS.get(name)
        if check is not None and hasattr(self, "_device"):  # constructed: all are set
            value = check(self, value)
        object.__setattr__(self, name, value)

    def _check_all(self) -> None:
        # The item type first: the others' checks measure with it.
        for name in ("typestr", "shape", "strides", "ptr", "stream", "readonly", "_device"):
            object.__setattr__(self, name, _CHECKS[name](self, getattr(self, name)))

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
        self._check_all()

    def _describes(
        self,
        ptr: Any = None,
        shape: Any = None,
        typestr: Any = None,
        strides: Any = _SAME,  # None is C order
    ) -> None:
        """ValueError or TypeError unless the array, with what is given changed, is
        one that lies in the address space."""
        ptr = self.ptr if ptr is None else ptr
        shape = self.shape if shape is None else shape
        kind = self.typestr if typestr is None else typestr
        steps = self.strides if strides is _SAME else strides
        if steps is not None and len(steps) != len(shape):
            raise ValueError(f"strides {steps} and shape {shape} differ in length")
        _span(ptr, shape, int(kind[2:]), steps)

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
    bits = 8 * itemsize
    if bits > 255:  # DLDataType.bits is a uint8_t
        raise BufferError(f"DLPack cannot describe {array.typestr!r}: {bits}-bit items")
    device_type, device_id = _checked_device(array.__dlpack_device__())
    tensor = managed.dl_tensor
    tensor.data = array.ptr or None
    tensor.device.device_type, tensor.device.device_id = device_type, device_id
    tensor.ndim = ndim
    tensor.dtype.code = _dlpack.TYPE_CODES[array.typestr[1]]
    tensor.dtype.bits = bits
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
    memory = device_memory(ptr)
    if memory is None or not 0 <= memory[0] < 1 << 64:
        raise TypeError(f"ptr must be a device address, not {type(ptr).__name__}")
    address, source_read_only = memory
    dims = _dimensions(shape, "shape")
    if any(d < 0 for d in dims):
        raise ValueError(f"shape {dims} has a negative dimension")
    kind = typestr(dtype)
    steps = None if strides is None else _dimensions(strides, "strides")
    if steps is not None and len(steps) != len(dims):
        raise ValueError(f"strides {steps} and shape {dims} differ in length")
    _span(address, dims, int(kind[2:]), steps)
    if steps == _c_strides(dims, int(kind[2:])):
        steps = None  # C order: CAI v3 says None
    if device is not None:
        device = _checked_device(device)
    if owner is None and type(ptr) is not int:
        owner = ptr
    # Read-only memory stays read-only in every view of it.
    read_only = _flag(readonly, "readonly") or source_read_only
    return DeviceArray(address, dims, kind, steps, _stream_value(stream), owner, read_only, device)


def _flag(value: Any, name: str) -> bool:
    if type(value) is not bool:
        raise TypeError(f"{name} must be True or False, not {value!r}")
    return value


def _checked_device(device: Any) -> tuple[int, int]:
    """DLPack's (device type, device id) of CUDA memory: a type of CUDA's (device 2,
    pinned host 3, managed 13) and an id of an int32_t, both ints."""
    if type(device) is not tuple or len(device) != 2:
        raise TypeError(f"device must be a 2-tuple (device type, device id), not {device!r}")
    if not all(type(d) is int for d in device):
        raise TypeError(f"device must be a tuple of two ints, not {device!r}")
    kind, ident = device
    if kind not in _dlpack.CUDA_DEVICE_TYPES:
        raise ValueError(
            f"device type {kind} is no CUDA memory's (DLPack's kDLCUDA 2, kDLCUDAHost 3, "
            "kDLCUDAManaged 13)"
        )
    if not 0 <= ident < 1 << 31:
        raise ValueError(f"device id {ident} is not a CUDA device's (0 <= id < 2**31)")
    return device


def _check_ptr(array: DeviceArray, value: Any) -> int:
    if type(value) is not int:
        raise TypeError(f"ptr must be an int address, not {type(value).__name__}")
    if not 0 <= value < _ADDRESS_END:
        raise ValueError(f"ptr is {value}: an address is 0 <= ptr < 2**64")
    array._describes(ptr=value)
    return value


def _check_shape(array: DeviceArray, value: Any) -> tuple[int, ...]:
    dims = _dimensions(value, "shape")
    if any(d < 0 for d in dims):
        raise ValueError(f"shape {dims} has a negative dimension")
    array._describes(shape=dims)
    return dims


def _check_typestr(array: DeviceArray, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"typestr must be a typestr such as '<f4', not {value!r}")
    kind = typestr(value)
    if kind != value:
        raise ValueError(f"typestr {value!r} is not in its CAI spelling {kind!r}")
    array._describes(typestr=kind)
    return kind


def _check_strides(array: DeviceArray, value: Any) -> tuple[int, ...] | None:
    steps = None if value is None else _dimensions(value, "strides")
    array._describes(strides=steps)
    return steps


def _check_stream(array: DeviceArray, value: Any) -> int | None:
    if value is not None and (type(value) is not int or not 0 <= value < _ADDRESS_END):
        raise TypeError(f"stream must be None or a CAI stream number (an int), not {value!r}")
    return value


def _check_readonly(array: DeviceArray, value: Any) -> bool:
    return _flag(value, "readonly")


def _check_device(array: DeviceArray, value: Any) -> tuple[int, int] | None:
    return None if value is None else _checked_device(value)


_CHECKS = {
    "ptr": _check_ptr,
    "shape": _check_shape,
    "typestr": _check_typestr,
    "strides": _check_strides,
    "stream": _check_stream,
    "readonly": _check_readonly,
    "_device": _check_device,
}


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
