"""bench/cupy_cudart.py: a function's address from an ELF file's symbol table and the
process's mappings, as the bench finds CuPy's static copy of the runtime, checked against
the loader's answer for an exported function and the type slots of local ones in a real
extension of ours."""

from __future__ import annotations

import ctypes
import importlib
import sys
from pathlib import Path

import needs
import pytest

from bench.cupy_cudart import cupy_pointers, mapped_functions

PY_TP_DEALLOC, PY_TP_INIT = 52, 60  # Include/typeslots.h


@pytest.fixture(scope="module")
def launcher():
    try:
        return importlib.import_module("cudart.kernels._fastlaunch")
    except ImportError as exc:
        # Any real extension of ours serves, whatever the backend in force: only a
        # missing build (a failure in CI) leaves none.
        needs.missing(f"cudart.kernels._fastlaunch is not built ({exc}): run `make build`")


def test_an_exported_function_where_the_loader_has_it(launcher):
    path = Path(launcher.__file__)
    found = mapped_functions(path, ["PyInit__fastlaunch", "no_such_function"])
    loader = ctypes.cast(ctypes.CDLL(str(path)).PyInit__fastlaunch, ctypes.c_void_p).value
    assert found == {"PyInit__fastlaunch": loader}


def test_local_functions_where_their_type_points(launcher):
    """Static linking leaves the runtime's functions local, as these are."""
    slot = ctypes.pythonapi.PyType_GetSlot
    slot.restype, slot.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_int]
    found = mapped_functions(Path(launcher.__file__), ["Launcher_dealloc", "Launcher_init"])
    assert found == {
        "Launcher_dealloc": slot(launcher.Launcher, PY_TP_DEALLOC),
        "Launcher_init": slot(launcher.Launcher, PY_TP_INIT),
    }


def test_refusals(tmp_path, launcher):
    not_elf = tmp_path / "x.so"
    not_elf.write_bytes(b"not an ELF file")
    with pytest.raises(LookupError, match="not a 64-bit"):
        mapped_functions(not_elf, ["f"])
    copy = tmp_path / "copy.so"
    copy.write_bytes(Path(launcher.__file__).read_bytes())
    with pytest.raises(LookupError, match="not mapped"):
        mapped_functions(copy, ["PyInit__fastlaunch"])
    if "cupy_backends.cuda.api.runtime" not in sys.modules:
        with pytest.raises(LookupError, match="not imported"):
            cupy_pointers(["cudaGetDevice"])
