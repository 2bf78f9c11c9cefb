/* The toy library's implementation (tests/families/test_toy_family.py builds it). */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "toy.h"

toyStatus toyGetVersion(int *version)
{
    if (!version)
        return TOY_ERROR_INVALID_VALUE;
    *version = TOY_VERSION;
    return TOY_SUCCESS;
}

toyStatus toyAdd(int a, int b, int *sum)
{
    if (!sum)
        return TOY_ERROR_INVALID_VALUE;
    if ((b > 0 && a > INT_MAX - b) || (b < 0 && a < INT_MIN - b))
        return TOY_ERROR_OVERFLOW;
    *sum = a + b;
    return TOY_SUCCESS;
}

toyStatus toyScale(unsigned short value, double factor, toyRounding rounding, unsigned short *scaled)
{
    double result = value * factor;
    if (!scaled || (rounding != TOY_ROUND_DOWN && rounding != TOY_ROUND_UP))
        return TOY_ERROR_INVALID_VALUE;
    result = rounding == TOY_ROUND_UP ? ceil(result) : floor(result);
    if (result < 0 || result > USHRT_MAX)
        return TOY_ERROR_OVERFLOW;
    *scaled = (unsigned short)result;
    return TOY_SUCCESS;
}

toyStatus toyMakePair(toyPair *pair, char tag, double value)
{
    if (!pair)
        return TOY_ERROR_INVALID_VALUE;
    memset(pair, 0, sizeof *pair);
    pair->tag = tag;
    pair->value = value;
    strcpy(pair->name, "toy pair");
    pair->count = 7;
    return TOY_SUCCESS;
}

const char *toyGetErrorString(toyStatus status)
{
    switch (status) {
    case TOY_SUCCESS: return "no error";
    case TOY_ERROR_INVALID_VALUE: return "an argument is out of range";
    case TOY_ERROR_OVERFLOW: return "the result does not fit its type";
    }
    return "unknown status";
}
