"""Find and load libcudart, once per process.

Search order: $CUDART_LIBRARY, the NVIDIA runtime wheels installed in this environment
(its site folders only, never the working directory or the script's folder),
$CUDA_HOME / $CUDA_PATH, then the system loader. The first library that loads wins;
a $CUDART_LIBRARY that does not load is an error, not a reason to look elsewhere.
"""

from __future__ import annotations

import ctypes
import os
import threading

from .errors import LibraryNotFoundError

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
        return format_version(self.version)

    def __repr__(self) -> str:
        return f"Runtime(path={self.path!r}, found_by={self.found_by!r}, version={self.version})"


def format_version(version: int) -> str:
    return f"{version // 1000}.{version % 1000 // 10}"


def candidates() -> list[tuple[str, str]]:
    """(path or soname, how it was found), in search order."""
    found: list[tuple[str, str]] = []
    explicit = os.environ.get(LIBRARY_ENV)
    if explicit:
        return [(explicit, f"${LIBRARY_ENV}")]
    for root in _nvidia_roots():
        for folder, name in WHEEL_LIBRARIES:
            path = os.path.join(root, folder, name)
            if os.path.isfile(path):
                found.append((path, "the nvidia runtime wheel"))
    for env in TOOLKIT_ENVS:
        home = os.environ.get(env)
        if not home:
            continue
        for sub in TOOLKIT_LIB_DIRS:
            for name in SONAMES:
                path = os.path.join(home, sub, name)
                if os.path.isfile(path):
                    found.append((path, f"${env}"))
    found.extend((name, "the system loader") for name in SONAMES)
    return found


def _nvidia_roots() -> list[str]:
    """The `nvidia` namespace folders of the installed site folders (see _site_dirs)."""
    roots = []
    for folder in _site_dirs():
        root = os.path.join(folder, "nvidia")
        if os.path.isdir(root):
            roots.append(root)
    return roots


def _site_dirs() -> list[str]:
    """The folders of sys.path that packages are installed in, in sys.path's order:
    the site module's (site-packages, the user's when enabled), and other absolute
    entries named site-packages/dist-packages or holding an installed NVIDIA runtime
    wheel (pip install --target). Never the current directory or the main script's
    folder (sys.path[0]: '' under -c and the REPL): a library planted there by whoever
    wrote to that folder would be loaded into the process."""
    import site
    import sys

    installed = set()
    try:
        installed.update(site.getsitepackages())
    except AttributeError:  # (old virtualenv's site module)
        pass
    if site.ENABLE_USER_SITE:
        installed.add(site.getusersitepackages())
    installed = {os.path.realpath(p) for p in installed}
    unsafe = set()
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
    return any(n.startswith(WHEEL_DIST_PREFIX) and n.endswith(".dist-info") for n in names)


_lock = threading.Lock()
_runtime: Runtime | None = None


def load_runtime() -> Runtime:
    """The process's libcudart, loaded on first call."""
    global _runtime
    if _runtime is not None:
        return _runtime
    with _lock:
        if _runtime is None:
            _runtime = _load_first()
    return _runtime


def _load_first() -> Runtime:
    tried = []
    for path, how in candidates():
        try:
            cdll = ctypes.CDLL(path)
        except OSError as exc:
            tried.append(f"{path} ({how}): {exc}")
            if how == f"${LIBRARY_ENV}":
                break
            continue
        return Runtime(path, how, cdll, _runtime_version(cdll, path))
    raise LibraryNotFoundError(
        "libcudart not found. Install it with `pip install nvidia-cuda-runtime-cu12`, "
        f"or set ${LIBRARY_ENV} to its path. Tried: " + "; ".join(tried)
    )


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
