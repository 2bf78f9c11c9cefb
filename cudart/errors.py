"""Errors of the cudart package itself (not CUDA error codes)."""

import threading


class CudartError(Exception):
    """Base of every error this package raises about finding or binding the runtime."""


class LibraryNotFoundError(CudartError, ImportError):
    """No libcudart could be found or loaded; the message lists every place tried."""


class FunctionNotFoundError(CudartError, AttributeError):
    """A function the bindings declare is not exported by the loaded libcudart.

    Raised when the function is called, so code that merely mentions a newer function
    still imports on an older runtime.
    """


class BindingsVersionError(CudartError, ImportError):
    """No generated bindings fit the loaded runtime, or a forced version does not exist."""


class HandleDestroyedError(CudartError, ValueError):
    """A handle object that a checked destroy or free (cudaStreamDestroy, cudaFreeArray,
    ...) ended was passed to the checked API again.

    Raised before the call, so C never sees the dangling handle. `kind` is the handle's
    C type, `address` its address, `destroyed_by` the function that ended it and
    `parameter` where it was passed. Only the object the destroy was given carries the
    mark: an int, or another handle object made of the same address, is the caller's
    promise, as in C.
    """

    def __init__(self, kind: str, address: int, destroyed_by: str, parameter: str) -> None:
        super().__init__(kind, address, destroyed_by, parameter)
        self.kind = kind
        self.address = address
        self.destroyed_by = destroyed_by
        self.parameter = parameter

    def __str__(self) -> str:
        return (
            f"'{self.parameter}' is the {self.kind} {self.address:#x} that "
            f"{self.destroyed_by} destroyed: a destroyed handle cannot be used again"
        )


class StatusError(Exception):
    """An error code a C library returned: `code` (the status enum's member, or an int),
    `name` and `message` (what the library says of it). The base of CudaError and
    NvrtcError, which differ in the library and the enum."""

    def __init__(self, code, name: str = "", message: str = "") -> None:
        super().__init__(code, name, message)
        self.code = code
        self.name = name
        self.message = message

    def __str__(self) -> str:
        return f"{self.name} ({int(self.code)}): {self.message}"


class CudaError(StatusError):
    """A CUDA runtime call returned an error code.

    `code` is the cudaError_t member (an int where the bindings do not know the code),
    `name` and `message` what cudaGetErrorName and cudaGetErrorString say of it. Each
    code has its own subclass, named after it: cudaErrorMemoryAllocation raises
    cudart.CudaErrorMemoryAllocation.
    """


class CudaDriverError(StatusError):
    """A CUDA driver API call (cudart.driver) returned an error code.

    `code` is the CUresult member (an int where the bindings do not know the code),
    `name` and `message` what cuGetErrorName and cuGetErrorString say of it (the
    enumerator's name and cuda.h's description of it where the driver cannot say: a
    stub libcuda).
    Each code has its own subclass: CUDA_ERROR_INVALID_VALUE raises
    cudart.driver.CudaDriverErrorInvalidValue.
    """


class DriverNotFoundError(LibraryNotFoundError):
    """No libcuda.so.1 could be loaded: the driver API needs an NVIDIA driver. The
    message lists every place tried."""


class NameNotFoundError(CudartError, LookupError):
    """A loaded kernel image (cudart.kernels) has no kernel or global of that name."""


class NvrtcNotFoundError(LibraryNotFoundError):
    """No libnvrtc could be found or loaded (cudart.compile needs it); the message says
    how to install it and lists every place tried."""


class NvrtcError(StatusError):
    """An NVRTC call returned an error code.

    `code` is the nvrtcResult member (an int where the bindings do not know it), `name`
    its enumerator name and `message` what nvrtcGetErrorString says of it. Each code
    has its own subclass: NVRTC_ERROR_INVALID_OPTION raises NvrtcErrorInvalidOption.
    """


class NvjitlinkNotFoundError(LibraryNotFoundError):
    """No libnvJitLink could be found or loaded (cudart.link needs it); the message says
    how to install it and lists every place tried."""


class NvjitlinkError(StatusError):
    """An nvJitLink call returned an error code.

    `code` is the nvJitLinkResult member (an int where the bindings do not know it) and
    `name` its enumerator name; nvJitLink has no message function, so `message` is empty
    unless a caller adds the link's error log. Each code has its own subclass:
    NVJITLINK_ERROR_INVALID_INPUT raises NvjitlinkErrorInvalidInput.
    """


class LinkError(CudartError):
    """nvJitLink could not link the inputs (cudart.link).

    `log` is nvJitLink's error log, `options` the options linked with and `status`
    the NvjitlinkError the failing call raised.
    """

    def __init__(
        self, message: str, log: str, options: tuple[str, ...], status: Exception | None = None
    ) -> None:
        super().__init__(message)
        self.log = log
        self.options = options
        self.status = status


class CompileError(CudartError):
    """NVRTC could not compile a program (cudart.compile).

    `log` is NVRTC's whole program log, `options` the options compiled with, `line`
    the source line the log's first error points at (None where it names none) and
    `line_number` its number (1-based).
    """

    def __init__(
        self,
        message: str,
        log: str,
        options: tuple[str, ...],
        line: str | None = None,
        line_number: int | None = None,
    ) -> None:
        super().__init__(message)
        self.log = log
        self.options = options
        self.line = line
        self.line_number = line_number


_making = threading.Lock()


def family_class(name: str, base: type[Exception]) -> type[Exception]:
    """The class `name` of this module: the one spelled out above, else one made here
    once, a subclass of `base`. A family added by its descriptor alone
    (families/<name>.toml) has no class written here: its status base (a StatusError,
    named by generator/status.py's rule) and its not-found error (a
    LibraryNotFoundError, the descriptor's missing_error) are made by the first module
    that asks, and every later one gets the same class."""
    if not (name.isidentifier() and name.endswith("Error")):
        raise ValueError(f"{name!r} is not an error class name")
    with _making:
        found = globals().get(name)
        if found is None:
            found = type(
                name,
                (base,),
                {
                    "__module__": __name__,
                    "__doc__": f"A {base.__name__} of a family that cudart.errors does not "
                    "spell out (one added by its descriptor alone).",
                },
            )
            globals()[name] = found
    if not (isinstance(found, type) and issubclass(found, base)):
        raise TypeError(f"cudart.errors.{name} is not a {base.__name__} subclass")
    return found
