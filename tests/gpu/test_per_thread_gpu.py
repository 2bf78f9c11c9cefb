"""The per-thread default stream on a GPU: what the switch changes, shown by timing.

A spin kernel (PTX below, JIT-compiled by the driver: no nvcc) busy-waits on the GPU's
global timer for SPIN_MS. Work that runs concurrently takes about one spin of wall
time; work that serializes takes two. Each mode runs in its own interpreter, because
the switch ($CUDART_PER_THREAD_DEFAULT_STREAM) is read once per process.

What CUDA documents ("Stream synchronization behavior" in the runtime API docs), and
what is checked:

- Two host threads launching on the default stream: with the legacy default stream
  (switch off) they share one stream and serialize; with per-thread default streams
  (switch on) each thread has its own and the kernels overlap.
- A blocking stream (cudaStreamCreate) and the default stream: the legacy default
  stream synchronizes with blocking streams; the per-thread one does not.
- The per-thread default stream still synchronizes with the legacy stream when a
  program uses both (cudaStreamLegacy is always reachable by its handle), so that pair
  serializes in either mode.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
SPIN_MS = 150

SPIN_PTX = r"""
.version 7.8
.target sm_90
.address_size 64

.visible .entry spin(.param .u64 spin_ns)
{
    .reg .pred %p;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [spin_ns];
    mov.u64 %rd2, %globaltimer;
$L_wait:
    mov.u64 %rd3, %globaltimer;
    sub.u64 %rd4, %rd3, %rd2;
    setp.lt.u64 %p, %rd4, %rd1;
    @%p bra $L_wait;
    ret;
}
"""

SCRIPT = r"""
import ctypes, json, threading, time
import cudart
from cudart._contract import symbol_of
from cudart.kernels import load_module

module = load_module(SPIN_PTX.encode())
spin = module.get_function("spin")
spin_ns = ctypes.c_uint64(SPIN_MS * 1_000_000)
short = ctypes.c_uint64(1000)


def timed(work):
    cudart.cudaDeviceSynchronize()
    start = time.perf_counter()
    work()
    cudart.cudaDeviceSynchronize()
    return time.perf_counter() - start


def two_threads():
    # Each worker touches its default stream first (launch + sync), so the timed part
    # holds only the two long kernels.
    barrier = threading.Barrier(3)
    errors = []

    def worker():
        try:
            spin.launch(1, 1, short)
            cudart.cudaStreamSynchronize(None)
            barrier.wait()
            spin.launch(1, 1, spin_ns)
            cudart.cudaStreamSynchronize(None)
        except BaseException as exc:
            errors.append(repr(exc))
            barrier.abort()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    cudart.cudaDeviceSynchronize()
    if errors:
        raise RuntimeError(errors)
    return time.perf_counter() - start


def blocking_stream_and_default():
    stream = cudart.cudaStreamCreate()
    try:
        def work():
            spin.launch(1, 1, spin_ns, stream=stream)
            spin.launch(1, 1, spin_ns)  # the default stream
        return timed(work)
    finally:
        cudart.cudaStreamDestroy(stream)


def legacy_and_default():
    def work():
        spin.launch(1, 1, spin_ns, stream=cudart.cudaStreamLegacy)
        spin.launch(1, 1, spin_ns)
    return timed(work)


timed(lambda: spin.launch(1, 1, short))  # JIT and context set-up, outside the timings
print(json.dumps({
    "mode": cudart.per_thread_default_stream(),
    "launch_symbol": symbol_of(cudart.sys, "cudaLaunchKernelExC"),
    "two_threads": two_threads(),
    "blocking_stream": blocking_stream_and_default(),
    "legacy": legacy_and_default(),
}))
module.close()
"""


def _run(mode: str) -> dict:
    """SCRIPT in a fresh interpreter on this checkout, against this session's runtime."""
    import cudart

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["CUDART_LIBRARY"] = str(cudart.load_runtime().path)
    env["CUDART_PER_THREAD_DEFAULT_STREAM"] = mode
    env.pop("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", None)
    code = f"SPIN_PTX = {SPIN_PTX!r}\nSPIN_MS = {SPIN_MS}\n{SCRIPT}"
    proc = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )
    assert (
        proc.returncode == 0
    ), f"mode {mode}: exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def per_thread(rt):
    return _run("1")


@pytest.fixture(scope="module")
def legacy(rt):
    return _run("0")


SPIN = SPIN_MS / 1000
OVERLAPPED = 1.5 * SPIN  # one spin plus launch and thread overheads
SERIALIZED = 1.8 * SPIN  # two spins, less timer slack


def test_modes(per_thread, legacy):
    assert per_thread["mode"] is True and per_thread["launch_symbol"] == "cudaLaunchKernelExC_ptsz"
    assert legacy["mode"] is False and legacy["launch_symbol"] == "cudaLaunchKernelExC"


def test_threads_overlap_on_per_thread_default_streams(per_thread, legacy):
    assert per_thread["two_threads"] < OVERLAPPED, per_thread
    assert legacy["two_threads"] > SERIALIZED, legacy


def test_per_thread_default_stream_does_not_wait_for_blocking_streams(per_thread, legacy):
    assert per_thread["blocking_stream"] < OVERLAPPED, per_thread
    assert legacy["blocking_stream"] > SERIALIZED, legacy


def test_per_thread_default_stream_still_synchronizes_with_the_legacy_stream(per_thread, legacy):
    assert per_thread["legacy"] > SERIALIZED, per_thread
    assert legacy["legacy"] > SERIALIZED, legacy
