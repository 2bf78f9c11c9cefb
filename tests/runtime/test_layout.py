"""cudart._layout.require_alignment: C's alignment beyond 16 for ctypes before 3.13.

The generated modules' use of it is held against gcc in test_abi.py (CUDA 13's
double4_32a and friends, under every supported Python) and test_constructs.py
(overaligned.h); these tests pin the helper's own contract: exact numbers, and
refusals that write nothing.
"""

from __future__ import annotations

import ctypes
import sys

import pytest

from cudart import _layout
from cudart._layout import LayoutError, require_alignment


def _struct(*fields, base=ctypes.Structure, align_=None):
    namespace = {} if align_ is None else {"_align_": align_}
    cls = type("rec", (base,), namespace)
    cls._fields_ = list(fields)
    return cls


def _embedding(cls) -> tuple[int, int, int]:
    one = _struct(("c", ctypes.c_char), ("t", cls))
    three = _struct(("c", ctypes.c_char), ("t", cls * 3))
    return one.t.offset, ctypes.sizeof(one), ctypes.sizeof(three)


def test_raises_alignment_for_embedding_and_arrays():
    """A 32-byte struct of doubles aligned to 32, as `double4_32a` is: the struct
    itself, a struct holding it, an array of it and a subclass all follow."""
    d4 = _struct(*[(n, ctypes.c_double) for n in "xyzw"], align_=32)
    require_alignment(d4, 32)
    assert (ctypes.sizeof(d4), ctypes.alignment(d4)) == (32, 32)
    # gcc: struct { char c; double4_32a t; } puts t at 32 and is 64 bytes; t[3]: 128.
    assert _embedding(d4) == (32, 64, 128)
    assert ctypes.alignment(d4 * 2) == 32
    assert ctypes.alignment(type("sub", (d4,), {})) == 32
    # Values are untouched.
    assert bytes(d4(1.0, 2.0, 3.0, 4.0)) == bytes((ctypes.c_double * 4)(1.0, 2.0, 3.0, 4.0))


def test_union():
    u = _struct(("d", ctypes.c_double * 4), ("i", ctypes.c_int), base=ctypes.Union, align_=32)
    require_alignment(u, 32)
    assert (ctypes.sizeof(u), ctypes.alignment(u)) == (32, 32)
    assert _embedding(u) == (32, 64, 128)


def test_already_aligned_is_a_no_op():
    s = _struct(("d", ctypes.c_double))
    require_alignment(s, 8)
    assert ctypes.alignment(s) == 8


@pytest.mark.parametrize("align", [24, 4, 64])
def test_refuses_impossible_alignments(align):
    """Not a power of two, below ctypes' own, or not dividing the size (C's sizeof is
    always a multiple of the alignment): ValueError, alignment unchanged."""
    s = _struct(*[(n, ctypes.c_double) for n in "xyzw"])
    with pytest.raises(ValueError):
        require_alignment(s, align)
    assert ctypes.alignment(s) == 8


def test_refuses_classes_without_fields():
    with pytest.raises((LayoutError, TypeError)):
        require_alignment(type("empty", (ctypes.Structure,), {}), 32)
    with pytest.raises(TypeError):
        require_alignment(ctypes.c_double * 4, 32)


@pytest.mark.skipif(
    sys.version_info >= (3, 13), reason="3.13+ honours _align_; no type info is written"
)
def test_verifies_before_writing(monkeypatch):
    """If the offsets assumed for ctypes' type info read anything but the class's own
    size and alignment, it raises and writes nothing."""
    s = _struct(*[(n, ctypes.c_double) for n in "xyzw"])
    monkeypatch.setattr(_layout, "_ALIGN", _layout._ALIGN + 8)  # reads `length` instead
    with pytest.raises(LayoutError, match="not laid out as expected"):
        require_alignment(s, 32)
    assert ctypes.alignment(s) == 8
    assert _embedding(s) == (8, 40, 104)


@pytest.mark.skipif(sys.version_info < (3, 13), reason="before 3.13 _align_ is ignored")
def test_without_align_attribute_on_313_is_an_error():
    """On 3.13+ the generated class carries _align_; a class without it is refused
    rather than patched."""
    s = _struct(*[(n, ctypes.c_double) for n in "xyzw"])
    with pytest.raises(LayoutError):
        require_alignment(s, 32)


@pytest.mark.parametrize("module", ["cudart.driver_12050", "cudart.driver_13050"])
def test_checked_outputs_of_over_aligned_records_are_at_their_alignment(module):
    """The checked layer allocates a record C aligns beyond 16 (CUtensorMap: 64 in
    12.x, 128 in 13.x), which cuTensorMapEncodeTiled writes, at that alignment: Python's
    allocator alone gives 16. Many instances, so a lucky address cannot pass."""
    import importlib

    from cudart._checked import aligned

    cls = importlib.import_module(module).CUtensorMap
    align = ctypes.alignment(cls)
    assert align == (64 if module.endswith("12050") else 128)
    kept = [aligned(cls) for _ in range(64)]
    assert all(ctypes.addressof(m) % align == 0 for m in kept)
    assert all(bytes(m) == bytes(ctypes.sizeof(cls)) for m in kept)
    kept[0].opaque[15] = 7  # its own memory: the last word is inside it
    assert kept[0].opaque[15] == 7 and kept[1].opaque[15] == 0
