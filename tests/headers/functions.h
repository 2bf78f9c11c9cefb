/* Function declarations of every parameter kind, deprecation, renaming macros. */
#define CUDART_VERSION 12050

typedef struct CUstream_st *cudaStream_t;

enum status {
    statusOk = 0,
    statusBad = 1
};

struct P {
    int major;
    int minor;
};

struct dim {
    unsigned int x, y, z;
};

int scalars(int a, unsigned long long b, double c);
/**
 * \brief Copies and counts
 *
 * \param dst   - Destination
 * \param src   - Source
 * \param count - Returned number of items
 *
 * \return
 * ::statusOk,
 * ::statusBad
 */
int pointers(void *dst, const void *src, int *count);
const char *describe(enum status s);
#define __dv(v)
enum status launch(struct dim grid, cudaStream_t stream __dv(0));
void no_params(void);
typedef void (*hostfn_t)(void *userData);
int add_callback(hostfn_t fn, void *userData);
int log_message(int level, const char *format, ...);
int deprecated_fn(int x) __attribute__((deprecated));

/* As cuda_runtime_api.h does it: C built with -DCUDA_API_PER_THREAD_DEFAULT_STREAM
   calls per-thread symbols, a renamed function's included. */
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define __PTSZ(api) api ## _ptsz
#define scalars __PTSZ(scalars)
#else
#define __PTSZ(api) api
#endif

#define getProps __PTSZ(getProps_v2)
int getProps(struct P *p);

static inline int inline_helper(int x) { return x + 1; }
