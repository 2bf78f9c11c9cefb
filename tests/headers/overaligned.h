/* Over-aligned records, as CUDA's vector types are (__align__(16)). */
#define CUDART_VERSION 12050

struct __attribute__((aligned(16))) float4 {
    float x, y, z, w;
};

struct __attribute__((aligned(16))) double2 {
    double x, y;
};

struct holds_float4 {
    int a;
    struct float4 v;
};

struct holds_array {
    char c;
    struct float4 arr[3];
    int after;
};

struct holds_double2 {
    int n;
    struct double2 d;
    char tail;
};

/* __align__(8) on two ints, as CUDA's int2: aligned by a trailing c_long * 0. */
struct __attribute__((aligned(8))) int2 {
    int x, y;
};

/* CUDA 13's __builtin_align__(32) types: aligned beyond any ctypes scalar. */
struct __attribute__((aligned(32))) double4_32a {
    double x, y, z, w;
};

/* 24 bytes of members, 32 in C: the trailing padding is explicit. */
struct __attribute__((aligned(32))) double3_32a {
    double x, y, z;
};

struct holds_32a {
    char c;
    struct double4_32a v;
    struct double3_32a arr[2];
    struct int2 i2;
};

/* C pads before `i` beyond what its type's alignment asks: the one place an
   explicit _pad member is still needed. */
struct aligned_member {
    char c;
    int i __attribute__((aligned(16)));
    char tail;
};
