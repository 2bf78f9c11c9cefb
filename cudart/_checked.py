"""What the generated checked modules call: argument conversion, binding, errors.

The generated code converts inline on the fast path (an int pointer, a handle object
of the right type) and calls these only for everything else, so a call with the usual
argument types costs no extra Python call. The conversions themselves live in
cudart._convert, shared with kernel launches. Standard library only.
"""

from __future__ import annotations

import ctypes
import threading
from ctypes import ArgumentError, byref

from ._binding import CudaDeprecationWarning, bind_symbol, warn_deprecated
from ._contract import symbol_of
from ._convert import cstring, handle, pointer, ref
from ._handles import Handle
from .errors import CudaError

__all__ = [
    "ArgumentError",
    "CudaError",
    "CudaDeprecationWarning",
    "argument_error",
    "bind_on_first_call",
    "byref",
    "call_error",
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
    from typing import Any, TypeVar

    _E = TypeVar("_E")

    # The generated modules' annotations name these through this module.
    from ._convert import HandleLike as HandleLike
    from ._convert import PointerLike as PointerLike


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
        # The raw module's symbol in force (legacy or per-thread), and no deprecation
        # wrapper: the checked function warns itself.
        symbol = symbol_of(self.lib, self.name)
        if symbol is None:  # the generator writes both tables from one model
            raise LookupError(f"{self.lib.__name__} declares no function {self.name}")
        fn = bind_symbol(
            self.name,
            symbol,
            self.restype,
            self.argtypes,
            self.lib.__name__,
            self.lib.CUDA_VERSION,
        )
        self.namespace["_" + self.name] = fn
        return fn(*args)


def bind_on_first_call(namespace: dict, lib: Any, table: dict) -> None:
    """Put into a checked module's namespace, as `_<name>`, a stand-in for each
    function of `table` ({name: (restype, argtypes)}) that binds it on its first call."""
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
            cls = type(
                name, (CudaError,), {"__module__": "cudart", "__doc__": f"{member.name} ({code})."}
            )
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


def call_error(lib: Any, call: str, status: int) -> CudaError:
    """The exception for a failed call made outside the checked functions (kernel
    loading and launching, occupancy), noting which call failed."""
    exc = error(status, lib)
    exc.add_note(f"while {call}")
    return exc


def check(lib: Any, call: str, status: int) -> None:
    if status:
        raise call_error(lib, call, status)


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
        rest = rest[len("TypeError:") :].strip()
    return TypeError(f"{function}() argument '{name}': {rest}")


# ---------------------------------------------------------------- results


def enum_value(enum: type[_E], value: int) -> _E:
    """The enum member for a value the runtime wrote, or the int if the enum lacks it
    (typed as the enum: an IntEnum member is an int, and a newer runtime's value is
    what the caller would compare it with)."""
    try:
        return enum(value)  # type: ignore[call-arg]  # an IntEnum class, called with its value
    except ValueError:
        return value  # type: ignore[return-value]


def borrowed(address: int | None, ctype: Any, count: int) -> list[Any] | None:
    """`count` items of the runtime's own array at `address` (None where it gave none)."""
    if not address:
        return None if count else []
    items = ctypes.cast(address, ctypes.POINTER(ctype))[:count]
    if isinstance(ctype, type) and issubclass(ctype, Handle):
        # ctypes gives views of the runtime's memory, which it may reuse: copies.
        return [ctype(item.value) for item in items]
    return list(items)


def string(value: bytes | None) -> str | None:
    return None if value is None else value.decode(errors="replace")


def text(value: bytes | None) -> str:
    """The runtime's own static text (cudaGetErrorName, cudaGetErrorString), which C
    never gives as NULL; "" if it did."""
    return "" if value is None else value.decode(errors="replace")


def deprecated(name: str, replacement: str | None) -> None:
    # Shared with the raw layer: the first call through either layer warns, once.
    warn_deprecated(name, replacement, stacklevel=3)
