/* Doc comments on records, fields, enums and enumerators: kept in the class docstrings. */
#define CUDART_VERSION 12050

/**
 * Channel kinds, as the header documents them.
 */
enum kind {
    kindNone = 0,     /**< No channel */
    /** Signed channel; a second sentence. */
    kindSigned = 1,
    kindUnsigned = 2, /**< \deprecated Use ::kindNone */
    kindBare = 3
};

/**
 * A documented struct,
 * over two lines.
 */
struct documented {
    int width;          /**< Width in \p elements */
    /** Height "in rows" */
    int height;
    enum kind k;        /**< Which ::kind */
    union {
        float f;        /**< As a float */
        int i;
    };
    int bare;
};

struct undocumented {
    char c;
};
