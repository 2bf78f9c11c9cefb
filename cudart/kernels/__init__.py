"""Load kernel images (fatbin, cubin, PTX) and launch their kernels from Python.

The runtime launches only functions it knows, and it learns them from host stubs
that nvcc writes into a program. A Python process has no such stubs, so
`load_module` makes the runtime know an image's kernels by one of two routes:

registration (`route="register"`), every runtime version
    The image is registered through the runtime's own `__cudaRegisterFatBinary`,
    `__cudaRegisterFunction`, `__cudaRegisterVar` and `__cudaRegisterFatBinaryEnd`,
    the calls nvcc's stubs make (see cudart.kernels._registration). A kernel is then a host
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

Launching: `Function.launch` packs arguments once per argument signature and passes a
preallocated launch configuration to cudaLaunchKernelExC (cudart.kernels._function,
cudart.kernels._launch). `Function.pack(*args)` packs them into a KernelArguments of their own,
which serves as `void **kernelParams` (graph kernel nodes, the checked
cudaLaunchKernel / cudaLaunchCooperativeKernel, which also take a tuple of values), and a
Function is accepted wherever C takes a device function: the checked functions' `func`
and the records' `func` members. Parameter types come from a declared signature
(`get_function(name, signature="float, float*, int")`), a C++ kernel's mangled name, or
the image's PTX (`.f32`, `.u32`, ...); where known, a value of the wrong kind is refused,
and where not, a Python float is (it could be a float, a double or an integer's bits).
Argument count and sizes are checked against the kernel's parameters
(cudaFuncGetParamInfo, 12.4+; the driver's cuFuncGetParamInfo serves older runtimes
where the driver has it).

C++ kernels: `get_function` takes a kernel's name as in the image (mangled) or, where
one kernel has it, its source name or signature (cudart.kernels._demangle, which carries a
demangler for the Itanium subset kernel names use); `Module.functions()` pairs each
name with its demangled signature.

The pieces, modules of this package: _images reads images, _registration and _routes
load them by each route, _module and _function are what a load gives, _launch packs
arguments (and _fastlaunch.c launches in C where built), _demangle reads C++ names;
cudart._convert converts streams and pointers as the checked functions do.
"""

from __future__ import annotations

from .._checked import call_error
from .._contract import exported
from .._convert import stream_handle
from .._loader import load_runtime
from .._serving import raw_module
from ..errors import CudartError, NameNotFoundError
from ._demangle import AmbiguousKernelNameError, demangle
from ._function import Function
from ._images import ImageError, image_kind, inspect_image, read_image
from ._launch import KernelArguments
from ._module import Global, Module
from ._routes import LibraryLoader, RegisteredLoader
from ._typed import TypedKernel, typed

__all__ = [
    "AmbiguousKernelNameError",
    "Function",
    "Global",
    "ImageError",
    "KernelArguments",
    "Module",
    "NameNotFoundError",
    "call_error",
    "demangle",
    "image_kind",
    "inspect_image",
    "load_module",
    "stream_handle",
    "TypedKernel",
    "typed",
]

ROUTES = ("auto", "register", "library")


def load_module(
    image,
    *,
    route: str = "auto",
    functions: list[str] | None = None,
    variables: dict[str, tuple[int, bool]] | None = None,
) -> Module:
    """Load a fatbin, cubin or PTX image (bytes, or a path to a file) into the runtime.

    `route` is "auto", "register" or "library" (see the module docstring).
    `functions` and `variables` ({name: (size, is_constant)}) add names the
    registration route cannot read from the image; the library route ignores them.
    """
    if route not in ROUTES:
        raise ValueError(f"route must be one of {ROUTES}, not {route!r}")
    kind, data = read_image(image)
    rt, cdll = raw_module(), load_runtime().cdll
    route = _route(route, rt, cdll)
    if route == "library":
        return Module(rt, kind, data, LibraryLoader(rt, cdll, data))
    return Module(rt, kind, data, RegisteredLoader(rt, cdll, data, functions, variables))


def _route(route: str, rt, cdll) -> str:
    """The route asked for, "auto" resolved: the documented library interface where
    the runtime has it, registration where that is the only way in."""
    has_library = exported(rt, cdll, "cudaLibraryLoadData")
    if route == "auto":
        return "library" if has_library else "register"
    if route == "library" and not has_library:
        raise CudartError(
            f"the library route needs cudaLibraryLoadData (CUDA 12.8+); the loaded runtime is "
            f"{load_runtime().version_text} with bindings {rt.__name__}: use route='register'"
        )
    return route
