"""The compiled backend's protocol: what cudart._backend, the generator's views and the
generated C (through cudart/_fastcall.h) agree on, written once.

The C side spells each number again (C cannot import this), and every generated
generated/_fast_<major>.c asserts at compile time that _fastcall.h's value is the one here
(generator/render/fast.py emits the `_Static_assert`s from this module): a drift of
either side fails the build, not a call. Standard library only.
"""

from __future__ import annotations

import struct

# What a function's slot holds before it is bound (calling it raises) and, in a test
# build (CUDART_FAST_TEST_HOOKS), while the recorder stands in for C.
SLOT_UNBOUND = 0
SLOT_RECORD = 1

# A variant's spec (cudart_spec), carried as its `self`: bit i of `storage` takes C
# parameter i's ctypes object by its own memory; bit i of `outs` makes C parameter i an
# output the call provides; codes[i] is how output i's slot is read. One bit per C
# parameter: a function of more parameters has no compiled form.
MAX_PARAMS = 64
SPEC_FORMAT = f"<QQ{MAX_PARAMS}s"  # storage, outs, codes
SPEC_SIZE = struct.calcsize(SPEC_FORMAT)
SPEC_OUTS_OFFSET = struct.calcsize("<Q")
SPEC_CODES_OFFSET = struct.calcsize("<QQ")

# An output the call provides lives in a slot of the call's own, which stands in for a
# pointer to a scalar of one of these sizes.
OUTPUT_SLOT_BYTES = 8
OUTPUT_SIZES = (1, 2, 4, 8)

# The ctypes `_type_` codes a slot is read as (cudart_output_value), with the Python
# type reading one gives (the checked layer's annotation of the output).
OUTPUT_VALUES = {
    "b": "int",
    "B": "int",
    "h": "int",
    "H": "int",
    "i": "int",
    "I": "int",
    "l": "int",
    "L": "int",
    "q": "int",
    "Q": "int",
    "f": "float",
    "d": "float",
    "?": "bool",
    "P": "int | None",
}
OUTPUT_CODES = frozenset(OUTPUT_VALUES)


def spec(storage: int, outs: int, codes: dict[int, str]) -> bytes:
    """The bytes of a cudart_spec: the two masks and each output's code."""
    table = bytearray(MAX_PARAMS)
    for i, code in codes.items():
        table[i] = ord(code)
    return struct.pack(SPEC_FORMAT, storage, outs, bytes(table))
