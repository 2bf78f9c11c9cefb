/* Object-like integer macros, and macros that must not become constants. */
#define CUDART_VERSION 12050

struct S_st;

#define HEX_VALUE 0x1F
#define NEGATIVE_ONE ((int)-1)
#define SHIFTED ((1 << 4) | 2)
#define REFERS_TO_OTHER (HEX_VALUE + 1)
#define ALL_ONES 0xFFFFFFFFFFFFFFFFull
#define UNSIGNED_SUFFIX 4000000000u
#define CHAR_CONSTANT 'A'
#define POINTER_MACRO ((struct S_st *)0x2)

#define FUNCTION_LIKE(x) ((x) + 1)
#define EMPTY_MACRO
#define STRING_MACRO "not a number"
#define _PRIVATE_MACRO 5
#define TYPE_KEYWORD unsigned int
#define FLOAT_MACRO 1.5f
