/* Scalars of every size, padding between fields, tail padding. */
#define CUDART_VERSION 12050

struct scalars {
    char c;
    signed char sc;
    unsigned char uc;
    short s;
    unsigned short us;
    int i;
    unsigned int ui;
    long l;
    unsigned long ul;
    long long ll;
    unsigned long long ull;
    float f;
    double d;
    _Bool b;
};

struct padded {
    char a;      /* 3 bytes of padding follow */
    int b;
    char c;      /* 7 bytes of padding follow */
    double d;
    short e;     /* 6 bytes of tail padding */
};

struct tail {
    long long big;
    char small;  /* 7 bytes of tail padding */
};
