/* Function.launch without a ctypes frame (issue 13): cudart.kernels._fastlaunch.Launcher.
 *
 * A Launcher belongs to one cudart.kernels.Function and holds what its launches pass to
 * cudaLaunchKernelExC: the function pointer (the symbol the Function binds, the
 * per-thread _ptsz one where that switch is on), the address of its cudaLaunchConfig_t
 * and of the c_void_p holding the kernel handle (read on each launch, so a closed
 * module's NULL is seen). `Function.launch` is the Launcher's bound `launch` method
 * (METH_FASTCALL: no argument tuple), which serves the common case by itself:
 *
 *   the thread that primed it, the same grid, block, shared_mem, stream and cooperative
 *   objects as the last launch (by identity, as the Python path compares first), as
 *   many arguments as the primed Signature has slots, an int or bool for each integer
 *   slot within the range the Python converter takes, a float for each float slot:
 *   every value is converted into scratch space first, then copied into its slot
 *   (little-endian, as struct's "<" formats), then cudaLaunchKernelExC is called with
 *   the GIL released, as ctypes calls it.
 *
 * Anything else goes to `slow`, the Python implementation (Function._launch_slow), with
 * the same arguments: it raises as it always has, repacks, configures, and primes this
 * Launcher again for the new state (`prime`). Nothing is written before every value is
 * converted, so a launch sent to the Python path leaves the slots as they were. A
 * nonzero status goes to `fail(status)`, which raises the CudaError.
 *
 * Hand-written, version-independent; limited API of 3.11 (one build serves later
 * Pythons). Slots are written as the host's bytes: little-endian hosts only.
 */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "cudart.kernels._fastlaunch writes kernel arguments as little-endian bytes"
#endif

typedef int (*launch_kernel_ex_c)(const void *config, const void *func, void **args);

enum { SLOT_INT = 0, SLOT_F32 = 1, SLOT_F64 = 2 };

typedef struct {
    char *addr;              /* the slot in the Signature's buffer */
    int kind;                /* SLOT_INT, SLOT_F32, SLOT_F64 */
    int size;                /* bytes written */
    long long low;           /* SLOT_INT: the least value taken */
    unsigned long long high; /* SLOT_INT: the greatest value taken */
} Slot;

typedef union {
    unsigned long long u;
    float f;
    double d;
} Value;

enum { KEY_GRID, KEY_BLOCK, KEY_SHARED, KEY_STREAM, KEY_COOPERATIVE, KEY_LEN };

typedef struct {
    PyObject_HEAD
    launch_kernel_ex_c call;
    PyObject *config; /* the cudaLaunchConfig_t, kept alive */
    void *config_addr;
    PyObject *func; /* the c_void_p holding the kernel handle, kept alive */
    void *const *func_addr;
    PyObject *slow; /* the Python path: slow(*args, **kwargs) */
    PyObject *fail; /* fail(status) raises the launch's error */
    int release_gil;
    /* The primed state: the last launch the Python path packed and configured. */
    int primed;
    unsigned long owner;
    PyObject *key[KEY_LEN];
    PyObject *signature; /* owns the slots */
    void **argv;
    Py_ssize_t nslots;
    Slot *slots;
    Value *scratch;
} Launcher;

static PyObject *str_shared_mem, *str_stream, *str_cooperative;
static PyObject *int_zero; /* the default shared_mem: the small int 0 */

/* -- priming */

static void unprime(Launcher *self)
{
    self->primed = 0;
    for (int i = 0; i < KEY_LEN; i++)
        Py_CLEAR(self->key[i]);
    Py_CLEAR(self->signature);
    PyMem_Free(self->slots);
    PyMem_Free(self->scratch);
    self->slots = NULL;
    self->scratch = NULL;
    self->nslots = 0;
    self->argv = NULL;
}

static int read_slot(PyObject *desc, Slot *slot)
{
    /* (address, kind, size, low, high) */
    if (!PyTuple_Check(desc) || PyTuple_Size(desc) != 5) {
        PyErr_SetString(PyExc_TypeError, "a slot is (address, kind, size, low, high)");
        return -1;
    }
    void *addr = PyLong_AsVoidPtr(PyTuple_GetItem(desc, 0));
    long kind = PyLong_AsLong(PyTuple_GetItem(desc, 1));
    long size = PyLong_AsLong(PyTuple_GetItem(desc, 2));
    long long low = PyLong_AsLongLong(PyTuple_GetItem(desc, 3));
    unsigned long long high = PyLong_AsUnsignedLongLong(PyTuple_GetItem(desc, 4));
    if (PyErr_Occurred())
        return -1;
    int ok = addr != NULL &&
             ((kind == SLOT_INT && (size == 1 || size == 2 || size == 4 || size == 8)) ||
              (kind == SLOT_F32 && size == 4) || (kind == SLOT_F64 && size == 8));
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "not a slot: kind %ld, %ld bytes", kind, size);
        return -1;
    }
    slot->addr = addr;
    slot->kind = (int)kind;
    slot->size = (int)size;
    slot->low = low;
    slot->high = high;
    return 0;
}

PyDoc_STRVAR(prime_doc,
             "prime(key, signature, argv, slots)\n--\n\n"
             "Serve launches like the last one from C, on this thread: `key` is its (grid, "
             "block, shared_mem, stream, cooperative) objects, `signature` owns the slots, "
             "`argv` the address of their `void **`, `slots` a tuple of (address, kind, "
             "size, low, high), kind 0 an integer, 1 a float, 2 a double. "
             "prime(None) serves every launch from the Python path.");

static PyObject *Launcher_prime(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    Launcher *self = (Launcher *)op;
    if (nargs == 1 && args[0] == Py_None) {
        unprime(self);
        Py_RETURN_NONE;
    }
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "prime(key, signature, argv, slots) or prime(None)");
        return NULL;
    }
    PyObject *key = args[0], *slots = args[3];
    if (!PyTuple_Check(key) || PyTuple_Size(key) != KEY_LEN || !PyTuple_Check(slots)) {
        PyErr_SetString(PyExc_TypeError, "key: a 5-tuple; slots: a tuple");
        return NULL;
    }
    void *argv = PyLong_AsVoidPtr(args[2]);
    if (argv == NULL && PyErr_Occurred())
        return NULL;
    Py_ssize_t n = PyTuple_Size(slots);
    Slot *parsed = PyMem_Calloc(n ? (size_t)n : 1, sizeof(Slot));
    Value *scratch = PyMem_Calloc(n ? (size_t)n : 1, sizeof(Value));
    if (!parsed || !scratch) {
        PyMem_Free(parsed);
        PyMem_Free(scratch);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (read_slot(PyTuple_GetItem(slots, i), &parsed[i]) < 0) {
            PyMem_Free(parsed);
            PyMem_Free(scratch);
            return NULL;
        }
    }
    if (n && argv == NULL) {
        PyMem_Free(parsed);
        PyMem_Free(scratch);
        PyErr_SetString(PyExc_ValueError, "argv is NULL");
        return NULL;
    }
    unprime(self);
    for (int i = 0; i < KEY_LEN; i++)
        self->key[i] = Py_NewRef(PyTuple_GetItem(key, i));
    self->signature = Py_NewRef(args[1]);
    self->argv = argv;
    self->nslots = n;
    self->slots = parsed;
    self->scratch = scratch;
    self->owner = PyThread_get_thread_ident();
    self->primed = 1;
    Py_RETURN_NONE;
}

/* -- launching */

/* Everything the C path does not serve: the Python path, with the same arguments. */
static PyObject *launch_slow(Launcher *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
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

/* Convert every value into scratch: 0, or -1 where the Python path must decide. */
static inline int convert(Launcher *self, PyObject *const *values)
{
    const Slot *slot = self->slots;
    Value *out = self->scratch;
    for (Py_ssize_t i = 0; i < self->nslots; i++, slot++, out++) {
        PyObject *v = values[i];
        PyTypeObject *type = Py_TYPE(v);
        if (slot->kind == SLOT_INT) {
            /* struct's integer formats take a bool as the Python path's do */
            if (type != &PyLong_Type && type != &PyBool_Type)
                return -1;
            int overflow;
            long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (overflow == 0) {
                if (x == -1 && PyErr_Occurred()) {
                    PyErr_Clear();
                    return -1;
                }
                if (x < 0 ? x < slot->low : (unsigned long long)x > slot->high)
                    return -1;
                out->u = (unsigned long long)x;
            } else if (overflow > 0 && slot->high > (unsigned long long)LLONG_MAX) {
                unsigned long long u = PyLong_AsUnsignedLongLong(v);
                if (u == (unsigned long long)-1 && PyErr_Occurred()) {
                    PyErr_Clear();
                    return -1;
                }
                if (u > slot->high)
                    return -1;
                out->u = u;
            } else {
                return -1;
            }
        } else {
            if (type != &PyFloat_Type) /* an int for a float slot picks its own slot */
                return -1;
            double d = PyFloat_AsDouble(v);
            if (slot->kind == SLOT_F64) {
                out->d = d;
            } else {
                float f = (float)d;
                if (isinf(f) && !isinf(d)) /* struct's OverflowError, from Python */
                    return -1;
                out->f = f;
            }
        }
    }
    return 0;
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
    "(Compiled: cudart.kernels._fastlaunch serves a launch like the previous one, from the\n"
    "same thread, without a Python frame; anything else takes the Python path.)");

static PyObject *Launcher_launch(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    Launcher *self = (Launcher *)op;
    if (!self->primed || nargs != self->nslots + 2 ||
        PyThread_get_thread_ident() != self->owner)
        goto slow;
    if (args[0] != self->key[KEY_GRID] || args[1] != self->key[KEY_BLOCK])
        goto slow;
    PyObject *shared = int_zero, *stream = Py_None, *cooperative = Py_False;
    if (kwnames) {
        Py_ssize_t nkw = PyTuple_Size(kwnames);
        for (Py_ssize_t i = 0; i < nkw; i++) {
            PyObject *name = PyTuple_GetItem(kwnames, i);
            /* keyword names in a call are interned: others go to Python, which knows */
            if (name == str_stream)
                stream = args[nargs + i];
            else if (name == str_shared_mem)
                shared = args[nargs + i];
            else if (name == str_cooperative)
                cooperative = args[nargs + i];
            else
                goto slow;
        }
    }
    if (stream != self->key[KEY_STREAM] || shared != self->key[KEY_SHARED] ||
        cooperative != self->key[KEY_COOPERATIVE])
        goto slow;
    if (convert(self, args + 2) < 0)
        goto slow;
    for (Py_ssize_t i = 0; i < self->nslots; i++)
        memcpy(self->slots[i].addr, &self->scratch[i], (size_t)self->slots[i].size);

    /* Read before the GIL is released: another thread may prime or clear this
     * Launcher meanwhile. The slots stay alive with their Signature. */
    PyObject *signature = Py_NewRef(self->signature);
    launch_kernel_ex_c call = self->call;
    const void *config = self->config_addr, *func = *self->func_addr;
    void **argv = self->argv;
    int status;
    if (self->release_gil) {
        Py_BEGIN_ALLOW_THREADS
        status = call(config, func, argv);
        Py_END_ALLOW_THREADS
    } else {
        status = call(config, func, argv);
    }
    Py_DECREF(signature);
    if (status == 0)
        Py_RETURN_NONE;
    return PyObject_CallFunction(self->fail, "i", status);

slow:
    return launch_slow(self, args, nargs, kwnames);
}

/* -- the type */

static int Launcher_clear(PyObject *op);

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
    Launcher_clear(op);
    self->call = (launch_kernel_ex_c)call_ptr;
    self->config = Py_NewRef(config);
    self->config_addr = config_ptr;
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
    Py_VISIT(self->signature);
    for (int i = 0; i < KEY_LEN; i++)
        Py_VISIT(self->key[i]);
    return 0;
}

static int Launcher_clear(PyObject *op)
{
    Launcher *self = (Launcher *)op;
    unprime(self);
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
    return PyBool_FromLong(((Launcher *)op)->primed);
}

static PyObject *Launcher_get_release_gil(PyObject *op, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((Launcher *)op)->release_gil);
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
    ((Launcher *)op)->release_gil = flag;
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

static PyGetSetDef Launcher_getset[] = {
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

static struct PyModuleDef fastlaunch_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "cudart.kernels._fastlaunch",
    .m_doc = "Function.launch in C for launches like the previous one (issue 13).",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__fastlaunch(void)
{
    str_shared_mem = PyUnicode_InternFromString("shared_mem");
    str_stream = PyUnicode_InternFromString("stream");
    str_cooperative = PyUnicode_InternFromString("cooperative");
    int_zero = PyLong_FromLong(0);
    if (!str_shared_mem || !str_stream || !str_cooperative || !int_zero)
        return NULL;
    PyObject *module = PyModule_Create(&fastlaunch_module);
    if (!module)
        return NULL;
    PyObject *type = PyType_FromSpec(&Launcher_spec);
    if (!type || PyModule_AddObject(module, "Launcher", type) < 0) {
        Py_XDECREF(type);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
