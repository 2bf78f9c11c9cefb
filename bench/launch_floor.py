"""How much of a Python kernel launch is cudart's, and how much any foreign call pays.

Times, in one process, host time per launch of the 4-argument axpy kernel in bursts of
256 (the queue never fills): cudart's Function.launch; a bare ctypes call of
cudaLaunchKernelExC with every argument prebuilt (the floor for any ctypes binding),
with and without argtypes; and the same call with the GIL held (PyDLL). Needs a GPU:

    PYTHONPATH=. python3 bench/launch_floor.py

The launch rows' first explanations came from this. The launch rows of `python -m bench`
now time the same paths (and C calling cudaLaunchKernelExC on the same config, function
and slots, in the same process), round by round: prefer them for ratios.
"""

import ctypes
import statistics
import time
from pathlib import Path

import cudart

BURST = 256
IMAGE = Path(__file__).resolve().parent.parent / "tests" / "kernels" / "kernels.fatbin"


def main() -> None:
    rt = cudart.sys
    module = cudart.load_module(IMAGE)
    fn = module.get_function("axpy", signature="float a, const float *x, float *y, int n")
    n = 4096
    x, y = ctypes.c_void_p(), ctypes.c_void_p()
    for p in (x, y):
        assert rt.cudaMalloc(ctypes.byref(p), 4 * n) == 0
    fn.launch(n // 256, 256, 2.0, x.value, y.value, n)
    assert rt.cudaDeviceSynchronize() == 0
    # Function.launch keeps its packed slots and config; reuse exactly what it passes.
    config, func, argv = fn._config_ptr, fn._func, fn._sig.argv
    path = cudart.load_runtime().path
    bare = ctypes.CDLL(path)["cudaLaunchKernelExC"]
    typed = ctypes.CDLL(path)["cudaLaunchKernelExC"]
    typed.argtypes = (ctypes.c_void_p,) * 3
    gil_held = ctypes.PyDLL(path)["cudaLaunchKernelExC"]
    for f in (bare, typed, gil_held):
        f.restype = ctypes.c_int

    def cudart_launch():
        launch, xv, yv = fn.launch, x.value, y.value
        for _ in range(BURST):
            launch(n // 256, 256, 2.0, xv, yv, n)

    def loop(call):
        def body():
            for _ in range(BURST):
                call(config, func, argv)

        return body

    cases = [
        ("cudart Function.launch", cudart_launch),
        ("bare ctypes cudaLaunchKernelExC", loop(bare)),
        ("bare ctypes, argtypes c_void_p", loop(typed)),
        ("bare ctypes, GIL held (PyDLL)", loop(gil_held)),
    ]
    print(
        f"{'launch path':36s} {'median':>9s} {'min':>9s}   (us per launch, {BURST}-launch bursts)"
    )
    for label, body in cases:
        per_launch = []
        for _ in range(40):
            rt.cudaDeviceSynchronize()
            start = time.perf_counter_ns()
            body()
            per_launch.append((time.perf_counter_ns() - start) / BURST / 1000)
        print(f"{label:36s} {statistics.median(per_launch):9.2f} {min(per_launch):9.2f}")
    for p in (x, y):
        rt.cudaFree(p)
    module.close()


if __name__ == "__main__":
    main()
