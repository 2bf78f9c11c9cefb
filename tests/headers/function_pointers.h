/* Function-pointer typedefs and fields. */
#define CUDART_VERSION 12050

typedef struct CUstream_st *cudaStream_t;

enum e {
    eZero = 0,
    eOne = 1
};

typedef void (*hostfn_t)(void *userData);
typedef void (*cb_t)(cudaStream_t, enum e, void *);
typedef int (*compute_t)(int a, const float *b);

struct callbacks {
    hostfn_t fn;
    void *userData;
    int (*raw)(int);
};
