/* The C baseline, in the process that times cudart. Built at bench time with gcc as a
 * shared library and loaded with ctypes; every loop is handed the very function
 * pointer (the libcudart symbol cudart binds, from the library this process mapped)
 * and the very arguments the Python implementations pass, and times itself with
 * clock_gettime: one foreign call per round, so nothing of Python is in the figure.
 *
 * No CUDA header is needed: every argument is an int, a size or a pointer, and every
 * function returns cudaError_t (an int). Each loop returns the elapsed nanoseconds of
 * its timed part; the status of the last call goes to *status.
 *
 * Calls: n calls in a loop. Copies, event records and launches: `bursts` bursts of
 * `burst` calls, `sync` (cudaDeviceSynchronize) between bursts and not timed, as the
 * Python rows do.
 */
#include <stddef.h>
#include <time.h>

typedef int (*get_device_fn)(int *);
typedef int (*handle_fn)(void *);
typedef int (*no_arg_fn)(void);
typedef int (*event_record_fn)(void *, void *);
typedef int (*memcpy_async_fn)(void *, const void *, size_t, int, void *);
typedef int (*launch_ex_fn)(const void *, const void *, void **);

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Keeps the results observable so no call's effect can be dropped. */
static volatile int sink;

double loop_get_device(void *fn, long n, int *status)
{
    get_device_fn f = (get_device_fn)fn;
    int dev = 0, e = 0;
    long long t0 = now_ns();
    for (long i = 0; i < n; i++)
        e = f(&dev);
    long long t1 = now_ns();
    sink = e + dev;
    *status = e;
    return (double)(t1 - t0);
}

/* cudaStreamQuery(stream) and any other call of one handle. */
double loop_handle(void *fn, void *handle, long n, int *status)
{
    handle_fn f = (handle_fn)fn;
    int e = 0;
    long long t0 = now_ns();
    for (long i = 0; i < n; i++)
        e = f(handle);
    long long t1 = now_ns();
    sink = e;
    *status = e;
    return (double)(t1 - t0);
}

double loop_no_arg(void *fn, long n, int *status)
{
    no_arg_fn f = (no_arg_fn)fn;
    int e = 0;
    long long t0 = now_ns();
    for (long i = 0; i < n; i++)
        e = f();
    long long t1 = now_ns();
    sink = e;
    *status = e;
    return (double)(t1 - t0);
}

double loop_event_record(void *fn, void *event, void *stream, long burst, long bursts, void *sync,
                         int *status)
{
    event_record_fn f = (event_record_fn)fn;
    no_arg_fn s = (no_arg_fn)sync;
    long long total = 0;
    int e = 0;
    for (long b = 0; b < bursts; b++) {
        long long t0 = now_ns();
        for (long i = 0; i < burst; i++)
            e = f(event, stream);
        total += now_ns() - t0;
        s();
    }
    sink = e;
    *status = e;
    return (double)total;
}

double loop_memcpy_async(void *fn, void *dst, const void *src, size_t count, int kind,
                         void *stream, long burst, long bursts, void *sync, int *status)
{
    memcpy_async_fn f = (memcpy_async_fn)fn;
    no_arg_fn s = (no_arg_fn)sync;
    long long total = 0;
    int e = 0;
    for (long b = 0; b < bursts; b++) {
        long long t0 = now_ns();
        for (long i = 0; i < burst; i++)
            e = f(dst, src, count, kind, stream);
        total += now_ns() - t0;
        s();
    }
    sink = e;
    *status = e;
    return (double)total;
}

/* cudaLaunchKernelExC(config, func, args) with Function.launch's own prebuilt config,
 * function handle and argument slots. */
double loop_launch(void *fn, const void *config, const void *func, void **argv, long burst,
                   long bursts, void *sync, int *status)
{
    launch_ex_fn f = (launch_ex_fn)fn;
    no_arg_fn s = (no_arg_fn)sync;
    long long total = 0;
    int e = 0;
    for (long b = 0; b < bursts; b++) {
        long long t0 = now_ns();
        for (long i = 0; i < burst; i++)
            e = f(config, func, argv);
        total += now_ns() - t0;
        s();
    }
    sink = e;
    *status = e;
    return (double)total;
}

/* As loop_launch with a new grid each launch: gridDim.x, the config's first field,
 * alternates between grid and grid + 1, as the Python launches of the row do. */
double loop_launch_grids(void *fn, void *config, const void *func, void **argv, unsigned grid,
                         long burst, long bursts, void *sync, int *status)
{
    launch_ex_fn f = (launch_ex_fn)fn;
    no_arg_fn s = (no_arg_fn)sync;
    volatile unsigned *grid_x = (volatile unsigned *)config;
    long long total = 0;
    int e = 0;
    for (long b = 0; b < bursts; b++) {
        long long t0 = now_ns();
        for (long i = 0; i < burst; i++) {
            *grid_x = grid + (unsigned)(i & 1);
            e = f(config, func, argv);
        }
        total += now_ns() - t0;
        s();
    }
    *grid_x = grid;
    sink = e;
    *status = e;
    return (double)total;
}

/* ---- The driver API (libcuda): the same loops over cuda.h's functions, handed the
 * libcuda symbols cudart.driver binds. Every CUresult is an int, every handle a pointer,
 * CUdevice an int. */

typedef int (*out_pointer_fn)(void **);
typedef int (*device_attribute_fn)(int *, int, int);
typedef int (*cu_launch_fn)(const void *, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, unsigned, void *, void **, void **);

/* cuCtxGetCurrent(&ctx) and any other call of one pointer out. */
double loop_out_pointer(void *fn, long n, int *status)
{
    out_pointer_fn f = (out_pointer_fn)fn;
    void *out = NULL;
    int e = 0;
    long long t0 = now_ns();
    for (long i = 0; i < n; i++)
        e = f(&out);
    long long t1 = now_ns();
    sink = e + (out != NULL);
    *status = e;
    return (double)(t1 - t0);
}

/* cuDeviceGetAttribute(&value, attrib, dev). */
double loop_device_attribute(void *fn, int attrib, int dev, long n, int *status)
{
    device_attribute_fn f = (device_attribute_fn)fn;
    int value = 0, e = 0;
    long long t0 = now_ns();
    for (long i = 0; i < n; i++)
        e = f(&value, attrib, dev);
    long long t1 = now_ns();
    sink = e + value;
    *status = e;
    return (double)(t1 - t0);
}

/* cuLaunchKernel(func, grid,1,1, block,1,1, 0, NULL, params, NULL) in bursts, `sync`
 * (cuCtxSynchronize) between them. */
double loop_cu_launch(void *fn, const void *func, unsigned grid, unsigned block, void **params,
                      long burst, long bursts, void *sync, int *status)
{
    cu_launch_fn f = (cu_launch_fn)fn;
    no_arg_fn s = (no_arg_fn)sync;
    long long total = 0;
    int e = 0;
    for (long b = 0; b < bursts; b++) {
        long long t0 = now_ns();
        for (long i = 0; i < burst; i++)
            e = f(func, grid, 1, 1, block, 1, 1, 0, NULL, params, NULL);
        total += now_ns() - t0;
        s();
    }
    sink = e;
    *status = e;
    return (double)total;
}

/* ---- The checked layer's rows (bench/checked_rows.py). */

typedef int (*malloc_async_fn)(void **, size_t, void *);
typedef int (*free_async_fn)(void *, void *);
typedef int (*create_fn)(void **);

/* cudaMallocAsync(&p, size, stream) then cudaFreeAsync(p, stream), `burst` pairs a burst. */
double loop_malloc_free_async(void *fm, void *ff, size_t size, void *stream, long burst,
                              long bursts, void *sync, int *status)
{
    malloc_async_fn m = (malloc_async_fn)fm;
    free_async_fn f = (free_async_fn)ff;
    no_arg_fn s = (no_arg_fn)sync;
    long long total = 0;
    int e = 0;
    for (long b = 0; b < bursts; b++) {
        long long t0 = now_ns();
        for (long i = 0; i < burst; i++) {
            void *p = NULL;
            e |= m(&p, size, stream);
            e |= f(p, stream);
        }
        total += now_ns() - t0;
        s();
    }
    sink = e;
    *status = e;
    return (double)total;
}

/* cudaStreamCreate(&s) then cudaStreamDestroy(s), n pairs. */
double loop_create_destroy(void *fc, void *fd, long n, int *status)
{
    create_fn c = (create_fn)fc;
    handle_fn d = (handle_fn)fd;
    int e = 0;
    long long t0 = now_ns();
    for (long i = 0; i < n; i++) {
        void *h = NULL;
        e |= c(&h);
        e |= d(h);
    }
    long long t1 = now_ns();
    sink = e;
    *status = e;
    return (double)(t1 - t0);
}

/* What the compiled backend pays per call that releases the GIL: PyEval_SaveThread then
 * PyEval_RestoreThread, n times (their addresses handed in; called through
 * ctypes.PyDLL, with the GIL held). */
typedef void *(*save_fn)(void);
typedef void (*restore_fn)(void *);

double loop_gil(void *fs, void *fr, long n, int *status)
{
    save_fn save = (save_fn)fs;
    restore_fn restore = (restore_fn)fr;
    long long t0 = now_ns();
    for (long i = 0; i < n; i++)
        restore(save());
    long long t1 = now_ns();
    *status = 0;
    return (double)(t1 - t0);
}
