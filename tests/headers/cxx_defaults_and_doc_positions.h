/* C++ default arguments of a declaration's `#if defined(__cplusplus)` twin, and
 * \param names that differ from the prototype's. */
#define CUDART_VERSION 12050
#define FLAG_GLOBAL 1

/**
 * \brief Allocates.
 *
 * \param ptr   - Returned pointer
 * \param size  - Bytes
 * \param flags - Flags
 */
#if defined(__cplusplus)
extern int allocate(void **ptr, unsigned long size, unsigned int flags = FLAG_GLOBAL);
#else
extern int allocate(void **ptr, unsigned long size, unsigned int flags);
#endif

/**
 * \brief Not the same parameter list: no default.
 *
 * \param ptr   - Pointer
 * \param flags - Flags
 */
#if defined(__cplusplus)
extern int other_list(const void *ptr, unsigned int flags = 4);
#else
extern int other_list(void *ptr, unsigned int flags);
#endif

/**
 * \brief Exports.
 *
 * \param[out] handle_out - Where the handle goes
 * \param pool            - The pool
 */
extern int export_handle(void *shareable, int pool);

// A record whose C++-only constructor defaults its members (vector_types.h's dim3).
struct grid3
{
    unsigned int x, y, z;
#if defined(__cplusplus)
    grid3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 7u) : x(vx), y(vy), z(vz) {}
    grid3(long v) : x(v), y(v), z(v) {}
#endif
};

// Not every member defaulted: no defaults.
struct partial
{
    int a, b;
#if defined(__cplusplus)
    partial(int va = 1) : a(va), b(0) {}
#endif
};
