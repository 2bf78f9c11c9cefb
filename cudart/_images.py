"""Kernel images (fatbin, cubin, PTX): what kind an image is, and the names it defines.

The registration route must name every kernel and global, with the globals' sizes,
before registration ends (see cudart._registration), so the image is read here for
them: the ELF symbol table of a cubin, the declarations of PTX, or either of those
inside a fatbin. Fatbin entries compressed with LZ4 (nvcc's `--compress-mode=speed`,
and older nvcc's default) are decompressed here; zstd-compressed ones (nvcc 13's
`balance`/`size`) cannot be read with the standard library, and are skipped in favour
of another entry. nvcc 13's default leaves the SASS (ELF) entry uncompressed, so its
fatbins are readable.

Standard library only.
"""

from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass, field

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
    kind = image_kind(data)
    if kind == "cubin":
        functions, variables = _read_elf(data)
        return ImageInfo(kind, functions, variables)
    if kind == "ptx":
        functions, variables = _read_ptx(data)
        return ImageInfo(kind, functions, variables)
    skipped = []
    for entry_kind, flags, payload, size in fatbin_entries(data):
        if flags & _FLAG_ZSTD:
            skipped.append("zstd")
            continue
        if flags & _FLAG_LZ4:
            payload = lz4_block_decompress(payload, size)
        if entry_kind == _ENTRY_ELF and payload[:4] == ELF_MAGIC:
            functions, variables = _read_elf(payload)
        elif entry_kind == _ENTRY_PTX:
            functions, variables = _read_ptx(payload)
        else:
            continue
        return ImageInfo(kind, functions, variables)
    why = "every entry is zstd-compressed" if skipped else "it holds no cubin or PTX entry"
    return ImageInfo(kind, None, {}, note=f"the fatbin cannot be read for kernel names: {why}")


def fatbin_entries(data: bytes):
    """(kind, flags, payload, uncompressed size) of each entry of a fatbin container."""
    magic, _version, header_size, body_size = struct.unpack_from("<IHHQ", data, 0)
    if magic != FATBIN_MAGIC:
        raise ImageError("not a fatbin")
    offset = header_size
    end = min(len(data), header_size + body_size)
    while offset + 64 <= end:
        kind, _ver, entry_header, padded = struct.unpack_from("<HHIQ", data, offset)
        compressed_size = struct.unpack_from("<I", data, offset + 16)[0]
        flags = struct.unpack_from("<Q", data, offset + 40)[0]
        uncompressed = struct.unpack_from("<Q", data, offset + 56)[0] if entry_header >= 64 else 0
        start = offset + entry_header
        if flags & (_FLAG_LZ4 | _FLAG_ZSTD):
            payload = bytes(data[start : start + compressed_size])
        else:
            payload = bytes(data[start : start + padded])
        yield kind, flags, payload, uncompressed
        if entry_header == 0:  # a zero header would never advance
            break
        offset = start + padded


def _lz4_length(src: bytes, i: int, length: int) -> tuple[int, int]:
    """An LZ4 length whose 4-bit nibble is 15 continues in bytes until one below 255."""
    if length == 15:
        while True:
            b = src[i]
            i += 1
            length += b
            if b != 255:
                break
    return length, i


def lz4_block_decompress(src: bytes, size: int) -> bytes:
    """Decode one LZ4 block (the format nvcc uses for `--compress-mode=speed`)."""
    out = bytearray()
    i, n = 0, len(src)
    try:
        while i < n:
            token = src[i]
            i += 1
            length, i = _lz4_length(src, i, token >> 4)
            out += src[i : i + length]
            i += length
            if i >= n or (size and len(out) >= size):
                break
            distance = src[i] | (src[i + 1] << 8)
            i += 2
            length, i = _lz4_length(src, i, token & 15)
            length += 4
            start = len(out) - distance
            if distance == 0 or start < 0:
                raise ImageError("corrupt LZ4 data in fatbin")
            if distance >= length:
                out += out[start : start + length]
            else:  # the match overlaps what it produces: repeat the period
                while length > 0:
                    chunk = out[start : start + min(distance, length)]
                    out += chunk
                    length -= len(chunk)
                    start += len(chunk)
    except IndexError:
        raise ImageError("truncated LZ4 data in fatbin") from None
    return bytes(out[:size] if size else out)


def _read_elf(data: bytes):
    if data[4] != 2 or data[5] != 1:
        raise ImageError("only 64-bit little-endian cubins are supported")
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", data, shoff + k * shentsize) for k in range(shnum)
    ]

    def cstr(table_offset: int, index: int) -> str:
        start = table_offset + index
        return data[start : data.index(b"\0", start)].decode("utf-8", "replace")

    shstr_offset = sections[shstrndx][4]
    names = [cstr(shstr_offset, s[0]) for s in sections]
    functions: list[str] = []
    variables: dict[str, tuple[int, bool]] = {}
    for sec in sections:
        if sec[1] != _SHT_SYMTAB:
            continue
        sym_offset, sym_size, link = sec[4], sec[5], sec[6]
        str_offset = sections[link][4]
        for pos in range(sym_offset, sym_offset + sym_size, 24):
            st_name, st_info, st_other, st_shndx, _value, st_size = struct.unpack_from(
                "<IBBHQQ", data, pos
            )
            kind = st_info & 0xF
            if not st_name or st_shndx == 0 or st_shndx >= len(names):
                continue
            name = cstr(str_offset, st_name)
            if name.startswith((".", "$")):
                continue
            section = names[st_shndx]
            if kind == _STT_FUNC and st_other & _STO_CUDA_ENTRY:
                functions.append(name)
            elif kind == _STT_OBJECT:
                # .nv.constant0 holds kernel parameters, .nv.shared* per-block memory:
                # neither is a global a host can reach.
                if section in (".nv.global", ".nv.global.init"):
                    variables[name] = (st_size, False)
                elif section.startswith(".nv.constant") and not section.startswith(".nv.constant0"):
                    variables[name] = (st_size, True)
    return functions, variables


_PTX_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_PTX_TOKEN = re.compile(
    r"(?P<open>\{)|(?P<close>\})"
    r"|(?P<entry>\.entry\s+(?P<fname>[A-Za-z_$%][\w$]*))"
    r"|(?P<decl>(?P<mods>(?:\.(?:visible|extern|weak|common)\s+)*)\.(?P<space>global|const)\s+"
    r"(?:\.align\s+\d+\s+)?(?:\.v(?P<vec>[248])\s+)?\.(?P<type>[a-z]+\d*(?:x2)?)\s+"
    r"(?P<vname>[A-Za-z_$%][\w$]*)(?P<dims>(?:\s*\[\s*\d*\s*\])*))"
)
_PTX_TYPE_BITS = re.compile(r"(\d+)(x2)?$")


def _read_ptx(data: bytes):
    text = _PTX_COMMENT.sub(" ", bytes(data).rstrip(b"\0").decode("utf-8", "replace"))
    functions: list[str] = []
    variables: dict[str, tuple[int, bool]] = {}
    depth = 0
    for m in _PTX_TOKEN.finditer(text):
        if m.group("open"):
            depth += 1
        elif m.group("close"):
            depth -= 1
        elif m.group("entry"):
            if (
                depth == 0
                and ".extern" not in text[max(0, m.start() - 40) : m.start()].split(";")[-1]
            ):
                functions.append(m.group("fname"))
        elif depth == 0 and ".extern" not in m.group("mods"):
            bits = _PTX_TYPE_BITS.search(m.group("type"))
            if not bits:
                continue
            size = int(bits.group(1)) // 8 * (2 if bits.group(2) else 1) * int(m.group("vec") or 1)
            dims = re.findall(r"\[\s*(\d*)\s*\]", m.group("dims"))
            if any(d == "" for d in dims):
                continue  # an unsized array is a declaration, not storage
            for d in dims:
                size *= int(d)
            variables[m.group("vname")] = (size, m.group("space") == "const")
    return functions, variables


def read_image(image) -> tuple[str, bytes]:
    """(kind, bytes) of an image given as bytes or a path; PTX NUL-terminated, as
    both loading routes read it as a C string."""
    data = _image_bytes(image)
    kind = image_kind(data)
    if kind == "ptx" and not data.endswith(b"\0"):
        data += b"\0"
    return kind, data


def _image_bytes(image) -> bytes:
    if isinstance(image, (bytes, bytearray, memoryview)):
        return bytes(image)
    if isinstance(image, (str, os.PathLike)):
        with open(image, "rb") as f:
            return f.read()
    raise TypeError(f"image must be bytes or a path, not {type(image).__name__}")
