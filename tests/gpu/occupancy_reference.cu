// The C++ templates of cuda_runtime.h on the kernels of tests/kernels/occupancy.cu,
// for the inputs tests/gpu/test_occupancy.py gives cudart.occupancy. Prints one line
// per kernel ("K name numRegs sharedSizeBytes maxThreadsPerBlock") and per case
// ("R name case status minGridSize blockSize").
#include <cstdio>
#include <cuda_runtime.h>
#include "../kernels/occupancy.cu"

struct PerThread { __host__ __device__ size_t operator()(int bs) const { return (size_t)bs * 4; } };
struct PerWarpPlusFixed { __host__ __device__ size_t operator()(int bs) const { return (size_t)(bs / 64) * 2048 + 1024; } };

template <class T>
static void run(const char *name, T func)
{
    cudaFuncAttributes a;
    cudaFuncGetAttributes(&a, func);
    printf("K %s %d %zu %d\n", name, a.numRegs, a.sharedSizeBytes, a.maxThreadsPerBlock);
    const size_t smems[] = {0, 4096, 40000};
    const int limits[] = {0, 100, 200, 1000};
    int g, b;
    cudaError_t s;
    for (size_t smem : smems)
        for (int limit : limits) {
            g = b = -1;
            s = cudaOccupancyMaxPotentialBlockSize(&g, &b, func, smem, limit);
            printf("R %s plain:%zu:%d %d %d %d\n", name, smem, limit, (int)s, g, b);
            g = b = -1;
            s = cudaOccupancyMaxPotentialBlockSizeWithFlags(&g, &b, func, smem, limit, cudaOccupancyDisableCachingOverride);
            printf("R %s flags:%zu:%d %d %d %d\n", name, smem, limit, (int)s, g, b);
        }
    for (int limit : {0, 300}) {
        g = b = -1;
        s = cudaOccupancyMaxPotentialBlockSizeVariableSMem(&g, &b, func, PerThread(), limit);
        printf("R %s var_per_thread:%d %d %d %d\n", name, limit, (int)s, g, b);
        g = b = -1;
        s = cudaOccupancyMaxPotentialBlockSizeVariableSMem(&g, &b, func, PerWarpPlusFixed(), limit);
        printf("R %s var_per_warp:%d %d %d %d\n", name, limit, (int)s, g, b);
        g = b = -1;
        s = cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(&g, &b, func, PerThread(), limit,
                                                                   cudaOccupancyDisableCachingOverride);
        printf("R %s varflags_per_thread:%d %d %d %d\n", name, limit, (int)s, g, b);
    }
}

int main()
{
    run("occ_light", occ_light);
    run("occ_bounds", occ_bounds);
    run("occ_bounds_odd", occ_bounds_odd);
    run("occ_regs", occ_regs);
    run("occ_static_smem", occ_static_smem);
    run("occ_dynamic_smem", occ_dynamic_smem);
    return 0;
}
