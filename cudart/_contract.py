"""The contract between the generated modules and the runtime package.

The generator (templates/sys_module.py.j2, generator/render/base.py) writes what this
module describes, and the runtime package reads it only through here, so a change to
either side starts in this file. Standard library only, and importing it loads no
library: the generator imports it too.

A raw module (`cudart.sys_<version>`) defines

    CUDA_VERSION        the version its headers are from, e.g. 12050
    _FUNCTIONS          public name -> (symbol, restype, argtypes, flags): ENTRY_FIELDS
    SYMBOLS_LEGACY      public name -> the symbol C calls when built as usual
    SYMBOLS_PER_THREAD  the same under -DCUDA_API_PER_THREAD_DEFAULT_STREAM
    SYMBOLS             whichever of the two is in force (per_thread_default_stream())
    _REPLACEMENTS       deprecated name -> what its header says to use instead
    _DOCS               public name -> the bound function's __doc__ (prototype, header docs)
    __getattr__, __dir__  from cudart._binding.bind_on_first_lookup
    LIBRARY             only where it is not libcudart: the library its functions bind
                        to, by its header family's name ("nvrtc": cudart._loader.load_library)

For type checkers only (under `if TYPE_CHECKING:`), a raw module also declares each
function with parameters typed by what its ctypes argtype accepts (RawPointer below for
c_void_p), and an `__all__` of everything but the functions.

A checked module (`cudart.checked_<version>`) binds its ctypes functions through
cudart._checked.bind_on_first_call, under the symbols its raw module's SYMBOLS names.
"""

from __future__ import annotations

# For type checkers only: importing typing costs milliseconds `import cudart` avoids.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from _ctypes import CFuncPtr, _CArgObject
    from ctypes import Array, _Pointer, c_char_p, c_void_p
    from types import ModuleType
    from typing import Any

    # What a raw function's pointer, handle or array argument (argtype c_void_p)
    # accepts: an int address, None (NULL), bytes, ctypes.byref(x), a ctypes array,
    # pointer or function pointer, a c_void_p (our handle classes) or c_char_p. Not a
    # ctypes scalar or struct itself (pass byref(x)), and not str.
    RawPointer = (
        int
        | None
        | bytes
        | c_void_p
        | c_char_p
        | Array[Any]
        | _Pointer[Any]
        | CFuncPtr
        | _CArgObject
    )

# A raw module without LIBRARY binds to libcudart.
DEFAULT_LIBRARY = "runtime"

# What the generated family table (cudart._versions FAMILIES, rendered from
# families/<name>.toml by generator/families.py runtime_table) holds for each family:
# the runtime reads these keys and no others.
#   raw, checked      the modules' name prefixes: cudart.<raw>_<ver>, <checked>_<ver>
#   compiled          the compiled backend's extension prefix (cudart.<compiled>_<major>),
#                     or None where ctypes alone serves the family
#   serve             how a loaded library picks its bindings: "runtime", "own", "driver"
#   axis, scale       its version axis ("cuda", or "own": the library's own releases)
#                     and (major_scale, minor_scale) of its numbers: CUDA_SCALE, or the
#                     descriptor's (NCCL's 2.21 is 22100: (10000, 100))
#   provider, library what messages call the library and what a missing function needs
#   env, wheel, wheel_libraries, dist_prefix, sonames, dlls, toolkit
#                     the search for the library (cudart._loader)
#   install           the sentence the not-found error ends with
#   missing_error     the cudart.errors class that error is
#   probe, probe_form, probe_unsigned, probe_failure, probe_symbols
#                     how the loaded library says its version (cudart._loader)
FAMILY_KEYS = (
    "raw",
    "checked",
    "compiled",
    "serve",
    "axis",
    "scale",
    "provider",
    "library",
    "env",
    "wheel",
    "wheel_libraries",
    "dist_prefix",
    "sonames",
    "dlls",
    "toolkit",
    "install",
    "missing_error",
    "probe",
    "probe_form",
    "probe_unsigned",
    "probe_failure",
    "probe_symbols",
)


# CUDA's version numbers (CUDART_VERSION): major * 1000 + minor * 10 (12.5 is 12050).
CUDA_SCALE = (1000, 10)


def library_of_namespace(namespace: dict) -> str:
    """Which library a raw module's functions bind to (its LIBRARY, or libcudart)."""
    return namespace.get("LIBRARY", DEFAULT_LIBRARY)


# The layout of one _FUNCTIONS entry, in order.
ENTRY_FIELDS = ("symbol", "restype", "argtypes", "flags")

# Bits of an entry's flags.
FLAG_DEPRECATED = 1


def unpack(entry: tuple) -> tuple[str, Any, tuple, int]:
    """(symbol, restype, argtypes, flags) of a _FUNCTIONS entry."""
    symbol, restype, argtypes, flags = entry
    return symbol, restype, argtypes, flags


def is_deprecated(flags: int) -> bool:
    return bool(flags & FLAG_DEPRECATED)


def declares(raw_module: ModuleType, name: str) -> bool:
    """Whether the raw module's headers declare the function `name`.

    Declared is not exported: a 12.8 module on a 12.5 runtime declares functions the
    library lacks (see `exported`).
    """
    return name in vars(raw_module).get("_FUNCTIONS", ())


def symbol_of(raw_module: ModuleType, name: str) -> str | None:
    """The symbol `name` binds to under the per-thread switch in force, or None if the
    module does not declare it."""
    return vars(raw_module).get("SYMBOLS", {}).get(name)


def exported(raw_module: ModuleType, cdll: Any, name: str) -> bool:
    """Whether the library `cdll` exports the symbol `name` would bind to."""
    symbol = symbol_of(raw_module, name)
    if symbol is None:
        return False
    try:
        cdll[symbol]
    except AttributeError:
        return False
    return True


# How a family's status codes name their exception classes: the generator names them in
# the checked modules' type stubs (generator/status.py), cudart._checked makes them at
# run time, and both call these.


def camel(name: str) -> str:
    """CUDA_ERROR_INVALID_VALUE -> CudaErrorInvalidValue, cudaErrorMemoryAllocation ->
    CudaErrorMemoryAllocation."""
    if "_" in name or name.isupper():
        return "".join(w.capitalize() for w in name.split("_") if w)
    return name[:1].upper() + name[1:]


def status_prefix_class(success: str) -> str:
    """The exception base a status enum's success enumerator names: its prefix as a word
    + "Error" (cudaSuccess -> CudaError, NVRTC_SUCCESS -> NvrtcError)."""
    stem = success[: -len("success")] if success.lower().endswith("success") else success
    return camel(stem.rstrip("_")) + "Error"


def status_class_name(enumerator: str, success: str, base: str) -> str:
    """The class of one code: the base's name + the code's words after the prefix
    (NVRTC_ERROR_OUT_OF_MEMORY -> NvrtcErrorOutOfMemory; the driver's
    CUDA_ERROR_INVALID_VALUE under the base CudaDriverError -> CudaDriverErrorInvalidValue)."""
    prefix = status_prefix_class(success)
    words = camel(enumerator)
    return base + (words[len(prefix) :] if words.startswith(prefix) else words)
