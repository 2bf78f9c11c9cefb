"""A loaded image (Module) and its __device__/__constant__ globals (Global).

Threads (free-threaded Python included): a Module hands out one Function per kernel
name and one Global per global name, whichever threads ask first, and `close` reaches
every one it handed out. Its tables are read without a lock (a hit is one dict read);
a miss takes the module's lock, looks again and makes the object there, so two threads
never make two Functions of one kernel (the one not in the table would escape close()
and keep a stale handle). close() takes the same lock, so it unloads once and no miss
makes an object after it. The lazily read names and PTX parameters need no lock: each
is the same value whoever computes it.
"""

from __future__ import annotations

import ctypes
import threading

from .._checked import check
from ..errors import CudartError
from ._demangle import demangle, resolve_kernel_name
from ._function import Function
from ._images import ImageError, inspect_image
from ._launch import param_types


class Module:
    """A loaded image. `get_function`, `get_global`; `close()` or `with` unloads it."""

    __module__ = "cudart.kernels"  # where users find it

    def __init__(self, rt, kind: str, data: bytes, loader):
        self._rt = rt
        self.kind = kind
        self._loader = loader
        self.route = loader.route
        self._functions: dict[str, Function] = {}  # by the name asked for, and as in the image
        self._names: tuple[str, ...] | None = None
        self._data = data
        self._params: dict[str, tuple[tuple[str, int], ...]] | None = None  # the PTX's, once
        self._globals: dict[str, Global] = {}
        self._typed: dict[tuple[str, str], Function] = {}  # (name, declared types)
        # Name expression -> lowered (mangled) name, for an image cudart.compile made:
        # get_function("axpy<float>") finds the instantiation NVRTC named.
        self.lowered_names: dict[str, str] = {}
        # NVRTC's or nvJitLink's log where cudart.compile or cudart.link made the image:
        # a successful build's warnings, part of its result.
        self.log = ""
        self._lock = threading.Lock()  # for the tables' misses and close (module doc)

    @property
    def closed(self) -> bool:
        return self._loader is None

    def _live_loader(self):
        if self._loader is None:
            raise ValueError("the module is closed")
        return self._loader

    def get_function(self, name: str, signature=None) -> Function:
        """The kernel `name`: its name in the image (mangled, for a C++ kernel), or for
        a C++ kernel its source name (`square`, `ns::fill<int>`) where one kernel has
        it, or its signature (`square(float*, int)`), or a name expression the
        module was compiled with (cudart.compile: `axpy<float>`). An ambiguous name
        raises AmbiguousKernelNameError, which lists the candidates.

        `signature` declares the parameter types (C text, `"float, float*, float*,
        int"`, or a sequence of ctypes types): launches and `pack` then refuse values
        of the wrong kind. A C++ kernel's mangled name declares them already.
        """
        name = self.lowered_names.get(name, name)
        if signature is not None:
            return self._typed_function(name, signature)
        self._live_loader()
        fn = self._functions.get(name)
        if fn is None:
            with self._lock:
                fn = self._functions.get(name)
                if fn is None:
                    fn = self._new_function(name)
        return fn

    def _new_function(self, name: str) -> Function:
        # Under self._lock.
        loader = self._live_loader()
        # The exact name first: one look-up. Only a miss lists the kernels, to find
        # the one a C++ source name or signature means, or to say what there is.
        handle = loader.find(name)
        target = name
        fn = None
        if handle is None:
            target = resolve_kernel_name(name, self.function_names())
            fn = self._functions.get(target)
        if fn is None:
            if handle is None:
                handle = loader.function(target)
            fn = Function(self, target, handle, image_types=self._image_types(target))
            self._functions[target] = fn
        self._functions[name] = fn
        return fn

    def _typed_function(self, name: str, signature) -> Function:
        base = self.get_function(name)
        key = (base.name, repr(param_types(signature)))
        fn = self._typed.get(key)
        if fn is None:
            with self._lock:
                fn = self._typed.get(key)
                if fn is None:
                    self._live_loader()
                    fn = self._typed[key] = Function(self, base.name, base.handle, signature)
        return fn

    def _image_types(self, name: str):
        """The kernel's parameters as the image's PTX declares them, or None."""
        if self._params is None:
            try:
                self._params = inspect_image(self._data).params or {}
            except ImageError:
                self._params = {}  # the loader took it: a form this reader does not know
        return self._params.get(name)

    def get_global(self, name: str) -> Global:
        """The global `name`: its name in the image, or a name expression the module was
        compiled with (cudart.compile: `&ns::table`, or `ns::table` for it), or `&name`."""
        self._live_loader()
        g = self._globals.get(name)
        if g is None:
            with self._lock:
                g = self._globals.get(name)
                if g is None:
                    loader = self._live_loader()
                    symbol, address, size = loader.variable(self._global_name(name))
                    g = self._globals[name] = Global(self, name, symbol, address, size)
        return g

    def _global_name(self, name: str) -> str:
        # NVRTC names a global's address (`&table`), so its name expressions start with &.
        lowered = self.lowered_names
        found = lowered.get(name) or lowered.get("&" + name)
        return found or (name[1:] if name.startswith("&") else name)

    def function_names(self) -> tuple[str, ...]:
        """The image's kernel names, as in the image (C++ kernels' mangled)."""
        loader = self._live_loader()
        if self._names is None:
            self._names = tuple(loader.names())
        return self._names

    def functions(self) -> tuple[tuple[str, str | None], ...]:
        """(name as in the image, demangled signature or None) for each kernel:
        `("_Z6squarePfi", "square(float*, int)")`, `("axpy", None)`."""
        return tuple((n, demangle(n)) for n in self.function_names())

    def close(self) -> None:
        """Unload the image. Its functions and globals stop working (calls raise)."""
        with self._lock:
            if self._loader is None:
                return
            for fn in set(self._functions.values()) | set(self._typed.values()):
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

    __module__ = "cudart.kernels"  # where users find it

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
            raise ValueError(
                f"{len(view)} bytes at offset {offset} do not fit {self.name!r} ({self.size} bytes)"
            )
        rt = self.module._rt
        source = (ctypes.c_char * len(view)).from_buffer_copy(view)
        self._copy(
            "cudaMemcpy (to global)",
            self._device(offset),
            source,
            len(view),
            rt.cudaMemcpyHostToDevice,
        )

    def read(self, size: int | None = None, offset: int = 0) -> bytes:
        size = self.size - offset if size is None else size
        if offset < 0 or size < 0 or offset + size > self.size:
            raise ValueError(
                f"{size} bytes at offset {offset} exceed {self.name!r} ({self.size} bytes)"
            )
        rt = self.module._rt
        target = ctypes.create_string_buffer(size)
        self._copy(
            "cudaMemcpy (from global)",
            target,
            self._device(offset),
            size,
            rt.cudaMemcpyDeviceToHost,
        )
        return target.raw

    def _device(self, offset: int) -> int:
        if self.module.closed:
            raise ValueError("the module is closed")
        return self.address + offset

    def _copy(self, what, dst, src, n, kind):
        rt = self.module._rt
        check(rt, what, rt.cudaMemcpy(dst, src, n, kind))

    def __repr__(self):
        return f"<cudart.kernels.Global {self.name} {self.size} bytes at {self.address:#x}>"
