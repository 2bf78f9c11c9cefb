/* A header with only a warning: the generator stops on it too. */
#define CUDART_VERSION 12050
#warning hello
int fine(int x);

/* The generator stops on any warning, not only on errors. */
// expect-error: warning.h:3:
// expect-error: warning
// expect-error: hello
