/* A struct held by value, a self-referential pointer, named fields of unnamed types. */
#define CUDART_VERSION 12050

struct point {
    int x;
    int y;
};

struct node {
    struct node *next;
    struct point where;
    char tag;
};

struct handle_desc {
    int type;
    union {
        int fd;
        struct {
            void *handle;
            const void *name;
        } win32;
        const void *object;
    } handle;
    unsigned long long size;
    struct {
        short lo;
        short hi;
    } range;
};
