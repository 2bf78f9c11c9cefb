"""Compile a templated CUDA C++ kernel from a Python string with NVRTC, launch it, check it.

No nvcc: `cudart.compile` runs NVRTC (`pip install 'cudart[cu12]'` brings it) for the
current GPU, keeps the image in the kernel cache (~/.cache/cudart/kernels) so the next
run skips the compile, and returns the loaded module.

Run from the repository root: python examples/compile_axpy.py
"""

import ctypes
import time

import cudart

SOURCE = r"""
template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}
"""


def main():
    n = 1 << 20
    started = time.perf_counter()
    module = cudart.compile(SOURCE, name_expressions=["axpy<float>"], options=["-std=c++17"])
    took = time.perf_counter() - started
    axpy = module.get_function("axpy<float>")  # the name expression, lowered by NVRTC

    host_x = (ctypes.c_float * n)(*range(n))
    host_y = (ctypes.c_float * n)(*([1.0] * n))
    x = cudart.cudaMalloc(4 * n)
    y = cudart.cudaMalloc(4 * n)
    cudart.cudaMemcpy(x, host_x, 4 * n, cudart.cudaMemcpyHostToDevice)
    cudart.cudaMemcpy(y, host_y, 4 * n, cudart.cudaMemcpyHostToDevice)
    block = 256
    axpy.launch((n + block - 1) // block, block, 2.0, x, y, n)
    cudart.cudaMemcpy(host_y, y, 4 * n, cudart.cudaMemcpyDeviceToHost)
    cudart.cudaFree(x)
    cudart.cudaFree(y)
    module.close()

    bad = [i for i in range(0, n, 997) if host_y[i] != 2.0 * i + 1.0]
    verdict = "ok" if not bad else f"wrong at {bad[:5]}"
    print(f"compiled axpy<float> ({module.lowered_names['axpy<float>']}) in {took:.3f} s")
    print(f"axpy on {n} floats: {verdict}")


if __name__ == "__main__":
    main()
