"""Which libcudart is loaded and which bindings serve it, where the choice could go
wrong: a library planted in the working directory, a forced module of another
version, a runtime without bindings. Each case runs in a fresh interpreter with the
real libraries of the pinned wheels."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from suite import REPO, run_python

from cudart import BindingsVersionError, select_version
from generator.fetch import fetch_version

# The calls go through the backend in force: make test-ctypes runs them on ctypes too.
pytestmark = pytest.mark.backend

REPORT = (
    "import json, cudart, cudart._loader as l\n"
    "r = cudart.load_runtime()\n"
    "print(json.dumps({'path': r.path, 'found_by': r.found_by, 'version': r.version,\n"
    "                  'candidates': [p for p, _ in l.candidates()]}))\n"
)


def _clean_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a user's run: only the checkout added, nothing of ours set."""
    full_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CUDART_", "CUDA_HOME", "CUDA_PATH", "PYTHON"))
    }
    full_env["PYTHONPATH"] = str(REPO)
    return full_env | (env or {})


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict:
    """Run the interpreter as a user would, in `cwd`, with only the checkout added."""
    full_env = _clean_env(env)
    proc = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=full_env, cwd=cwd
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _plant(folder: Path, header_sets, dist_info: bool = True) -> None:
    """A runtime wheel's layout in `folder`: real libraries of other versions than the
    environment's wheel (12.5), so loading them would show, and pip's record of it."""
    for sub, name, key in (
        ("cuda_runtime/lib", "libcudart.so.12", "12.2"),
        ("cu13/lib", "libcudart.so.13", "13.0"),
    ):
        (folder / "nvidia" / sub).mkdir(parents=True)
        shutil.copy(header_sets[key].library, folder / "nvidia" / sub / name)
    # A regular package, as the cu12 wheel's: the first on sys.path wins the import.
    (folder / "nvidia" / "__init__.py").write_text("")
    if dist_info:
        (folder / "nvidia_cuda_runtime_cu12-12.2.140.dist-info").mkdir()


def _wheel_of_the_environment(found: dict, planted: Path) -> None:
    assert found["found_by"] == "the nvidia runtime wheel"
    assert found["version"] == 12050, found  # the venv's nvidia-cuda-runtime-cu12
    assert not any(p.startswith(str(planted)) for p in found["candidates"]), found


def test_library_planted_in_the_working_directory_is_not_loaded(tmp_path, header_sets):
    _plant(tmp_path, header_sets)
    # python -c: sys.path[0] is ''
    _wheel_of_the_environment(_run(["-c", REPORT], tmp_path), tmp_path)
    # python -m: sys.path[0] is the working directory
    (tmp_path / "report.py").write_text(REPORT)
    _wheel_of_the_environment(_run(["-m", "report"], tmp_path), tmp_path)


@pytest.mark.parametrize(
    "chdir_first", [True, False], ids=["chdir-then-import", "import-then-chdir"]
)
def test_library_planted_where_python_m_started_is_not_loaded_after_a_chdir(
    tmp_path, header_sets, manifest, chdir_first
):
    """python -m pkg.mod run from a folder holding a planted runtime and NVRTC wheel (real
    libraries, each with pip's empty record): sys.path[0] is that folder, and was left
    out only while it was still the working directory, so a program that changed it
    before its first CUDA call loaded the planted libcudart and libnvrtc."""
    start = tmp_path / "start"
    _plant(start, header_sets)
    nvrtc = fetch_version(manifest, "12.2", lambda m: None, "nvrtc").library
    (start / "nvidia" / "cuda_nvrtc" / "lib").mkdir(parents=True)
    shutil.copy(nvrtc, start / "nvidia" / "cuda_nvrtc" / "lib" / "libnvrtc.so.12")
    (start / "nvidia_cuda_nvrtc_cu12-12.2.140.dist-info").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    chdir = f"import os\nos.chdir({str(elsewhere)!r})\n"
    report = REPORT + (
        "n = l.load_nvrtc()\n"
        "print(json.dumps({'path': n.path, 'version': n.version,\n"
        "                  'candidates': [p for p, _ in l.candidates('nvrtc')]}))\n"
    )
    first, rest = report.split("\n", 1)  # the imports, then the CUDA calls
    (start / "pkg").mkdir()
    (start / "pkg" / "__init__.py").write_text("")
    (start / "pkg" / "mod.py").write_text(
        chdir + report if chdir_first else first + "\n" + chdir + rest
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pkg.mod"],
        capture_output=True,
        text=True,
        cwd=start,
        env=_clean_env(),
    )
    assert proc.returncode == 0, proc.stderr
    runtime, nvrtc_found = (json.loads(line) for line in proc.stdout.splitlines()[-2:])
    _wheel_of_the_environment(runtime, start)
    assert nvrtc_found["version"] == 12050, nvrtc_found  # the venv's nvidia-cuda-nvrtc-cu12
    assert not any(p.startswith(str(start)) for p in nvrtc_found["candidates"]), nvrtc_found


def test_library_planted_next_to_the_script_is_not_loaded(tmp_path, header_sets):
    # The script's folder is sys.path[0], even named like a site folder.
    scripts = tmp_path / "site-packages"
    scripts.mkdir()
    _plant(scripts, header_sets)
    (scripts / "report.py").write_text(REPORT)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _wheel_of_the_environment(_run([str(scripts / "report.py")], elsewhere), scripts)


def test_wheel_installed_into_a_target_folder_is_found(tmp_path, header_sets):
    """pip install --target DIR, DIR on PYTHONPATH: an installed wheel, not a stray
    file, and found before the environment's own (it is first on sys.path)."""
    target = tmp_path / "target"
    _plant(target, header_sets)
    env = {"PYTHONPATH": f"{target}{os.pathsep}{REPO}"}
    found = _run(["-c", REPORT], REPO, env)
    assert found["found_by"] == "the nvidia runtime wheel"
    assert found["path"] == str(target / "nvidia/cu13/lib/libcudart.so.13")
    assert found["version"] == 13000
    # The same files without pip's record are not an installed wheel.
    stray = tmp_path / "stray"
    _plant(stray, header_sets, dist_info=False)
    env = {"PYTHONPATH": f"{stray}{os.pathsep}{REPO}"}
    _wheel_of_the_environment(_run(["-c", REPORT], REPO, env), stray)


def test_forced_version_of_another_major_is_refused():
    with pytest.raises(BindingsVersionError, match="do not fit the loaded CUDA 12.5 runtime"):
        select_version(12050, [12050, 13000], "13000")
    with pytest.raises(BindingsVersionError, match=r"force one of 13\.0, or point"):
        select_version(13010, [12050, 13000], "12050")


def test_forced_newer_minor_warns_and_older_is_silent():
    chosen, warning = select_version(12040, [12040, 12050], "12050")
    assert chosen == 12050
    assert "newer than the loaded CUDA 12.4 runtime" in warning
    assert "FunctionNotFoundError" in warning
    assert select_version(12050, [12040, 12050], "12040") == (12040, None)


FORCED = r"""
import ctypes, json, warnings, cudart
out = {}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        m = cudart.sys
    except cudart.BindingsVersionError as exc:
        out["error"] = str(exc)
    else:
        out["module"] = m.__name__
        v = ctypes.c_int()
        out["status"] = m.cudaRuntimeGetVersion(ctypes.byref(v))
        out["version"] = v.value
out["warnings"] = [(w.category.__name__, str(w.message)) for w in caught]
print(json.dumps(out))
"""


@pytest.mark.parametrize(
    "runtime, forced, expected",
    [
        ("12.5", "13000", "refused"),
        ("13.0", "12050", "refused"),
        ("12.4", "12050", "warned"),
        ("12.5", "12040", "silent"),
    ],
)
def test_forcing_bindings_on_a_real_runtime(header_sets, manifest, runtime, forced, expected):
    env = {
        "CUDART_LIBRARY": str(header_sets[runtime].library),
        "CUDART_BINDINGS_VERSION": forced,
    }
    out = json.loads(run_python(FORCED, env=env).stdout)
    number = manifest.get(runtime).number
    if expected == "refused":
        assert "module" not in out
        assert f"CUDART_BINDINGS_VERSION={forced}" in out["error"]
        assert f"loaded CUDA {runtime} runtime" in out["error"]
        return
    assert "error" not in out, out
    assert out["module"] == f"cudart.sys_{forced}"
    assert (out["status"], out["version"]) == (0, number)
    if expected == "warned":
        [(category, message)] = out["warnings"]
        assert category == "RuntimeWarning"
        assert "newer than the loaded CUDA 12.4 runtime" in message
    else:
        assert out["warnings"] == []


def test_module_of_another_major_imported_directly_refuses_to_call(header_sets):
    """cudart.sys_13000 on a 12.5 runtime: its cudaDeviceProp is 1,008 bytes where C
    writes 1,032, so its functions refuse rather than call."""
    code = r"""
import ctypes, cudart
import cudart.sys_13000 as m, cudart.checked_13000
prop = m.cudaDeviceProp()
for call in (lambda: m.cudaGetDeviceProperties(ctypes.byref(prop), 0),
             lambda: cudart.checked_13000.cudaRuntimeGetVersion()):
    try:
        call()
    except cudart.BindingsVersionError as exc:
        print(exc)
"""
    env = {"CUDART_LIBRARY": str(header_sets["12.5"].library)}
    lines = run_python(code, env=env).stdout.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("cudaGetDeviceProperties of the CUDA 13.0 bindings")
    assert "libcudart 12.5" in lines[0] and "use cudart.sys" in lines[0]
    assert lines[1].startswith("cudaRuntimeGetVersion of the CUDA 13.0 bindings")


def test_runtime_of_a_version_without_bindings_is_a_clear_error(header_sets):
    """A real 13.0 runtime where only 12.x bindings exist, and a real 12.0 runtime
    where only newer ones do."""
    code = r"""
import cudart
cudart._serving.available_versions = lambda: [v for v in ALL if KEEP(v)]
try:
    cudart.sys
except cudart.BindingsVersionError as exc:
    print(type(exc).__name__, "|", exc)
"""
    cases = [("13.0", "v < 13000", "13.0", "12.9"), ("12.0", "v > 12000", "12.0", "12.1")]
    for runtime, keep, says, lists in cases:
        prelude = f"ALL = __import__('cudart').available_versions()\nKEEP = lambda v: {keep}\n"
        env = {"CUDART_LIBRARY": str(header_sets[runtime].library)}
        out = run_python(prelude + code, env=env).stdout
        assert out.startswith("BindingsVersionError |"), out
        assert f"no bindings fit CUDA runtime {says}" in out
        assert lists in out and f"cudart-bindgen add {says}" in out


def test_function_absent_from_the_runtime_through_the_checked_api(header_sets):
    """The checked API of 12.5 on the 12.2 runtime (a module imported directly, as on
    an older runtime): a function 12.2 does not export raises FunctionNotFoundError
    naming both versions, before anything reaches C."""
    code = r"""
import cudart, cudart.checked_12050 as c, cudart.sys_12020 as old
assert "cudaStreamGetCaptureInfo_v3" not in old._FUNCTIONS
try:
    c.cudaStreamGetCaptureInfo_v3(None)
except cudart.FunctionNotFoundError as exc:
    print(exc)
"""
    env = {"CUDART_LIBRARY": str(header_sets["12.2"].library)}
    message = run_python(code, env=env).stdout.strip()
    assert message.startswith("cudaStreamGetCaptureInfo_v3"), message
    assert "CUDA 12.5 headers" in message and "libcudart 12.2" in message


# ---------------------------------------------------------------- libcuda (the driver API)

_DRIVER_REPORT = r"""
import json, cudart, cudart._loader as l
out = {"candidates": l.candidates("driver")}
try:
    d = l.load_driver()
    out.update(path=d.path, found_by=d.found_by, version=d.version)
except cudart.DriverNotFoundError as exc:
    out["error"] = str(exc)
print(json.dumps(out))
"""


def test_driver_library_variable_forces_one_and_is_the_only_one_tried():
    # A $CUDART_DRIVER_LIBRARY that does not load is an error, not a reason to fall back
    # on the system's libcuda.so.1.
    missing = "/nonexistent/libcuda.so.1"
    out = _run(["-c", _DRIVER_REPORT], REPO, {"CUDART_DRIVER_LIBRARY": missing})
    assert out["candidates"] == [[missing, "$CUDART_DRIVER_LIBRARY"]]
    tried = out["error"].split("Tried: ", 1)[1]
    assert tried.startswith(missing) and "system loader" not in tried
    assert "NVIDIA driver" in out["error"]


def test_driver_is_found_as_c_finds_it_and_the_variable_overrides_it(driver_stub):
    # Unset: the system loader's libcuda.so.1 (here the stub on LD_LIBRARY_PATH, as C
    # linked with -lcuda would find it); set: that path, whatever the loader would find.
    on_path = driver_stub("12.5", driver_version=12050)
    forced = driver_stub("12.5", driver_version=13000)
    env = {"LD_LIBRARY_PATH": str(on_path.parent)}
    out = _run(["-c", _DRIVER_REPORT], REPO, env)
    assert out["candidates"] == [["libcuda.so.1", "the system loader"]]
    assert (out["path"], out["found_by"], out["version"]) == (
        "libcuda.so.1",
        "the system loader",
        12050,
    )
    out = _run(["-c", _DRIVER_REPORT], REPO, env | {"CUDART_DRIVER_LIBRARY": str(forced)})
    assert (out["path"], out["found_by"], out["version"]) == (
        str(forced),
        "$CUDART_DRIVER_LIBRARY",
        13000,
    )


def test_driver_version_is_zero_where_the_driver_cannot_say_and_other_libraries_are_refused(
    driver_stub, header_sets
):
    # NVIDIA's stub fails cuDriverGetVersion: it loads, version 0. A library that is no
    # libcuda (libcudart) is refused by name.
    out = _run(["-c", _DRIVER_REPORT], REPO, {"CUDART_DRIVER_LIBRARY": str(driver_stub("12.5"))})
    assert out["version"] == 0 and out["found_by"] == "$CUDART_DRIVER_LIBRARY"
    other = str(header_sets["12.5"].library)
    out = _run(["-c", _DRIVER_REPORT], REPO, {"CUDART_DRIVER_LIBRARY": other})
    assert out["error"] == f"{other} is not libcuda: no cuDriverGetVersion"


def test_nvjitlink_is_found_in_an_installed_wheels_folder(tmp_path, manifest):
    """A folder on sys.path holding the nvJitLink wheel as pip --target installs it (its
    library and dist-info) is searched, and the library found there reports its
    version: 12.2's has no nvJitLinkVersion, so it is read from its versioned symbols."""
    library = fetch_version(manifest, "12.2", lambda m: None, "nvjitlink").library
    target = tmp_path / "target"
    (target / "nvidia" / "nvjitlink" / "lib").mkdir(parents=True)
    (target / "nvidia" / "nvjitlink" / "lib" / "libnvJitLink.so.12").symlink_to(library)
    (target / "nvidia_nvjitlink_cu12-12.2.140.dist-info").mkdir()
    code = (
        "import json, cudart._loader as l\n"
        "n = l.load_nvjitlink()\n"
        "print(json.dumps({'path': n.path, 'found_by': n.found_by, 'version': n.version}))\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    found = _run(["-c", code], elsewhere, {"PYTHONPATH": f"{REPO}:{target}"})
    assert found == {
        "path": str(target / "nvidia" / "nvjitlink" / "lib" / "libnvJitLink.so.12"),
        "found_by": "the nvidia nvjitlink wheel",
        "version": 12020,
    }


_RACE_AND_RETRY = r"""
import ctypes, json, os, threading
import cudart._loader as l
from cudart.errors import DriverNotFoundError
opened = []
real_cdll = ctypes.CDLL
def counting_cdll(path, *args, **kwargs):
    opened.append(path)
    return real_cdll(path, *args, **kwargs)
ctypes.CDLL = counting_cdll
# A failed first load is not remembered: the next call searches again.
os.environ["CUDART_DRIVER_LIBRARY"] = "/nonexistent/libcuda.so.1"
try:
    l.load_driver()
    failed = False
except DriverNotFoundError:
    failed = True
os.environ["CUDART_DRIVER_LIBRARY"] = os.environ["STUB"]
retried = l.load_driver().path
# Threads racing on the first load share one load.
start = threading.Barrier(8)
got = []
def first_call():
    start.wait()
    got.append(l.load_runtime())
threads = [threading.Thread(target=first_call) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps({"failed": failed, "retried": retried, "same": len({id(r) for r in got}),
                  "calls": len(got), "opened": opened, "loaded": l.load_runtime.loaded.path}))
"""


def test_a_library_loads_once_under_racing_first_calls_and_a_failure_is_retried(driver_stub):
    stub = str(driver_stub("12.5"))
    out = _run(["-c", _RACE_AND_RETRY], REPO, {"STUB": stub})
    assert out["failed"] and out["retried"] == stub
    assert (out["calls"], out["same"]) == (8, 1)
    # The driver: the missing path, then the stub; the runtime: one library, opened once.
    assert out["opened"][:2] == ["/nonexistent/libcuda.so.1", stub]
    assert out["opened"][2:] == [out["loaded"]]
