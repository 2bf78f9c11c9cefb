/* The C baseline for the call rows. Built at bench time with gcc against the loaded
 * runtime's headers and linked to the very libcudart file the Python side loaded, so
 * a ratio to these figures is the cost of the binding and nothing else.
 *
 * usage: c_calls CALLS REPEATS BURST BURSTS NAME...
 * prints per NAME: "NAME STATUS ns/call ns/call ..." (one figure per repeat)
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Keeps the results observable so no call's effect can be dropped. */
static volatile int sink;

static double get_device(long n)
{
    int dev = 0;
    cudaError_t e = cudaSuccess;
    long long t0 = now_ns();
    for (long i = 0; i < n; i++)
        e = cudaGetDevice(&dev);
    long long t1 = now_ns();
    sink = (int)e + dev;
    return (double)(t1 - t0) / n;
}

static double stream_query(long n)
{
    cudaError_t e = cudaSuccess;
    long long t0 = now_ns();
    for (long i = 0; i < n; i++)
        e = cudaStreamQuery(0);
    long long t1 = now_ns();
    sink = (int)e;
    return (double)(t1 - t0) / n;
}

static double get_last_error(long n)
{
    cudaError_t e = cudaSuccess;
    long long t0 = now_ns();
    for (long i = 0; i < n; i++)
        e = cudaGetLastError();
    long long t1 = now_ns();
    sink = (int)e;
    return (double)(t1 - t0) / n;
}

static void *host_buf, *dev_buf;

/* Bursts short enough never to fill the launch queue; the synchronize between them
 * is left out of the time, as the Python rows leave it out. */
static double memcpy_bursts(long burst, long bursts)
{
    long long total = 0;
    for (long b = 0; b < bursts; b++) {
        long long t0 = now_ns();
        for (long i = 0; i < burst; i++)
            cudaMemcpyAsync(dev_buf, host_buf, 4, cudaMemcpyHostToDevice, 0);
        total += now_ns() - t0;
        cudaDeviceSynchronize();
    }
    return (double)total / (burst * bursts);
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: c_calls CALLS REPEATS BURST BURSTS NAME...\n");
        return 2;
    }
    long calls = atol(argv[1]);
    int repeats = atoi(argv[2]);
    long burst = atol(argv[3]), bursts = atol(argv[4]);
    /* As the Python side does before its rows: with no context yet, the runtime takes
     * a slower path on every call (cudaGetDevice about 25x slower on an H200). Where
     * there is no GPU this fails once and changes nothing. */
    cudaSetDevice(0);
    cudaFree(0);
    cudaGetLastError();
    for (int a = 5; a < argc; a++) {
        const char *name = argv[a];
        int status;
        double (*timed)(long) = NULL;
        int is_memcpy = 0;
        if (!strcmp(name, "cudaGetDevice")) {
            int dev;
            status = cudaGetDevice(&dev);
            timed = get_device;
        } else if (!strcmp(name, "cudaStreamQuery")) {
            status = cudaStreamQuery(0);
            timed = stream_query;
        } else if (!strcmp(name, "cudaGetLastError")) {
            status = cudaGetLastError();
            timed = get_last_error;
        } else if (!strcmp(name, "cudaMemcpyAsync")) {
            status = cudaMallocHost(&host_buf, 4);
            if (status == cudaSuccess)
                status = cudaMalloc(&dev_buf, 4);
            if (status == cudaSuccess)
                status = cudaMemcpyAsync(dev_buf, host_buf, 4, cudaMemcpyHostToDevice, 0);
            cudaDeviceSynchronize();
            is_memcpy = 1;
        } else {
            fprintf(stderr, "c_calls: unknown call %s\n", name);
            return 2;
        }
        printf("%s %d", name, status);
        if (is_memcpy && status != cudaSuccess) {
            printf("\n");
            continue;
        }
        if (is_memcpy)
            memcpy_bursts(burst, 1); /* warm-up */
        else
            timed(calls);
        for (int r = 0; r < repeats; r++)
            printf(" %.3f", is_memcpy ? memcpy_bursts(burst, bursts) : timed(calls));
        printf("\n");
        fflush(stdout);
    }
    return 0;
}
