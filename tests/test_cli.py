"""The cudart-bindgen command line: check, generate, add, and its one-line errors."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import GENERATED, REPO, run_python


def bindgen(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def generated_copy(tmp_path_factory):
    target = tmp_path_factory.mktemp("tree") / "generated"
    shutil.copytree(GENERATED, target)
    return target


def test_check_passes_on_the_committed_tree():
    proc = bindgen("check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "matches the generator" in proc.stdout


def test_check_names_the_stale_file(generated_copy):
    victim = generated_copy / "sys_12040.py"
    victim.write_text(victim.read_text().replace("cudaSuccess = 0", "cudaSuccess = 1", 1))
    (generated_copy / "sys_99990.py").write_text("# stray\n")
    proc = bindgen("--output", str(generated_copy), "check")
    assert proc.returncode == 1
    assert "sys_12040.py: stale" in proc.stdout
    assert "sys_99990.py: not made by the generator" in proc.stdout
    assert "sys_12050.py" not in proc.stdout


def test_generate_one_version_writes_the_same_bytes(tmp_path):
    out = tmp_path / "generated"
    proc = bindgen("--output", str(out), "generate", "12.2")
    assert proc.returncode == 0, proc.stderr
    # A version is its raw module and its checked module.
    assert sorted(p.name for p in out.iterdir()) == ["checked_12020.py", "sys_12020.py"]
    for name in ("sys_12020.py", "checked_12020.py"):
        assert (out / name).read_bytes() == (GENERATED / name).read_bytes()
    assert "parsing cuda_runtime_api.h" in proc.stderr  # progress is shown


def test_unknown_version_is_one_line(tmp_path):
    out = tmp_path / "generated"
    proc = bindgen("--output", str(out), "generate", "11.0")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "11.0" in lines[0] and "12.5" in lines[0]
    assert not out.exists()


def test_network_failure_is_one_line_and_writes_nothing(tmp_path):
    manifest = tmp_path / "manifest.toml"
    shutil.copy(REPO / "cuda_headers_manifest.toml", manifest)
    out = tmp_path / "generated"
    env = {
        "CUDART_BINDGEN_CACHE": str(tmp_path / "cache"),
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
        "PIP_RETRIES": "0",
        "PIP_TIMEOUT": "2",
    }
    proc = bindgen("--manifest", str(manifest), "--output", str(out), "generate", "12.5", env=env)
    assert proc.returncode == 2
    errors = [l for l in proc.stderr.splitlines() if l.startswith("cudart-bindgen: error")]
    assert len(errors) == 1 and "could not download" in errors[0], proc.stderr
    assert not out.exists()
    assert manifest.read_bytes() == (REPO / "cuda_headers_manifest.toml").read_bytes()


def test_add_pins_the_newest_patch_and_generates(tmp_path):
    manifest = tmp_path / "manifest.toml"
    text = (REPO / "cuda_headers_manifest.toml").read_text()
    # Start from a manifest without 12.6, whether or not the committed one has it.
    from generator.manifest import Manifest

    m = Manifest.loads(text)
    m = type(m)(m.families, {k: v for k, v in m.versions.items() if k != "12.6"})
    manifest.write_text(m.dumps())
    out = tmp_path / "generated"
    proc = bindgen("--manifest", str(manifest), "--output", str(out), "add", "12.6")
    assert proc.returncode == 0, proc.stderr
    pinned = Manifest.load(manifest).get("12.6")
    assert pinned.runtime.version == "12.6.77"
    assert len(pinned.runtime.sha256) == 64 and len(pinned.crt.sha256) == 64
    module_path = out / "sys_12060.py"
    assert module_path.is_file()
    # The new module binds to the real 12.6 library it was generated for.
    from generator.fetch import fetch_version

    lib = fetch_version(Manifest.load(manifest), "12.6", lambda m: None).library
    code = (
        "import ctypes, importlib.util, cudart\n"
        f"spec = importlib.util.spec_from_file_location('cudart.sys_12060', {str(module_path)!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "v = ctypes.c_int(); m.cudaRuntimeGetVersion(ctypes.byref(v)); print(m.CUDA_VERSION, v.value)\n"
    )
    assert run_python(code, env={"CUDART_LIBRARY": str(lib)}).stdout.split() == ["12060", "12060"]


def test_add_of_a_minor_that_does_not_exist_changes_nothing(tmp_path):
    manifest = tmp_path / "manifest.toml"
    shutil.copy(REPO / "cuda_headers_manifest.toml", manifest)
    before = manifest.read_bytes()
    proc = bindgen("--manifest", str(manifest), "--output", str(tmp_path / "g"), "add", "12.99")
    assert proc.returncode == 2
    assert "no release" in proc.stderr and "12.99" in proc.stderr
    assert manifest.read_bytes() == before
    assert not (tmp_path / "g").exists()


def test_console_script_is_installed():
    script = shutil.which("cudart-bindgen", path=str(__import__("pathlib").Path(sys.executable).parent))
    assert script, "make setup installs the cudart-bindgen console script"
    proc = subprocess.run([script, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "generate" in proc.stdout
