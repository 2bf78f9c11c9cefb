/* The toyown library's implementation (tests/families/test_toyown_family.py builds it
 * against each release's header, -I <release>, and -DTOYOWN_VERSION=<its number>). */
#include <limits.h>
#include <string.h>

#include "toyown.h"

toyownStatus toyownGetVersion(int *version)
{
    if (!version)
        return TOYOWN_ERROR_INVALID_VALUE;
    *version = TOYOWN_VERSION;
    return TOYOWN_SUCCESS;
}

toyownStatus toyownAdd(int a, int b, int *sum)
{
    if (!sum)
        return TOYOWN_ERROR_INVALID_VALUE;
    if ((b > 0 && a > INT_MAX - b) || (b < 0 && a < INT_MIN - b))
        return TOYOWN_ERROR_OVERFLOW;
    *sum = a + b;
    return TOYOWN_SUCCESS;
}

toyownStatus toyownFill(toyownRecord *record, int id)
{
    if (!record)
        return TOYOWN_ERROR_INVALID_VALUE;
    memset(record, 0, sizeof *record);
    record->id = id;
    record->weight = id * 0.5;
#if TOYOWN_MINOR >= 3
    record->flags = 7;
#endif
    return TOYOWN_SUCCESS;
}

#if TOYOWN_MINOR >= 3
toyownStatus toyownMultiply(unsigned short a, unsigned short b, unsigned short *product)
{
    unsigned long result = (unsigned long)a * b;
    if (!product)
        return TOYOWN_ERROR_INVALID_VALUE;
    if (result > USHRT_MAX)
        return TOYOWN_ERROR_OVERFLOW;
    *product = (unsigned short)result;
    return TOYOWN_SUCCESS;
}
#endif

const char *toyownGetErrorString(toyownStatus status)
{
    switch (status) {
    case TOYOWN_SUCCESS: return "no error";
    case TOYOWN_ERROR_INVALID_VALUE: return "an argument is out of range";
    case TOYOWN_ERROR_OVERFLOW: return "the result does not fit its type";
    }
    return "unknown status";
}
