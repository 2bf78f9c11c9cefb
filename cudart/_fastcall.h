/* The compiled backend's argument conversions, written once for every generated
 * generated/_fast_<major>.c (which includes this file before its functions).
 *
 * A generated function converts each Python argument into the C value its parameter
 * takes, with the checks C's own types allow for free (an integer's range, a buffer's
 * size against the record a typed pointer points to), then calls the function pointer
 * that cudart._backend resolved with dlsym in the libcudart the loader chose. A value
 * that cannot be converted raises ctypes.ArgumentError ("argument 2: OverflowError:
 * ..."), as the ctypes backend does, so the checked layer's handling is one for both.
 *
 * What a pointer parameter takes (cudart_pointer): None (NULL); an int in [0, 2**64);
 * bytes (its data, read-only as in ctypes); a ctypes pointer, c_void_p (our handle
 * classes), c_char_p or function pointer (the address it holds); a ctypes array or any
 * other object with the buffer protocol (its memory; at least a record's size where
 * generator/sizes.py says the pointer is to exactly one); ctypes.byref(x) (the address
 * it holds, cudart_find_byref_offset; where C takes one record, what is left of x from
 * there must hold it); objects with _as_parameter_ (resolved by ctypes itself, through
 * cudart._backend.address_of); objects with __index__, or with __int__ that are no
 * number (not floats, Decimals, Fractions). An integer parameter
 * takes what ctypes takes for its argtype (cudart_index); a record by value, an
 * instance of the raw module's class (cudart_by_value). Where a variant's spec marks
 * the parameter as storage (the checked layer's outputs), a ctypes object is always its
 * own memory: a cudaStream_t passed there is written to.
 *
 * One generated file serves every minor of a (family, major), each minor a view
 * (cudart_view below): what is per minor (the slots, the record classes, the checked
 * references) is the view's, reached through each function's `self`.
 *
 * Limited API (3.11) with a GIL: one build per CUDA major serves every later Python;
 * the full API on a free-threaded interpreter (_capi.h), where the shared state below
 * is published and read as _cthreads.h provides.
 */
#ifndef CUDART_FASTCALL_H
#define CUDART_FASTCALL_H

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "_cint.h"

/* The protocol's numbers (cudart/_fastproto.py, where each is explained): every
 * generated module asserts at compile time that they are the ones it was made for. */
#define CUDART_SLOT_UNBOUND 0
#define CUDART_SLOT_RECORD 1
#define CUDART_MAX_PARAMS 64

/* What a function's slot holds before it is bound (NULL: calling it is an error) and,
 * in a test build (CUDART_FAST_TEST_HOOKS), while the recorder stands in for C. */
#define CUDART_UNBOUND ((void *)CUDART_SLOT_UNBOUND)
#define CUDART_RECORD ((void *)CUDART_SLOT_RECORD)

static PyObject *cudart_ArgumentError;   /* ctypes.ArgumentError */
static PyObject *cudart_address_of;      /* cudart._backend.address_of */
static PyTypeObject *cudart_SimpleCData, *cudart_Pointer, *cudart_CFuncPtr;
static PyTypeObject *cudart_Structure, *cudart_Union, *cudart_Array, *cudart_CArgObject;
/* The pointer-valued simple types: their value, not their memory, is the address. */
static PyTypeObject *cudart_c_void_p, *cudart_c_char_p, *cudart_c_wchar_p;
/* The ctypes class of each C integer type, [signed][8, 16, 32, 64 bits], and c_bool:
 * a raw function's argtype for an integer parameter (c_int for int, c_ulong for
 * size_t), whose instances ctypes takes as themselves. */
static PyTypeObject *cudart_integer_classes[2][4], *cudart_c_bool, *cudart_c_double_class;
static const char *const cudart_integer_names[2][4] = {
    {"c_uint8", "c_uint16", "c_uint32", "c_uint64"},
    {"c_int8", "c_int16", "c_int32", "c_int64"},
};
/* A compiled checked function's C function (a vectorcall), and the test an enum's
 * value passes where it is one of the enum's members. */
typedef PyObject *(*cudart_vectorcall)(PyObject *, PyObject *const *, size_t, PyObject *);
typedef int (*cudart_member_test)(long long);

/* A compiled checked function of a view: its name, its C function, and its place in the
 * view's references and reports (the major's enumerator, cudart_checked_<name>). */
typedef struct {
    const char *name;
    cudart_vectorcall call;
    int index;
} cudart_checked_entry;

/* The end of a view's list of rows (cudart_view's functions and checked). */
#define CUDART_NO_ROW 0xFFFF

/* The checked layer's error classes kept per code, codes below this (_fastchecked.h). */
#define CUDART_ERROR_CACHE 1024

/* One minor of the generated file (templates/fast_module.c.j2 makes one per minor of the
 * major, each static): what differs between the minors of one major. Its module (made
 * once by the extension's view(), named cudart._fast_<ver>) is the module functions'
 * `self`, whose definition (PyModule_GetDef) is the view's first member; a variant's
 * `self` holds the view after its spec (cudart_view_of). Two views never share any of
 * it: each has its slots, classes, references, reports and error classes. */
typedef struct cudart_view {
    PyModuleDef def;                  /* first: the view module's definition */
    long cuda_version;                /* the module's CUDA_VERSION */
    const char *raw_module;           /* whose record classes the records are */
    PyMethodDef *function_table;      /* the major's functions, each text once */
    const unsigned short *functions;  /* exactly this minor's: rows of that table */
    void **slots;                     /* over the major's union of names: bind() fills */
    Py_ssize_t slot_count;
    const char *const *slot_names;    /* the union's names, sorted: the slots' order */
    PyTypeObject **classes;           /* records by value: the ctypes class, once seen */
    const cudart_checked_entry *checked_table; /* the major's compiled checked ones */
    const unsigned short *checked;    /* this minor's: rows of that table */
    PyObject **references;            /* each one's Python checked function */
    char *reports;                    /* whether it reports callbacks' failures */
    const char *const *handle_names;  /* the major's handle classes, by enumerator */
    const int *handle_list;           /* this minor's (-1 ends it) */
    PyTypeObject **handles;
    const char *const *enum_names;    /* the major's enum classes, by enumerator */
    const int *enum_list;             /* this minor's (-1 ends it) */
    PyTypeObject **enums;
    const cudart_member_test *members; /* each enum's membership test (this minor's) */
    PyObject *make_error, *error_lib;  /* the checked module's _error and _lib */
    PyObject *errors[CUDART_ERROR_CACHE];
    PyObject *module;                 /* made once, by view() */
#ifdef CUDART_FAST_TEST_HOOKS
    PyObject *recorded;               /* a list while recording, else NULL */
    void **saved_slots;               /* the bound functions, while recording */
#endif
} cudart_view;

/* The ints 0 to 256, held: a status (cudaSuccess above all) is boxed without a call.
 * They are the interpreter's own (every CPython keeps these few), so a result is the
 * object PyLong_From* would have returned. */
#define CUDART_SMALL_INTS 257
static PyObject *cudart_small_ints[CUDART_SMALL_INTS];

static int cudart_hold_small_ints(void)
{
    for (long i = 0; i < CUDART_SMALL_INTS; i++)
        if (!cudart_small_ints[i] && !(cudart_small_ints[i] = PyLong_FromLong(i)))
            return -1;
    return 0;
}

static inline PyObject *cudart_from_unsigned(unsigned long long v)
{
    if (v < CUDART_SMALL_INTS) {
        PyObject *n = cudart_small_ints[v];
        Py_INCREF(n);
        return n;
    }
    return PyLong_FromUnsignedLongLong(v);
}

static inline PyObject *cudart_from_signed(long long v)
{
    return v >= 0 ? cudart_from_unsigned((unsigned long long)v) : PyLong_FromLongLong(v);
}

static PyTypeObject *cudart_type_of(PyObject *module, const char *name)
{
    PyObject *t = PyObject_GetAttrString(module, name);
    if (t && !PyType_Check(t)) {
        PyErr_Format(PyExc_TypeError, "ctypes.%s is not a type", name);
        Py_CLEAR(t);
    }
    return (PyTypeObject *)t;
}

/* Where a ctypes.byref() object keeps the address it stands for: ctypes exposes no
 * accessor, and asking ctypes (cudart._backend.address_of) costs a foreign call, about
 * 2 us, on the most common raw argument of all. The offset is found, not assumed: at
 * import, byref() of a known buffer, with and without an offset, must show both
 * addresses at one pointer-aligned place within the object's first 64 bytes, or the
 * slow way serves. -1: not found. */
static Py_ssize_t cudart_byref_offset = -1;

static void cudart_find_byref_offset(PyObject *ctypes)
{
    PyObject *buffer = PyObject_CallMethod(ctypes, "create_string_buffer", "n", (Py_ssize_t)16);
    PyObject *plain = buffer ? PyObject_CallMethod(ctypes, "byref", "O", buffer) : NULL;
    PyObject *moved = plain ? PyObject_CallMethod(ctypes, "byref", "On", buffer, (Py_ssize_t)8)
                            : NULL;
    Py_buffer view;
    if (moved && PyObject_GetBuffer(buffer, &view, PyBUF_SIMPLE) == 0) {
        const char *a = (const char *)plain, *b = (const char *)moved;
        for (Py_ssize_t at = (Py_ssize_t)sizeof(void *); at + (Py_ssize_t)sizeof(void *) <= 64;
             at += (Py_ssize_t)sizeof(void *)) {
            void *pa, *pb;
            memcpy(&pa, a + at, sizeof pa);
            memcpy(&pb, b + at, sizeof pb);
            if (pa == view.buf && pb == (char *)view.buf + 8) {
                cudart_byref_offset = at;
                break;
            }
        }
        PyBuffer_Release(&view);
    }
    PyErr_Clear();
    Py_XDECREF(moved);
    Py_XDECREF(plain);
    Py_XDECREF(buffer);
}

/* Where a ctypes object keeps the pointer to its memory (CDataObject's b_ptr), found at
 * import as byref()'s address is (cudart_checked_find_memory), and held again by the
 * checked functions' install to every handle class they read: the buffer protocol
 * costs a c_void_p about 60 ns a read, this a load. The raw functions read a c_void_p
 * argument's value there too (cudart_pointer). -1: not found, the buffer protocol
 * serves. */
static Py_ssize_t cudart_memory_offset = -1;

/* Read once by each use (checked() may find it again meanwhile, on another thread). */
static inline Py_ssize_t cudart_memory_at(void)
{
    return CUDART_LOAD_RELAXED(cudart_memory_offset);
}

static inline void *cudart_memory_of(PyObject *o, Py_ssize_t at)
{
    char *memory;
    memcpy(&memory, (const char *)o + at, sizeof memory);
    return memory;
}

/* Whether `offset` is where objects of `cls` (a c_void_p class) keep their memory: for
 * two values, the pointer there is the buffer protocol's own and holds the value. */
static inline int cudart_memory_offset_holds(PyTypeObject *cls, Py_ssize_t offset)
{
    static const unsigned long long values[] = {0x1234567890ULL, 0xfedcba98ULL};
    for (int i = 0; i < 2; i++) {
        PyObject *number = PyLong_FromUnsignedLongLong(values[i]);
        PyObject *o = number ? PyObject_CallFunctionObjArgs((PyObject *)cls, number, NULL) : NULL;
        Py_XDECREF(number);
        Py_buffer view;
        int holds = o && PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) == 0;
        if (holds) {
            char *memory;
            void *value;
            memcpy(&memory, (const char *)o + offset, sizeof memory);
            memcpy(&value, view.buf, sizeof value);
            holds = memory == view.buf && (uintptr_t)value == values[i];
            PyBuffer_Release(&view);
        }
        Py_XDECREF(o);
        if (!holds) {
            PyErr_Clear();
            return 0;
        }
    }
    return 1;
}

/* Find cudart_memory_offset within a c_void_p's first 64 bytes, and hold it to every
 * handle class of `classes` (NULL-terminated; NULL: none), or leave it -1. */
static inline void cudart_checked_find_memory(PyTypeObject *c_void_p, PyTypeObject **const *classes)
{
    Py_ssize_t found = -1;
    for (Py_ssize_t at = (Py_ssize_t)sizeof(PyObject); at + (Py_ssize_t)sizeof(void *) <= 64;
         at += (Py_ssize_t)sizeof(void *)) {
        if (!cudart_memory_offset_holds(c_void_p, at))
            continue;
        int every = 1;
        for (Py_ssize_t i = 0; every && classes && classes[i]; i++)
            every = *classes[i] && cudart_memory_offset_holds(*classes[i], at);
        if (every)
            found = at;
        break;
    }
    /* One store of the answer: calls of other threads never see a transient -1. */
    CUDART_STORE_RELAXED(cudart_memory_offset, found);
}

static int cudart_init_support(void)
{
    PyObject *ctypes = PyImport_ImportModule("ctypes");
    PyObject *backend = ctypes ? PyImport_ImportModule("cudart._backend") : NULL;
    if (!backend) {
        Py_XDECREF(ctypes);
        return -1;
    }
    cudart_ArgumentError = PyObject_GetAttrString(ctypes, "ArgumentError");
    cudart_address_of = PyObject_GetAttrString(backend, "address_of");
    PyObject *arg_type = PyObject_GetAttrString(backend, "BYREF_TYPE");
    cudart_CArgObject = (PyTypeObject *)arg_type;
    cudart_SimpleCData = cudart_type_of(ctypes, "_SimpleCData");
    cudart_Pointer = cudart_type_of(ctypes, "_Pointer");
    cudart_CFuncPtr = cudart_type_of(ctypes, "_CFuncPtr");
    cudart_Structure = cudart_type_of(ctypes, "Structure");
    cudart_Union = cudart_type_of(ctypes, "Union");
    cudart_Array = cudart_type_of(ctypes, "Array");
    cudart_c_void_p = cudart_type_of(ctypes, "c_void_p");
    cudart_c_char_p = cudart_type_of(ctypes, "c_char_p");
    cudart_c_wchar_p = cudart_type_of(ctypes, "c_wchar_p");
    cudart_c_bool = cudart_type_of(ctypes, "c_bool");
    cudart_c_double_class = cudart_type_of(ctypes, "c_double");
    int integers = 1;
    for (int s = 0; s < 2; s++)
        for (int w = 0; w < 4; w++)
            integers &= (cudart_integer_classes[s][w] =
                             cudart_type_of(ctypes, cudart_integer_names[s][w])) != NULL;
    int small = cudart_hold_small_ints() == 0;
    cudart_find_byref_offset(ctypes);
    if (cudart_c_void_p)
        cudart_checked_find_memory(cudart_c_void_p, NULL);
    Py_DECREF(ctypes);
    Py_DECREF(backend);
    if (!cudart_ArgumentError || !cudart_address_of || !arg_type || !cudart_SimpleCData ||
        !cudart_Pointer || !cudart_CFuncPtr || !cudart_Structure || !cudart_Union ||
        !cudart_Array || !cudart_c_void_p || !cudart_c_char_p || !cudart_c_wchar_p ||
        !cudart_c_bool || !cudart_c_double_class || !integers || !small)
        return -1;
    return 0;
}

/* Replace the pending exception by ArgumentError("argument N: <type>: <message>"),
 * ctypes' own form. */
static void cudart_argument_failed(Py_ssize_t index)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *name = type ? PyObject_GetAttrString(type, "__name__") : NULL;
    PyObject *text = value ? PyObject_Str(value) : NULL;
    if (name && text)
        PyErr_Format(cudart_ArgumentError, "argument %zd: %U: %U", index + 1, name, text);
    else
        PyErr_Format(cudart_ArgumentError, "argument %zd: conversion failed", index + 1);
    Py_XDECREF(name);
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
}

static int cudart_fail(Py_ssize_t index, PyObject *exc, const char *message)
{
    PyErr_SetString(exc, message);
    cudart_argument_failed(index);
    return -1;
}

/* ---------------------------------------------------------------- integers */

/* The ctypes class an integer parameter of `bits` takes (what its argtype is). */
static PyTypeObject *cudart_integer_class(int is_signed, int bits)
{
    switch (bits) {
    case 1: return cudart_c_bool;
    case 8: return cudart_integer_classes[is_signed][0];
    case 16: return cudart_integer_classes[is_signed][1];
    case 32: return cudart_integer_classes[is_signed][2];
    default: return cudart_integer_classes[is_signed][3];
    }
}

/* An instance of an integer parameter's own ctypes class, read from its memory as
 * ctypes passes it: never through `.value`, which a subclass may define as anything
 * (itself, at worst: an unbounded recursion). */
static PyObject *cudart_scalar_value(PyObject *o, int is_signed, int bits)
{
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Py_ssize_t bytes = bits < 8 ? 1 : bits / 8;
    PyObject *r = NULL;
    union { int8_t b; int16_t h; int32_t i; int64_t q; uint8_t B; uint16_t H; uint32_t I;
            uint64_t Q; } v;
    if (view.len < bytes) {
        PyErr_Format(PyExc_TypeError, "a ctypes object of %zd bytes for a %d-bit integer",
                     view.len, bits);
    } else {
        memcpy(&v, view.buf, (size_t)bytes);
        switch (bytes * (is_signed ? -1 : 1)) {
        case -1: r = PyLong_FromLong(v.b); break;
        case -2: r = PyLong_FromLong(v.h); break;
        case -4: r = PyLong_FromLong(v.i); break;
        case -8: r = PyLong_FromLongLong(v.q); break;
        case 1: r = PyLong_FromLong(v.B); break;
        case 2: r = PyLong_FromLong(v.H); break;
        case 4: r = PyLong_FromUnsignedLong(v.I); break;
        default: r = PyLong_FromUnsignedLongLong(v.Q); break;
        }
    }
    PyBuffer_Release(&view);
    return r;
}

/* An int for a C integer, as ctypes takes one for the parameter's argtype: an int (bool
 * and IntEnum included), an object with __index__ (NumPy's integers), or an instance of
 * the argtype's own ctypes class (its memory). Any other ctypes object is refused, a
 * handle or c_void_p included (it has no __index__), and floats as ctypes refuses them;
 * a value outside [low, high] is an OverflowError, never masked. */
static int cudart_index(PyObject *o, int is_signed, int bits, PyObject **out)
{
    if (PyLong_Check(o)) {
        Py_INCREF(o);
        *out = o;
        return 0;
    }
    if (PyFloat_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "int expected instead of float");
        return -1;
    }
    PyTypeObject *own = cudart_integer_class(is_signed, bits);
    if (PyObject_TypeCheck(o, own)) {
        *out = cudart_scalar_value(o, is_signed, bits);
        return *out ? 0 : -1;
    }
    *out = PyNumber_Index(o);
    if (!*out && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyObject *name = PyType_GetName(own);
        if (name)
            PyErr_Format(PyExc_TypeError, "wrong type: %R where C takes an int or a %U",
                         (PyObject *)Py_TYPE(o), name);
        Py_XDECREF(name);
    }
    return *out ? 0 : -1;
}

/* The range rule is cudart/_cint.h's, which the C launcher shares. */
static int cudart_integer(PyObject *o, Py_ssize_t index, int is_signed, int bits,
                          unsigned long long *out)
{
    PyObject *n;
    if (cudart_index(o, is_signed, bits, &n) < 0) {
        cudart_argument_failed(index);
        return -1;
    }
    long long low;
    unsigned long long high;
    cudart_cint_range(is_signed, bits, &low, &high);
    int r = cudart_cint(n, low, high, out);
    Py_DECREF(n);
    if (r > 0)
        PyErr_Format(PyExc_OverflowError, "int out of range for %s %d-bit C integer",
                     is_signed ? "a signed" : "an unsigned", bits);
    if (r != 0) {
        cudart_argument_failed(index);
        return -1;
    }
    return 0;
}

/* cudart_integer, with an exact int in range (the common argument) taken inline: its
 * type by an inline compare, where PyLong_Check would call PyType_GetFlags in the
 * limited API, and the range's bounds constant. Any other argument, or an int out of
 * range (for the error), goes through cudart_integer. */
static inline int cudart_exact_integer(PyObject *o, Py_ssize_t index, int is_signed, int bits,
                                       unsigned long long *out)
{
    long long low;
    unsigned long long high;
    cudart_cint_range(is_signed, bits, &low, &high);
    if (PyLong_CheckExact(o) && cudart_cint(o, low, high, out) == 0)
        return 0;
    return cudart_integer(o, index, is_signed, bits, out);
}

static inline int cudart_signed(PyObject *o, Py_ssize_t index, int bits, long long *out)
{
    unsigned long long v;
    if (cudart_exact_integer(o, index, 1, bits, &v) < 0)
        return -1;
    *out = (long long)v;
    return 0;
}

static inline int cudart_unsigned(PyObject *o, Py_ssize_t index, int bits,
                                  unsigned long long *out)
{
    return cudart_exact_integer(o, index, 0, bits, out);
}

static inline int cudart_double(PyObject *o, Py_ssize_t index, double *out)
{
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) {
        /* ctypes' own words for a value its c_double/c_float cannot take, which differ
         * between Pythons ("wrong type"; PyFloat_AsDouble's since 3.13.5 and 3.14). */
        PyErr_Clear();
        PyObject *taken = PyObject_CallMethod((PyObject *)cudart_c_double_class, "from_param", "O", o);
        if (taken) {
            Py_DECREF(taken);
            PyErr_SetString(PyExc_TypeError, "wrong type");
        }
        cudart_argument_failed(index);
        return -1;
    }
    *out = v;
    return 0;
}

/* ---------------------------------------------------------------- pointers */

static int cudart_is_pointer_valued(PyTypeObject *t)
{
    return PyType_IsSubtype(t, cudart_c_void_p) || PyType_IsSubtype(t, cudart_Pointer) ||
           PyType_IsSubtype(t, cudart_CFuncPtr) || PyType_IsSubtype(t, cudart_c_char_p) ||
           PyType_IsSubtype(t, cudart_c_wchar_p);
}

static int cudart_not_an_address(Py_ssize_t index)
{
    PyErr_Clear();
    return cudart_fail(index, PyExc_OverflowError, "an address is an int in [0, 2**64)");
}

static inline int cudart_address(PyObject *o, Py_ssize_t index, void **out)
{
    unsigned long long v = PyLong_AsUnsignedLongLong(o);
    if (v == (unsigned long long)-1 && PyErr_Occurred())
        return cudart_not_an_address(index);
    *out = (void *)(uintptr_t)v;
    return 0;
}

static int cudart_address_via_ctypes(PyObject *o, Py_ssize_t index, void **out)
{
    PyObject *a = PyObject_CallFunctionObjArgs(cudart_address_of, o, NULL);
    if (!a) {
        cudart_argument_failed(index);
        return -1;
    }
    int r = cudart_address(a, index, out);
    Py_DECREF(a);
    return r;
}

/* A byref() where C takes `need` bytes (one record): from its address to the end of its
 * object, they must be there; an offset outside the object leaves none. */
static int cudart_byref_room(PyObject *o, Py_ssize_t index, Py_ssize_t need, void *address)
{
    PyObject *obj = PyObject_GetAttrString(o, "_obj");
    if (!obj) {
        cudart_argument_failed(index);
        return -1;
    }
    Py_buffer view;
    int r = 0;
    if (PyObject_CheckBuffer(obj)) {
        if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) < 0) {
            Py_DECREF(obj);
            cudart_argument_failed(index);
            return -1;
        }
        uintptr_t start = (uintptr_t)view.buf, at = (uintptr_t)address;
        Py_ssize_t room = at < start || at - start > (uintptr_t)view.len
                              ? -1
                              : view.len - (Py_ssize_t)(at - start);
        PyBuffer_Release(&view);
        if (room < 0)
            PyErr_SetString(PyExc_ValueError, "a byref() whose offset is outside its object");
        else if (room < need)
            PyErr_Format(PyExc_ValueError, "a byref() of %zd bytes where C takes at least %zd",
                         room, need);
        if (room < need) {
            cudart_argument_failed(index);
            r = -1;
        }
    }
    Py_DECREF(obj);
    return r;
}

/* cudart_pointer for any argument. */
static int cudart_pointer_any(PyObject *o, Py_ssize_t index, int storage, Py_ssize_t need,
                              void **out, Py_buffer *view)
{
    if (o == Py_None) {
        *out = NULL;
        return 0;
    }
    /* PyLong_Check and PyBytes_Check from one read of the flags (each would read them,
     * a call in the limited API). */
    unsigned long flags = PyType_GetFlags(Py_TYPE(o));
    if (flags & Py_TPFLAGS_LONG_SUBCLASS)
        return cudart_address(o, index, out);
    if (flags & Py_TPFLAGS_BYTES_SUBCLASS) {
        if (need && PyBytes_Size(o) < need) {
            PyErr_Format(PyExc_ValueError, "a bytes of %zd bytes where C takes at least %zd",
                         PyBytes_Size(o), need);
            cudart_argument_failed(index);
            return -1;
        }
        *out = PyBytes_AsString(o);
        return 0;
    }
    /* A c_void_p (every handle class), as ctypes passes it: the value in its memory. */
    Py_ssize_t at = storage ? -1 : cudart_memory_at();
    if (at >= 0 && PyObject_TypeCheck(o, cudart_c_void_p)) {
        memcpy(out, cudart_memory_of(o, at), sizeof *out);
        return 0;
    }
    PyTypeObject *t = Py_TYPE(o);
    if (t == cudart_CArgObject) {
        if (cudart_byref_offset < 0) {
            if (cudart_address_via_ctypes(o, index, out) < 0)
                return -1;
        } else {
            memcpy(out, (const char *)o + cudart_byref_offset, sizeof *out);
        }
        return need ? cudart_byref_room(o, index, need, *out) : 0;
    }
    int ctype = PyObject_TypeCheck(o, cudart_SimpleCData) ||
                PyObject_TypeCheck(o, cudart_Structure) || PyObject_TypeCheck(o, cudart_Union) ||
                PyObject_TypeCheck(o, cudart_Array) || PyObject_TypeCheck(o, cudart_Pointer) ||
                PyObject_TypeCheck(o, cudart_CFuncPtr);
    /* As ctypes: a pointer object's value is the address; a c_void_p, c_char_p or
     * function pointer is an address too, except as storage C writes (then, as
     * POINTER(T).from_param would byref it, its memory). */
    int valued = storage ? PyObject_TypeCheck(o, cudart_Pointer) : cudart_is_pointer_valued(t);
    if (ctype && valued) {
        /* Its memory holds the address it stands for. */
        if (PyObject_GetBuffer(o, view, PyBUF_SIMPLE) < 0) {
            cudart_argument_failed(index);
            return -1;
        }
        void *v = NULL;
        if (view->len >= (Py_ssize_t)sizeof(void *))
            memcpy(&v, view->buf, sizeof v);
        PyBuffer_Release(view);
        view->obj = NULL;
        *out = v;
        return 0;
    }
    if (ctype && !storage && !PyObject_TypeCheck(o, cudart_Array)) {
        PyErr_Format(PyExc_TypeError,
                     "%R is a C value, not a pointer: pass ctypes.byref() of it, or its "
                     "address",
                     (PyObject *)t);
        cudart_argument_failed(index);
        return -1;
    }
    if (PyObject_CheckBuffer(o)) {
        if (PyObject_GetBuffer(o, view, PyBUF_SIMPLE) < 0) {
            cudart_argument_failed(index);
            return -1;
        }
        if (need && view->len < need) {
            PyErr_Format(PyExc_ValueError,
                         "a buffer of %zd bytes where C takes at least %zd", view->len, need);
            cudart_argument_failed(index);
            return -1;
        }
        *out = view->buf;
        return 0;
    }
    if (PyFloat_Check(o))
        return cudart_fail(index, PyExc_TypeError, "a float is not an address");
    if (PyObject_HasAttrString(o, "_as_parameter_"))
        return cudart_address_via_ctypes(o, index, out);
    /* An integer (__index__), or the __int__ of what is no number (cuda-bindings'
     * handles): a Decimal, a Fraction or a NumPy float has __int__ too, and truncating
     * one to an address is never meant (cudart._convert._int_like). */
    int integer = PyObject_HasAttrString(o, "__index__");
    if (!integer && (PyObject_HasAttrString(o, "__float__") ||
                     PyObject_HasAttrString(o, "__complex__")))
        return cudart_fail(index, PyExc_TypeError, "a number that is no integer is not an address");
    if (integer || PyObject_HasAttrString(o, "__int__")) {
        PyObject *n = integer ? PyNumber_Index(o) : PyNumber_Long(o);
        if (!n) {
            cudart_argument_failed(index);
            return -1;
        }
        int r = cudart_address(n, index, out);
        Py_DECREF(n);
        return r;
    }
    PyErr_Format(PyExc_TypeError, "%R is not an address, a buffer or a ctypes object",
                 (PyObject *)t);
    cudart_argument_failed(index);
    return -1;
}

/* `view` must start with view->obj == NULL and is released by cudart_release. `need`:
 * the bytes C reads or writes at least (the pointee's size; 0 where unknown). An int,
 * the most common argument, is taken inline (exactly an int: an inline compare, where
 * PyLong_Check would call PyType_GetFlags in the limited API); its subclasses too,
 * through cudart_pointer_any. */
static inline int cudart_pointer(PyObject *o, Py_ssize_t index, int storage, Py_ssize_t need,
                                 void **out, Py_buffer *view)
{
    if (PyLong_CheckExact(o))
        return cudart_address(o, index, out);
    return cudart_pointer_any(o, index, storage, need, out, view);
}

static inline void cudart_release(Py_buffer *view)
{
    if (view->obj)
        PyBuffer_Release(view);
}

/* The ctypes class `name` of the raw module `raw_module` (the view's: the view
 * cudart._fast_driver_12050 serves cudart.driver_12050), whose classes the raw
 * functions' argtypes are. */
static int cudart_record_class(const char *raw_module, const char *name, PyTypeObject **seen)
{
    /* Looked up once per class, published once: threads meeting it first at the same
     * time may each look it up; the first's is kept, the others released (_cthreads.h). */
    PyObject *raw = PyImport_ImportModule(raw_module);
    PyObject *cls = raw ? PyObject_GetAttrString(raw, name) : NULL;
    Py_XDECREF(raw);
    if (cls && !(PyType_Check(cls) &&
                 (PyType_IsSubtype((PyTypeObject *)cls, cudart_Structure) ||
                  PyType_IsSubtype((PyTypeObject *)cls, cudart_Union)))) {
        PyErr_Format(PyExc_SystemError, "%s of the raw module is not a ctypes record", name);
        Py_CLEAR(cls);
    }
    if (!cls) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_SystemError, "no raw module %s", raw_module);
        return -1;
    }
    cudart_publish_once((PyObject **)seen, cls);
    return 0;
}

/* A type's name as C's tp_name spells it (what ctypes' messages show): a class made in
 * Python by its name, a static type by its module and name, a builtin's alone. */
static PyObject *cudart_type_name(PyTypeObject *t)
{
    PyObject *name = PyType_GetName(t);
    if (!name || (PyType_GetFlags(t) & Py_TPFLAGS_HEAPTYPE))
        return name;
    PyObject *module = PyObject_GetAttrString((PyObject *)t, "__module__");
    PyObject *full = NULL;
    if (module && PyUnicode_Check(module) && PyUnicode_CompareWithASCIIString(module, "builtins"))
        full = PyUnicode_FromFormat("%U.%U", module, name);
    PyErr_Clear();
    Py_XDECREF(module);
    if (!full)
        return name;
    Py_DECREF(name);
    return full;
}

/* ctypes' refusal of a record by value of another class, in its words. */
static void cudart_not_an_instance(PyTypeObject *want, PyTypeObject *got)
{
    PyObject *a = cudart_type_name(want), *b = cudart_type_name(got);
    if (a && b)
        PyErr_Format(PyExc_TypeError, "expected %U instance instead of %U", a, b);
    Py_XDECREF(a);
    Py_XDECREF(b);
}

/* A record by value: an instance of the raw module's class of that record (or of a
 * subclass), as ctypes takes it; a class of the same name and size is another record.
 * `seen` keeps the class once looked up. */
static int cudart_by_value(PyObject *o, Py_ssize_t index, const char *raw_module,
                           const char *name, Py_ssize_t size, PyTypeObject **seen, void *out)
{
    if (!CUDART_LOAD_ACQUIRE(*seen) && cudart_record_class(raw_module, name, seen) < 0) {
        cudart_argument_failed(index);
        return -1;
    }
    PyTypeObject *cls = CUDART_LOAD_ACQUIRE(*seen);
    if (!PyObject_TypeCheck(o, cls)) {
        cudart_not_an_instance(cls, Py_TYPE(o));
        cudart_argument_failed(index);
        return -1;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) < 0) {
        cudart_argument_failed(index);
        return -1;
    }
    if (view.len != size) {
        PyErr_Format(PyExc_TypeError, "expected a %s (%zd bytes), got %zd bytes", name, size,
                     view.len);
        PyBuffer_Release(&view);
        cudart_argument_failed(index);
        return -1;
    }
    memcpy(out, view.buf, (size_t)size);
    PyBuffer_Release(&view);
    return 0;
}

/* ---------------------------------------------------------------- calls */

static int cudart_wrong_arity(const char *name, Py_ssize_t nargs, Py_ssize_t expected)
{
    PyErr_Format(PyExc_TypeError, "%s takes %zd argument%s (%zd given)", name, expected,
                 expected == 1 ? "" : "s", nargs);
    return -1;
}

/* Inline: every call checks it, and it holds. */
static inline int cudart_arity(const char *name, Py_ssize_t nargs, Py_ssize_t expected)
{
    return nargs == expected ? 0 : cudart_wrong_arity(name, nargs, expected);
}

/* A variant's spec, carried as its `self` (bytes, the view after it; the module's own
 * functions have the view module there, and no spec): bit i of `storage` takes C parameter i's ctypes object
 * by its own memory; bit i of `outs` leaves C parameter i out of the arguments, points
 * it at an 8-byte slot of the call's own, and returns the slot's value after the
 * status, read as codes[i] (a ctypes _type_ code: i I l L q Q h H b B ? f d P). */
typedef struct {
    unsigned long long storage;
    unsigned long long outs;
    char codes[CUDART_MAX_PARAMS];
} cudart_spec;

/* The module's own functions' spec: no storage, no outputs. */
static const cudart_spec cudart_no_spec = {0, 0, {0}};

/* A variant's spec (cudart._backend.compiled_function): its storage and output bits.
 * Read in place, not copied: a bytes' data follows its size and hash, so it is aligned
 * for the spec's integers. variant() gives `self` an exact bytes of the spec's size, so
 * the type alone (an inline compare, where PyBytes_Check would call PyType_GetFlags in
 * the limited API) tells a variant from the module's own function on every call. */
static inline const cudart_spec *cudart_spec_of(PyObject *self)
{
    return Py_IS_TYPE(self, &PyBytes_Type) ? (const cudart_spec *)PyBytes_AsString(self)
                                           : &cudart_no_spec;
}

/* What a variant's `self` holds: its spec, then its view. */
typedef struct {
    cudart_spec spec;
    cudart_view *view;
} cudart_variant_self;

/* The view a function serves (its `self`: the view module, or a variant's bytes). */
static inline cudart_view *cudart_view_of(PyObject *self)
{
    if (Py_IS_TYPE(self, &PyBytes_Type)) {
        cudart_view *view;
        memcpy(&view, PyBytes_AsString(self) + offsetof(cudart_variant_self, view), sizeof view);
        return view;
    }
    return (cudart_view *)PyModule_GetDef(self);
}

static inline Py_ssize_t cudart_count(unsigned long long bits)
{
    return (Py_ssize_t)__builtin_popcountll(bits);
}

static PyObject *cudart_output_value(char code, const void *slot)
{
    union {
        signed char b; unsigned char B; short h; unsigned short H; int i; unsigned int I;
        long long q; unsigned long long Q; float f; double d; void *P; _Bool z;
    } v;
    memcpy(&v, slot, sizeof v);
    switch (code) {
    case 'b': return PyLong_FromLong(v.b);
    case 'B': return PyLong_FromLong(v.B);
    case 'h': return PyLong_FromLong(v.h);
    case 'H': return PyLong_FromLong(v.H);
    case 'i': return PyLong_FromLong(v.i);
    case 'I': return PyLong_FromUnsignedLong(v.I);
    case 'l': case 'q': return PyLong_FromLongLong(v.q);
    case 'L': case 'Q': return PyLong_FromUnsignedLongLong(v.Q);
    case 'f': return PyFloat_FromDouble((double)v.f);
    case 'd': return PyFloat_FromDouble(v.d);
    case '?': return PyBool_FromLong(v.z);
    case 'P': return PyLong_FromVoidPtr(v.P);
    default:
        PyErr_Format(PyExc_SystemError, "no output code %c", code);
        return NULL;
    }
}

/* (status, output values...) in parameter order; steals `status`. */
static PyObject *cudart_with_outputs(PyObject *status, const cudart_spec *spec,
                                     const unsigned long long *slots)
{
    PyObject *out = PyTuple_New(1 + cudart_count(spec->outs));
    if (!out) {
        Py_DECREF(status);
        return NULL;
    }
    PyTuple_SetItem(out, 0, status);
    Py_ssize_t n = 0;
    for (unsigned long long bits = spec->outs; bits; bits &= bits - 1) {
        int i = __builtin_ctzll(bits); /* the next output's parameter */
        PyObject *value = cudart_output_value(spec->codes[i], &slots[n]);
        if (!value || PyTuple_SetItem(out, n + 1, value) < 0) {
            Py_DECREF(out);
            return NULL;
        }
        n++;
    }
    return out;
}

/* A spec marking as an output a parameter that cannot be one: only pointers to 1 to 8
 * bytes can. */
static PyObject *cudart_not_an_output(const char *name)
{
    PyErr_Format(PyExc_ValueError,
                 "%s: a variant's output must point to a scalar of 1 to 8 bytes", name);
    return NULL;
}

static PyObject *cudart_unbound(const char *name)
{
    PyErr_Format(PyExc_RuntimeError,
                 "%s is not bound: cudart._backend binds it before handing it out", name);
    return NULL;
}

#ifdef CUDART_FAST_TEST_HOOKS
/* The call recorder, compiled into test builds only (tests/support/fast_support.py): while
 * recording, the converted arguments (ints, floats, records as bytes) are kept instead
 * of calling C, and a call returns success. */
/* Guards each view's recorded calls and saved slots against record() of another thread; held
 * only for loads, stores and reference counts (never across Python code). */
static cudart_mutex cudart_record_lock = CUDART_MUTEX_INIT;

/* The list being recorded into, a new reference, or NULL. */
static PyObject *cudart_recording(cudart_view *view)
{
    CUDART_LOCK(&cudart_record_lock);
    PyObject *list = view->recorded;
    Py_XINCREF(list);
    CUDART_UNLOCK(&cudart_record_lock);
    return list;
}

static int cudart_record_call(cudart_view *view, const char *name, PyObject *values)
{
    if (!values)
        return -1;
    PyObject *entry = Py_BuildValue("(sN)", name, values);
    if (!entry)
        return -1;
    PyObject *list = cudart_recording(view);
    int r = list ? PyList_Append(list, entry) : 0;
    Py_XDECREF(list);
    Py_DECREF(entry);
    return r;
}

/* A call's test hook (the raw and the checked function's, after CUDART_BOUND): while
 * recording (its slot holds CUDART_RECORD), the call keeps its converted arguments,
 * Py_BuildValue(format, ...), instead of calling C: 1 recorded, -1 not (an exception
 * set); else 0, and always 0 in the users' build. */
#define CUDART_RECORDED(name, ...)                                                        \
    (slot != CUDART_RECORD ? 0                                                            \
     : cudart_record_call(view, #name, Py_BuildValue(__VA_ARGS__)) < 0 ? -1 : 1)
#else
#define CUDART_RECORDED(name, ...) 0
#endif /* CUDART_FAST_TEST_HOOKS */

/* What the test recorder returns for a record result: its size of zero bytes. */
static inline PyObject *cudart_zero_bytes(Py_ssize_t size)
{
    PyObject *result = PyBytes_FromStringAndSize(NULL, size);
    if (result)
        memset(PyBytes_AsString(result), 0, (size_t)size);
    return result;
}

/* ---------------------------------------------------------------- module functions */

/* The slot of the view's function `name` (a name the minor lacks has none): its place
 * among the major's names (slot_names, sorted as strcmp orders them). */
static Py_ssize_t cudart_slot_index(cudart_view *view, PyObject *name)
{
    const char *text = PyUnicode_AsUTF8AndSize(name, NULL);
    if (!text)
        return -1;
    for (const unsigned short *row = view->functions; *row != CUDART_NO_ROW; row++) {
        if (strcmp(view->function_table[*row].ml_name, text) != 0)
            continue;
        Py_ssize_t low = 0, high = view->slot_count;
        while (low < high) {
            Py_ssize_t middle = low + (high - low) / 2;
            int order = strcmp(view->slot_names[middle], text);
            if (order == 0)
                return middle;
            if (order < 0)
                low = middle + 1;
            else
                high = middle;
        }
        break; /* a function without a slot: the generated tables disagree */
    }
    PyErr_Format(PyExc_LookupError, "this module has no function %U", name);
    return -1;
}

/* bind(name, symbol, handle) -> bool: dlsym(handle, symbol) into name's slot. */
static PyObject *cudart_bind(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    cudart_view *view = cudart_view_of(self);
    if (cudart_arity("bind", nargs, 3) < 0)
        return NULL;
    Py_ssize_t i = cudart_slot_index(view, args[0]);
    const char *symbol = PyUnicode_AsUTF8AndSize(args[1], NULL);
    void *handle = PyLong_AsVoidPtr(args[2]);
    if (i < 0 || !symbol || (!handle && PyErr_Occurred()))
        return NULL;
    void *address = dlsym(handle, symbol);
    /* Published to the calls of other threads, which load it with acquire: a thread
     * that sees the address sees the library dlopen() initialised before. Two threads
     * binding one slot store the same address. */
    if (address)
        CUDART_STORE_RELEASE(view->slots[i], address);
    return PyBool_FromLong(address != NULL);
}

#ifdef CUDART_FAST_TEST_HOOKS
/* record(on): every function records instead of calling C (on), or is unbound again
 * (off). Returns the calls recorded since the last record(True). For tests. */
static PyObject *cudart_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    cudart_view *view = cudart_view_of(self);
    if (cudart_arity("record", nargs, 1) < 0)
        return NULL;
    int on = PyObject_IsTrue(args[0]);
    if (on < 0)
        return NULL;
    size_t bytes = (size_t)view->slot_count * sizeof(void *);
    PyObject *fresh = on ? PyList_New(0) : NULL;
    PyObject *empty = PyList_New(0);
    if ((on && !fresh) || !empty) {
        Py_XDECREF(fresh);
        Py_XDECREF(empty);
        return NULL;
    }
    int failed = 0;
    CUDART_LOCK(&cudart_record_lock); /* no Python code below: allocations and stores */
    if (on && !view->saved_slots) {
        view->saved_slots = PyMem_Malloc(bytes ? bytes : 1);
        failed = view->saved_slots == NULL;
        for (Py_ssize_t i = 0; !failed && i < view->slot_count; i++)
            view->saved_slots[i] = CUDART_LOAD_ACQUIRE(view->slots[i]);
    }
    PyObject *previous = NULL;
    if (!failed) {
        previous = view->recorded ? view->recorded : empty;
        view->recorded = fresh;
        if (on) {
            for (Py_ssize_t i = 0; i < view->slot_count; i++)
                CUDART_STORE_RELEASE(view->slots[i], CUDART_RECORD);
        } else if (view->saved_slots) {
            /* What was bound before recording is bound again. */
            for (Py_ssize_t i = 0; i < view->slot_count; i++)
                CUDART_STORE_RELEASE(view->slots[i], view->saved_slots[i]);
            PyMem_Free(view->saved_slots);
            view->saved_slots = NULL;
        }
    }
    CUDART_UNLOCK(&cudart_record_lock);
    if (failed) {
        Py_XDECREF(fresh);
        Py_DECREF(empty);
        return PyErr_NoMemory();
    }
    if (previous != empty)
        Py_DECREF(empty);
    return previous;
}

#endif /* CUDART_FAST_TEST_HOOKS */

/* address(name) -> the address the function calls (0: unbound; 1: recording). */
static PyObject *cudart_slot_address(PyObject *self, PyObject *name)
{
    cudart_view *view = cudart_view_of(self);
    Py_ssize_t i = cudart_slot_index(view, name);
    return i < 0 ? NULL : PyLong_FromVoidPtr(CUDART_LOAD_ACQUIRE(view->slots[i]));
}

#ifdef CUDART_FAST_TEST_HOOKS
/* recorded() -> the calls recorded so far (the list itself, cleared by the caller). */
static PyObject *cudart_recorded_calls(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *list = cudart_recording(cudart_view_of(self));
    return list ? list : PyList_New(0);
}

#define CUDART_TEST_METHODS                                                               \
    {"record", (PyCFunction)(void (*)(void))cudart_record, METH_FASTCALL,                 \
     "record(on) -> the calls recorded so far; on: record instead of calling C"},         \
        {"recorded", cudart_recorded_calls, METH_NOARGS, "recorded() -> the calls so far"},
#else
#define CUDART_TEST_METHODS
#endif /* CUDART_FAST_TEST_HOOKS */

/* variant(name, spec) -> the function `name` under a spec (cudart_spec, as bytes):
 * the checked layer's storage arguments and outputs. */
static PyObject *cudart_variant(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    cudart_view *view = cudart_view_of(self);
    if (cudart_arity("variant", nargs, 2) < 0)
        return NULL;
    const char *text = PyUnicode_AsUTF8AndSize(args[0], NULL);
    if (!text)
        return NULL;
    if (!PyBytes_Check(args[1]) || PyBytes_Size(args[1]) != (Py_ssize_t)sizeof(cudart_spec)) {
        PyErr_Format(PyExc_TypeError, "variant: the spec is %zd bytes (cudart._backend.spec)",
                     (Py_ssize_t)sizeof(cudart_spec));
        return NULL;
    }
    for (const unsigned short *row = view->functions; *row != CUDART_NO_ROW; row++) {
        PyMethodDef *def = &view->function_table[*row];
        if (strcmp(def->ml_name, text) != 0)
            continue;
        /* An exact bytes, as cudart_spec_of tells a spec by: the spec, then the view. */
        cudart_variant_self made;
        memset(&made, 0, sizeof made);
        memcpy(&made.spec, PyBytes_AsString(args[1]), sizeof made.spec);
        made.view = view;
        PyObject *spec = PyBytes_FromStringAndSize((const char *)&made, (Py_ssize_t)sizeof made);
        PyObject *fn = spec ? PyCFunction_NewEx(def, spec, NULL) : NULL;
        Py_XDECREF(spec);
        return fn;
    }
    PyErr_Format(PyExc_LookupError, "this module has no function %U", args[0]);
    return NULL;
}

#define CUDART_SUPPORT_METHODS                                                            \
    {"bind", (PyCFunction)(void (*)(void))cudart_bind, METH_FASTCALL,                     \
     "bind(name, symbol, handle) -> bool: dlsym the symbol into the function's slot"},    \
        CUDART_TEST_METHODS                                                               \
        {"address", cudart_slot_address, METH_O, "address(name) -> what the function calls"}, \
        {"variant", (PyCFunction)(void (*)(void))cudart_variant, METH_FASTCALL,           \
         "variant(name, spec) -> the function under a spec (storage, outputs)"},

#endif /* CUDART_FASTCALL_H */
