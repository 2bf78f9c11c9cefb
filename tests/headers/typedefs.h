/* Typedefs: scalars, chains, records, anonymous records, opaque handles, size_t. */
#define CUDART_VERSION 12050

#include <stddef.h>

typedef int my_int;
typedef my_int my_int2;
typedef unsigned long long my_u64;

struct A {
    my_int2 value;
    size_t length;
};
typedef struct A A;
typedef struct A other_name;

typedef struct {
    int x;
    my_u64 y;
} anon_t;

typedef struct CUstream_st *cudaStream_t;
/* The driver's name for the same struct (cuda.h): one handle kind with cudaStream_t. */
typedef struct CUstream_st *CUstream;

/* A const handle and its twin: the const one accepts the other, as C converts T to const T. */
struct cudaArray;
typedef struct cudaArray *cudaArray_t;
typedef const struct cudaArray *cudaArray_const_t;

/* A macro naming a type, as cuda_runtime_api.h does for renamed types. */
#define A_alias other_name

struct uses_typedefs {
    A a;
    other_name b;
    anon_t c;
    cudaStream_t stream;
    cudaArray_const_t array;
    size_t n;
};
