"""The compiled backend (issue 13): one CPython extension per CUDA version, built from
the generated C sources beside the package (cudart/_fast_<ver>.c, which include
cudart/_fastcall.h), for the limited API of Python 3.11 (one build per version serves
3.11 and every later Python).

The extensions are optional by design: where no C compiler works, the build prints one
line and the package installs as pure Python, served by its ctypes backend
(cudart.backend() says which is in force). Everything else is in pyproject.toml.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
NOTICE = "cudart: no compiled backend ({why}); the ctypes backend serves (cudart.backend())"


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
        try:
            super().build_extension(ext)
        except Exception as exc:
            print(NOTICE.format(why=f"{ext.name}: {_reason(exc)}"), file=sys.stderr)


def _reason(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[-1] if text else type(exc).__name__


def extensions() -> list[Extension]:
    # Function.launch in C (cudart/kernels/_fastlaunch.c): hand-written, one for every version;
    # then the generated raw functions of each version.
    generated = sorted((HERE / "cudart").glob("_fast_*.c"))
    return [_extension("kernels._fastlaunch", "cudart/kernels/_fastlaunch.c")] + [
        _extension(
            source.stem,
            str(source.relative_to(HERE)),
            depends=["cudart/_fastcall.h", "cudart/_fastchecked.h"],
            libraries=["dl"],
        )
        for source in generated
    ]


def _extension(name: str, source: str, **options) -> Extension:
    return Extension(
        f"cudart.{name}",
        [source],
        define_macros=[("Py_LIMITED_API", "0x030B0000")],
        # No debug information: a third of the build time, three quarters of the size. A
        # function the limited API lacks must fail the build (then ctypes serves), not
        # the import.
        extra_compile_args=["-std=gnu11", "-O2", "-g0", "-Werror=implicit-function-declaration"],
        py_limited_api=True,
        **options,
    )


setup(
    ext_modules=extensions(),
    cmdclass={"build_ext": OptionalBuildExt},
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
)
