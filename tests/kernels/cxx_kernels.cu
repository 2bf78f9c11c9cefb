// C++ kernels (mangled names) for finding kernels by their source name: overloads,
// a namespace, templates with type and integer arguments, const pointers.
// Each writes a tag into out[0] so a test can tell which one ran.

__global__ void square(float *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = p[i] * p[i];
}

__global__ void square(double *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = p[i] * p[i] + 0.5;
}

__global__ void scale(const float *in, float *out, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * in[i];
}

namespace ops {

__global__ void shift(int *p, int by) { p[threadIdx.x] += by; }

template <typename T>
__global__ void fill(T *p, T value, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = value;
}

template __global__ void fill<int>(int *, int, int);
template __global__ void fill<float>(float *, float, int);

}  // namespace ops

template <int N>
__global__ void times(int *p) { p[threadIdx.x] *= N; }

template __global__ void times<2>(int *);
template __global__ void times<3>(int *);

extern "C" __global__ void plain(int *p) { p[0] = 7; }
