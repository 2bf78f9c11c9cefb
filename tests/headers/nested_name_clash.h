/* An unnamed field type whose synthesized name (parent_field) is also a real tag. */
#define CUDART_VERSION 12050

struct outer_inner {
    char only;
};

struct outer {
    struct {
        double y;
        long long z;
    } inner;
};

// no-expectation: test_nested_name_clash holds it
