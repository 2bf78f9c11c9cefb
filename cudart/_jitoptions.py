"""Typed JIT and library option lists (issue 33 item 14b): what the checked
cuModuleLoadDataEx, cuLinkCreate, cuLinkAddData, cuLinkAddFile, cuLibraryLoadData,
cuLibraryLoadFromFile (and the runtime's cudaLibraryLoadData / cudaLibraryLoadFromFile)
make of their `(count, options, values)` groups.

C takes, per option, one `void *` slot whose meaning the option gives (the header's
"Option type", generator/jit_options.py, which writes each module's table of them):
a number in the pointer's bits, a log buffer, an array. The caller gives the options
typed, in any of three forms:

* a mapping `{option: value}`;
* a sequence of `(option, value)` pairs (the values None);
* cuda-bindings' form: a sequence of options and a sequence of their values (with a
  count, the first that many of each, as cuda-bindings takes them).

The count may be None; given, it is the number of options the caller gives (the sizes
cudart adds for the log buffers are not among them).

Each value is converted and range-checked to its option's type here, before C, and a
bad one raises TypeError / ValueError / OverflowError naming the function and the
option. By type:

* unsigned int, int: an int of that C type; an enum option (CU_JIT_TARGET): a member
  of its enum (or an int that is one);
* a log buffer (`char *`: CU_JIT_INFO_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER): the size in
  bytes cudart allocates, or a writable buffer of the caller's (bytearray, ...), which C
  writes into too. Its size option (CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES) is added with the
  buffer's size where the caller gives none; one given may not exceed the buffer;
* `const char **` / `void **` (CU_JIT_GLOBAL_SYMBOL_NAMES / _ADDRESSES): a list of str
  or bytes / of addresses; its count option is added where missing, and must equal the
  list's length where given;
* a float (CU_JIT_WALL_TIME, written by C): None, or a number (ignored by C);
* no value (CU_JIT_TARGET_FROM_CUCONTEXT): None (or 0, as cuda-bindings passes it);
* an address (CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE): an int, None or a
  ctypes object (its address).

The call returns, beside its usual result, an `OptionsWritten`: the options C writes
back, by option (each log as str, cut at the bytes C says it wrote; a size or count as
an int; the wall time as a float). A failed call's exception carries the same as its
`written` attribute: a refused PTX's error log is there. cuLinkCreate's slots stay C's
until the CUlinkState is destroyed ("optionValues must remain valid for the life of
the CUlinkState"), and a library loaded lazily may be compiled after its load returns:
the arrays are kept with the state or library object (and the OptionsWritten), whose
values are read when asked (after cuLinkComplete, after a kernel is first used).

The older raw form is still taken as it was: a ctypes array or an address for the
options and the values, with the count (then C's writes are in the caller's arrays).
"""

from __future__ import annotations

import ctypes
import math
import struct
import weakref
from collections.abc import Iterator, Mapping
from ctypes import c_char_p, c_float, c_void_p

from ._convert import _CDATA, enum_argument, integer_of

# The checked layer imports no typing at run time (tests/generator/test_checked.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    # What a typed option group's parameters take (the annotations say it).
    OptionsLike = Mapping[Any, Any] | Sequence[Any] | None
    _MappingBase = Mapping[Any, Any]
else:
    _MappingBase = Mapping

__all__ = [
    "OptionTable",
    "OptionValue",
    "OptionsWritten",
    "keep_options",
    "options_in",
    "with_written",
    "written",
]

# Every value a `void *` slot holds is taken mod 2**64, as C's casts do.
_SLOT = (1 << 64) - 1
_UNSIGNED_32 = (1 << 32) - 1
# What the typed forms accept as a sequence: a str or bytes is one value, never a list.
_SEQUENCES = (list, tuple)


class OptionValue:
    """One option's value type (generator/jit_options.py's decision): `kind` is a
    ValueKind's value; `spec` the range an integer or enum is checked against (as
    cudart._convert.integer's); `out` whether C writes the slot back; `length` the
    option that gives a log's size or an array's count; `why` why it is refused."""

    __slots__ = ("kind", "spec", "out", "length", "why")

    def __init__(
        self,
        kind: str,
        spec: tuple[Any, ...] | None = None,
        *,
        out: bool = False,
        length: int | None = None,
        why: str | None = None,
    ) -> None:
        self.kind, self.spec, self.out, self.length, self.why = kind, spec, out, length, why


class OptionTable:
    """An option enum's value types: `spec` is the enum's range (its class first), each
    member's OptionValue by value (None: undecided, refused at run time)."""

    __slots__ = ("spec", "values", "element")

    def __init__(
        self, spec: tuple[Any, ...], values: dict[int, OptionValue | None], element: Any
    ) -> None:
        self.spec, self.values, self.element = spec, values, element

    def member(self, value: int) -> Any:
        enum = self.spec[0]
        return enum(value) if value in enum._value2member_map_ else value


class _Slot:
    """One option as packed: its place, its member, its type and what C may write."""

    __slots__ = ("index", "option", "spec", "storage", "sentinel")

    def __init__(self, index: int, option: Any, spec: OptionValue, storage: Any = None) -> None:
        self.index, self.option, self.spec, self.storage = index, option, spec, storage
        self.sentinel: int | None = None  # a float's: the word the slot held going in


class _Packed:
    """A group's C arrays and everything their slots point to (held for C)."""

    __slots__ = ("count", "options", "values", "slots", "keep", "__weakref__")

    def __init__(self, count: int, options: Any, values: Any, slots: list[_Slot]) -> None:
        self.count, self.options, self.values, self.slots = count, options, values, slots
        self.keep: list[Any] = []


class OptionsWritten(_MappingBase):
    """What C wrote back through typed options, by option: each log as str (cut at the
    bytes C wrote), each in/out size or count as an int, the wall time as a float. Read
    from the option values when asked (cuLinkCreate's are written until cuLinkDestroy)."""

    __slots__ = ("_slots",)

    def __init__(self, *packed: _Packed | None) -> None:
        # Which slots C writes is fixed by the packing; only their values are read late.
        self._slots: dict[Any, tuple[_Packed, _Slot]] = {
            s.option: (p, s)
            for p in packed
            if p is not None
            for s in p.slots
            if s.spec.out or s.spec.kind == "log"
        }

    def __getitem__(self, option: Any) -> Any:
        packed, slot = self._slots[option]
        return _read(packed, slot)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._slots)

    def __len__(self) -> int:
        return len(self._slots)

    def __repr__(self) -> str:
        items = ", ".join(f"{getattr(k, 'name', k)}: {v!r}" for k, v in self.items())
        return f"OptionsWritten({{{items}}})"


def options_in(
    count: Any,
    options: Any,
    values: Any,
    table: OptionTable,
    function: str,
    names: tuple[str, str, str],
) -> _Packed | None:
    """A group's typed options -> its C arrays (count, options, values), packed; None
    where the caller passes the raw form (ctypes arrays or addresses), converted as any
    pointer argument then."""
    count_name, options_name, _ = names
    if count is not None:
        what = f"{function}() argument '{count_name}'"
        count = integer_of(count, (0, _UNSIGNED_32, "unsigned int"), what)
    pairs = _pairs(count, options, values, function, names)
    if pairs is None:
        return None
    given: dict[int, tuple[Any, Any]] = {}
    for option, value in pairs:
        number = enum_argument(option, table.spec, function, options_name)
        if number in given:
            raise ValueError(f"{function}(): '{options_name}' gives {_name(table, number)} twice")
        given[number] = (table.member(number), value)
    slots: list[_Slot] = []
    words: list[int] = []
    keep: list[Any] = []
    lengths: dict[int, tuple[int, str, Any]] = {}  # length option -> (length, kind, of)
    for number, (member, value) in given.items():
        spec = table.values.get(number)
        where = (function, _name(table, number))
        if spec is None or spec.kind == "refused":
            why = spec.why if spec is not None else "its value type is undecided"
            raise ValueError(
                f"{function}(): {where[1]} is not taken: {why} (generator/jit_options.py)"
            )
        word, storage, length = _CONVERTERS[spec.kind](value, spec, where)
        if storage is not None:
            keep.append(storage)
        if spec.length is not None and length is not None:
            lengths[spec.length] = (length, spec.kind, member)
        slots.append(_Slot(len(words), member, spec, storage))
        words.append(word)
    stated = {int(s.option): words[s.index] for s in slots}
    for number, (length, kind, of) in lengths.items():
        if number in stated:
            # A log's size may be less than its buffer (C writes at most that much);
            # an array's count is what C reads, all of it.
            if stated[number] > length if kind == "log" else stated[number] != length:
                limit = "at most" if kind == "log" else "exactly"
                raise ValueError(
                    f"{function}(): {_name(table, number)} is {stated[number]}, but "
                    f"{getattr(of, 'name', of)} holds {length}: it must be {limit} that"
                )
            continue
        # The length option the caller left out: what C must be told of the buffer.
        spec = table.values.get(number)
        if spec is None:
            raise ValueError(f"{function}(): {_name(table, number)} is no option of this version")
        slots.append(_Slot(len(words), table.member(number), spec))
        words.append(length)
    n = len(words)
    if n == 0:
        return _Packed(0, None, None, [])
    option_array = (table.element * n)(*[int(s.option) for s in slots])
    value_array = (c_void_p * n)(*[w or None for w in words])
    packed = _Packed(n, option_array, value_array, slots)
    packed.keep = keep
    for slot in slots:
        if slot.spec.kind == "float":
            slot.sentinel = words[slot.index]
    return packed


def _pairs(
    count: int | None, options: Any, values: Any, function: str, names: tuple[str, str, str]
) -> list[Any] | None:
    """The (option, value) pairs of a typed form, or None for the raw form. `count`, where
    given, is the number of options the caller gives (the log sizes cudart adds are not
    among them); of cuda-bindings' two lists, the first `count` of each, as there."""
    count_name, options_name, values_name = names
    if options is None and values is None:
        pairs: list[Any] = []
    elif isinstance(options, Mapping):
        if values is not None:
            raise TypeError(
                f"{function}(): '{options_name}' is a mapping of the values: "
                f"'{values_name}' must be None"
            )
        pairs = list(options.items())
    elif not isinstance(options, _SEQUENCES) or not (
        values is None or isinstance(values, _SEQUENCES)
    ):
        return None
    elif values is not None:  # cuda-bindings' two lists
        if count is None and len(values) != len(options):
            raise ValueError(
                f"{function}(): '{options_name}' has {len(options)} options but "
                f"'{values_name}' {len(values)} values"
            )
        if count is not None and count > min(len(options), len(values)):
            raise ValueError(
                f"{function}(): '{count_name}' is {count}, but '{options_name}' has "
                f"{len(options)} options and '{values_name}' {len(values)} values"
            )
        return list(zip(options, values, strict=False))[:count]  # cuda-bindings' truncation
    else:
        pairs = _given_pairs(options, function, options_name, values_name)
    if count is not None and count != len(pairs):
        raise ValueError(
            f"{function}(): '{count_name}' is {count}, but '{options_name}' gives "
            f"{len(pairs)} options (or pass None)"
        )
    return pairs


def _given_pairs(options: Any, function: str, options_name: str, values_name: str) -> list[Any]:
    pairs = []
    for item in options:
        if not isinstance(item, _SEQUENCES) or len(item) != 2:
            raise TypeError(
                f"{function}(): '{options_name}' without '{values_name}' takes a mapping or "
                f"(option, value) pairs, not {type(item).__name__} {item!r:.40}"
            )
        pairs.append(tuple(item))
    return pairs


def _name(table: OptionTable, number: int) -> str:
    member = table.member(number)
    return getattr(member, "name", f"option {number}")


# ---------------------------------------------------------------- one converter per type
# Each: (value, spec, (function, option name)) -> (the slot's word, storage C reads or
# writes through it (kept for the call), the length its length option must state, or
# None).

_Where = tuple[str, str]


def _what(where: _Where) -> str:
    return f"{where[0]}() option {where[1]}"


def _integer(value: Any, spec: OptionValue, where: _Where) -> tuple[int, Any, None]:
    assert spec.spec is not None
    number = integer_of(value, spec.spec, _what(where))
    return number & _SLOT, None, None  # a negative int sign-extended, as (void *)(intptr_t)


def _enum(value: Any, spec: OptionValue, where: _Where) -> tuple[int, Any, None]:
    assert spec.spec is not None
    return enum_argument(value, spec.spec, where[0], where[1]), None, None


def _log(value: Any, spec: OptionValue, where: _Where) -> tuple[int, Any, int]:
    what = _what(where)
    if type(value) is int or (hasattr(type(value), "__index__") and not isinstance(value, _CDATA)):
        if isinstance(value, bool):
            raise TypeError(f"{what} takes a size in bytes or a writable buffer, not a bool")
        size = integer_of(value, (1, _UNSIGNED_32, "unsigned int"), f"{what} (the log's size)")
        buffer: Any = ctypes.create_string_buffer(size)
    else:
        buffer = _writable(value, what)
    size = ctypes.sizeof(buffer)
    if size > _UNSIGNED_32:
        raise OverflowError(f"{what}: a {size}-byte buffer: C is told its size as an unsigned int")
    return ctypes.addressof(buffer), buffer, size


def _writable(value: Any, what: str) -> Any:
    """A caller's buffer as a ctypes char array over its memory (C writes the log there)."""
    if isinstance(value, ctypes.Array) and value._type_ is ctypes.c_char:
        return value
    try:
        view = memoryview(value)
    except TypeError:
        raise TypeError(
            f"{what} takes a size in bytes or a writable buffer (bytearray, ...), "
            f"not {type(value).__name__}"
        ) from None
    if view.readonly:
        raise TypeError(f"{what}: the log buffer must be writable ({type(value).__name__} is not)")
    if not view.c_contiguous or view.nbytes == 0:
        raise ValueError(f"{what}: the log buffer must be contiguous and not empty")
    return (ctypes.c_char * view.nbytes).from_buffer(view.cast("B"))


def _strings(value: Any, spec: OptionValue, where: _Where) -> tuple[int, Any, int]:
    what = _what(where)
    if not isinstance(value, _SEQUENCES):
        raise TypeError(f"{what} takes a list of str or bytes, not {type(value).__name__}")
    items = []
    for item in value:
        if isinstance(item, str):
            item = item.encode()
        if not isinstance(item, bytes):
            raise TypeError(f"{what}: each name is a str or bytes, not {type(item).__name__}")
        if b"\0" in item:
            raise ValueError(f"{what}: {item!r:.40} holds a NUL: C would read it only up to it")
        items.append(item)
    array = (c_char_p * len(items))(*items)
    return (ctypes.addressof(array) if items else 0), array, len(items)


def _pointers(value: Any, spec: OptionValue, where: _Where) -> tuple[int, Any, int]:
    what = _what(where)
    if not isinstance(value, _SEQUENCES):
        raise TypeError(f"{what} takes a list of addresses, not {type(value).__name__}")
    addresses = [_address(item, what) for item in value]
    array = (c_void_p * len(addresses))(*[a or None for a in addresses])
    return (ctypes.addressof(array) if addresses else 0), array, len(addresses)


def _address(value: Any, what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, _CDATA):
        return ctypes.addressof(value)  # type: ignore[arg-type]
    return integer_of(value, (0, _SLOT, "an address"), what)


def _pointer(value: Any, spec: OptionValue, where: _Where) -> tuple[int, Any, None]:
    what = _what(where)
    # A ctypes record stays alive for the call with its address in the slot.
    storage = value if isinstance(value, _CDATA) else None
    return _address(value, what), storage, None


def _float(value: Any, spec: OptionValue, where: _Where) -> tuple[int, Any, None]:
    what = _what(where)
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise TypeError(f"{what} takes None or a number (C writes the time), not {value!r:.40}")
    if not spec.out:
        return struct.unpack("<I", struct.pack("<f", value or 0.0))[0], None, None
    # "Overwrites the option value" (cuda.h) says C writes the float into the slot; NVIDIA's
    # ptxjit sample and cuda-bindings give the address of a float, which C would write
    # through. The slot holds the address of a float of ours: after the call, a changed
    # slot is C's float, else the float there is (_read).
    storage = c_float(math.nan if value is None else float(value))
    return ctypes.addressof(storage), storage, None


def _none(value: Any, spec: OptionValue, where: _Where) -> tuple[int, Any, None]:
    what = _what(where)
    if value is not None and not (type(value) is int and value == 0):
        raise TypeError(f"{what} takes no value (None), not {value!r:.40}")
    return 0, None, None


_CONVERTERS = {
    "unsigned int": _integer,
    "int": _integer,
    "enum": _enum,
    "log": _log,
    "strings": _strings,
    "pointers": _pointers,
    "pointer": _pointer,
    "float": _float,
    "none": _none,
}


def _read(packed: _Packed, slot: _Slot) -> Any:
    """What C left in one slot, as the option's Python value."""
    word = packed.values[slot.index] or 0
    kind = slot.spec.kind
    if kind == "log":
        size = _written_size(packed, slot)
        raw = ctypes.string_at(ctypes.addressof(slot.storage), size)
        return raw.split(b"\0", 1)[0].decode("utf-8", errors="replace")
    if kind == "float":
        if word != slot.sentinel:  # C wrote the float into the slot's low 32 bits
            return struct.unpack("<f", struct.pack("<I", word & _UNSIGNED_32))[0]
        written = slot.storage.value
        return None if math.isnan(written) else written
    if kind in ("unsigned int", "enum"):
        return word & _UNSIGNED_32  # C writes an unsigned int: the slot's low half
    if kind == "int":
        low = word & _UNSIGNED_32
        return low - (1 << 32) if low >> 31 else low
    return word


def _written_size(packed: _Packed, slot: _Slot) -> int:
    """The bytes of a log C says it filled (its size option, written back), at most the
    buffer's; the whole buffer where the caller told C no size."""
    capacity = ctypes.sizeof(slot.storage)
    for other in packed.slots:
        if int(other.option) == slot.spec.length:
            return min(capacity, (packed.values[other.index] or 0) & _UNSIGNED_32)
    return capacity


def written(*packed: _Packed | None) -> OptionsWritten:
    """What a call's typed groups had C write (empty for the raw form)."""
    return OptionsWritten(*packed)


def with_written(error: BaseException, *packed: _Packed | None) -> BaseException:
    """A failed call's exception, with what C wrote (a refused PTX's error log) as
    `error.written`."""
    error.written = OptionsWritten(*packed)  # type: ignore[attr-defined]
    return error


def _hold(*_kept: Any) -> None:
    """The finalizer below holds its arguments until the handle goes."""


def keep_options(handle: Any, *packed: _Packed | None) -> None:
    """Keep a call's option arrays as long as the handle object it made (cuLinkCreate's
    state: C writes the logs, the sizes and the wall time until cuLinkDestroy)."""
    kept = tuple(p for p in packed if p is not None)
    if kept:
        weakref.finalize(handle, _hold, *kept)
