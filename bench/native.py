"""Build and run the C baselines and the kernel image.

c_calls is built with gcc against headers of the loaded runtime's version and linked to
the exact libcudart file the Python side mapped (full path plus rpath), so C and Python
call the same code. c_launch and the kernel image are built with nvcc.
"""

from __future__ import annotations

import os
import re
import subprocess
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


def _nvcc_dryrun(nvcc: str, build: Path) -> tuple[list[str], list[str]]:
    """nvcc's own include and library folders, as its --dryrun reports them: nvcc is
    often a wrapper script, so its location says nothing about the toolkit's."""
    probe = build / "probe.cu"
    probe.write_text("\n")
    done = subprocess.run(
        [nvcc, "--dryrun", "-c", str(probe), "-o", str(build / "probe.o")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    text = done.stdout + done.stderr
    includes, libs = [], []
    for line in text.splitlines():
        if "INCLUDES=" in line and "SYSTEM_INCLUDES" not in line:
            includes += re.findall(r'-I"?([^"\s]+)', line)
        elif "LIBRARIES=" in line:
            libs += re.findall(r'-L"?([^"\s]+)', line)
    return includes, libs


def nvcc_version(nvcc: str) -> int:
    match = re.search(r"release (\d+)\.(\d+)", _run([nvcc, "--version"], "nvcc --version"))
    return int(match.group(1)) * 1000 + int(match.group(2)) * 10 if match else 0


def header_dirs(runtime: Runtime, tools: Tools, build: Path) -> tuple[list[str], str]:
    """Include folders holding cuda_runtime_api.h of the loaded runtime's version, and
    where they came from. The generator's header cache comes first (the headers the
    bindings were generated from); a machine without it uses nvcc's own."""
    key = format_version(runtime.bindings)
    try:
        from generator.fetch import cache_root, fetch_version
        from generator.manifest import Manifest

        # Only where the cache exists: fetching would go to the network, which the
        # GPU machine does not have.
        if cache_root().is_dir():
            headers = fetch_version(Manifest.load(), key, lambda _msg: None)
            return [
                str(d) for d in headers.include_dirs
            ], f"the generator's cached CUDA {key} headers"
    except Exception:  # generator tools absent (the GPU machine), or key not pinned
        pass
    if tools.nvcc:
        includes, _ = _nvcc_dryrun(tools.nvcc, build)
        if includes:
            return includes, f"nvcc's headers (CUDA {format_version(nvcc_version(tools.nvcc))})"
    raise BuildError(f"no cuda_runtime_api.h: no cached CUDA {key} headers and no nvcc")


def build_calls(runtime: Runtime, tools: Tools, build: Path) -> tuple[Path, str]:
    if not tools.gcc:
        raise BuildError("no gcc or cc on PATH")
    if not runtime.path or not os.path.isabs(runtime.path):
        raise BuildError(f"cannot tell which libcudart file was loaded ({runtime.path or 'none'})")
    includes, origin = header_dirs(runtime, tools, build)
    exe = build / "c_calls"
    lib = Path(runtime.path)
    _run(
        [
            tools.gcc,
            "-O2",
            "-std=gnu11",
            *(f"-I{d}" for d in includes),
            str(HERE / "c_calls.c"),
            "-o",
            str(exe),
            str(lib),
            f"-Wl,-rpath,{lib.parent}",
        ],
        "gcc c_calls.c",
    )
    return exe, f"gcc -O2, {origin}, linked to {lib}"


def run_calls(
    exe: Path, calls: int, repeats: int, burst: int, bursts: int, names: list[str]
) -> dict:
    """{name: (status, [ns per call, one per repeat])}"""
    out = _run(
        [str(exe), str(calls), str(repeats), str(burst), str(bursts), *names],
        "c_calls",
        timeout=600,
    )
    return _parse(out)


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
