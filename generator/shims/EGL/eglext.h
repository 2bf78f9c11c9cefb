/* Shim of "EGL/eglext.h": only the types cuda_egl_interop.h names (see ../README.md). */
#ifndef __eglext_h_
#define __eglext_h_

#include "EGL/egl.h"

/* EGL_KHR_image_base: typedef void *EGLImageKHR (Khronos eglext.h). */
typedef void *EGLImageKHR;
/* EGL_KHR_stream: typedef void *EGLStreamKHR (Khronos eglext.h). */
typedef void *EGLStreamKHR;
/* EGL_KHR_reusable_sync / EGL_KHR_fence_sync: typedef void *EGLSyncKHR (Khronos eglext.h). */
typedef void *EGLSyncKHR;

#endif
