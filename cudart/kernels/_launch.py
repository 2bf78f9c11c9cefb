"""Kernel arguments and launch configuration, as cudaLaunchKernelExC takes them.

A launch passes `void **args`: one pointer per kernel parameter, each to that
argument's bytes. A `Signature` lays those bytes out once per combination of argument
types, so a launch only writes the values (one struct.pack_into). `KernelArguments`
(what `Function.pack` returns) is one Signature's slots with their values, owned, for
graph kernel nodes and the checked cudaLaunchKernel / cudaLaunchCooperativeKernel.

Parameter types come from a declared signature, a C++ kernel's mangled name or the
image's PTX (`ParamType`, `param_types`, `ptx_param_types`); where they are known, a
value of the wrong kind (a float for a pointer or an `int`, an int for a `float`) is
refused and an int is checked against the C type's range. Where they are not, an int
packs as an integer of the parameter's size, and a Python float is refused: it could
mean a float, a double or an integer's bits, so the caller passes a typed scalar
(numpy.float32, ctypes.c_float) or declares the signature. Argument sizes are checked
against the kernel's own parameter sizes where the runtime or driver can tell them
(`param_sizes`).
"""

from __future__ import annotations

import ctypes
import functools
import operator
import struct
import sys
from typing import Any

from .._checked import call_error
from .._contract import exported
from .._convert import device_address, refuse_destroyed, stream_handle
from .._hostmem import HostMemory
from .._lasterror import internal_calls
from .._paraminfo import PAST_THE_END, driver_param_info, read_params

_INT_FORMATS = {1: "b", 2: "h", 4: "i", 8: "q"}
_FLOAT_FORMATS = {2: "e", 4: "f", 8: "d"}
_CTYPES_VALUES = (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)
_CTYPES_FLOATS = (ctypes.c_float, ctypes.c_double, ctypes.c_longdouble)
_CTYPES_INTEGER_CODES = frozenset("bBhHiIlLqQ?")


# ---------------------------------------------------------------- configuration


def configure(config, grid, block, shared_mem: int, stream, cooperative: bool) -> None:
    """Write a launch's geometry into a cudaLaunchConfig_t whose attrs already hold
    the cooperative attribute (counted only when `cooperative`). Every value is checked
    before anything is written: a refused launch leaves the previous configuration."""
    gx, gy, gz = dims(grid, "grid")
    bx, by, bz = dims(block, "block")
    shared = _exact_index(shared_mem, "shared_mem must be an int")
    if shared < 0:
        raise ValueError("shared_mem must be >= 0")
    if shared > 0xFFFFFFFF:
        raise OverflowError(f"shared_mem {shared} does not fit an unsigned int")
    handle = stream_handle(stream)
    config.gridDim.x, config.gridDim.y, config.gridDim.z = gx, gy, gz
    config.blockDim.x, config.blockDim.y, config.blockDim.z = bx, by, bz
    config.dynamicSmemBytes = shared
    config.stream = handle
    config.numAttrs = 1 if cooperative else 0


def dims(value, what: str) -> tuple[int, int, int]:
    """An int, a 1-3 tuple or a dim3-like object (x, y, z) -> three dimensions."""
    given: tuple[Any, ...]
    if isinstance(value, int):
        given = (value, 1, 1)
    elif hasattr(value, "x") and hasattr(value, "y") and hasattr(value, "z"):
        given = (value.x, value.y, value.z)
    else:
        try:
            given = tuple(value)
        except TypeError:
            raise TypeError(
                f"{what} must be an int or a tuple of 1 to 3 ints, not {type(value).__name__}"
            ) from None
        if not 1 <= len(given) <= 3:
            raise ValueError(f"{what} must have 1 to 3 dimensions, not {len(given)}")
        given = given + (1,) * (3 - len(given))
    x, y, z = (_dimension(d, what) for d in given)
    return x, y, z


def _dimension(value, what: str) -> int:
    d = _exact_index(value, f"{what} dimensions must be ints")
    if not 0 <= d <= 0xFFFFFFFF:
        raise ValueError(f"{what} dimension {d} out of range")
    return d


def _exact_index(value, refusal: str) -> int:
    """`value` converted once (operator.index) to an exact int: the number C receives,
    which the checks then read, so an object's own comparisons decide nothing (one whose
    `<` says "in range" and whose index is 2**32 + 5 would launch 5 blocks)."""
    try:
        return int.__index__(operator.index(value))  # an int subclass's digits, as C's
    except TypeError:
        raise TypeError(f"{refusal}, not {type(value).__name__}") from None


# ---------------------------------------------------------------- parameter types


class ParamType:
    """What is known of one kernel parameter's C type.

    `kind` is "int", "bool", "float", "pointer", "word" (PTX's `.u64`, `.b32`, ...: an
    integer of either sign or, of 8 bytes, a pointer), or None for anything else (a
    struct, an enum, a type this module does not know): such a parameter takes what an
    untyped one takes. `size` is None where the type does not say it; `signed` is for
    "int" (... where either sign is taken); `text` is the type as given, for messages;
    `ctype` a declared ctypes type.
    """

    __slots__ = ("kind", "size", "signed", "text", "ctype")

    def __init__(self, kind, size, signed=True, text="", ctype=None):
        self.kind = kind
        self.size = size
        self.signed = signed
        self.text = text
        self.ctype = ctype

    def __eq__(self, other):
        return isinstance(other, ParamType) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def _key(self):
        return (self.kind, self.size, self.signed, self.text, self.ctype)

    def __repr__(self):
        return f"ParamType({self.text!r}: {self.kind}, {self.size})"


def _words(*names: str) -> tuple[str, ...]:
    return tuple(sorted(names))


# C's arithmetic types and the fixed-width typedefs kernels use, by their sorted words
# ("unsigned long" and "long unsigned int" alike): (kind, size, signed). long is 8
# bytes: kernels follow the host's LP64 model (Linux).
_SCALARS: dict[tuple[str, ...], tuple[str, int, bool]] = {}
for _spellings, _value in (
    (("bool", "_Bool"), ("bool", 1, False)),
    (("char", "signed char", "int8_t"), ("int", 1, True)),
    (("unsigned char", "uint8_t"), ("int", 1, False)),
    (("short", "short int", "signed short", "signed short int", "int16_t"), ("int", 2, True)),
    (("unsigned short", "unsigned short int", "uint16_t"), ("int", 2, False)),
    (("int", "signed", "signed int", "int32_t"), ("int", 4, True)),
    (("unsigned", "unsigned int", "uint32_t"), ("int", 4, False)),
    (
        ("long", "long int", "signed long", "signed long int", "long long", "long long int"),
        ("int", 8, True),
    ),
    (
        ("signed long long", "signed long long int", "int64_t", "ptrdiff_t", "ssize_t", "intptr_t"),
        ("int", 8, True),
    ),
    (
        ("unsigned long", "unsigned long int", "unsigned long long", "unsigned long long int"),
        ("int", 8, False),
    ),
    (("uint64_t", "size_t", "uintptr_t"), ("int", 8, False)),
    (("__half", "half", "__nv_half"), ("float", 2, True)),
    (("float",), ("float", 4, True)),
    (("double",), ("float", 8, True)),
):
    for _spelling in _spellings:
        _SCALARS[_words(*_spelling.split())] = _value
_QUALIFIER_WORDS = frozenset({"const", "volatile", "restrict", "__restrict", "__restrict__"})
_TYPE_WORDS = frozenset(w for k in _SCALARS for w in k) | _QUALIFIER_WORDS | {"struct", "enum"}


def param_type(text: str) -> ParamType:
    """A C parameter declaration's type (`const float *x`, `unsigned n`, `float*`)."""
    original = " ".join(text.split())
    spaced = original.replace("*", " * ").replace("&", " & ").replace("::", "__scope__")
    words = [w for w in spaced.split() if w not in _QUALIFIER_WORDS]
    if not words:
        raise ValueError(f"no type in the parameter {text!r}")
    # A trailing parameter name: an identifier after a type (`float *x`, `int n`).
    if len(words) > 1 and words[-1] not in ("*", "&") and words[-1] not in _TYPE_WORDS:
        if words[-1].isidentifier():
            words.pop()
    if "*" in words or "&" in words or words[-1].endswith("]"):
        return ParamType("pointer", 8, False, original)
    scalar = _SCALARS.get(_words(*words))
    if scalar is not None:
        kind, size, signed = scalar
        return ParamType(kind, size, signed, original)
    return ParamType(None, None, True, original)


def param_types(signature) -> tuple[ParamType, ...]:
    """A declared signature: C text (`"float, float*, float*, int"`, names allowed) or
    a sequence of ctypes types (or of C type strings)."""
    if isinstance(signature, str):
        text = signature.strip()
        if text.startswith("(") and text.endswith(")"):
            text = text[1:-1]
        parts = _split_top(text)
        if parts in ([], ["void"]):
            return ()
        return tuple(param_type(p) for p in parts)
    try:
        items = list(signature)
    except TypeError:
        raise TypeError(
            "signature must be a string of C types or a sequence of ctypes types, not "
            f"{type(signature).__name__}"
        ) from None
    return tuple(p if isinstance(p, ParamType) else _from_item(p) for p in items)


def ptx_param_types(params) -> tuple[ParamType, ...]:
    """An entry's parameters as the image's PTX declares them ((type, size) pairs,
    cudart.kernels._images): `.f32`/`.f64` floats, `.s*` signed ints, `.u*`/`.b*` words
    (PTX writes C's `int` as `.u32`, and a pointer as `.u64`), `.ptr` pointers, and an
    aligned `.b8` array a struct of its size."""
    return tuple(_ptx_param_type(type_, size) for type_, size in params)


def _ptx_param_type(type_: str, size: int) -> ParamType:
    text = f".{type_}"
    if type_ == "ptr":
        return ParamType("pointer", size, False, ".u64 .ptr")
    if type_.startswith("f") and size in _FLOAT_FORMATS:
        return ParamType("float", size, True, text)
    if size not in _INT_FORMATS or (type_ == "b8" and size != 1):
        return ParamType(None, size, True, f"{text}[{size}]" if type_ == "b8" else text)
    if type_.startswith("s"):
        return ParamType("int", size, True, text)
    return ParamType("word", size, ..., text)


def _split_top(text: str) -> list[str]:
    """Split at commas outside <...> and (...)."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    last = "".join(current).strip()
    if last or parts:
        parts.append(last)
    if any(not p for p in parts):
        raise ValueError(f"an empty parameter in the signature {text!r}")
    return parts


def _from_item(item) -> ParamType:
    if isinstance(item, str):
        return param_type(item)
    if not isinstance(item, type) or not issubclass(item, _CTYPES_VALUES + (ctypes._Pointer,)):
        raise TypeError(f"a signature entry must be a ctypes type or a C type string, not {item!r}")
    name, size = item.__name__, ctypes.sizeof(item)
    code = getattr(item, "_type_", None)
    if issubclass(item, (ctypes._Pointer, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_wchar_p)):
        return ParamType("pointer", size, False, name, item)
    if issubclass(item, _CTYPES_FLOATS):
        return ParamType("float", size, True, name, item)
    if issubclass(item, ctypes._SimpleCData) and code == "?":
        return ParamType("bool", size, False, name, item)
    if issubclass(item, ctypes._SimpleCData) and code in _CTYPES_INTEGER_CODES:
        return ParamType("int", size, code.islower(), name, item)
    return ParamType(None, size, True, name, item)


# ---------------------------------------------------------------- argument slots


def _slot(index: int, arg, size: int | None, ptype: ParamType | None = None):
    """(struct format, converter, size) for one argument of a kernel parameter.

    `size` is the parameter's size, None where the runtime cannot tell it; `ptype` what
    is known of its type. Ints and floats follow C's conversions to the parameter's
    size; anything else must be exactly the parameter's size.
    """
    kind, text, signed = None, "", True
    where = f"argument {index}"
    # NumPy's scalars are typed by their dtype. Not imported here: an argument can only
    # be one where the program imported NumPy (importing it cost cudart.kernels 55 ms).
    _np: Any = sys.modules.get("numpy")
    # A destroyed handle (a texture object, an event) is of a class of its own, so no
    # Signature is ever made for it, and one made for its live class refuses it (C's
    # launcher and Signature.pack take each argument's class exactly): checked here
    # once per class, not per launch.
    refuse_destroyed(arg, where)
    if ptype is not None:
        kind, text, signed = ptype.kind, ptype.text, ptype.signed
        where = f"argument {index} ({text})"
        if size is None:
            size = ptype.size
    numeric = kind in ("int", "bool", "float") or (kind == "word" and size != 8)
    if isinstance(arg, ctypes.c_void_p) or arg is None:
        if numeric:
            raise TypeError(f"{where}: a pointer given for a {text} parameter")
        return _pointer_slot(where, size)
    if isinstance(arg, HostMemory):  # an address (mapped, managed), not its bytes by value
        return _pointer_slot(where, size)
    if isinstance(arg, _CTYPES_VALUES):
        _check_ctypes_kind(where, arg, ptype)
        native = ctypes.sizeof(arg)
        if size is not None and native != size:
            raise TypeError(
                f"{where}: {type(arg).__name__} is {native} bytes, the kernel's parameter {size}"
            )
        return f"{native}s", bytes, native
    if isinstance(arg, (bytes, bytearray)):
        if size is not None and len(arg) != size:
            raise TypeError(f"{where}: {len(arg)} bytes given for a {size}-byte parameter")
        return f"{len(arg)}s", bytes, len(arg)
    if _np is not None and isinstance(arg, _np.floating) and kind is None:
        return _typed_float_slot(where, arg, size)
    if isinstance(arg, float) or (_np is not None and isinstance(arg, _np.floating)):
        if ptype is None:
            raise TypeError(_AMBIGUOUS_FLOAT.format(where=where))
        if kind != "float":
            raise TypeError(f"{where}: a float given for a {text} parameter")
        return _float_slot(where, size)
    if isinstance(arg, int) or (_np is not None and isinstance(arg, (_np.integer, _np.bool_))):
        if kind == "float":
            raise TypeError(f"{where}: an int given for a {text} parameter (write {int(arg)}.0)")
        if kind == "pointer":
            return _address_slot(where, size)
        if kind == "bool":
            return _int_slot(where, size, None)
        return _int_slot(where, size, signed if kind in ("int", "word") else ...)
    if hasattr(arg, "__array_interface__") and not hasattr(arg, "__cuda_array_interface__"):
        raise TypeError(f"{where}: a host array is not a kernel argument; pass a device pointer")
    if device_address(arg) is not None:
        if numeric:
            raise TypeError(
                f"{where}: {type(arg).__name__} (a pointer) given for a {text} parameter"
            )
        return _pointer_slot(where, size)
    raise TypeError(f"{where}: {type(arg).__name__} is not a kernel argument type")


_AMBIGUOUS_FLOAT = (
    '{where}: the kernel\'s parameter types are unknown (an extern "C" kernel of an '
    "image without PTX), so a Python float is ambiguous: a float, a double, or an "
    "integer's bits. Pass a typed scalar (numpy.float32(3.0) or ctypes.c_float(3.0); "
    "numpy.float64 or ctypes.c_double for a double), or declare the kernel's types: "
    'get_function(name, signature="float, const float*, int")'
)


def _typed_float_slot(where, arg, size):
    """A NumPy floating-point scalar for a parameter of unknown type: its own bytes,
    as a ctypes value's, which must be the parameter's size."""
    native = arg.dtype.itemsize
    if size is not None and native != size:
        raise TypeError(
            f"{where}: {type(arg).__name__} is {native} bytes, the kernel's parameter {size}"
        )
    return f"{native}s", lambda v: v.astype(v.dtype.newbyteorder("<")).tobytes(), native


def _check_ctypes_kind(where, arg, ptype):
    if ptype is None or ptype.kind is None:
        return
    floating = isinstance(arg, _CTYPES_FLOATS)
    integer = isinstance(arg, ctypes._SimpleCData) and arg._type_ in _CTYPES_INTEGER_CODES
    if (floating and ptype.kind != "float") or (integer and ptype.kind == "float"):
        raise TypeError(f"{where}: {type(arg).__name__} given for a {ptype.text} parameter")


def _pointer_slot(where, size):
    if size is not None and size != 8:
        raise TypeError(f"{where}: a pointer (8 bytes) given for a {size}-byte parameter")
    return "Q", device_address, 8


def _address_slot(where, size):
    if size is not None and size != 8:
        raise TypeError(f"{where}: a pointer (8 bytes) given for a {size}-byte parameter")

    def to_address(v):
        v = int(v)
        if not 0 <= v < 1 << 64:
            raise OverflowError(f"{where}: {v} is not a 64-bit address")
        return v

    setattr(to_address, "span", (0, (1 << 64) - 1))  # noqa: B010 - see Signature.fast
    return "Q", to_address, 8


def _int_slot(where, size, signed):
    """An integer slot: `signed` True or False where the C type is known, ... where it
    is not (then both signed and unsigned values of the size are taken, as their
    bits), None for a bool (0 or 1)."""
    if size is None:
        size = 8  # little-endian: the low bytes of an 8-byte slot are any narrower int
    fmt = _INT_FORMATS.get(size)
    if fmt is None:
        raise TypeError(f"{where}: an int given for a {size}-byte parameter (a struct?)")
    bits = size * 8
    span, half = 1 << bits, 1 << (bits - 1)
    if signed is ...:
        low, high, what = -half, span, f"a {size}-byte integer parameter"
    elif signed is None:
        low, high, what, fmt = 0, 2, "a bool parameter (0 or 1)", fmt.upper()
    elif signed:
        low, high, what = -half, half, f"a signed {size}-byte integer parameter"
    else:
        low, high, what, fmt = 0, span, f"an unsigned {size}-byte integer parameter", fmt.upper()

    def to_int(v):
        v = int(v)
        if not low <= v < high:
            raise OverflowError(f"{where}: {v} does not fit {what} [{low}, {high - 1}]")
        if fmt.islower() and v >= half:
            return v - span  # unsigned values keep their bits
        return v

    setattr(to_int, "span", (low, high - 1))  # noqa: B010 - see Signature.fast
    return fmt, to_int, size


def _float_slot(where, size):
    if size is None:
        raise TypeError(
            f"{where}: this runtime cannot tell the kernel's parameter sizes, so a Python "
            "float is ambiguous: pass ctypes.c_float or ctypes.c_double, or declare the "
            "kernel's signature (get_function(name, signature=...))"
        )
    fmt = _FLOAT_FORMATS.get(size)
    if fmt is None:
        raise TypeError(f"{where}: a float given for a {size}-byte parameter")
    return fmt, float, size


class Signature:
    """Argument slots for one combination of argument types, allocated once.

    `argv` is the kernel's `void **args`: pointers into one buffer that holds every
    argument at its natural alignment. `pack(*args)` writes the values: for plain ints
    and floats it is struct's own pack_into, whose checks (integer range, number of
    values, numeric type) send anything unusual to `pack_checked`. struct also takes an
    int for a floating-point slot and an int subclass (a handle) for an int, so a caller
    of `pack` checks each argument against `classes` ((index, class) of each slot): an
    argument of another class must choose its own Signature (or be refused), never
    reuse one made for a plain number.

    `fast` describes the slots for cudart.kernels._fastlaunch (Function.launch in C): per
    slot (address, kind, size, low, high, class, route, converter), kind 0 an integer
    taking [low, high] (the converter's range; written as its low bytes), 1 a float, 2 a
    double, 3 the argument's own `size` bytes (a ctypes value, bytes, a NumPy float of a
    parameter of unknown type), 4 an address (`route`: which step of device_address the
    argument's class reaches, `_address_route`). `class` is the argument's class, which
    C requires as `pack` does; None where every argument is an int, float or bool (then
    struct's formats decide, and C takes an int or bool for an integer, a float for a
    float). None where C does not pack them (a half: struct rounds it).
    """

    __slots__ = (
        "types",
        "argv",
        "pack",
        "pack_checked",
        "classes",
        "fast",
        "_buffer",
        "_pointers",
    )

    def __init__(self, args, params, ptypes=None):
        self.types = tuple(map(type, args))
        layout, offsets, converters, formats = _layout(args, params, ptypes)
        self._buffer = ctypes.create_string_buffer(max(8, layout.size))
        base = ctypes.addressof(self._buffer)
        self._pointers = (ctypes.c_void_p * max(1, len(args)))(*[base + o for o in offsets])
        self.argv = ctypes.c_void_p(ctypes.addressof(self._pointers) if args else None)
        raw = functools.partial(layout.pack_into, self._buffer, 0)
        types = self.types

        def pack_checked(values):
            raw(*[c(v) for c, v in zip(converters, values, strict=True)])

        self.pack_checked = pack_checked
        # Where every argument is a plain int, float or bool, struct packs them as they
        # come, and it takes an int for a float, or an int subclass (a texture object's
        # handle, destroyed or not) for an int: each launch holds them to these classes.
        self.classes: tuple[tuple[int, type], ...] = ()
        plain = all(t in (int, float, bool) for t in types)
        self.fast = _fast_slots(base, offsets, converters, formats, None if plain else types)
        if plain:
            self.pack = raw
            self.classes = tuple(enumerate(types))
        else:

            def pack(*values):
                if tuple(map(type, values)) != types:
                    raise TypeError("argument types changed")
                raw(*[c(v) for c, v in zip(converters, values, strict=True)])

            self.pack = pack


_FAST_FLOATS = {"f": (1, 4), "d": (2, 8)}
_FAST_BYTES, _FAST_ADDRESS = 3, 4
# Which step of device_address an argument's class reaches (_fastlaunch.c's ROUTE_*).
(
    _ROUTE_NULL,
    _ROUTE_VOID_P,
    _ROUTE_ARRAY,
    _ROUTE_HOST,
    _ROUTE_PARAMETER,
    _ROUTE_CALL,
    _ROUTE_CUPY,
    _ROUTE_PTR,
) = range(8)


def _fast_slots(base, offsets, converters, formats, types):
    """Signature.fast: each slot as cudart.kernels._fastlaunch writes it, or None.
    `types`: the arguments' classes, None where they are all int, float or bool."""
    slots = []
    for k, (offset, convert, fmt) in enumerate(zip(offsets, converters, formats, strict=True)):
        address = base + offset
        cls = None if types is None else types[k]
        span = getattr(convert, "span", None)
        if fmt in _FAST_FLOATS and convert is float:
            kind, size = _FAST_FLOATS[fmt]
            slots.append((address, kind, size, 0, 0, cls, 0, None))
        elif span is not None:
            size = struct.calcsize("<" + fmt)
            slots.append((address, 0, size, span[0], span[1], cls, 0, None))
        elif fmt.endswith("s") and cls is not None and int(fmt[:-1]) > 0:
            slots.append((address, _FAST_BYTES, int(fmt[:-1]), 0, 0, cls, 0, None))
        elif convert is device_address and cls is not None:
            route = _address_route(cls)
            slots.append((address, _FAST_ADDRESS, 8, 0, 0, cls, route, device_address))
        else:  # a half: struct rounds it, C does not here
            return None
    return tuple(slots)


_ADDRESS_NAMES = ("__cuda_array_interface__", "__dlpack_device__", "_as_parameter_")


def _is_cupy_ndarray(cls: type) -> bool:
    """cupy.ndarray itself, its __cuda_array_interface__, data and size CuPy's own
    descriptors: C then reads data.ptr and size, which give that interface's address
    without the dict CuPy builds per read (_fastlaunch.c's cupy_address). A subclass, or
    a class whose attributes were replaced, takes the interface as any other class does."""
    cupy = sys.modules.get("cupy")
    if cupy is None or cls is not getattr(cupy, "ndarray", None):
        return False
    for name in ("__cuda_array_interface__", "data", "size"):
        found = next((vars(c)[name] for c in cls.__mro__ if name in vars(c)), None)
        if type(found).__name__ != "getset_descriptor":
            return False
    return True


def _is_own_array(cls: type) -> bool:
    """cudart.arrays.DeviceArray itself, with the interface arrays.py gives it, whose
    address is its `ptr`: C reads that (_fastlaunch.c's ROUTE_PTR). Not imported here: an
    argument can only be one where the program imported cudart.arrays."""
    arrays = sys.modules.get("cudart.arrays")
    if arrays is None or cls is not arrays.DeviceArray:
        return False
    getter = getattr(vars(cls).get("__cuda_array_interface__"), "fget", None)
    return getattr(getter, "__qualname__", "") == "DeviceArray.__cuda_array_interface__" and (
        getattr(getter, "__module__", "") == "cudart.arrays"
    )


def _address_route(cls) -> int:
    """Which step of device_address an argument of class `cls` reaches, where its class
    alone decides it: C then takes that step (_fastlaunch.c's address_of), and the
    slot's converter, device_address itself, serves every other class. Decided once
    per Signature, as its formats are."""
    if cls is type(None):
        return _ROUTE_NULL
    if issubclass(cls, ctypes.c_void_p):
        return _ROUTE_VOID_P
    if _is_cupy_ndarray(cls):
        return _ROUTE_CUPY
    if _is_own_array(cls):
        return _ROUTE_PTR
    if hasattr(cls, "__cuda_array_interface__"):  # the first step: C reads it as Python does
        return _ROUTE_ARRAY
    # Later steps only where no attribute an instance could add, or __getattr__ make,
    # comes first: C checks a HostMemory's __dict__; a PARAMETER class has none.
    generic = cls.__getattribute__ is object.__getattribute__ and not hasattr(cls, "__getattr__")
    if not generic or any(hasattr(cls, name) for name in _ADDRESS_NAMES[:2]):
        return _ROUTE_CALL
    if (
        issubclass(cls, HostMemory)
        and not hasattr(cls, "_as_parameter_")
        and cls.__int__ is HostMemory.__int__
        and cls.check is HostMemory.check
    ):
        return _ROUTE_HOST
    if hasattr(cls, "_as_parameter_") and cls.__dictoffset__ == 0:
        return _ROUTE_PARAMETER
    return _ROUTE_CALL


def _layout(args, params, ptypes=None):
    """(struct.Struct, offsets, converters, formats) placing each argument at its alignment."""
    parts = ["<"]
    offsets = []
    converters = []
    formats = []
    offset = 0
    for k, arg in enumerate(args):
        size = params[k] if params is not None else None
        fmt, convert, size = _slot(k, arg, size, ptypes[k] if ptypes is not None else None)
        align = min(8, size & -size) if size else 1
        pad = -offset % align
        if pad:
            parts.append(f"{pad}x")
        offset += pad
        offsets.append(offset)
        parts.append(fmt)
        formats.append(fmt)
        offset += size
        converters.append(convert)
    return struct.Struct("".join(parts)), offsets, converters, formats


class Unpacked:
    """A Function's signature before its first launch: packing fails, so the first
    launch builds a real Signature."""

    argv = None
    classes: tuple[tuple[int, type], ...] = ()

    @staticmethod
    def pack(*args):
        raise TypeError("no arguments packed yet")


def check_count(name: str, args, params, ptypes) -> None:
    """The number of arguments against the kernel's parameters, where known."""
    expected = len(params) if params is not None else None
    if expected is None and ptypes is not None:
        expected = len(ptypes)
    if expected is not None and len(args) != expected:
        raise TypeError(f"kernel {name!r} takes {expected} arguments ({len(args)} given)")


def check_declared(name: str, params, ptypes) -> None:
    """A declared signature against the kernel's own parameter sizes, where the runtime
    tells them: a wrong declaration would pack every launch wrong."""
    if params is None or ptypes is None:
        return
    if len(params) != len(ptypes):
        raise TypeError(
            f"kernel {name!r} has {len(params)} parameters; its signature declares {len(ptypes)}"
        )
    for k, (size, t) in enumerate(zip(params, ptypes, strict=True)):
        if t.size is not None and t.size != size:
            raise TypeError(
                f"kernel {name!r}: parameter {k} is {size} bytes; its signature declares "
                f"{t.text} ({t.size} bytes)"
            )


def signature_for(name: str, args, params, ptypes) -> Signature:
    """A Signature for these arguments of the kernel `name`: count checked, each value
    checked against its parameter's size and type where known."""
    check_count(name, args, params, ptypes)
    try:
        return Signature(args, params, ptypes)
    except (TypeError, OverflowError) as exc:
        raise type(exc)(f"kernel {name!r}: {exc}") from None


class KernelArguments:
    """A kernel's arguments packed as C's `void **kernelParams`, with their storage.

    What `Function.pack(*args)` returns. It owns the slots and the values they were
    packed from (a device array given as an argument stays alive with it), and serves
    wherever C takes `kernelParams`: `cudaKernelNodeParams.kernelParams = packed` (the
    record then keeps it alive), the checked and raw cudaLaunchKernel,
    cudaLaunchCooperativeKernel and cudaLaunchKernelExC (`_as_parameter_`), or
    `int(packed)`, the address of the pointer array.
    """

    __module__ = "cudart.kernels"  # where users find it
    __slots__ = ("function", "values", "_signature", "__weakref__")

    def __init__(self, function: str, values: tuple, signature: Signature):
        self.function = function
        self.values = values
        self._signature = signature

    @property
    def argv(self) -> ctypes.c_void_p:
        return self._signature.argv

    @property
    def _as_parameter_(self) -> ctypes.c_void_p:
        return self._signature.argv

    def __int__(self) -> int:
        return self._signature.argv.value or 0

    __index__ = __int__

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return (
            f"<cudart.kernels.KernelArguments for {self.function} ({len(self.values)} "
            f"arguments at {int(self):#x})>"
        )


def pack(name: str, args: tuple, params, ptypes) -> KernelArguments:
    """`args` packed into their own slots (see KernelArguments)."""
    sig = signature_for(name, args, params, ptypes)
    try:
        sig.pack_checked(args)
    except (TypeError, OverflowError) as exc:
        raise type(exc)(f"kernel {name!r}: {exc}") from None
    return KernelArguments(name, tuple(args), sig)


# ---------------------------------------------------------------- parameter sizes


def param_sizes(rt, cdll, handle: int, name: str) -> tuple[int, ...] | None:
    """Each parameter's size in bytes of the kernel `handle`, or None where neither
    runtime (cudaFuncGetParamInfo, 12.4+) nor driver (cuFuncGetParamInfo) can tell."""
    # The probe past the last parameter is how the count is found, and the runtime
    # records its failure as the thread's last error: consumed (cudart._lasterror).
    with internal_calls(rt):
        return _param_sizes(rt, cdll, handle, name)


def _param_sizes(rt, cdll, handle: int, name: str) -> tuple[int, ...] | None:
    if exported(rt, cdll, "cudaFuncGetParamInfo"):

        def query(*index_offset_size):
            return rt.cudaFuncGetParamInfo(handle, *index_offset_size)

        past_end = rt.cudaErrorInvalidValue
    else:
        driver = driver_param_info()
        if driver is None:
            return None
        cufunc = ctypes.c_void_p()
        if rt.cudaGetFuncBySymbol(ctypes.byref(cufunc), handle):
            return None

        def query(*index_offset_size):
            return driver(cufunc, *index_offset_size)

        past_end = PAST_THE_END
    found, status = read_params(query, past_end)
    if status:
        if not found:
            return None
        raise call_error(rt, f"cudaFuncGetParamInfo({name!r}, {len(found)})", status)
    return tuple(size for _offset, size in found)
