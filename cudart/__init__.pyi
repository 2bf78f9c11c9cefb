# Type stub for the cudart package. At run time the CUDA API names are resolved by
# __getattr__ for the version of the loaded libcudart; type checkers see the newest
# generated version's checked API, through cudart/_latest.pyi (generated/_latest.pyi),
# which the generator rewrites whenever the version set changes. For another version's
# exact types, import cudart.checked_<version>.
from . import arrays as arrays
from . import callbacks as callbacks
from . import kernels as kernels
from . import nvrtc as nvrtc
from . import occupancy as occupancy
from ._backend import backend as backend
from ._binding import CudaDeprecationWarning as CudaDeprecationWarning
from ._binding import per_thread_default_stream as per_thread_default_stream
from ._hostmem import HostMemory as HostMemory
from ._jitoptions import OptionsWritten as OptionsWritten
from ._latest import *
from ._latest import sys as sys
from ._loader import load_runtime as load_runtime
from .arrays import as_array as as_array
from .errors import (
    BindingsVersionError as BindingsVersionError,
)
from .errors import (
    CompileError as CompileError,
)
from .errors import (
    CudaError as CudaError,
)
from .errors import (
    CudartError as CudartError,
)
from .errors import (
    FunctionNotFoundError as FunctionNotFoundError,
)
from .errors import (
    LibraryNotFoundError as LibraryNotFoundError,
)
from .errors import (
    LinkError as LinkError,
)
from .errors import (
    NvjitlinkError as NvjitlinkError,
)
from .errors import (
    NvjitlinkNotFoundError as NvjitlinkNotFoundError,
)
from .errors import (
    NvrtcError as NvrtcError,
)
from .errors import (
    NvrtcNotFoundError as NvrtcNotFoundError,
)
from .kernels import load_module as load_module
from .linking import link as link
from .nvrtc import compile as compile

FORCE_ENV: str

def available_versions() -> list[int]: ...
def select_version(
    runtime: int, available: list[int], forced: str | None = None
) -> tuple[int, str | None]: ...
def check(status: int) -> None: ...
