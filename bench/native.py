"""Build and run the C baselines and the kernel image.

c_loops (the reference of every call, copy and launch row) is built with gcc as a
shared library and loaded into the process that times cudart: it is handed the same
function pointers and arguments as the bindings, so C and Python call the same code in
the same process, round by round. c_launch (a program of its own, kept for comparison
only: figures from two processes are not ratio material) and the kernel image are
built with nvcc.
"""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
from ctypes import POINTER, byref, c_double, c_int, c_long, c_size_t, c_uint, c_void_p
from pathlib import Path

from .env import Runtime, Tools, format_version, one_line

HERE = Path(__file__).resolve().parent


class BuildError(Exception):
    """A baseline could not be built; the message says why, in one line."""


def _run(cmd: list[str], what: str, timeout: float = 300) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        raise BuildError(f"{what}: {one_line(str(exc))}") from None
    if done.returncode != 0:
        raise BuildError(f"{what} failed: {one_line(done.stderr or done.stdout)}")
    return done.stdout


def nvcc_version(nvcc: str) -> int:
    match = re.search(r"release (\d+)\.(\d+)", _run([nvcc, "--version"], "nvcc --version"))
    return int(match.group(1)) * 1000 + int(match.group(2)) * 10 if match else 0


class Loops:
    """c_loops.c, built as a shared library and loaded into this process: each function
    calls the function pointer it is given in a loop timed in C (see c_loops.c). The
    figures are nanoseconds per call; `status` holds the last call's status."""

    def __init__(self, path: Path):
        lib = ctypes.CDLL(str(path))
        vp, lg, ip = c_void_p, c_long, POINTER(c_int)
        sigs = {
            "loop_get_device": (vp, lg, ip),
            "loop_handle": (vp, vp, lg, ip),
            "loop_no_arg": (vp, lg, ip),
            "loop_event_record": (vp, vp, vp, lg, lg, vp, ip),
            "loop_memcpy_async": (vp, vp, vp, c_size_t, c_int, vp, lg, lg, vp, ip),
            "loop_launch": (vp, vp, vp, vp, lg, lg, vp, ip),
            "loop_launch_grids": (vp, vp, vp, vp, c_uint, lg, lg, vp, ip),
            "loop_out_pointer": (vp, lg, ip),
            "loop_device_attribute": (vp, c_int, c_int, lg, ip),
            "loop_cu_launch": (vp, vp, c_uint, c_uint, vp, lg, lg, vp, ip),
            "loop_malloc_free_async": (vp, vp, c_size_t, vp, lg, lg, vp, ip),
            "loop_create_destroy": (vp, vp, lg, ip),
        }
        self.fns = {}
        for name, argtypes in sigs.items():
            fn = lib[name]
            fn.argtypes = argtypes
            fn.restype = c_double
            self.fns[name] = fn
        self.lib = lib
        self._status = c_int()
        # Called with the GIL held (PyDLL): the loop releases and takes it back itself.
        gil = ctypes.PyDLL(str(path))["loop_gil"]
        gil.argtypes = (vp, vp, lg, ip)
        gil.restype = c_double
        self.fns["loop_gil"] = gil

    @property
    def status(self) -> int:
        """The status the last timed call returned."""
        return self._status.value

    def _call(self, name: str, *args) -> float:
        return self.fns[name](*args, byref(self._status))

    def get_device(self, fn: int, n: int) -> float:
        return self._call("loop_get_device", fn, n) / n

    def handle(self, fn: int, handle: int | None, n: int) -> float:
        return self._call("loop_handle", fn, handle, n) / n

    def no_arg(self, fn: int, n: int) -> float:
        return self._call("loop_no_arg", fn, n) / n

    def event_record(self, fn, event, stream, burst: int, bursts: int, sync: int) -> float:
        total = self._call("loop_event_record", fn, event, stream, burst, bursts, sync)
        return total / (burst * bursts)

    def memcpy_async(
        self, fn, dst, src, count: int, kind: int, stream, burst: int, bursts: int, sync: int
    ) -> float:
        total = self._call(
            "loop_memcpy_async", fn, dst, src, count, kind, stream, burst, bursts, sync
        )
        return total / (burst * bursts)

    def launch(self, fn, config, func, argv, burst: int, bursts: int, sync: int) -> float:
        total = self._call("loop_launch", fn, config, func, argv, burst, bursts, sync)
        return total / (burst * bursts)

    def launch_grids(
        self, fn, config, func, argv, grid: int, burst: int, bursts: int, sync: int
    ) -> float:
        total = self._call("loop_launch_grids", fn, config, func, argv, grid, burst, bursts, sync)
        return total / (burst * bursts)

    def malloc_free_async(
        self, fm, ff, size: int, stream, burst: int, bursts: int, sync: int
    ) -> float:
        total = self._call("loop_malloc_free_async", fm, ff, size, stream, burst, bursts, sync)
        return total / (burst * bursts)

    def create_destroy(self, fc: int, fd: int, n: int) -> float:
        return self._call("loop_create_destroy", fc, fd, n) / n

    def gil(self, n: int) -> float:
        """ns per release and re-acquire of the GIL (PyEval_SaveThread/RestoreThread)."""
        api = ctypes.pythonapi
        save = ctypes.cast(api.PyEval_SaveThread, c_void_p).value
        restore = ctypes.cast(api.PyEval_RestoreThread, c_void_p).value
        return self._call("loop_gil", save, restore, n) / n

    # The driver API's loops (libcuda symbols).

    def out_pointer(self, fn: int, n: int) -> float:
        return self._call("loop_out_pointer", fn, n) / n

    def device_attribute(self, fn: int, attrib: int, dev: int, n: int) -> float:
        return self._call("loop_device_attribute", fn, attrib, dev, n) / n

    def cu_launch(
        self, fn, func, grid: int, block: int, params, burst: int, bursts: int, sync: int
    ) -> float:
        total = self._call("loop_cu_launch", fn, func, grid, block, params, burst, bursts, sync)
        return total / (burst * bursts)


def build_loops(tools: Tools, build: Path) -> tuple[Loops, str]:
    """c_loops.c as a shared library, loaded. It includes no CUDA header and links to
    no libcudart: it calls the function pointers the rows hand it, taken from the
    library this process mapped, so C and every binding call the same code."""
    if not tools.gcc:
        raise BuildError("no gcc or cc on PATH")
    lib = build / "libc_loops.so"
    source = str(HERE / "c_loops.c")
    _run([tools.gcc, "-O2", "-shared", "-fPIC", "-std=gnu11", source, "-o", str(lib)], "gcc")
    detail = (
        "gcc -O2 -shared c_loops.c, loaded into this process and handed the same function "
        "pointer and arguments; timed in C (clock_gettime), one foreign call per round"
    )
    return Loops(lib), detail


def _parse(out: str) -> dict:
    results = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            results[parts[0]] = (int(parts[1]), [float(v) for v in parts[2:]])
    return results


# native builds for the GPU present; the fallbacks serve an nvcc that cannot query it,
# at the cost of a longer build.
ARCH_FLAGS = [["-arch=native"], ["-arch=sm_90"], ["-arch=all-major"]]


def build_kernels(tools: Tools, build: Path) -> tuple[Path, str]:
    """kernels.cu as a fatbin, uncompressed where nvcc allows: cudart's registration
    route (runtimes before 12.8) reads kernel names out of the image, which it cannot
    do through zstd."""
    if not tools.nvcc:
        raise BuildError("no nvcc on PATH, $CUDA_HOME or /usr/local/cuda")
    image = build / "kernels.fatbin"
    errors = []
    for flags in [[*a, *c] for a in ARCH_FLAGS for c in (["--no-compress"], [])]:
        try:
            _run(
                [tools.nvcc, "-fatbin", *flags, "-o", str(image), str(HERE / "kernels.cu")],
                "nvcc -fatbin",
            )
            return image, f"nvcc {' '.join(flags)}"
        except BuildError as exc:
            errors.append(str(exc))
    raise BuildError("; ".join(errors))


def build_launch(runtime: Runtime, tools: Tools, build: Path) -> tuple[Path, str]:
    """c_launch linked to the loaded libcudart where nvcc's CUDA major matches it;
    otherwise to nvcc's own shared libcudart (kernel registration differs across
    majors), which the row's note then names."""
    if not tools.nvcc:
        raise BuildError("no nvcc on PATH, $CUDA_HOME or /usr/local/cuda")
    exe = build / "c_launch"
    made = nvcc_version(tools.nvcc)
    lib = Path(runtime.path) if runtime.path and os.path.isabs(runtime.path) else None
    errors = []
    for flags in ARCH_FLAGS:
        cmd = [tools.nvcc, "-O2", *flags, "-o", str(exe), str(HERE / "c_launch.cu")]
        if lib is not None and made // 1000 == runtime.version // 1000:
            # nvcc takes no .so.N file as an input; the linker does.
            cmd += ["-cudart", "none", "-Xlinker", str(lib), "-Xlinker", f"-rpath,{lib.parent}"]
            linked = f"linked to {lib}"
        else:
            cmd += ["-cudart", "shared"]
            linked = (
                f"linked to nvcc's own libcudart {format_version(made)}, not the loaded "
                f"{format_version(runtime.version)} (another CUDA major)"
            )
        try:
            _run(cmd, "nvcc c_launch.cu")
            return exe, f"nvcc {format_version(made)} -O2 {' '.join(flags)}, {linked}"
        except BuildError as exc:
            errors.append(str(exc))
    raise BuildError("; ".join(errors))


def run_launch(exe: Path, repeats: int, burst: int, bursts: int, n: int) -> dict:
    out = _run([str(exe), str(repeats), str(burst), str(bursts), str(n)], "c_launch", timeout=600)
    return _parse(out)
