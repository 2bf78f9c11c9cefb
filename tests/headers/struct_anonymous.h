/* Anonymous union and struct members: their fields read as the parent's. */
#define CUDART_VERSION 12050

struct inner {
    int a;
    float b;
};

struct with_anonymous_union {
    int kind;
    union {
        long long pad[4];
        struct inner k;
    };
    int trailer;
};

struct with_anonymous_struct {
    char head;
    struct {
        short first;
        double second;
    };
    char tail;
};
