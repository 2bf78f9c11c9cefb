"""What a run measured on: the machine, the runtime cudart loaded, Python, the date.

Every row records this, so a merged RESULTS.md can say where each figure came from,
and the C baselines can be linked to the very library file the Python side loaded.
"""

from __future__ import annotations

import ctypes
import datetime
import os
import platform
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import stamp

REPO = stamp.REPO


@dataclass
class Runtime:
    """cudart.sys and the library behind it, or why there is none."""

    rt: Any = None  # the generated module (its names made at import), or None
    path: str = ""  # the libcudart file the process mapped
    version: int = 0  # cudaRuntimeGetVersion
    bindings: int = 0  # CUDA_VERSION of the module cudart chose
    error: str = ""  # why rt is None
    gpus: int = 0
    gpu_name: str = ""
    driver: int = 0
    no_gpu_reason: str = ""

    @property
    def has_gpu(self) -> bool:
        return self.gpus > 0


def load() -> Runtime:
    try:
        import cudart

        rt = cudart.sys
        runtime = cudart.load_runtime()
    except Exception as exc:  # no library, no fitting bindings: the rows say so
        return Runtime(error=f"{type(exc).__name__}: {one_line(str(exc))}")
    info = Runtime(
        rt=rt,
        path=_mapped_path("libcudart") or runtime.path,
        version=runtime.version,
        bindings=rt.CUDA_VERSION,
    )
    driver = ctypes.c_int()
    if rt.cudaDriverGetVersion(ctypes.byref(driver)) == 0:
        info.driver = driver.value
    count = ctypes.c_int()
    status = rt.cudaGetDeviceCount(ctypes.byref(count))
    if status != 0:
        info.no_gpu_reason = f"cudaGetDeviceCount returned {status} ({_error_name(rt, status)})"
    elif count.value == 0:
        info.no_gpu_reason = "cudaGetDeviceCount found no device"
    else:
        info.gpus = count.value
        prop = rt.cudaDeviceProp()
        if rt.cudaGetDeviceProperties(ctypes.byref(prop), 0) == 0:
            info.gpu_name = prop.name.decode(errors="replace")
    return info


def _error_name(rt, status: int) -> str:
    try:
        return rt.cudaGetErrorName(status).decode()
    except Exception:
        return "?"


def _mapped_path(fragment: str) -> str:
    # The loader may have found the library by soname; the mapping names the file.
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split()
                if len(parts) >= 6 and fragment in os.path.basename(parts[5]):
                    return parts[5]
    except OSError:
        pass
    return ""


def checkout_relative(path: str) -> str:
    """A path inside this checkout, relative to it: a record is read on other machines,
    where the folder of the copy that ran tells nothing (and names the machine)."""
    for root in dict.fromkeys((REPO, REPO.resolve())):
        try:
            return str(Path(path).relative_to(root))
        except ValueError:
            continue
    return path


def format_version(version: int) -> str:
    return f"{version // 1000}.{version % 1000 // 10}" if version else "?"


def one_line(text: str, limit: int = 240) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _commit() -> str:
    """The commit of the tree this run measures: its stamp's where the stamp is of this
    very tree (bench/stamp.py: on the GPU machine git does not describe the copy it
    runs), else git's."""
    stamped = stamp.read()
    if stamped is not None and not stamped.differing:
        return stamped.text
    found = _git_commit()
    if stamped is None:
        return found if found[:7] != "unknown" else f"{found}: no stamp (python -m bench stamp)"
    n = len(stamped.differing)
    differ = f"{stamp._files(n)} {'differs' if n == 1 else 'differ'}"
    return f"{found} (its stamp, of {stamped.commit[:7]}, is not of this tree: {differ})"


def _git_commit() -> str:
    if not (REPO / ".git").exists() or not shutil.which("git"):
        return "unknown (no git checkout)"
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}{' + uncommitted changes' if dirty else ''}" if head else "unknown"


def describe(runtime: Runtime) -> dict:
    if runtime.has_gpu:
        gpu = f"{runtime.gpu_name} ({runtime.gpus} visible)"
    elif runtime.rt is not None:
        gpu = f"none ({runtime.no_gpu_reason})"
    else:
        gpu = "unknown (no runtime loaded)"
    return {
        "machine": f"{_cpu_model()}, {os.cpu_count()} CPUs; GPU: {gpu}",
        "gpu": runtime.has_gpu,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "runtime": (
            f"libcudart {format_version(runtime.version)} ({checkout_relative(runtime.path)}), "
            f"bindings sys_{runtime.bindings}, "
            f"driver {format_version(runtime.driver) if runtime.driver else 'none'}"
            if runtime.rt is not None
            else runtime.error
        ),
        "os": f"{platform.system()} {platform.release()}",
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _commit(),
    }


@dataclass
class Tools:
    gcc: str = field(default_factory=lambda: shutil.which("gcc") or shutil.which("cc") or "")
    nvcc: str = field(default_factory=lambda: _find_nvcc())


def _find_nvcc() -> str:
    found = shutil.which("nvcc")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and (Path(home) / "bin" / "nvcc").is_file():
            return str(Path(home) / "bin" / "nvcc")
    return ""
