"""Each example in examples/ runs as a user would run it (`python examples/x.py`, in a
fresh interpreter, against the same libcudart as this session) and says the right thing."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
EXAMPLES = REPO / "examples"


def run_example(name: str) -> str:
    path = EXAMPLES / name
    assert path.is_file(), f"examples/{name} is missing: README.md lists it"
    env = dict(os.environ)
    # The checkout's cudart, whether or not it is installed; $CUDART_LIBRARY passes on.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-X", "faulthandler", str(path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )
    assert (
        proc.returncode == 0
    ), f"examples/{name} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def test_device_query(rt):
    out = run_example("device_query.py")
    count = ctypes.c_int()
    assert rt.cudaGetDeviceCount(ctypes.byref(count)) == 0
    assert f"{count.value} CUDA device(s)" in out
    for device in range(count.value):
        prop = rt.cudaDeviceProp()
        assert rt.cudaGetDeviceProperties(ctypes.byref(prop), device) == 0
        bus_id = ctypes.create_string_buffer(32)
        assert rt.cudaDeviceGetPCIBusId(bus_id, len(bus_id), device) == 0
        block = out.split(f"Device {device}: ", 1)[1]
        assert block.startswith(prop.name.decode() + "\n"), out
        for line in (
            f"compute capability      {prop.major}.{prop.minor}",
            f"global memory           {prop.totalGlobalMem} bytes",
            f"multiprocessors         {prop.multiProcessorCount}",
            f"PCI bus id              {bus_id.value.decode()}",
        ):
            assert line in block, f"{line!r} missing from:\n{out}"


def test_streams_events():
    out = run_example("streams_events.py")
    for i in range(4):
        line = next((s for s in out.splitlines() if s.startswith(f"stream {i}:")), None)
        assert line is not None and line.endswith("data ok"), out
    assert "host callbacks ran for streams [0, 1, 2, 3]" in out, out
    assert "OK: 4 streams verified" in out, out


def test_graph_capture():
    out = run_example("graph_capture.py")
    assert "captured graph: 4 nodes (" in out, out
    assert "host node ran 10 times; data ok" in out, out
    assert "after updating the memset node in place: data ok" in out, out
    assert "OK: graph captured, launched and updated" in out, out


def test_graph_kernel_host_nodes():
    out = run_example("graph_kernel_host_nodes.py")
    assert "graph: 3 nodes (2 kernels, 1 host function)" in out, out
    assert "host node ran 2 times with 'axpy twice'" in out, out
    assert "y = 1 + 5x on 65536 floats via the " in out and "route: ok" in out, out
    assert "OK: graph of kernel and host nodes built, launched twice and checked" in out, out


def test_compile_axpy(rt, tmp_path, monkeypatch):
    """Compiled by NVRTC, launched, checked; the second run comes from the kernel cache
    (a folder of the test's own) and says the same."""
    monkeypatch.setenv("CUDART_KERNEL_CACHE", str(tmp_path))
    for _ in range(2):
        out = run_example("compile_axpy.py")
        assert "compiled axpy<float> (_Z4axpyIfEvT_PKS0_PS0_i)" in out
        assert "axpy on 1048576 floats: ok" in out
    assert len(list(tmp_path.rglob("*.bin"))) == 1


# Written alongside cudart.kernels / cudart.occupancy; checked for a clean run here,
# their own output by their authors' tests.
@pytest.mark.parametrize("name", ["vector_add.py", "occupancy.py"])
def test_other_examples_run_cleanly(name):
    out = run_example(name)
    assert out.strip(), f"examples/{name} printed nothing"
