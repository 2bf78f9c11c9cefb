/*
 * A toy C library for tests/families/test_toy_family.py: a header family that cudart
 * generates, judges against gcc, loads and calls through its descriptor (toy.toml
 * beside this folder) alone. Its docs are written as NVIDIA's headers write theirs.
 */
#ifndef TOY_H
#define TOY_H

#define TOY_NAME_LENGTH 12
#define TOY_VERSION_MAJOR 12

/**
 * Status codes of every toy function.
 */
typedef enum toyStatus_enum {
    TOY_SUCCESS = 0,             /**< No error. */
    TOY_ERROR_INVALID_VALUE = 1, /**< An argument is out of range. */
    TOY_ERROR_OVERFLOW = 2       /**< The result does not fit its type. */
} toyStatus;

/**
 * Rounding modes of ::toyScale.
 */
typedef enum toyRounding_enum {
    TOY_ROUND_DOWN = 0,
    TOY_ROUND_UP = 1
} toyRounding;

/**
 * A record the library fills: a char, then a double (padding between), then a name.
 */
typedef struct toyPair_st {
    char tag;
    double value;
    char name[TOY_NAME_LENGTH];
    unsigned short count;
} toyPair;

/**
 * \brief Returns the library's version
 *
 * \param version - Returned version (major * 1000 + minor * 10)
 *
 * \return ::TOY_SUCCESS, ::TOY_ERROR_INVALID_VALUE
 */
toyStatus toyGetVersion(int *version);

/**
 * \brief Adds two integers
 *
 * \param a   - First addend
 * \param b   - Second addend
 * \param sum - Returned sum
 *
 * \return ::TOY_SUCCESS, ::TOY_ERROR_INVALID_VALUE, ::TOY_ERROR_OVERFLOW
 */
toyStatus toyAdd(int a, int b, int *sum);

/**
 * \brief Scales an unsigned integer
 *
 * \param value    - Value to scale
 * \param factor   - Factor
 * \param rounding - Rounding mode
 * \param scaled   - Returned value * factor, rounded
 *
 * \return ::TOY_SUCCESS, ::TOY_ERROR_INVALID_VALUE, ::TOY_ERROR_OVERFLOW
 */
toyStatus toyScale(unsigned short value, double factor, toyRounding rounding, unsigned short *scaled);

/**
 * \brief Fills a pair
 *
 * \param pair  - Returned pair
 * \param tag   - Its tag
 * \param value - Its value
 *
 * \return ::TOY_SUCCESS, ::TOY_ERROR_INVALID_VALUE
 */
toyStatus toyMakePair(toyPair *pair, char tag, double value);

/**
 * \brief Returns the description of a status code
 *
 * \param status - Status code
 *
 * \return the description, a static string
 */
const char *toyGetErrorString(toyStatus status);

#endif
