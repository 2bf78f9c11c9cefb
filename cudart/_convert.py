"""Python arguments -> what the runtime takes: pointers, handles, streams, strings.

One home for the conversions the checked functions and kernel launches share, so an
object accepted as a stream or a device pointer by one is accepted by the other. The
generated checked code converts its common cases inline and calls these for the rest.
Standard library only.
"""

from __future__ import annotations

import _ctypes  # CFuncPtr, the base of ctypes function pointers (ctypes._CFuncPtr)
import ctypes
from ctypes import byref, c_char, c_void_p

from ._handles import StreamHandle

# For type checkers only: importing typing costs milliseconds `import cudart` avoids.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol, SupportsInt

    class SupportsCudaStream(Protocol):
        """The CUDA stream protocol: PyTorch, CuPy and cuda-bindings streams implement it."""

        def __cuda_stream__(self) -> tuple[int, int]: ...

    # A device pointer or handle: an int, None (NULL), one of our handle objects
    # (c_void_p subclasses), a foreign stream (__cuda_stream__), or anything with __int__.
    HandleLike = int | None | c_void_p | SupportsInt | SupportsCudaStream
    # Memory: the above, plus any object with the buffer protocol (bytes, bytearray,
    # memoryview, array.array, NumPy arrays), any ctypes object (passed by reference),
    # and objects with __cuda_array_interface__. Python 3.11 has no static type for "has
    # the buffer protocol", so type checkers see Any; the conversion checks at run time.
    PointerLike = Any

_POINTER_TYPES = (c_void_p, ctypes.c_char_p, ctypes.c_wchar_p, ctypes._Pointer, _ctypes.CFuncPtr)
_CDATA = ctypes.Structure.__mro__[-2]  # _ctypes._CData, the base of every ctypes type


# ---------------------------------------------------------------- device addresses


def device_address(value: Any) -> int | None:
    """The address a pointer-like object stands for, or None if it is not one.

    Pointer-like: None (NULL), a c_void_p, an object with __cuda_array_interface__
    (CuPy, PyTorch), with ctypes' _as_parameter_, or with __int__ (cuda-bindings).
    Host buffers are not addresses here: a kernel argument must not take one by
    accident, and the checked layer passes them itself (see `pointer`).
    """
    if value is None:
        return 0
    if isinstance(value, c_void_p):
        return value.value or 0
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is not None:
        return int(interface["data"][0])
    param = getattr(value, "_as_parameter_", None)
    if param is not None:
        return param if type(param) is int else device_address(param)
    return _int_like(value)


def _int_like(value: Any) -> int | None:
    # A float has __int__ too, but truncating one to an address is never meant.
    if isinstance(value, (float, complex)) or not hasattr(type(value), "__int__"):
        return None
    return int(value)


# ---------------------------------------------------------------- memory


def pointer(value: Any, name: str, writable: bool) -> Any:
    """Any memory-like argument -> what a c_void_p parameter accepts.

    A buffer is passed without a copy while the returned object lives (the caller holds
    it for the call). A read-only buffer where the function writes is a TypeError; a
    read-only buffer other than bytes, where it only reads, is copied once.
    """
    if value is None or type(value) is int:
        return value
    if isinstance(value, _CDATA):
        return value if isinstance(value, _POINTER_TYPES) else byref(value)  # type: ignore[arg-type]
    if type(value).__name__ == "CArgObject":  # ctypes.byref(...)
        return value
    if isinstance(value, bytes):
        if writable:
            raise TypeError(
                f"'{name}' is written by the function: bytes is read-only, pass a bytearray"
            )
        return value
    # Device memory first: an array with both interfaces lives on the device.
    if not hasattr(value, "__cuda_array_interface__"):
        view = _buffer(value)
        if view is not None:
            return _host_memory(view, name, writable)
    address = device_address(value)
    if address is None:
        raise TypeError(
            f"'{name}' must be a pointer: an int address, None, a buffer, a ctypes object "
            f"or an object with __int__, not {type(value).__name__}"
        )
    return address


def _buffer(value: Any) -> memoryview | None:
    try:
        return memoryview(value)
    except TypeError:
        return None


def _host_memory(view: memoryview, name: str, writable: bool) -> Any:
    if not view.c_contiguous:
        raise TypeError(f"'{name}' must be C-contiguous memory")
    if view.readonly:
        if writable:
            raise TypeError(f"'{name}' is written by the function: the buffer is read-only")
        return (c_char * view.nbytes).from_buffer_copy(view)
    # from_buffer needs a flat view of bytes.
    flat = view if view.ndim == 1 and view.format == "B" else view.cast("B")
    return (c_char * view.nbytes).from_buffer(flat)


def ref(value: Any, ctype: Any, name: str, writable: bool) -> Any:
    """A `T *` argument: also a sequence of T (or of what T is made from), as an array."""
    if isinstance(value, (list, tuple)):
        try:
            return (ctype * len(value))(*value)
        except TypeError as exc:
            raise TypeError(f"'{name}': {exc}") from None
    return pointer(value, name, writable)


# ---------------------------------------------------------------- handles and streams


def handle(value: Any, cls: type, name: str) -> Any:
    """A handle argument (cudaStream_t, cudaEvent_t, ...) -> int, None or the handle.

    Handle kinds are matched by class name, so one version's module's cudaStream_t
    passes where another version's is expected; a const handle also takes the kinds C
    converts to it implicitly (its `_accepts_`: cudaArray_const_t takes a cudaArray_t).
    Another kind is a TypeError.
    """
    if value is None or type(value) is int:
        return value
    if isinstance(value, c_void_p):
        kind = type(value)
        if (
            kind is c_void_p
            or kind is cls
            or kind.__name__ == cls.__name__
            or kind.__name__ in getattr(cls, "_accepts_", ())
        ):
            return value
        raise TypeError(f"'{name}' must be a {cls.__name__}, not a {kind.__name__}")
    protocol = getattr(value, "__cuda_stream__", None)
    if protocol is not None and issubclass(cls, StreamHandle):
        version_handle = protocol() if callable(protocol) else protocol
        return int(version_handle[1])
    param = getattr(value, "_as_parameter_", None)
    if param is not None:
        return handle(param, cls, name)
    address = _int_like(value)
    if address is None:
        raise TypeError(
            f"'{name}' must be a {cls.__name__}, an int, None, or an object with "
            f"__cuda_stream__ or __int__, not {type(value).__name__}"
        )
    return address


class cudaStream_t(StreamHandle):
    """Any version's cudaStream_t: `handle` matches handle kinds by name."""


def stream_handle(stream: Any) -> int:
    """The cudaStream_t of None, an int, a stream handle, or an object with
    `__cuda_stream__`, `_as_parameter_` or `__int__`, as an int (0: the default stream)."""
    value = handle(stream, cudaStream_t, "stream")
    if isinstance(value, c_void_p):
        value = value.value
    return int(value or 0)


# ---------------------------------------------------------------- device functions


def device_function(value: Any, name: str) -> Any:
    """A device-function argument (C's `const void *func`, a cudaKernel_t) -> what the
    call passes: an int or None, a c_void_p, or a kernel handle object as it is.

    A kernel handle (cudart.kernels.Function, anything with `_as_parameter_`) passes
    as itself: ctypes takes its handle through `_as_parameter_`, and a `kernelParams`
    beside it may be packed with its parameter types (`kernel_args`). It is checked
    here, so a closed module's kernel fails before the call. Memory (bytes, a
    buffer) and floats are no device function: TypeError.
    """
    if value is None or type(value) is int:
        return value
    if isinstance(value, c_void_p):
        return value
    param = getattr(value, "_as_parameter_", None)
    if param is not None:
        if type(param) is not int and device_address(param) is None:
            raise TypeError(f"'{name}' must be a device function: {type(value).__name__}")
        return value
    address = _int_like(value)
    if address is None:
        raise TypeError(
            f"'{name}' must be a device function: a cudart.kernels.Function, a cudaKernel_t, "
            f"an int address or None, not {type(value).__name__}"
        )
    return address


def kernel_args(value: Any, func: Any, name: str) -> Any:
    """A `void **kernelParams` argument -> what the call passes.

    A tuple or list of Python values is packed with the kernel's parameter types
    (`func.pack(*value)`, so `func` must be a cudart.kernels.Function); what
    Function.pack returned passes as its `void **`; anything else is a pointer. The
    returned object keeps the packed values alive: the caller holds it for the call.
    """
    if isinstance(value, (tuple, list)):
        packer = getattr(func, "pack", None)
        if packer is None:
            raise TypeError(
                f"'{name}': a tuple of argument values needs the kernel as a "
                f"cudart.kernels.Function (to know its parameters), not {type(func).__name__}"
            )
        return packer(*value)
    if getattr(type(value), "_as_parameter_", None) is not None and not isinstance(value, _CDATA):
        return value  # a KernelArguments (or another object ctypes converts itself)
    return pointer(value, name, False)


class _Held(c_void_p):
    """A c_void_p that carries the Python object its address came from."""


def field_value(value: Any, ctype: Any, convert: Any, name: str) -> Any:
    """A value for a record's pointer member of type `ctype`, converted by `convert`
    (device_function or a kernel-arguments conversion), as a ctypes object that keeps
    `value` alive in the record: ctypes keeps a cast's source alive in whatever record
    (or enclosing record) the result is stored into, and a later store of such an
    object (None included) replaces it. ctypes' own objects are returned as they are:
    ctypes converts and keeps them itself."""
    if isinstance(value, _CDATA):
        return value  # ctypes' own conversion (and keep-alive) for its own objects
    address = None if value is None else convert(value, name)
    if isinstance(address, c_void_p):
        address = address.value
    elif address is not None and type(address) is not int:
        address = device_address(address)
    held = _Held(address)
    held.source = value  # type: ignore[attr-defined]  # kept alive by the cast below
    return ctypes.cast(held, ctype)


def kernel_params_field(value: Any, name: str) -> Any:
    """The address a `void **kernelParams` member takes: a KernelArguments (what
    Function.pack returns), a ctypes array or pointer of pointers, or an int address."""
    if isinstance(value, (tuple, list)):
        raise TypeError(
            f"'{name}': pack the values first (fn.pack(*values)), so the record can hold them"
        )
    address = device_address(value)
    if address is None:
        raise TypeError(
            f"'{name}' must be kernel arguments (Function.pack), a ctypes array of "
            f"pointers or an int address, not {type(value).__name__}"
        )
    return address


# ---------------------------------------------------------------- callbacks


def is_function_pointer(value: Any) -> bool:
    """A ctypes function pointer (a CFUNCTYPE instance): C's own callback, passed as is."""
    return isinstance(value, _ctypes.CFuncPtr)


def is_python_callable(value: Any) -> bool:
    """A Python callable to run as a C callback, as opposed to a C function pointer."""
    return callable(value) and not is_function_pointer(value)


# ---------------------------------------------------------------- strings


def cstring(value: Any, name: str) -> bytes | None:
    if value is None or type(value) is bytes:
        return value
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"'{name}' must be str or bytes, not {type(value).__name__}")
