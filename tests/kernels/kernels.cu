// Kernels for cudart.kernels tests and examples. extern "C" keeps the names unmangled,
// so a loaded image's functions are found by these names.
#include <cooperative_groups.h>

struct Pair {
    int a;
    double b;
};

__device__ int dev_counter;
__device__ float dev_table[16];
__constant__ float const_scale[4];

extern "C" {

__global__ void empty() {}

__global__ void axpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

// One parameter of each size, so argument packing is checked slot by slot.
__global__ void mixed(char c, short s, int i, long long ll, float f, double d, double *out)
{
    out[0] = c; out[1] = s; out[2] = i; out[3] = (double)ll; out[4] = f; out[5] = d;
}

__global__ void take_pair(Pair p, double *out)
{
    out[0] = p.a;
    out[1] = p.b;
}

__global__ void add_counter(int v) { atomicAdd(&dev_counter, v); }

__global__ void read_table(float *out)
{
    int i = threadIdx.x;
    if (i < 16) out[i] = dev_table[i] * const_scale[i % 4];
}

// grid.sync() only works in a cooperative launch: every block adds its index, the
// grid waits, then block 0 reads the total, which is only complete after the sync.
__global__ void coop_sum(int *partial, int *total)
{
    namespace cg = cooperative_groups;
    cg::grid_group grid = cg::this_grid();
    if (threadIdx.x == 0) atomicAdd(partial, (int)blockIdx.x + 1);
    grid.sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) *total = *partial;
}

}
