"""Python arguments -> what the runtime takes: pointers, handles, streams, strings.

One home for the conversions the checked functions and kernel launches share, so an
object accepted as a stream or a device pointer by one is accepted by the other. The
generated checked code converts its common cases inline and calls these for the rest.
Standard library only.
"""

from __future__ import annotations

import _ctypes  # CFuncPtr, the base of ctypes function pointers (ctypes._CFuncPtr)
import ctypes
import operator
import os
import sys
from ctypes import byref, c_char, c_void_p

from . import _lazy
from ._handles import DESTROYED_CLASSES, Handle, IntegerHandle, StreamHandle
from ._hostmem import HostMemory
from ._paraminfo import driver_param_span, driver_params
from .errors import HandleDestroyedError

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
    (CuPy, PyTorch, cudart.arrays), a DLPack producer of CUDA memory (__dlpack__,
    __dlpack_device__: JAX, PyTorch, CuPy), with ctypes' _as_parameter_, or with
    __int__ (cuda-bindings). Host buffers are not addresses here: a kernel argument
    must not take one by accident, and the checked layer passes them itself (see
    `pointer`); nor is a DLPack producer of host memory (a CPU tensor's __int__ is
    its value, not an address).
    """
    memory = device_memory(value)
    return None if memory is None else memory[0]


def device_memory(value: Any) -> tuple[int, bool] | None:
    """(address, read-only) of what `device_address` takes, or None as it: read-only
    where a __cuda_array_interface__ or a versioned DLPack tensor says so. An interface
    or a capsule that cannot be what it claims is a TypeError or ValueError."""
    if value is None:
        return 0, False
    if isinstance(value, c_void_p):
        return value.value or 0, False
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is not None:
        return array_interface_data(interface, type(value).__name__)
    if hasattr(value, "__dlpack_device__"):
        from ._dlpack import exported_memory

        return exported_memory(value)
    param = getattr(value, "_as_parameter_", None)
    if param is not None:
        return (param, False) if type(param) is int else device_memory(param)
    address = _int_like(value)
    return None if address is None else (address, False)


_ADDRESS_LIMIT = 1 << 64


def array_interface_data(interface: Any, owner: str) -> tuple[int, bool]:
    """(address, read-only) from a __cuda_array_interface__ (v3: `data` is (int, bool)),
    believed only where it is one: a float or str address would be truncated or parsed,
    and a mask (which cudart cannot apply) would be ignored."""
    what = f"{owner}.__cuda_array_interface__"
    if not isinstance(interface, dict):
        raise TypeError(f"{what} must be a dict, not {type(interface).__name__}")
    if "data" not in interface:
        raise ValueError(f"{what} has no 'data' (address, read-only)")
    data = interface["data"]
    if type(data) is not tuple or len(data) != 2:
        raise TypeError(f"{what}['data'] must be a 2-tuple (address, read-only), not {data!r}")
    address, readonly = data
    if not isinstance(address, int) or isinstance(address, bool):
        raise TypeError(f"{what}['data'][0] must be an int address, not {address!r}")
    if not 0 <= address < _ADDRESS_LIMIT:
        raise ValueError(f"{what}['data'][0] is {address}: an address is 0 <= address < 2**64")
    if isinstance(readonly, (float, complex)) or readonly not in (True, False):
        raise TypeError(f"{what}['data'][1] must be a bool (read-only), not {readonly!r}")
    if interface.get("mask") is not None:
        raise ValueError(f"{what} has a mask: cudart passes the memory whole, masked or not")
    return int(address), bool(readonly)


def _refuse_read_only(memory: tuple[int, bool] | None, value: Any, what: str) -> None:
    if memory is not None and memory[1]:
        raise TypeError(
            f"{what} is written by the function: the {type(value).__name__}'s device memory "
            "is read-only"
        )


def address(value: Any, name: str, size: Any = None, what: str = "") -> Any:
    """A record's `void *` member or a record builder's `void *` parameter
    (make_cudaPitchedPtr's `d`): what a pointer parameter takes (`pointer`: an int,
    None, a HostMemory, a buffer, a ctypes object, an object with __int__ or
    __cuda_array_interface__), never a handle. An int or None is returned range-checked;
    memory as a c_void_p of its address that keeps it alive in the record it is stored
    into. `size`: the bytes the record says the memory holds (None: unchecked)."""
    if isinstance(value, Handle):
        raise TypeError(
            f"'{name}' must be an address or memory: an int, None, a buffer, a ctypes "
            f"object or an object with __int__, __cuda_array_interface__ or __dlpack__ "
            f"(CUDA memory), not a {type(value).__name__} (a handle is no memory)"
        )
    converted = pointer(value, name, False, size, what)
    if converted is None or type(converted) is int:
        return converted
    found = _address_held(converted)
    return _holding(_memory_address(converted) if found is None else found, converted)


def memory_field(value: Any, name: str) -> Any:
    """What a record's `void *` member stores (cudart._layout.MemoryField): `address`'s
    conversion, always as a c_void_p holding what it refers to (nothing, for an int), so
    that the store replaces what the member kept alive before."""
    stored = address(value, name)
    return stored if isinstance(stored, c_void_p) else _holding(stored, None)


def _holding(address: int | None, source: Any) -> Any:
    """A c_void_p of `address` that keeps `source` alive in whatever record (or record
    enclosing it) it is stored into: ctypes keeps a cast's source there, and a later
    store of another such object replaces it."""
    held = _Held(address)
    held.source = source  # type: ignore[attr-defined]  # kept alive by the cast below
    return ctypes.cast(held, c_void_p)


def _int_like(value: Any) -> int | None:
    """An integer's value (__index__: an int or its subclass, a NumPy integer), or what
    an object that is no number gives through __int__ (cuda-bindings' handles and
    pointers have only that); None for anything else. A float, Decimal, Fraction or
    NumPy float has __int__ too, but truncating one to an address is never meant."""
    kind = type(value)
    if hasattr(kind, "__index__"):
        return operator.index(value)
    if not hasattr(kind, "__int__") or _is_number(kind):
        return None
    return int(value)


def _is_number(kind: type) -> bool:
    """Whether `kind` is a number's type (it converts to float or complex, or the numbers
    ABCs say so: Decimal and NumPy's register there)."""
    if hasattr(kind, "__float__") or hasattr(kind, "__complex__"):
        return True
    numbers = sys.modules.get("numbers")  # loaded by whatever made such a number
    return numbers is not None and issubclass(kind, numbers.Number)


# ---------------------------------------------------------------- memory


def pointer(value: Any, name: str, writable: bool, size: Any = None, what: str = "") -> Any:
    """Any memory-like argument -> what a c_void_p parameter accepts.

    A buffer is passed without a copy while the returned object lives (the caller holds
    it for the call). A read-only buffer where the function writes is a TypeError; a
    read-only buffer other than bytes, where it only reads, is copied once.

    `size`: the bytes the call touches (generator/sizes.py; None: unchecked), `what`
    names the function and where the size comes from. Memory whose size Python knows
    (a buffer, a ctypes object, a HostMemory) smaller than that is a ValueError; an
    address (an int, a ctypes pointer, a device array) is the caller's promise.
    """
    if type(value) is int:
        if value >> 64:  # negative, or 2**64 and more: ctypes would wrap or mask it
            raise OverflowError(f"'{name}' is {value}: an address is 0 <= {name} < 2**64")
        return value
    if value is None:
        return value
    if isinstance(value, HostMemory):
        # Passed as the ctypes array it is (c_void_p takes an array as its address), and
        # kept as itself so what the call returns or frees can name it; freed: refused.
        value.check()
        if size is not None:
            _fits(len(value), size, name, what)
        return value
    if isinstance(value, _CDATA):
        if isinstance(value, Handle):  # a handle is no memory: C would read its object
            raise TypeError(f"'{name}' must be a pointer to memory, not a {type(value).__name__}")
        if isinstance(value, _POINTER_TYPES):
            return value
        if size is not None:
            _fits(ctypes.sizeof(value), size, name, what)  # type: ignore[arg-type]
        return byref(value)  # type: ignore[arg-type]
    if type(value).__name__ == "CArgObject":  # ctypes.byref(...)
        _byref(value, name, size, what)
        return value
    if isinstance(value, bytes):
        if writable:
            raise TypeError(
                f"'{name}' is written by the function: bytes is read-only, pass a bytearray"
            )
        if size is not None:
            _fits(len(value), size, name, what)
        return value
    # Device memory first: an array with both interfaces lives on the device.
    if not hasattr(value, "__cuda_array_interface__"):
        view = _buffer(value)
        if view is not None:
            # Inline for the common case (an int within the buffer): this is the hot path.
            if size is not None and (size.__class__ is not int or not 0 <= size <= view.nbytes):
                _fits(view.nbytes, size, name, what)
            return _host_memory(view, name, writable)
    memory = device_memory(value)
    if memory is None:
        raise TypeError(
            f"'{name}' must be a pointer: an int address, None, a buffer, a ctypes object "
            f"or an object with __int__, __cuda_array_interface__ or __dlpack__ (CUDA "
            f"memory), not {type(value).__name__}"
        )
    if writable:
        _refuse_read_only(memory, value, f"'{name}'")
    return pointer(memory[0], name, writable)


def _byref(value: Any, name: str, size: Any = None, what: str = "") -> int | None:
    """The bytes a ctypes.byref(obj, offset) leaves C from its address: obj's size less
    the offset, which must lie within obj (ValueError); at least `size` of them. None
    where it holds no ctypes object (another CArgObject: ctypes judges it at the call)."""
    obj = value._obj
    if not isinstance(obj, _CDATA):
        return None
    have = ctypes.sizeof(obj)  # type: ignore[arg-type]
    # Python cannot read byref's offset: its address, less the object's, is the offset.
    offset = (ctypes.cast(value, c_void_p).value or 0) - ctypes.addressof(obj)  # type: ignore[arg-type]
    if not 0 <= offset <= have:
        raise ValueError(
            f"'{name}' is a byref() at offset {offset} of a {have}-byte "
            f"{type(obj).__name__}: outside it"
        )
    if size is not None:
        _fits(have - offset, size, name, what)
    return have - offset


def _fits(have: int, size: Any, name: str, what: str) -> None:
    """ValueError where the call would touch more than the `have` bytes Python knows of."""
    if size.__class__ is not int:
        size = _index(size)
        if size is None:
            return  # not an integer: ctypes refuses it at the call
    if not 0 <= size <= have:
        raise ValueError(
            f"{what} = {size} bytes, but '{name}' is a buffer of {have} bytes: "
            + ("no size" if size < 0 else "the call would run past its end")
        )


def _index(value: Any) -> int | None:
    """An integer argument's value (int, bool, IntEnum, a ctypes integer, NumPy's), or
    None for anything else (ctypes then refuses it at the call)."""
    if isinstance(value, ctypes._SimpleCData):
        value = value.value
    index = getattr(type(value), "__index__", None)
    return None if index is None else int(index(value))


def span(*values: Any) -> int | None:
    """The bytes from a buffer's start that a call touches: the sum of `values` (count,
    or count + offset); None where one is not an integer, -1 where one is negative."""
    numbers = []
    for v in values:
        n = _index(v)
        if n is None:
            return None
        numbers.append(n)
    return -1 if min(numbers) < 0 else sum(numbers)


def rows(pitch: Any, width: Any, height: Any) -> int | None:
    """The bytes a 2D call touches from a buffer's start: (height - 1) * pitch + width
    (nothing for an empty copy); None where one is not an integer, -1 where negative."""
    p, w, h = _index(pitch), _index(width), _index(height)
    if p is None or w is None or h is None:
        return None
    if min(p, w, h) < 0:
        return -1
    return (h - 1) * p + w if h and w else 0


POINTER_SIZE = ctypes.sizeof(c_void_p)  # an element of a `void **` array


def elements(count: Any, item: int) -> int | None:
    """The bytes of `count` elements of `item` bytes; None, -1 as `span`."""
    n = _index(count)
    return n if n is None or n < 0 else n * item


def regions(size: Any, granularity: Any) -> int | None:
    """The elements of one per `granularity` of `size`, rounded up; None where either is
    not an integer or the granularity is 0 (C refuses that, and writes nothing), -1
    where negative."""
    s, g = _index(size), _index(granularity)
    if s is None or g is None or g == 0:
        return None
    return -1 if min(s, g) < 0 else -(-s // g)


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


def ref(
    value: Any,
    ctype: Any,
    name: str,
    writable: bool,
    count: Any = None,
    what: str = "",
    size: Any = None,
    exact: bool = False,
) -> Any:
    """A `T *` argument: also a sequence of T (or of what T is made from), as an array.

    `count`: the elements of T the call reads (generator/sizes.py), or `size`: its
    bytes; more than a list or a buffer holds is a ValueError (`what` names the function
    and where the count comes from). None: unchecked. `exact`: C reads `count` elements
    of a length it fixes (Measure.EXACT): a list or tuple must have that many.
    """
    if count is not None:
        n = _index(count)
        if exact and isinstance(value, (list, tuple)) and len(value) != n:
            raise ValueError(f"{what}: '{name}' takes exactly {n} values, not {len(value)}")
        if isinstance(value, (list, tuple)) and n is not None and not 0 <= n <= len(value):
            raise ValueError(f"{what} = {n} elements, but '{name}' has {len(value)}")
        size = None if n is None else n * ctypes.sizeof(ctype)
        what = f"{what} ({n} x {getattr(ctype, '__name__', ctype)})"
    if isinstance(value, (list, tuple)):
        if size is not None:
            _fits(len(value) * ctypes.sizeof(ctype), size, name, what)
        if isinstance(ctype, type) and issubclass(ctype, c_void_p) and ctype is not c_void_p:
            # Handles from other libraries (cuda-bindings' CUgraphNode, ...) are ints to
            # us through __int__; ctypes itself only takes ints and its own kind.
            value = [_handle_element(handle(v, ctype, name), ctype) for v in value]
        try:
            return (ctype * len(value))(*value)
        except TypeError as exc:
            raise TypeError(f"'{name}': {exc}") from None
    if isinstance(value, Handle):
        hint = " (a list of them for an array)" if type(value).__name__ == ctype.__name__ else ""
        raise TypeError(
            f"'{name}' must be a pointer to {ctype.__name__}{hint}, not a {type(value).__name__}"
        )
    if isinstance(ctype, type) and issubclass(ctype, (ctypes.Structure, ctypes.Union)):
        return _record_pointer(value, ctype, name, writable, size, what)
    return pointer(value, name, writable, size, what)


def filled_ref(value: Any, ctype: Any, name: str, *sized: Any) -> Any:
    """A `T *` C writes results into for the caller (generator/resolve.FILLED_INPUTS): as
    ref(), writable, but a list or tuple is refused, since C would fill a copy of it."""
    if isinstance(value, (list, tuple)):
        kind = getattr(ctype, "__name__", ctype)
        raise TypeError(
            f"'{name}' is filled by the function: a {type(value).__name__} would be copied "
            f"and what C writes lost; pass a ctypes {kind} (or an array of them, "
            f"({kind} * n)()) or a writable buffer"
        )
    return ref(value, ctype, name, True, *sized)


def _handle_element(value: Any, ctype: Any) -> Any:
    """A converted handle as an element of a ctypes array of `ctype`, which takes only
    ints, None and `ctype` itself: a plain c_void_p, or the same kind from another
    version's module, by its address."""
    if value is None or type(value) is int or isinstance(value, ctype):
        return value
    return value.value or 0


def _record_pointer(
    value: Any, ctype: Any, name: str, writable: bool, size: Any = None, what: str = ""
) -> Any:
    """A `T *` to a record: the record (or an array of them), a buffer of at least its
    size, byref(), None, or an address; never a small int or another record."""
    record_size = ctypes.sizeof(ctype)
    if isinstance(value, (ctypes.Structure, ctypes.Union)):
        if type(value).__name__ != ctype.__name__:
            raise TypeError(f"'{name}' must be a {ctype.__name__}, not a {type(value).__name__}")
    elif isinstance(value, ctypes.Array) and isinstance(value._type_, type):
        element = value._type_
        if issubclass(element, (ctypes.Structure, ctypes.Union)) and (
            element.__name__ != ctype.__name__
        ):
            raise TypeError(
                f"'{name}' must be a {ctype.__name__} array, not a {element.__name__} array"
            )
    if type(value).__name__ == "CArgObject":  # ctypes.byref(...)
        converted, got = value, _byref(value, name, size, what)
    else:
        converted = pointer(value, name, writable, size, what)
        if converted is None:
            return converted
        address = _address_held(converted)
        if address is not None:  # an address: the caller's promise, but never a small int
            if 0 < address < _LOWEST_RECORD_ADDRESS:
                raise address_error(address, "", name, ctype.__name__)
            return converted
        # What C reads from: the ctypes object, or the buffer's copy.
        source = value if isinstance(value, _CDATA) else converted
        if isinstance(source, bytes):
            got = len(source)
        elif isinstance(source, _CDATA):
            got = ctypes.sizeof(source)  # type: ignore[arg-type]
        else:
            got = None
    if got is not None and got < record_size:
        raise ValueError(
            f"'{name}' must be a {ctype.__name__}: {got} bytes given, it has {record_size}"
        )
    return converted


def _address_held(value: Any) -> int | None:
    """The address an int or a pointer-valued ctypes object (c_void_p, a ctypes pointer,
    c_char_p, a function pointer) stands for, read from its memory (a c_char_p's `value`
    would read the text there); None for memory."""
    if type(value) is int:
        return value
    if isinstance(value, _POINTER_TYPES):
        return c_void_p.from_address(ctypes.addressof(value)).value or 0
    return None


# ---------------------------------------------------------------- handles and streams


def handle(value: Any, cls: type, name: str) -> Any:
    """A handle argument (cudaStream_t, cudaEvent_t, ...) -> int, None or the handle.

    Handle kinds are matched by what C points them at (cudart._handles: `_kind_`), so
    the driver's CUstream passes where the runtime's cudaStream_t is expected and the
    other way round, and one version's module's cudaStream_t where another version's
    is; a const handle also takes the kinds C converts to it implicitly (its
    `_accepts_`: cudaArray_const_t takes a cudaArray_t). Another kind is a TypeError.
    A handle object a checked destroy ended, through either API, is a
    HandleDestroyedError (cudart._handles: the generated fast path sends it here).
    An object that stands for a handle of several kinds (a cudart.kernels.Function:
    its kernel's CUfunction or CUkernel) gives the one of `cls`'s kind
    (`_cuda_handle_`).
    """
    if value is None:
        return value
    if type(value) is int:
        if value >> 64:  # negative, or 2**64 and more: ctypes would wrap or mask it
            raise OverflowError(
                f"'{name}' is {value}: a {cls.__name__} is an address, 0 <= {name} < 2**64"
            )
        return value
    if isinstance(value, c_void_p):
        kind = type(value)
        if kind is c_void_p or kind is cls or _accepted(kind, cls):
            if kind in DESTROYED_CLASSES:
                raise _destroyed(value, name)
            return value
        raise TypeError(f"'{name}' must be a {cls.__name__}, not a {kind.__name__}")
    protocol = getattr(value, "__cuda_stream__", None)
    if protocol is not None and issubclass(cls, StreamHandle):
        return _stream_protocol(protocol() if callable(protocol) else protocol, value, name)
    of_kind = getattr(value, "_cuda_handle_", None)
    if of_kind is not None:
        return handle(of_kind((handle_kind(cls),)), cls, name)
    param = getattr(value, "_as_parameter_", None)
    if param is not None:
        return handle(param, cls, name)
    address = _int_like(value)
    if address is None:
        raise TypeError(
            f"'{name}' must be a {cls.__name__}, an int, None, or an object with "
            f"__cuda_stream__ or __int__, not {type(value).__name__}"
        )
    return handle(address, cls, name)


def handle_kind(cls: type) -> str:
    """What a handle class points at (cudart._handles.Handle._kind_), or its name for a
    c_void_p subclass of another library."""
    return getattr(cls, "_kind_", None) or cls.__name__


def _accepted(kind: type, cls: type) -> bool:
    """Whether a handle of class `kind` passes as a `cls`: the same kind, or one `cls`
    accepts; by name too, as classes generated before kinds matched."""
    accepts = getattr(cls, "_accepts_", ())
    given = handle_kind(kind)
    return (
        given == handle_kind(cls)
        or given in accepts
        or kind.__name__ == cls.__name__
        or kind.__name__ in accepts
    )


def refuse_destroyed(value: Any, name: str) -> None:
    """HandleDestroyedError where `value` is a handle object a checked destroy ended
    (for a value passed on without a handle conversion: a kernel argument)."""
    if type(value) in DESTROYED_CLASSES:
        raise _destroyed(value, name)


def _destroyed(value: Any, name: str) -> HandleDestroyedError:
    address = int(value) if isinstance(value, IntegerHandle) else value.value or 0
    return HandleDestroyedError(type(value).__name__, address, type(value)._destroyed_by_, name)


def integer_handle(value: Any, kind: str, name: str) -> int:
    """An integer handle argument (cudaTextureObject_t, ...): an int of C's unsigned
    64 bits (a plain int is the caller's promise, as in C); one of ours (IntegerHandle)
    must be of `kind` and not destroyed."""
    if type(value) is int and 0 <= value < 1 << 64:
        return value
    if isinstance(value, IntegerHandle):
        if type(value).__name__ != kind:
            raise TypeError(f"'{name}' must be a {kind}, not a {type(value).__name__}")
        if value._destroyed_by_ is not None:
            raise _destroyed(value, name)
        return value
    if isinstance(value, (float, complex)) or not hasattr(type(value), "__index__"):
        raise TypeError(f"'{name}' must be a {kind} (an int), not {type(value).__name__}")
    number = value.__index__()
    if not 0 <= number < 1 << 64:
        raise OverflowError(f"'{name}' is {number}: a {kind} is an unsigned 64-bit integer")
    return int(number)


# The CUDA stream protocol (cuda.core's, which CuPy and PyTorch follow): __cuda_stream__()
# gives (version, address), and 0 is the only version defined. Anything else is the
# caller's mistake, reported here rather than as an IndexError or a misread address.
_STREAM_PROTOCOL_VERSIONS = (0,)


def _stream_protocol(answer: Any, value: Any, name: str) -> int:
    owner = type(value).__name__
    if (
        type(answer) is not tuple
        or len(answer) != 2
        or not all(isinstance(x, int) and not isinstance(x, bool) for x in answer)
    ):
        raise TypeError(
            f"'{name}': {owner}.__cuda_stream__() must return a 2-tuple (version, address) "
            f"of (int, int), not {answer!r}"
        )
    version, address = answer
    if version not in _STREAM_PROTOCOL_VERSIONS:
        raise ValueError(
            f"'{name}': {owner}.__cuda_stream__() gave unsupported version {version} of "
            f"the CUDA stream protocol (cudart understands version 0)"
        )
    if not 0 <= address < 1 << 64:
        raise ValueError(
            f"'{name}': {owner}.__cuda_stream__() gave address {address}, not a pointer"
        )
    return int(address)


class cudaStream_t(StreamHandle):
    """Any version's cudaStream_t or CUstream: `handle` matches handle kinds."""

    _kind_ = "CUstream_st"


def stream_handle(stream: Any) -> int:
    """The cudaStream_t of None, an int, a stream handle, or an object with
    `__cuda_stream__`, `_as_parameter_` or `__int__`, as an int (0: the default stream)."""
    value = handle(stream, cudaStream_t, "stream")
    if isinstance(value, c_void_p):
        value = value.value
    return int(value or 0)


# ---------------------------------------------------------------- device functions


# Handle kinds that name a device function (C++'s overloads take them for `func`): the
# runtime's cudaFunction_t / cudaKernel_t and the driver's CUfunction / CUkernel.
_DEVICE_FUNCTION_KINDS = ("CUfunc_st", "CUkern_st")
_DEVICE_FUNCTION_HANDLES = frozenset({"cudaKernel_t", "cudaFunction_t", *_DEVICE_FUNCTION_KINDS})


def dim3(value: Any, cls: Any, name: str) -> Any:
    """A `dim3` argument or member: a `cls` as is; an int, a 1-3 tuple or an object with
    x, y and z converted once and range-checked (cudart.kernels._launch.dims, which
    Function.launch uses), missing dimensions 1 as in C++."""
    if isinstance(value, cls):
        return value
    return cls(*_lazy.module(".kernels._launch").dims(value, name))


def device_function(value: Any, name: str) -> Any:
    """A device-function argument (C's `const void *func`, a cudaKernel_t) -> what the
    call passes: an int or None, a c_void_p, or a kernel handle object as it is.

    A kernel handle (cudart.kernels.Function, anything with `_as_parameter_`) passes
    as itself: ctypes takes its handle through `_as_parameter_`, and a `kernelParams`
    beside it may be packed with its parameter types (`kernel_args`). It is checked
    here, so a closed module's kernel fails before the call. Memory (bytes, a
    buffer) and floats are no device function: TypeError.
    """
    if value is None:
        return value
    if type(value) is int:
        return pointer(value, name, False)
    if isinstance(value, Handle) and not _DEVICE_FUNCTION_HANDLES.intersection(
        (type(value).__name__, handle_kind(type(value)))
    ):
        raise TypeError(
            f"'{name}' must be a device function (a cudaKernel_t, not a {type(value).__name__})"
        )
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
    return pointer(address, name, False)


def driver_function(value: Any, cls: type, name: str) -> Any:
    """The driver's launch functions' `CUfunction f` (cuLaunchKernel,
    cuLaunchCooperativeKernel, cuLaunchKernelEx) -> what the call passes: an int or
    None, a function or kernel handle object of either API (cuda.h: "f: Function
    CUfunction or Kernel CUkernel to launch"), or for a cudart.kernels.Function its
    CUkernel or CUfunction (`_cuda_handle_`) as a `_Kernel`, which keeps the Function
    for the kernel arguments beside it (`kernel_args` packs a tuple with its parameter
    types). Any other handle kind is a TypeError, as memory is."""
    of_kind = getattr(value, "_cuda_handle_", None)
    if of_kind is not None and not isinstance(value, c_void_p):
        found = of_kind(_DEVICE_FUNCTION_KINDS)
        kernel = _Kernel(found.value if isinstance(found, c_void_p) else int(found))
        kernel.function = value
        return kernel
    if isinstance(value, Handle) and handle_kind(type(value)) in _DEVICE_FUNCTION_KINDS:
        if type(value) in DESTROYED_CLASSES:
            raise _destroyed(value, name)
        return value
    return handle(value, cls, name)


class _Kernel(c_void_p):
    """A kernel handle C gets, with the cudart.kernels.Function it is (`function`)."""

    function: Any = None


def kernel_args(value: Any, func: Any, name: str) -> Any:
    """A `void **kernelParams` argument -> what the call passes.

    A tuple or list of Python values is packed with the kernel's parameter types
    (`func.pack(*value)`: `func` is a cudart.kernels.Function, or a CUfunction given
    its signature by cudart.kernels.typed); for any other kernel, a tuple of ctypes
    values, each its own C type (`ctypes_kernel_args`). What Function.pack returned
    passes as its `void **`; so do an int address and a ctypes
    pointer (the caller's promise). C reads one pointer per kernel parameter from what
    it is given, so memory Python can measure (a ctypes array, a buffer) must hold that
    many and be pointer-aligned: `kernel_slots`. The returned object keeps the packed
    values alive: the caller holds it for the call.
    """
    if type(func) is _Kernel:  # the driver's f, converted: its Function packs
        func = func.function
    if isinstance(value, (tuple, list)):
        packer = getattr(func, "pack", None)
        if packer is None:
            return ctypes_kernel_args(value, func, name)
        return packer(*value)
    if getattr(type(value), "_as_parameter_", None) is not None and not isinstance(value, _CDATA):
        return value  # a KernelArguments (or another object ctypes converts itself)
    converted = pointer(value, name, False)
    if converted is None or type(converted) is int or isinstance(converted, _POINTER_TYPES):
        return converted  # an address: what it points to is the caller's promise
    kernel_slots(value, converted, _param_count(func), name)
    return converted


def ctypes_kernel_args(values: Any, func: Any, name: str) -> Any:
    """A tuple of ctypes values as the `void **` of a kernel whose parameter types
    cudart does not know (a CUfunction of cuModuleGetFunction, a raw address): each
    value is the bytes of its own C type (ctypes.c_float(x), c_int(n), c_void_p(ptr),
    a Structure), and C gets a pointer to each. Python values are refused (2.0 could be
    a float, a double or an integer's bits). Where libcuda tells the parameters of a
    CUfunction handle (cuFuncGetParamInfo, driver 12.4+), their count and sizes are
    checked: C reads each parameter's size from its pointer. The returned array keeps
    the values alive."""
    values = tuple(values)
    for k, v in enumerate(values):
        if not isinstance(v, _CDATA) or isinstance(v, _ctypes.CFuncPtr):
            raise TypeError(
                f"'{name}': argument {k} is {type(v).__name__}: for a kernel whose "
                "parameter types cudart does not know, give ctypes values (each its C "
                "type: ctypes.c_float(x), ctypes.c_int(n), ctypes.c_void_p(address)), "
                'or the kernel\'s signature: cudart.kernels.typed(f, "float*, int")'
            )
        refuse_destroyed(v, name)
    params = _function_params(func)
    if params is not None:
        if len(params) != len(values):
            raise TypeError(
                f"'{name}': the kernel takes {len(params)} arguments ({len(values)} given; "
                "cuFuncGetParamInfo)"
            )
        for k, (v, (_offset, size)) in enumerate(zip(values, params, strict=True)):
            if ctypes.sizeof(v) != size:
                raise TypeError(
                    f"'{name}': argument {k} is {type(v).__name__} "
                    f"({ctypes.sizeof(v)} bytes); the kernel's parameter {k} is {size} "
                    "bytes (cuFuncGetParamInfo)"
                )
    if not values:
        return None  # no parameters: C reads nothing
    slots = (c_void_p * len(values))(*(ctypes.addressof(v) for v in values))
    slots.held = values  # type: ignore[attr-defined]  # alive while C reads them
    return slots


def _function_params(func: Any) -> tuple[tuple[int, int], ...] | None:
    """A converted CUfunction handle's parameters (offset, size), where libcuda tells
    them; None for anything else (a raw address may be a host stub, which libcuda must
    not be handed, and a CUkernel is no CUfunction)."""
    if not isinstance(func, Handle) or handle_kind(type(func)) != "CUfunc_st":
        return None
    return driver_params(func.value) if func.value else None


def argument_buffer(
    value: Any,
    kernel_params: Any,
    markers: tuple[int, int, int],
    function: str,
    name: str,
    params_name: str,
    kernel: Any = None,
) -> Any:
    """The driver launches' `void **extra` (cuLaunchKernel, cuLaunchKernelEx) -> what the
    call passes.

    Memory with the buffer protocol (bytes, bytearray, memoryview, array.array, a NumPy
    array) or a ctypes object that is no pointer (a Structure, an array of numbers) is
    the kernel's packed argument buffer: C gets cuda.h's option list around it, five
    pointers `{CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE,
    &size, CU_LAUNCH_PARAM_END}` (`markers`: those three values, the model's), with the
    buffer and its size_t kept alive by the returned list for the call. The buffer holds
    the parameters at the kernel's offsets and alignments, which only the caller knows;
    an empty one is a kernel without parameters (cuda.h: the pointer is required only
    where the size is not zero). A read-only buffer is copied once (C only reads it), a
    writable one is not. What `pointer` takes as an address (an int, None, a ctypes
    pointer or array of pointers, byref(), a HostMemory, an object with __int__) is the
    caller's own option list, passed as it is.

    C refuses kernel parameters given both ways ("both kernelParams and extra are
    non-NULL": CUDA_ERROR_INVALID_VALUE): a ValueError here, `kernel_params` being what
    that argument was converted to.

    The size C is told is what the kernel's parameters span, where libcuda says it
    (cuFuncGetParamInfo, driver 12.4+, of the converted `kernel`): the driver refuses a
    larger one (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, driver 580: a ctypes Structure's tail
    padding is left out) and takes a smaller one, reading past the buffer; a buffer
    smaller than the span is a ValueError here. Where the driver cannot say, the
    buffer's own size is passed.
    """
    if value is None or (type(value) is int and value == 0):
        return value
    if type(value) is int or _option_list(value):
        converted = pointer(value, name, True)
        _exclusive(kernel_params, function, name, params_name)
        return converted
    if isinstance(value, _CDATA):
        size, address = ctypes.sizeof(value), ctypes.addressof(value)  # type: ignore[arg-type]
        held: Any = value
    else:
        view = _buffer(value)
        if view is None or hasattr(value, "__cuda_array_interface__"):
            raise TypeError(
                f"'{name}' must be an argument buffer (bytes, bytearray, memoryview, a ctypes "
                f"Structure or array), the option list (a ctypes array of pointers, an int "
                f"address) or None, not {type(value).__name__}"
            )
        held = _host_memory(view, name, False)
        size, address = view.nbytes, ctypes.addressof(held)
    _exclusive(kernel_params, function, name, params_name)
    span = _parameter_span(kernel)
    if span is not None:
        if size < span:
            raise ValueError(
                f"{function}: '{name}' holds {size} bytes, but the kernel's parameters "
                f"span {span} (cuFuncGetParamInfo): C would read past the buffer"
            )
        size = span
    length = ctypes.c_size_t(size)
    start, size_marker, end = markers
    options = (c_void_p * 5)(start, address, size_marker, ctypes.addressof(length), end)
    options.held = (held, length)  # type: ignore[attr-defined]  # alive while C reads them
    return options


def _parameter_span(kernel: Any) -> int | None:
    """What a converted CUfunction's parameters span, or None where it is unknown."""
    if kernel is None:
        return None
    address = kernel.value if isinstance(kernel, ctypes.c_void_p) else kernel
    if not isinstance(address, int) or not address:
        return None
    return driver_param_span(address)


def _exclusive(kernel_params: Any, function: str, name: str, params_name: str) -> None:
    """ValueError where kernel parameters would reach C both ways."""
    if not _null(kernel_params):
        raise ValueError(
            f"{function}: '{params_name}' and '{name}' are mutually exclusive (C refuses "
            f"both non-NULL): give the arguments one way, the other None"
        )


def _null(converted: Any) -> bool:
    """Whether a converted pointer argument is NULL for C: None, 0 or a NULL ctypes pointer."""
    if converted is None or (type(converted) is int and converted == 0):
        return True
    return isinstance(converted, c_void_p) and not converted.value


def _option_list(value: Any) -> bool:
    """Whether an `extra` argument is an address, or memory C reads as the option list
    itself (what `pointer` took before argument buffers): a ctypes pointer, an array of
    pointers, byref(), a HostMemory, a handle (refused there), or an object with no
    buffer protocol (an address through __int__; anything else `pointer` refuses)."""
    if isinstance(value, (HostMemory, Handle, _POINTER_TYPES)):
        return True
    if type(value).__name__ == "CArgObject":
        return True
    if isinstance(value, ctypes.Array):
        return issubclass(value._type_, _POINTER_TYPES)
    if isinstance(value, _CDATA) or isinstance(value, (str, float, complex)):
        return False
    return (
        _buffer(value) is None
        and not hasattr(value, "__cuda_array_interface__")
        and _int_like(value) is not None
    )


def kernel_slots(value: Any, converted: Any, count: int | None, name: str) -> None:
    """TypeError or ValueError unless memory given as `void **kernelParams` can be C's
    array of `count` pointers: a ctypes array of pointers, or a buffer, of at least
    `count` pointers, at a pointer-aligned address. Where the count cannot be known (a
    raw function address, a cudaKernel_t, a kernel whose parameters the runtime does not
    report) at least one pointer: the least any kernel with parameters reads."""
    source = getattr(value, "_obj", value)  # byref(array)
    # An array of bytes is a buffer (a HostMemory is one); of other values, a mistake.
    if isinstance(source, ctypes.Array) and not issubclass(source._type_, _SLOT_ELEMENTS):
        raise TypeError(f"'{name}' must be an array of pointers, not of {source._type_.__name__}")
    have = _memory_size(source, converted)
    need = POINTER_SIZE * (1 if count is None else count)
    if have < need:
        wanted = "one pointer" if count is None else f"{count} pointers, one per parameter"
        raise ValueError(
            f"'{name}' is {have} bytes: C reads {wanted} ({need} bytes) from kernel arguments"
        )
    if need and _memory_address(converted) % POINTER_SIZE:
        raise ValueError(f"'{name}': kernel argument pointers must be {POINTER_SIZE}-byte aligned")


_SLOT_ELEMENTS = (*_POINTER_TYPES, c_char, ctypes.c_byte, ctypes.c_ubyte)


def _param_count(func: Any) -> int | None:
    """How many parameters the kernel `func` takes, where cudart.kernels knows it."""
    try:
        sizes = getattr(func, "param_sizes", None)
    except Exception:  # a closed module's kernel: the call refuses it
        return None
    return len(sizes) if isinstance(sizes, tuple) else None


def _memory_size(source: Any, converted: Any) -> int:
    """The bytes of memory `pointer` converted (`source` is what the caller gave)."""
    if isinstance(converted, bytes):
        return len(converted)
    if isinstance(source, _CDATA):
        return ctypes.sizeof(source)  # type: ignore[arg-type]
    if isinstance(converted, _CDATA):
        return ctypes.sizeof(converted)  # type: ignore[arg-type]
    return len(memoryview(converted).cast("B"))


def _memory_address(converted: Any) -> int:
    """The address C gets for what `pointer` returned for memory."""
    return ctypes.cast(converted, c_void_p).value or 0


class _Held(c_void_p):
    """A c_void_p that carries the Python object its address came from."""


def field_value(value: Any, ctype: Any, convert: Any, name: str) -> Any:
    """A value for a record's pointer member of type `ctype`, converted by `convert`
    (device_function or a kernel-arguments conversion), as a ctypes object that keeps
    `value` alive in the record: ctypes keeps a cast's source alive in whatever record
    (or enclosing record) the result is stored into, and a later store of such an
    object (None included) replaces it. ctypes' own objects are returned as they are:
    ctypes converts and keeps them itself. A member of a handle class (the driver's
    CUfunction `func`, CUkernel `kern`) takes what a handle argument of its class
    takes (`handle`: a Function gives its handle of that kind, never a host address)."""
    member_handle = isinstance(ctype, type) and issubclass(ctype, Handle)
    if isinstance(value, _CDATA) and (not member_handle or type(value) is ctype):
        return value  # ctypes' own conversion (and keep-alive) for its own objects
    if value is None:
        address = None
    elif member_handle:
        address = handle(value, ctype, name)
    else:
        address = convert(value, name)
    if isinstance(address, c_void_p):
        address = address.value
    elif address is not None and type(address) is not int:
        address = device_address(address)
    return ctypes.cast(_holding(address, value), ctype)


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


def function_pointer(
    value: Any, name: str, kind: str = "function pointer", prototype: Any = None
) -> Any:
    """A C function pointer argument (`kind`: its typedef) -> what the call passes: None,
    an int address, a ctypes function pointer (a CFUNCTYPE instance) or c_void_p, or an
    object with `_as_parameter_` or `__int__` giving an address.

    C's runtime calls it from its own threads, so memory is never one: a buffer, a
    ctypes object other than a pointer, or a handle is a TypeError, and so is a Python
    callable (the checked layer runs those only for the typedefs cudart.callbacks has
    trampolines for; elsewhere wrap it in the raw module's CFUNCTYPE and keep it alive).
    `prototype`: the typedef's CFUNCTYPE, which a ctypes function pointer must match
    (`same_prototype`).
    """
    if value is None:
        return value
    if isinstance(value, _ctypes.CFuncPtr):
        if prototype is not None:
            same_prototype(value, prototype, name, kind)
        return value
    if type(value) is int:
        return pointer(value, name, False)
    if isinstance(value, c_void_p) and not isinstance(value, Handle):
        return value
    if callable(value):
        raise TypeError(
            f"'{name}': a Python callable cannot be a {kind} here: wrap it in the raw "
            f"module's {kind} (CFUNCTYPE) and keep that object alive while C may call it"
        )
    if isinstance(value, _CDATA) or _buffer(value) is not None:
        raise TypeError(
            f"'{name}' must be a {kind} (a ctypes function pointer, an int address or "
            f"None), not memory ({type(value).__name__})"
        )
    param = getattr(value, "_as_parameter_", None)
    address = device_address(param) if param is not None else _int_like(value)
    if address is None:
        raise TypeError(
            f"'{name}' must be a {kind} (a ctypes function pointer, an int address or "
            f"None), not {type(value).__name__}"
        )
    return pointer(address, name, False)


def same_prototype(value: Any, prototype: Any, name: str, kind: str) -> None:
    """TypeError unless the ctypes function pointer `value` takes and returns what the
    CFUNCTYPE `prototype` does, as C passes them (`_abi`: c_int and c_uint alike, any
    two pointers alike): C would call a CFUNCTYPE(None, c_double) with a pointer in an
    integer register, and its Python function would read garbage from the float one.
    A C function whose argtypes ctypes was not told (a CDLL's, unset) carries no
    prototype to compare: it is the caller's promise, as an int address is."""
    argtypes = value.argtypes
    if argtypes is None:
        return
    want = [_abi(t) for t in prototype._argtypes_]
    have = [_abi(t) for t in argtypes]
    if have != want or _abi(value.restype) != _abi(prototype._restype_):
        wanted = _prototype_text(prototype._restype_, prototype._argtypes_)
        given = _prototype_text(value.restype, argtypes)
        raise TypeError(f"'{name}' must be a {kind}: {wanted}, not a function pointer {given}")


def _abi(ctype: Any) -> Any:
    """What a C argument or result of ctypes type `ctype` is to the calling convention."""
    if ctype is None:
        return None
    if isinstance(ctype, type):
        if issubclass(ctype, _POINTER_TYPES):
            return "pointer"
        if issubclass(ctype, ctypes._SimpleCData):
            code = ctype._type_  # type: ignore[attr-defined]
            if code in "PzZO":
                return "pointer"
            return ("float" if code in "fdg" else "integer", ctypes.sizeof(ctype))
        if issubclass(ctype, (ctypes.Structure, ctypes.Union, ctypes.Array)):
            return ("record", ctype.__name__, ctypes.sizeof(ctype))
    return ctype


def _prototype_text(restype: Any, argtypes: Any) -> str:
    def named(t: Any) -> str:
        return "void" if t is None else getattr(t, "__name__", repr(t))

    return f"{named(restype)} (*)({', '.join(named(t) for t in argtypes) or 'void'})"


def is_function_pointer(value: Any) -> bool:
    """A ctypes function pointer (a CFUNCTYPE instance): C's own callback, passed as is."""
    return isinstance(value, _ctypes.CFuncPtr)


def is_python_callable(value: Any) -> bool:
    """A Python callable to run as a C callback, as opposed to a C function pointer."""
    return callable(value) and not is_function_pointer(value)


# ---------------------------------------------------------------- kernel images


def image(value: Any, name: str) -> Any:
    """An in-memory kernel image argument (cudaLibraryLoadData's `code`) -> what the call
    passes. C parses it with no length, trusting the sizes its header states, so memory
    Python can read (bytes, a buffer, a ctypes object, a HostMemory) must be a fatbin
    whose stated sizes lie inside it, a cubin or PTX: cudart.kernels._images.checked_image, the
    check load_module makes (PTX gets the NUL C reads up to). An address (an int, a
    ctypes pointer, a device array) is the caller's promise."""
    if value is None or type(value) is int or isinstance(value, _POINTER_TYPES):
        return pointer(value, name, False)  # a handle among them is refused there
    if isinstance(value, HostMemory):
        value.check()  # freed memory is no image to read
    view = _buffer(value)
    if view is None or hasattr(value, "__cuda_array_interface__"):
        return pointer(value, name, False)  # an address-like object, or refused there
    from .kernels._images import checked_image

    data = view.tobytes()
    checked = checked_image(data)
    return pointer(value if checked is data else checked, name, False)


def image_file(value: Any, name: str) -> bytes | None:
    """The name of a file holding a kernel image (cudaLibraryLoadFromFile's `fileName`)
    -> the bytes C takes, once the file's header passed `image`'s check (ImageError).
    A file that cannot be read is left to C, which reports it."""
    path = cstring(value, name)
    if path is not None:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return path
        from .kernels._images import checked_image

        checked_image(data)  # PTX needs no NUL here: the runtime knows the file's length
    return path


# ---------------------------------------------------------------- strings


def cstring(value: Any, name: str) -> bytes | None:
    """A `const char *` argument: None (NULL), or str or bytes without a NUL, which C
    would take for the text's end (ValueError, as ctypes' c_char_p refuses one in a
    str elsewhere)."""
    if value is None:
        return value
    if type(value) is bytes:
        text = value
    elif isinstance(value, str):
        text = value.encode()
    elif isinstance(value, (bytearray, memoryview)):
        text = bytes(value)
    else:
        raise TypeError(f"'{name}' must be str or bytes, not {type(value).__name__}")
    if b"\0" in text:
        raise ValueError(f"'{name}' contains a NUL byte, where C would cut it short")
    return text


# ---------------------------------------------------------------- attribute values
#
# An attribute setter or getter (cudaMemPoolSetAttribute, cudaStreamGetAttribute, ...)
# takes a `void *` or union pointer whose type the attribute argument selects. The
# generated modules hold, per attribute enum, a table `value -> AttributeValue` that
# generator/attributes.py decided from the header's docs; these convert through it.

if TYPE_CHECKING:
    from typing import Generic, TypeVar

    _T = TypeVar("_T")

    class AttributeTable(dict[int, "AttributeValue | None"], Generic[_T]):
        """Attribute value -> its value type (None: no decision); _T is the Python type
        of the values, for type checkers."""

else:

    class AttributeTable(dict):
        __slots__ = ()


class AttributeValue:
    """One attribute's value: a C number (`ctype`, an `enum` class for enum-typed ones;
    c_bool for C's bool), an array of them (sized by the caller's byte count), a
    NUL-terminated string in a char array of `length` bytes (a str), or a member of the
    union `ctype` (`member`; None for the whole union)."""

    __slots__ = ("ctype", "enum", "array", "member", "length")

    def __init__(
        self,
        ctype: Any,
        enum: Any = None,
        array: bool = False,
        member: str | None = None,
        length: int | None = None,
    ) -> None:
        self.ctype = ctype
        self.enum = enum
        self.array = array
        self.member = member
        self.length = length

    @property
    def is_union(self) -> bool:
        return issubclass(self.ctype, ctypes.Union)


def _attribute_name(attr: Any) -> str:
    name = getattr(attr, "name", None)
    return name if isinstance(name, str) else repr(attr)


def _attribute(attr: Any, table: dict, function: str) -> AttributeValue:
    spec = table.get(attr)
    if spec is None:
        state = "has no value type decided" if attr in table else "is not an attribute"
        raise ValueError(
            f"{function}: {_attribute_name(attr)} {state} of these headers "
            f"(known: {', '.join(str(int(k)) for k in table)})"
        )
    return spec


def shareable_handle_storage(handle_type: Any, table: dict, function: str) -> Any:
    """C storage for the OS handle `function` exports as `handle_type`: `table` maps each
    handle type value to its ctypes type (generated from the enumerators' docs: an int
    fd, a HANDLE, a D3DKMT_HANDLE, a fabric handle record). Any other value, no type or
    several OR-ed, names no one handle: a ValueError, before C writes an unknown size."""
    ctype = table.get(handle_type)
    if ctype is None:
        known = ", ".join(f"{k} ({t.__name__})" for k, t in table.items())
        raise ValueError(
            f"{function}: handleType {_attribute_name(handle_type)} is not one exportable "
            f"handle type of these headers (known: {known})"
        )
    return ctype()


def shareable_handle(storage: Any) -> int | Any:
    """What `shareable_handle_storage`'s storage holds after the call: the fabric handle
    record itself, or the int (fd, HANDLE, D3DKMT_HANDLE) a scalar holds. (`int | Any`:
    the record's class is the generated module's, which the caller's annotation names.)"""
    if isinstance(storage, (ctypes.Structure, ctypes.Union)):
        return storage
    return storage.value or 0


def c_integer(value: Any, ctype: Any, what: str) -> int:
    """`value` as an int that fits the C integer type `ctype` (a ctypes scalar is read
    as its value): OverflowError where it does not fit, which ctypes would wrap."""
    if isinstance(value, _POINTER_TYPES) or type(value).__name__ == "CArgObject":
        raise TypeError(
            f"{what} is the value itself, not a pointer to it: pass an int (the raw "
            "module's function takes a pointer)"
        )
    if isinstance(value, ctypes._SimpleCData):
        value = value.value
    if isinstance(value, _CDATA) or not hasattr(type(value), "__index__"):
        # int, bool, IntEnum members; not float, nor a HostMemory (an address, __index__)
        raise TypeError(f"{what} must be an int, not {_not_integer(value)}")
    number = value.__index__()
    bits = 8 * ctypes.sizeof(ctype)
    signed = ctype(-1).value < 0
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if not low <= number <= high:
        kind = "signed" if signed else "unsigned"
        raise OverflowError(f"{what} is {number}: outside a {bits}-bit {kind} integer's range")
    return int(number)


def attribute_value(value: Any, attr: Any, table: dict, function: str, name: str) -> Any:
    """A setter's Python value -> what its `void *` / union pointer parameter takes
    (a byref() to C storage of the attribute's type, which the caller holds)."""
    spec = _attribute(attr, table, function)
    what = f"{function}: '{name}' for {_attribute_name(attr)}"
    if spec.is_union:
        union = spec.ctype
        if type(value).__name__ == union.__name__ and isinstance(value, ctypes.Union):
            return byref(value)  # the whole union, as the C function takes it
        if spec.member is None:
            raise TypeError(f"{what} must be a {union.__name__}, not {type(value).__name__}")
        made = union()
        field = dict(union._fields_)[spec.member]
        if issubclass(field, (ctypes.Structure, ctypes.Union)):
            if type(value).__name__ != field.__name__:
                raise TypeError(f"{what} must be a {field.__name__}, not {type(value).__name__}")
            ctypes.memmove(byref(made), byref(value), ctypes.sizeof(field))
        else:
            setattr(made, spec.member, c_integer(value, field, what))
        return byref(made)
    if spec.length is not None:
        return byref(_attribute_text(value, spec.length, what))
    if spec.ctype is ctypes.c_bool:
        # C's bool, one byte: True or False (0 and 1 as ints), nothing C would misread.
        if isinstance(value, ctypes.c_bool):
            value = value.value
        if value.__class__ is not bool and (
            isinstance(value, (_CDATA, HostMemory))
            or not hasattr(type(value), "__index__")
            or operator.index(value) not in (0, 1)
        ):
            raise TypeError(f"{what} must be a bool (or 0 or 1), not {value!r:.40}")
        return byref(ctypes.c_bool(bool(value)))
    if spec.array:
        items = [c_integer(v, spec.ctype, what) for v in value]
        return byref((spec.ctype * len(items))(*items))
    return byref(spec.ctype(c_integer(value, spec.ctype, what)))


def _attribute_text(value: Any, length: int, what: str) -> Any:
    """A string attribute's value (a str, in the file system's encoding as a path is, or
    bytes) as C reads it: its bytes and the NUL, no more than `length` in all."""
    if isinstance(value, str):
        data = os.fsencode(value)
    elif isinstance(value, bytes):
        data = value
    else:
        raise TypeError(f"{what} must be a str or bytes, not {_not_integer(value)}")
    if b"\0" in data:
        raise ValueError(f"{what} holds a NUL: C would read the text only up to it")
    if len(data) >= length:
        raise ValueError(f"{what} is {len(data)} bytes: C takes at most {length - 1} (and the NUL)")
    return ctypes.create_string_buffer(data)  # len(data) + 1 bytes: the NUL counts


def attribute_size(value: Any) -> Any:
    """The size_t C is told of an attribute's value (AttributeFunction.size_inout): the
    bytes of the setter's converted value (a byref(): a string's NUL included) or of
    the getter's storage; C may write another size back, which the caller is not given."""
    return ctypes.c_size_t(ctypes.sizeof(getattr(value, "_obj", value)))


def attribute_storage(attr: Any, table: dict, function: str, size: int | None = None) -> Any:
    """C storage for a getter's value of attribute `attr`; `size` is the byte count the
    caller gives C (cudaMemRangeGetAttribute's dataSize), checked against the type."""
    spec = _attribute(attr, table, function)
    if spec.length is not None:
        return (spec.ctype * spec.length)()
    if spec.array:
        item = ctypes.sizeof(spec.ctype)
        if size is None or size <= 0 or size % item:
            raise ValueError(
                f"{function}: {_attribute_name(attr)} is an array of {spec.ctype.__name__}: "
                f"the size must be a positive multiple of {item} bytes, not {size}"
            )
        return (spec.ctype * (size // item))()
    if size is not None and size != ctypes.sizeof(spec.ctype):
        raise ValueError(
            f"{function}: {_attribute_name(attr)} is a {spec.ctype.__name__}: the size must "
            f"be {ctypes.sizeof(spec.ctype)} bytes, not {size}"
        )
    return spec.ctype()


def attribute_storages(attrs: Any, table: dict, function: str, sizes: Any, count: int) -> Any:
    """Storage for several attributes at once (cudaMemRangeGetAttributes,
    cuPointerGetAttributes): the `void *` array C writes through, holding each
    attribute's storage. `attrs` and `sizes` (the byte size C is told of each) are
    sequences (or the ctypes arrays the checked layer made of them) of `count` items;
    `sizes` is None where C is told no sizes, `attrs` None (NULL) for no attributes."""
    # A ctypes array the caller made arrives as the byref() the checked layer took of it.
    attrs = _attribute_list(attrs)
    try:
        attrs = list(attrs)
        sizes = [None] * len(attrs) if sizes is None else list(getattr(sizes, "_obj", sizes))
    except TypeError:
        raise TypeError(
            f"{function}: the attributes and their sizes must be sequences, not "
            f"{type(attrs).__name__} and {type(sizes).__name__}"
        ) from None
    if not len(attrs) == len(sizes) == count:
        raise ValueError(
            f"{function}: {len(attrs)} attributes and {len(sizes)} sizes, for {count} attributes"
        )
    items = [attribute_storage(a, table, function, s) for a, s in zip(attrs, sizes, strict=True)]
    pointers = (c_void_p * count)(*[ctypes.addressof(item) for item in items])
    pointers._items = items  # type: ignore[attr-defined]  # kept alive with the array C is handed
    return pointers


def _attribute_list(attrs: Any) -> Any:
    """The attributes a getter of several was given: a sequence, the ctypes array the
    checked layer made of one (as its byref()), or None (NULL: none)."""
    attrs = getattr(attrs, "_obj", attrs)
    return () if attrs is None else attrs


def attribute_results(storages: Any, attrs: Any, table: AttributeTable[_T]) -> list[_T]:
    """Each attribute's Python value, from what `attribute_storages` made."""
    attrs = _attribute_list(attrs)
    return [attribute_result(s, a, table) for s, a in zip(storages._items, attrs, strict=True)]


def attribute_result(storage: Any, attr: Any, table: AttributeTable[_T]) -> _T:
    """The Python value of what a getter wrote into `attribute_storage`'s storage."""
    spec = table[attr]
    assert spec is not None  # attribute_storage refused an undecided attribute
    if spec.is_union:
        value = storage if spec.member is None else getattr(storage, spec.member)
    elif isinstance(storage, Handle):
        value = storage  # a handle output, as the checked layer returns every other one
    elif spec.length is not None:
        value = os.fsdecode(storage.value)  # the bytes up to the NUL
    elif spec.array:
        value = list(storage)
    else:
        value = storage.value
    if spec.enum is not None:
        try:
            value = spec.enum(value)
        except ValueError:
            pass  # a newer runtime's value: the int
    return value


# ---------------------------------------------------------------- integer ranges
#
# The generated checked code compares an int argument with its C type's range inline
# (generator/ctypes_map.py's integer_range, emitted as literals) and calls these only
# for what fails that: another type, or a value ctypes would silently mask or wrap.

_ADDRESS_END = 1 << 64  # a handle or pointer is an address: 0 <= value < 2**64
# Below this no struct lives: the first page(s) are never mapped, and a small int
# where C reads a record is a misplaced count or enum, not an address.
_LOWEST_RECORD_ADDRESS = 1 << 16


def _not_integer(value: Any) -> str:
    """How an integer parameter's refusal names `value`: a HostMemory's __index__ is its
    address, for ctypes and C's address parameters, never a count or a size."""
    if isinstance(value, HostMemory):
        return "a HostMemory (host memory: int(h) is its address, len(h) its size)"
    if isinstance(value, _CDATA):
        return f"a ctypes {type(value).__name__}"
    return type(value).__name__


def _integer_value(value: Any, what: str) -> int:
    if isinstance(value, _CDATA):
        raise TypeError(f"{what}: must be an int, not {_not_integer(value)}")
    if not hasattr(type(value), "__index__"):  # int, bool, IntEnum, NumPy integers
        raise TypeError(f"{what}: must be an int, not {type(value).__name__}")
    return int(value.__index__())


def integer(value: Any, spec: tuple[int, int, str], function: str, name: str) -> int:
    """An integer argument of a C type, `spec` = (low, high, C name), as an int:
    TypeError for what is no integer, OverflowError outside the range (which ctypes
    would mask or wrap)."""
    return integer_of(value, spec, f"{function}() argument '{name}'")


def integer_of(value: Any, spec: tuple[int, int, str], what: str) -> int:
    """`integer` for a value `what` names: a record's integer member
    (cudart._layout.integer_fields names it `Record.member`)."""
    low, high, c_name = spec
    number = _integer_value(value, what)
    if not low <= number <= high:
        raise OverflowError(f"{what}: {number} is outside {c_name}'s range {low}..{high}")
    return number


def device_pointer(
    value: Any, spec: tuple[int, int, str], function: str, name: str, written: bool = False
) -> int:
    """A device address argument of an integer type (cuda.h's CUdeviceptr), `spec` as
    `integer`'s: an integer, or what stands for device memory as for the runtime's
    device `void *` (`device_address`: __cuda_array_interface__, a CUDA __dlpack__, a
    c_void_p, _as_parameter_, __int__). A handle or host memory is a TypeError, and so
    is read-only device memory where C writes (`written`: ctypes_map's
    device_address_written)."""
    return device_pointer_of(value, spec, f"{function}() argument '{name}'", written)


def device_pointer_of(value: Any, spec: tuple[int, int, str], what: str, written: bool) -> int:
    """`device_pointer` for a value `what` names: a record's CUdeviceptr member
    (cudart._layout.device_address_fields names it `Record.member`)."""
    if isinstance(value, Handle):
        raise TypeError(f"{what}: a {type(value).__name__} is a handle, not a device address")
    if isinstance(value, _CDATA):
        # A c_void_p holds an address; any other ctypes object is refused as `integer`
        # refuses it (a c_ulonglong is storage, not the value).
        if isinstance(value, c_void_p):
            return integer_of(value.value or 0, spec, what)
        return integer_of(value, spec, what)
    # Device arrays before __index__: CuPy's and PyTorch's __index__ is an element's value.
    if hasattr(value, "__cuda_array_interface__") or hasattr(value, "__dlpack_device__"):
        memory = device_memory(value)
        if memory is not None:
            if written:
                _refuse_read_only(memory, value, what)
            return integer_of(memory[0], spec, what)
    if hasattr(type(value), "__index__"):
        return integer_of(value, spec, what)
    if _buffer(value) is not None:
        raise TypeError(f"{what}: a {type(value).__name__} is host memory, not a device address")
    memory = device_memory(value)
    if memory is None:
        raise TypeError(
            f"{what}: must be a device address: an int or an object with "
            "__cuda_array_interface__, __dlpack__ (CUDA memory) or __int__, "
            f"not {type(value).__name__}"
        )
    if written:
        _refuse_read_only(memory, value, what)
    return integer_of(memory[0], spec, what)


def enum_argument(
    value: Any, spec: tuple[Any, int, int, int | None, str], function: str, name: str
) -> Any:  # an int, for a parameter annotated as the enum (an in-out value) as for one of ints
    """An enum argument, `spec` = (enum class, low, high, flags or None, C name): a
    member of the enum (any version's class of that name), or an int that is one of its
    values (for a flags enum, any OR of them: `flags` is the OR of all). A member of
    another enum is a TypeError, a value outside the C type an OverflowError, an
    in-range value that is no member a ValueError."""
    enum, low, high, flags, c_name = spec
    what = f"{function}() argument '{name}'"
    kind = type(value)
    if isinstance(value, int) and kind is not int and kind is not bool:
        members = getattr(kind, "_value2member_map_", None)
        if members is not None and kind.__name__ != enum.__name__:
            raise TypeError(f"{what}: must be a {enum.__name__}, not a {kind.__name__}")
    number = integer(value, (low, high, c_name), function, name)
    if flags is not None:
        if number & ~flags:
            raise ValueError(
                f"{what}: {number:#x} is not an OR of {enum.__name__}'s flags (bits {flags:#x})"
            )
    elif number not in enum._value2member_map_:
        raise ValueError(f"{what}: {number} is not a {enum.__name__} value")
    return number


def address_error(value: int, function: str, name: str, record: str | None = None) -> Exception:
    """The error for an int pointer or handle C would misread: negative, 2**64 or more,
    or (where C reads a record) a small int that cannot be the record's address."""
    what = f"{function}() argument '{name}'" if function else f"'{name}'"
    if not 0 <= value < _ADDRESS_END:
        return OverflowError(f"{what}: {value} is no address (0 <= {name} < 2**64)")
    return ValueError(
        f"{what}: {value} is not the address of a {record} (pass the {record}, a buffer of "
        f"its size, None or an address of at least {_LOWEST_RECORD_ADDRESS:#x})"
    )
