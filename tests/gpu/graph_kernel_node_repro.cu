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
//        graph_kernel_node_repro LIBCUDART FATBIN N register FUNCTIONS VARIABLES [library-first]
//
// registered-first: each round first does what test_graphs.py's module does before its
// library-route test, the register route on the same image: __cudaRegisterFatBinary,
// __cudaRegisterFunction("axpy"), a kernel node of that host function described, then
// __cudaUnregisterFatBinary; then the library-route sequence above.
//
// register: the same kernel-node sequence on the register route, as cudart.kernels'
// RegisteredLoader does it each round: __cudaRegisterFatBinary, __cudaRegisterFunction
// for each of FUNCTIONS (comma-separated, in the bindings' order) and __cudaRegisterVar
// for each of VARIABLES (name:size:constant, comma-separated; "-" for none), each named
// by a host address of its own, then __cudaRegisterFatBinaryEnd; cudaFuncGetAttributes
// of the first function (the bindings' loadability check); the graph above with the
// axpy node's func the registered host address; cudaGraphKernelNodeGetParams; destroy
// the graph, __cudaUnregisterFatBinary. (test_graphs.py's 13.2 failure at bec1204: the
// bindings' register route described a NULL func, which the library route's race does
// not explain.) library-first: each round first loads the same image as a library,
// describes a node of its kernel and unloads it, as the pytest process's earlier
// library-route tests did.
//
// The register route's answers depend on host addresses (the GPU run of 2026-12-04,
// 2c2fc3c): the same rounds give the same counts run after run, pauses of up to 1 ms
// between the calls change none, but which kernel is loaded first and whether each
// round's names and image sit where the last round's did move C's NULL funcs between 0
// and 84 of 200 on one runtime. So the environment varies them, as a process's
// allocator does (the bindings' registration allocates both afresh each round):
//   REPRO_LOAD_AXPY=1     cudaFuncGetAttributes of axpy, not of the first function;
//   REPRO_FRESH_NAMES=1   each round's name addresses new (the last round's kept);
//   REPRO_FRESH_IMAGE=1   each round registers a new copy of the image.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <string>
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

// A symbol only some modes call (the library route's, 12.8+): NULL where absent.
#define BIND_OPTIONAL(name) decltype(&::name) name##_ = (decltype(&::name))dlsym(lib, #name);

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

struct Variable {
    std::string name;
    size_t size;
    int constant;
};

static std::vector<std::string> split(const char *list)
{
    std::vector<std::string> out;
    std::string item;
    for (const char *c = list;; ++c) {
        if (*c == ',' || *c == '\0') {
            if (!item.empty())
                out.push_back(item);
            item.clear();
            if (*c == '\0')
                return out;
        } else {
            item += *c;
        }
    }
}

int main(int argc, char **argv)
{
    const bool registered_first = argc == 5 && strcmp(argv[4], "registered-first") == 0;
    const bool register_route = (argc == 7 || argc == 8) && strcmp(argv[4], "register") == 0;
    const bool library_first = argc == 8 && strcmp(argv[7], "library-first") == 0;
    if (argc != 4 && !registered_first && !(register_route && (argc == 7 || library_first))) {
        fprintf(stderr,
                "usage: %s LIBCUDART FATBIN N [registered-first]\n"
                "       %s LIBCUDART FATBIN N register FUNCTIONS VARIABLES [library-first]\n",
                argv[0], argv[0]);
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
    const bool load_axpy = getenv("REPRO_LOAD_AXPY") != NULL;
    const bool fresh_names = getenv("REPRO_FRESH_NAMES") != NULL;
    const bool fresh_image = getenv("REPRO_FRESH_IMAGE") != NULL;
    std::vector<std::string> functions;
    std::vector<Variable> variables;
    if (register_route) {
        functions = split(argv[5]);
        for (const std::string &v : split(argv[6])) {
            size_t a = v.find(':'), b = v.rfind(':');
            if (v == "-")
                continue;
            if (a == std::string::npos || a == b) {
                fprintf(stderr, "%s: a variable is name:size:constant, not %s\n", argv[0],
                        v.c_str());
                return 2;
            }
            variables.push_back({v.substr(0, a), (size_t)strtoull(v.c_str() + a + 1, NULL, 10),
                                 atoi(v.c_str() + b + 1)});
        }
        if (std::find(functions.begin(), functions.end(), "axpy") == functions.end()) {
            fprintf(stderr, "%s: FUNCTIONS must name axpy\n", argv[0]);
            return 2;
        }
    }

    BIND(cudaGetErrorName)
    BIND(cudaGetLastError)
    BIND(cudaRuntimeGetVersion)
    BIND_AS(cudaMalloc, AllocFn)
    BIND(cudaFree)
    BIND_AS(cudaMallocHost, AllocFn)
    BIND(cudaFreeHost)
    BIND_OPTIONAL(cudaLibraryLoadData)
    BIND_OPTIONAL(cudaLibraryGetKernel)
    BIND_OPTIONAL(cudaLibraryUnload)
    if ((!register_route || library_first) &&
        !(cudaLibraryLoadData_ && cudaLibraryGetKernel_ && cudaLibraryUnload_)) {
        fprintf(stderr, "%s: no library route (cudaLibraryLoadData) in %s\n", argv[0], argv[1]);
        return 2;
    }
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
    typedef void (*RegisterVar)(void **, char *, char *, const char *, int, size_t, int, int);
    BIND_AS(__cudaRegisterVar, RegisterVar)
    BIND(cudaFuncGetAttributes)
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

    int registered_described = 0, library_described = 0;
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
        if (library_first) {
            cudaLibrary_t earlier;
            CHECK(cudaLibraryLoadData_(&earlier, image.data(), NULL, NULL, 0, NULL, NULL, 0));
            cudaKernel_t kernel;
            CHECK(cudaLibraryGetKernel_(&kernel, earlier, "axpy"));
            cudaGraph_t graph;
            CHECK(cudaGraphCreate_(&graph, 0));
            cudaKernelNodeParams params;
            memset(&params, 0, sizeof params);
            params.func = (void *)kernel;
            params.gridDim = dim3((n + 255) / 256, 1, 1);
            params.blockDim = dim3(256, 1, 1);
            params.kernelParams = args;
            cudaGraphNode_t node;
            CHECK(cudaGraphAddKernelNode_(&node, graph, NULL, 0, &params));
            cudaKernelNodeParams got;
            memset(&got, 0, sizeof got);
            if (cudaGraphKernelNodeGetParams_(node, &got) == cudaSuccess && got.func != NULL)
                ++library_described;
            cudaGetLastError_();
            CHECK(cudaGraphDestroy_(graph));
            CHECK(cudaLibraryUnload_(earlier));
        }
        // The node's func: the library's cudaKernel_t, or the registered host address.
        void *func = NULL;
        cudaLibrary_t library = NULL;
        void **handle = NULL;
        // One byte per name, its address the name's identity to the runtime (as
        // cudart.kernels._registration does); alive until the image is unregistered.
        static std::vector<std::vector<char> *> kept;  // never freed: no address reused
        std::vector<char> reused(functions.size() + variables.size() + 1);
        std::vector<char> &anchors =
            fresh_names ? *kept.emplace_back(new std::vector<char>(reused.size())) : reused;
        if (fresh_image) {
            kept.push_back(new std::vector<char>(image));
            wrapper.data = kept.back()->data();
        }
        if (register_route) {
            handle = __cudaRegisterFatBinary_(&wrapper);
            if (handle == NULL) {
                fprintf(stderr, "__cudaRegisterFatBinary refused the image\n");
                return 3;
            }
            for (size_t k = 0; k < functions.size(); ++k) {
                char *name = (char *)functions[k].c_str();
                __cudaRegisterFunction_(handle, &anchors[k], name, name, -1, NULL, NULL, NULL,
                                        NULL, NULL);
                if (functions[k] == "axpy")
                    func = &anchors[k];
            }
            for (size_t k = 0; k < variables.size(); ++k) {
                char *name = (char *)variables[k].name.c_str();
                __cudaRegisterVar_(handle, &anchors[functions.size() + k], name, name, 0,
                                   variables[k].size, variables[k].constant, 0);
            }
            __cudaRegisterFatBinaryEnd_(handle);
            cudaFuncAttributes attributes;
            CHECK(cudaFuncGetAttributes_(&attributes, load_axpy ? func : &anchors[0]));
        } else {
            CHECK(cudaLibraryLoadData_(&library, image.data(), NULL, NULL, 0, NULL, NULL, 0));
            cudaKernel_t kernel;
            CHECK(cudaLibraryGetKernel_(&kernel, library, "axpy"));
            func = (void *)kernel;
        }

        cudaGraph_t graph;
        CHECK(cudaGraphCreate_(&graph, 0));
        cudaGraphNode_t copies[2], node, back;
        CHECK(cudaGraphAddMemcpyNode1D_(&copies[0], graph, NULL, 0, dx, x_in, nbytes,
                                        cudaMemcpyHostToDevice));
        CHECK(cudaGraphAddMemcpyNode1D_(&copies[1], graph, NULL, 0, dy, y_in, nbytes,
                                        cudaMemcpyHostToDevice));
        cudaKernelNodeParams params;
        memset(&params, 0, sizeof params);
        params.func = func;
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
        if (register_route)
            __cudaUnregisterFatBinary_(handle);
        else
            CHECK(cudaLibraryUnload_(library));
    }
    printf("counts described=%d null_func=%d not_described=%d wrong=%d error=%d\n", described,
           null_func, not_described, wrong, error);
    if (registered_first)
        printf("registered_described %d\n", registered_described);
    if (library_first)
        printf("library_described %d\n", library_described);
    if (first_error != cudaSuccess)
        printf("first_error %s\n", cudaGetErrorName_(first_error));
    CHECK(cudaFree_(dx));
    CHECK(cudaFree_(dy));
    CHECK(cudaFreeHost_(x_in));
    CHECK(cudaFreeHost_(y_in));
    CHECK(cudaFreeHost_(y_out));
    return 0;
}
