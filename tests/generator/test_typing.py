"""The shipped annotations hold up under `mypy --strict` on a user's script.

tests/generator/typing_user_script.py uses the top-level API the way the README shows it, and
tests/generator/typing_raw_script.py the raw layer (`cudart.sys`, `cudart.sys_<version>`); their
`# type: ignore[...]` lines are mistakes mypy must catch, and warn_unused_ignores makes
the run fail if it stops catching them (as it would if the API decayed to Any).
cudart's own modules are checked the way mypy checks an installed typed package:
followed for types, their internal diagnostics not reported.
"""

from __future__ import annotations

import subprocess
import sys

from suite import REPO

from generator.views import write_package

CONFIG = """\
[mypy]
strict = True
warn_unused_ignores = True
cache_dir = {cache}

[mypy-cudart.*]
ignore_errors = True
"""


def run_mypy(tmp_path, script, root=REPO):
    config = tmp_path / "mypy.ini"
    config.write_text(CONFIG.format(cache=tmp_path / "cache"))
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), str(script)],
        capture_output=True,
        text=True,
        cwd=root,
    )


def test_user_script_passes_mypy_strict(tmp_path):
    proc = run_mypy(tmp_path, REPO / "tests" / "generator" / "typing_user_script.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success" in proc.stdout


def test_raw_script_passes_mypy_strict(tmp_path):
    """The raw layer's functions are declared for type checkers: the script's calls
    check, and its marked mistakes are errors (warn_unused_ignores). It names an older
    version's module too, which a type checker sees only as a file of its own (the
    package with every view written out: generator/views.py; an installed package types
    the newest version's modules, through their stubs)."""
    views = write_package(tmp_path / "views").parent
    proc = run_mypy(tmp_path, REPO / "tests" / "generator" / "typing_raw_script.py", views)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success" in proc.stdout


def test_mypy_sees_real_types(tmp_path):
    """Wrong uses are errors, so the passing run above means something."""
    script = tmp_path / "wrong.py"
    script.write_text(
        "import cudart\n"
        "ptr: str = cudart.cudaMalloc(16)\n"
        "cudart.cudaMemGetInfo(0)\n"
        "prop = cudart.cudaGetDeviceProperties(0)\n"
        "name: int = prop.name\n"
        "cudart.cudaStreamSynchronize('stream')\n"
    )
    proc = run_mypy(tmp_path, script)
    assert proc.returncode == 1
    for line in (2, 3, 5, 6):
        assert f"wrong.py:{line}: error" in proc.stdout, proc.stdout
