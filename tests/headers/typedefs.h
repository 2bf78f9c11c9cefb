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

/* A macro naming a type, as cuda_runtime_api.h does for renamed types. */
#define A_alias other_name

struct uses_typedefs {
    A a;
    other_name b;
    anon_t c;
    cudaStream_t stream;
    size_t n;
};
