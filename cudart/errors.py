"""Errors of the cudart package itself (not CUDA error codes)."""


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
