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
