/* Unions of differently sized members, and one with an over-aligned member. */
#define CUDART_VERSION 12050

union mixed {
    char c;
    int i;
    double d;
    char bytes[13];
};

struct __attribute__((aligned(16))) vec4 {
    float x, y, z, w;
};

union with_vec {
    int i;
    struct vec4 v;
};

struct holds_union {
    char c;
    union with_vec u;
};
