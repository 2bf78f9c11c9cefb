"""The compiled backend (issue 13): one CPython extension per header family and CUDA
major (a view per version inside, issue 32), built from the generated C sources in the
package's generated folder (cudart/_generated/_fast_<major>.c: a link to generated/ in a
checkout, the folder in the sdist; they include cudart/_fastcall.h), for the limited
API of Python 3.11 (one build per major serves
3.11 and every later Python: an abi3 wheel) where the interpreter has a GIL, and for the
full API of a free-threaded interpreter (3.13t), which the limited API does not support:
there each build serves its own interpreter. The C picks its API itself
(cudart/_capi.h); here only the file names and the wheel's tag follow.

The extensions are optional by design: where no C compiler works, the build prints one
line and the package installs as pure Python, served by its ctypes backend
(cudart.backend() says which is in force). Everything else is in pyproject.toml.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
NOTICE = "cudart: no compiled backend ({why}); the ctypes backend serves (cudart.backend())"
# A checkout whose in-place build (`make build`) a wheel build may take the generated
# extensions from, rather than compile the same sources a second time: the test suite's
# packaging test sets it (tests/generator/test_packaging.py). Unset, everything compiles.
PREBUILT_ENV = "CUDART_PREBUILT"
# What every generated extension includes: the headers beside the package (the calls'
# protocol, the integer conversion, the checked functions' converters).
HEADERS = tuple(str(h.relative_to(HERE)) for h in sorted((HERE / "cudart").glob("*.h")))
# A free-threaded interpreter (Py_GIL_DISABLED) has no limited API: no abi3 build there.
LIMITED_API = not sysconfig.get_config_var("Py_GIL_DISABLED")


class OptionalBuildExt(build_ext):
    """Builds what it can; a missing or failing compiler is a one-line notice. The
    extensions build in parallel (one per CPU) unless told otherwise."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # no compiler at all: distutils' errors, OSError
            print(NOTICE.format(why=_reason(exc)), file=sys.stderr)

    def build_extension(self, ext: Extension) -> None:
        if self._take_prebuilt(ext):
            return
        try:
            super().build_extension(ext)
        except Exception as exc:
            print(NOTICE.format(why=f"{ext.name}: {_reason(exc)}"), file=sys.stderr)

    def _take_prebuilt(self, ext: Extension) -> bool:
        """Copy a generated extension from $CUDART_PREBUILT's in-place build where that
        checkout's sources (and the headers they include) are these, byte for byte, and
        the built file is up to date with them by setuptools' own rule (newer than each),
        the rule by which `make build` left it: what the compiler would make here."""
        root = os.environ.get(PREBUILT_ENV)
        if not root or not ext.name.startswith("cudart._fast_"):
            return False  # the hand-written extensions always compile, proving the build
        built = Path(root) / self.get_ext_filename(ext.name)
        inputs = [*ext.sources, *ext.depends]
        try:
            if any((Path(root) / n).read_bytes() != (HERE / n).read_bytes() for n in inputs):
                return False
            if built.stat().st_mtime <= max((Path(root) / n).stat().st_mtime for n in inputs):
                return False
            target = Path(self.get_ext_fullpath(ext.name))
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(built, target)
        except OSError:
            return False
        print(f"cudart: {ext.name} taken from {built} (the same sources)", file=sys.stderr)
        return True


class GeneratedBuildPy(build_py):
    """cudart/_generated/ (generated/) is a package folder for its merged modules, which
    cudart/_views.py reads there; the table of views in it is the package's
    cudart._versions (cudart/_versions.py, a link in a checkout: generator/tree.py
    linked_by_name), not a second time under _generated/ (wheel and sdist alike)."""

    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        if package == "cudart._generated":
            modules = [m for m in modules if m[1] != "_versions"]
        return modules

    def run(self) -> None:
        # What an earlier build left in build/lib stays there and goes into the next
        # wheel: before the merged modules, 30 per-version extensions and modules (a
        # 10.5 MB wheel from a checkout, 2.6 MB from a fresh clone). The package is
        # copied whole below; build_ext runs after this and adds its extensions.
        stale = Path(self.build_lib) / "cudart"
        if stale.is_dir():
            shutil.rmtree(stale)
        super().run()


def _reason(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[-1] if text else type(exc).__name__


def extensions() -> list[Extension]:
    # Function.launch in C (cudart/kernels/_fastlaunch.c): hand-written, one for every version;
    # then the generated raw functions of each (family, major): _fast_12, _fast_driver_13,
    # from cudart/_generated/ (generated/), whose C includes the headers of cudart/.
    generated = sorted((HERE / "cudart" / "_generated").glob("_fast_*.c"))
    return [
        _extension(
            "kernels._fastlaunch",
            "cudart/kernels/_fastlaunch.c",
            depends=["cudart/_capi.h", "cudart/_cthreads.h", "cudart/_cint.h"],
        ),
        # Record integer members range-checked in C (cudart/_fields.c): hand-written too.
        _extension(
            "_fields",
            "cudart/_fields.c",
            depends=["cudart/_capi.h", "cudart/_cthreads.h", "cudart/_cint.h"],
        ),
    ] + [
        _extension(
            source.stem,
            str(source.relative_to(HERE)),
            depends=list(HEADERS),
            include_dirs=["cudart"],
            libraries=["dl"],
            # No symbol table (11% of each): they export PyInit_* alone, which the
            # dynamic symbol table keeps. The hand-written two keep theirs: the bench's
            # ELF reader (bench/cupy_cudart.py) is tested on the launcher's local symbols.
            extra_link_args=["-Wl,--strip-all"],
        )
        for source in generated
    ]


def _extension(name: str, source: str, depends: list[str], **options) -> Extension:
    return Extension(
        f"cudart.{name}",
        [source],
        # The flags below are inputs too: an edit rebuilds, and $CUDART_PREBUILT's build
        # made with other flags is not taken.
        depends=[*depends, "setup.py"],
        # No debug information: a third of the build time, three quarters of the size. A
        # function the limited API lacks must fail the build (then ctypes serves), not
        # the import. No unwind tables either (issue 32's 25 MB install): the C is C,
        # never unwound through by an exception.
        extra_compile_args=[
            "-std=gnu11",
            "-O2",
            "-g0",
            "-fno-asynchronous-unwind-tables",
            "-Werror=implicit-function-declaration",
        ],
        py_limited_api=LIMITED_API,
        # Optional for setuptools too: an in-place build copies what did build, rather
        # than stop at the first extension that failed and place none.
        optional=True,
        **options,
    )


setup(
    ext_modules=extensions(),
    cmdclass={"build_ext": OptionalBuildExt, "build_py": GeneratedBuildPy},
    options={"bdist_wheel": {"py_limited_api": "cp311"}} if LIMITED_API else {},
)
