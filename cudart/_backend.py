"""Which backend calls C: the compiled extension (cudart._fast_<ver>) or ctypes.

Both are rendered from one model: the raw modules' _FUNCTIONS (ctypes) and the
generated C of generator/render/fast.py, compiled when the package is built: one
extension per header family and CUDA major (cudart._fast_12, cudart._fast_driver_13),
whose view of a version, cudart._fast_12050, is a module of exactly that version's
functions (cudart._views finds it: the extension's view(12050)). Where the extension of
a version is present, its functions are what the raw module binds (and what the
checked layer calls); ctypes serves where it is absent, or when asked:

    CUDART_BACKEND=ctypes     ctypes only
    CUDART_BACKEND=compiled   the compiled extension, or ImportError naming the missing one
    unset or empty            compiled where built, else ctypes

Read once, when first asked. `backend()` (cudart.backend) says which is in force for the
loaded runtime's bindings. Standard library only.

A free-threaded interpreter (3.13t) never imports an extension built for the limited API
(`.abi3.so`): it still lists that suffix among its own (CPython issue 120901), but such a
module, made for a GIL build's object layout, crashes in its init there. Its own build
(`.cpython-313t-*.so`, setup.py) is found first where present; where only the abi3 one
is, ctypes serves, with a warning naming the file (an ImportError where
$CUDART_BACKEND=compiled asks for the compiled one).
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
import os
import sys
import threading
import warnings

from . import _fastproto
from ._contract import DEFAULT_LIBRARY
from ._serving import raw_module

BACKEND_ENV = "CUDART_BACKEND"
COMPILED = "compiled"
CTYPES = "ctypes"

# The type of ctypes.byref(x), by which the compiled conversions recognize one (they read
# its address where they found where it keeps it, else ask address_of).
BYREF_TYPE = type(ctypes.byref(ctypes.c_int()))

_choice: str | None = None
_modules: dict[str, object] = {}
_lock = threading.Lock()


def address_of(obj: object) -> int:
    """The address ctypes passes for `obj` as a `void *` argument (byref(), an object
    with _as_parameter_): the compiled conversions' fallback, raising as ctypes does."""
    return ctypes.cast(obj, ctypes.c_void_p).value or 0  # type: ignore[arg-type]


def requested() -> str | None:
    """What $CUDART_BACKEND asks for (None: not asked), validated."""
    global _choice
    if _choice is None:
        value = os.environ.get(BACKEND_ENV, "").strip().lower()
        if value not in ("", COMPILED, CTYPES):
            raise ValueError(
                f"${BACKEND_ENV}={value!r}: expected {COMPILED!r} or {CTYPES!r} (or unset)"
            )
        _choice = value
    return _choice or None


def compiled_module(cuda_version: int):
    """The compiled view of the bindings of `cuda_version` (cudart._fast_<ver>, a view
    of its major's extension), or None where ctypes serves them (not built, or
    $CUDART_BACKEND=ctypes)."""
    return compiled_for(DEFAULT_LIBRARY, cuda_version)


def compiled_for(library: str, cuda_version: int):
    """The compiled extension serving the raw module of `library` (a raw module's
    LIBRARY, cudart._contract) at `cuda_version`, or None where ctypes serves it: the
    compiled backend covers the families whose descriptor says `compiled` (libcudart
    and libcuda; NVRTC's calls are dominated by the compile)."""
    from ._loader import facts

    prefix = facts(library)["compiled"]
    return None if prefix is None else _extension(f"cudart.{prefix}_{cuda_version}")


def launcher_module():
    """cudart.kernels._fastlaunch (Function.launch in C), or None where the Python launch
    serves: not built, or $CUDART_BACKEND=ctypes."""
    return _extension("cudart.kernels._fastlaunch")


def fields_module():
    """cudart._fields (record integer members range-checked in C, cudart._layout), or None
    where the Python descriptors serve: not built, or $CUDART_BACKEND=ctypes."""
    return _extension("cudart._fields")


# Whether this interpreter is a free-threaded build (it cannot take a limited-API build):
# its ABI flags say so ("t"), as sysconfig's Py_GIL_DISABLED does, without the millisecond
# that importing sysconfig adds to `import cudart`.
FREE_THREADED = "t" in getattr(sys, "abiflags", "")
LIMITED_API_SUFFIX = ".abi3.so"


def _extension(name: str):
    """The compiled extension `name`, imported once, or None (see the module doc)."""
    found = _modules.get(name, _modules)
    if found is not _modules:
        return found
    with _lock:
        found = _modules.get(name, _modules)  # another thread's, while this one waited
        if found is not _modules:
            return found
        asked = requested()
        module = None
        if asked != CTYPES:
            try:
                refuse_foreign_build(name)
                module = importlib.import_module(name)
            except ForeignBuild as exc:
                if asked == COMPILED:
                    raise ImportError(f"${BACKEND_ENV}=compiled, but {exc}") from None
                warnings.warn(f"{exc}; the ctypes backend serves", RuntimeWarning, stacklevel=2)
            except ImportError as exc:
                if asked == COMPILED:
                    raise ImportError(
                        f"${BACKEND_ENV}=compiled, but {name} is not built ({exc}); build it "
                        "with `pip install .` (or `make setup`) where a C compiler is present"
                    ) from exc
        _modules[name] = module
        return module


class ForeignBuild(ImportError):
    """The extension found was built for another kind of interpreter."""


def refuse_foreign_build(name: str) -> None:
    """Raise ForeignBuild where importing `name` would load a limited-API build into a
    free-threaded interpreter (see the module doc); the file is found, not loaded."""
    if not FREE_THREADED:
        return
    spec = importlib.util.find_spec(name)
    origin = spec.origin if spec is not None else None
    if origin and origin.endswith(LIMITED_API_SUFFIX):
        raise ForeignBuild(
            f"{origin} is a limited-API (abi3) build for an interpreter with a GIL, which "
            "a free-threaded Python cannot load (it would crash); build the compiled "
            "backend with this interpreter (`python setup.py build_ext --inplace` or "
            "`pip install .`) for its own extensions"
        )


def backend() -> str:
    """'compiled' or 'ctypes': which backend calls the loaded runtime's functions."""
    return COMPILED if compiled_module(raw_module().CUDA_VERSION) is not None else CTYPES


def storage_mask(argtypes) -> int:
    """Bit i set where argtype i is a POINTER(T): the checked layer passes storage
    there, which a ctypes object always is by its own memory (cudart/_fastcall.h)."""
    mask = 0
    for i, argtype in enumerate(argtypes):
        if isinstance(argtype, type) and issubclass(argtype, ctypes._Pointer):
            mask |= 1 << i
    return mask


def spec(argtypes, outputs: tuple[int, ...] = ()) -> bytes:
    """A compiled variant's spec (cudart/_fastproto.py): the storage mask of `argtypes`,
    and the C parameters at `outputs` (each a POINTER to a ctypes scalar) made the
    call's own, their values returned after the status."""
    codes: dict[int, str] = {}
    outs = 0
    for i in outputs:
        pointee = getattr(argtypes[i], "_type_", None)
        code = getattr(pointee, "_type_", None)
        if not isinstance(code, str) or code not in _fastproto.OUTPUT_CODES:
            raise TypeError(f"argument {i + 1}: {argtypes[i]!r} is no pointer to a ctypes scalar")
        codes[i] = code
        outs |= 1 << i
    return _fastproto.spec(storage_mask(argtypes) & ~outs, outs, codes)


def compiled_function(
    module,
    name: str,
    symbol: str,
    restype,
    argtypes,
    handle: int,
    storage: bool = False,
    outputs: tuple[int, ...] = (),
):
    """The compiled `name` bound to `symbol` of the library dlopen()ed as `handle`, or
    None where it does not export it. `storage`: the checked layer's variant, whose
    POINTER(T) arguments (`argtypes`) take storage objects by their memory; `outputs`:
    C parameters the call provides itself and returns after the status (`spec`)."""
    if not module.bind(name, symbol, handle):
        return None
    fn = getattr(module, name)
    if storage and (outputs or storage_mask(argtypes)):
        fn = module.variant(name, spec(argtypes, outputs))
    if isinstance(restype, type) and issubclass(restype, (ctypes.Structure, ctypes.Union)):
        # A record returned by value comes back as its bytes: ctypes returns the record.
        from_bytes = restype.from_buffer_copy
        compiled = fn

        def record_result(*args):
            return from_bytes(compiled(*args))

        record_result.__name__ = name
        record_result.__doc__ = compiled.__doc__
        record_result.__wrapped__ = compiled  # type: ignore[attr-defined]  # functools' convention
        return record_result
    return fn
