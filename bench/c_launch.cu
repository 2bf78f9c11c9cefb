/* The C baseline for the launch rows: cudaLaunchKernel on kernels compiled into this
 * program, in bursts that never fill the launch queue, timing the launch loop only.
 *
 * usage: c_launch REPEATS BURST BURSTS N
 * prints "empty STATUS us/launch ..." and "axpy STATUS us/launch ..."
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kernels.cu"

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static double bursts_of(const void *func, dim3 grid, dim3 block, void **args, long burst, long bursts)
{
    long long total = 0;
    for (long b = 0; b < bursts; b++) {
        long long t0 = now_ns();
        for (long i = 0; i < burst; i++)
            cudaLaunchKernel(func, grid, block, args, 0, 0);
        total += now_ns() - t0;
        cudaDeviceSynchronize();
    }
    return (double)total / (burst * bursts) / 1000.0;
}

static void row(const char *name, const void *func, dim3 grid, dim3 block, void **args, int repeats,
                long burst, long bursts)
{
    int status = cudaLaunchKernel(func, grid, block, args, 0, 0);
    if (status == cudaSuccess)
        status = cudaDeviceSynchronize();
    printf("%s %d", name, status);
    if (status == cudaSuccess) {
        bursts_of(func, grid, block, args, burst, 1); /* warm-up */
        for (int r = 0; r < repeats; r++)
            printf(" %.4f", bursts_of(func, grid, block, args, burst, bursts));
    }
    printf("\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: c_launch REPEATS BURST BURSTS N\n");
        return 2;
    }
    int repeats = atoi(argv[1]);
    long burst = atol(argv[2]), bursts = atol(argv[3]);
    int n = atoi(argv[4]);
    float a = 2.0f, *x = NULL, *y = NULL;
    cudaMalloc((void **)&x, n * sizeof(float));
    cudaMalloc((void **)&y, n * sizeof(float));
    cudaMemset(x, 0, n * sizeof(float));
    cudaMemset(y, 0, n * sizeof(float));
    void *args[] = {&a, &x, &y, &n};
    row("empty", (const void *)empty_kernel, dim3(1), dim3(1), NULL, repeats, burst, bursts);
    row("axpy", (const void *)axpy, dim3((n + 255) / 256), dim3(256), args, repeats, burst, bursts);
    return 0;
}
