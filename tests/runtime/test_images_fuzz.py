"""Malformed kernel images: every one is parsed or refused with ImageError, in time
linear in its size.

The seeds are the committed images of tests/kernels (nvcc 13.0: fatbins with plain,
LZ4 and zstd entries, cubins, PTX). A seeded fuzzer mutates them - bytes changed,
truncated, inserted, and the counts, sizes and offsets the formats state (fatbin and
entry headers, ELF section headers and symbols) set to extreme values - and the
crafted cases below are the worst inputs known for each part of the parser. The
parser before this test raised struct.error/IndexError/ValueError for 14% of such
cases, took 8-10 s on a 40 KB LZ4 fatbin and 113 s on a 40 KB one expanding to runs
of PTX modifiers; a parser linear in the image size takes milliseconds for each.
"""

from __future__ import annotations

import importlib
import random
import struct
import time
from pathlib import Path

import pytest

from cudart import _convert
from cudart.kernels._images import (
    FATBIN_MAGIC,
    ImageError,
    ImageInfo,
    fatbin_entries,
    inspect_image,
    lz4_block_decompress,
    read_image,
)

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
SEEDS = (
    "kernels.fatbin",
    "kernels_lz4.fatbin",
    "kernels_plain.fatbin",
    "kernels_zstd.fatbin",
    "kernels_lz4_sass.fatbin",
    "kernels.cubin",
    "kernels.ptx",
    "cxx_kernels.fatbin",
    "cxx_kernels.cubin",
    "cxx_kernels.ptx",
    "occupancy.cubin",
    "occupancy.ptx",
)
CASES = 24_000
# Far above what a linear parser needs for these sizes (milliseconds), far below what
# the quadratic paths took (seconds).
PER_CASE_SECONDS = 0.25
EXTREMES = (0, 1, 0x7F, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 1 << 32, 1 << 63, (1 << 64) - 1)
PTX_SNIPPETS = (
    b"{",
    b"}",
    b".extern ",
    b".visible .visible .visible ",
    b"/*",
    b"[99999999999999999999999]",
    b"[" + b"9" * 5000 + b"]",
    b".global .u32 g[4][",
    b".entry ",
    b"\xff\xfe",
)


def _fields(data: bytes, base: int = 0) -> list[tuple[int, int]]:
    """(offset, width) of each count, size and offset the image states: what a hostile
    image would inflate."""
    out: list[tuple[int, int]] = []
    if data[:4] == b"\x7fELF":
        out += [(0x28, 8), (0x3A, 2), (0x3C, 2), (0x3E, 2)]
        shoff = struct.unpack_from("<Q", data, 0x28)[0]
        shnum = struct.unpack_from("<H", data, 0x3C)[0]
        for k in range(shnum):
            sh = shoff + 64 * k
            out += [(sh, 4), (sh + 4, 4), (sh + 24, 8), (sh + 32, 8), (sh + 40, 4)]
            sh_type, sh_offset, sh_size = (
                struct.unpack_from("<I", data, sh + 4)[0],
                *struct.unpack_from("<QQ", data, sh + 24),
            )
            if sh_type == 2:  # the symbols' names and sections
                for pos in range(sh_offset, sh_offset + sh_size, 24):
                    out += [(pos, 4), (pos + 6, 2)]
    elif struct.unpack_from("<I", data)[0] == FATBIN_MAGIC:
        out += [(6, 2), (8, 8)]
        offset = struct.unpack_from("<H", data, 6)[0]
        for _kind, flags, payload, _size in fatbin_entries(data):
            out += [(offset + 4, 4), (offset + 8, 8), (offset + 16, 4), (offset + 40, 8)]
            out += [(offset + 56, 8)]
            header = struct.unpack_from("<I", data, offset + 4)[0]
            if payload[:4] == b"\x7fELF" and not flags & 0xA000:
                out += _fields(payload, offset + header)
            offset += header + struct.unpack_from("<Q", data, offset + 8)[0]
    return [(base + o, w) for o, w in out]


def _mutate(rng: random.Random, seed: bytes, fields: list[tuple[int, int]]) -> bytes:
    data = bytearray(seed)
    op = rng.randrange(6)
    if op == 0 and fields:  # a stated count, size or offset set to an extreme
        for _ in range(rng.randint(1, 3)):
            offset, width = rng.choice(fields)
            value = rng.choice(EXTREMES) & ((1 << 8 * width) - 1)
            data[offset : offset + width] = value.to_bytes(width, "little")
    elif op == 1:  # bytes changed
        for _ in range(rng.randint(1, 16)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif op == 2:  # truncated
        del data[rng.randrange(len(data)) :]
    elif op == 3:  # an extreme value anywhere
        width = rng.choice((2, 4, 8))
        offset = rng.randrange(len(data) - 8) & ~(width - 1)
        data[offset : offset + width] = (rng.choice(EXTREMES) & ((1 << 8 * width) - 1)).to_bytes(
            width, "little"
        )
    elif op == 4:  # bytes inserted (PTX keywords and brackets for the text parser)
        at = rng.randrange(len(data))
        if rng.random() < 0.5:
            data[at:at] = rng.choice(PTX_SNIPPETS) * rng.randint(1, 200)
        else:
            data[at:at] = rng.randbytes(rng.randint(1, 64))
    else:  # a slice repeated: sections, entries and declarations stated twice
        start = rng.randrange(len(data))
        piece = data[start : start + rng.randint(1, 4096)]
        at = rng.randrange(len(data))
        data[at:at] = piece * rng.randint(1, 4)
    return bytes(data)


def test_fuzzed_images_parse_or_raise_image_error_quickly():
    seeds = [(KERNELS / name).read_bytes() for name in SEEDS]
    fields = [_fields(seed) for seed in seeds]
    assert all(fields[k] for k in range(len(SEEDS)) if not SEEDS[k].endswith(".ptx"))
    rng = random.Random(20261130)
    outcomes = {"parsed": 0, "refused": 0}
    escaped: list[str] = []
    slowest = (0.0, -1)
    began = time.perf_counter()
    for case in range(CASES):
        k = rng.randrange(len(seeds))
        data = _mutate(rng, seeds[k], fields[k])
        start = time.perf_counter()
        try:
            info = inspect_image(data)
        except ImageError:
            outcomes["refused"] += 1
        except Exception as exc:  # noqa: BLE001 - any other exception is the failure
            if len(escaped) < 20:
                escaped.append(f"case {case} ({SEEDS[k]}): {type(exc).__name__}: {exc}")
            else:
                escaped.append("...")
        else:
            assert isinstance(info, ImageInfo)
            outcomes["parsed"] += 1
        elapsed = time.perf_counter() - start
        if elapsed >= PER_CASE_SECONDS:  # a pause of the machine, or the parser's?
            elapsed = _fastest_of_three(data)
        slowest = max(slowest, (elapsed, case))
    total = time.perf_counter() - began
    assert not escaped, "\n".join(escaped)
    # Both outcomes are common: the mutations reach the checks, and leave images readable.
    assert outcomes["parsed"] > CASES // 10 and outcomes["refused"] > CASES // 10, outcomes
    assert slowest[0] < PER_CASE_SECONDS, f"case {slowest[1]} took {slowest[0]:.3f} s"
    assert total < 60, f"{CASES} cases took {total:.1f} s"


def _fastest_of_three(data: bytes) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        try:
            inspect_image(data)
        except ImageError:
            pass
        best = min(best, time.perf_counter() - start)
    return best


def _fatbin(*entries: bytes) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, len(body)) + body


def _entry(kind: int, payload: bytes, flags: int = 0x11, uncompressed: int = 0) -> bytes:
    compressed = len(payload) if flags & 0x2000 else 0
    header = struct.pack("<HHIQI", kind, 257, 64, len(payload), compressed) + bytes(20)
    header += struct.pack("<Q", flags) + bytes(8) + struct.pack("<Q", uncompressed)
    return header + payload


def _lz4_length(n: int) -> bytes:
    out = b""
    n -= 15
    while n >= 255:
        out += b"\xff"
        n -= 255
    return out + bytes([n])


def _lz4_repeat(literal: bytes, period: int, total: int) -> bytes:
    """An LZ4 block: `literal`, then its last `period` bytes repeated up to `total`."""
    match = total - len(literal) - 4
    block = bytes([(min(len(literal), 15) << 4) | min(match, 15)])
    block += (_lz4_length(len(literal)) if len(literal) >= 15 else b"") + literal
    return block + struct.pack("<H", period) + (_lz4_length(match) if match >= 15 else b"")


PTX_HEAD = b".version 8.0\n.target sm_90\n"
KB40 = 40 * 1024


def _lz4_bomb(uncompressed: int = 0) -> bytes:
    # One byte, then a match at distance 1 whose length is all 255s: LZ4's densest
    # encoding, 10 MB from 40 KB (the 4.3 s case).
    block = bytes([0x1F]) + b"a" + bytes([1, 0]) + b"\xff" * (KB40 - 100) + b"\x00"
    return _fatbin(_entry(1, block, 0x2011, uncompressed))


def _lz4_at_the_limit(unit: bytes) -> bytes:
    # As much adversarial PTX as an LZ4 entry of 40 KB may expand to and still be read.
    size = 8 * KB40
    block = _lz4_repeat(PTX_HEAD + unit, len(unit), size)
    payload = block + bytes(KB40 - len(block))
    return _fatbin(_entry(1, payload, 0x2011, uncompressed=size))


def _elf(symtabs: int, symbols: int, name_run: int) -> bytes:
    """A cubin whose symbol tables all cover the same symbols, whose names all start
    in one run of `name_run` bytes without a NUL."""
    strtab = b"\0" + b"k" * name_run + b"\0"
    syms = b"".join(
        struct.pack("<IBBHQQ", 1 + i % name_run, 0x12, 0x10, 1, 0, 0) for i in range(symbols)
    )
    strtab_at, syms_at = 64, 64 + len(strtab)
    sections_at = syms_at + len(syms)
    sections = struct.pack("<IIQQQQIIQQ", 0, 3, 0, 0, strtab_at, len(strtab), 0, 0, 1, 0)
    sections += symtabs * struct.pack("<IIQQQQIIQQ", 0, 2, 0, 0, syms_at, len(syms), 0, 0, 8, 24)
    header = bytearray(b"\x7fELF\x02\x01" + bytes(58))
    struct.pack_into("<Q", header, 0x28, sections_at)
    struct.pack_into("<HHH", header, 0x3A, 64, symtabs + 1, 0)
    return bytes(header) + strtab + syms + sections


WORST = {
    "lz4 bomb": _lz4_bomb,
    "lz4 bomb stating 2**62 bytes": lambda: _lz4_bomb(uncompressed=1 << 62),
    "lz4 at the limit: declarations": lambda: _lz4_at_the_limit(b".const .u32 a;"),
    "lz4 at the limit: arrays": lambda: _lz4_at_the_limit(b".global .v4 .u32 x[1][2][3];"),
    "lz4 at the limit: kernels": lambda: _lz4_at_the_limit(b".entry k(){}"),
    "lz4 at the limit: braces": lambda: _lz4_at_the_limit(b"{"),
    "lz4 at the limit: modifiers": lambda: _lz4_at_the_limit(b".visible "),
    "ptx modifier run": lambda: PTX_HEAD + b".visible " * (KB40 // 9),
    "ptx unterminated comments": lambda: PTX_HEAD + b"/*" * (KB40 // 2),
    "ptx open brackets": lambda: PTX_HEAD + b".global .u32 x" + b"[ " * (KB40 // 2),
    "ptx open bracket, spaces": lambda: PTX_HEAD + b".global .u32 x[" + b" " * KB40,
    "ptx entries with open parameter lists": lambda: PTX_HEAD
    + b"".join(b".entry k%d(" % i for i in range(KB40 // 12)),
    "ptx entries without lists": lambda: PTX_HEAD
    + b"".join(b".entry k%d " % i for i in range(KB40 // 12)),
    "ptx a long parameter list": lambda: PTX_HEAD
    + b".entry k("
    + b".param .align 8 .b8 p[16]," * (KB40 // 27)
    + b".param .u32 n){}",
    "elf: 300 symbol tables over the same symbols": lambda: _elf(300, 1000, 8),
    "elf: overlapping names": lambda: _elf(1, 1500, 4000),
}


@pytest.mark.parametrize("name", sorted(WORST))
def test_crafted_worst_cases_are_fast(name):
    data = WORST[name]()
    assert len(data) <= 48 * 1024
    elapsed = _fastest_of_three(data)
    assert elapsed < PER_CASE_SECONDS, f"{name}: {elapsed:.3f} s for {len(data)} bytes"


def test_lz4_bomb_is_refused_not_expanded():
    with pytest.raises(ImageError, match="decodes past"):
        inspect_image(_lz4_bomb())
    info = inspect_image(_lz4_bomb(uncompressed=1 << 62))
    assert info.functions is None and "more than the 8 times" in info.note


def test_lz4_compressed_cubin_entry_is_read():
    """nvcc -Xfatbin -compress-all: the SASS entry is LZ4 too, and the only entry."""
    data = (KERNELS / "kernels_lz4_sass.fatbin").read_bytes()
    [(kind, flags, _payload, _size)] = list(fatbin_entries(data))
    assert kind == 2 and flags & 0x2000
    reference = inspect_image((KERNELS / "kernels.cubin").read_bytes())
    info = inspect_image(data)
    assert (info.functions, info.variables) == (reference.functions, reference.variables)
    assert len(info.functions) == 7


def test_lz4_within_the_limit_is_read():
    info = inspect_image(_lz4_at_the_limit(b".entry k(){}"))
    assert info.functions and set(info.functions) == {"k"}


def test_lz4_decoder_bounds():
    # The declared size is a ceiling, and LZ4 cannot state more than 255 times its input.
    block = _lz4_repeat(b"ab", 2, 100)
    assert lz4_block_decompress(block, 100) == b"ab" * 50
    with pytest.raises(ImageError, match="decodes past"):
        lz4_block_decompress(block, 0, limit=50)
    with pytest.raises(ImageError, match="more than"):
        lz4_block_decompress(block, 255 * len(block) + 65)
    with pytest.raises(ImageError, match="truncated"):
        lz4_block_decompress(bytes([0xF0]), 0)  # a literal length that never ends
    with pytest.raises(ImageError, match="truncated"):
        lz4_block_decompress(bytes([0x50]) + b"ab", 0)  # literals past the end


@pytest.mark.parametrize(
    "name, edit, match",
    [
        ("kernels_plain.fatbin", lambda d: d[:-1], "malformed fatbin"),
        ("kernels_plain.fatbin", lambda d: d[:100], "malformed fatbin"),
        ("kernels_plain.fatbin", lambda d: d[:10], "not a kernel image"),
        ("kernels_plain.fatbin", lambda d: _put(d, 16 + 4, 4, 8), "does not fit"),
        ("kernels_plain.fatbin", lambda d: _put(d, 16 + 8, 8, 1 << 40), "does not fit"),
        ("kernels_lz4.fatbin", lambda d: _put(d, 16 + 16, 4, 1 << 20), "compressed in"),
        ("kernels.cubin", lambda d: d[:40], "truncated ELF"),
        ("kernels.cubin", lambda d: _put(d, 0x3C, 2, 0xFFFF), "section headers"),
        ("kernels.cubin", lambda d: _put(d, 0x3E, 2, 0xFFFF), "section headers"),
        ("kernels.ptx", lambda d: d + b"\n.global .u8 big[99999999999999999999];", "address"),
    ],
)
def test_malformed_images_name_the_fault(name, edit, match):
    data = edit((KERNELS / name).read_bytes())
    with pytest.raises(ImageError, match=match):
        inspect_image(data)


def _put(data: bytes, offset: int, width: int, value: int) -> bytes:
    out = bytearray(data)
    out[offset : offset + width] = value.to_bytes(width, "little")
    return bytes(out)


def test_extern_declarations_are_not_storage():
    ptx = (
        PTX_HEAD + b".extern .global .align 4 .u32 ext;\n.visible .weak .global .u32 mine;\n"
        b".visible .entry k()\n{\n.global .u32 inner;\n ld.global.u32 %r1, [mine];\n}\n"
        b".extern .entry far();\n.const .u8 table[2][3];\n.global .u8 open[];\n"
    )
    info = inspect_image(ptx)
    assert info.functions == ["k"]
    assert info.variables == {"mine": (4, False), "table": (6, True)}


def test_loading_refuses_a_fatbin_that_claims_more_than_it_holds():
    """read_image, which load_module calls before either route hands the image to C."""
    data = (KERNELS / "kernels.fatbin").read_bytes()
    assert read_image(data) == ("fatbin", data)
    for bad in (data[:-1], _put(data, 8, 8, len(data)), _put(data, 16 + 8, 8, 1 << 40)):
        with pytest.raises(ImageError, match="malformed fatbin"):
            read_image(bad)


def test_checked_library_load_checks_the_image_before_c():
    """cudaLibraryLoadData's `code` is parsed by C with no length: the checked layer
    refuses what read_image refuses (issue 20: a 1-byte buffer reached C)."""
    checked = importlib.import_module("cudart.checked_13050")
    fatbin = (KERNELS / "kernels.fatbin").read_bytes()
    cubin = (KERNELS / "kernels.cubin").read_bytes()
    for bad, match in (
        (b"x", "not a kernel image"),
        (bytearray(b"\x7fELF"), "truncated ELF"),
        (cubin[:100], "malformed ELF"),
        (memoryview(fatbin)[:-1], "malformed fatbin"),
    ):
        with pytest.raises(ImageError, match=match):
            checked.cudaLibraryLoadData(bad, None, None, 0, None, None, 0)
    # What C gets: the image itself, or PTX NUL-terminated where it was not.
    assert _convert.image(fatbin, "code") is fatbin
    ptx = (KERNELS / "kernels.ptx").read_bytes().rstrip(b"\0")
    assert _convert.image(ptx, "code") == ptx + b"\0"
    assert _convert.image(0x10000, "code") == 0x10000  # an address: the caller's promise


def test_checked_library_load_from_file_checks_the_file_before_c(tmp_path):
    """cudaLibraryLoadFromFile's runtime trusts the sizes the file's header states."""
    checked = importlib.import_module("cudart.checked_13050")
    fatbin = (KERNELS / "kernels.fatbin").read_bytes()
    bad = tmp_path / "bad.fatbin"
    bad.write_bytes(fatbin[:-1])
    with pytest.raises(ImageError, match="malformed fatbin"):
        checked.cudaLibraryLoadFromFile(str(bad), None, None, 0, None, None, 0)
    # A readable image, or a file C will not find (its error to report): the name.
    ptx = str(KERNELS / "kernels.ptx")
    assert _convert.image_file(ptx, "fileName") == ptx.encode()
    assert _convert.image_file(str(tmp_path / "absent"), "f") == str(tmp_path / "absent").encode()
