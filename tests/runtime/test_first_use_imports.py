"""Threads whose first calls import what `import cudart` left out (issue 33, item 27).

The first cudaLaunchKernel converts its dims with cudart.kernels, the first
cudaLaunchHostFunc its callable with cudart.callbacks; both import typing and
dataclasses, which reads `sys.modules["typing"]` without waiting for the thread still
executing it. 16 threads making those first calls together in a fresh process raised
"partially initialized module 'typing'" (20 of 30 processes on the machine that found
it). Each process here delays typing's body by 50 ms (a finder of its own, as a cold
disk would) and switches threads often, so the window is wide on any machine. The calls
themselves fail on a machine without a GPU: only a CudaError, the call's own answer, is
expected.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from suite import REPO

PROCESSES = 4
RACE = r"""
import importlib.machinery, sys, threading, time
sys.setswitchinterval(1e-6)


class SlowTyping:  # not importlib.abc's classes: importing those imports typing
    # typing's body starts 50 ms late, as from a cold disk: the window in which another
    # thread finds it half-executed in sys.modules is then wide on any machine.
    def find_spec(self, name, path=None, target=None):
        if name != "typing":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        self.real = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        time.sleep(0.05)
        self.real.exec_module(module)


sys.meta_path.insert(0, SlowTyping())
import dataclasses  # what both imports start with, here before the race
import cudart

cudart.cudaLaunchKernel, cudart.cudaLaunchHostFunc  # the checked module, also before
assert "typing" not in sys.modules  # else there is no first import to race

threads = 16
barrier = threading.Barrier(threads)
wrong = []

def first_call(i):
    barrier.wait()
    if i % 2:
        time.sleep(0.02)  # the launches start while the host functions import typing
    try:
        if i % 2:
            cudart.cudaLaunchKernel(1, (1, 1, 1), (1, 1, 1), None, 0, None)
        elif i % 4:
            cudart.cudaLaunchHostFunc(None, lambda data: None, None)
        else:
            cudart.kernels.Function  # the package's own lazy submodule
    except cudart.CudaError:
        pass  # no GPU here: the call reached C, which refused it
    except BaseException as exc:
        wrong.append(f"{type(exc).__name__}: {exc}")

workers = [threading.Thread(target=first_call, args=(i,)) for i in range(threads)]
for w in workers:
    w.start()
for w in workers:
    w.join()
print("\n".join(wrong) or "ok")
"""


@pytest.mark.parametrize("backend", ["compiled", "ctypes"])
def test_first_calls_from_16_threads_import_whole_modules(backend):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDART_")}
    env.update(PYTHONPATH=str(REPO), CUDART_BACKEND=backend)
    failures = []
    for _ in range(PROCESSES):
        proc = subprocess.run(
            [sys.executable, "-c", RACE],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
            timeout=120,  # a deadlock between the imports fails here, not hangs the suite
        )
        if proc.returncode or proc.stdout.strip() != "ok":
            failures.append(f"rc {proc.returncode}: {proc.stdout.strip()} {proc.stderr[-500:]}")
    assert not failures, f"{len(failures)} of {PROCESSES} processes:\n" + "\n".join(failures)
