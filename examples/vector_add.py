"""y = a*x + y on the GPU with a kernel loaded from an image, no nvcc at run time.

Run from the repository root: python examples/vector_add.py
"""

import ctypes
from pathlib import Path

import cudart
from cudart.kernels import load_module

IMAGE = Path(__file__).resolve().parent.parent / "tests" / "kernels" / "kernels.fatbin"


def main():
    rt = cudart.sys
    n = 1 << 20
    host_x = (ctypes.c_float * n)(*range(n))
    host_y = (ctypes.c_float * n)(*([1.0] * n))
    x, y = ctypes.c_void_p(), ctypes.c_void_p()
    for p in (x, y):
        assert rt.cudaMalloc(ctypes.byref(p), 4 * n) == rt.cudaSuccess
    rt.cudaMemcpy(x, host_x, 4 * n, rt.cudaMemcpyHostToDevice)
    rt.cudaMemcpy(y, host_y, 4 * n, rt.cudaMemcpyHostToDevice)

    with load_module(IMAGE) as module:
        # extern "C": typed by the fatbin's PTX where it can be read, declared for any image
        axpy = module.get_function("axpy", signature="float a, const float *x, float *y, int n")
        block = 256
        axpy.launch((n + block - 1) // block, block, 2.0, x, y, n)
        assert rt.cudaDeviceSynchronize() == rt.cudaSuccess

    rt.cudaMemcpy(host_y, y, 4 * n, rt.cudaMemcpyDeviceToHost)
    rt.cudaFree(x)
    rt.cudaFree(y)
    bad = [i for i in range(0, n, 997) if host_y[i] != 2.0 * i + 1.0]
    verdict = "ok" if not bad else f"wrong at {bad[:5]}"
    print(f"axpy on {n} floats via the {module.route} route: {verdict}")


if __name__ == "__main__":
    main()
