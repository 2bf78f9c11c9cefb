// The kernel-node sequence of tests/gpu/test_graphs.py's
// test_kernel_node_graph_and_its_updates on the library route, in C, against a given
// libcudart (the one the Python run loaded: dlopen'd, so the same file whatever CUDA
// version nvcc has), N times:
//
//   cudaLibraryLoadData(tests/kernels/kernels.fatbin) -> cudaLibraryGetKernel("axpy")
//   -> a graph of two host-to-device copies, the axpy kernel node after both (func: the
//   cudaKernel_t) and a copy back -> cudaGraphKernelNodeGetParams(kernel node)
//   -> destroy the graph, unload the library.
//
// Each round's answer is one of: described (success, non-NULL func, the launch shape
// and arguments as given), null_func (success with a NULL func), not_described
// (cudaErrorInvalidDeviceFunction), wrong (success, other fields differ), error (any
// other status). Prints `runtime <version>`, then `counts described=.. null_func=..
// not_described=.. wrong=.. error=..`, and for an error its name.
//
// Build (host code only: no fatbinary of its own to register):
//        nvcc -x c++ -cudart none -o graph_kernel_node_repro graph_kernel_node_repro.cu -ldl
// Run:   graph_kernel_node_repro LIBCUDART FATBIN N [registered-first]
//
// registered-first: each round first does what test_graphs.py's module does before its
// library-route test, the register route on the same image: __cudaRegisterFatBinary,
// __cudaRegisterFunction("axpy"), a kernel node of that host function described, then
// __cudaUnregisterFatBinary; then the library-route sequence above.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

// The C declaration's type; cuda_runtime.h (which nvcc includes) overloads some names
// in C++, so those give their C type themselves.
#define BIND(name) BIND_AS(name, decltype(&::name))
#define BIND_AS(name, type)                                                         \
    type name##_ = (type)dlsym(lib, #name);                                         \
    if (name##_ == NULL) {                                                          \
        fprintf(stderr, "%s: no %s in %s\n", argv[0], #name, argv[1]);              \
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

typedef cudaError_t(CUDARTAPI *AllocFn)(void **, size_t);

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
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "registered-first") == 0)) {
        fprintf(stderr, "usage: %s LIBCUDART FATBIN N [registered-first]\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "%s: %s\n", argv[0], dlerror());
        return 2;
    }
    std::vector<char> image = read_file(argv[2]);
    if (image.empty()) {
        fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[2]);
        return 2;
    }
    const int rounds = atoi(argv[3]);
    const bool registered_first = argc == 5;

    BIND(cudaGetErrorName)
    BIND(cudaGetLastError)
    BIND(cudaRuntimeGetVersion)
    BIND_AS(cudaMalloc, AllocFn)
    BIND(cudaFree)
    BIND_AS(cudaMallocHost, AllocFn)
    BIND(cudaFreeHost)
    BIND(cudaLibraryLoadData)
    BIND(cudaLibraryGetKernel)
    BIND(cudaLibraryUnload)
    BIND(cudaGraphCreate)
    BIND(cudaGraphDestroy)
    BIND(cudaGraphAddMemcpyNode1D)
    BIND(cudaGraphAddKernelNode)
    BIND(cudaGraphKernelNodeGetParams)
    typedef void **(*RegisterFatBinary)(void *);
    typedef void (*RegisterFatBinaryEnd)(void **);
    typedef void (*RegisterFunction)(void **, const char *, char *, const char *, int, void *,
                                     void *, void *, void *, int *);
    BIND_AS(__cudaRegisterFatBinary, RegisterFatBinary)
    BIND_AS(__cudaRegisterFatBinaryEnd, RegisterFatBinaryEnd)
    BIND_AS(__cudaRegisterFunction, RegisterFunction)
    BIND_AS(__cudaUnregisterFatBinary, RegisterFatBinaryEnd)
    // nvcc's stub's __fatBinC_Wrapper_t: magic, version 1, the image, an unused pointer.
    struct {
        int magic, version;
        const void *data;
        void *unused;
    } wrapper = {0x466243b1, 1, image.data(), NULL};
    static char axpy_stub;  // the host function the register route names the kernel by

    int version = 0;
    CHECK(cudaRuntimeGetVersion_(&version));
    printf("runtime %d\n", version);

    // The Python test's buffers: n floats, pinned on the host, and two device arrays.
    const int n = 10000;
    const size_t nbytes = n * sizeof(float);
    void *x_in, *y_in, *y_out, *dx, *dy;
    CHECK(cudaMallocHost_(&x_in, nbytes));
    CHECK(cudaMallocHost_(&y_in, nbytes));
    CHECK(cudaMallocHost_(&y_out, nbytes));
    CHECK(cudaMalloc_(&dx, nbytes));
    CHECK(cudaMalloc_(&dy, nbytes));

    float a = 2.0f;
    int count = n;
    void *args[4] = {&a, &dx, &dy, &count};
    int described = 0, null_func = 0, not_described = 0, wrong = 0, error = 0;
    cudaError_t first_error = cudaSuccess;

    int registered_described = 0;
    for (int round = 0; round < rounds; ++round) {
        if (registered_first) {
            void **handle = __cudaRegisterFatBinary_(&wrapper);
            __cudaRegisterFunction_(handle, &axpy_stub, (char *)"axpy", "axpy", -1, NULL, NULL,
                                    NULL, NULL, NULL);
            __cudaRegisterFatBinaryEnd_(handle);
            cudaGraph_t graph;
            CHECK(cudaGraphCreate_(&graph, 0));
            cudaKernelNodeParams params;
            memset(&params, 0, sizeof params);
            params.func = (void *)&axpy_stub;
            params.gridDim = dim3((n + 255) / 256, 1, 1);
            params.blockDim = dim3(256, 1, 1);
            params.kernelParams = args;
            cudaGraphNode_t node;
            CHECK(cudaGraphAddKernelNode_(&node, graph, NULL, 0, &params));
            cudaKernelNodeParams got;
            memset(&got, 0, sizeof got);
            if (cudaGraphKernelNodeGetParams_(node, &got) == cudaSuccess && got.func != NULL)
                ++registered_described;
            cudaGetLastError_();
            CHECK(cudaGraphDestroy_(graph));
            __cudaUnregisterFatBinary_(handle);
        }
        cudaLibrary_t library;
        CHECK(cudaLibraryLoadData_(&library, image.data(), NULL, NULL, 0, NULL, NULL, 0));
        cudaKernel_t kernel;
        CHECK(cudaLibraryGetKernel_(&kernel, library, "axpy"));

        cudaGraph_t graph;
        CHECK(cudaGraphCreate_(&graph, 0));
        cudaGraphNode_t copies[2], node, back;
        CHECK(cudaGraphAddMemcpyNode1D_(&copies[0], graph, NULL, 0, dx, x_in, nbytes,
                                        cudaMemcpyHostToDevice));
        CHECK(cudaGraphAddMemcpyNode1D_(&copies[1], graph, NULL, 0, dy, y_in, nbytes,
                                        cudaMemcpyHostToDevice));
        cudaKernelNodeParams params;
        memset(&params, 0, sizeof params);
        params.func = (void *)kernel;
        params.gridDim = dim3((n + 255) / 256, 1, 1);
        params.blockDim = dim3(256, 1, 1);
        params.kernelParams = args;
        CHECK(cudaGraphAddKernelNode_(&node, graph, copies, 2, &params));
        CHECK(cudaGraphAddMemcpyNode1D_(&back, graph, &node, 1, y_out, dy, nbytes,
                                        cudaMemcpyDeviceToHost));

        cudaKernelNodeParams got;
        memset(&got, 0, sizeof got);
        cudaError_t status = cudaGraphKernelNodeGetParams_(node, &got);
        if (status == cudaErrorInvalidDeviceFunction) {
            ++not_described;
            cudaGetLastError_();
        } else if (status != cudaSuccess) {
            ++error;
            if (first_error == cudaSuccess)
                first_error = status;
            cudaGetLastError_();
        } else if (got.func == NULL) {
            ++null_func;
        } else if (got.gridDim.x != params.gridDim.x || got.gridDim.y != 1 ||
                   got.blockDim.x != 256 || got.kernelParams == NULL ||
                   *(float *)got.kernelParams[0] != a || *(int *)got.kernelParams[3] != n) {
            ++wrong;
        } else {
            ++described;
        }
        CHECK(cudaGraphDestroy_(graph));
        CHECK(cudaLibraryUnload_(library));
    }
    printf("counts described=%d null_func=%d not_described=%d wrong=%d error=%d\n", described,
           null_func, not_described, wrong, error);
    if (registered_first)
        printf("registered_described %d\n", registered_described);
    if (first_error != cudaSuccess)
        printf("first_error %s\n", cudaGetErrorName_(first_error));
    CHECK(cudaFree_(dx));
    CHECK(cudaFree_(dy));
    CHECK(cudaFreeHost_(x_in));
    CHECK(cudaFreeHost_(y_in));
    CHECK(cudaFreeHost_(y_out));
    return 0;
}
