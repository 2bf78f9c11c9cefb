"""Pick a launch configuration with the occupancy calculator cuda_runtime.h has as a
C++ template, here in Python.

Run from the repository root: python examples/occupancy.py
"""

from pathlib import Path

from cudart import occupancy
from cudart.kernels import load_module

IMAGE = Path(__file__).resolve().parent.parent / "tests" / "kernels" / "occupancy.fatbin"


def main():
    with load_module(IMAGE) as module:
        for name in ("occ_light", "occ_bounds", "occ_regs", "occ_static_smem"):
            fn = module.get_function(name)
            grid, block = occupancy.max_potential_block_size(fn)
            print(
                f"{name:18} {fn.attributes().numRegs:3} registers: block {block:4}, min grid {grid}"
            )
        # Dynamic shared memory that grows with the block: 8 bytes per thread.
        fn = module.get_function("occ_dynamic_smem")
        grid, block = occupancy.max_potential_block_size_variable_smem(
            fn, lambda threads: 8 * threads, 512
        )
        print(f"occ_dynamic_smem   8 B/thread, block <= 512: block {block}, min grid {grid}")


if __name__ == "__main__":
    main()
