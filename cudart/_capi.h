/* The one place that picks the C API every compiled module of cudart builds on (the
 * generated/_fast_<major>.c and cudart/kernels/_fastlaunch.c include this instead of
 * Python.h): the limited API of 3.11 where the interpreter has a GIL, so that one build
 * per CUDA version serves every later Python (an .abi3.so), and the full API where it has
 * none (a free-threaded build, Py_GIL_DISABLED in its pyconfig.h), which the limited API
 * does not support: a .cpython-313t-*.so, one per interpreter (issue 25).
 */
#ifndef CUDART_CAPI_H
#define CUDART_CAPI_H

#include <pyconfig.h>

#if !defined(Py_GIL_DISABLED) && !defined(Py_LIMITED_API)
#define Py_LIMITED_API 0x030B0000
#endif
#define PY_SSIZE_T_CLEAN
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#include <Python.h>
#pragma GCC diagnostic pop

#include "_cthreads.h"

#endif /* CUDART_CAPI_H */
