"""What the generated checked modules call: argument conversion and error raising.

The generated code converts inline on the fast path (an int pointer, a handle object
of the right type) and calls these only for everything else, so a call with the usual
argument types costs no extra Python call. Standard library only.
"""

from __future__ import annotations

import ctypes
import threading
from ctypes import ArgumentError, byref, c_char, c_void_p

from ._binding import CudaDeprecationWarning, warn_deprecated
from .errors import CudaError

__all__ = [
    "ArgumentError",
    "CudaError",
    "CudaDeprecationWarning",
    "argument_error",
    "byref",
    "cstring",
    "enum_value",
    "error",
    "error_class",
    "handle",
    "pointer",
    "ref",
    "warn_deprecated",
]


# For type checkers only: importing typing costs milliseconds `import cudart` avoids.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol, SupportsInt, Union

    class SupportsCudaStream(Protocol):
        """The CUDA stream protocol: PyTorch, CuPy and cuda-bindings streams implement it."""

        def __cuda_stream__(self) -> tuple[int, int]: ...

    # A device pointer or handle: an int, None (NULL), one of our handle objects
    # (c_void_p subclasses), a foreign stream (__cuda_stream__), or anything with __int__.
    HandleLike = Union[int, None, c_void_p, SupportsInt, SupportsCudaStream]
    # Memory: the above, plus any object with the buffer protocol (bytes, bytearray,
    # memoryview, array.array, NumPy arrays), any ctypes object (passed by reference),
    # and objects with __cuda_array_interface__. Python 3.11 has no static type for "has
    # the buffer protocol", so type checkers see Any; the conversion checks at run time.
    PointerLike = Any


# ---------------------------------------------------------------- binding


class _Unbound:
    """Stands for `_<name>` in a checked module until its first call binds it."""

    __slots__ = ("namespace", "lib", "name", "restype", "argtypes")

    def __init__(self, namespace: dict, lib: Any, name: str, restype: Any, argtypes: tuple) -> None:
        self.namespace = namespace
        self.lib = lib
        self.name = name
        self.restype = restype
        self.argtypes = argtypes

    def __call__(self, *args: Any) -> Any:
        from ._binding import _bind

        symbol = self.lib.SYMBOLS[self.name]  # the map in force: legacy or per-thread
        # No deprecation wrapper (flags 0): the checked function warns itself.
        fn = _bind(self.name, (symbol, self.restype, self.argtypes, 0), self.lib.__name__,
                   self.lib.CUDA_VERSION)
        self.namespace["_" + self.name] = fn
        return fn(*args)


def bind_lazily(namespace: dict, lib: Any, table: dict) -> None:
    """Put a stand-in for every function of `table` into a checked module's namespace."""
    for name, (restype, argtypes) in table.items():
        namespace["_" + name] = _Unbound(namespace, lib, name, restype, argtypes)


# ---------------------------------------------------------------- errors

_classes: dict[int, type[CudaError]] = {}
_classes_lock = threading.Lock()


def error_class(code: int, enum: Any) -> type[CudaError]:
    """The CudaError subclass for a code: CudaErrorMemoryAllocation for 2, and so on.

    One class per code for the whole process, made on first use, so `except` clauses
    written against one version's module catch errors raised through another.
    """
    cls = _classes.get(code)
    if cls is not None:
        return cls
    try:
        member = enum(code)
    except ValueError:
        return CudaError
    name = "Cuda" + member.name[4:] if member.name.startswith("cuda") else member.name
    with _classes_lock:
        cls = _classes.get(code)
        if cls is None:
            cls = type(name, (CudaError,), {"__module__": "cudart", "__doc__": f"{member.name} ({code})."})
            _classes[code] = cls
    return cls


def error_class_named(name: str, enum: Any) -> type[CudaError]:
    """`CudaErrorMemoryAllocation` -> its class; AttributeError for an unknown name."""
    member = getattr(enum, "cuda" + name[4:], None) if name.startswith("Cuda") else None
    if member is None:
        raise AttributeError(name)
    return error_class(int(member), enum)


def error(code: int, lib: Any) -> CudaError:
    """The exception for a failed call, with the runtime's own name and message."""
    enum = lib.cudaError
    cls = error_class(code, enum)
    try:
        member: Any = enum(code)
    except ValueError:
        member = code
    name = lib.cudaGetErrorName(code)
    message = lib.cudaGetErrorString(code)
    return cls(
        member,
        name.decode() if name else f"cudaError {code}",
        message.decode() if message else "",
    )


def argument_error(exc: ArgumentError, function: str, names: tuple[str, ...]) -> TypeError:
    """ctypes' "argument 2: TypeError: ..." as a TypeError naming the parameter."""
    text = str(exc)
    head, _, rest = text.partition(":")
    try:
        index = int(head.split()[-1]) - 1
        name = names[index]
    except (ValueError, IndexError):
        return TypeError(f"{function}(): {text}")
    rest = rest.strip()
    if rest.startswith("TypeError:"):
        rest = rest[len("TypeError:"):].strip()
    return TypeError(f"{function}() argument '{name}': {rest}")


# ---------------------------------------------------------------- conversions

_POINTER_TYPES = (c_void_p, ctypes.c_char_p, ctypes.c_wchar_p, ctypes._Pointer, ctypes._CFuncPtr)
_CDATA = ctypes.Structure.__mro__[-2]  # _ctypes._CData, the base of every ctypes type


def pointer(value: Any, name: str, writable: bool) -> Any:
    """Any memory-like argument -> what a c_void_p parameter accepts.

    A buffer is passed without a copy while the returned object lives (the caller holds
    it for the call). A read-only buffer where the function writes is a TypeError; a
    read-only buffer other than bytes, where it only reads, is copied once.
    """
    if value is None or type(value) is int:
        return value
    if isinstance(value, _CDATA):
        return value if isinstance(value, _POINTER_TYPES) else byref(value)
    if type(value).__name__ == "CArgObject":  # ctypes.byref(...)
        return value
    if isinstance(value, bytes):
        if writable:
            raise TypeError(f"'{name}' is written by the function: bytes is read-only, pass a bytearray")
        return value
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is not None:
        return interface["data"][0]
    try:
        view = memoryview(value)
    except TypeError:
        pass
    else:
        if not view.c_contiguous:
            raise TypeError(f"'{name}' must be C-contiguous memory")
        if view.readonly:
            if writable:
                raise TypeError(f"'{name}' is written by the function: the buffer is read-only")
            return (c_char * view.nbytes).from_buffer_copy(view)
        return (c_char * view.nbytes).from_buffer(view.cast("B") if view.ndim != 1 or view.format != "B" else view)
    if isinstance(value, float) or not hasattr(value, "__int__"):
        raise TypeError(
            f"'{name}' must be a pointer: an int address, None, a buffer, a ctypes object "
            f"or an object with __int__, not {type(value).__name__}"
        )
    return int(value)


def ref(value: Any, ctype: Any, name: str, writable: bool) -> Any:
    """A `T *` argument: also a sequence of T (or of what T is made from), as an array."""
    if isinstance(value, (list, tuple)):
        try:
            return (ctype * len(value))(*value)
        except TypeError as exc:
            raise TypeError(f"'{name}': {exc}") from None
    return pointer(value, name, writable)


def handle(value: Any, cls: type, name: str) -> Any:
    """A handle argument (cudaStream_t, cudaEvent_t, ...) -> int, None or the handle."""
    if value is None or type(value) is int:
        return value
    if isinstance(value, c_void_p):
        kind = type(value)
        if kind is c_void_p or kind is cls or kind.__name__ == cls.__name__:
            return value
        raise TypeError(f"'{name}' must be a {cls.__name__}, not a {kind.__name__}")
    protocol = getattr(value, "__cuda_stream__", None)
    if protocol is not None and cls.__name__ == "cudaStream_t":
        version_handle = protocol() if callable(protocol) else protocol
        return int(version_handle[1])
    if isinstance(value, float) or not hasattr(value, "__int__"):
        raise TypeError(
            f"'{name}' must be a {cls.__name__}, an int, None, or an object with "
            f"__cuda_stream__ or __int__, not {type(value).__name__}"
        )
    return int(value)


def cstring(value: Any, name: str) -> bytes | None:
    if value is None or type(value) is bytes:
        return value
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"'{name}' must be str or bytes, not {type(value).__name__}")


def enum_value(enum: Any, value: int) -> Any:
    """The enum member for a value the runtime wrote, or the int if the enum lacks it."""
    try:
        return enum(value)
    except ValueError:
        return value


def borrowed(address: int | None, ctype: Any, count: int) -> list[Any] | None:
    """`count` items of the runtime's own array at `address` (None where it gave none)."""
    if not address:
        return None if count else []
    return list(ctypes.cast(address, ctypes.POINTER(ctype))[:count])


def string(value: bytes | None) -> str | None:
    return None if value is None else value.decode(errors="replace")


def deprecated(name: str, replacement: str | None) -> None:
    # Shared with the raw layer: the first call through either layer warns, once.
    warn_deprecated(name, replacement, stacklevel=3)

