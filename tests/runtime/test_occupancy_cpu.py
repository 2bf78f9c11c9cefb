"""The parts of cudart.kernels and cudart.occupancy that need no GPU: reading images,
the occupancy search on given limits, and argument packing."""

from __future__ import annotations

import ctypes
import struct
from pathlib import Path

import pytest

from cudart.kernels import stream_handle
from cudart.kernels._images import (
    ImageError,
    fatbin_entries,
    image_kind,
    inspect_image,
    lz4_block_decompress,
)
from cudart.kernels._launch import Signature, dims, ptx_param_types
from cudart.occupancy import _store, potential_block_size

# The calls go through the backend in force: make test-ctypes runs them on ctypes too.
pytestmark = pytest.mark.backend

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
ALL_KERNELS = {"empty", "axpy", "mixed", "take_pair", "add_counter", "read_table", "coop_sum"}
GLOBALS = {"dev_counter": (4, False), "dev_table": (64, False), "const_scale": (16, True)}


@pytest.mark.parametrize(
    "name",
    [
        "kernels.fatbin",
        "kernels.cubin",
        "kernels.ptx",
        "kernels_lz4.fatbin",
        "kernels_plain.fatbin",
    ],
)
def test_images_list_kernels_and_globals(name):
    info = inspect_image((KERNELS / name).read_bytes())
    assert info.kind == name.rsplit(".", 1)[1]
    assert set(info.functions) == ALL_KERNELS
    assert info.variables == GLOBALS


def test_occupancy_image():
    info = inspect_image((KERNELS / "occupancy.cubin").read_bytes())
    assert set(info.functions) == {
        "occ_light",
        "occ_bounds",
        "occ_bounds_odd",
        "occ_regs",
        "occ_static_smem",
        "occ_dynamic_smem",
    }
    assert info.variables == {}  # __shared__ arrays are not globals


def test_zstd_fatbin_is_unreadable_not_wrong():
    info = inspect_image((KERNELS / "kernels_zstd.fatbin").read_bytes())
    assert info.functions is None and "zstd" in info.note


def test_lz4_entry_matches_uncompressed():
    def ptx(name):
        return [e for e in fatbin_entries((KERNELS / name).read_bytes()) if e[0] == 1][0]

    kind, flags, payload, size = ptx("kernels_lz4.fatbin")
    assert flags & 0x2000 and len(payload) < size
    plain = ptx("kernels_plain.fatbin")[2]
    assert lz4_block_decompress(payload, size) == plain[:size]
    assert plain[size:].strip(b"\0") == b""


def test_lz4_overlapping_match():
    # literal "ab", then a match of 6 at distance 2: "abababab"; then literal "c"
    block = bytes([0x22]) + b"ab" + bytes([2, 0]) + bytes([0x10]) + b"c"
    assert lz4_block_decompress(block, 9) == b"ababababc"
    with pytest.raises(ImageError):
        lz4_block_decompress(bytes([0x10]) + b"a" + bytes([5, 0]), 0)


def test_image_kind():
    assert image_kind(b"\x7fELF" + bytes(60)) == "cubin"
    assert image_kind(b"//\n.version 8.0\n.target sm_90\n") == "ptx"
    with pytest.raises(ImageError):
        image_kind(b"\x00" * 64)
    with pytest.raises(ImageError):
        image_kind("not bytes, .version .target".encode("utf-16"))


def test_search_rounds_an_odd_limit_and_stops_at_full_occupancy():
    tried = []

    def occupancy(block, smem):
        tried.append((block, smem))
        return min(32, 2048 // block)

    # Limit 100 (a kernel's __launch_bounds__): 100, then 96, 64 - and 64 x 32 blocks
    # fills the SM (2048 threads), so the search stops there.
    assert potential_block_size(2048, 32, 1024, 132, 100, lambda b: 3 * b, 0, occupancy) == (
        32 * 132,
        64,
    )
    assert tried == [(100, 300), (96, 288), (64, 192)]


def test_search_keeps_the_first_best():
    # Every size reaches 1536 threads at best: the larger block size found first wins.
    def occ(block, smem):
        return 1536 // block if 1536 % block == 0 else 0

    assert potential_block_size(2048, 32, 1024, 10, 1024, lambda b: 0, 0, occ) == (2 * 10, 768)
    # A user limit below the device's is honoured; nothing fits: zeros, as in C.
    assert potential_block_size(2048, 32, 1024, 10, 1024, lambda b: 0, 64, lambda b, s: 0) == (0, 0)


def test_store_writes_through_c_style_outputs():
    a = ctypes.c_int()
    _store(a, 1)
    _store(ctypes.byref(a), 2)
    assert a.value == 2
    _store(ctypes.pointer(a), 3)
    assert a.value == 3
    _store(ctypes.addressof(a), 4)
    assert a.value == 4
    with pytest.raises(TypeError):
        _store("x", 1)


def test_signature_packs_slots_once():
    # axpy's parameters as its PTX declares them: a Python float needs a float's slot.
    ptx = ptx_param_types((("f32", 4), ("u64", 8), ("u64", 8), ("u32", 4)))
    sig = Signature((1.5, 0x1000, 0x2000, 7), (4, 8, 8, 4), ptx)
    argv = sig.argv.value
    sig.pack(2.5, 0x10, 0x20, 3)
    pointers = (ctypes.c_void_p * 4).from_address(argv)
    values = [ctypes.string_at(p, s) for p, s in zip(pointers, (4, 8, 8, 4), strict=True)]
    assert struct.unpack("<f", values[0])[0] == 2.5
    assert [int.from_bytes(v, "little") for v in values[1:]] == [0x10, 0x20, 3]
    assert all(p % 4 == 0 for p in pointers) and pointers[1] % 8 == 0
    with pytest.raises(struct.error):
        sig.pack(1.0, 2, 3)  # the launch falls back to its checked path on this
    sig.pack_checked((1.0, 2, 3, 2**32 - 1))  # unsigned keeps its bits
    assert ctypes.string_at(pointers[3], 4) == b"\xff\xff\xff\xff"
    with pytest.raises(OverflowError):
        sig.pack_checked((1.0, 2, 3, 2**32))


def test_signature_checks_sizes():
    class Pair(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double)]

    sig = Signature((Pair(1, 2.0), None, ctypes.c_void_p(5)), (16, 8, 8))
    sig.pack(Pair(3, 4.0), None, ctypes.c_void_p(9))
    pointers = (ctypes.c_void_p * 3).from_address(sig.argv.value)
    assert Pair.from_buffer_copy(ctypes.string_at(pointers[0], 16)).b == 4.0
    assert ctypes.string_at(pointers[1], 8) == bytes(8)
    with pytest.raises(TypeError):
        sig.pack(Pair(3, 4.0), None, 9)  # other types: the launch rebuilds the slots
    for args, sizes in [
        ((1.5,), (16,)),
        ((ctypes.c_int(1),), (8,)),
        ((None,), (4,)),
        ((b"abc",), (4,)),
        (("text",), (8,)),
        ((1,), (12,)),
    ]:
        with pytest.raises(TypeError):
            Signature(args, sizes)
    with pytest.raises(TypeError, match="ambiguous"):
        Signature((1.5,), None)  # sizes unknown: a float could be 4 or 8 bytes


def test_dims_and_streams():
    assert dims(5, "grid") == (5, 1, 1)
    assert dims((2, 3), "grid") == (2, 3, 1)
    with pytest.raises(ValueError):
        dims((1, 1, 1, 1), "grid")
    with pytest.raises(ValueError):
        dims(-1, "grid")
    with pytest.raises(TypeError):
        dims(1.5, "grid")

    class Protocol:
        def __cuda_stream__(self):
            return (0, 42)

    class AsInt:
        def __int__(self):
            return 7

    assert [stream_handle(s) for s in (None, 3, ctypes.c_void_p(9), Protocol(), AsInt())] == [
        0,
        3,
        9,
        42,
        7,
    ]
    with pytest.raises(TypeError):
        stream_handle("default")


def test_occupancy_ports_check_what_the_raw_calls_take():
    # The ports hand `func` and `flags` to raw calls, where ctypes would pass memory as
    # the kernel and mask an integer (issue 20's fuzz grid): refused before any call.
    from cudart import occupancy

    grid, block = ctypes.c_int(), ctypes.c_int()
    for func in (b"x", bytearray(8), ctypes.c_int(1)):
        with pytest.raises(TypeError, match="'func' must be a device function"):
            occupancy.cudaOccupancyMaxPotentialBlockSize(grid, block, func)
    with pytest.raises(OverflowError, match="'flags'"):
        occupancy.cudaOccupancyMaxPotentialBlockSizeWithFlags(grid, block, 0x10000, 0, 0, 1 << 70)
    with pytest.raises(OverflowError, match="'blockSizeLimit'"):
        occupancy.max_potential_block_size(0x10000, 0, 1 << 31)
