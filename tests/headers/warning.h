/* A header with only a warning: the generator stops on it too. */
#define CUDART_VERSION 12050
#warning hello
int fine(int x);
