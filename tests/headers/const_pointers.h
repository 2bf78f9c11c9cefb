/* Const at each level of a pointer to pointers, as cudaMemcpyBatchAsync declares them. */
#define CUDART_VERSION 12050

int copy_batch(void *const *dsts, const void *const *srcs, const char **names);
