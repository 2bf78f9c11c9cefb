"""A loaded image (Module) and its __device__/__constant__ globals (Global)."""

from __future__ import annotations

import ctypes

from ._checked import check
from ._function import Function
from .errors import CudartError


class Module:
    """A loaded image. `get_function`, `get_global`; `close()` or `with` unloads it."""

    __module__ = "cudart.kernels"  # where users find it

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

    def get_function(self, name: str) -> Function:
        loader = self._live_loader()
        fn = self._functions.get(name)
        if fn is None:
            fn = self._functions[name] = Function(self, name, loader.function(name))
        return fn

    def get_global(self, name: str) -> Global:
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
