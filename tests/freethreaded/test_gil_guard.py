"""With the GIL off (a free-threaded interpreter, `make test-freethreaded`), the suite's
guard (tests/conftest.py) turns a module that would switch the GIL back on into a failed
import in the interpreters the tests start (that every extension of ours declares itself
GIL-free is tests/compiled/test_freethreaded.py's). On a GIL build there is nothing to
check."""

from __future__ import annotations

import subprocess
import sysconfig

import pytest
from suite import run_python

pytestmark = pytest.mark.skipif(
    not sysconfig.get_config_var("Py_GIL_DISABLED"), reason="a GIL build of Python"
)

NEEDS_THE_GIL = r"""
#include <Python.h>
/* Single-phase init, no Py_mod_gil: 3.13t enables the GIL to load it. */
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "needs_gil", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_needs_gil(void) { return PyModule_Create(&def); }
"""


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
