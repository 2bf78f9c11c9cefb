"""Compile CUDA C++ at run time with NVRTC: `cudart.compile(source) -> loaded module`.

libnvrtc is found like libcudart (cudart._loader.load_nvrtc: $CUDART_NVRTC_LIBRARY, the
NVRTC wheels, $CUDA_HOME / $CUDA_PATH, the system loader) and only when first used: a
machine without NVRTC imports cudart and uses the runtime as before. Its version
(nvrtcVersion) picks the generated bindings (cudart.nvrtc_<ver>, raw, and
cudart.nvrtc_checked_<ver>) by the runtime's rules (cudart._serving).

Compiled images are kept in an on-disk cache ($CUDART_KERNEL_CACHE, else
$XDG_CACHE_HOME/cudart/kernels, else ~/.cache/cudart/kernels), keyed by the sha256 of
everything that decides the image: source, headers, options, name expressions, the
NVRTC version, the target architecture and the output kind. $CUDART_KERNEL_CACHE=0 (or
off, no, false) or `cache=False` turns it off. Entries are written to a temporary file
and renamed into place, so a half-written entry is never read. An entry is read only
where it is a regular file of at most _MAX_ENTRY bytes, opened without following a link
and without blocking (a FIFO, a device, a link to /dev/zero or a huge sparse file at its
path would hang or exhaust memory); such an entry, and one that does not verify (its own
sha256), is a miss, silently: the compile that follows renames a good entry over it.
The cache is a saving, not a source of truth, so a bad entry costs one compile and no
warning.

Above the disk, the process remembers what it compiled (the in-memory layer, below
compile): a repeated compile returns the image it made, and with load=True the same
open Module while the current device is the one it was loaded on. Closing that module
closes it for every caller that got it; the next compile loads it again.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import re
import stat
import tempfile
import threading

from ._lasterror import internal_calls
from ._loader import format_version, load_nvrtc
from ._serving import checked_module, raw_module
from ._serving import nvrtc_modules as _bindings
from ._threadlocale import thread_locale_kept
from .errors import CompileError, CudaError, CudartError

__all__ = ["CACHE_ENV", "Image", "cache_folder", "clear_cache", "compile", "nvrtc_version"]

# For type checkers only: importing typing costs milliseconds a first compile avoids.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

CACHE_ENV = "CUDART_KERNEL_CACHE"
_OFF = frozenset({"0", "off", "no", "false"})
# Bumped when an entry's layout changes: older entries then miss rather than misread.
# 2: the entry holds NVRTC's log and a cubin's PTX parameter types.
_CACHE_FORMAT = 2
_MAGIC = b"cudart-kernel\n"
_OUTPUTS = ("cubin", "ptx", "ltoir")
# NVRTC's switch for LTO-IR output (it implies -rdc=true): given for output="ltoir".
_LTO_OPTIONS = ("-dlto", "--dlto")
# Far above any image NVRTC makes of one program (KiB to tens of MiB): a larger entry
# is not one of ours, and reading it whole could exhaust memory.
_MAX_ENTRY = 256 << 20
# How an entry is opened: no link followed, no wait for a FIFO's writer (where the OS
# has the flags).
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
# NVRTC's diagnostics: `<program>(<line>): error: ...`.
_LOG_LINE = re.compile(r"^(?P<file>.*?)\((?P<line>\d+)\): (?:catastrophic )?error", re.M)


class Image(bytes):
    """An image cudart.compile or cudart.link made (bytes), with `log`: the compiler's
    or linker's log of the build that made it ("" where it said nothing; a successful
    build's log holds its warnings, which are part of its result), and `name`: the
    program's name compile was given (cudart.link names the input so in its log)."""

    __module__ = "cudart.nvrtc"  # where users find it
    log: str
    name: str

    def __new__(cls, data: bytes, log: str = "", name: str = "") -> Image:
        image = super().__new__(cls, data)
        image.log, image.name = log, name
        return image

    def __reduce__(self):
        return (Image, (bytes(self), self.log, self.name))


def nvrtc_version() -> int:
    """The loaded libnvrtc's version, as 12050 for 12.5 (loads it on first call)."""
    return load_nvrtc().version


def cache_folder() -> str | None:
    """Where compiled images are kept, or None where $CUDART_KERNEL_CACHE turns it off."""
    explicit = os.environ.get(CACHE_ENV, "").strip()
    if explicit.lower() in _OFF:
        return None
    if explicit:
        return os.path.expanduser(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = os.path.expanduser(xdg) if xdg else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cudart", "kernels")


def _arch_number(arch) -> int:
    """90 for "sm_90", "compute_90", "90", 90 and (9, 0). Integers are ints: a float,
    a Decimal or a NumPy integer is refused (80.5 would have been truncated to 80)."""
    if isinstance(arch, tuple) and len(arch) == 2 and all(_is_int(a) for a in arch):
        if arch[0] > 0 and 0 <= arch[1] <= 9:
            return arch[0] * 10 + arch[1]
    if _is_int(arch) and arch > 0:
        return arch
    if isinstance(arch, str):
        m = re.fullmatch(r"(?:sm_|compute_)?(\d+)[a-z]?", arch.strip())
        if m:
            return int(m.group(1))
    raise ValueError(f"arch must be like 'sm_90', 90 or (9, 0), not {arch!r}")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _arch_suffix(arch) -> str:
    """The feature suffix of "sm_90a" ("a"), kept in the -arch option."""
    if isinstance(arch, str):
        m = re.fullmatch(r"(?:sm_|compute_)?\d+([a-z]?)", arch.strip())
        if m:
            return m.group(1)
    return ""


def _arch_option(arch, output: str, device: int | tuple[str, int] | None) -> str:
    """NVRTC's -arch option: `arch`, or the current device's compute capability."""
    # A program uses an arch or two: each parsed once. Only a str or an int is a key:
    # (9.0, 0) equals (9, 0), and would be answered without _arch_number's check.
    key = (arch.__class__, arch, output) if arch.__class__ in (str, int) else None
    option = _arch_options.get(key) if key is not None else None
    if option is not None:
        return option
    number = _arch_number(arch) if arch is not None else _device_arch(device)
    prefix = "sm" if output == "cubin" else "compute"
    option = f"-arch={prefix}_{number}{_arch_suffix(arch)}"
    if key is not None and len(_arch_options) < _REMEMBERED:
        _arch_options[key] = option
    return option


def _current_device() -> int | None:
    """The calling thread's device, or None where it cannot be asked (no GPU, no
    driver): load_module or _device_arch then says why."""
    try:
        rt = raw_module()
    except Exception:  # noqa: BLE001 - no libcudart, no bindings for it: said later
        return None
    device = ctypes.c_int()
    # cudart's own question, not the program's: its failure must not become the
    # program's last error (cudart._lasterror).
    with internal_calls(rt):
        status = rt.cudaGetDevice(ctypes.byref(device))
    return None if status else device.value


def _target(loads: bool, arch) -> int | tuple[str, int] | None:
    """What a compile or link with `arch` targets besides `arch`: the runtime's current
    device where a module is loaded (the runtime loads it there), or where no arch is
    given, the device to ask: the driver's current context's, as ("driver", device),
    where the program works through the driver (cudart.driver is loaded and a context
    is current on this thread: asking the runtime would initialize it in a program that
    does not use it), else the runtime's current device. None: neither is needed."""
    if loads:
        return _current_device()
    if arch is not None:
        return None
    device = _driver_device()
    return ("driver", device) if device is not None else _current_device()


def _driver_device() -> int | None:
    """The device of the driver's current context, where cudart's driver API is loaded
    and a context is current on this thread; else None."""
    from ._loader import load_driver

    if load_driver.loaded is None:
        return None  # the program has not used the driver through cudart
    from ._serving import driver_modules

    try:
        raw = driver_modules()[0]
    except Exception:  # noqa: BLE001 - no bindings fit this driver: the runtime's turn
        return None
    context, device = raw.CUcontext(), raw.CUdevice()
    if raw.cuCtxGetCurrent(ctypes.byref(context)) or not context:
        return None
    if raw.cuCtxGetDevice(ctypes.byref(device)):
        return None
    return int(device.value)


def _device_arch(device) -> int:
    """The compute capability of `device` (a runtime device, or ("driver", device)),
    asked once per device and process."""
    known = _device_archs.get(device) if device is not None else None
    if known is not None:
        return known
    try:
        if isinstance(device, tuple):
            major, minor = _driver_arch(device[1])
        else:
            rt, raw = checked_module(), raw_module()
            with internal_calls(raw):  # cudart's question (cudart._lasterror)
                if device is None:
                    device = rt.cudaGetDevice()
                major = rt.cudaDeviceGetAttribute(raw.cudaDevAttrComputeCapabilityMajor, device)
                minor = rt.cudaDeviceGetAttribute(raw.cudaDevAttrComputeCapabilityMinor, device)
    except Exception as exc:
        raise CudartError(
            f"cudart.compile: no arch given and the current device's cannot be asked ({exc}); "
            "pass arch='sm_90' (or the GPU's), with load=False where there is no GPU"
        ) from exc
    _device_archs[device] = major * 10 + minor
    return major * 10 + minor


def _driver_arch(device: int) -> tuple[int, int]:
    from ._serving import driver_modules

    raw, checked = driver_modules()
    major = checked.cuDeviceGetAttribute(raw.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device)
    minor = checked.cuDeviceGetAttribute(raw.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device)
    return major, minor


def compile(  # noqa: A001  (cudart.compile is the name the API offers)
    source: str | bytes,
    *,
    name_expressions: Iterable[str] = (),
    options: Iterable[str] = (),
    headers: Mapping[str, str | bytes] | None = None,
    arch: str | int | tuple[int, int] | None = None,
    output: str = "cubin",
    load: bool | None = None,
    cache: bool | None = None,
    name: str = "program.cu",
    route: str = "auto",
) -> Any:
    """Compile CUDA C++ `source` with NVRTC.

    Returns the loaded module (cudart.load_module on the image), or with load=False
    the image: the cubin bytes, or the PTX text as bytes. output="ltoir" compiles with
    `-dlto` and returns the LTO-IR bytes, which only cudart.link can use (nothing
    loads them: `load` is False by default there, and True is refused). `name_expressions`
    (`"axpy<float>"`, `"&ns::table"`) instantiate templates and are names the module's
    get_function takes. `headers` maps include names to their text. `options` are
    NVRTC's (`-std=c++17`, `-DN=4`); `-arch` comes from `arch`: the current device's
    compute capability by default (give it where there is no GPU), `"sm_90"`, `90` or
    `(9, 0)`. `cache` (default: on unless $CUDART_KERNEL_CACHE turns it off) reuses an
    image compiled before with the same inputs, and, in this process, the module loaded
    from it on the current device (the same object: close it only where no one else
    uses it; cudart.nvrtc.clear_cache() after cudaDeviceReset). `route` is load_module's ("register"
    where cudaMemcpyToSymbol must name the module's globals).

    Raises CompileError (with NVRTC's log, the options and the source line the log
    points at) where the source does not compile, cudart.NvrtcError subclasses for
    other NVRTC failures (an architecture this NVRTC does not know:
    NvrtcErrorInvalidOption), NvrtcNotFoundError where NVRTC is not installed.
    """
    # A compile repeated with the very arguments of one that succeeded: its result,
    # before any checking (each distinct call was checked once, on its way in).
    given_key = None
    if cache is not False:
        name_expressions, options = _once(name_expressions), _once(options)
        # What load=None means (_compile_checked): the key holds whether a module is
        # made, and then on which device.
        loads = output != "ltoir" if load is None else load
        device = _target(bool(loads), arch)
        given_key = _given_key(
            source, name_expressions, options, headers, arch, output, loads, name, route, device
        )
        if given_key is not None:
            found = _given.get(given_key)
            if found is not None and not (loads and found.closed):
                return found
    result = _compile_checked(
        source, name_expressions, options, headers, arch, output, load, cache, name, route
    )
    if given_key is not None and cache_folder():
        _remember(_given, given_key, result)
    return result


def _once(values):
    """An iterator's items as a tuple, so that checking and compiling see the same ones;
    anything else as given (a str or bytes is refused as a sequence later)."""
    if isinstance(values, (str, bytes, list, tuple)) or not hasattr(values, "__iter__"):
        return values
    return tuple(values)


def _compile_checked(
    source, name_expressions, options, headers, arch, output, load, cache, name, route
):
    """compile(), every argument checked and the disk and memory layers consulted."""
    if output not in _OUTPUTS:
        raise ValueError(f"output must be one of {_OUTPUTS}, not {output!r}")
    if load is None:
        load = output != "ltoir"
    elif load and output == "ltoir":
        raise ValueError("LTO-IR cannot be loaded: link it with cudart.link (load=False here)")
    source = _c_string(source, "source", bytes)
    _c_string(name, "name")
    expressions = _strings(name_expressions, "name_expressions")
    given = _strings(options, "options")
    sources = _headers(headers)
    if any(o.startswith(("-arch", "--gpu-architecture")) for o in given):
        raise ValueError("give the architecture as arch=..., not as an -arch option")
    if output == "ltoir" and not any(o in _LTO_OPTIONS for o in given):
        given += ("-dlto",)
    device = _target(bool(load), arch)
    arch_option = _arch_option(arch, output, device)
    folder = cache_folder() if cache is not False else None
    # What the image depends on, as given: the NVRTC (one per process) is left out.
    inputs = (source, name, given, expressions, tuple(sorted(sources.items())), arch_option)
    remembered = (folder, output, inputs)
    if folder and load:
        module = _modules.get((remembered, device, route))
        if module is not None and not module.closed:
            return module
    entry = _images.get(remembered) if folder else None
    if entry is None:
        entry = _image(source, name, sources, given, expressions, arch_option, output, folder)
        if folder:
            _remember(_images, remembered, entry)
    image, lowered, params = entry
    if not load:
        return image
    module = _load(image, lowered, output, route, params)
    if folder:
        _remember(_modules, (remembered, device, route), module)
    return module


# ---------------------------------------------------------------- the in-memory layer
#
# Above the disk cache, for the process: a compile repeated with the same inputs skips
# the key's hashing and the disk. _images maps the inputs (as compile checked them, the
# cache folder and the output kind) to (image, lowered names); _modules maps the inputs,
# the current device and the route to the Module compile(load=True) returned, which is
# handed back while it is open: a module belongs to the device it was loaded on, and one
# that was closed is loaded again. Both forget their oldest entries past _REMEMBERED.
# The cache switches (cache=False, $CUDART_KERNEL_CACHE=off) turn this layer off too.
# Threads: look-ups take no lock (one dict read); writes, trims and clear_cache take
# _remembering. Threads that compile the same new inputs at once each compile (NVRTC
# is thread-safe; the disk entry is renamed into place whole) and each gets its own
# result, equal to the others'; the last remembered serves later repeats.
# _device_archs and _arch_options store values that are the same whoever computes them.

_REMEMBERED = 256
_images: dict = {}
_modules: dict = {}
# The arguments exactly as given (with the cache's location and the current device) ->
# what compile returned for them: a repeat is one dict look-up (issue 21: 10 µs).
_given: dict = {}
_device_archs: dict[int, int] = {}
_arch_options: dict[tuple, str] = {}
_remembering = threading.Lock()


def _remember(table: dict, key, value) -> None:
    # Under the lock: two threads trimming at once would delete one entry twice. A
    # look-up takes no lock (one dict read is atomic).
    with _remembering:
        table.pop(key, None)
        table[key] = value
        while len(table) > _REMEMBERED:
            del table[next(iter(table))]


def clear_cache() -> None:
    """Forget the images and modules this process compiled (the disk cache stays):
    after cudaDeviceReset, whose context took the loaded modules with it."""
    with _remembering:  # not while _remember trims: its next(iter(table)) would find none
        _images.clear()
        _modules.clear()
        _given.clear()


def _given_key(source, name_expressions, options, headers, arch, output, load, name, route, device):
    """compile()'s arguments as a dict key, or None where one is not hashable as given
    or is not of a type the checks take exactly (such a call takes the checked path
    every time, which refuses or accepts it). A key matches by equality, and 80.0,
    numpy.int64(80) and Decimal(80) equal 80, memoryview(b"x") equals b"x": each would
    be answered with the image of a call whose value the checks accepted, though they
    refuse it. Lists become tuples. Where the cache folder is does not change what a
    compile returns; whether there is one does."""
    if isinstance(name_expressions, (str, bytes)) or isinstance(options, (str, bytes)):
        return None
    if (
        source.__class__ not in (str, bytes)
        or name.__class__ is not str
        or output.__class__ is not str
        or route.__class__ is not str
        or not (arch is None or arch.__class__ in (str, int) or _int_pair(arch))
    ):
        return None
    try:
        names, given = tuple(name_expressions), tuple(options)
        texts = None if headers is None else tuple(headers.items())
    except (TypeError, AttributeError):
        return None
    if not all(o.__class__ is str for o in names + given):
        return None
    if texts is not None and not all(
        k.__class__ is str and v.__class__ in (str, bytes) for k, v in texts
    ):
        return None
    try:
        key = (
            source,
            names,
            given,
            texts,
            arch,
            output,
            bool(load),
            name,
            route,
            device,
            os.environ.get(CACHE_ENV),  # its value can turn the cache off
        )
        hash(key)
    except (TypeError, AttributeError):
        return None
    return key


def _int_pair(arch) -> bool:
    return arch.__class__ is tuple and len(arch) == 2 and all(a.__class__ is int for a in arch)


def _image(source, name, sources, given, expressions, arch_option, output, folder):
    """(image, lowered names) from the disk cache, else by NVRTC (and then cached)."""
    raw, checked = _bindings()
    version = nvrtc_version()
    key = _cache_key(source, sources, given, expressions, version, arch_option, output, name)
    entry = _cache_read(folder, key) if folder else None
    if entry is None:
        with thread_locale_kept():
            entry = _compile(
                raw, checked, source, name, sources, given + (arch_option,), expressions, output
            )
        if folder:
            _cache_write(folder, key, *entry)
    return entry


def _load(image, lowered, output, route, params=None):
    from .kernels import load_module

    try:
        module = load_module(image, route=route)
    except CudaError as exc:
        if output == "ptx":
            exc.add_note(_ptx_note(nvrtc_version()))
        raise
    return _annotated(module, image, lowered, params)


def _annotated(module, image, lowered, params):
    """`module` told what compile knows of its image: the name expressions' lowered
    names, NVRTC's log, and a cubin's parameter types from the PTX NVRTC made beside it
    (a cubin declares none: an extern "C" kernel then takes Python floats, as one of a
    PTX image does)."""
    module.lowered_names.update(lowered)
    module.log = image.log
    if params is not None:
        module._params = params
    return module


def _c_string(value, what: str, *others: type[bytes]) -> bytes:
    """`value` as the NUL-terminated string C is given: a str (UTF-8), or one of `others`;
    TypeError for anything else, ValueError for a NUL, where C would end the string."""
    if isinstance(value, str):
        data = value.encode()
    elif isinstance(value, others):
        data = bytes(value)
    else:
        kinds = " or ".join(["str", *(t.__name__ for t in others)])
        raise TypeError(f"{what} must be {kinds}, not {type(value).__name__}")
    if b"\0" in data:
        raise ValueError(f"{what} contains a NUL byte, where C would cut it short: {value!r:.80}")
    return data


def _strings(values, what: str) -> tuple[str, ...]:
    """A sequence of str, each a C string (name expressions, options)."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{what} is a sequence of str, not one {type(values).__name__}")
    given = tuple(values)
    for i, value in enumerate(given):
        _c_string(value, f"{what}[{i}]")
    return given


def _headers(headers) -> dict[str, bytes]:
    """{include name: text}: names str, texts str or bytes, each a C string."""
    if headers is None:
        return {}
    if not hasattr(headers, "items"):
        raise TypeError(f"headers must be a mapping of str to str, not {type(headers).__name__}")
    checked = {}
    for key, text in headers.items():
        _c_string(key, "a header name")
        checked[key] = _c_string(text, f"headers[{key!r}]", bytes)
    return checked


def _ptx_note(version: int) -> str:
    """Why a driver may refuse PTX: NVIDIA's rule is that PTX loads on a driver at
    least as new as the compiler that wrote it."""
    rt, version_ = raw_module(), ctypes.c_int()
    with internal_calls(rt):  # for a note: leaves the last error as it was
        status = rt.cudaDriverGetVersion(ctypes.byref(version_))
    driver = "?" if status else format_version(version_.value)
    return (
        f"PTX from NVRTC {format_version(version)} needs a driver of CUDA "
        f"{format_version(version)} or newer (this one: CUDA {driver}): compile to a cubin "
        "(output='cubin'), or use an NVRTC no newer than the driver"
    )


def _cache_key(source, headers, options, expressions, version, arch_option, output, name) -> str:
    described = json.dumps(
        {
            "format": _CACHE_FORMAT,
            "source": hashlib.sha256(source).hexdigest(),
            "name": name,
            "headers": sorted(
                (k, hashlib.sha256(_bytes(v)).hexdigest()) for k, v in headers.items()
            ),
            "options": list(options),
            "name_expressions": list(expressions),
            "nvrtc": version,
            "arch": arch_option,
            "output": output,
        },
        sort_keys=True,
    )
    return hashlib.sha256(described.encode()).hexdigest()


def _bytes(text) -> bytes:
    return text.encode() if isinstance(text, str) else bytes(text)


def _check(checked, raw, status: int) -> None:
    if status:
        raise checked._error(status, raw)


def _compile(raw, checked, source, name, headers, options, expressions, output):
    """(Image with NVRTC's log, {name expression: lowered name}, a cubin's
    {kernel: PTX parameters} or None) by NVRTC, or CompileError."""
    prog = ctypes.c_void_p()
    names = [_bytes(k) for k in headers]
    texts = [_bytes(v) for v in headers.values()]
    header_array = (ctypes.c_char_p * max(len(texts), 1))(*texts)
    name_array = (ctypes.c_char_p * max(len(names), 1))(*names)
    _check(
        checked,
        raw,
        raw.nvrtcCreateProgram(
            ctypes.byref(prog), source, name.encode(), len(texts), header_array, name_array
        ),
    )
    try:
        for expression in expressions:
            _check(checked, raw, raw.nvrtcAddNameExpression(prog, expression.encode()))
        encoded = [o.encode() for o in options]
        option_array = (ctypes.c_char_p * max(len(encoded), 1))(*encoded)
        status = raw.nvrtcCompileProgram(prog, len(encoded), option_array)
        if status == raw.NVRTC_ERROR_COMPILATION:
            raise _compile_error(raw, checked, prog, source, name, tuple(options))
        if status == raw.NVRTC_ERROR_INVALID_OPTION:
            exc = checked._error(status, raw)
            exc.add_note(
                f"options: {' '.join(options)}; NVRTC {format_version(nvrtc_version())} "
                f"compiles for sm_{', sm_'.join(map(str, _supported_archs(raw, checked)))} "
                "(a newer GPU needs a newer NVRTC, or PTX for an older architecture that "
                "the driver compiles for it)"
            )
            raise exc
        _check(checked, raw, status)
        lowered = {}
        for expression in expressions:
            text = ctypes.c_char_p()
            _check(
                checked,
                raw,
                raw.nvrtcGetLoweredName(prog, expression.encode(), ctypes.byref(text)),
            )
            lowered[expression] = (text.value or b"").decode()
        get_size, get = _GETTERS[output](raw)
        size = ctypes.c_size_t()
        _check(checked, raw, get_size(prog, ctypes.byref(size)))
        if output == "cubin" and size.value == 0:
            raise CudartError(
                f"NVRTC made no cubin for {options[-1]}: a cubin needs a real architecture "
                "(sm_XX); give output='ptx' for a virtual one"
            )
        buffer = ctypes.create_string_buffer(size.value)
        _check(checked, raw, get(prog, buffer))
        image = buffer.raw
        if output == "ptx":
            image = image.rstrip(b"\0")  # the size counts the terminating NUL
        params = _ptx_params(raw, prog) if output == "cubin" else None
        return Image(image, _program_log(raw, checked, prog), name), lowered, params
    finally:
        raw.nvrtcDestroyProgram(ctypes.byref(prog))


def _ptx_params(raw, prog):
    """{kernel: ((PTX type, size), ...)} of the PTX NVRTC made beside a cubin, or None
    where it made none or it cannot be read (the kernels are then typed as a cubin's:
    by a signature, or a C++ name)."""
    from .kernels._images import ImageError, _read_ptx

    size = ctypes.c_size_t()
    if raw.nvrtcGetPTXSize(prog, ctypes.byref(size)) or size.value <= 1:
        return None
    buffer = ctypes.create_string_buffer(size.value)
    if raw.nvrtcGetPTX(prog, buffer):
        return None
    try:
        return _read_ptx(buffer.raw)[2]
    except ImageError:
        return None


# How each output kind is read from a compiled program: (size function, copy function).
_GETTERS = {
    "cubin": lambda raw: (raw.nvrtcGetCUBINSize, raw.nvrtcGetCUBIN),
    "ptx": lambda raw: (raw.nvrtcGetPTXSize, raw.nvrtcGetPTX),
    "ltoir": lambda raw: (raw.nvrtcGetLTOIRSize, raw.nvrtcGetLTOIR),
}


def _supported_archs(raw, checked) -> list[int]:
    count = ctypes.c_int()
    _check(checked, raw, raw.nvrtcGetNumSupportedArchs(ctypes.byref(count)))
    archs = (ctypes.c_int * count.value)()
    _check(checked, raw, raw.nvrtcGetSupportedArchs(archs))
    return list(archs)


def _program_log(raw, checked, prog) -> str:
    size = ctypes.c_size_t()
    _check(checked, raw, raw.nvrtcGetProgramLogSize(prog, ctypes.byref(size)))
    buffer = ctypes.create_string_buffer(max(size.value, 1))
    _check(checked, raw, raw.nvrtcGetProgramLog(prog, buffer))
    return buffer.value.decode(errors="replace")


def _compile_error(raw, checked, prog, source: bytes, name: str, options) -> CompileError:
    log = _program_log(raw, checked, prog)
    line_text = line_number = None
    for m in _LOG_LINE.finditer(log):
        if m.group("file") == name:
            line_number = int(m.group("line"))
            lines = source.decode(errors="replace").splitlines()
            if 0 < line_number <= len(lines):
                line_text = lines[line_number - 1]
            break
    first = next((ln for ln in log.splitlines() if "error" in ln), log.strip()[:200])
    message = f"NVRTC could not compile {name}: {first}"
    if line_text is not None:
        message += f"\n  line {line_number}: {line_text.strip()}"
    message += f"\n  options: {' '.join(options)}\n{log.rstrip()}"
    return CompileError(message, log, options, line_text, line_number)


# ---------------------------------------------------------------- the on-disk cache
#
# An entry: _MAGIC, one JSON line {"format", "sha256" of the image, "lowered", "log",
# "name", "params"}, the image.


def _entry_path(folder: str, key: str) -> str:
    return os.path.join(folder, key[:2], key + ".bin")


def _cache_read(folder: str, key: str):
    data = _read_entry(_entry_path(folder, key))
    if data is None or not data.startswith(_MAGIC):
        return None
    head, newline, image = data[len(_MAGIC) :].partition(b"\n")
    if not newline:
        return None
    try:
        meta = json.loads(head)
        if meta.get("format") != _CACHE_FORMAT:
            return None
        if hashlib.sha256(image).hexdigest() != meta["sha256"]:
            return None
        lowered = {str(k): str(v) for k, v in meta["lowered"].items()}
        log = str(meta["log"])
        params = meta["params"]
        if params is not None:
            params = {str(k): tuple((str(t), int(n)) for t, n in v) for k, v in params.items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return Image(image, log, str(meta["name"])), lowered, params


def _read_entry(path: str) -> bytes | None:
    """The bytes of the regular file at `path` (not a link) of at most _MAX_ENTRY bytes,
    or None: missing, unreadable, or anything else there."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return None  # missing, or a link (ELOOP): a miss
    try:
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_ENTRY:
                return None
            data = f.read(info.st_size + 1)  # one more: a file that grew is not whole
    except OSError:
        return None
    return data if len(data) == info.st_size else None


def _cache_write(folder: str, key: str, image: Image, lowered: dict, params) -> None:
    path = _entry_path(folder, key)
    meta = json.dumps(
        {
            "format": _CACHE_FORMAT,
            "sha256": hashlib.sha256(image).hexdigest(),
            "lowered": lowered,
            "log": image.log,
            "name": image.name,
            "params": params,
        },
        sort_keys=True,
    ).encode()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-", suffix=".bin")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_MAGIC + meta + b"\n" + image)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        pass  # a cache that cannot be written costs a compile next time, nothing more


def describe_version() -> str:
    """The loaded NVRTC, for messages: "NVRTC 12.5 (path)"."""
    library = load_nvrtc()
    return f"NVRTC {format_version(library.version)} ({library.path})"
