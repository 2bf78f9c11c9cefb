/* Unions and typedef'd anonymous structs in prototypes. */
#define CUDART_VERSION 12050

union U {
    int a;
    float b;
};

typedef struct {
    int q;
} anon_t;

int takes_union(union U *u);
int takes_anon(anon_t *a);

// no-expectation: test_prototype_comments_spell_records_as_c_does holds it
