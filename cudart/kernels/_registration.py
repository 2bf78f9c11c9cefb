"""Registering kernel images with the runtime the way nvcc's stubs do.

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
size 0, cudaMemcpyToSymbol of the real size fails). cudart.kernels._images reads them from
the image.

Standard library only.
"""

from __future__ import annotations

import ctypes

from ._images import FATBIN_WRAPPER_MAGIC, ImageError


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
        self.function = self._fn(
            cdll, "__cudaRegisterFunction", None, (v, v, cp, cp, i, v, v, v, v, v)
        )
        self.var = self._fn(cdll, "__cudaRegisterVar", None, (v, v, cp, cp, i, s, i, i))

    @staticmethod
    def _fn(cdll, name, restype, argtypes):
        fn = cdll[name]  # indexing: a private function object, argtypes not shared
        fn.restype = restype
        fn.argtypes = argtypes
        return fn


# Threads racing on a library's first registration may each make its entry points:
# equal, whole objects, each private to its caller; the one stored serves later calls.
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
