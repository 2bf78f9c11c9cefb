"""Kernel images (fatbin, cubin, PTX): what kind an image is, and the names it defines.

The registration route must name every kernel and global, with the globals' sizes,
before registration ends (see cudart.kernels._registration), so the image is read here for
them: the ELF symbol table of a cubin, the declarations of PTX, or either of those
inside a fatbin. Fatbin entries compressed with LZ4 (nvcc's `--compress-mode=speed`,
and older nvcc's default) are decompressed here; zstd-compressed ones (nvcc 13's
`balance`/`size`) cannot be read with the standard library, and are skipped in favour
of another entry, as are LZ4 entries stated larger than real ones get. nvcc 13's
default leaves the SASS (ELF) entry uncompressed, so its fatbins are readable.

Every size, count and offset an image states is checked against its length before it
is used, so reading is linear in the image's size and a malformed image raises
ImageError, never struct.error or IndexError (tests/runtime/test_images_fuzz.py).

Standard library only, but for one optional use of the system's libzstd: the kernels'
parameter types from a zstd-compressed PTX entry (`ImageInfo.params`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import struct
from dataclasses import dataclass, field
from typing import Any

FATBIN_MAGIC = 0xBA55ED50
FATBIN_WRAPPER_MAGIC = 0x466243B1
ELF_MAGIC = b"\x7fELF"

_ENTRY_PTX = 1
_ENTRY_ELF = 2
_FLAG_LZ4 = 0x2000
_FLAG_ZSTD = 0x8000

# st_other bit the CUDA toolchain sets on kernel entry points (not on __device__ functions).
_STO_CUDA_ENTRY = 0x10
_STT_OBJECT = 1
_STT_FUNC = 2
_SHT_SYMTAB = 2


class ImageError(ValueError):
    """The bytes are not a kernel image this module can use."""


@dataclass
class ImageInfo:
    kind: str  # "fatbin", "cubin" or "ptx"
    # None where the image could not be read (every fatbin entry zstd-compressed).
    functions: list[str] | None = None
    # name -> (size in bytes, is __constant__)
    variables: dict[str, tuple[int, bool]] = field(default_factory=dict)
    note: str = ""  # why functions is None
    # Kernel name -> each parameter's PTX type and size (`("u32", 4)`, `("b8", 16)` for
    # an aligned byte array, `("ptr", 8)` for `.u64 .ptr`); None where the image holds
    # no PTX this module can read (a cubin; a fatbin whose PTX is zstd-compressed).
    params: dict[str, tuple[tuple[str, int], ...]] | None = None


def image_kind(data: bytes) -> str:
    """ "fatbin", "cubin" or "ptx", from the leading bytes; ImageError otherwise."""
    if len(data) >= 16 and struct.unpack_from("<I", data)[0] == FATBIN_MAGIC:
        return "fatbin"
    if data[:4] == ELF_MAGIC:
        return "cubin"
    head = bytes(data[:4096])
    if b".version" in head and b".target" in head:
        try:
            head.decode("ascii")
        except UnicodeDecodeError:
            pass
        else:
            return "ptx"
    raise ImageError(
        "not a kernel image: expected a fatbin (magic 0xba55ed50), a cubin (ELF) or PTX "
        f"text (.version/.target); got {bytes(data[:8])!r}..."
    )


def inspect_image(data: bytes) -> ImageInfo:
    """The kind of `data` and the kernels and globals it defines; ImageError for
    anything malformed. Linear in len(data): every count and offset the image states is
    checked against its length before it is used."""
    if not isinstance(data, (bytes, bytearray)):
        data = bytes(data)
    kind = image_kind(data)
    if kind == "cubin":
        functions, variables = _read_elf(data)
        return ImageInfo(kind, functions, variables)
    if kind == "ptx":
        functions, variables, params = _read_ptx(data)
        return ImageInfo(kind, functions, variables, params=params)
    skipped: list[str] = []
    found: ImageInfo | None = None
    for entry_kind, payload in _readable_entries(data, skipped):
        # The names from the first entry read; the parameter types from a PTX entry,
        # which may come after a cubin one.
        if entry_kind == _ENTRY_PTX:
            functions, variables, params = _read_ptx(payload)
            if found is None:
                return ImageInfo(kind, functions, variables, params=params)
            found.params = params
            return found
        if found is None and payload[:4] == ELF_MAGIC:
            functions, variables = _read_elf(payload)
            found = ImageInfo(kind, functions, variables)
    if found is not None:
        found.params = _zstd_ptx_params(data)
        return found
    if skipped:
        why = "its cubin and PTX entries are " + "; ".join(dict.fromkeys(skipped))
    else:
        why = "it holds no cubin or PTX entry"
    note = f"the fatbin cannot be read for kernel names: {why}"
    return ImageInfo(kind, None, {}, note=note, params=_zstd_ptx_params(data))


def _zstd_ptx_params(data: bytes):
    """The parameter types of a fatbin's zstd-compressed PTX entry (nvcc 13's default
    compresses PTX so), read with the system's libzstd where it has one; None
    otherwise. Only the types: the names stay what the standard library reads, so
    which images load by registration does not depend on the machine."""
    decompress = _libzstd()
    if decompress is None:
        return None
    for entry_kind, flags, payload, size in fatbin_entries(data):
        if entry_kind != _ENTRY_PTX or not flags & _FLAG_ZSTD:
            continue
        if not 0 < size <= _ZSTD_PLAUSIBLE_RATIO * len(payload) + _LZ4_PLAUSIBLE_SLACK:
            continue
        out = ctypes.create_string_buffer(size)
        got = decompress(out, size, payload, len(payload))
        if got != size:  # an error code, or not the size the entry states
            continue
        return _read_ptx(out.raw)[2]
    return None


# zstd shrinks the test kernels' PTX 3.6 times (nvcc 13.0); a stated size beyond this
# many times the payload is not decoded. libzstd never writes past the buffer given.
_ZSTD_PLAUSIBLE_RATIO = 32
_zstd: Any = None


def _libzstd():
    """ZSTD_decompress of the system's libzstd, or None where it has none.

    Threads: the answer is published once fully made (the function with its argtypes,
    or False), never a placeholder first: a thread that saw a placeholder while another
    was still looking (find_library runs ldconfig) would read "no libzstd" and skip the
    image's compressed entries. Threads that race here each look it up; all find the
    same."""
    global _zstd
    if _zstd is None:
        _zstd = _find_zstd()
    return _zstd or None


def _find_zstd():
    name = ctypes.util.find_library("zstd")
    try:
        fn = ctypes.CDLL(name or "libzstd.so.1").ZSTD_decompress
    except (OSError, AttributeError):
        return False
    fn.restype = ctypes.c_size_t
    fn.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t)
    return fn


def _readable_entries(data: bytes, skipped: list[str]):
    """(kind, payload) of each cubin and PTX entry of a fatbin, decompressed; what
    cannot be read is skipped, and why appended to `skipped`."""
    for entry_kind, flags, payload, size in fatbin_entries(data):
        if entry_kind not in (_ENTRY_ELF, _ENTRY_PTX):
            continue
        if flags & _FLAG_ZSTD:
            skipped.append("zstd-compressed (Python's standard library has no zstd)")
            continue
        if flags & _FLAG_LZ4:
            limit = _LZ4_PLAUSIBLE_RATIO * len(payload) + _LZ4_PLAUSIBLE_SLACK
            if size > limit:
                skipped.append(
                    f"an LZ4 entry of {len(payload)} bytes that states {size} bytes "
                    f"uncompressed, more than the {_LZ4_PLAUSIBLE_RATIO} times read here"
                )
                continue
            payload = lz4_block_decompress(payload, size, limit=limit)
        yield entry_kind, payload


_FATBIN_HEADER = struct.Struct("<IHHQ")
# An entry header: kind, version, header size, payload size (padded), compressed size;
# the flags at 40 and, in headers of 64 bytes or more, the uncompressed size at 56.
_ENTRY_HEAD = struct.Struct("<HHIQI")
_ENTRY_MIN = 48


def fatbin_entries(data: bytes):
    """(kind, flags, payload, uncompressed size) of each entry of a fatbin container."""
    for kind, flags, start, stop, uncompressed in _fatbin_walk(data):
        yield kind, flags, bytes(data[start:stop]), uncompressed


def check_fatbin(data: bytes) -> None:
    """ImageError unless the fatbin container and all its entries lie inside `data`:
    the runtime reads the sizes the header states, so a fatbin that claims more than
    it holds is refused before C would read past its end."""
    for _ in _fatbin_walk(data):
        pass


def _fatbin_walk(data: bytes):
    """(kind, flags, payload start, payload end, uncompressed size) of each entry,
    every one checked to lie inside the container and the container inside `data`."""
    if len(data) < _FATBIN_HEADER.size:
        raise ImageError(f"truncated fatbin: {len(data)} bytes, its header alone is 16")
    magic, _version, header_size, body_size = _FATBIN_HEADER.unpack_from(data, 0)
    if magic != FATBIN_MAGIC:
        raise ImageError("not a fatbin")
    end = header_size + body_size
    if header_size < _FATBIN_HEADER.size or end > len(data):
        raise ImageError(
            f"malformed fatbin: header of {header_size} bytes and body of {body_size} "
            f"bytes, in {len(data)} bytes"
        )
    offset = header_size
    while offset < end:
        if offset + _ENTRY_MIN > end:
            raise ImageError(f"malformed fatbin: a truncated entry header at offset {offset}")
        kind, _ver, entry_header, padded, compressed_size = _ENTRY_HEAD.unpack_from(data, offset)
        # Each entry advances by at least its header, and every payload lies within
        # the body: the walk, and the copies of payloads, are linear in the image size.
        start = offset + entry_header
        if entry_header < _ENTRY_MIN or start + padded > end:
            raise ImageError(
                f"malformed fatbin: the entry at offset {offset} (header {entry_header} bytes, "
                f"payload {padded} bytes) does not fit in the {end}-byte container"
            )
        flags = struct.unpack_from("<Q", data, offset + 40)[0]
        uncompressed = struct.unpack_from("<Q", data, offset + 56)[0] if entry_header >= 64 else 0
        if flags & (_FLAG_LZ4 | _FLAG_ZSTD):
            if compressed_size > padded:
                raise ImageError(
                    f"malformed fatbin: the entry at offset {offset} is {compressed_size} bytes "
                    f"compressed in a {padded}-byte payload"
                )
            yield kind, flags, start, start + compressed_size, uncompressed
        else:
            yield kind, flags, start, start + padded, uncompressed
        offset = start + padded


# An LZ4 sequence's lengths grow by at most 255 per input byte: no block of n bytes
# decodes to more than 255 * n (+ the 4-byte minimum match and a literal) bytes.
_LZ4_MAX_RATIO = 255
# What inspect_image decodes at most, per compressed byte. nvcc 13.0's LZ4 shrinks the
# test kernels' PTX 2.3-3.8 times and their SASS 3.0-5.4 times (-Xfatbin -compress-all);
# LZ4 itself allows 255, which lets 40 KB expand to 10 MB that take half a second to
# read. An entry stated larger is skipped (another entry of the fatbin is read, or the
# caller names the kernels, as for zstd); an unstated size is capped at the same.
_LZ4_PLAUSIBLE_RATIO = 8
_LZ4_PLAUSIBLE_SLACK = 4096


def _lz4_length(src: bytes, i: int, length: int) -> tuple[int, int]:
    """An LZ4 length whose 4-bit nibble is 15 continues in bytes until one below 255."""
    if length == 15:
        n = len(src)
        while True:
            if i >= n:
                raise ImageError("truncated LZ4 data in fatbin")
            b = src[i]
            i += 1
            length += b
            if b != 255:
                break
    return length, i


def lz4_block_decompress(src: bytes, size: int, limit: int | None = None) -> bytes:
    """Decode one LZ4 block (the format nvcc uses for `--compress-mode=speed`) of
    `size` bytes uncompressed (0: not stated). Linear in len(src): the output stops at
    the stated size, and never exceeds `limit` nor what LZ4 can produce from len(src)
    bytes; a block that would is ImageError."""
    n = len(src)
    bound = _LZ4_MAX_RATIO * n + 64
    if limit is not None:
        bound = min(bound, limit)
    if size > bound:
        raise ImageError(
            f"corrupt LZ4 data in fatbin: {size} bytes stated uncompressed, more than the "
            f"{bound} read from {n} bytes of LZ4"
        )
    end = size or bound
    out = bytearray()
    i = 0
    while i < n:
        token = src[i]
        i += 1
        length, i = _lz4_length(src, i, token >> 4)
        if i + length > n:
            raise ImageError("truncated LZ4 data in fatbin")
        length = _room(length, len(out), end, size)
        out += src[i : i + length]
        i += length
        if i >= n or len(out) >= end:
            break
        if i + 2 > n:
            raise ImageError("truncated LZ4 data in fatbin")
        distance = src[i] | (src[i + 1] << 8)
        i += 2
        length, i = _lz4_length(src, i, token & 15)
        start = len(out) - distance
        if distance == 0 or start < 0:
            raise ImageError("corrupt LZ4 data in fatbin")
        length = _room(length + 4, len(out), end, size)
        if distance >= length:
            out += out[start : start + length]
        else:  # the match overlaps what it produces: repeat the period, in one copy
            period = out[start:]
            out += (period * (length // distance + 1))[:length]
        if len(out) >= end:
            break
    return bytes(out)


def _room(length: int, produced: int, end: int, stated: int) -> int:
    """How much of `length` more bytes fits: a stream that goes on past its stated
    size is cut there (as this reader always did), one past an unstated limit is
    corrupt."""
    if produced + length <= end:
        return length
    if stated:
        return end - produced
    raise ImageError(f"corrupt LZ4 data in fatbin: it decodes past {end} bytes")


_ELF_HEADER_SIZE = 64
_SECTION = struct.Struct("<IIQQQQIIQQ")
_SYMBOL = struct.Struct("<IBBHQQ")
# Names may share bytes (ELF lets one name be the tail of another), but never more
# than this many times the image's size in all: a limit no compiler's output nears,
# which keeps reading crafted names that overlap over and over linear.
_NAME_BYTES_PER_IMAGE_BYTE = 16


def _read_elf(data: bytes):
    n = len(data)
    if n < _ELF_HEADER_SIZE:
        raise ImageError(f"truncated ELF image: {n} bytes, its header alone is 64")
    if data[4] != 2 or data[5] != 1:
        raise ImageError("only 64-bit little-endian cubins are supported")
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if shnum == 0:
        return [], {}
    if shentsize < _SECTION.size or shoff + shnum * shentsize > n or shstrndx >= shnum:
        raise ImageError(
            f"malformed ELF image: {shnum} section headers of {shentsize} bytes at {shoff} "
            f"(names in section {shstrndx}) do not fit in {n} bytes"
        )
    sections = [_SECTION.unpack_from(data, shoff + k * shentsize) for k in range(shnum)]
    names_cache: dict[int, str] = {}
    budget = [_NAME_BYTES_PER_IMAGE_BYTE * n]

    def cstr(table: int, index: int) -> str:
        """The NUL-terminated name at `index` in string table section `table`."""
        if table >= shnum:
            raise ImageError(f"malformed ELF image: string table {table} of {shnum} sections")
        table_offset, table_size = sections[table][4], sections[table][5]
        if index >= table_size or table_offset + table_size > n:
            raise ImageError(f"malformed ELF image: name {index} outside its string table")
        start = table_offset + index
        name = names_cache.get(start)
        if name is None:
            stop = data.find(b"\0", start, table_offset + table_size)
            if stop < 0:
                raise ImageError("malformed ELF image: a name runs past its string table")
            budget[0] -= stop - start
            if budget[0] < 0:
                raise ImageError("malformed ELF image: its names overlap beyond any compiler's")
            name = names_cache[start] = data[start:stop].decode("utf-8", "replace")
        return name

    names = [cstr(shstrndx, s[0]) for s in sections]
    functions: dict[str, None] = {}  # ordered, once each
    variables: dict[str, tuple[int, bool]] = {}
    symbol_bytes = 0
    for sec in sections:
        if sec[1] != _SHT_SYMTAB:
            continue
        sym_offset, sym_size, link = sec[4], sec[5], sec[6]
        symbol_bytes += sym_size
        # Symbol tables are sections of the image and do not overlap: together they
        # are no bigger than the image, which bounds the symbols read.
        if sym_offset + sym_size > n or symbol_bytes > n:
            raise ImageError(
                f"malformed ELF image: a symbol table of {sym_size} bytes at {sym_offset} "
                f"does not fit in {n} bytes"
            )
        for pos in range(sym_offset, sym_offset + sym_size - _SYMBOL.size + 1, _SYMBOL.size):
            st_name, st_info, st_other, st_shndx, _value, st_size = _SYMBOL.unpack_from(data, pos)
            kind = st_info & 0xF
            if not st_name or st_shndx == 0 or st_shndx >= len(names):
                continue
            if kind != _STT_FUNC and kind != _STT_OBJECT:
                continue
            name = cstr(link, st_name)
            if name.startswith((".", "$")):
                continue
            section = names[st_shndx]
            if kind == _STT_FUNC and st_other & _STO_CUDA_ENTRY:
                functions[name] = None
            elif kind == _STT_OBJECT:
                # .nv.constant0 holds kernel parameters, .nv.shared* per-block memory:
                # neither is a global a host can reach.
                if section in (".nv.global", ".nv.global.init"):
                    variables[name] = (st_size, False)
                elif section.startswith(".nv.constant") and not section.startswith(".nv.constant0"):
                    variables[name] = (st_size, True)
    return list(functions), variables


_PTX_COMMENT = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)", re.S)
_PTX_MOD = r"(?:visible|extern|weak|common)\s+"
# Every token starts with a '.', which the regex engine looks for at C speed. A run of
# modifiers that starts no declaration is a token of its own, so the scan goes on after
# it instead of re-reading it from each of its members (quadratic in the run's length);
# the dimensions read digits and spaces unambiguously for the same reason. Braces are
# counted between tokens (str.count), not matched one by one.
_PTX_TOKEN = re.compile(
    rf"\.(?:(?P<mods>(?:{_PTX_MOD}\.)*)(?:"
    r"(?P<entry>entry\s+(?P<fname>[A-Za-z_$%][\w$]*))"
    r"|(?P<decl>(?P<space>global|const)\s+"
    r"(?:\.align\s+\d+\s+)?(?:\.v(?P<vec>[248])\s+)?\.(?P<type>[a-z]+\d*(?:x2)?)\s+"
    r"(?P<vname>[A-Za-z_$%][\w$]*)(?P<dims>(?:\s*\[\s*(?:\d+\s*)?\])*))"
    rf")|{_PTX_MOD}(?:\.{_PTX_MOD})*)"
)
_PTX_DIM = re.compile(r"\[\s*(\d*)")
# An entry's parameter list, right after its name: `( .param .u32 n, ... )`. It stops
# at the first parenthesis, so the lists read never overlap (linear in the text).
_PTX_PARAM_LIST = re.compile(r"\s*\(([^()]*)\)")
_PTX_PARAM_OPEN = re.compile(r"\s*\(")
_PTX_PARAM = re.compile(
    r"\.param\s+(?:\.align\s+\d+\s+)?\.(?P<type>[a-z]+\d+)\s+"
    r"(?P<ptr>\.ptr\s+(?:\.(?:global|const|local|shared)\s+)?(?:\.align\s+\d+\s+)?)?"
    r"[A-Za-z_$%][\w$]*(?:\s*\[\s*(?P<count>\d{1,12})\s*\])?\s*(?:,|$)"
)
_PTX_TYPE_BITS = re.compile(r"(\d+)(x2)?$")
# No PTX global is larger than the address space: a bigger size is a malformed image.
_PTX_MAX_SIZE = 1 << 64


def _read_ptx(data: bytes):
    text = _PTX_COMMENT.sub(" ", bytes(data).rstrip(b"\0").decode("utf-8", "replace"))
    functions: list[str] = []
    variables: dict[str, tuple[int, bool]] = {}
    params: dict[str, tuple[tuple[str, int], ...]] = {}
    depth = 0
    counted = 0  # braces are counted up to here
    count = text.count
    seen: set[str] = set()  # a token read once says the same the next time
    for m in _PTX_TOKEN.finditer(text):
        start = m.start()
        depth += count("{", counted, start) - count("}", counted, start)
        counted = start
        if depth != 0:
            continue
        token = m[0]
        if token in seen:
            continue
        seen.add(token)
        mods, fname, space, vec, type_, vname, dims = m.group(
            "mods", "fname", "space", "vec", "type", "vname", "dims"
        )
        if mods is None or "extern" in mods:
            continue  # (no mods: a run of modifiers alone)
        if fname:
            functions.append(fname)
            listed = _ptx_params(text, m.end())
            if listed is not None:
                params[fname] = listed
        elif space:
            bits = _PTX_TYPE_BITS.search(type_)
            if not bits:
                continue
            size = int(bits.group(1)) // 8 * (2 if bits.group(2) else 1) * int(vec or 1)
            if dims:
                for d in _PTX_DIM.findall(dims):
                    if not d:
                        break  # an unsized array is a declaration, not storage
                    # (length first: int() refuses more than 4300 digits with ValueError)
                    if len(d) > 20 or size * int(d) >= _PTX_MAX_SIZE:
                        raise ImageError(
                            f"malformed PTX: {vname!r} is larger than the address space"
                        )
                    size *= int(d)
                else:
                    variables[vname] = (size, space == "const")
                continue
            variables[vname] = (size, space == "const")
    return functions, variables, params


def _ptx_params(text: str, at: int) -> tuple[tuple[str, int], ...] | None:
    """The (type, size) of each parameter of the entry whose name ends at `at`; None
    where the list is not one this reader understands (no types then, not wrong ones)."""
    listed = _PTX_PARAM_LIST.match(text, at)
    if listed is None:
        return None if _PTX_PARAM_OPEN.match(text, at) else ()
    body = listed.group(1).strip()
    if not body:
        return ()
    out = []
    for part in body.split(","):
        m = _PTX_PARAM.fullmatch(part.strip() + ",")
        if m is None:
            return None
        type_, count = m["type"], m["count"]
        bits = _PTX_TYPE_BITS.search(type_)
        if not bits or bits.group(2) or int(bits.group(1)) % 8:
            return None
        size = int(bits.group(1)) // 8 * int(count or 1)
        if m["ptr"]:
            type_ = "ptr"
        elif count is not None and type_ != "b8":
            return None
        out.append((type_, size))
    return tuple(out)


def read_image(image) -> tuple[str, bytes]:
    """(kind, bytes) of an image given as bytes or a path; PTX NUL-terminated, as
    both loading routes read it as a C string."""
    data = _image_bytes(image)
    return image_kind(data), checked_image(data)


def checked_image(data: bytes) -> bytes:
    """`data` if C can parse it as an image without a length: a cubin or a fatbin whose
    stated sizes lie inside it, or PTX (returned NUL-terminated, a copy where it was
    not, as C reads it as a C string); ImageError otherwise."""
    kind = image_kind(data)
    if kind == "fatbin":
        check_fatbin(data)  # C trusts the sizes the header states
    if kind == "cubin":
        _read_elf(data)  # so are an ELF's section and symbol tables
    if kind == "ptx" and not data.endswith(b"\0"):
        return data + b"\0"
    return data


def _image_bytes(image) -> bytes:
    if isinstance(image, (bytes, bytearray, memoryview)):
        return bytes(image)
    if isinstance(image, (str, os.PathLike)):
        with open(image, "rb") as f:
            return f.read()
    raise TypeError(f"image must be bytes or a path, not {type(image).__name__}")
