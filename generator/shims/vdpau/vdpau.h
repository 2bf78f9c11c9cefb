/* Shim of <vdpau/vdpau.h>: only the types cuda_vdpau_interop.h names (see ../README.md). */
#ifndef _VDPAU_H
#define _VDPAU_H

#include <stdint.h>

/* VDPAU API (vdpau.h of libvdpau, the specification's reference header): every object
   handle is a uint32_t. */
typedef uint32_t VdpDevice;
typedef uint32_t VdpVideoSurface;
typedef uint32_t VdpOutputSurface;
/* VdpFuncId: uint32_t, the id VdpGetProcAddress looks a function up by. */
typedef uint32_t VdpFuncId;
/* VdpStatus is an enum whose values start at VDP_STATUS_OK = 0 and are all
   non-negative, so C gives it unsigned int; only its first value is spelled here. */
typedef enum {
    VDP_STATUS_OK = 0
} VdpStatus;
/* typedef VdpStatus VdpGetProcAddress(VdpDevice device, VdpFuncId function_id,
   void **function_pointer): a function type, passed to CUDA as a pointer. */
typedef VdpStatus VdpGetProcAddress(VdpDevice device, VdpFuncId function_id,
                                    void **function_pointer);

#endif
