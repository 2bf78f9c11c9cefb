/* A header clang rejects: an undeclared type. */
#define CUDART_VERSION 12050

struct ok {
    int a;
};

int broken(undeclared_t x);

// expect-error: diagnostics.h:8:
// expect-error: error
// expect-error: unknown type name 'undeclared_t'
