/* static inline helpers: the ones whose body builds a record from its parameters are
   bound (RecordBuilder), the others are left out with a line in the log. */
#define CUDART_VERSION 12050

struct point { unsigned long x; float y; void *p; };
typedef struct point point_t;

/* Builds a point. */
static __inline__ struct point make_point(unsigned long x, float y, void *p)
{
    struct point r;
    r.p = p;
    r.x = x;
    r.y = y;
    return r;
}

/* Through a typedef, fields in another order than declared. */
static __inline__ point_t make_point_t(void *p, unsigned long a, float b)
{
    point_t t;
    t.y = b;
    t.p = p;
    t.x = a;
    return t;
}

/* Not a builder: arithmetic on a parameter. */
static __inline__ struct point scaled(unsigned long x, float y)
{
    struct point r;
    r.x = x * 2;
    r.y = y;
    r.p = 0;
    return r;
}

/* Not a builder: a field left unset. */
static __inline__ struct point partial(unsigned long x, float y)
{
    struct point r;
    r.x = x;
    r.y = y;
    return r;
}

/* Not a builder: a parameter of another type than its field (an implicit conversion). */
static __inline__ struct point converted(int x, float y, void *p)
{
    struct point r;
    r.x = x;
    r.y = y;
    r.p = p;
    return r;
}

/* Not a builder: returns a scalar. */
static __inline__ int twice(int v) { return 2 * v; }
