/* Const at each level of a pointer to pointers, as cudaMemcpyBatchAsync declares them. */
#define CUDART_VERSION 12050

int copy_batch(void *const *dsts, const void *const *srcs, const char **names);

// no-expectation: test_prototype_comments_put_const_where_c_does holds it
