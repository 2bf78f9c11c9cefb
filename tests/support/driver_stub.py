"""The stand-in libcuda.so.1 (generator/render/stub.py), built for the tests.

This machine has no NVIDIA driver: a test of the driver API points
$CUDART_DRIVER_LIBRARY at a stub built here from the version's model, in a folder of
the test session's (never where `import cudart` or the system loader would look). A
build is named by the digest of its source, which is a function of the model and the
variant, so a run builds each stub once, whichever tests ask for it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from models import models_for
from suite import MANIFEST, quiet

from generator.fetch import HeaderSet, fetch_version
from generator.manifest import Manifest
from generator.model import ApiModel
from generator.render.stub import RECORD_SIZE, RECORD_SYMBOL, render_stub

__all__ = [
    "RECORD_SIZE",
    "RECORD_SYMBOL",
    "StubBuilder",
    "driver_header_sets",
    "driver_soname",
    "writing_libcuda",
]

SURFACE = "driver"


def writing_libcuda(folder: Path, writers: str, written: set[str]) -> Path:
    """A libcuda.so.1 in `folder` whose functions `written` are the C of `writers` (a
    test's own, which writes what cuda.h says the driver writes) and whose every other
    symbol of every generated driver view answers CUDA_ERROR_STUB_LIBRARY (34)."""
    import importlib
    import importlib.util

    import cudart

    symbols: set[str] = set()
    for version in cudart.available_versions():
        name = f"cudart.driver_{version}"
        if importlib.util.find_spec(name):
            module = importlib.import_module(name)
            symbols |= set(module.SYMBOLS_LEGACY.values()) | set(module.SYMBOLS_PER_THREAD.values())
    assert written <= symbols, sorted(written - symbols)
    others = sorted(symbols - written)
    source = writers + "".join(f"int {s}(void) {{ return 34; }}\n" for s in others)
    (folder / "stub.c").write_text(source)
    path = folder / "libcuda.so.1"
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-Wall", "-Werror", "-o", str(path), str(folder / "stub.c")],
        check=True,
        capture_output=True,
    )
    return path


def driver_soname() -> str:
    """The driver surface's soname, as the manifest names it (libcuda.so.1)."""
    manifest = Manifest.load(MANIFEST)
    family = next(iter(manifest.majors.values()))
    soname = family.library_wheel(SURFACE).library_name
    assert soname is not None
    return soname


def driver_header_sets(keys: list[str]) -> dict[str, HeaderSet]:
    """cuda.h and its folders, per version of `keys`."""
    manifest = Manifest.load(MANIFEST)
    return {key: fetch_version(manifest, key, quiet, SURFACE) for key in keys}


class StubBuilder:
    """Builds stubs into `folder`, once per source."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.soname = driver_soname()
        self._headers: dict[str, HeaderSet] = {}
        self._built: dict[str, Path] = {}

    def headers(self, key: str) -> HeaderSet:
        if key not in self._headers:
            self._headers.update(driver_header_sets([key]))
        return self._headers[key]

    def model(self, key: str) -> ApiModel:
        return models_for({key: self.headers(key)})[key]

    def prepare(self, keys: list[str]) -> None:
        """Parse (or load) the models of `keys` together: misses two at a time."""
        missing = [key for key in keys if key not in self._headers]
        self._headers.update(driver_header_sets(missing))
        models_for({key: self._headers[key] for key in keys})

    def __call__(
        self,
        key: str,
        *,
        driver_version: int | None = None,
        omit: tuple[str, ...] = (),
        record: bool = False,
    ) -> Path:
        """The path of version `key`'s stub (a variant: see render_stub)."""
        source = render_stub(
            self.model(key), driver_version=driver_version, omit=frozenset(omit), record=record
        )
        digest = hashlib.sha256(source.encode()).hexdigest()[:24]
        if digest not in self._built:
            self._built[digest] = self._build(key, source, digest)
        return self._built[digest]

    def _build(self, key: str, source: str, digest: str) -> Path:
        out = self.folder / digest / self.soname
        if out.is_file():
            return out
        out.parent.mkdir(parents=True, exist_ok=True)
        c_file = out.parent / "libcuda_stub.c"
        c_file.write_text(source)
        gcc = shutil.which("gcc")
        if gcc is None:
            raise AssertionError("building the stand-in libcuda needs gcc")
        includes = [f"-I{d}" for d in self.headers(key).include_dirs]
        fd, tmp = tempfile.mkstemp(dir=out.parent, suffix=".so")
        os.close(fd)
        command = [
            gcc,
            "-shared",
            "-fPIC",
            "-O0",
            "-Werror",
            f"-Wl,-soname,{self.soname}",
            *includes,
            "-o",
            tmp,
            str(c_file),
        ]
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode != 0:
            os.unlink(tmp)
            raise AssertionError(f"building {key}'s stub failed:\n{proc.stderr[-4000:]}")
        os.replace(tmp, out)
        return out
