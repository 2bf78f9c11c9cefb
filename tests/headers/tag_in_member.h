/* A struct tag first named inside a member declaration: C declares it at file scope. */
#define CUDART_VERSION 12050

struct user {
    struct never_declared *p;
    int n;
};

// no-expectation: test_tag_first_named_in_member holds it
