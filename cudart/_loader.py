"""Find and load each header family's library, once per process.

What a family's library is called and how it is found and asked its version is its
descriptor's (families/<name>.toml), read here from the generated family table
(cudart._versions FAMILIES, keys cudart._contract.FAMILY_KEYS); this module holds the
rules alone. Search order: $<env> (CUDART_LIBRARY for libcudart), the family's NVIDIA
wheels installed in this environment (its site folders only, never the working
directory or the script's folder), $CUDA_HOME / $CUDA_PATH where the toolkit ships it,
then the system loader. The first library that loads wins; a $<env> that does not load
is an error, not a reason to look elsewhere. Each loads on its first use, so a machine
without NVRTC or a driver imports cudart and uses the runtime as before.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

from ._contract import CUDA_SCALE
from .errors import LibraryNotFoundError, family_class

TOOLKIT_ENVS = ("CUDA_HOME", "CUDA_PATH")
TOOLKIT_LIB_DIRS = ("lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib")
RUNTIME = "runtime"


def family_table() -> dict[str, dict]:
    """The generated family table (cudart._versions FAMILIES): family -> its facts."""
    try:
        from ._versions import FAMILIES
    except ImportError:
        raise LibraryNotFoundError(
            "cudart has no generated family table (cudart/_versions.py): run "
            "`cudart-bindgen generate --all` in the checkout"
        ) from None
    return FAMILIES


def facts(name: str) -> dict:
    """One family's row of the table."""
    try:
        return family_table()[name]
    except KeyError:
        raise LibraryNotFoundError(
            f"no header family {name!r} in cudart's table: {', '.join(family_table())}"
        ) from None


class Runtime:
    """The loaded libcudart and what it says of itself.

    A plain class, with os.path rather than pathlib in this module: `import cudart` pays
    for every module imported here, and dataclasses, typing and pathlib together cost
    more than the rest of the package's import."""

    __slots__ = ("path", "found_by", "cdll", "version", "scale")

    def __init__(
        self,
        path: str,
        found_by: str,
        cdll: ctypes.CDLL,
        version: int,
        scale: tuple[int, int] = CUDA_SCALE,
    ) -> None:
        self.path = path  # as handed to dlopen
        self.found_by = found_by  # which step of the search found it
        self.cdll = cdll
        self.version = version  # cudaRuntimeGetVersion, e.g. 12050
        self.scale = scale  # its family's numbering (the table's `scale`)

    @property
    def version_text(self) -> str:
        # 0: a libcuda that cannot say (a stub's cuDriverGetVersion fails).
        if not self.version:
            return "of an unknown version"
        return format_version(self.version, self.scale)

    def __repr__(self) -> str:
        return f"Runtime(path={self.path!r}, found_by={self.found_by!r}, version={self.version})"


def format_version(version: int, scale: tuple[int, int] = CUDA_SCALE) -> str:
    """ "12.5" for 12050; "2.21" for NCCL's 22105 on its own scale (10000, 100): the
    release a version is of."""
    major_scale, minor_scale = scale
    return f"{version // major_scale}.{version % major_scale // minor_scale}"


def release_text(row: dict, version: int) -> str:
    """What a message calls a version of a family: "CUDA 12.5" on the CUDA axis, the
    provider's own release on another ("NCCL 2.21")."""
    if row["axis"] == "cuda":
        return f"CUDA {format_version(version)}"
    return f"{row['provider']} {format_version(version, row['scale'])}"


def candidates(name: str = RUNTIME) -> list[tuple[str, str]]:
    """(path or soname, how it was found) for a family's library, in search order."""
    row = facts(name)
    env_name = row["env"]
    explicit = os.environ.get(env_name)
    if explicit:
        return [(explicit, f"${env_name}")]
    found: list[tuple[str, str]] = []
    for root in _nvidia_roots() if row["wheel_libraries"] else ():
        for folder, file in row["wheel_libraries"]:
            path = os.path.join(root, folder, file)
            if os.path.isfile(path):
                found.append((path, row["wheel"]))
    sonames = row["dlls"] if os.name == "nt" else row["sonames"]
    for env in TOOLKIT_ENVS if row["toolkit"] else ():
        home = os.environ.get(env)
        if not home:
            continue
        for sub in TOOLKIT_LIB_DIRS:
            for soname in sonames:
                path = os.path.join(home, sub, soname)
                if os.path.isfile(path):
                    found.append((path, f"${env}"))
    found.extend((soname, "the system loader") for soname in sonames)
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
    prefixes = tuple(row["dist_prefix"] for row in family_table().values() if row["dist_prefix"])
    return any(n.startswith(prefixes) and n.endswith(".dist-info") for n in names)


_lock = threading.Lock()


class _LoadedOnce:
    """A family's library, loaded by the first call, once per process: `loaded` is None
    until then. Calls that race on the first load share one lock, so each library loads
    once."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.loaded: Runtime | None = None
        self.__doc__ = f"The process's {name} library, loaded on first call."

    def __call__(self) -> Runtime:
        found = self.loaded
        if found is None:
            with _lock:
                if self.loaded is None:
                    self.loaded = _load_first(self.name)
                found = self.loaded
        return found


def _missing_error(row: dict) -> type[Exception]:
    return family_class(row["missing_error"], LibraryNotFoundError)


def _load_first(name: str = RUNTIME) -> Runtime:
    row = facts(name)
    tried = []
    for path, how in candidates(name):
        try:
            cdll = ctypes.CDLL(path)
        except OSError as exc:
            tried.append(f"{path} ({how}): {exc}")
            if how == f"${row['env']}":
                break
            continue
        return Runtime(path, how, cdll, library_version(row, cdll, path), row["scale"])
    # A library of one soname (libcuda.so.1) is named by it.
    shown = row["sonames"][0] if len(row["sonames"]) == 1 else row["library"]
    raise _missing_error(row)(f"{shown} not found. {row['install']}. Tried: " + "; ".join(tried))


def library_version(row: dict, cdll: ctypes.CDLL, path: str) -> int:
    """What the loaded library says its version is (12050), by its family's probe: 0
    where the probe may fail and did (NVIDIA's stub libcuda answers every call with
    CUDA_ERROR_STUB_LIBRARY)."""
    error = _missing_error(row)
    probe = row["probe"]
    try:
        fn = cdll[probe]
    except AttributeError:
        if row["probe_symbols"]:
            return _symbol_version(row, cdll, path)
        raise error(f"{path} is not {row['library']}: no {probe}") from None
    out = ctypes.c_uint if row["probe_unsigned"] else ctypes.c_int
    values = (out(),) if row["probe_form"] == "version" else (out(), out())
    fn.argtypes = (ctypes.c_void_p,) * len(values)
    fn.restype = ctypes.c_int
    status = fn(*(ctypes.byref(v) for v in values))
    if status != 0:
        if row["probe_failure"] == "zero":
            return 0
        raise error(f"{probe} failed in {path} (error {status})")
    if len(values) == 1:
        return values[0].value
    major_scale, minor_scale = row["scale"]  # CUDA's, or an own-axis family's
    return values[0].value * major_scale + values[1].value * minor_scale


def _symbol_version(row: dict, cdll: ctypes.CDLL, path: str) -> int:
    """The newest {major}_{minor} whose versioned symbol the library exports (each
    release of libnvJitLink exports every older minor's too, and 12.0 to 12.2 have no
    version function), which the soname alone (.so.12) cannot say."""
    newest = None
    major_scale, minor_scale = row["scale"]
    for major in (12, 13):
        for minor in range(10):
            if hasattr(cdll, row["probe_symbols"].format(major=major, minor=minor)):
                newest = major * major_scale + minor * minor_scale
    if newest is None:
        pattern = row["probe_symbols"].format(major="<major>", minor="<minor>")
        raise _missing_error(row)(
            f"{path} is not {row['library']}: no {row['probe']} and no {pattern}"
        )
    return newest


_loaders: dict[str, _LoadedOnce] = {}


def loader(name: str) -> _LoadedOnce:
    """The once-per-process loader of a family's library."""
    found = _loaders.get(name)
    if found is None:
        with _lock:
            found = _loaders.setdefault(name, _LoadedOnce(name))
    return found


def load_library(name: str) -> Runtime:
    """The library a generated module's LIBRARY names ("runtime" when it names none)."""
    return loader(name)()


# The families whose own modules load their library by name (cudart.nvrtc, cudart.link,
# cudart.driver, the runtime everywhere).
load_runtime = loader(RUNTIME)
load_nvrtc = loader("nvrtc")
load_driver = loader("driver")
load_nvjitlink = loader("nvjitlink")
