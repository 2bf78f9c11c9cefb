"""Reading kernel images, and registering them with the runtime the way nvcc's stubs do.

A program built by nvcc never loads its kernels itself: host stubs that nvcc writes
call the runtime's exported `__cudaRegisterFatBinary`, then `__cudaRegisterFunction`
and `__cudaRegisterVar` once per kernel and global, then `__cudaRegisterFatBinaryEnd`.
From then on the runtime knows each kernel by a host address, and every runtime call
that takes `const void *func` or a symbol accepts it. Registering an image from Python
through the same entry points makes a loaded kernel a runtime function like any
other. Every nvcc-built program linked to the shared libcudart calls these entry
points, so a runtime keeps them, with this ABI, within its major version.

The names must all be registered before `__cudaRegisterFatBinaryEnd`: on 12.x
runtimes a function registered afterwards stays unknown (cudaErrorInvalidDeviceFunction,
measured on 12.2-12.6), and a variable must be registered with its true size (with
size 0, cudaMemcpyToSymbol of the real size fails). So the image is read here for its
kernel names and its globals' names and sizes: the ELF symbol table of a cubin, the
declarations of PTX, or either of those inside a fatbin. Fatbin entries compressed
with LZ4 (nvcc's `--compress-mode=speed`, and older nvcc's default) are decompressed
here; zstd-compressed ones (nvcc 13's `balance`/`size`) cannot be read with the
standard library, and are skipped in favour of another entry. nvcc 13's default
leaves the SASS (ELF) entry uncompressed, so its fatbins are readable.

Standard library only.
"""

from __future__ import annotations

import ctypes
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
    """"fatbin", "cubin" or "ptx", from the leading bytes; ImageError otherwise."""
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
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + k * shentsize) for k in range(shnum)]

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
            st_name, st_info, st_other, st_shndx, _value, st_size = struct.unpack_from("<IBBHQQ", data, pos)
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
            if depth == 0 and ".extern" not in text[max(0, m.start() - 40) : m.start()].split(";")[-1]:
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


class _FatbinWrapper(ctypes.Structure):
    # What nvcc's stub passes to __cudaRegisterFatBinary (crt/host_runtime.h's
    # __fatBinC_Wrapper_t): magic, version 1, the image, and an unused pointer.
    _fields_ = [
        ("magic", ctypes.c_int),
        ("version", ctypes.c_int),
        ("data", ctypes.c_void_p),
        ("filename_or_fatbins", ctypes.c_void_p),
    ]


class _EntryPoints:
    def __init__(self, cdll):
        v, i, s, cp = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_char_p
        self.register = self._fn(cdll, "__cudaRegisterFatBinary", v, (v,))
        self.end = self._fn(cdll, "__cudaRegisterFatBinaryEnd", None, (v,))
        self.unregister = self._fn(cdll, "__cudaUnregisterFatBinary", None, (v,))
        self.function = self._fn(cdll, "__cudaRegisterFunction", None, (v, v, cp, cp, i, v, v, v, v, v))
        self.var = self._fn(cdll, "__cudaRegisterVar", None, (v, v, cp, cp, i, s, i, i))

    @staticmethod
    def _fn(cdll, name, restype, argtypes):
        fn = cdll[name]  # indexing: a private function object, argtypes not shared
        fn.restype = restype
        fn.argtypes = argtypes
        return fn


_entry_points: dict[int, _EntryPoints] = {}


class Registration:
    """One image registered with the runtime; host addresses stand for its names.

    The runtime keeps pointers to the wrapper, the image and every name string until
    the image is unregistered, so this object owns all of them until `unregister()`.
    """

    def __init__(self, cdll, data: bytes, functions, variables):
        ep = _entry_points.get(id(cdll))
        if ep is None:
            ep = _entry_points[id(cdll)] = _EntryPoints(cdll)
        self._ep = ep
        self._image = ctypes.create_string_buffer(bytes(data), len(data))
        self._wrapper = _FatbinWrapper(FATBIN_WRAPPER_MAGIC, 1, ctypes.addressof(self._image), None)
        self._names = []  # the runtime reads these by pointer, maybe lazily
        functions = list(dict.fromkeys(functions))
        variables = dict(variables)
        # One byte per name: its address is the name's identity to the runtime.
        self._anchors = ctypes.create_string_buffer(max(1, len(functions) + len(variables)))
        base = ctypes.addressof(self._anchors)
        self.functions: dict[str, int] = {}
        self.variables: dict[str, int] = {}
        handle = ep.register(ctypes.byref(self._wrapper))
        if not handle:
            raise ImageError("__cudaRegisterFatBinary refused the image")
        self._handle = handle
        for k, name in enumerate(functions):
            encoded = ctypes.create_string_buffer(name.encode())
            self._names.append(encoded)
            ep.function(handle, base + k, encoded, encoded, -1, None, None, None, None, None)
            self.functions[name] = base + k
        for k, (name, (size, constant)) in enumerate(variables.items(), start=len(functions)):
            encoded = ctypes.create_string_buffer(name.encode())
            self._names.append(encoded)
            ep.var(handle, base + k, encoded, encoded, 0, size, int(constant), 0)
            self.variables[name] = base + k
        ep.end(handle)

    @property
    def registered(self) -> bool:
        return self._handle is not None

    def unregister(self) -> None:
        if self._handle is not None:
            handle, self._handle = self._handle, None
            self._ep.unregister(handle)
