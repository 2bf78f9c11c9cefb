"""cudart.occupancy against the C++ templates of cuda_runtime.h, compiled by nvcc.

tests/gpu/occupancy_reference.cu builds tests/kernels/occupancy.cu into itself and
prints the templates' answers; the same kernels, loaded from the committed images,
must give the same answers through cudart.occupancy.
"""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path

import pytest

from cudart import occupancy
from cudart.kernels import load_module

from .support import nvcc, routes

HERE = Path(__file__).resolve().parent
KERNELS = HERE.parent / "kernels"
KERNEL_NAMES = (
    "occ_light",
    "occ_bounds",
    "occ_bounds_odd",
    "occ_regs",
    "occ_static_smem",
    "occ_dynamic_smem",
)
DISABLE_CACHING_OVERRIDE = 1  # cudaOccupancyDisableCachingOverride

SMEM_FUNCTIONS = {
    "per_thread": lambda bs: bs * 4,
    "per_warp": lambda bs: (bs // 64) * 2048 + 1024,  # C's int division; bs > 0
}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    exe = tmp_path_factory.mktemp("occref") / "occupancy_reference"
    subprocess.run(
        [nvcc(), "-arch=sm_90", "-o", str(exe), str(HERE / "occupancy_reference.cu")],
        check=True,
        capture_output=True,
    )
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    kernels, results = {}, {}
    for line in out.splitlines():
        fields = line.split()
        if fields[0] == "K":
            kernels[fields[1]] = tuple(int(x) for x in fields[2:])
        elif fields[0] == "R":
            results[(fields[1], fields[2])] = tuple(int(x) for x in fields[3:])
    assert set(kernels) == set(KERNEL_NAMES), out
    return kernels, results


def _cases(rt):
    for kind in ("fatbin", "cubin"):
        for route in routes(rt):
            yield kind, route


def _python_result(rt, fn, case):
    what, _, rest = case.partition(":")
    grid, block = ctypes.c_int(-1), ctypes.c_int(-1)
    if what in ("plain", "flags"):
        smem, limit = (int(x) for x in rest.split(":"))
        if what == "plain":
            status = occupancy.cudaOccupancyMaxPotentialBlockSize(
                ctypes.byref(grid), ctypes.byref(block), fn, smem, limit
            )
        else:
            status = occupancy.cudaOccupancyMaxPotentialBlockSizeWithFlags(
                grid, block, fn, smem, limit, DISABLE_CACHING_OVERRIDE
            )
    else:
        what, _, mapping = what.partition("_")  # "var_per_thread" -> "var", "per_thread"
        limit = rest
        smem_fn = SMEM_FUNCTIONS[mapping]
        if what == "var":
            status = occupancy.cudaOccupancyMaxPotentialBlockSizeVariableSMem(
                ctypes.pointer(grid), ctypes.pointer(block), fn, smem_fn, int(limit)
            )
        else:
            status = occupancy.cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(
                grid, block, fn, smem_fn, int(limit), DISABLE_CACHING_OVERRIDE
            )
    return status, grid.value, block.value


def test_matches_cpp_templates(rt, reference):
    kernels, results = reference
    assert len(results) == len(KERNEL_NAMES) * (3 * 4 * 2 + 2 * 3)
    compared = 0
    for kind, route in _cases(rt):
        with load_module(KERNELS / f"occupancy.{kind}", route=route) as module:
            for name in KERNEL_NAMES:
                fn = module.get_function(name)
                attrs = fn.attributes()
                # Same compiler, same source: a difference here is the build, not the port.
                assert (attrs.numRegs, attrs.sharedSizeBytes, attrs.maxThreadsPerBlock) == kernels[
                    name
                ], (kind, name)
                for (kname, case), expected in results.items():
                    if kname != name:
                        continue
                    got = _python_result(rt, fn, case)
                    assert got == expected, (kind, route, name, case)
                    compared += 1
    assert compared == len(results) * len(list(_cases(rt)))


def test_kernels_differ(rt, reference):
    # The comparison only means something if the kernels lead to different answers.
    kernels, results = reference
    assert len({v[:2] for v in kernels.values()}) >= 4
    assert len({results[(n, "plain:0:0")] for n in KERNEL_NAMES}) >= 3


def test_pythonic_forms(rt, reference):
    _, results = reference
    with load_module(KERNELS / "occupancy.cubin", route="register") as module:
        fn = module.get_function("occ_regs")
        status, grid, block = results[("occ_regs", "plain:4096:200")]
        assert status == 0
        assert occupancy.max_potential_block_size(fn, 4096, 200) == (grid, block)
        status, grid, block = results[("occ_regs", "var_per_warp:300")]
        assert occupancy.max_potential_block_size_variable_smem(
            fn, SMEM_FUNCTIONS["per_warp"], 300
        ) == (grid, block)


def test_invalid_function_and_callable_errors(rt):
    grid, block = ctypes.c_int(7), ctypes.c_int(7)
    assert (
        occupancy.cudaOccupancyMaxPotentialBlockSize(grid, block, None) == rt.cudaErrorInvalidValue
    )
    assert (grid.value, block.value) == (7, 7)

    def boom(bs):
        raise ZeroDivisionError("from the callable")

    with load_module(KERNELS / "occupancy.cubin", route="register") as module:
        fn = module.get_function("occ_light")
        with pytest.raises(ZeroDivisionError):
            occupancy.max_potential_block_size_variable_smem(fn, boom)
        # An unregistered address is an error code from the runtime, not a crash.
        anchor = ctypes.create_string_buffer(1)
        status = occupancy.cudaOccupancyMaxPotentialBlockSize(grid, block, ctypes.addressof(anchor))
        assert status != 0
        assert occupancy.cudaOccupancyMaxPotentialBlockSize(grid, block, fn) == 0
        assert block.value > 0
