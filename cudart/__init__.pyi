# Type stub for the cudart package. At run time the CUDA API names are resolved by
# __getattr__ for the version of the loaded libcudart; type checkers see the newest
# generated version's checked API, through generated/_latest.pyi, which the generator
# rewrites whenever the version set changes. For another version's exact types,
# import cudart.checked_<version>.
from ._binding import CudaDeprecationWarning as CudaDeprecationWarning
from ._binding import per_thread_default_stream as per_thread_default_stream
from ._generated._latest import sys as sys
from ._generated._latest import *
from ._loader import Runtime, load_runtime as load_runtime
from . import callbacks as callbacks, kernels as kernels, occupancy as occupancy
from .kernels import load_module as load_module
from .errors import (
    BindingsVersionError as BindingsVersionError,
    CudaError as CudaError,
    CudartError as CudartError,
    FunctionNotFoundError as FunctionNotFoundError,
    LibraryNotFoundError as LibraryNotFoundError,
)

FORCE_ENV: str

def available_versions() -> list[int]: ...
def select_version(
    runtime: int, available: list[int], forced: str | None = None
) -> tuple[int, str | None]: ...
