"""Load kernel images (fatbin, cubin, PTX) and launch their kernels from Python.

The runtime launches only functions it knows, and it learns them from host stubs
that nvcc writes into a program. A Python process has no such stubs, so
`load_module` makes the runtime know an image's kernels by one of two routes:

registration (`route="register"`), every runtime version
    The image is registered through the runtime's own `__cudaRegisterFatBinary`,
    `__cudaRegisterFunction`, `__cudaRegisterVar` and `__cudaRegisterFatBinaryEnd`,
    the calls nvcc's stubs make (see cudart._registration). A kernel is then a host
    address that every API taking `const void *func` accepts, exactly like a kernel
    compiled into a C++ program, and each `__device__`/`__constant__` global is a
    symbol for cudaMemcpyToSymbol, cudaMemcpyFromSymbol, cudaGetSymbolAddress and
    cudaGetSymbolSize. The names must be known before registration ends, so the
    image is read for them: a fatbin whose entries are all zstd-compressed cannot be
    (pass `functions=` and `variables=` then).

library (`route="library"`), runtimes 12.8 and newer
    The documented cudaLibraryLoadData / cudaLibraryGetKernel / cudaLibraryGetGlobal
    (/ cudaLibraryGetManaged) / cudaLibraryUnload. A kernel is a cudaKernel_t, which
    these runtimes accept wherever a `const void *func` is taken; a global is a device
    address and size, not a symbol, so the *Symbol functions do not take it (use
    `Global.read`/`write`/`address`). The driver looks names up on demand, so any
    image loads, compressed or not.

`route="auto"` (the default) takes the library route where the runtime has it (12.8+,
the 13.0 bindings) and registration below: the documented interface wherever it
exists, and the runtime's own registration where it is the only way in. A driver
CUkernel does not substitute: cudaLaunchKernel on 12.5 rejects it
(cudaErrorInvalidDeviceFunction).

Launching: `Function.launch` packs arguments once per argument signature into
preallocated slots and calls cudaLaunchKernelExC with a preallocated
cudaLaunchConfig_t passed by pointer, the fastest way peers measured from ctypes;
per launch only the argument values (one struct.pack_into) and, if they changed, the
grid, block, shared memory and stream are written. Argument count and sizes are
checked against the kernel's parameters (cudaFuncGetParamInfo, 12.4+; the driver's
cuFuncGetParamInfo serves older runtimes where the driver has it).
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import os
import struct
import threading
from typing import Any

from ._registration import ImageError, Registration, image_kind, inspect_image
from .errors import CudaError, CudartError

__all__ = [
    "Function",
    "Global",
    "ImageError",
    "Module",
    "NameNotFoundError",
    "load_module",
]

ROUTES = ("auto", "register", "library")


def call_error(rt, call: str, status: int) -> CudaError:
    """The checked layer's CudaError subclass for `status`, noting which call failed."""
    from ._checked import error

    exc = error(status, rt)
    exc.add_note(f"while {call}")
    return exc


class NameNotFoundError(CudartError, LookupError):
    """The image has no kernel or global of that name."""


def _check(rt, call: str, status: int) -> None:
    if status:
        raise call_error(rt, call, status)


def _runtime():
    import cudart

    return cudart.sys, cudart.load_runtime()


def _has_function(rt, cdll, name: str) -> bool:
    symbol = getattr(rt, "SYMBOLS", {}).get(name)
    if symbol is None:
        return False
    try:
        cdll[symbol]
    except AttributeError:
        return False
    return True


# --------------------------------------------------------------------------- images


def _read_image(image) -> bytes:
    if isinstance(image, (bytes, bytearray, memoryview)):
        return bytes(image)
    if isinstance(image, (str, os.PathLike)):
        with open(image, "rb") as f:
            return f.read()
    raise TypeError(f"image must be bytes or a path, not {type(image).__name__}")


def load_module(
    image,
    *,
    route: str = "auto",
    functions: list[str] | None = None,
    variables: dict[str, tuple[int, bool]] | None = None,
) -> "Module":
    """Load a fatbin, cubin or PTX image (bytes, or a path to a file) into the runtime.

    `route` is "auto", "register" or "library" (see the module docstring).
    `functions` and `variables` ({name: (size, is_constant)}) add names the
    registration route cannot read from the image; the library route ignores them.
    """
    if route not in ROUTES:
        raise ValueError(f"route must be one of {ROUTES}, not {route!r}")
    data = _read_image(image)
    kind = image_kind(data)
    if kind == "ptx" and not data.endswith(b"\0"):
        data += b"\0"  # both routes read PTX as a C string
    rt, runtime = _runtime()
    has_library = _has_function(rt, runtime.cdll, "cudaLibraryLoadData")
    if route == "auto":
        route = "library" if has_library else "register"
    if route == "library":
        if not has_library:
            raise CudartError(
                f"the library route needs cudaLibraryLoadData (CUDA 12.8+); the loaded runtime is "
                f"{runtime.version_text} with bindings {rt.__name__}: use route='register'"
            )
        return Module(rt, kind, data, _LibraryLoader(rt, data))
    return Module(rt, kind, data, _RegisteredLoader(rt, runtime.cdll, data, functions, variables))


class _RegisteredLoader:
    route = "register"

    def __init__(self, rt, cdll, data, functions, variables):
        info = inspect_image(data)
        names = list(info.functions or [])
        names += [n for n in functions or () if n not in names]
        found = dict(info.variables)
        found.update(variables or {})
        if info.functions is None and not functions:
            raise ImageError(
                f"{info.note}; Python's standard library has no zstd. Rebuild the image with "
                "nvcc --compress-mode=speed (LZ4) or --no-compress, pass functions=[...] (and "
                "variables={name: (size, is_constant)}), or use route='library' (CUDA 12.8+)"
            )
        self.rt = rt
        self.registration = Registration(cdll, data, names, found)
        self.sizes = found
        _live.add(self)
        if names:
            # Loading is lazy: without this, an image the device cannot run would only
            # fail at its first launch.
            attrs = rt.cudaFuncAttributes()
            status = rt.cudaFuncGetAttributes(ctypes.byref(attrs), self.registration.functions[names[0]])
            if status:
                self.close()
                raise call_error(rt, f"loading the image (cudaFuncGetAttributes of {names[0]!r})", status)

    def function(self, name: str) -> int:
        try:
            return self.registration.functions[name]
        except KeyError:
            raise NameNotFoundError(
                f"no kernel {name!r} in the image; it has {sorted(self.registration.functions)}"
            ) from None

    def variable(self, name: str):
        try:
            symbol = self.registration.variables[name]
        except KeyError:
            raise NameNotFoundError(
                f"no __device__/__constant__ global {name!r} in the image; it has "
                f"{sorted(self.registration.variables)}"
            ) from None
        rt = self.rt
        address, size = ctypes.c_void_p(), ctypes.c_size_t()
        _check(rt, "cudaGetSymbolAddress", rt.cudaGetSymbolAddress(ctypes.byref(address), symbol))
        _check(rt, "cudaGetSymbolSize", rt.cudaGetSymbolSize(ctypes.byref(size), symbol))
        return symbol, address.value or 0, size.value

    def names(self):
        return tuple(self.registration.functions)

    def close(self):
        _live.discard(self)
        self.registration.unregister()


class _LibraryLoader:
    route = "library"

    def __init__(self, rt, data):
        self.rt = rt
        self._image = data  # kept alive for the library's lifetime, like the registration's
        library = ctypes.c_void_p()
        _check(rt, "cudaLibraryLoadData",
               rt.cudaLibraryLoadData(ctypes.byref(library), data, None, None, 0, None, None, 0))
        self.library = library
        _live.add(self)

    def function(self, name: str) -> int:
        rt = self.rt
        kernel = ctypes.c_void_p()
        status = rt.cudaLibraryGetKernel(ctypes.byref(kernel), self.library, name.encode())
        if status == rt.cudaErrorSymbolNotFound:
            raise NameNotFoundError(f"no kernel {name!r} in the image")
        _check(rt, f"cudaLibraryGetKernel({name!r})", status)
        return kernel.value

    def variable(self, name: str):
        rt = self.rt
        address, size = ctypes.c_void_p(), ctypes.c_size_t()
        status = rt.cudaLibraryGetGlobal(ctypes.byref(address), ctypes.byref(size), self.library, name.encode())
        if status == rt.cudaErrorSymbolNotFound and _has_function(rt, _runtime()[1].cdll, "cudaLibraryGetManaged"):
            status = rt.cudaLibraryGetManaged(ctypes.byref(address), ctypes.byref(size), self.library, name.encode())
        if status == rt.cudaErrorSymbolNotFound:
            raise NameNotFoundError(f"no __device__/__constant__/__managed__ global {name!r} in the image")
        _check(rt, f"cudaLibraryGetGlobal({name!r})", status)
        return None, address.value or 0, size.value

    def names(self):
        rt = self.rt
        count = ctypes.c_uint()
        _check(rt, "cudaLibraryGetKernelCount", rt.cudaLibraryGetKernelCount(ctypes.byref(count), self.library))
        kernels = (ctypes.c_void_p * count.value)()
        _check(rt, "cudaLibraryEnumerateKernels",
               rt.cudaLibraryEnumerateKernels(kernels, count.value, self.library))
        out = []
        for k in kernels:
            name = ctypes.c_char_p()
            _check(rt, "cudaFuncGetName", rt.cudaFuncGetName(ctypes.byref(name), k))
            out.append(name.value.decode())
        return tuple(out)

    def close(self):
        _live.discard(self)
        if self.library is not None:
            library, self.library = self.library, None
            _check(self.rt, "cudaLibraryUnload", self.rt.cudaLibraryUnload(library))


# Loaded images the process has not closed: unloaded at exit, before libcudart's own
# teardown, which would otherwise read registration memory Python has freed.
_live: set = set()


@atexit.register
def _close_all():
    for loader in list(_live):
        try:
            loader.close()
        except Exception:
            pass


class Module:
    """A loaded image. `get_function`, `get_global`; `close()` or `with` unloads it."""

    def __init__(self, rt, kind: str, data: bytes, loader):
        self._rt = rt
        self.kind = kind
        self._loader = loader
        self.route = loader.route
        self._functions: dict[str, Function] = {}
        self._globals: dict[str, Global] = {}

    @property
    def closed(self) -> bool:
        return self._loader is None

    def _live_loader(self):
        if self._loader is None:
            raise ValueError("the module is closed")
        return self._loader

    def get_function(self, name: str) -> "Function":
        loader = self._live_loader()
        fn = self._functions.get(name)
        if fn is None:
            fn = self._functions[name] = Function(self, name, loader.function(name))
        return fn

    def get_global(self, name: str) -> "Global":
        loader = self._live_loader()
        g = self._globals.get(name)
        if g is None:
            symbol, address, size = loader.variable(name)
            g = self._globals[name] = Global(self, name, symbol, address, size)
        return g

    def function_names(self) -> tuple[str, ...]:
        """The image's kernel names (registration: as read from the image)."""
        return self._live_loader().names()

    def close(self) -> None:
        """Unload the image. Its functions and globals stop working (calls raise)."""
        if self._loader is None:
            return
        for fn in self._functions.values():
            fn._invalidate()
        for g in self._globals.values():
            g._invalidate()
        loader, self._loader = self._loader, None
        loader.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self.closed else self.route
        return f"<cudart.kernels.Module {self.kind} ({state})>"


class Global:
    """A `__device__`/`__constant__` global of a loaded image.

    `address` and `size` work on both routes; `symbol` (the registration route's host
    address) is what cudaMemcpyToSymbol and friends take.
    """

    def __init__(self, module: Module, name: str, symbol, address: int, size: int):
        self.module = module
        self.name = name
        self._symbol = symbol
        self.address = address
        self.size = size

    def _invalidate(self):
        self._symbol = None
        self.address = 0

    @property
    def symbol(self) -> int:
        if self.module.closed:
            raise ValueError("the module is closed")
        if self._symbol is None:
            raise CudartError(
                f"{self.name!r} was loaded by the library route, where globals are device "
                "addresses, not symbols: use .address/.size, .read()/.write(), or load the "
                "module with route='register'"
            )
        return self._symbol

    def write(self, data, offset: int = 0) -> None:
        """Copy bytes (or any buffer, e.g. a ctypes array) into the global."""
        view = memoryview(data).cast("B")
        if offset < 0 or offset + len(view) > self.size:
            raise ValueError(f"{len(view)} bytes at offset {offset} do not fit {self.name!r} ({self.size} bytes)")
        rt = self.module._rt
        source = (ctypes.c_char * len(view)).from_buffer_copy(view)
        self._copy("cudaMemcpy (to global)", self._device(offset), source, len(view), rt.cudaMemcpyHostToDevice)

    def read(self, size: int | None = None, offset: int = 0) -> bytes:
        size = self.size - offset if size is None else size
        if offset < 0 or size < 0 or offset + size > self.size:
            raise ValueError(f"{size} bytes at offset {offset} exceed {self.name!r} ({self.size} bytes)")
        rt = self.module._rt
        target = ctypes.create_string_buffer(size)
        self._copy("cudaMemcpy (from global)", target, self._device(offset), size, rt.cudaMemcpyDeviceToHost)
        return target.raw

    def _device(self, offset: int) -> int:
        if self.module.closed:
            raise ValueError("the module is closed")
        return self.address + offset

    def _copy(self, what, dst, src, n, kind):
        rt = self.module._rt
        _check(rt, what, rt.cudaMemcpy(dst, src, n, kind))

    def __repr__(self):
        return f"<cudart.kernels.Global {self.name} {self.size} bytes at {self.address:#x}>"


# ------------------------------------------------------------------------ launching

_INT_FORMATS = {1: "b", 2: "h", 4: "i", 8: "q"}
_FLOAT_FORMATS = {2: "e", 4: "f", 8: "d"}

try:  # NumPy is optional; with it, its scalars are typed by their dtype
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the environment
    _np = None


def _dims(value, what: str):
    if isinstance(value, int):
        dims = (value, 1, 1)
    elif hasattr(value, "x") and hasattr(value, "y") and hasattr(value, "z"):
        dims = (value.x, value.y, value.z)
    else:
        try:
            dims = tuple(value)
        except TypeError:
            raise TypeError(f"{what} must be an int or a tuple of 1 to 3 ints, not {type(value).__name__}") from None
        if not 1 <= len(dims) <= 3:
            raise ValueError(f"{what} must have 1 to 3 dimensions, not {len(dims)}")
        dims = dims + (1,) * (3 - len(dims))
    for d in dims:
        if not isinstance(d, int) and not hasattr(d, "__index__"):
            raise TypeError(f"{what} dimensions must be ints, not {type(d).__name__}")
        if d < 0 or d > 0xFFFFFFFF:
            raise ValueError(f"{what} dimension {d} out of range")
    return tuple(int(d) for d in dims)


def stream_handle(stream) -> int:
    """The cudaStream_t of None, an int, a ctypes handle, a `__cuda_stream__` or `__int__` object."""
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    if isinstance(stream, ctypes.c_void_p):
        return stream.value or 0
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        value = protocol() if callable(protocol) else protocol
        return int(value[1])
    param = getattr(stream, "_as_parameter_", None)
    if param is not None:
        return stream_handle(param)
    if hasattr(type(stream), "__int__"):
        return int(stream)
    raise TypeError(
        f"stream must be None, an int, a handle, or an object with __cuda_stream__ or "
        f"__int__, not {type(stream).__name__}"
    )


def _pointer_value(arg):
    """The address an argument stands for, or None if it is not pointer-like."""
    if arg is None:
        return 0
    if isinstance(arg, ctypes.c_void_p):
        return arg.value or 0
    cai = getattr(arg, "__cuda_array_interface__", None)
    if cai is not None:
        return int(cai["data"][0])
    param = getattr(arg, "_as_parameter_", None)
    if param is not None:
        return _pointer_value(param) if not isinstance(param, int) else param
    if hasattr(arg, "__int__") and not isinstance(arg, (float, complex)):
        return int(arg)
    return None


_CTYPES_VALUES = (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)


def _slot(index: int, arg, size: int | None):
    """(struct format, converter, size) for one argument of a kernel parameter.

    `size` is the parameter's size, None where the runtime cannot tell it. Ints and
    floats follow C's conversions to the parameter's size; anything else must be
    exactly the parameter's size.
    """
    where = f"argument {index}"
    if isinstance(arg, ctypes.c_void_p) or arg is None:
        return _pointer_slot(where, size)
    if isinstance(arg, _CTYPES_VALUES):
        native = ctypes.sizeof(arg)
        if size is not None and native != size:
            raise TypeError(f"{where}: {type(arg).__name__} is {native} bytes, the kernel's parameter {size}")
        return f"{native}s", bytes, native
    if isinstance(arg, (bytes, bytearray)):
        if size is not None and len(arg) != size:
            raise TypeError(f"{where}: {len(arg)} bytes given for a {size}-byte parameter")
        return f"{len(arg)}s", bytes, len(arg)
    if isinstance(arg, float) or (_np is not None and isinstance(arg, _np.floating)):
        return _float_slot(where, size)
    if isinstance(arg, int) or (_np is not None and isinstance(arg, (_np.integer, _np.bool_))):
        return _int_slot(where, size)
    if hasattr(arg, "__array_interface__") and not hasattr(arg, "__cuda_array_interface__"):
        raise TypeError(f"{where}: a host array is not a kernel argument; pass a device pointer")
    if _pointer_value(arg) is not None:
        return _pointer_slot(where, size)
    raise TypeError(f"{where}: {type(arg).__name__} is not a kernel argument type")


def _pointer_slot(where, size):
    if size is not None and size != 8:
        raise TypeError(f"{where}: a pointer (8 bytes) given for a {size}-byte parameter")
    return "Q", _pointer_value, 8


def _int_slot(where, size):
    if size is None:
        size = 8  # little-endian: the low bytes of an 8-byte slot are any narrower int
    fmt = _INT_FORMATS.get(size)
    if fmt is None:
        raise TypeError(f"{where}: an int given for a {size}-byte parameter (a struct?)")
    bits = size * 8
    low, span, half = -(1 << (bits - 1)), 1 << bits, 1 << (bits - 1)

    def to_int(v):
        v = int(v)
        if not low <= v < span:
            raise OverflowError(f"{where}: {v} does not fit a {size}-byte integer parameter")
        return v - span if v >= half else v  # unsigned values keep their bits

    return fmt, to_int, size


def _float_slot(where, size):
    if size is None:
        raise TypeError(
            f"{where}: this runtime cannot tell the kernel's parameter sizes, so a Python "
            "float is ambiguous: pass ctypes.c_float or ctypes.c_double"
        )
    fmt = _FLOAT_FORMATS.get(size)
    if fmt is None:
        raise TypeError(f"{where}: a float given for a {size}-byte parameter")
    return fmt, float, size


class _Signature:
    """Argument slots for one combination of argument types, allocated once.

    `argv` is the kernel's `void **args`: pointers into one buffer that holds every
    argument at its natural alignment. `pack(*args)` writes the values: for plain ints
    and floats it is struct's own pack_into, whose checks (integer range, number of
    values, numeric type) send anything unusual to `pack_checked`.
    """

    __slots__ = ("types", "argv", "pack", "pack_checked", "_buffer", "_pointers")

    def __init__(self, args, params):
        self.types = tuple(map(type, args))
        parts = ["<"]
        offsets = []
        converters = []
        offset = 0
        for k, arg in enumerate(args):
            fmt, convert, size = _slot(k, arg, params[k] if params is not None else None)
            align = min(8, size & -size) if size else 1
            pad = -offset % align
            if pad:
                parts.append(f"{pad}x")
            offset += pad
            offsets.append(offset)
            parts.append(fmt)
            offset += size
            converters.append(convert)
        layout = struct.Struct("".join(parts))
        self._buffer = ctypes.create_string_buffer(max(8, layout.size))
        base = ctypes.addressof(self._buffer)
        self._pointers = (ctypes.c_void_p * max(1, len(args)))(*[base + o for o in offsets])
        self.argv = ctypes.c_void_p(ctypes.addressof(self._pointers) if args else None)
        raw = functools.partial(layout.pack_into, self._buffer, 0)
        types = self.types

        def pack_checked(values):
            raw(*[c(v) for c, v in zip(converters, values)])

        self.pack_checked = pack_checked
        if all(t in (int, float, bool) for t in types):
            self.pack = raw
        else:

            def pack(*values):
                if tuple(map(type, values)) != types:
                    raise TypeError("argument types changed")
                raw(*[c(v) for c, v in zip(converters, values)])

            self.pack = pack


class _Unpacked:
    argv = None

    @staticmethod
    def pack(*args):
        raise TypeError("no arguments packed yet")


_libcuda = None


def _driver_param_info():
    """libcuda's cuFuncGetParamInfo (driver 12.4+), or None."""
    global _libcuda
    if _libcuda is None:
        try:
            fn = ctypes.CDLL("libcuda.so.1")["cuFuncGetParamInfo"]
            fn.restype = ctypes.c_int
            fn.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p)
            _libcuda = fn
        except (OSError, AttributeError):
            _libcuda = False
    return _libcuda or None


class Function:
    """A kernel of a loaded module.

    Usable as `func` in every raw runtime call that takes one (it converts to the
    handle through `_as_parameter_`, `__int__` and `__index__`), and launchable with
    `launch`.
    """

    def __init__(self, module: Module, name: str, handle: int):
        rt = module._rt
        self.module = module
        self.name = name
        self._rt = rt
        self._handle = handle
        self._func = ctypes.c_void_p(handle)
        self._config = rt.cudaLaunchConfig_t()
        self._config_ptr = ctypes.c_void_p(ctypes.addressof(self._config))
        self._cooperative = rt.cudaLaunchAttribute()
        self._cooperative.id = rt.cudaLaunchAttributeCooperative
        self._cooperative.val.cooperative = 1
        self._config.attrs = ctypes.pointer(self._cooperative)
        self._key = (None, None, None, None, None)
        self._sig = _Unpacked
        self._signatures: dict[tuple, _Signature] = {}
        self._params: Any = ...  # ... until asked: tuple of sizes, or None if unknowable
        self._owner = None
        cdll = _runtime()[1].cdll
        # The symbol in force, so launches follow the per-thread default stream switch.
        launch = cdll[rt.SYMBOLS["cudaLaunchKernelExC"]]
        # No argtypes: every argument is a prebuilt ctypes object, so nothing is converted.
        launch.argtypes = None
        launch.restype = ctypes.c_int
        self._launch = launch

    # -- the handle
    @property
    def handle(self) -> int:
        if self._handle is None:
            raise ValueError(f"kernel {self.name!r}: its module is closed")
        return self._handle

    def __int__(self) -> int:
        return self.handle

    __index__ = __int__

    @property
    def _as_parameter_(self) -> int:
        return self.handle

    def _invalidate(self):
        self._handle = None
        # A stale handle could reach freed driver memory (library route), and the
        # runtime accepts a NULL one from cudaLaunchKernelExC on 12.x: launch nothing.
        self._func.value = None
        self._launch = self._closed

    def _closed(self, *args):
        raise ValueError(f"kernel {self.name!r}: its module is closed")

    def __repr__(self):
        state = "closed" if self._handle is None else f"{self._handle:#x}"
        return f"<cudart.kernels.Function {self.name} ({state})>"

    # -- what the runtime knows of it
    def attributes(self):
        """cudaFuncGetAttributes for this kernel (a cudaFuncAttributes struct)."""
        attrs = self._rt.cudaFuncAttributes()
        _check(self._rt, "cudaFuncGetAttributes", self._rt.cudaFuncGetAttributes(ctypes.byref(attrs), self.handle))
        return attrs

    @property
    def param_sizes(self) -> tuple[int, ...] | None:
        """Each parameter's size in bytes, or None where neither runtime nor driver can tell."""
        if self._params is ...:
            self._params = self._query_params()
        return self._params

    def _query_params(self):
        rt = self._rt
        offset, size = ctypes.c_size_t(), ctypes.c_size_t()
        if _has_function(rt, _runtime()[1].cdll, "cudaFuncGetParamInfo"):
            query = lambda i: rt.cudaFuncGetParamInfo(self.handle, i, ctypes.byref(offset), ctypes.byref(size))
            past_end = rt.cudaErrorInvalidValue
        else:
            driver = _driver_param_info()
            if driver is None:
                return None
            cufunc = ctypes.c_void_p()
            status = rt.cudaGetFuncBySymbol(ctypes.byref(cufunc), self.handle)
            if status:
                return None
            query = lambda i: driver(cufunc, i, ctypes.byref(offset), ctypes.byref(size))
            past_end = 1  # CUDA_ERROR_INVALID_VALUE
        # The probe past the last parameter is how the count is found; the runtime
        # records that as the thread's last error, which must not leak to the caller.
        pending = rt.cudaPeekAtLastError()
        sizes = []
        while True:
            status = query(len(sizes))
            if status == past_end:
                if not pending:
                    rt.cudaGetLastError()
                return tuple(sizes)
            if status:
                if not sizes:
                    return None
                raise call_error(rt, f"cudaFuncGetParamInfo({self.name!r}, {len(sizes)})", status)
            sizes.append(size.value)

    # -- launching
    def launch(self, grid, block, *args, shared_mem: int = 0, stream=None, cooperative: bool = False) -> None:
        """Launch on `grid` x `block` (ints or 1-3 tuples) with `args`; raises on failure.

        `stream` is None (the default stream), an int, a ctypes handle, or an object
        with `__cuda_stream__` or `__int__`. `cooperative=True` makes it a
        cooperative launch (as cudaLaunchCooperativeKernel).
        """
        if get_ident() != self._owner:
            return self._launch_from_other_thread(grid, block, args, shared_mem, stream, cooperative)
        sig = self._sig
        try:
            sig.pack(*args)
        except Exception:
            sig = self._repack(args)
        key = self._key
        # Identity first: a launch loop passes the same objects, and `is` is cheapest.
        if grid is not key[0] or block is not key[1] or stream is not key[3] or shared_mem != key[2] or cooperative != key[4]:
            if (grid, block, shared_mem, stream, cooperative) != key:
                self._configure(self._config, grid, block, shared_mem, stream, cooperative)
            self._key = (grid, block, shared_mem, stream, cooperative)
        status = self._launch(self._config_ptr, self._func, sig.argv)
        if status:
            self._fail(status)

    def _repack(self, args):
        types = tuple(map(type, args))
        sig = self._signatures.get(types)
        if sig is None:
            sig = self._new_signature(args)
            self._signatures[types] = sig
        sig.pack_checked(args)
        self._sig = sig
        return sig

    def _new_signature(self, args):
        params = self.param_sizes
        if params is not None and len(args) != len(params):
            raise TypeError(f"kernel {self.name!r} takes {len(params)} arguments ({len(args)} given)")
        return _Signature(args, params)

    def _configure(self, config, grid, block, shared_mem, stream, cooperative):
        config.gridDim.x, config.gridDim.y, config.gridDim.z = _dims(grid, "grid")
        config.blockDim.x, config.blockDim.y, config.blockDim.z = _dims(block, "block")
        if shared_mem < 0:
            raise ValueError("shared_mem must be >= 0")
        config.dynamicSmemBytes = shared_mem
        config.stream = stream_handle(stream)
        config.numAttrs = 1 if cooperative else 0

    def _launch_from_other_thread(self, grid, block, args, shared_mem, stream, cooperative):
        if self._owner is None:
            self._owner = get_ident()
            return self.launch(grid, block, *args, shared_mem=shared_mem, stream=stream, cooperative=cooperative)
        # Another thread's launch may be reading the shared slots right now (ctypes
        # releases the GIL), so this launch packs into its own.
        sig = self._new_signature(args)
        sig.pack_checked(args)
        config = self._rt.cudaLaunchConfig_t()
        self._configure(config, grid, block, shared_mem, stream, cooperative)
        config.attrs = ctypes.pointer(self._cooperative)
        status = self._launch(ctypes.c_void_p(ctypes.addressof(config)), self._func, sig.argv)
        if status:
            self._fail(status)

    def _fail(self, status):
        if self._handle is None:
            raise ValueError(f"kernel {self.name!r}: its module is closed")
        raise call_error(self._rt, f"launching {self.name!r} (cudaLaunchKernelExC)", status)


get_ident = threading.get_ident
