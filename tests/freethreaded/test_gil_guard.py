"""With the GIL off (a free-threaded interpreter, `make test-freethreaded`), it stays off:
every extension built for the interpreter declares that it needs no GIL, and the suite's
guard (tests/conftest.py) turns a module that would switch the GIL back on into a failed
import in the interpreters the tests start. On a GIL build there is nothing to check."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig

import pytest
from suite import REPO, run_python

pytestmark = pytest.mark.skipif(
    not sysconfig.get_config_var("Py_GIL_DISABLED"), reason="a GIL build of Python"
)
RUNTIME_KEY = "12.5"

NEEDS_THE_GIL = r"""
#include <Python.h>
/* Single-phase init, no Py_mod_gil: 3.13t enables the GIL to load it. */
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "needs_gil", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_needs_gil(void) { return PyModule_Create(&def); }
"""

ALL_EXTENSIONS = r"""
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
import cudart
version = cudart.cudaRuntimeGetVersion()
loaded = [m.__file__ for m in list(sys.modules.values()) if getattr(m, "__file__", None)]
print(json.dumps({
    "gil": sys._is_gil_enabled(),
    "backend": cudart.backend(),
    "version": version,
    "abi3": [f for f in loaded if f.endswith(".abi3.so")],
}))
"""


def _built_for_this_interpreter() -> list[str]:
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    return sorted(
        ".".join(p.relative_to(REPO).parts).removesuffix(suffix)
        for p in (REPO / "cudart").rglob(f"*{suffix}")
    )


def test_a_module_that_needs_the_gil_fails_to_import_under_the_guard(tmp_path):
    source = tmp_path / "needs_gil.c"
    source.write_text(NEEDS_THE_GIL)
    target = tmp_path / f"needs_gil{sysconfig.get_config_var('EXT_SUFFIX')}"
    include = sysconfig.get_paths()["include"]
    subprocess.run(
        ["gcc", "-shared", "-fPIC", f"-I{include}", str(source), "-o", str(target)], check=True
    )
    code = "import sys, needs_gil; print(sys._is_gil_enabled())"
    guarded = run_python(code, env={"PYTHONPATH": str(tmp_path)}, check=False)
    assert guarded.returncode != 0
    assert "has been enabled to load module 'needs_gil'" in guarded.stderr, guarded.stderr
    # Without the guard the same import succeeds, and the GIL is on: what it catches.
    unguarded = run_python(code, env={"PYTHONPATH": str(tmp_path), "PYTHONWARNINGS": ""})
    assert unguarded.stdout.split() == ["True"]


def test_every_extension_built_for_this_interpreter_leaves_the_gil_off(header_sets):
    names = _built_for_this_interpreter()
    assert names, "no extension built for this interpreter: setup.py build_ext --inplace"
    assert "cudart.kernels._fastlaunch" in names
    env = {"CUDART_LIBRARY": str(header_sets[RUNTIME_KEY].library), "CUDART_BACKEND": "compiled"}
    code = f"import sys; sys.argv[1:] = {names!r}\n" + ALL_EXTENSIONS
    report = json.loads(run_python(code, env=env).stdout)
    assert report == {"gil": False, "backend": "compiled", "version": 12050, "abi3": []}


def test_this_process_runs_without_the_gil():
    assert not sys._is_gil_enabled()
