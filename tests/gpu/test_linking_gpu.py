"""cudart.link on a GPU: compile two programs with NVRTC, link them with nvJitLink, load
the cubin, launch the kernel, check its result.

The NVRTC and nvJitLink are whichever cudart finds: run_on_device.sh points the 12.x
runtimes at the pinned 12.5 NVRTC and nvJitLink (tests/gpu/stage_device_libs.py), the
13.x and machine runs at the machine's own, so every run links LTO-IR and PTX. A run
that finds the two of different major versions (where LTO-IR cannot link) skips the
LTO-IR test, and fails it where the run requires a GPU (run_on_device.sh: its pairing
went wrong). The architecture is the current device's.
"""

from __future__ import annotations

import ctypes

import pytest

import cudart

from .conftest import gpu_required

ADD = "__device__ int add(int a, int b) { return a + b; }\n"
KERNEL = (
    "extern __device__ int add(int a, int b);\n"
    'extern "C" __global__ void add_kernel(int *p, int n)\n'
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) p[i] = add(p[i], 3 * i);\n"
    "}\n"
)


@pytest.fixture(scope="module")
def libraries():
    try:
        nvrtc, nvjitlink = cudart._loader.load_nvrtc(), cudart._loader.load_nvjitlink()
    except cudart.LibraryNotFoundError as exc:
        pytest.fail(f"the GPU run must carry an NVRTC and an nvJitLink for every runtime: {exc}")
    return nvrtc, nvjitlink


def _ptx_objects(libraries):
    nvrtc, nvjitlink = libraries
    if nvjitlink.version < nvrtc.version:
        # PTX is read by a linker at least as new as the compiler that wrote it.
        pytest.skip(
            f"nvJitLink {nvjitlink.version_text} cannot read NVRTC {nvrtc.version_text}'s PTX"
        )
    return [
        cudart.compile(src, output="ptx", load=False, cache=False, options=["-rdc=true"])
        for src in (ADD, KERNEL)
    ]


def _run(dev, module, n=1000):
    values = list(range(n))
    p = dev.alloc(4 * n, (ctypes.c_int * n)(*values))
    with module:
        module.get_function("add_kernel").launch((n + 127) // 128, 128, p, n)
        assert dev.read(p, ctypes.c_int, n) == [v + 3 * v for v in values]


def test_linked_ltoir_programs_run(rt, dev, libraries):
    nvrtc, nvjitlink = libraries
    if nvrtc.version // 1000 != nvjitlink.version // 1000:
        # NVIDIA's rule: LTO-IR links only within the major version that wrote it.
        reason = (
            f"NVRTC {nvrtc.version_text}'s LTO-IR cannot be linked by nvJitLink "
            f"{nvjitlink.version_text} (another major version)"
        )
        if gpu_required():
            pytest.fail(f"the GPU run pairs them: {reason}")
        pytest.skip(reason)
    objects = [cudart.compile(src, output="ltoir", cache=False) for src in (ADD, KERNEL)]
    _run(dev, cudart.link(objects))


def test_linked_ptx_programs_run(rt, dev, libraries):
    _run(dev, cudart.link(_ptx_objects(libraries)))


def test_link_without_loading_gives_the_cubin_load_module_takes(rt, dev, libraries):
    cubin = cudart.link(_ptx_objects(libraries), load=False)
    assert cubin[:4] == b"\x7fELF"
    _run(dev, cudart.load_module(cubin))
