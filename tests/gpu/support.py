"""What several GPU test files need: the kernel images, the routes a runtime offers and a
status check that says which error it was."""

from __future__ import annotations

import ctypes
import os
import shutil
from pathlib import Path

from cudart import load_runtime
from cudart._contract import declares, exported

KERNELS = Path(__file__).resolve().parent.parent / "kernels"
# The kernels of tests/kernels/kernels.cu, in every image built from it.
ALL_KERNELS = {"empty", "axpy", "mixed", "take_pair", "add_counter", "read_table", "coop_sum"}
AXPY = "float a, const float *x, float *y, int n"


def axpy(module):
    """kernels.cu's extern "C" axpy, typed: by the image's PTX where it has some, else
    declared (a cubin says only sizes, and a Python float is refused without types)."""
    fn = module.get_function("axpy")
    return fn if fn.param_types is not None else module.get_function("axpy", signature=AXPY)


def check(rt, status: int) -> None:
    """A raw call's status: 0, or an AssertionError naming the error."""
    if status != 0:
        raise AssertionError(
            f"{rt.cudaGetErrorName(status).decode()} ({status}): "
            f"{rt.cudaGetErrorString(status).decode()}"
        )


def routes(rt) -> list[str]:
    """load_module's routes on this runtime: registration always, the library route where
    the headers declare cudaLibraryLoadData (12.8+). Bindings of 12.8+ headers are loaded
    only for a 12.8+ libcudart, which exports it: one that does not is a failure here,
    not a route quietly left out."""
    found = ["register"]
    if declares(rt, "cudaLibraryLoadData"):
        runtime = load_runtime()
        if not exported(rt, runtime.cdll, "cudaLibraryLoadData"):
            raise AssertionError(
                f"bindings {rt.__name__} declare cudaLibraryLoadData, and the loaded "
                f"libcudart {runtime.version_text} ({runtime.path}) does not export it"
            )
        found.append("library")
    return found


class Device:
    """Device memory freed at the end of the test."""

    def __init__(self, rt):
        self.rt, self.pointers = rt, []

    def alloc(self, nbytes, data=None):
        p = ctypes.c_void_p()
        check(self.rt, self.rt.cudaMalloc(ctypes.byref(p), nbytes))
        self.pointers.append(p.value)
        if data is not None:
            check(
                self.rt, self.rt.cudaMemcpy(p.value, data, nbytes, self.rt.cudaMemcpyHostToDevice)
            )
        else:
            check(self.rt, self.rt.cudaMemset(p.value, 0, nbytes))
        return p.value

    def read(self, ptr, ctype, n):
        out = (ctype * n)()
        check(self.rt, self.rt.cudaDeviceSynchronize())
        check(
            self.rt,
            self.rt.cudaMemcpy(out, ptr, ctypes.sizeof(out), self.rt.cudaMemcpyDeviceToHost),
        )
        return list(out)


def nvcc() -> str:
    """The nvcc that builds this suite's C references: on PATH, or $CUDA_HOME's (which
    run_on_device.sh sets). None found is a failure: the C side decides what its test
    may accept, and a skip would hide that it never ran."""
    found = shutil.which("nvcc")
    home = os.environ.get("CUDA_HOME")
    if found is None and home and (Path(home) / "bin" / "nvcc").is_file():
        found = str(Path(home) / "bin" / "nvcc")
    if found is None:
        raise AssertionError("nvcc is neither on PATH nor in $CUDA_HOME/bin")
    return found
