/* Enums: tagged, typedef'd anonymous, negative values, a value past INT_MAX, aliases. */
#define CUDART_VERSION 12050

enum color {
    colorRed = 0,
    colorGreen = 1,
    colorBlue = 2
};

typedef enum {
    modeDefault = 0,
    modeFast = 4,
    modeSafe = 8
} mode_t_;

enum signedness {
    signedMinusOne = -1,
    signedZero = 0,
    signedMin = -2147483647 - 1
};

enum wide {
    wideLow = 1,
    wideHigh = 0x80000000
};

enum aliased {
    aliasedFirst = 3,
    aliasedSecond = 7,
    aliasedOld = 3,
    aliasedMax = aliasedSecond
};

enum {
    looseFirst = 5,
    looseSecond = 6
};

struct uses_enums {
    enum color c;
    mode_t_ m;
    enum signedness s;
    enum wide w;
};
