"""Link device code at run time with nvJitLink: `cudart.link(objects) -> loaded module`.

libnvJitLink is found like libnvrtc (cudart._loader.load_nvjitlink: $CUDART_NVJITLINK_LIBRARY,
the nvJitLink wheels, $CUDA_HOME / $CUDA_PATH, the system loader) and only when first
used: a machine without it imports cudart and uses the runtime as before. Its version
picks the generated bindings (cudart.nvjitlink_<ver>, raw, and
cudart.nvjitlink_checked_<ver>) by the runtime's rules (cudart._serving).

The inputs are what NVRTC and nvcc make: LTO-IR (cudart.compile(..., output="ltoir")),
PTX, cubins, fatbins, host objects and archives holding device code. Each one's kind is
read from its leading bytes, or given as a (kind, data) pair.
"""

from __future__ import annotations

import ctypes
import os
import stat
import struct

from ._loader import format_version, load_nvjitlink
from ._serving import nvjitlink_modules as _bindings
from ._threadlocale import thread_locale_kept
from .errors import LinkError, NvjitlinkError

__all__ = ["KINDS", "input_kind", "link", "nvjitlink_version"]

# For type checkers only: importing typing costs milliseconds a first link avoids.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

# The input kinds nvJitLink takes, by the name of their nvJitLinkInputType member.
KINDS = {
    "cubin": "NVJITLINK_INPUT_CUBIN",
    "ptx": "NVJITLINK_INPUT_PTX",
    "ltoir": "NVJITLINK_INPUT_LTOIR",
    "fatbin": "NVJITLINK_INPUT_FATBIN",
    "object": "NVJITLINK_INPUT_OBJECT",
    "library": "NVJITLINK_INPUT_LIBRARY",
}
# The leading 32-bit word (little-endian) of NVVM's LTO-IR: what NVRTC's -dlto and
# nvcc's -dlto write.
LTOIR_MAGIC = 0x7F4E43ED
_ARCHIVE_MAGIC = b"!<arch>\n"
# ELF's e_machine of device code (EM_CUDA); any other ELF is a host object whose
# sections may hold device code (nvcc -rdc).
_EM_CUDA = 190


def nvjitlink_version() -> int:
    """The loaded libnvJitLink's version, as 12050 for 12.5 (loads it on first call)."""
    return load_nvjitlink().version


def input_kind(data: bytes) -> str:
    """The KINDS key of an input, from its leading bytes; ValueError where they say
    none (give it as a (kind, data) pair)."""
    from .kernels._images import ELF_MAGIC, ImageError, image_kind

    if len(data) >= 4 and struct.unpack_from("<I", data)[0] == LTOIR_MAGIC:
        return "ltoir"
    if data.startswith(_ARCHIVE_MAGIC):
        return "library"
    if data[:4] == ELF_MAGIC and len(data) >= 20:
        (machine,) = struct.unpack_from("<H", data, 18)
        return "cubin" if machine == _EM_CUDA else "object"
    try:
        return image_kind(data)  # fatbin or PTX
    except ImageError:
        raise ValueError(
            "not a link input: expected LTO-IR (magic 0x7f4e43ed), a cubin or host object "
            "(ELF), a fatbin (magic 0xba55ed50), an archive or PTX text; got "
            f"{bytes(data[:8])!r}... (or give it as a (kind, data) pair, kind one of "
            f"{', '.join(KINDS)})"
        ) from None


def link(
    objects: Iterable[Any],
    *,
    arch: str | int | tuple[int, int] | None = None,
    options: Iterable[str] = (),
    load: bool = True,
    route: str = "auto",
) -> Any:
    """Link `objects` into one cubin with nvJitLink.

    Each object is bytes (LTO-IR, PTX, a cubin, a fatbin, a host object or an archive:
    its kind read from its leading bytes, as cudart.compile returns them with
    load=False), a path to such a file, a (kind, bytes or path) pair, kind one of
    KINDS, or a (kind, bytes or path, name) triple. nvJitLink's logs name each input by
    the name given: the triple's, else the program's name that an image of
    cudart.compile carries, else the path, else `objects[i]`. `arch` is the target, as
    cudart.compile takes it (`"sm_90"`, `90`, `(9, 0)`; by default the current
    device's, cudart.compile's rules); `-lto` is added where an input is LTO-IR.
    `options` are nvJitLink's own (`-O3`, `-g`, `-ptx`: not `-arch`).

    Returns the loaded module (cudart.load_module on the cubin, `route` its route), or
    with load=False the cubin bytes (a cudart.nvrtc.Image); either has `log`,
    nvJitLink's info log of the link (its warnings, and what -verbose reports).
    Raises LinkError (with nvJitLink's error log and the options) where the inputs do
    not link or one is refused, NvjitlinkNotFoundError where nvJitLink is not
    installed. nvJitLink runs in this process: see "Untrusted inputs" in
    docs/guides/kernels.rst.
    """
    from .nvrtc import Image, _arch_option, _strings, _target

    inputs = [_input(item, i) for i, item in enumerate(_objects(objects))]
    if not inputs:
        raise ValueError("link needs at least one object")
    given = _strings(options, "options")
    if any(o.startswith(("-arch", "--gpu-architecture")) for o in given):
        raise ValueError("give the architecture as arch=..., not as an -arch option")
    device = _target(bool(load), arch)
    link_options = (_arch_option(arch, "cubin", device), *given)
    if any(kind == "ltoir" for kind, _, _ in inputs) and "-lto" not in given:
        link_options += ("-lto",)
    # NVRTC's LLVM leaves the thread on the "C" locale; nvJitLink's (12.5's LTO, seen
    # here) does not, but nothing promises that of every release: kept as compile keeps it.
    with thread_locale_kept():
        cubin = Image(*_link(inputs, link_options))
    if not load:
        return cubin
    from .kernels import load_module

    module = load_module(cubin, route=route)
    module.log = cubin.log
    return module


def _objects(objects) -> list:
    # One input where a sequence of them belongs (link(data), link(("ptx", data))) would
    # be iterated as bytes or as a kind and its data.
    one_pair = isinstance(objects, tuple) and len(objects) == 2 and objects[0] in KINDS
    if one_pair or isinstance(objects, (bytes, bytearray, memoryview, str, os.PathLike)):
        raise TypeError(
            "objects is a sequence of inputs (bytes, paths or (kind, data) pairs), "
            f"not one {type(objects).__name__}"
        )
    return list(objects)


def _input(item, index: int) -> tuple[str, bytes, str]:
    """(kind, bytes, name) of one object."""
    kind = given = None
    if isinstance(item, tuple):
        if len(item) not in (2, 3) or item[0] not in KINDS:
            raise ValueError(
                f"objects[{index}]: a pair is (kind, data), a triple (kind, data, name), "
                f"kind one of {', '.join(KINDS)}; got {item!r:.80}"
            )
        kind, item, *named = item
        if named:
            given = named[0]
            if not isinstance(given, str) or not given or "\0" in given:
                raise ValueError(f"objects[{index}]: a name is a str without NUL, not {given!r}")
    if isinstance(item, (bytes, bytearray, memoryview)):
        # By the name given: the triple's, else the program's that cudart.compile made.
        data = bytes(item)
        name = given or getattr(item, "name", "") or f"objects[{index}]"
    elif isinstance(item, (str, os.PathLike)):
        path = os.fspath(item)
        data = _read_input(path, index)
        name = given or path
    else:
        raise TypeError(
            f"objects[{index}] must be bytes, a path or a (kind, data) pair, "
            f"not {type(item).__name__}"
        )
    if not data:
        raise ValueError(f"objects[{index}] is empty")
    return kind or input_kind(data), data, name


# Far above any device code one link takes (LTO-IR of a large program, libcudadevrt:
# MiB to hundreds of MiB): a larger file is not an input, and reading it whole could
# exhaust memory.
MAX_INPUT = 1 << 30
# No wait for a FIFO's writer where the OS has O_NONBLOCK: fstat then says what it is.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def _read_input(path: str, index: int) -> bytes:
    """The bytes of the regular file at `path` (a link to one is one) of at most
    MAX_INPUT bytes; ValueError for anything else there: /dev/zero would be read until
    memory ran out, and a FIFO would block until a writer came."""
    fd = os.open(path, _OPEN_FLAGS)
    owned = False  # by the file object, once made: it closes fd
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(
                f"objects[{index}]: {path!r} is not a regular file ({_file_kind(info.st_mode)})"
            )
        if info.st_size > MAX_INPUT:
            raise ValueError(
                f"objects[{index}]: {path!r} is {info.st_size} bytes, over the "
                f"{MAX_INPUT >> 20} MiB an input may be (cudart.linking.MAX_INPUT)"
            )
        with os.fdopen(fd, "rb") as f:
            owned = True
            data = f.read(info.st_size + 1)  # one more: a file still growing is not whole
    finally:
        if not owned:
            os.close(fd)
    if len(data) != info.st_size:
        raise ValueError(f"objects[{index}]: {path!r} changed size while it was read")
    return data


def _file_kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return f"mode {mode:#o}"


def _link(inputs, options: tuple[str, ...]) -> tuple[bytes, str]:
    """(cubin, nvJitLink's info log), or LinkError."""
    raw, checked = _bindings()
    try:
        handle = checked.nvJitLinkCreate(len(options), list(options))
    except NvjitlinkError as exc:
        raise _link_error(exc, "", options, "refused the options") from exc
    try:
        for kind, data, name in inputs:
            try:
                checked.nvJitLinkAddData(
                    handle, getattr(raw, KINDS[kind]), data, len(data), name.encode()
                )
            except NvjitlinkError as exc:
                log = _log(checked, handle)
                raise _link_error(exc, log, options, f"refused {name} ({kind})") from exc
        try:
            checked.nvJitLinkComplete(handle)
        except NvjitlinkError as exc:
            raise _link_error(exc, _log(checked, handle), options, "could not link") from exc
        size = checked.nvJitLinkGetLinkedCubinSize(handle)
        buffer = ctypes.create_string_buffer(size)
        checked.nvJitLinkGetLinkedCubin(handle, buffer)
        return buffer.raw, _log(checked, handle, "Info")
    finally:
        raw.nvJitLinkDestroy(ctypes.byref(handle))


def _log(checked, handle, which: str = "Error") -> str:
    """nvJitLink's error (or "Info") log of `handle` ("" where it cannot be read)."""
    try:
        size = getattr(checked, f"nvJitLinkGet{which}LogSize")(handle)
        buffer = ctypes.create_string_buffer(max(size, 1))
        getattr(checked, f"nvJitLinkGet{which}Log")(handle, buffer)
    except NvjitlinkError:
        return ""
    return buffer.value.decode(errors="replace")


def _link_error(exc: NvjitlinkError, log: str, options: tuple[str, ...], what: str) -> LinkError:
    first = next((ln for ln in log.splitlines() if ln.strip()), exc.name)
    message = (
        f"nvJitLink {format_version(nvjitlink_version())} {what}: {first}\n"
        f"  {exc.name}; options: {' '.join(options)}"
    )
    if log.strip():
        message += "\n" + log.rstrip()
    return LinkError(message, log, options, exc)
