"""What the tests of the compiled backend share: whether it is built, and why not."""

from __future__ import annotations

import fcntl
import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

JUDGE_FLAGS = ["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-Wconversion", "-Wsign-conversion"]


def compiler() -> str | None:
    return shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")


def compiled_missing_reason() -> str:
    if os.environ.get("CUDART_BACKEND", "").strip().lower() == "ctypes":
        return "CUDART_BACKEND=ctypes: the compiled backend is not in force"
    if compiler() is None:
        return "no C compiler: the compiled backend is not built (the ctypes one serves)"
    return "the compiled backend is not built: run `make build`"


def fast_module(cuda_version: int):
    """cudart._fast_<ver>, imported (see `extension`)."""
    return extension(f"cudart._fast_{cuda_version}")


def extension(name: str):
    """The compiled extension `name`, imported; skips where it cannot be built here (no
    compiler), fails where it could be and is not. A free-threaded interpreter takes its
    own build only, as the loader does (cudart._backend: an abi3 one would crash it)."""
    from cudart._backend import refuse_foreign_build

    try:
        refuse_foreign_build(name)
        return importlib.import_module(name)
    except ImportError:
        if compiler() is None:
            pytest.skip(compiled_missing_reason(), allow_module_level=True)
        raise


def python_include() -> str:
    return sysconfig.get_paths()["include"]


def skip_or_fail_missing() -> None:
    """Where the compiled backend is absent: skip when that is expected here (no
    compiler, ctypes forced), fail when it should have been built."""
    reason = compiled_missing_reason()
    if reason.startswith("the compiled backend is not built"):
        pytest.fail(reason)
    pytest.skip(reason)


# The macro of test builds: the generated module gets the call recorder (record(on),
# recorded()), which the users' build (setup.py) leaves out.
TEST_HOOKS = "CUDART_FAST_TEST_HOOKS"


def merged_source(cuda_version: int, surface: str = "runtime") -> Path:
    """The generated C of a version's (family, major): generated/_fast_12.c holds every
    12.x view (generator/render/compiled.py), -DCUDART_VIEW=<ver> compiles one."""
    major = cuda_version // 1000
    stem = f"_fast_{major}" if surface == "runtime" else f"_fast_{surface}_{major}"
    return REPO / "generated" / f"{stem}.c"


def recording_module(cuda_version: int, surface: str = "runtime"):
    """cudart._fast_<ver> (the driver's: cudart._fast_driver_<ver>) built for tests
    (TEST_HOOKS, every warning an error) from the generated source of its major, that
    view only, loaded beside the users' build (not in sys.modules: its slots are its
    own, unbound until bound). Built once per source, view, header and flags."""
    if compiler() is None:
        pytest.skip("no C compiler")
    stem = f"_fast_{cuda_version}" if surface == "runtime" else f"_fast_{surface}_{cuda_version}"
    if stem in _recording:
        return _recording[stem]
    source = merged_source(cuda_version, surface)
    name = f"cudart.{source.stem}"
    path = _test_build(source, cuda_version)
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    assert spec is not None
    # The users' build is set aside meanwhile, and stays what `import` gives (a
    # multi-phase module is made apart, but its exec may import the package's modules).
    before = sys.modules.pop(name, None)
    try:
        extension = importlib.util.module_from_spec(spec)
        loader.exec_module(extension)
    finally:
        sys.modules.pop(name, None)
        if before is not None:
            sys.modules[name] = before
    module = extension.view(cuda_version)  # type: ignore[attr-defined]
    _recording[stem] = module
    return module


_recording: dict[str, object] = {}


def _test_build(source: Path, view: int) -> Path:
    command = [
        compiler() or "cc",
        *JUDGE_FLAGS,
        "-O0",
        "-g0",
        "-fPIC",
        "-shared",
        f"-D{TEST_HOOKS}",
        f"-DCUDART_VIEW={view}",
        "-I",
        python_include(),
        "-I",
        str(REPO / "cudart"),
    ]
    digest = hashlib.sha256(" ".join(command).encode())
    for part in (source, *sorted((REPO / "cudart").glob("*.h"))):
        digest.update(part.read_bytes())
    folder = Path(tempfile.gettempdir()) / f"cudart-test-hooks-{os.getuid()}"
    path = folder / f"{source.stem}.{view}.{digest.hexdigest()[:16]}.so"
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        # One build per source for the run's processes (the fuzz grid's children and the
        # compiled checked functions' differential need the same ones): the second waits.
        with open(folder / f".{path.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not path.is_file():
                partial = folder / f".{path.name}.{os.getpid()}"
                proc = subprocess.run(
                    [*command, str(source), "-o", str(partial), "-ldl"],
                    capture_output=True,
                    text=True,
                )
                assert proc.returncode == 0, proc.stderr[-3000:]
                os.replace(partial, path)
    return path


def python_checked(module, name: str):
    """The Python checked function `name` of a checked module: the public one, or, where
    the compiled backend binds the public name to a C function (issue 23), the Python
    function it stands for (the module's `_reference`). Tests that stand in for C by
    replacing the module's `_<name>` call this one."""
    return vars(module).get("_reference", {}).get(name) or getattr(module, name)


def stand_in_for_c(monkeypatch, module, name: str, stand_in) -> None:
    """Replace what the checked function `name` of `module` calls C through (its
    `_<name>`) by `stand_in`, and the public name by the Python checked function, which
    calls it (a compiled checked function calls C itself, issue 23)."""
    monkeypatch.setitem(vars(module), "_" + name, stand_in)
    monkeypatch.setitem(vars(module), name, python_checked(module, name))
