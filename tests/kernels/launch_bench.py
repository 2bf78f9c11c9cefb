"""Host time per launch through Function.launch, median over bursts of 256.

Run from the repository root: python tests/kernels/launch_bench.py
"""

import ctypes
import statistics
import sys
import time
from pathlib import Path

import cudart
from cudart.kernels import load_module

HERE = Path(__file__).resolve().parent


def median_us(launch, *args, bursts=200):
    sync = cudart.sys.cudaDeviceSynchronize
    clock = time.perf_counter
    times = []
    for _ in range(bursts):
        sync()
        t0 = clock()
        for _ in range(256):
            launch(1, 32, *args)
        times.append((clock() - t0) / 256 * 1e6)
    return statistics.median(times)


def main():
    rt = cudart.sys
    route = sys.argv[1] if len(sys.argv) > 1 else "auto"
    with load_module(HERE / "kernels.fatbin", route=route) as m:
        empty, axpy = m.get_function("empty"), m.get_function("axpy")
        x, y = ctypes.c_void_p(), ctypes.c_void_p()
        rt.cudaMalloc(ctypes.byref(x), 4096)
        rt.cudaMalloc(ctypes.byref(y), 4096)
        xv, yv = x.value, y.value
        e = median_us(empty.launch)
        f = median_us(axpy.launch, 2.0, xv, yv, 32)
        print(f"python {cudart.load_runtime().version_text} ({m.route}) Function.launch "
              f"empty {e:.2f} us, axpy(4 args) {f:.2f} us")


if __name__ == "__main__":
    main()
