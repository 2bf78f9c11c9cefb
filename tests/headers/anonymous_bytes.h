/* A byte array inside an anonymous union (cuda.h 13.3+'s CUgraphNodeParams: `char
   asBytes[232]` beside the node kinds' parameters): it reads all N bytes, reached
   through the parent as C reaches it and through the member. */
#define CUDART_VERSION 12050

struct node_params {
    int type;
    union {
        long long reserved1[2];
        char asBytes[16];
        char name[16];
    };
    long long reserved2;
};
