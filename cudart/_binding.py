"""Lazy binding of a generated module's functions to the loaded libcudart.

A generated module hands its function table to bind_lazily() and installs the
returned __getattr__ (PEP 562). The first lookup of a name resolves the symbol, sets
argtypes/restype and stores the ctypes function in the module, so every later call is
a bare ctypes call with no Python wrapper in between.
"""

from __future__ import annotations

import threading
import warnings

from ._loader import format_version, load_runtime
from .errors import FunctionNotFoundError

FLAG_DEPRECATED = 1


class CudaDeprecationWarning(DeprecationWarning):
    """A function the CUDA headers mark deprecated was called."""


# Names of deprecated functions already warned about, by either layer: a function
# warns once per process whether it is called raw or checked.
_warned: set[str] = set()
_warned_lock = threading.Lock()


def warn_deprecated(name: str, replacement: str | None, stacklevel: int) -> None:
    if name in _warned:
        return
    with _warned_lock:
        if name in _warned:
            return
        _warned.add(name)
    message = f"{name} is deprecated in the CUDA runtime"
    if replacement:
        message += f"; use {replacement} instead"
    warnings.warn(message, CudaDeprecationWarning, stacklevel=stacklevel + 1)


def bind_lazily(namespace: dict, functions: dict, replacements: dict | None = None):
    """(__getattr__, __dir__) for a generated module. `replacements` names, for a
    deprecated function, what its header says to use instead."""
    module = namespace["__name__"]
    bindings_version = namespace["CUDA_VERSION"]
    replacements = replacements or {}

    def __getattr__(name: str):
        entry = functions.get(name)
        if entry is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        bound = _bind(name, entry, module, bindings_version, replacements.get(name))
        namespace[name] = bound
        return bound

    def __dir__():
        return sorted(set(namespace) | set(functions))

    return __getattr__, __dir__


def _bind(name: str, entry: tuple, module: str, bindings_version: int, replacement: str | None = None):
    symbol, restype, argtypes, flags = entry
    runtime = load_runtime()
    try:
        # Indexing (not getattr) gives a fresh function object: CDLL caches attribute
        # lookups, and two generated modules must not share one set of argtypes.
        fn = runtime.cdll[symbol]
    except AttributeError:
        return _missing(name, symbol, module, bindings_version, runtime)
    fn.restype = restype
    fn.argtypes = argtypes
    fn.__name__ = name
    if flags & FLAG_DEPRECATED:
        return _warn_once(name, fn, replacement)
    return fn


def _missing(name, symbol, module, bindings_version, runtime):
    via = "" if symbol == name else f" (symbol {symbol})"
    message = (
        f"{name}{via} is declared by the CUDA {format_version(bindings_version)} headers "
        f"({module}) but the loaded libcudart {runtime.version_text} ({runtime.path}) "
        "does not export it; it needs a newer CUDA runtime"
    )

    def unavailable(*args, **kwargs):
        raise FunctionNotFoundError(message)

    unavailable.__name__ = name
    unavailable.__doc__ = message
    return unavailable


def _warn_once(name: str, fn, replacement: str | None = None):
    def deprecated(*args):
        if name not in _warned:
            warn_deprecated(name, replacement, stacklevel=2)
        return fn(*args)

    deprecated.__name__ = name
    deprecated.__wrapped__ = fn
    return deprecated
