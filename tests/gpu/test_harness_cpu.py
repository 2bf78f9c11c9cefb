"""The GPU suite's own machinery, checked on the CPU (no GPU, the real libcudarts):
a GPU run without a GPU fails instead of skipping, run_on_device.sh records the commit
and a digest, the 12.x runs find NVRTC and nvJitLink of their own major where
stage_device_libs.py put them, the library route is offered exactly where the runtime
has it, and the C reproducer of the kernel-node test builds and binds every symbol it
calls."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from suite import REPO, run_python

CPU_CHECKS = True  # tests/gpu/conftest.py: not a GPU test

HERE = Path(__file__).resolve().parent
# One cheap GPU test: what the suite does to it is what it does to all 470.
ONE_GPU_TEST = "tests/gpu/test_safety_ranges.py::test_a_size_beyond_size_t_is_refused_before_c"
LIBRARY_ROUTE_SINCE = (12, 8)


def pytest_in_subprocess(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    code = f"import sys, pytest; sys.exit(pytest.main({args!r}))"
    return run_python(code, env=env, check=False)


def test_without_a_gpu_the_gpu_tests_skip_unless_a_gpu_is_required():
    args = [ONE_GPU_TEST, "-q", "-p", "no:cacheprovider", "-rs"]
    plain = pytest_in_subprocess(args, {})
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "1 skipped" in plain.stdout and "no usable GPU: cudaGetDeviceCount" in plain.stdout

    required = pytest_in_subprocess(args, {"CUDART_REQUIRE_GPU": "1"})
    assert required.returncode == 1, required.stdout + required.stderr
    assert "1 error" in required.stdout  # failed in setup, before any fixture
    assert "$CUDART_REQUIRE_GPU is set and there is no usable GPU" in required.stdout


def test_run_on_device_fails_without_a_gpu_and_records_the_commit(tmp_path):
    device, out = tmp_path / "device", tmp_path / "out"
    stamp = subprocess.run(
        [sys.executable, str(HERE / "summarize.py"), "stamp", str(device / "COMMIT")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert stamp.splitlines()[0] == f"commit {head}"

    proc = run_device_script(device, out, "machine", ["-k", ONE_GPU_TEST.rsplit(":", 1)[1]])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    results = (out / "RESULTS.md").read_text()
    assert f"commit {head}" in results
    digests = list(out.glob(f"digest-*-{head[:12]}.md"))
    assert len(digests) == 1, sorted(p.name for p in out.iterdir())
    digest = digests[0].read_text()
    assert digest.startswith(f"# GPU run at {head}")
    assert "| machine-ctypes |" in digest
    failed = digest.split("## Failed", 1)[1].split("## Skipped", 1)[0]
    assert ONE_GPU_TEST in failed and "CUDART_REQUIRE_GPU is set" in failed


def test_run_on_device_fails_without_the_commit_stamp(tmp_path):
    proc = run_device_script(tmp_path / "device", tmp_path / "out", "none", [])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "COMMIT: run tests/gpu/prepare_device_libs.sh" in proc.stderr


def test_the_12x_runs_get_nvrtc_and_nvjitlink_of_their_major(tmp_path):
    # The device folder as prepare_device_libs.sh stages it (two runtimes here), then
    # their runs: each log says which libraries the run found. LTO-IR links only within
    # the major version that wrote it, so the 12.x runs need 12.x of both; the 13.x ones
    # keep the machine's own (cudart's search, whatever it finds here).
    device, out = tmp_path / "device", tmp_path / "out"
    subprocess.run(
        [sys.executable, "-m", "tests.gpu.stage_device_libs", str(device), "12.5", "13.0"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    subprocess.run(
        [sys.executable, str(HERE / "summarize.py"), "stamp", str(device / "COMMIT")],
        capture_output=True,
        check=True,
    )
    proc = run_device_script(device, out, "12.5 13.0", ["-k", ONE_GPU_TEST.rsplit(":", 1)[1]])
    found = {label: _libraries_found(out / f"log-{label}-ctypes.txt") for label in ("12.5", "13.0")}
    assert set(found["12.5"]) == {"runtime", "nvrtc", "nvjitlink"}, (proc.stdout, found)
    for name, soname in (
        ("runtime", "libcudart.so.12"),
        ("nvrtc", "libnvrtc.so.12"),
        ("nvjitlink", "libnvJitLink.so.12"),
    ):
        version, path = found["12.5"][name].split(" ", 1)
        assert version.startswith("12."), (name, found["12.5"][name])
        assert path.startswith(str(device)) and path.endswith(soname), (name, found["12.5"][name])
    assert found["13.0"]["runtime"].startswith("13.0 " + str(device))
    for name in ("nvrtc", "nvjitlink"):
        assert str(device) not in found["13.0"][name], (name, found["13.0"][name])


def _libraries_found(log: Path) -> dict[str, str]:
    """run_on_device.sh's first lines of a run's log: library -> "<version> <path>"."""
    return dict(re.findall(r"^(runtime|nvrtc|nvjitlink): (.*)$", log.read_text(), re.MULTILINE))


def run_device_script(device: Path, out: Path, runtimes: str, args: list[str]):
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("CUDART_", "CUDA_HOME", "PYTEST_"))
    }
    env.update(
        DEVICE_DIR=str(device),
        OUT=str(out),
        PYTHON=sys.executable,
        RUNTIMES=runtimes,
        BACKENDS="ctypes",
    )
    return subprocess.run(
        ["bash", str(HERE / "run_on_device.sh"), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=600,
    )


@pytest.mark.parametrize("version", ["12.5", "12.8", "13.0", "13.5"])
def test_routes_offer_the_library_route_where_the_runtime_has_it(header_sets, version):
    code = "import cudart\nfrom tests.gpu.support import routes\nprint(routes(cudart.sys))"
    lib = str(header_sets[version].library)
    got = run_python(code, env={"CUDART_LIBRARY": lib}).stdout.strip()
    major, minor = (int(x) for x in version.split("."))
    library = (major, minor) >= LIBRARY_ROUTE_SINCE
    assert got == str(["register", "library"] if library else ["register"])


@pytest.fixture(scope="module")
def repro(tmp_path_factory) -> Path:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH here: the GPU run builds the reproducer")
    exe = tmp_path_factory.mktemp("repro") / "graph_kernel_node_repro"
    subprocess.run(
        [nvcc, "-x", "c++", "-cudart", "none", "-o", str(exe)]
        + [str(HERE / "graph_kernel_node_repro.cu"), "-ldl"],
        check=True,
        capture_output=True,
    )
    return exe


def test_the_kernel_node_reproducer_binds_each_library_route_runtime(repro, header_sets):
    """Every symbol it calls is in each 12.8+ libcudart; with no GPU, the first device
    call answers, so it stops there with the runtime's own error."""
    fatbin = str(REPO / "tests" / "kernels" / "kernels.fatbin")
    for version, headers in header_sets.items():
        major, minor = (int(x) for x in version.split("."))
        if (major, minor) < LIBRARY_ROUTE_SINCE:
            continue
        proc = subprocess.run(
            [str(repro), str(headers.library), fatbin, "2"], capture_output=True, text=True
        )
        assert proc.stdout.splitlines()[0] == f"runtime {major * 1000 + minor * 10}", version
        assert proc.returncode == 3, (version, proc.stdout, proc.stderr)
        assert "cudaMallocHost_(&x_in, nbytes) failed: cudaError" in proc.stderr, version


def test_the_kernel_node_reproducer_binds_each_runtime_on_the_register_route(repro, header_sets):
    """Its register mode, with the names cudart.kernels registers, on every runtime (the
    register route is in each, the library route's symbols only where library-first
    asks for them): with no GPU it stops at the first device call, with the runtime's
    own error."""
    from .test_graphs import register_mode

    fatbin = str(REPO / "tests" / "kernels" / "kernels.fatbin")
    for version, headers in header_sets.items():
        major, minor = (int(x) for x in version.split("."))
        histories = [()] + ([("library-first",)] if (major, minor) >= LIBRARY_ROUTE_SINCE else [])
        for history in histories:
            proc = subprocess.run(
                [str(repro), str(headers.library), fatbin, "2", *register_mode(*history)],
                capture_output=True,
                text=True,
            )
            assert proc.stdout.splitlines()[0] == f"runtime {major * 1000 + minor * 10}", version
            assert proc.returncode == 3, (version, history, proc.stdout, proc.stderr)
            assert "cudaMallocHost_(&x_in, nbytes) failed: cudaError" in proc.stderr, version
        if (major, minor) < LIBRARY_ROUTE_SINCE:
            proc = subprocess.run(
                [str(repro), str(headers.library), fatbin, "2", *register_mode("library-first")],
                capture_output=True,
                text=True,
            )
            assert proc.returncode == 2 and "no library route" in proc.stderr, version


@pytest.fixture(scope="module")
def cu_function_as_func(tmp_path_factory) -> Path:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH here: the GPU run builds cu_function_as_func.cu")
    exe = tmp_path_factory.mktemp("cu_function_as_func") / "cu_function_as_func"
    subprocess.run(
        [nvcc, "-x", "c++", "-cudart", "none", "-o", str(exe)]
        + [str(HERE / "cu_function_as_func.cu"), "-ldl"],
        check=True,
        capture_output=True,
    )
    return exe


def test_the_cu_function_program_binds_each_runtime(cu_function_as_func, header_sets, tmp_path):
    """Every runtime symbol it calls is in each libcudart (12.0 to 13.x): it says the
    runtime's version, then stops at the driver, which this machine may lack."""
    image = tmp_path / "not-a-cubin"
    image.write_bytes(b"\0")
    driver = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    for version, headers in header_sets.items():
        major, minor = (int(x) for x in version.split("."))
        proc = subprocess.run(
            [str(cu_function_as_func), str(headers.library), str(image)],
            capture_output=True,
            text=True,
        )
        assert proc.stdout.splitlines()[0] == f"runtime {major * 1000 + minor * 10}", version
        if "libcuda.so.1" not in driver:
            assert proc.returncode == 2 and "libcuda.so.1" in proc.stderr, (version, proc)
        else:  # a driver without a GPU: the first device call answers
            assert proc.returncode == 3, (version, proc.stdout, proc.stderr)
