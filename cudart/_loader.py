"""Find and load libcudart, once per process.

Search order: $CUDART_LIBRARY, the NVIDIA runtime wheels installed in this environment
(its site folders only, never the working directory or the script's folder),
$CUDA_HOME / $CUDA_PATH, then the system loader. The first library that loads wins;
a $CUDART_LIBRARY that does not load is an error, not a reason to look elsewhere.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

from .errors import LibraryNotFoundError

# For type checkers only: importing typing costs milliseconds `import cudart` avoids.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

LIBRARY_ENV = "CUDART_LIBRARY"

# (folder inside the `nvidia` namespace package, file) per CUDA major, newest first.
# A new major is one more line here and one more family in the manifest.
WHEEL_LIBRARIES = (
    ("cu13/lib", "libcudart.so.13"),
    ("cuda_runtime/lib", "libcudart.so.12"),
)
# pip's record of an installed runtime wheel: nvidia_cuda_runtime_cu12-12.5.82.dist-info,
# nvidia_cuda_runtime-13.0.48.dist-info.
WHEEL_DIST_PREFIX = "nvidia_cuda_runtime"
SONAMES = ("libcudart.so.13", "libcudart.so.12", "libcudart.so")
TOOLKIT_ENVS = ("CUDA_HOME", "CUDA_PATH")
TOOLKIT_LIB_DIRS = ("lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib")


class Runtime:
    """The loaded libcudart and what it says of itself.

    A plain class, with os.path rather than pathlib in this module: `import cudart` pays
    for every module imported here, and dataclasses, typing and pathlib together cost
    more than the rest of the package's import."""

    __slots__ = ("path", "found_by", "cdll", "version")

    def __init__(self, path: str, found_by: str, cdll: ctypes.CDLL, version: int) -> None:
        self.path = path  # as handed to dlopen
        self.found_by = found_by  # which step of the search found it
        self.cdll = cdll
        self.version = version  # cudaRuntimeGetVersion, e.g. 12050

    @property
    def version_text(self) -> str:
        # 0: a libcuda that cannot say (a stub's cuDriverGetVersion fails).
        return format_version(self.version) if self.version else "of an unknown version"

    def __repr__(self) -> str:
        return f"Runtime(path={self.path!r}, found_by={self.found_by!r}, version={self.version})"


def format_version(version: int) -> str:
    return f"{version // 1000}.{version % 1000 // 10}"


def candidates() -> list[tuple[str, str]]:
    """(path or soname, how it was found), in search order."""
    return _candidates(LIBRARY_ENV, WHEEL_LIBRARIES, SONAMES, "the nvidia runtime wheel")


def _candidates(
    env_name: str,
    wheel_libraries: tuple[tuple[str, str], ...],
    sonames: tuple[str, ...],
    wheel: str,
) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    explicit = os.environ.get(env_name)
    if explicit:
        return [(explicit, f"${env_name}")]
    for root in _nvidia_roots():
        for folder, name in wheel_libraries:
            path = os.path.join(root, folder, name)
            if os.path.isfile(path):
                found.append((path, wheel))
    for env in TOOLKIT_ENVS:
        home = os.environ.get(env)
        if not home:
            continue
        for sub in TOOLKIT_LIB_DIRS:
            for name in sonames:
                path = os.path.join(home, sub, name)
                if os.path.isfile(path):
                    found.append((path, f"${env}"))
    found.extend((name, "the system loader") for name in sonames)
    return found


def _nvidia_roots() -> list[str]:
    """The `nvidia` namespace folders of the installed site folders (see _site_dirs)."""
    roots = []
    for folder in _site_dirs():
        root = os.path.join(folder, "nvidia")
        if os.path.isdir(root):
            roots.append(root)
    return roots


def _main_entry() -> str | None:
    """The folder the interpreter put first on sys.path for the main program, as it is
    when cudart is imported: the script's folder (python script.py), the working
    directory it started in (python -m, which stays on sys.path after an os.chdir);
    None for '' (python -c, the REPL: relative, so never searched) and under -P or
    PYTHONSAFEPATH, where sys.path[0] is an ordinary entry."""
    if getattr(sys.flags, "safe_path", False) or not sys.path:
        return None
    entry = sys.path[0]
    if not isinstance(entry, str) or not os.path.isabs(entry):
        return None
    return os.path.realpath(entry)


# Decided at import: the program may change its working directory (and sys.path) before
# its first CUDA call, and `python -m` leaves the folder it started in on sys.path.
_MAIN_ENTRY = _main_entry()


def _site_dirs() -> list[str]:
    """The folders of sys.path that packages are installed in, in sys.path's order:
    the site module's (site-packages, the user's when enabled), and other absolute
    entries named site-packages/dist-packages or holding an installed NVIDIA runtime
    wheel (pip install --target). Never the current directory, the main script's
    folder or the interpreter's first entry for the main program (_MAIN_ENTRY): a
    library planted there by whoever wrote to that folder would be loaded into the
    process."""
    import site

    installed = set()
    try:
        installed.update(site.getsitepackages())
    except AttributeError:  # (old virtualenv's site module)
        pass
    if site.ENABLE_USER_SITE:
        installed.add(site.getusersitepackages())
    installed = {os.path.realpath(p) for p in installed}
    unsafe = {_MAIN_ENTRY}
    try:
        unsafe.add(os.path.realpath(os.getcwd()))
    except OSError:  # the working directory was removed
        pass
    script = getattr(sys.modules.get("__main__"), "__file__", None)
    if isinstance(script, str):
        unsafe.add(os.path.dirname(os.path.realpath(script)))
    found: list[str] = []
    for entry in sys.path:
        if not isinstance(entry, str) or not os.path.isabs(entry):
            continue  # '' and relative entries are the working directory
        real = os.path.realpath(entry)
        if real in found:
            continue
        if real in installed or (real not in unsafe and _holds_installed_wheel(real)):
            found.append(real)
    return found


def _holds_installed_wheel(folder: str) -> bool:
    if os.path.basename(folder) in ("site-packages", "dist-packages"):
        return True
    if not os.path.isdir(os.path.join(folder, "nvidia")):
        return False
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    return any(
        n.startswith((WHEEL_DIST_PREFIX, NVRTC_DIST_PREFIX, NVJITLINK_DIST_PREFIX))
        and n.endswith(".dist-info")
        for n in names
    )


_lock = threading.Lock()


class _LoadedOnce:
    """A library loaded by its first call, once per process: `loaded` is None until then.
    Calls that race on the first load share one lock, so each library loads once."""

    def __init__(self, load: Callable[[], Runtime], doc: str) -> None:
        self._load = load
        self.loaded: Runtime | None = None
        self.__doc__ = doc

    def __call__(self) -> Runtime:
        found = self.loaded
        if found is None:
            with _lock:
                if self.loaded is None:
                    self.loaded = self._load()
                found = self.loaded
        return found


def _load_first() -> Runtime:
    found = _first_loadable(candidates(), LIBRARY_ENV, _runtime_version)
    if isinstance(found, Runtime):
        return found
    raise LibraryNotFoundError(
        "libcudart not found. Install it with `pip install nvidia-cuda-runtime-cu12`, "
        f"or set ${LIBRARY_ENV} to its path. Tried: " + "; ".join(found)
    )


load_runtime = _LoadedOnce(_load_first, "The process's libcudart, loaded on first call.")


def _first_loadable(
    places: list[tuple[str, str]], env: str, version: Callable[[ctypes.CDLL, str], int]
) -> Runtime | list[str]:
    """The first of `places` that loads, with its `version`; else what each attempt said.
    A path the user named in $`env` is the only one tried when it fails to load."""
    tried = []
    for path, how in places:
        try:
            cdll = ctypes.CDLL(path)
        except OSError as exc:
            tried.append(f"{path} ({how}): {exc}")
            if how == f"${env}":
                break
            continue
        return Runtime(path, how, cdll, version(cdll, path))
    return tried


def _runtime_version(cdll: ctypes.CDLL, path: str) -> int:
    try:
        fn = cdll["cudaRuntimeGetVersion"]
    except AttributeError:
        raise LibraryNotFoundError(f"{path} is not libcudart: no cudaRuntimeGetVersion") from None
    fn.argtypes = (ctypes.c_void_p,)
    fn.restype = ctypes.c_int
    version = ctypes.c_int()
    status = fn(ctypes.byref(version))
    if status != 0:
        raise LibraryNotFoundError(f"cudaRuntimeGetVersion failed in {path} (error {status})")
    return version.value


# ---------------------------------------------------------------- NVRTC
#
# libnvrtc, for cudart.compile: found like libcudart (its own variable, the NVRTC
# wheels, the toolkit, the system loader), and loaded only when first used, so a
# machine without it imports cudart and uses the runtime as before.

NVRTC_LIBRARY_ENV = "CUDART_NVRTC_LIBRARY"
NVRTC_WHEEL_LIBRARIES = (
    ("cu13/lib", "libnvrtc.so.13"),
    ("cuda_nvrtc/lib", "libnvrtc.so.12"),
)
NVRTC_DIST_PREFIX = "nvidia_cuda_nvrtc"
NVRTC_SONAMES = ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so")
# How to get it, in the error that says it is missing (pyproject.toml's extras).
NVRTC_INSTALL = (
    "Install NVRTC with `pip install 'cudart[cu12]'` (or 'cudart[cu13]'; the wheels "
    "nvidia-cuda-nvrtc-cu12 / nvidia-cuda-nvrtc), or use a CUDA toolkit's through "
    f"$CUDA_HOME, or set ${NVRTC_LIBRARY_ENV} to libnvrtc's path"
)


def nvrtc_candidates() -> list[tuple[str, str]]:
    """(path or soname, how it was found) for libnvrtc, in search order."""
    return _candidates(
        NVRTC_LIBRARY_ENV, NVRTC_WHEEL_LIBRARIES, NVRTC_SONAMES, "the nvidia nvrtc wheel"
    )


def _load_nvrtc_first() -> Runtime:
    from .errors import NvrtcNotFoundError

    found = _first_loadable(nvrtc_candidates(), NVRTC_LIBRARY_ENV, _nvrtc_version)
    if isinstance(found, Runtime):
        return found
    raise NvrtcNotFoundError(
        "libnvrtc not found. " + NVRTC_INSTALL + ". Tried: " + "; ".join(found)
    )


load_nvrtc = _LoadedOnce(
    _load_nvrtc_first,
    """The process's libnvrtc, loaded on first call (its version: nvrtcVersion, e.g. 12050).""",
)


def _nvrtc_version(cdll: ctypes.CDLL, path: str) -> int:
    from .errors import NvrtcNotFoundError

    try:
        fn = cdll["nvrtcVersion"]
    except AttributeError:
        raise NvrtcNotFoundError(f"{path} is not libnvrtc: no nvrtcVersion") from None
    fn.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
    fn.restype = ctypes.c_int
    major, minor = ctypes.c_int(), ctypes.c_int()
    status = fn(ctypes.byref(major), ctypes.byref(minor))
    if status != 0:
        raise NvrtcNotFoundError(f"nvrtcVersion failed in {path} (error {status})")
    return major.value * 1000 + minor.value * 10


# ---------------------------------------------------------------- the driver
#
# libcuda.so.1 comes with the NVIDIA driver, never with a wheel: found as C finds it
# (the system loader's path), or where $CUDART_DRIVER_LIBRARY says. Loaded on the first
# driver call, so a machine without a driver imports cudart and its driver modules.

DRIVER_LIBRARY_ENV = "CUDART_DRIVER_LIBRARY"
DRIVER_SONAME = "libcuda.so.1"


def driver_candidates() -> list[tuple[str, str]]:
    """(path or soname, how it was found) for libcuda, in search order."""
    explicit = os.environ.get(DRIVER_LIBRARY_ENV)
    if explicit:
        return [(explicit, f"${DRIVER_LIBRARY_ENV}")]
    return [(DRIVER_SONAME, "the system loader")]


def _load_driver_first() -> Runtime:
    from .errors import DriverNotFoundError

    found = _first_loadable(driver_candidates(), DRIVER_LIBRARY_ENV, _driver_version)
    if isinstance(found, Runtime):
        return found
    raise DriverNotFoundError(
        f"{DRIVER_SONAME} not found: the CUDA driver API needs an NVIDIA driver, which "
        f"installs it (set ${DRIVER_LIBRARY_ENV} to use another path). Tried: " + "; ".join(found)
    )


load_driver = _LoadedOnce(
    _load_driver_first,
    """The process's libcuda, loaded on first call. Its version is cuDriverGetVersion's
    (13000 for a CUDA 13.0 driver), or 0 where the library cannot say (NVIDIA's stub
    libcuda answers every call with CUDA_ERROR_STUB_LIBRARY).""",
)


def _driver_version(cdll: ctypes.CDLL, path: str) -> int:
    from .errors import DriverNotFoundError

    try:
        fn = cdll["cuDriverGetVersion"]
    except AttributeError:
        raise DriverNotFoundError(f"{path} is not libcuda: no cuDriverGetVersion") from None
    fn.argtypes = (ctypes.c_void_p,)
    fn.restype = ctypes.c_int
    version = ctypes.c_int()
    return version.value if fn(ctypes.byref(version)) == 0 else 0


# ---------------------------------------------------------------- nvJitLink
#
# libnvJitLink, for cudart.link: found as libnvrtc is, and loaded only when first used.

NVJITLINK_LIBRARY_ENV = "CUDART_NVJITLINK_LIBRARY"
NVJITLINK_WHEEL_LIBRARIES = (
    ("cu13/lib", "libnvJitLink.so.13"),
    ("nvjitlink/lib", "libnvJitLink.so.12"),
)
NVJITLINK_DIST_PREFIX = "nvidia_nvjitlink"
NVJITLINK_SONAMES = ("libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so")
NVJITLINK_INSTALL = (
    "Install nvJitLink with `pip install 'cudart[cu12]'` (or 'cudart[cu13]'; the wheels "
    "nvidia-nvjitlink-cu12 / nvidia-nvjitlink), or use a CUDA toolkit's through "
    f"$CUDA_HOME, or set ${NVJITLINK_LIBRARY_ENV} to libnvJitLink's path"
)


def nvjitlink_candidates() -> list[tuple[str, str]]:
    """(path or soname, how it was found) for libnvJitLink, in search order."""
    return _candidates(
        NVJITLINK_LIBRARY_ENV,
        NVJITLINK_WHEEL_LIBRARIES,
        NVJITLINK_SONAMES,
        "the nvidia nvjitlink wheel",
    )


def _load_nvjitlink_first() -> Runtime:
    from .errors import NvjitlinkNotFoundError

    found = _first_loadable(nvjitlink_candidates(), NVJITLINK_LIBRARY_ENV, _nvjitlink_version)
    if isinstance(found, Runtime):
        return found
    raise NvjitlinkNotFoundError(
        "libnvJitLink not found. " + NVJITLINK_INSTALL + ". Tried: " + "; ".join(found)
    )


load_nvjitlink = _LoadedOnce(
    _load_nvjitlink_first,
    """The process's libnvJitLink, loaded on first call (its version, e.g. 12050).""",
)


def _nvjitlink_version(cdll: ctypes.CDLL, path: str) -> int:
    """nvJitLinkVersion's answer. 12.0 to 12.2 lack the function: their version is the
    newest minor of the library's versioned symbols (__nvJitLinkCreate_12_2: each
    release exports every older minor's too), which the soname alone (.so.12) cannot
    say."""
    from .errors import NvjitlinkNotFoundError

    try:
        fn = cdll["nvJitLinkVersion"]
    except AttributeError:
        return _nvjitlink_symbol_version(cdll, path)
    fn.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
    fn.restype = ctypes.c_int
    major, minor = ctypes.c_uint(), ctypes.c_uint()
    status = fn(ctypes.byref(major), ctypes.byref(minor))
    if status != 0:
        raise NvjitlinkNotFoundError(f"nvJitLinkVersion failed in {path} (error {status})")
    return major.value * 1000 + minor.value * 10


def _nvjitlink_symbol_version(cdll: ctypes.CDLL, path: str) -> int:
    from .errors import NvjitlinkNotFoundError

    newest = None
    for major in (12, 13):
        for minor in range(10):
            if hasattr(cdll, f"__nvJitLinkCreate_{major}_{minor}"):
                newest = major * 1000 + minor * 10
    if newest is None:
        raise NvjitlinkNotFoundError(
            f"{path} is not libnvJitLink: no nvJitLinkVersion and no __nvJitLinkCreate_<ver>"
        )
    return newest


def load_library(name: str) -> Runtime:
    """The library a generated module's LIBRARY names ("runtime" when it names none)."""
    if name == "nvrtc":
        return load_nvrtc()
    if name == "driver":
        return load_driver()
    if name == "nvjitlink":
        return load_nvjitlink()
    return load_runtime()
