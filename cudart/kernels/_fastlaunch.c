/* Function.launch without a ctypes frame (issues 13, 23): cudart.kernels._fastlaunch.Launcher.
 *
 * A Launcher belongs to one cudart.kernels.Function and holds what its launches pass to
 * cudaLaunchKernelExC: the function pointer (the symbol the Function binds, the
 * per-thread _ptsz one where that switch is on), the address of its cudaLaunchConfig_t
 * and of the c_void_p holding the kernel handle (read on each launch, so a closed
 * module's NULL is seen). `Function.launch` is the Launcher's bound `launch` method
 * (METH_FASTCALL: no argument tuple), which serves by itself a launch
 *
 *   from the thread that primed it, with as many arguments as the primed Signature has
 *   slots, each of a kind that Signature's slot takes (Signature.fast: ints and bools,
 *   floats, ctypes and NumPy scalars, bytes, None, c_void_p, objects with
 *   __cuda_array_interface__, HostMemory, objects with _as_parameter_ such as
 *   KernelArguments, and through the slot's own Python converter anything else
 *   Python's device_address takes, a DLPack producer included), and with a geometry
 *   C reads: the last launch's objects (by identity; the stream still of the class it
 *   was converted as, which a checked destroy changes), or grid and block ints or 1-3
 *   tuples of ints, shared_mem an int, stream None, an int, a stream handle of a class
 *   the Python path accepted before, or an object with __cuda_stream__, cooperative
 *   True or False; every number within the range the Python checks take.
 *
 * Everything is converted into scratch space first, then copied into the slots and
 * the configuration (little-endian, as struct's "<" formats), then cudaLaunchKernelExC
 * is called with the GIL released, as ctypes calls it. Anything else, and any value
 * C doubts, goes to `slow`, the Python implementation (Function._launch_slow), with
 * the same arguments: it raises as it always has (C raises nothing of its own), packs,
 * configures, and primes this Launcher again for the new state (`prime`). Nothing is
 * written before every value is converted, so a launch sent to the Python path leaves
 * the slots and the configuration as they were. A nonzero status goes to
 * `fail(status)`, which raises the CudaError.
 *
 * Hand-written, version-independent; limited API of 3.11 where the interpreter has a
 * GIL (one build serves later Pythons), the full API where it has none (../_capi.h).
 * Slots are written as the host's bytes: little-endian hosts only.
 *
 * Threads (issue 25): the Launcher's primed state is read and replaced under its
 * critical section (../_cthreads.h; the GIL's work where there is one): a launch takes
 * its own reference to the state it converts for, so another thread's prime() or
 * prime(None) (Function.close) never frees it under the launch. The critical section is
 * suspended while Python code runs inside a conversion and around the call (the GIL is
 * released there): the generation check and the state's reference cover those windows,
 * as they cover a prime from the same thread. Only the owner thread's launches write the
 * shared slots and configuration (Function claims one owner; others take the Python
 * path with slots of their own).
 */
#include "../_capi.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../_cint.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "cudart.kernels._fastlaunch writes kernel arguments as little-endian bytes"
#endif

typedef int (*launch_kernel_ex_c)(const void *config, const void *func, void **args);

/* A slot's kind (Signature.fast says which): how C converts the value for it. */
enum { SLOT_INT = 0, SLOT_F32 = 1, SLOT_F64 = 2, SLOT_BYTES = 3, SLOT_ADDRESS = 4 };
/* SLOT_ADDRESS: which step of Python's device_address the slot's class reaches. */
enum {
    ROUTE_NULL = 0,      /* None */
    ROUTE_VOID_P = 1,    /* a c_void_p: its value */
    ROUTE_ARRAY = 2,     /* __cuda_array_interface__["data"][0] */
    ROUTE_HOST = 3,      /* a HostMemory not released: its address */
    ROUTE_PARAMETER = 4, /* _as_parameter_: an int or a c_void_p */
    ROUTE_CALL = 5,      /* the slot's converter (device_address) says */
    ROUTE_CUPY = 6,      /* a cupy.ndarray: what its __cuda_array_interface__ says, unbuilt */
    ROUTE_PTR = 7,       /* a cudart.arrays.DeviceArray: its ptr, which its interface gives */
    ROUTE_LEN
};

typedef struct {
    char *addr;              /* the slot in the Signature's buffer */
    int kind;                /* SLOT_* */
    int route;               /* SLOT_ADDRESS: ROUTE_* */
    Py_ssize_t size;         /* bytes written */
    long long low;           /* SLOT_INT: the least value taken */
    unsigned long long high; /* SLOT_INT: the greatest value taken */
    PyTypeObject *type;      /* the argument's class; NULL: int or bool (SLOT_INT), float */
    PyObject *convert;       /* ROUTE_CALL: the Python converter */
    Py_ssize_t scratch;      /* where its bytes wait in the state's scratch */
} Slot;

/* What a prime sets up, in a capsule: a launch holds it while Python code it calls
 * (a property, a converter) may prime the Launcher again. */
typedef struct {
    PyObject *signature; /* owns the slots */
    void **argv;
    Py_ssize_t nslots;
    Slot *slots;
    unsigned char *scratch;
} State;

/* KEY_STREAM_CLASS: the class the stream was of when converted. A checked destroy
 * changes the class of the object it destroys (cudart._handles), so a launch that
 * repeats a destroyed stream object converts it again (and goes to the Python path,
 * which refuses it), for the price of one comparison. */
enum { KEY_GRID, KEY_BLOCK, KEY_SHARED, KEY_STREAM, KEY_COOPERATIVE, KEY_STREAM_CLASS, KEY_LEN };

/* Where cudaLaunchConfig_t keeps each field (from its ctypes class): ok 0 where it is
 * not the layout C writes, and every changed geometry then takes the Python path. */
typedef struct {
    int ok;
    Py_ssize_t grid, block, shared, stream, attrs;
} Layout;

enum { STREAM_TYPES = 8 };

typedef struct {
    PyObject_HEAD
    launch_kernel_ex_c call;
    PyObject *config; /* the cudaLaunchConfig_t, kept alive */
    char *config_addr;
    Layout layout;
    PyObject *func; /* the c_void_p holding the kernel handle, kept alive */
    void *const *func_addr;
    PyObject *slow; /* the Python path: slow(*args, **kwargs) */
    PyObject *fail; /* fail(status) raises the launch's error */
    int release_gil;
    /* The primed state: the last launch the Python path packed and configured, and the
     * geometry objects the configuration holds (C's own launches change both). */
    int primed;
    int busy; /* converting: a launch from the Python code that runs takes the Python path */
    unsigned long owner;
    unsigned long long generation; /* changes with every prime */
    PyObject *key[KEY_LEN];
    PyObject *state; /* a capsule of State */
    State *st;       /* its pointer */
    /* Classes of stream handles the Python path accepted (a destroyed one is another
     * class), learned from the primed keys. */
    PyTypeObject *stream_types[STREAM_TYPES];
    unsigned long long launches, fallbacks;
} Launcher;

static PyObject *str_shared_mem, *str_stream, *str_cooperative;
static PyObject *str_array_interface, *str_data, *str_dict, *str_released, *str_parameter;
static PyObject *str_mask;
static PyObject *str_size, *str_ptr;
static PyObject *str_cuda_stream;
static PyObject *int_zero; /* the default shared_mem: the small int 0 */
static PyTypeObject *c_void_p_type;
static PyObject *addressof; /* ctypes.addressof */

/* -- priming */

static void free_state(PyObject *capsule)
{
    State *st = PyCapsule_GetPointer(capsule, "cudart.kernels._fastlaunch.State");
    if (!st)
        return;
    for (Py_ssize_t i = 0; st->slots && i < st->nslots; i++) {
        Py_XDECREF((PyObject *)st->slots[i].type);
        Py_XDECREF(st->slots[i].convert);
    }
    Py_XDECREF(st->signature);
    PyMem_Free(st->slots);
    PyMem_Free(st->scratch);
    PyMem_Free(st);
}

static State *state_of(PyObject *capsule)
{
    return PyCapsule_GetPointer(capsule, "cudart.kernels._fastlaunch.State");
}

/* What unprime() took out, released after the critical section: a release may run Python
 * code (a finalizer), which must not find the Launcher half changed or the section held. */
typedef struct {
    PyObject *refs[KEY_LEN + 1];
} Dropped;

static void unprime_into(Launcher *self, Dropped *dropped)
{
    CUDART_STORE_RELAXED(self->primed, 0);
    self->generation++;
    for (int i = 0; i < KEY_LEN; i++) {
        dropped->refs[i] = self->key[i];
        self->key[i] = NULL;
    }
    dropped->refs[KEY_LEN] = self->state;
    self->state = NULL;
    self->st = NULL;
}

static void release_dropped(Dropped *dropped)
{
    for (int i = 0; i <= KEY_LEN; i++)
        Py_XDECREF(dropped->refs[i]);
}

static void unprime(Launcher *self)
{
    Dropped dropped;
    unprime_into(self, &dropped);
    release_dropped(&dropped);
}

static int read_slot(PyObject *desc, Slot *slot)
{
    /* (address, kind, size, low, high, type, route, converter) */
    if (!PyTuple_Check(desc) || PyTuple_Size(desc) != 8) {
        PyErr_SetString(PyExc_TypeError,
                        "a slot is (address, kind, size, low, high, type, route, converter)");
        return -1;
    }
    void *addr = PyLong_AsVoidPtr(PyTuple_GetItem(desc, 0));
    long kind = PyLong_AsLong(PyTuple_GetItem(desc, 1));
    long size = PyLong_AsLong(PyTuple_GetItem(desc, 2));
    long long low = PyLong_AsLongLong(PyTuple_GetItem(desc, 3));
    unsigned long long high = PyLong_AsUnsignedLongLong(PyTuple_GetItem(desc, 4));
    PyObject *type = PyTuple_GetItem(desc, 5);
    long route = PyLong_AsLong(PyTuple_GetItem(desc, 6));
    PyObject *convert = PyTuple_GetItem(desc, 7);
    if (PyErr_Occurred())
        return -1;
    int typed = PyType_Check(type);
    int ok = addr != NULL && (typed || type == Py_None) &&
             ((kind == SLOT_INT && (size == 1 || size == 2 || size == 4 || size == 8)) ||
              (kind == SLOT_F32 && size == 4) || (kind == SLOT_F64 && size == 8) ||
              (kind == SLOT_BYTES && size > 0 && typed) ||
              (kind == SLOT_ADDRESS && size == 8 && typed && route >= 0 && route < ROUTE_LEN &&
               (route != ROUTE_CALL || PyCallable_Check(convert))));
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "not a slot: kind %ld, %ld bytes, route %ld", kind, size,
                     route);
        return -1;
    }
    slot->addr = addr;
    slot->kind = (int)kind;
    slot->route = (int)route;
    slot->size = size;
    slot->low = low;
    slot->high = high;
    slot->type = typed ? (PyTypeObject *)Py_NewRef(type) : NULL;
    slot->convert = route == ROUTE_CALL ? Py_NewRef(convert) : NULL;
    return 0;
}

static PyObject *new_state(PyObject *signature, void *argv, PyObject *slots)
{
    Py_ssize_t n = PyTuple_Size(slots);
    State *st = PyMem_Calloc(1, sizeof(State));
    PyObject *capsule = st ? PyCapsule_New(st, "cudart.kernels._fastlaunch.State", free_state)
                           : NULL;
    if (!capsule) {
        PyMem_Free(st);
        return st ? NULL : PyErr_NoMemory();
    }
    st->signature = Py_NewRef(signature);
    st->argv = argv;
    st->slots = PyMem_Calloc(n ? (size_t)n : 1, sizeof(Slot));
    if (!st->slots) {
        Py_DECREF(capsule);
        return PyErr_NoMemory();
    }
    Py_ssize_t scratch = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (read_slot(PyTuple_GetItem(slots, i), &st->slots[i]) < 0) {
            Py_DECREF(capsule);
            return NULL;
        }
        st->nslots = i + 1;
        st->slots[i].scratch = scratch;
        scratch += (st->slots[i].size + 7) & ~(Py_ssize_t)7;
    }
    st->scratch = PyMem_Calloc(scratch ? (size_t)scratch : 1, 1);
    if (!st->scratch) {
        Py_DECREF(capsule);
        return PyErr_NoMemory();
    }
    if (n && argv == NULL) {
        Py_DECREF(capsule);
        PyErr_SetString(PyExc_ValueError, "argv is NULL");
        return NULL;
    }
    return capsule;
}

/* A class of stream handles the Python path accepts (Function._prime asks it). */
static void learn_stream_type(Launcher *self, PyObject *cls)
{
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, c_void_p_type))
        return;
    for (int i = 0; i < STREAM_TYPES; i++) {
        if (self->stream_types[i] == (PyTypeObject *)cls)
            return;
        if (self->stream_types[i] == NULL) {
            self->stream_types[i] = (PyTypeObject *)Py_NewRef(cls);
            return;
        }
    }
}

PyDoc_STRVAR(prime_doc,
             "prime(key, signature, argv, slots, stream_class=None)\n--\n\n"
             "Serve launches like the last one from C, on this thread: `key` is its (grid, "
             "block, shared_mem, stream, cooperative) objects, which the configuration "
             "holds, and the class its stream was converted as; `signature` owns the "
             "slots, `argv` the address of their `void **`, `slots` a tuple of (address, "
             "kind, size, low, high, type, route, converter) (Signature.fast); "
             "`stream_class` a class of stream handles the Python path accepts. "
             "prime(None) serves every launch from the Python path.");

static PyObject *Launcher_prime(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    Launcher *self = (Launcher *)op;
    Dropped dropped;
    if (nargs == 1 && args[0] == Py_None) {
        CUDART_BEGIN_CRITICAL(op);
        unprime_into(self, &dropped);
        CUDART_END_CRITICAL();
        release_dropped(&dropped);
        Py_RETURN_NONE;
    }
    if (nargs != 4 && nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "prime(key, signature, argv, slots[, stream_class]) or prime(None)");
        return NULL;
    }
    PyObject *key = args[0], *slots = args[3];
    if (!PyTuple_Check(key) || PyTuple_Size(key) != KEY_LEN || !PyTuple_Check(slots)) {
        PyErr_SetString(PyExc_TypeError, "key: a 6-tuple; slots: a tuple");
        return NULL;
    }
    void *argv = PyLong_AsVoidPtr(args[2]);
    if (argv == NULL && PyErr_Occurred())
        return NULL;
    PyObject *state = new_state(args[1], argv, slots);
    if (!state)
        return NULL;
    CUDART_BEGIN_CRITICAL(op);
    unprime_into(self, &dropped);
    for (int i = 0; i < KEY_LEN; i++)
        self->key[i] = Py_NewRef(PyTuple_GetItem(key, i));
    if (nargs == 5)
        learn_stream_type(self, args[4]);
    self->state = state;
    self->st = state_of(state);
    self->owner = PyThread_get_thread_ident();
    CUDART_STORE_RELAXED(self->primed, 1);
    CUDART_END_CRITICAL();
    release_dropped(&dropped);
    Py_RETURN_NONE;
}

/* -- launching */

/* Everything the C path does not serve: the Python path, with the same arguments. */
static PyObject *launch_slow(Launcher *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    CUDART_ADD_RELAXED(self->fallbacks, 1);
    PyObject *tuple = PyTuple_New(nargs);
    if (!tuple)
        return NULL;
    for (Py_ssize_t i = 0; i < nargs; i++)
        PyTuple_SetItem(tuple, i, Py_NewRef(args[i]));
    PyObject *kwargs = NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
    if (nkw) {
        kwargs = PyDict_New();
        for (Py_ssize_t i = 0; kwargs && i < nkw; i++) {
            if (PyDict_SetItem(kwargs, PyTuple_GetItem(kwnames, i), args[nargs + i]) < 0)
                Py_CLEAR(kwargs);
        }
        if (!kwargs) {
            Py_DECREF(tuple);
            return NULL;
        }
    }
    PyObject *slow = Py_NewRef(self->slow); /* prime() may run inside it */
    PyObject *result = PyObject_Call(slow, tuple, kwargs);
    Py_DECREF(slow);
    Py_DECREF(tuple);
    Py_XDECREF(kwargs);
    return result;
}

/* The conversions below return 0 with the value, or -1 where the Python path must
 * decide; they leave no exception set. */

static inline int doubt(void)
{
    PyErr_Clear();
    return -1;
}

/* A slot's bytes: the sizes kernel parameters mostly have as fixed-size copies (no call
 * into libc's memcpy, which a launch otherwise makes once per argument and again per
 * integer). */
static inline void copy_slot(void *to, const void *from, Py_ssize_t size)
{
    switch (size) {
    case 1: memcpy(to, from, 1); break;
    case 2: memcpy(to, from, 2); break;
    case 4: memcpy(to, from, 4); break;
    case 8: memcpy(to, from, 8); break;
    default: memcpy(to, from, (size_t)size);
    }
}

/* An int (exact) within [low, high]. */
static inline int exact_int(PyObject *v, long long low, unsigned long long high,
                            unsigned long long *out)
{
    if (!PyLong_CheckExact(v))
        return -1;
    return cudart_cint(v, low, high, out) == 0 ? 0 : doubt();
}

/* A c_void_p's value (its memory is the pointer). */
static int void_p_value(PyObject *v, unsigned long long *out)
{
    Py_buffer view;
    if (PyObject_GetBuffer(v, &view, PyBUF_SIMPLE) < 0)
        return doubt();
    int ok = view.len == (Py_ssize_t)sizeof(void *);
    if (ok) {
        void *p;
        memcpy(&p, view.buf, sizeof p);
        *out = (unsigned long long)(uintptr_t)p;
    }
    PyBuffer_Release(&view);
    return ok ? 0 : -1;
}

/* A cupy.ndarray's __cuda_array_interface__["data"][0] without the dict CuPy builds for
 * it (most of a launch's cost otherwise): that property gives data.ptr, or 0 where the
 * array is empty (cupy/_core/core.pyx). The three are CuPy's getset descriptors, which
 * _launch._address_route checked before choosing this route. */
static int cupy_address(PyObject *v, unsigned long long *out)
{
    PyObject *size = PyObject_GetAttr(v, str_size);
    if (!size || !PyLong_CheckExact(size)) {
        Py_XDECREF(size);
        return doubt();
    }
    int empty = PyObject_Not(size);
    Py_DECREF(size);
    if (empty < 0)
        return doubt();
    if (empty) {
        *out = 0;
        return 0;
    }
    PyObject *memory = PyObject_GetAttr(v, str_data);
    PyObject *ptr = memory ? PyObject_GetAttr(memory, str_ptr) : NULL;
    Py_XDECREF(memory);
    if (!ptr)
        return doubt();
    int r = exact_int(ptr, 0, ULLONG_MAX, out);
    Py_DECREF(ptr);
    return r;
}

/* 1 where a __cuda_array_interface__ dict has a mask other than None (or the look-up
 * failed), 0 where it has none. */
static int masked(PyObject *interface)
{
    PyObject *mask = PyDict_GetItemWithError(interface, str_mask);
    return mask ? mask != Py_None : PyErr_Occurred() != NULL;
}

/* Python's device_address, at the step the slot's class reaches (Signature.fast). */
static int address_of(const Slot *slot, PyObject *v, unsigned long long *out)
{
    PyObject *found = NULL, *data;
    int r = -1;
    switch (slot->route) {
    case ROUTE_NULL:
        *out = 0;
        return 0;
    case ROUTE_VOID_P:
        return void_p_value(v, out);
    case ROUTE_ARRAY:
        found = PyObject_GetAttr(v, str_array_interface);
        if (!found)
            return doubt();
        /* As Python's array_interface_data takes it: data a 2-tuple, no mask (which
         * cudart cannot apply); anything else goes to Python, which refuses it. */
        data = PyDict_CheckExact(found) ? PyDict_GetItemWithError(found, str_data) : NULL;
        if (data && PyTuple_CheckExact(data) && PyTuple_Size(data) == 2 && !masked(found))
            r = exact_int(PyTuple_GetItem(data, 0), 0, ULLONG_MAX, out);
        break;
    case ROUTE_CUPY:
        r = cupy_address(v, out);
        break;
    case ROUTE_PTR:
        found = PyObject_GetAttr(v, str_ptr);
        if (found)
            r = exact_int(found, 0, ULLONG_MAX, out);
        break;
    case ROUTE_HOST:
        /* Nothing else in its __dict__ (where an instance attribute would come before
         * __int__), and not released: HostMemory.check's address. */
        found = PyObject_GetAttr(v, str_dict);
        if (found && PyDict_CheckExact(found) && PyDict_Size(found) == 1 &&
            PyDict_GetItemWithError(found, str_released) == Py_False) {
            PyObject *address = PyObject_CallFunctionObjArgs(addressof, v, NULL);
            if (address) {
                r = exact_int(address, 0, ULLONG_MAX, out);
                Py_DECREF(address);
            }
        }
        break;
    case ROUTE_PARAMETER:
        found = PyObject_GetAttr(v, str_parameter);
        if (found && PyLong_CheckExact(found))
            r = exact_int(found, 0, ULLONG_MAX, out);
        else if (found && PyObject_TypeCheck(found, c_void_p_type))
            r = void_p_value(found, out);
        break;
    case ROUTE_CALL:
        found = PyObject_CallFunctionObjArgs(slot->convert, v, NULL);
        if (found)
            r = exact_int(found, 0, ULLONG_MAX, out);
        break;
    }
    Py_XDECREF(found);
    if (r < 0)
        PyErr_Clear();
    return r;
}

static int convert_value(const Slot *slot, PyObject *v, unsigned char *out)
{
    PyTypeObject *type = Py_TYPE(v);
    unsigned long long u;
    switch (slot->kind) {
    case SLOT_INT: {
        PyObject *n;
        if (slot->type == NULL) {
            /* struct's integer formats take a bool as the Python path's do */
            if (type != &PyLong_Type && type != &PyBool_Type)
                return -1;
            n = Py_NewRef(v);
        } else if (type != slot->type) {
            return -1;
        } else if (type == &PyLong_Type) {
            n = Py_NewRef(v); /* int(v) is v */
        } else {
            n = PyNumber_Long(v); /* the Python converter's int(v): NumPy's integers */
            if (!n)
                return doubt();
        }
        int r = cudart_cint(n, slot->low, slot->high, &u);
        Py_DECREF(n);
        if (r != 0)
            return doubt();
        copy_slot(out, &u, slot->size); /* the low bytes: little-endian */
        return 0;
    }
    case SLOT_F32:
    case SLOT_F64: {
        /* an int for a float slot picks its own slot; NumPy's floats are their class */
        if (type != (slot->type ? slot->type : &PyFloat_Type))
            return -1;
        double d = PyFloat_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred())
            return doubt();
        if (slot->kind == SLOT_F64) {
            memcpy(out, &d, 8);
        } else {
            float f = (float)d;
            if (isinf(f) && !isinf(d)) /* struct's OverflowError, from Python */
                return -1;
            memcpy(out, &f, 4);
        }
        return 0;
    }
    case SLOT_BYTES: {
        /* its own memory, of exactly the slot's size: a ctypes value, a NumPy float for
         * a parameter of unknown type, bytes */
        if (type != slot->type)
            return -1;
        Py_buffer view;
        if (PyObject_GetBuffer(v, &view, PyBUF_SIMPLE) < 0)
            return doubt();
        int ok = view.len == slot->size;
        if (ok)
            memcpy(out, view.buf, (size_t)slot->size);
        PyBuffer_Release(&view);
        return ok ? 0 : -1;
    }
    case SLOT_ADDRESS:
        if (type != slot->type || address_of(slot, v, &u) < 0)
            return -1;
        memcpy(out, &u, 8);
        return 0;
    }
    return -1;
}

/* Convert every value into the state's scratch. */
static int convert(State *st, PyObject *const *values)
{
    for (Py_ssize_t i = 0; i < st->nslots; i++) {
        const Slot *slot = &st->slots[i];
        if (convert_value(slot, values[i], st->scratch + slot->scratch) < 0)
            return -1;
    }
    return 0;
}

/* -- the configuration, as Function's configure checks it (cudart.kernels._launch) */

static inline int dimension(PyObject *v, unsigned int *out)
{
    unsigned long long u;
    if (exact_int(v, 0, 0xFFFFFFFFULL, &u) < 0)
        return -1;
    *out = (unsigned int)u;
    return 0;
}

/* An int or a tuple of 1 to 3 ints, the others 1. */
static int dims(PyObject *v, unsigned int out[3])
{
    out[1] = out[2] = 1;
    if (PyLong_CheckExact(v))
        return dimension(v, &out[0]);
    if (!PyTuple_CheckExact(v))
        return -1;
    Py_ssize_t n = PyTuple_Size(v);
    if (n < 1 || n > 3)
        return -1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (dimension(PyTuple_GetItem(v, i), &out[i]) < 0)
            return -1;
    return 0;
}

/* The CUDA stream protocol: __cuda_stream__ (or its call) gives (0, address). */
static int stream_protocol(PyObject *stream, unsigned long long *out)
{
    PyObject *protocol = PyObject_GetAttr(stream, str_cuda_stream);
    if (!protocol)
        return doubt();
    PyObject *answer = protocol == Py_None        ? NULL
                       : PyCallable_Check(protocol) ? PyObject_CallNoArgs(protocol)
                                                  : Py_NewRef(protocol);
    Py_DECREF(protocol);
    unsigned long long version;
    int r = -1;
    if (answer && PyTuple_CheckExact(answer) && PyTuple_Size(answer) == 2 &&
        exact_int(PyTuple_GetItem(answer, 0), 0, 0, &version) == 0)
        r = exact_int(PyTuple_GetItem(answer, 1), 0, ULLONG_MAX, out);
    Py_XDECREF(answer);
    if (r < 0)
        PyErr_Clear();
    return r;
}

/* cudart._convert.stream_handle where C is sure: None, an int, a handle of a class
 * accepted before, an object with __cuda_stream__. */
static int stream_value(Launcher *self, PyObject *stream, unsigned long long *out)
{
    if (stream == Py_None) {
        *out = 0;
        return 0;
    }
    if (PyLong_CheckExact(stream))
        return exact_int(stream, 0, ULLONG_MAX, out);
    if (PyObject_TypeCheck(stream, c_void_p_type)) {
        for (int i = 0; i < STREAM_TYPES && self->stream_types[i]; i++)
            if (self->stream_types[i] == Py_TYPE(stream))
                return void_p_value(stream, out);
        return -1;
    }
    return stream_protocol(stream, out);
}

typedef struct {
    unsigned int grid[3], block[3], shared, attrs;
    unsigned long long stream;
} Geometry;

/* The changed keys' values; -1 where the Python path must decide. */
static int geometry(Launcher *self, PyObject *const *given, int changed, Geometry *g)
{
    unsigned long long u;
    if (!self->layout.ok)
        return -1;
    if ((changed & (1 << KEY_GRID)) && dims(given[KEY_GRID], g->grid) < 0)
        return -1;
    if ((changed & (1 << KEY_BLOCK)) && dims(given[KEY_BLOCK], g->block) < 0)
        return -1;
    if (changed & (1 << KEY_SHARED)) {
        if (exact_int(given[KEY_SHARED], 0, 0xFFFFFFFFULL, &u) < 0)
            return -1;
        g->shared = (unsigned int)u;
    }
    if (changed & (1 << KEY_COOPERATIVE)) {
        if (given[KEY_COOPERATIVE] != Py_True && given[KEY_COOPERATIVE] != Py_False)
            return -1;
        g->attrs = given[KEY_COOPERATIVE] == Py_True;
    }
    if ((changed & (1 << KEY_STREAM)) && stream_value(self, given[KEY_STREAM], &g->stream) < 0)
        return -1;
    return 0;
}

static void configure(Launcher *self, int changed, const Geometry *g)
{
    char *c = self->config_addr;
    const Layout *at = &self->layout;
    if (changed & (1 << KEY_GRID))
        memcpy(c + at->grid, g->grid, sizeof g->grid);
    if (changed & (1 << KEY_BLOCK))
        memcpy(c + at->block, g->block, sizeof g->block);
    if (changed & (1 << KEY_SHARED)) {
        size_t shared = g->shared;
        memcpy(c + at->shared, &shared, sizeof shared);
    }
    if (changed & (1 << KEY_STREAM)) {
        void *stream = (void *)(uintptr_t)g->stream;
        memcpy(c + at->stream, &stream, sizeof stream);
    }
    if (changed & (1 << KEY_COOPERATIVE))
        memcpy(c + at->attrs, &g->attrs, sizeof g->attrs);
}

PyDoc_STRVAR(
    launch_doc,
    "launch($self, grid, block, /, *args, shared_mem=0, stream=None, cooperative=False)\n--\n\n"
    "Launch on `grid` x `block` (ints or 1-3 tuples) with `args`; raises on failure.\n\n"
    "`stream` is None (the default stream), an int, a cudaStream_t, or an object\n"
    "with `__cuda_stream__`, `_as_parameter_` or `__int__`. `cooperative=True` makes\n"
    "it a cooperative launch (as cudaLaunchCooperativeKernel).\n\n"
    "Where the parameter types are known (`param_types`), a float for a pointer or\n"
    "an integer parameter, or an int for a floating-point one, is a TypeError, and an\n"
    "int out of the C type's range an OverflowError. Where they are not, an int packs\n"
    "as an integer of the parameter's size and a Python float is a TypeError (pass\n"
    "numpy.float32(x) or ctypes.c_float(x), or declare `signature=`). A refused\n"
    "launch changes nothing: the next one runs with its own configuration.\n\n"
    "(Compiled: cudart.kernels._fastlaunch packs and configures a launch whose arguments\n"
    "are of the kinds of the previous one's, from the same thread, without a Python\n"
    "frame; anything else takes the Python path.)");

/* What a launch C serves calls, read under the critical section. */
typedef struct {
    launch_kernel_ex_c call;
    const void *config, *func;
    void **argv;
    int release_gil;
    PyObject *state;             /* held until the call returns */
    PyObject *replaced[KEY_LEN]; /* the keys this launch replaced, released after */
} Prepared;

/* Convert, pack and configure a launch the C path serves: 0, with `p` ready to call, or
 * -1 where the Python path must take it (nothing written). Called in the Launcher's
 * critical section. */
static int prepare(Launcher *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                   Prepared *p)
{
    if (!self->primed || self->busy || PyThread_get_thread_ident() != self->owner)
        return -1;
    State *st = self->st;
    if (nargs != st->nslots + 2)
        return -1;
    PyObject *given[KEY_LEN] = {args[0], args[1], int_zero, Py_None, Py_False, NULL};
    if (kwnames) {
        Py_ssize_t nkw = PyTuple_Size(kwnames);
        for (Py_ssize_t i = 0; i < nkw; i++) {
            PyObject *name = PyTuple_GetItem(kwnames, i);
            /* keyword names in a call are interned: others go to Python, which knows */
            if (name == str_stream)
                given[KEY_STREAM] = args[nargs + i];
            else if (name == str_shared_mem)
                given[KEY_SHARED] = args[nargs + i];
            else if (name == str_cooperative)
                given[KEY_COOPERATIVE] = args[nargs + i];
            else
                return -1;
        }
    }
    given[KEY_STREAM_CLASS] = (PyObject *)Py_TYPE(given[KEY_STREAM]);
    int changed = 0;
    for (int i = 0; i < KEY_LEN; i++)
        if (given[i] != self->key[i])
            changed |= 1 << i;
    if (changed & (1 << KEY_STREAM_CLASS))
        changed |= 1 << KEY_STREAM; /* the same object destroyed since, say: convert it */

    /* Python code may run from here (a NumPy scalar's int, a property, a converter, a
     * stream's __cuda_stream__): it may prime this Launcher again (this thread, or
     * another while the critical section is suspended), whose state this launch holds
     * meanwhile; a launch from that code takes the Python path. */
    PyObject *state = Py_NewRef(self->state);
    unsigned long long generation = self->generation;
    Geometry g;
    self->busy = 1;
    int ok = (!changed || geometry(self, given, changed, &g) == 0) && convert(st, args + 2) == 0;
    self->busy = 0;
    if (!ok || generation != self->generation) {
        Py_DECREF(state);
        return -1;
    }
    /* From here no Python code runs until the call. */
    for (Py_ssize_t i = 0; i < st->nslots; i++)
        copy_slot(st->slots[i].addr, st->scratch + st->slots[i].scratch, st->slots[i].size);
    for (int i = 0; i < KEY_LEN; i++)
        p->replaced[i] = NULL;
    if (changed) {
        configure(self, changed, &g);
        for (int i = 0; i < KEY_LEN; i++) {
            if (changed & (1 << i)) {
                p->replaced[i] = self->key[i];
                self->key[i] = Py_NewRef(given[i]);
            }
        }
    }
    CUDART_ADD_RELAXED(self->launches, 1);

    /* Read before the critical section ends and the GIL is released: another thread may
     * prime or clear this Launcher meanwhile. The slots stay alive with the state's
     * Signature. */
    p->call = self->call;
    p->config = self->config_addr;
    p->func = *self->func_addr;
    p->argv = st->argv;
    p->release_gil = self->release_gil;
    p->state = state;
    return 0;
}

static PyObject *Launcher_launch(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    Launcher *self = (Launcher *)op;
    Prepared p;
    int ready;
    CUDART_BEGIN_CRITICAL(op);
    ready = prepare(self, args, nargs, kwnames, &p);
    CUDART_END_CRITICAL();
    if (ready < 0)
        return launch_slow(self, args, nargs, kwnames);
    int status;
    if (p.release_gil) {
        Py_BEGIN_ALLOW_THREADS
        status = p.call(p.config, p.func, p.argv);
        Py_END_ALLOW_THREADS
    } else {
        status = p.call(p.config, p.func, p.argv);
    }
    Py_DECREF(p.state);
    for (int i = 0; i < KEY_LEN; i++)
        Py_XDECREF(p.replaced[i]);
    if (status == 0)
        Py_RETURN_NONE;
    return PyObject_CallFunction(self->fail, "i", status);
}

/* -- the type */

static int Launcher_clear(PyObject *op);

/* One field of the configuration's ctypes class: its offset where it has `size` bytes,
 * else -1 (then C leaves every geometry change to the Python path). */
static Py_ssize_t field_offset(PyObject *cls, const char *name, Py_ssize_t size)
{
    PyObject *field = PyObject_GetAttrString(cls, name);
    PyObject *offset = field ? PyObject_GetAttrString(field, "offset") : NULL;
    PyObject *bytes = field ? PyObject_GetAttrString(field, "size") : NULL;
    Py_ssize_t at = offset && bytes ? PyLong_AsSsize_t(offset) : -1;
    Py_ssize_t have = offset && bytes ? PyLong_AsSsize_t(bytes) : -1;
    PyErr_Clear();
    Py_XDECREF(field);
    Py_XDECREF(offset);
    Py_XDECREF(bytes);
    return have == size ? at : -1;
}

static int read_layout(PyObject *config, Layout *layout)
{
    PyObject *cls = (PyObject *)Py_TYPE(config);
    layout->grid = field_offset(cls, "gridDim", 12);
    layout->block = field_offset(cls, "blockDim", 12);
    layout->shared = field_offset(cls, "dynamicSmemBytes", (Py_ssize_t)sizeof(size_t));
    layout->stream = field_offset(cls, "stream", (Py_ssize_t)sizeof(void *));
    layout->attrs = field_offset(cls, "numAttrs", 4);
    layout->ok = layout->grid >= 0 && layout->block >= 0 && layout->shared >= 0 &&
                 layout->stream >= 0 && layout->attrs >= 0;
    return 0;
}

static int Launcher_init(PyObject *op, PyObject *args, PyObject *kwargs)
{
    Launcher *self = (Launcher *)op;
    static char *names[] = {"call", "config", "config_address", "func", "func_address",
                            "slow", "fail", "release_gil", NULL};
    PyObject *call, *config, *config_address, *func, *func_address, *slow, *fail;
    int release_gil = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOOOO|p:Launcher", names, &call, &config,
                                     &config_address, &func, &func_address, &slow, &fail,
                                     &release_gil))
        return -1;
    void *call_ptr = PyLong_AsVoidPtr(call);
    void *config_ptr = call_ptr ? PyLong_AsVoidPtr(config_address) : NULL;
    void *func_ptr = config_ptr ? PyLong_AsVoidPtr(func_address) : NULL;
    if (!func_ptr) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "Launcher: a NULL address");
        return -1;
    }
    if (!PyCallable_Check(slow) || !PyCallable_Check(fail)) {
        PyErr_SetString(PyExc_TypeError, "Launcher: slow and fail must be callable");
        return -1;
    }
    Layout layout;
    if (read_layout(config, &layout) < 0)
        return -1;
    Launcher_clear(op);
    self->layout = layout;
    self->call = (launch_kernel_ex_c)call_ptr;
    self->config = Py_NewRef(config);
    self->config_addr = (char *)config_ptr;
    self->func = Py_NewRef(func);
    self->func_addr = func_ptr;
    self->slow = Py_NewRef(slow);
    self->fail = Py_NewRef(fail);
    self->release_gil = release_gil;
    return 0;
}

static int Launcher_traverse(PyObject *op, visitproc visit, void *arg)
{
    Launcher *self = (Launcher *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->config);
    Py_VISIT(self->func);
    Py_VISIT(self->slow);
    Py_VISIT(self->fail);
    Py_VISIT(self->state);
    for (int i = 0; i < KEY_LEN; i++)
        Py_VISIT(self->key[i]);
    for (int i = 0; i < STREAM_TYPES; i++)
        Py_VISIT((PyObject *)self->stream_types[i]);
    return 0;
}

static int Launcher_clear(PyObject *op)
{
    Launcher *self = (Launcher *)op;
    unprime(self);
    for (int i = 0; i < STREAM_TYPES; i++)
        Py_CLEAR(self->stream_types[i]);
    Py_CLEAR(self->config);
    Py_CLEAR(self->func);
    Py_CLEAR(self->slow);
    Py_CLEAR(self->fail);
    return 0;
}

static void Launcher_dealloc(PyObject *op)
{
    PyTypeObject *type = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    Launcher_clear(op);
    freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);
    tp_free(op);
    Py_DECREF(type);
}

static PyObject *Launcher_get_primed(PyObject *op, void *closure)
{
    (void)closure;
    return PyBool_FromLong(CUDART_LOAD_RELAXED(((Launcher *)op)->primed));
}

static PyObject *Launcher_get_release_gil(PyObject *op, void *closure)
{
    (void)closure;
    return PyBool_FromLong(CUDART_LOAD_RELAXED(((Launcher *)op)->release_gil));
}

static int Launcher_set_release_gil(PyObject *op, PyObject *value, void *closure)
{
    (void)closure;
    int flag = value ? PyObject_IsTrue(value) : -1;
    if (flag < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "release_gil cannot be deleted");
        return -1;
    }
    CUDART_STORE_RELAXED(((Launcher *)op)->release_gil, flag);
    return 0;
}

static PyMethodDef Launcher_methods[] = {
    {"launch", (PyCFunction)(void (*)(void))Launcher_launch, METH_FASTCALL | METH_KEYWORDS,
     launch_doc},
    {"prime", (PyCFunction)(void (*)(void))Launcher_prime, METH_FASTCALL, prime_doc},
    {NULL, NULL, 0, NULL},
};

static PyObject *Launcher_get_slow(PyObject *op, void *closure)
{
    (void)closure;
    PyObject *slow = ((Launcher *)op)->slow;
    Py_INCREF(slow);
    return slow;
}

static PyObject *Launcher_get_key(PyObject *op, void *closure)
{
    (void)closure;
    Launcher *self = (Launcher *)op;
    PyObject *key = NULL;
    CUDART_BEGIN_CRITICAL(op);
    if (self->primed)
        key = PyTuple_Pack(KEY_LEN, self->key[0], self->key[1], self->key[2], self->key[3],
                           self->key[4], self->key[5]);
    else
        key = Py_NewRef(Py_None);
    CUDART_END_CRITICAL();
    return key;
}

static PyObject *Launcher_get_launches(PyObject *op, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(CUDART_LOAD_RELAXED(((Launcher *)op)->launches));
}

static PyObject *Launcher_get_fallbacks(PyObject *op, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(CUDART_LOAD_RELAXED(((Launcher *)op)->fallbacks));
}

static PyGetSetDef Launcher_getset[] = {
    {"key", Launcher_get_key, NULL,
     "While primed, the (grid, block, shared_mem, stream, cooperative) objects the "
     "configuration holds and the class its stream was converted as (C's launches change "
     "it); else None.",
     NULL},
    {"launches", Launcher_get_launches, NULL, "Launches C packed and configured itself.", NULL},
    {"fallbacks", Launcher_get_fallbacks, NULL, "Launches sent to the Python path (`slow`).",
     NULL},
    {"slow", Launcher_get_slow, NULL, "The Python launch (Function._launch_slow).", NULL},
    {"primed", Launcher_get_primed, NULL, "Whether launches like the last one are served in C.",
     NULL},
    {"release_gil", Launcher_get_release_gil, Launcher_set_release_gil,
     "Whether cudaLaunchKernelExC runs with the GIL released: the default, as ctypes "
     "calls it. Holding it saves tens of ns a launch, but a launch blocks while the "
     "stream's queue is full, and a Python host function queued before it (cudaLaunchHostFunc) "
     "then waits for the GIL: a deadlock. For measurements only.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(Launcher_doc,
             "Launcher(call, config, config_address, func, func_address, slow, fail, "
             "release_gil=True)\n--\n\n"
             "One kernel's launches: `call` the address of cudaLaunchKernelExC, `config` "
             "the cudaLaunchConfig_t at `config_address`, `func` the c_void_p at "
             "`func_address` holding the kernel handle, `slow` the Python launch, "
             "`fail(status)` raising a launch's error. `launch` is Function.launch.");

static PyType_Slot Launcher_slots[] = {
    {Py_tp_doc, (void *)Launcher_doc},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_init, Launcher_init},
    {Py_tp_dealloc, Launcher_dealloc},
    {Py_tp_traverse, Launcher_traverse},
    {Py_tp_clear, Launcher_clear},
    {Py_tp_methods, Launcher_methods},
    {Py_tp_getset, Launcher_getset},
    {0, NULL},
};

static PyType_Spec Launcher_spec = {
    .name = "cudart.kernels._fastlaunch.Launcher",
    .basicsize = sizeof(Launcher),
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .slots = Launcher_slots,
};

/* Multi-phase init (PEP 489); the state is the file's statics (one interpreter), none of
 * which relies on the GIL: a free-threaded interpreter keeps it off (../_cthreads.h). */
static int fastlaunch_exec(PyObject *module)
{
    static int ready; /* the statics, once per process (a re-import shares them) */
    if (cudart_main_interpreter_only("cudart.kernels._fastlaunch") < 0)
        return -1;
    if (!CUDART_LOAD_ACQUIRE(ready)) {
        str_shared_mem = PyUnicode_InternFromString("shared_mem");
        str_stream = PyUnicode_InternFromString("stream");
        str_cooperative = PyUnicode_InternFromString("cooperative");
        str_array_interface = PyUnicode_InternFromString("__cuda_array_interface__");
        str_data = PyUnicode_InternFromString("data");
        str_dict = PyUnicode_InternFromString("__dict__");
        str_released = PyUnicode_InternFromString("_released_");
        str_parameter = PyUnicode_InternFromString("_as_parameter_");
        str_cuda_stream = PyUnicode_InternFromString("__cuda_stream__");
        str_size = PyUnicode_InternFromString("size");
        str_ptr = PyUnicode_InternFromString("ptr");
        str_mask = PyUnicode_InternFromString("mask");
        int_zero = PyLong_FromLong(0);
        if (!str_shared_mem || !str_stream || !str_cooperative || !int_zero ||
            !str_array_interface || !str_data || !str_dict || !str_released || !str_parameter ||
            !str_cuda_stream || !str_size || !str_ptr || !str_mask)
            return -1;
        PyObject *ctypes = PyImport_ImportModule("ctypes");
        if (!ctypes)
            return -1;
        c_void_p_type = (PyTypeObject *)PyObject_GetAttrString(ctypes, "c_void_p");
        addressof = PyObject_GetAttrString(ctypes, "addressof");
        Py_DECREF(ctypes);
        if (!c_void_p_type || !addressof)
            return -1;
        CUDART_STORE_RELEASE(ready, 1);
    }
    PyObject *type = PyType_FromSpec(&Launcher_spec);
    if (!type || PyModule_AddObject(module, "Launcher", type) < 0) {
        Py_XDECREF(type);
        return -1;
    }
    return 0;
}

static PyModuleDef_Slot fastlaunch_slots[] = {
    {Py_mod_exec, (void *)fastlaunch_exec},
    CUDART_MODULE_THREAD_SLOTS
    {0, NULL},
};

static struct PyModuleDef fastlaunch_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "cudart.kernels._fastlaunch",
    .m_doc = "Function.launch in C (issues 13, 23).",
    .m_size = 0,
    .m_slots = fastlaunch_slots,
};

PyMODINIT_FUNC PyInit__fastlaunch(void)
{
    return PyModuleDef_Init(&fastlaunch_module);
}
