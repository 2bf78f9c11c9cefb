"""Lazy binding of a generated module's functions to the loaded libcudart.

A raw module hands its function table to bind_on_first_lookup() and installs the
returned __getattr__ (PEP 562). The first lookup of a name resolves the symbol the
module's SYMBOLS names, sets argtypes/restype and stores the ctypes function in the
module, so every later call is a bare ctypes call with no Python wrapper in between.
What a raw module defines is written down in cudart._contract.
"""

from __future__ import annotations

import ctypes
import os
import threading
import warnings

from ._backend import compiled_for, compiled_function
from ._contract import DEFAULT_LIBRARY, is_deprecated, library_of_namespace, unpack
from ._loader import facts, format_version, load_library, release_text
from .errors import BindingsVersionError, FunctionNotFoundError

# For type checkers only: importing typing costs milliseconds `import cudart` avoids.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The per-thread default stream switch: ours, and cuda-python's, honoured so that one
# setting serves a process that uses both bindings.
PER_THREAD_ENV = "CUDART_PER_THREAD_DEFAULT_STREAM"
CUDA_PYTHON_PER_THREAD_ENV = "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})

_per_thread: bool | None = None


def per_thread_default_stream() -> bool:
    """Whether public names call their per-thread default stream symbols
    (cudaMemcpy -> cudaMemcpy_ptds), as C built with -DCUDA_API_PER_THREAD_DEFAULT_STREAM does.

    On when $CUDART_PER_THREAD_DEFAULT_STREAM or cuda-python's
    $CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM is true (1, true, yes, on; 0, false, no,
    off for false; unset or empty: not given). Two given values that disagree are a
    ValueError, as is any other value. Read once, when first asked (the generated
    modules ask on import): a function already bound keeps its symbol, so changing the
    environment later changes nothing.
    """
    global _per_thread
    # Threads racing on the first call each read the same environment: one answer.
    if _per_thread is None:
        _per_thread = per_thread_from_environment(os.environ)
    return _per_thread


def per_thread_from_environment(environ) -> bool:
    """The switch as `environ` sets it (see per_thread_default_stream)."""
    given: dict[str, bool] = {}
    for name in (PER_THREAD_ENV, CUDA_PYTHON_PER_THREAD_ENV):
        value = environ.get(name, "").strip()
        if not value:
            continue
        if value.lower() in _TRUE:
            given[name] = True
        elif value.lower() in _FALSE:
            given[name] = False
        else:
            raise ValueError(
                f"${name}={value!r}: expected one of 1, true, yes, on (per-thread default "
                "stream) or 0, false, no, off (legacy default stream)"
            )
    if len(set(given.values())) > 1:
        shown = " and ".join(f"${n}={environ[n].strip()!r}" for n in given)
        raise ValueError(
            f"{shown} disagree about the per-thread default stream: unset one, or set both alike"
        )
    return any(given.values())


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


def bind_on_first_lookup(
    namespace: dict,
    functions: dict,
    replacements: dict | None = None,
    docs: dict | None = None,
):
    """(__getattr__, __dir__) for a raw module whose _FUNCTIONS is `functions`.
    `replacements` names, for a deprecated function, what its header says to use
    instead; `docs` gives each function's __doc__ (the module's _DOCS)."""
    module = namespace["__name__"]
    bindings_version = namespace["CUDA_VERSION"]
    library = library_of_namespace(namespace)
    # The map in force (legacy or per-thread symbols): one place decides what is bound.
    symbols = namespace["SYMBOLS"]
    inlines = namespace.get("_PER_THREAD_INLINES", {})
    replacements = replacements or {}
    docs = docs or {}

    def __getattr__(name: str):
        entry = functions.get(name)
        if entry is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        _, restype, argtypes, flags = unpack(entry)
        bound = bind_symbol(
            name,
            symbols[name],
            restype,
            argtypes,
            module,
            bindings_version,
            deprecated=is_deprecated(flags),
            replacement=replacements.get(name),
            doc=docs.get(name),
            library=library,
            inline=inlines.get(symbols[name]),
        )
        # Threads that race on a name's first lookup each bind it (both results are
        # whole, equivalent functions); the first published is every caller's, so
        # `rt.name is rt.name` holds for all of them.
        return namespace.setdefault(name, bound)

    def __dir__():
        return sorted(set(namespace) | set(functions))

    return __getattr__, __dir__


def bind_symbol(
    name: str,
    symbol: str,
    restype,
    argtypes,
    module: str,
    bindings_version: int,
    *,
    deprecated: bool = False,
    replacement: str | None = None,
    doc: str | None = None,
    library: str = DEFAULT_LIBRARY,
    storage: bool = False,
    outputs: tuple[int, ...] = (),
    inline: tuple[str, int, int, int] | None = None,
):
    """The loaded libcudart's `symbol` as the function `name` (the compiled backend's
    where it is built, cudart._backend; else ctypes with these restype and argtypes),
    or, where the library does not export it, a function raising
    FunctionNotFoundError. `doc`, if given, is a ctypes function's __doc__, which help()
    shows (a compiled function has its prototype as its own). `library` is the raw
    module's LIBRARY (cudart._contract): another library than libcudart (libnvrtc) binds
    the same way, through ctypes. `storage`: for the checked layer, whose POINTER(T)
    argtypes take storage objects by their memory, and `outputs` (compiled only) the C
    parameters the call provides and returns after the status (cudart._backend.spec).
    `inline`: the raw module's _PER_THREAD_INLINES entry of a per-thread symbol the
    header defines inline: where the library lacks `symbol`, the legacy one it calls,
    with its flags rewrite (`per_thread_inline`)."""
    if inline is not None:
        found = []
        for candidate in (symbol, inline[0]):
            found.append(
                bind_symbol(
                    name,
                    candidate,
                    restype,
                    argtypes,
                    module,
                    bindings_version,
                    deprecated=deprecated,
                    replacement=replacement,
                    doc=doc,
                    library=library,
                    storage=storage,
                    outputs=outputs,
                )
            )
            if not getattr(found[0], "missing", False):
                return found[0]
        return per_thread_inline(found[1], inline, outputs)
    runtime = load_library(library)
    # A driver serves every older API (its old symbols stay exported): only another
    # library's major version fixes the ABI of the modules that call it.
    served_across_majors = facts(library)["serve"] == "driver"
    major_scale = runtime.scale[0]
    if not served_across_majors and (
        bindings_version // major_scale != runtime.version // major_scale
    ):
        return _other_major(name, module, bindings_version, runtime, library)
    compiled = compiled_for(library, bindings_version)
    if compiled is not None:
        # The same symbol of the same dlopen()ed library, called without ctypes.
        fn = compiled_function(
            compiled, name, symbol, restype, argtypes, runtime.cdll._handle, storage, outputs
        )
        if fn is None:
            return _missing(name, symbol, module, bindings_version, runtime, library)
        if not deprecated:
            return fn
        warning = _warn_once(name, fn, replacement)
        warning.__doc__ = fn.__doc__  # its own: the prototype and the header's docs
        warning.__module__ = module
        return warning
    try:
        # Indexing (not getattr) gives a fresh function object: CDLL caches attribute
        # lookups, and two generated modules must not share one set of argtypes.
        fn = runtime.cdll[symbol]
    except AttributeError:
        return _missing(name, symbol, module, bindings_version, runtime, library)
    fn.restype = restype
    fn.argtypes = argtypes
    fn.__name__ = name
    bound = _warn_once(name, fn, replacement) if deprecated else fn
    if doc is not None:
        # A ctypes function object takes these as attributes: help() then shows the
        # C prototype and the header's docs, under the generated module's name.
        bound.__doc__ = doc
        bound.__module__ = module
    return bound


def _missing(name, symbol, module, bindings_version, runtime, library=DEFAULT_LIBRARY):
    via = "" if symbol == name else f" (symbol {symbol})"
    row = facts(library)  # how messages name the module's LIBRARY (cudart._contract)
    message = (
        f"{name}{via} is declared by the {release_text(row, bindings_version)} headers "
        f"({module}) but the loaded {row['library']} {runtime.version_text} ({runtime.path}) "
        f"does not export it; it needs a newer {row['provider']}"
    )

    def unavailable(*args, **kwargs):
        raise FunctionNotFoundError(message)

    unavailable.__name__ = name
    unavailable.__doc__ = message
    setattr(unavailable, "missing", True)  # noqa: B010  # bind_symbol's inline fallback
    return unavailable


def per_thread_inline(legacy: Any, inline: tuple[str, int, int, int], outputs: tuple[int, ...]):
    """The bound legacy function as the per-thread inline the header defines (the raw
    module's _PER_THREAD_INLINES: cuda.h's cuGetProcAddress_v2_ptsz): flags naming none of
    the `mask` flags get `bit` (CU_GET_PROC_ADDRESS_DEFAULT becomes
    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM), as the inline's body does. The flags'
    position among the arguments leaves out the C parameters the call provides itself
    (`outputs`, the compiled backend's). A flags argument that is no integer is passed as
    it is: ctypes or the compiled call judges it, as for any argument."""
    _, index, mask, bit = inline
    position = index - sum(1 for o in outputs if o < index)

    def call(*args: Any) -> Any:
        if len(args) > position:
            flags = args[position]
            if isinstance(flags, ctypes._SimpleCData):
                flags = flags.value
            if isinstance(flags, int) and not isinstance(flags, bool) and not flags & mask:
                args = (*args[:position], flags | bit, *args[position + 1 :])
        return legacy(*args)

    call.__name__ = getattr(legacy, "__name__", "per_thread_inline")
    call.__doc__ = legacy.__doc__
    call.__wrapped__ = legacy  # type: ignore[attr-defined]  # functools' convention
    return call


def _other_major(name, module, bindings_version, runtime, library=DEFAULT_LIBRARY):
    # A module imported directly (cudart.sys_13000) on a runtime of another major
    # version: its structs and argument types are not that runtime's, and C would
    # write past a struct sized for the other ABI.
    row = facts(library)
    if row["axis"] == "cuda":
        message = (
            f"{name} of the CUDA {format_version(bindings_version)} bindings ({module}) "
            f"cannot call the loaded libcudart {runtime.version_text} ({runtime.path}): "
            "CUDA's ABI changes across major versions; use cudart.sys, or the bindings of "
            f"CUDA {runtime.version // 1000}"
        )
    else:
        # An own-axis library's ABI is its own major's (NCCL 2.x).
        message = (
            f"{name} of the {release_text(row, bindings_version)} bindings ({module}) "
            f"cannot call the loaded {row['library']} {runtime.version_text} "
            f"({runtime.path}): its ABI changes across major versions; use the bindings "
            f"of {row['provider']} {runtime.version // runtime.scale[0]}"
        )

    def wrong_major(*args, **kwargs):
        raise BindingsVersionError(message)

    wrong_major.__name__ = name
    wrong_major.__doc__ = message
    return wrong_major


def _warn_once(name: str, fn, replacement: str | None = None):
    def deprecated(*args):
        if name not in _warned:
            warn_deprecated(name, replacement, stacklevel=2)
        return fn(*args)

    deprecated.__name__ = name
    deprecated.__wrapped__ = fn  # type: ignore[attr-defined]  # functools' convention
    return deprecated
