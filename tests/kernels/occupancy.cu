// Kernels whose occupancy differs by register count, static and dynamic shared
// memory and launch bounds. tests/gpu/occupancy_reference.cu compiles this file into
// itself, so the C++ templates and cudart.occupancy see the same kernels.

extern "C" {

__global__ void occ_light(float *p) { p[threadIdx.x] += 1.0f; }

__global__ void __launch_bounds__(256, 4) occ_bounds(float *p)
{
    p[blockIdx.x * blockDim.x + threadIdx.x] *= 2.0f;
}

// A block limit that is not a multiple of the warp size exercises the header's
// rounding of the first block size tried.
__global__ void __launch_bounds__(100) occ_bounds_odd(float *p)
{
    p[blockIdx.x * blockDim.x + threadIdx.x] *= 3.0f;
}

// Many values live at once: high register count per thread.
__global__ void occ_regs(const float *in, float *out, int n)
{
    float acc[48];
#pragma unroll
    for (int k = 0; k < 48; ++k) acc[k] = in[(threadIdx.x + k * 37) % n];
    for (int it = 0; it < n; ++it) {
#pragma unroll
        for (int k = 0; k < 48; ++k) acc[k] = acc[k] * acc[(k + 7) % 48] + acc[(k + 13) % 48];
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 48; ++k) s += acc[k] * (float)(k + 1);
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void occ_static_smem(float *p)
{
    __shared__ float buf[10000];
    for (int i = threadIdx.x; i < 10000; i += blockDim.x) buf[i] = p[i];
    __syncthreads();
    p[threadIdx.x] = buf[(threadIdx.x * 7) % 10000];
}

__global__ void occ_dynamic_smem(float *p)
{
    extern __shared__ float dyn[];
    dyn[threadIdx.x] = p[threadIdx.x];
    __syncthreads();
    p[threadIdx.x] = dyn[blockDim.x - 1 - threadIdx.x];
}

}
