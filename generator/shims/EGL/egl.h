/* Shim of "EGL/egl.h": only the types cuda_egl_interop.h names (see ../README.md). */
#ifndef __egl_h_
#define __egl_h_

#include <stdint.h>

/* EGL 1.5 specification and the Khronos eglplatform.h: EGLint is khronos_int32_t,
   a 32-bit signed integer (int32_t). */
typedef int32_t EGLint;

#endif
