"""The libcudart functions CuPy itself calls, for a C baseline of CuPy's own.

CuPy's wheels link the CUDA runtime statically into `cupy_backends.cuda.api.runtime`
(its functions are local symbols of that extension), so CuPy does not call the library
cudart binds: its `cudaGetDevice` is another build of the runtime, of another version.
Timing C through CuPy's copy, in this process, splits a gap to CuPy into what the
libraries cost and what each binding adds. The address is the extension's load bias plus
the symbol's value in its ELF symbol table, read from the file the process mapped.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

_ELF64 = b"\x7fELF\x02\x01"  # 64-bit, little-endian
_SHT_SYMTAB = 2
_STT_FUNC = 2
_PT_LOAD = 1


def _functions(data: bytes, wanted: set[str]) -> dict[str, int]:
    """{name: st_value} of the defined functions among `wanted` in the ELF file's
    .symtab (local symbols included, as static linking leaves them)."""
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)
    ]
    found: dict[str, int] = {}
    for _name, kind, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        if kind != _SHT_SYMTAB:
            continue
        strings = sections[link][4]
        for at in range(offset, offset + size, entsize):
            st_name, st_info, _other, st_shndx, st_value, _size = struct.unpack_from(
                "<IBBHQQ", data, at
            )
            if st_info & 0xF != _STT_FUNC or st_shndx == 0 or not st_value:
                continue
            end = data.index(b"\0", strings + st_name)
            name = data[strings + st_name : end].decode("ascii", "replace")
            if name in wanted:
                found[name] = st_value
    return found


def _first_vaddr(data: bytes) -> int:
    """The page of the virtual address the segment at file offset 0 asks for."""
    (phoff,) = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        kind, _flags, offset, vaddr = struct.unpack_from("<IIQQ", data, phoff + i * phentsize)
        if kind == _PT_LOAD and offset == 0:
            return vaddr & ~0xFFF
    raise LookupError("no loadable segment at offset 0")


def _load_bias(path: Path, data: bytes) -> int:
    """What the loader added to the file's virtual addresses: where the process mapped
    its offset 0, less the address the file asked for there."""
    resolved = str(path.resolve())
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and fields[5] == resolved and int(fields[2], 16) == 0:
                return int(fields[0].split("-")[0], 16) - _first_vaddr(data)
    raise LookupError(f"{resolved} is not mapped in this process")


def mapped_functions(path: Path, names: list[str]) -> dict[str, int]:
    """{name: address in this process} of those of `names` that the ELF file `path`, which
    the process mapped, defines as functions (local ones included)."""
    data = path.read_bytes()
    if not data.startswith(_ELF64):
        raise LookupError(f"{path} is not a 64-bit little-endian ELF file")
    values = _functions(data, set(names))
    bias = _load_bias(path, data) if values else 0
    return {name: bias + value for name, value in values.items()}


def cupy_pointers(names: list[str]) -> dict[str, int]:
    """{name: address} of CuPy's own copies of these libcudart functions in this process,
    CuPy imported. LookupError where CuPy holds no copy of one (a CuPy that links
    libcudart dynamically calls a shared library's: then C through it is the baseline)."""
    runtime = sys.modules.get("cupy_backends.cuda.api.runtime")
    file = getattr(runtime, "__file__", None)
    if not file:
        raise LookupError("cupy_backends.cuda.api.runtime is not imported")
    path = Path(file)
    found = mapped_functions(path, names)
    missing = [n for n in names if n not in found]
    if missing:
        raise LookupError(
            f"{path.name} defines no {', '.join(missing)}: CuPy links libcudart dynamically"
        )
    return found
