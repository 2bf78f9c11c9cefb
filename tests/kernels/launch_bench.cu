// C baseline for launch_bench.py: host time per cudaLaunchKernel of a 4-argument
// kernel and an empty one, median over bursts of 256 (synchronised between bursts,
// so the queue never fills). Build: nvcc -arch=sm_90 -o launch_bench launch_bench.cu
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

extern "C" __global__ void empty_c() {}
extern "C" __global__ void axpy_c(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

template <class F> static double median_us(F launch)
{
    std::vector<double> t;
    for (int burst = 0; burst < 200; ++burst) {
        cudaDeviceSynchronize();
        auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < 256; ++k) launch();
        auto t1 = std::chrono::steady_clock::now();
        t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 256);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main()
{
    float *x, *y;
    cudaMalloc(&x, 4096); cudaMalloc(&y, 4096);
    float a = 2.0f; int n = 32;
    void *args[] = {&a, &x, &y, &n};
    dim3 g(1), b(32);
    double e = median_us([&] { cudaLaunchKernel((const void *)empty_c, g, b, nullptr, 0, 0); });
    double f = median_us([&] { cudaLaunchKernel((const void *)axpy_c, g, b, args, 0, 0); });
    printf("C cudaLaunchKernel empty %.2f us, axpy(4 args) %.2f us\n", e, f);
    return 0;
}
