/* Shim of <GL/gl.h>: only the types cuda_gl_interop.h names (see ../README.md). */
#ifndef __gl_h_
#define __gl_h_

/* OpenGL 4.6 Core Profile specification, table 2.2 "GL data types": GLenum and GLuint
   are 32-bit unsigned integers; the Khronos reference gl.h spells both unsigned int. */
typedef unsigned int GLenum;
typedef unsigned int GLuint;

#endif
