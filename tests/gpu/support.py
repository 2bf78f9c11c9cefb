"""What several GPU test files need: the kernel images, the routes a runtime offers and a
status check that says which error it was."""

from __future__ import annotations

import ctypes
from pathlib import Path

from cudart._contract import declares

KERNELS = Path(__file__).resolve().parent.parent / "kernels"
# The kernels of tests/kernels/kernels.cu, in every image built from it.
ALL_KERNELS = {"empty", "axpy", "mixed", "take_pair", "add_counter", "read_table", "coop_sum"}


def check(rt, status: int) -> None:
    """A raw call's status: 0, or an AssertionError naming the error."""
    if status != 0:
        raise AssertionError(
            f"{rt.cudaGetErrorName(status).decode()} ({status}): "
            f"{rt.cudaGetErrorString(status).decode()}"
        )


def routes(rt) -> list[str]:
    """load_module's routes on this runtime: registration always, the library route where
    the headers declare cudaLibraryLoadData and this libcudart exports it (12.8+)."""
    found = ["register"]
    if declares(rt, "cudaLibraryLoadData"):
        try:
            _ = rt.cudaLibraryLoadData  # bound only if this libcudart exports it
            found.append("library")
        except Exception:
            pass
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
