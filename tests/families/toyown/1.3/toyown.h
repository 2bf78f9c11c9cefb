/*
 * The toyown library's header, release 1.3 (tests/families/test_toyown_family.py): 1.2's
 * (../1.2/toyown.h) with toyownMultiply added and toyownRecord's layout changed (its
 * weight a double, a flags member after it).
 */
#ifndef TOYOWN_H
#define TOYOWN_H

#include <cuda_runtime_api.h>

/* Parsed with a pinned CUDA version's headers, which define CUDART_VERSION. */
#if !defined(CUDART_VERSION) || CUDART_VERSION < 12000
#error "toyown.h needs the CUDA 12 runtime headers"
#endif

#define TOYOWN_MAJOR 1
#define TOYOWN_MINOR 3

/**
 * Status codes of every toyown function.
 */
typedef enum toyownStatus_enum {
    TOYOWN_SUCCESS = 0,             /**< No error. */
    TOYOWN_ERROR_INVALID_VALUE = 1, /**< An argument is out of range. */
    TOYOWN_ERROR_OVERFLOW = 2       /**< The result does not fit its type. */
} toyownStatus;

/**
 * A record the library fills.
 */
typedef struct toyownRecord_st {
    int id;
    double weight;
    unsigned short flags;
} toyownRecord;

/**
 * \brief Returns the library's version
 *
 * \param version - Returned version (major * 10000 + minor * 100 + patch)
 *
 * \return ::TOYOWN_SUCCESS, ::TOYOWN_ERROR_INVALID_VALUE
 */
toyownStatus toyownGetVersion(int *version);

/**
 * \brief Adds two integers
 *
 * \param a   - First addend
 * \param b   - Second addend
 * \param sum - Returned sum
 *
 * \return ::TOYOWN_SUCCESS, ::TOYOWN_ERROR_INVALID_VALUE, ::TOYOWN_ERROR_OVERFLOW
 */
toyownStatus toyownAdd(int a, int b, int *sum);

/**
 * \brief Multiplies two unsigned integers
 *
 * \param a       - First factor
 * \param b       - Second factor
 * \param product - Returned product
 *
 * \return ::TOYOWN_SUCCESS, ::TOYOWN_ERROR_INVALID_VALUE, ::TOYOWN_ERROR_OVERFLOW
 */
toyownStatus toyownMultiply(unsigned short a, unsigned short b, unsigned short *product);

/**
 * \brief Fills a record
 *
 * \param record - Returned record
 * \param id     - Its id
 *
 * \return ::TOYOWN_SUCCESS, ::TOYOWN_ERROR_INVALID_VALUE
 */
toyownStatus toyownFill(toyownRecord *record, int id);

/**
 * \brief Returns the description of a status code
 *
 * \param status - Status code
 *
 * \return the description, a static string
 */
const char *toyownGetErrorString(toyownStatus status);

#endif
