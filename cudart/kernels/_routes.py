"""The two ways an image's kernels become known to the runtime (see cudart.kernels).

A loader owns one loaded image and answers, by name, a kernel's handle and a global's
(symbol, device address, size); both routes answer alike, so Module and Function do
not care which loaded them.
"""

from __future__ import annotations

import atexit
import ctypes

from .._checked import call_error, check
from .._contract import exported
from .._lasterror import internal_calls
from ..errors import NameNotFoundError
from ._demangle import unknown_kernel
from ._images import ImageError, inspect_image
from ._registration import Registration


class RegisteredLoader:
    """The registration route: the runtime's own __cudaRegister* entry points."""

    route = "register"

    def __init__(self, rt, cdll, data, functions, variables):
        names, sizes = _names(data, functions, variables)
        self.rt = rt
        self.registration = Registration(cdll, data, names, sizes)
        self.sizes = sizes
        _live.add(self)
        if names:
            self._check_loadable(names[0])

    def _check_loadable(self, name):
        # Loading is lazy: without this, an image the device cannot run would only
        # fail at its first launch.
        rt = self.rt
        attrs = rt.cudaFuncAttributes()
        status = rt.cudaFuncGetAttributes(ctypes.byref(attrs), self.registration.functions[name])
        if status:
            self.close()
            raise call_error(rt, f"loading the image (cudaFuncGetAttributes of {name!r})", status)

    def find(self, name: str) -> int | None:
        """The kernel `name`'s handle, None where the image has no kernel of that name."""
        return self.registration.functions.get(name)

    def function(self, name: str) -> int:
        handle = self.find(name)
        if handle is None:
            raise unknown_kernel(name, self.registration.functions)
        return handle

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
        with internal_calls(rt):  # a look-up of cudart's (cudart._lasterror)
            found = rt.cudaGetSymbolAddress(ctypes.byref(address), symbol)
            found = found or rt.cudaGetSymbolSize(ctypes.byref(size), symbol)
        check(rt, "cudaGetSymbolAddress / cudaGetSymbolSize", found)
        return symbol, address.value or 0, size.value

    def names(self):
        return tuple(self.registration.functions)

    def close(self):
        _live.discard(self)
        self.registration.unregister()


def _names(data, functions, variables):
    """The kernel names and {global: (size, is_constant)} to register: the image's
    own, plus those the caller adds (the only source for an unreadable image)."""
    info = inspect_image(data)
    if info.functions is None and not functions:
        raise ImageError(
            f"{info.note}. Rebuild the image with "
            "nvcc --compress-mode=speed (LZ4) or --no-compress, pass functions=[...] (and "
            "variables={name: (size, is_constant)}), or use route='library' (CUDA 12.8+)"
        )
    names = list(info.functions or [])
    names += [n for n in functions or () if n not in names]
    sizes = dict(info.variables)
    sizes.update(variables or {})
    return names, sizes


class LibraryLoader:
    """The library route: cudaLibraryLoadData and friends (CUDA 12.8+)."""

    route = "library"

    def __init__(self, rt, cdll, data):
        self.rt = rt
        self.cdll = cdll
        self._image = data  # kept alive for the library's lifetime, like the registration's
        library = ctypes.c_void_p()
        check(
            rt,
            "cudaLibraryLoadData",
            rt.cudaLibraryLoadData(ctypes.byref(library), data, None, None, 0, None, None, 0),
        )
        self.library = library
        _live.add(self)

    def find(self, name: str) -> int | None:
        """The kernel `name`'s handle, None where the library has no kernel of that
        name: one look-up, no listing."""
        rt = self.rt
        kernel = ctypes.c_void_p()
        # A miss is an error the runtime records (cudaErrorSymbolNotFound): consumed
        # (cudart._lasterror), or where the program's own error is pending, which a
        # miss would replace, not risked: the listing cannot miss.
        with internal_calls(rt) as pending:
            if pending:
                return self._listed(name)
            status = rt.cudaLibraryGetKernel(ctypes.byref(kernel), self.library, name.encode())
        if status == rt.cudaErrorSymbolNotFound:
            return None
        check(rt, f"cudaLibraryGetKernel({name!r})", status)
        return kernel.value or 0

    def _listed(self, name: str) -> int | None:
        for kernel in self._kernels():
            if self._name(kernel) == name:
                return kernel or 0
        return None

    def function(self, name: str) -> int:
        handle = self.find(name)
        if handle is None:
            raise unknown_kernel(name, self.names())
        return handle

    def variable(self, name: str):
        rt = self.rt
        address, size = ctypes.c_void_p(), ctypes.c_size_t()
        # A __managed__ global is a miss of cudaLibraryGetGlobal, and an unknown name a
        # miss of both: errors of cudart's trying, consumed (cudart._lasterror).
        with internal_calls(rt):
            status = rt.cudaLibraryGetGlobal(
                ctypes.byref(address), ctypes.byref(size), self.library, name.encode()
            )
            if status == rt.cudaErrorSymbolNotFound and exported(
                rt, self.cdll, "cudaLibraryGetManaged"
            ):
                status = rt.cudaLibraryGetManaged(
                    ctypes.byref(address), ctypes.byref(size), self.library, name.encode()
                )
        if status == rt.cudaErrorSymbolNotFound:
            raise NameNotFoundError(
                f"no __device__/__constant__/__managed__ global {name!r} in the image"
            )
        check(rt, f"cudaLibraryGetGlobal({name!r})", status)
        return None, address.value or 0, size.value

    def names(self):
        return tuple(self._name(k) for k in self._kernels())

    def _kernels(self):
        rt = self.rt
        count = ctypes.c_uint()
        with internal_calls(rt):  # the listing of cudart's (cudart._lasterror)
            status = rt.cudaLibraryGetKernelCount(ctypes.byref(count), self.library)
        check(rt, "cudaLibraryGetKernelCount", status)
        kernels = (ctypes.c_void_p * count.value)()
        with internal_calls(rt):
            status = rt.cudaLibraryEnumerateKernels(kernels, count.value, self.library)
        check(rt, "cudaLibraryEnumerateKernels", status)
        return list(kernels)

    def _name(self, kernel) -> str:
        name = ctypes.c_char_p()
        with internal_calls(self.rt):
            status = self.rt.cudaFuncGetName(ctypes.byref(name), kernel)
        check(self.rt, "cudaFuncGetName", status)
        return (name.value or b"").decode()

    def close(self):
        _live.discard(self)
        if self.library is not None:
            library, self.library = self.library, None
            check(self.rt, "cudaLibraryUnload", self.rt.cudaLibraryUnload(library))


# Loaded images the process has not closed: unloaded at exit, before libcudart's own
# teardown, which would otherwise read registration memory Python has freed.
# Threads: one add and one discard per loader, atomic set operations.
_live: set = set()


@atexit.register
def _close_all():
    for loader in list(_live):
        try:
            loader.close()
        except Exception:
            pass
