/* 1-D and 2-D arrays, char arrays. */
#define CUDART_VERSION 12050

struct arrays {
    int one[3];
    float two[2][3];
    char name[17];
    unsigned char bytes[16];
    double after;
    char reserved[3];
};
