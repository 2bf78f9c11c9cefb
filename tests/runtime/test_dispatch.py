"""Choosing the bindings for a runtime, finding the library, and the clear errors."""

from __future__ import annotations

import pytest
from suite import run_python

import cudart
from cudart import BindingsVersionError, select_version
from cudart._versions import VIEWS

# The calls go through the backend in force: make test-ctypes runs them on ctypes too.
pytestmark = pytest.mark.backend

AVAILABLE = [12020, 12040, 12050]


def test_available_versions_lists_generated_modules(manifest):
    on_disk = list(VIEWS["sys"])  # the generated table of views (cudart/_views.py)
    assert cudart.available_versions() == on_disk
    assert on_disk == sorted(manifest.get(key).number for key in manifest.keys())


def test_exact_match_wins():
    assert select_version(12040, AVAILABLE) == (12040, None)


def test_newer_minor_falls_back_to_the_highest_below_with_a_warning():
    chosen, warning = select_version(12080, AVAILABLE)
    assert chosen == 12050
    assert "12.8" in warning and "12.5" in warning


def test_between_versions_picks_the_one_below():
    assert select_version(12030, AVAILABLE)[0] == 12020


def test_runtime_older_than_every_module_is_an_error():
    with pytest.raises(BindingsVersionError, match="11.8"):
        select_version(11080, AVAILABLE)


def test_other_major_is_not_served_by_12_bindings():
    with pytest.raises(BindingsVersionError, match="cudart-bindgen add 13.0"):
        select_version(13000, AVAILABLE)


def test_forced_version():
    assert select_version(12050, AVAILABLE, "12020") == (12020, None)
    with pytest.raises(BindingsVersionError, match="12030"):
        select_version(12050, AVAILABLE, "12030")
    with pytest.raises(BindingsVersionError, match="not a version"):
        select_version(12050, AVAILABLE, "twelve")


def test_override_env_selects_module_on_a_real_library(header_sets):
    lib = header_sets["12.5"].library
    code = "import cudart; print(cudart.sys.__name__)"
    out = run_python(code, env={"CUDART_LIBRARY": str(lib), "CUDART_BINDINGS_VERSION": "12040"})
    assert out.stdout.strip() == "cudart.sys_12040"


def test_newer_runtime_gets_older_bindings_and_a_warning(manifest, header_sets):
    """A real runtime without a module of its own is served by the newest module below
    it in its major version, with a warning. Each major's newest runtime is loaded with
    its own module hidden from the package, so the test holds whatever the version set."""
    by_major: dict[int, list[str]] = {}
    for key in manifest.keys():
        by_major.setdefault(int(key.split(".")[0]), []).append(key)
    cases = [(keys[-1], keys[-2]) for keys in by_major.values() if len(keys) > 1]
    assert cases, "no major version has two pinned minors"
    for runtime_key, expected_key in cases:
        hidden = manifest.get(runtime_key).number
        code = (
            "import warnings, cudart\n"
            f"shown = [v for v in cudart.available_versions() if v != {hidden}]\n"
            "cudart._serving.available_versions = lambda: shown\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    m = cudart.sys\n"
            "print(m.__name__)\n"
            "print(w[0].message)\n"
        )
        env = {"CUDART_LIBRARY": str(header_sets[runtime_key].library)}
        out = run_python(code, env=env).stdout.splitlines()
        assert out[0] == f"cudart.sys_{manifest.get(expected_key).number}"
        assert runtime_key in out[1] and expected_key in out[1]


def test_missing_library_is_a_clear_error(tmp_path):
    code = (
        "import cudart\n"
        "try:\n"
        "    cudart.sys\n"
        "except cudart.LibraryNotFoundError as exc:\n"
        "    print(type(exc).__name__, '|', exc)\n"
    )
    out = run_python(code, env={"CUDART_LIBRARY": str(tmp_path / "libcudart.so.12")}).stdout
    assert out.startswith("LibraryNotFoundError |")
    assert str(tmp_path / "libcudart.so.12") in out
    assert "pip install nvidia-cuda-runtime-cu12" in out


def test_a_library_that_is_not_cudart_is_refused():
    code = (
        "import cudart\n"
        "try:\n"
        "    cudart.sys\n"
        "except cudart.LibraryNotFoundError as exc:\n"
        "    print(exc)\n"
    )
    out = run_python(code, env={"CUDART_LIBRARY": "libc.so.6"}).stdout
    assert "not libcudart" in out


def test_wheel_in_the_environment_is_found_without_configuration():
    """The dev environment installs nvidia-cuda-runtime-cu12; nothing else is set."""
    code = (
        "import cudart; r = cudart.load_runtime(); print(r.found_by, '|', r.path, '|', r.version)"
    )
    found_by, path, version = run_python(code).stdout.strip().split(" | ")
    assert found_by == "the nvidia runtime wheel"
    assert path.endswith("nvidia/cuda_runtime/lib/libcudart.so.12")
    assert int(version) // 1000 == 12


def test_cuda_home_is_searched(header_sets, tmp_path):
    lib = header_sets["12.4"].library
    (tmp_path / "lib64").mkdir()
    (tmp_path / "lib64" / "libcudart.so.12").symlink_to(lib)
    # Hide the wheel: run with -S-like isolation is not possible, so point PYTHONPATH
    # only at the checkout and use an interpreter without the venv's site-packages.
    import sys

    base = getattr(sys, "_base_executable", sys.executable)
    code = "import cudart; r = cudart.load_runtime(); print(r.found_by, r.version)"
    out = run_python(code, env={"CUDA_HOME": str(tmp_path)}, python=base).stdout.split()
    assert out == ["$CUDA_HOME", "12040"], out


def test_import_needs_no_library():
    code = (
        "import cudart, cudart._loader as l; "
        "print(l.load_runtime.loaded is None, cudart.available_versions())"
    )
    out = run_python(code, env={"CUDART_LIBRARY": "/nonexistent/libcudart.so"}).stdout
    assert out.startswith("True [")
