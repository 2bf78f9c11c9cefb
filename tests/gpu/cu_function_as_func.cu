// What tests/gpu/test_driver_interop.py's test_a_cu_module_function_runs_through_both_apis
// does, in C, against a given libcudart (dlopen'd: the one the Python run loaded, whatever
// CUDA version nvcc has) and the system's libcuda.so.1:
//
//   cudaSetDevice(0), cudaFree(0) -> cuInit, cuDevicePrimaryCtxRetain(0), cuCtxSetCurrent
//   -> cudaStreamCreate, y = N floats of 1.0 (cudaMalloc, cudaMemcpy)
//   -> cuModuleLoadData(CUBIN) -> cuModuleGetFunction("scale")
//   -> cuLaunchKernel(function, a = 2.0) on the stream, cudaStreamSynchronize
//   -> cudaLaunchKernel((const void *)function, 1, N, a = 2.0) on the stream: the
//      runtime given a CUfunction as `func`, the call the test asks about.
//
// CUBIN: an image of `extern "C" __global__ void scale(float *y, float a, int n)`
// (y[i] *= a), as the test compiles it. Prints
//   runtime <cudaRuntimeGetVersion>
//   launch <status> <cudaGetErrorName>     (cudaLaunchKernel's own status)
//   last <status>                          (cudaGetLastError right after it)
//   values <y[0]> <all the same: 1 or 0>   (after cudaStreamSynchronize, on success only)
// and exits 0; a step before the launch that fails exits 3 naming it, a missing symbol 2.
//
// Build (host code only):
//        nvcc -x c++ -cudart none -o cu_function_as_func cu_function_as_func.cu -ldl
// Run:   cu_function_as_func LIBCUDART CUBIN
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <vector>

#define BIND(lib, name) BIND_AS(lib, name, decltype(&::name))
#define BIND_AS(lib, name, type)                                                    \
    type name##_ = (type)dlsym(lib, #name);                                         \
    if (name##_ == NULL) {                                                          \
        fprintf(stderr, "%s: no %s\n", argv[0], #name);                             \
        return 2;                                                                   \
    }

#define CHECK(call)                                                                 \
    do {                                                                            \
        cudaError_t s_ = (call);                                                    \
        if (s_ != cudaSuccess) {                                                    \
            fprintf(stderr, "%s failed: %s (%d)\n", #call, cudaGetErrorName_(s_), (int)s_); \
            return 3;                                                               \
        }                                                                           \
    } while (0)

#define CU_CHECK(call)                                                              \
    do {                                                                            \
        CUresult r_ = (call);                                                       \
        if (r_ != CUDA_SUCCESS) {                                                   \
            fprintf(stderr, "%s failed: CUresult %d\n", #call, (int)r_);            \
            return 3;                                                               \
        }                                                                           \
    } while (0)

// cuda_runtime.h's C++ overloads are not what dlsym gives: the C declarations' types.
typedef cudaError_t(CUDARTAPI *MallocFn)(void **, size_t);
typedef cudaError_t(CUDARTAPI *LaunchFn)(const void *, dim3, dim3, void **, size_t,
                                         cudaStream_t);

static std::vector<char> read_file(const char *path)
{
    std::vector<char> data;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return data;
    char buffer[65536];
    size_t got;
    while ((got = fread(buffer, 1, sizeof buffer, f)) > 0)
        data.insert(data.end(), buffer, buffer + got);
    fclose(f);
    return data;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s LIBCUDART CUBIN\n", argv[0]);
        return 2;
    }
    void *rt = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (rt == NULL) {
        fprintf(stderr, "%s: %s\n", argv[0], dlerror());
        return 2;
    }
    std::vector<char> image = read_file(argv[2]);
    if (image.empty()) {
        fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[2]);
        return 2;
    }
    BIND(rt, cudaGetErrorName)
    BIND(rt, cudaRuntimeGetVersion)
    BIND(rt, cudaSetDevice)
    BIND(rt, cudaFree)
    BIND_AS(rt, cudaMalloc, MallocFn)
    BIND(rt, cudaMemcpy)
    BIND(rt, cudaStreamCreate)
    BIND(rt, cudaStreamSynchronize)
    BIND(rt, cudaGetLastError)
    BIND_AS(rt, cudaLaunchKernel, LaunchFn)

    int version = 0;
    CHECK(cudaRuntimeGetVersion_(&version));
    printf("runtime %d\n", version);
    fflush(stdout);

    void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (cu == NULL) {
        fprintf(stderr, "%s: %s\n", argv[0], dlerror());
        return 2;
    }
    // None of these is renamed by cuda.h's macros (no _v2 symbol), so dlsym takes the name.
    BIND_AS(cu, cuInit, decltype(&::cuInit))
    BIND_AS(cu, cuDevicePrimaryCtxRetain, decltype(&::cuDevicePrimaryCtxRetain))
    BIND_AS(cu, cuCtxSetCurrent, decltype(&::cuCtxSetCurrent))
    BIND_AS(cu, cuModuleLoadData, decltype(&::cuModuleLoadData))
    BIND_AS(cu, cuModuleGetFunction, decltype(&::cuModuleGetFunction))
    BIND_AS(cu, cuLaunchKernel, decltype(&::cuLaunchKernel))

    const int n = 256;
    CHECK(cudaSetDevice_(0));
    CHECK(cudaFree_(0));
    CU_CHECK(cuInit_(0));
    CUcontext context;
    CU_CHECK(cuDevicePrimaryCtxRetain_(&context, 0));
    CU_CHECK(cuCtxSetCurrent_(context));
    cudaStream_t stream;
    CHECK(cudaStreamCreate_(&stream));
    std::vector<float> host(n, 1.0f);
    void *y = NULL;
    CHECK(cudaMalloc_(&y, n * sizeof(float)));
    CHECK(cudaMemcpy_(y, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUmodule module;
    CU_CHECK(cuModuleLoadData_(&module, image.data()));
    CUfunction function;
    CU_CHECK(cuModuleGetFunction_(&function, module, "scale"));
    float a = 2.0f;
    int count = n;
    void *args[] = {&y, &a, &count};
    CU_CHECK(cuLaunchKernel_(function, 1, 1, 1, n, 1, 1, 0, (CUstream)stream, args, NULL));
    CHECK(cudaStreamSynchronize_(stream));

    cudaError_t launched = cudaLaunchKernel_((const void *)function, dim3(1), dim3(n), args,
                                             0, stream);
    printf("launch %d %s\n", (int)launched, cudaGetErrorName_(launched));
    printf("last %d\n", (int)cudaGetLastError_());
    if (launched == cudaSuccess) {
        CHECK(cudaStreamSynchronize_(stream));
        CHECK(cudaMemcpy_(host.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
        int same = 1;
        for (int i = 1; i < n; i++)
            same &= host[i] == host[0];
        printf("values %g %d\n", host[0], same);
    }
    return 0;
}
