"""What several GPU test files need: the kernel images, the routes a runtime offers and a
status check that says which error it was."""

from __future__ import annotations

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
