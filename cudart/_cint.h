/* A Python int as a C integer: the one range rule of the compiled backend's integer
 * parameters (cudart/_fastcall.h) and of the C launcher's integer kernel arguments
 * (cudart/kernels/_fastlaunch.c). Include after Python.h.
 *
 * A value is taken as 64 bits of two's complement where low <= value <= high; written
 * as its low bytes (little-endian), that is the C integer of any narrower size whose
 * range [low, high] is, as struct and ctypes write it.
 */
#ifndef CUDART_CINT_H
#define CUDART_CINT_H

#include <limits.h>

/* The range of a C integer of `bits` bits (8, 16, 32 or 64). */
static inline void cudart_cint_range(int is_signed, int bits, long long *low,
                                     unsigned long long *high)
{
    if (is_signed) {
        *low = bits == 64 ? LLONG_MIN : -(1LL << (bits - 1));
        *high = bits == 64 ? (unsigned long long)LLONG_MAX : (1ULL << (bits - 1)) - 1;
    } else {
        *low = 0;
        *high = bits == 64 ? ULLONG_MAX : (1ULL << bits) - 1;
    }
}

/* `n`, an int (a subclass included), within [low, high]: 0 with *out set; 1 where it is
 * outside (no exception set); -1 with the exception set where `n` is no int. */
static inline int cudart_cint(PyObject *n, long long low, unsigned long long high,
                              unsigned long long *out)
{
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(n, &overflow);
    if (overflow == 0) {
        if (x == -1 && PyErr_Occurred())
            return -1;
        if (x < 0 ? x < low : (unsigned long long)x > high)
            return 1;
        *out = (unsigned long long)x;
        return 0;
    }
    if (overflow < 0 || high <= (unsigned long long)LLONG_MAX)
        return 1;
    unsigned long long u = PyLong_AsUnsignedLongLong(n);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) { /* 2**64 or more */
        PyErr_Clear();
        return 1;
    }
    if (u > high)
        return 1;
    *out = u;
    return 0;
}

#endif /* CUDART_CINT_H */
