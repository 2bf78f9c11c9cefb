/* The checked layer compiled (issue 23): the converters and helpers of the C checked
 * functions that generator/render/fast_checked.py emits into generated/_fast_<major>.c,
 * after _fastcall.h (whose output readers and recorder they share).
 *
 * A C checked function takes the happy path only. Each converter returns 1 with the
 * value C takes, or 0 for anything it does not take as is, never raising: the function
 * then calls the Python checked function it stands for (the reference) with the same
 * arguments, so every refusal raises what the reference raises. The converters accept
 * only what the reference's own fast path passes on unchanged (an exact int in range,
 * an object of exactly the handle class, ...; fast_checked.py lists them).
 *
 * A failed status raises the per-code class the reference's `_error(code, _lib)` makes,
 * with the same arguments: made once per code by the reference's factory, then kept
 * (class and arguments) and raised from C.
 */
#ifndef CUDART_FASTCHECKED_H
#define CUDART_FASTCHECKED_H

#include <stddef.h>
#include <stdint.h>
#include <structmember.h>

/* Replace a reference that the C functions read without holding one of their own (a
 * helper, a class, a reference function): the old one is retired, never released
 * (_cthreads.h), so a call of another thread that loaded it a moment before still finds
 * it alive. 0, or -1 with an exception. */
#define CUDART_REPLACE(dst, src)                                                          \
    cudart_retire((PyObject *)__atomic_exchange_n(&(dst), (src), __ATOMIC_ACQ_REL))

/* ---------------------------------------------------------------- converters */

/* An exact int within [low, high], by cudart/_cint.h's one range rule. */
static inline int cudart_c_signed(PyObject *o, long long low, long long high, long long *out)
{
    unsigned long long v;
    if (!PyLong_CheckExact(o) || cudart_cint(o, low, (unsigned long long)high, &v) != 0)
        return 0;
    *out = (long long)v;
    return 1;
}

static inline int cudart_c_unsigned(PyObject *o, unsigned long long high, unsigned long long *out)
{
    return PyLong_CheckExact(o) && cudart_cint(o, 0, high, out) == 0;
}

/* An enum: an object of its class or an exact int, whose value `member` says is one.
 * An object of the class is checked too: int.__new__(cudaMemcpyKind, 2**32 + 2) is of
 * the class and no member, and C's int would take it as 2. */
static inline int cudart_c_enum(PyObject *o, PyTypeObject *cls, int (*member)(long long),
                                long long *out)
{
    int overflow = 0;
    long long v;
    if (Py_TYPE(o) != cls && !PyLong_CheckExact(o))
        return 0;
    v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    if (!member(v))
        return 0;
    *out = v;
    return 1;
}

static inline int cudart_c_double(PyObject *o, double *out)
{
    if (!PyFloat_CheckExact(o))
        return 0;
    *out = PyFloat_AsDouble(o);
    return 1;
}

/* An address: an int in [0, 2**64), None where `none` (NULL); where C reads a record,
 * not an int in [1, 64 KiB) (the reference refuses those). */
static inline int cudart_c_address(PyObject *o, int none, int record, void **out)
{
    if (o == Py_None) {
        *out = NULL;
        return none;
    }
    unsigned long long v;
    if (!cudart_c_unsigned(o, UINT64_MAX, &v) || (record && v && v < (1ULL << 16)))
        return 0;
    *out = (void *)(uintptr_t)v;
    return 1;
}

/* What a c_void_p object holds (its memory, as ctypes passes it). */
static inline int cudart_c_pointer_value(PyObject *o, void **out)
{
    Py_ssize_t at = cudart_memory_at();
    if (at >= 0) {
        memcpy(out, cudart_memory_of(o, at), sizeof(void *));
        return 1;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        return 0;
    }
    int ok = view.len >= (Py_ssize_t)sizeof(void *);
    if (ok)
        memcpy(out, view.buf, sizeof(void *));
    PyBuffer_Release(&view);
    return ok;
}

/* A handle: an object of exactly its class (a destroyed one is of a subclass), an
 * address, or None (NULL). */
static inline int cudart_c_handle(PyObject *o, PyTypeObject *cls, void **out)
{
    if (Py_TYPE(o) == cls)
        return cudart_c_pointer_value(o, out);
    return cudart_c_address(o, 1, 0, out);
}

/* ---------------------------------------------------------------- outputs */

/* A new handle object of `cls` holding the slot's address: the class's own C
 * constructor (ctypes'), no Python code. */
static inline PyObject *cudart_c_new_handle(PyTypeObject *cls, const void *slot)
{
    PyObject *h = PyObject_CallNoArgs((PyObject *)cls);
    if (!h)
        return NULL;
    Py_ssize_t at = cudart_memory_at();
    if (at >= 0) {
        memcpy(cudart_memory_of(h, at), slot, sizeof(void *));
        return h;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(h, &view, PyBUF_SIMPLE) < 0) {
        Py_DECREF(h);
        return NULL;
    }
    if (view.len >= (Py_ssize_t)sizeof(void *))
        memcpy(view.buf, slot, sizeof(void *));
    PyBuffer_Release(&view);
    return h;
}

/* An enum output: the member of `cls`, or the int where the enum lacks the value
 * (cudart._checked.enum_value). */
static inline PyObject *cudart_c_enum_value(PyTypeObject *cls, char code, const void *slot)
{
    PyObject *v = cudart_output_value(code, slot);
    if (!v)
        return NULL;
    PyObject *member = PyObject_CallFunctionObjArgs((PyObject *)cls, v, NULL);
    if (member) {
        Py_DECREF(v);
        return member;
    }
    if (!PyErr_ExceptionMatches(PyExc_ValueError)) {
        Py_DECREF(v);
        return NULL;
    }
    PyErr_Clear();
    return v;
}

/* ---------------------------------------------------------------- the reference */

/* The reference called with the arguments as given (positional and keywords). */
static inline PyObject *cudart_c_fallback(PyObject *reference, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    if (!reference) {
        PyErr_SetString(PyExc_RuntimeError, "a compiled checked function was not installed");
        return NULL;
    }
    PyObject *tuple = PyTuple_New(nargs);
    if (!tuple)
        return NULL;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        Py_INCREF(args[i]);
        PyTuple_SetItem(tuple, i, args[i]);
    }
    PyObject *kwargs = NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
    if (nkw > 0) {
        kwargs = PyDict_New();
        for (Py_ssize_t j = 0; kwargs && j < nkw; j++) {
            if (PyDict_SetItem(kwargs, PyTuple_GetItem(kwnames, j), args[nargs + j]) < 0)
                Py_CLEAR(kwargs);
        }
        if (!kwargs) {
            Py_DECREF(tuple);
            return NULL;
        }
    }
    PyObject *r = PyObject_Call(reference, tuple, kwargs);
    Py_DECREF(tuple);
    Py_XDECREF(kwargs);
    return r;
}

/* ---------------------------------------------------------------- helpers from Python */

/* Set by a view's checked() (cudart_checked_install) from the checked module it serves:
 * its `_error` and `_lib` (the view's, cudart_view), and cudart._checked's lifetime and
 * callback helpers (one module for every view). */
static PyObject *cudart_claim, *cudart_unclaim, *cudart_destroyed;
static PyObject *cudart_failures, *cudart_report_failures;

/* Each code's (class, arguments) once made (codes below CUDART_ERROR_CACHE), per view
 * (its checked module's classes): one tuple,
 * so a reader never pairs one thread's class with another's arguments. Read and written
 * under cudart_error_lock, which only ever covers the load or store and a reference
 * count: the calls (the class, the factory) and the releases, which may run Python code
 * that raises the same way, come after it. */
static cudart_mutex cudart_error_lock = CUDART_MUTEX_INIT;

static inline void cudart_forget_errors(cudart_view *view)
{
    for (int i = 0; i < CUDART_ERROR_CACHE; i++) {
        CUDART_LOCK(&cudart_error_lock);
        PyObject *old = view->errors[i];
        view->errors[i] = NULL;
        CUDART_UNLOCK(&cudart_error_lock);
        Py_XDECREF(old);
    }
}

/* The cached (class, arguments) of `code`, a new reference, or NULL. */
static inline PyObject *cudart_cached_error(cudart_view *view, long long code)
{
    CUDART_LOCK(&cudart_error_lock);
    PyObject *entry = view->errors[code];
    Py_XINCREF(entry);
    CUDART_UNLOCK(&cudart_error_lock);
    return entry;
}

/* Keep `entry` (stolen) for `code`; another thread's, kept first, stays. */
static inline void cudart_cache_error(cudart_view *view, long long code, PyObject *entry)
{
    CUDART_LOCK(&cudart_error_lock);
    PyObject *had = view->errors[code];
    if (!had)
        view->errors[code] = entry;
    CUDART_UNLOCK(&cudart_error_lock);
    if (had)
        Py_DECREF(entry);
}

/* Raise the reference's exception for a failed status; returns NULL. */
static inline PyObject *cudart_c_raise(cudart_view *view, long long code)
{
    int cached = code >= 0 && code < CUDART_ERROR_CACHE;
    PyObject *entry = cached ? cudart_cached_error(view, code) : NULL;
    if (entry) {
        PyObject *cls = PyTuple_GetItem(entry, 0);
        PyObject *exc = PyObject_Call(cls, PyTuple_GetItem(entry, 1), NULL);
        if (exc) {
            PyErr_SetObject(cls, exc);
            Py_DECREF(exc);
        }
        Py_DECREF(entry);
        return NULL;
    }
    PyObject *number = PyLong_FromLongLong(code);
    PyObject *exc = number ? PyObject_CallFunctionObjArgs(CUDART_LOAD_ACQUIRE(view->make_error),
                                                          number,
                                                          CUDART_LOAD_ACQUIRE(view->error_lib),
                                                          NULL)
                           : NULL;
    Py_XDECREF(number);
    if (!exc)
        return NULL;
    PyObject *cls = (PyObject *)Py_TYPE(exc);
    if (cached) {
        PyObject *args = PyObject_GetAttrString(exc, "args");
        /* Another thread may have made it meanwhile (the factory is Python code). */
        PyObject *made = args && PyTuple_Check(args) ? PyTuple_Pack(2, cls, args) : NULL;
        Py_XDECREF(args);
        if (made)
            cudart_cache_error(view, code, made);
        else
            PyErr_Clear();
    }
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
    return NULL;
}

/* After a wait: a host callback's failure is raised as the reference's wrapper does
 * (cudart._checked._reporting_callback_failures). 0, or -1 with it raised. */
static inline int cudart_c_report(const char *name, long long status, PyObject *first)
{
    Py_ssize_t pending = PyObject_Size(cudart_failures);
    if (pending <= 0)
        return (int)pending; /* -1: raised */
    PyObject *r = PyObject_CallFunction(cudart_report_failures, "sLO", name, status,
                                        first ? first : Py_None);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* A helper's call (claim, unclaim, destroyed) with a handle and two strings; 0 or -1. */
static inline int cudart_c_helper(PyObject *helper, PyObject *value, const char *a, const char *b)
{
    PyObject *r = b ? PyObject_CallFunction(helper, "Oss", value, a, b)
                    : PyObject_CallFunctionObjArgs(helper, value, NULL);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static inline PyObject *cudart_attribute(PyObject *o, const char *name)
{
    return PyObject_GetAttrString(o, name);
}

/* Put each of `n` new references (`made`, NULL where its look-up failed) into its
 * static slot, retiring what was there (calls on other threads may hold the old ones,
 * borrowed): all of them, or, where any is NULL, none, with every one released. 0, or -1
 * with the look-up's exception. */
static inline int cudart_replace_all(PyObject **const slots[], PyObject *made[], int n)
{
    int missing = 0;
    for (int i = 0; i < n; i++)
        missing |= made[i] == NULL;
    int r = missing ? -1 : 0;
    for (int i = 0; i < n; i++) {
        if (missing)
            Py_XDECREF(made[i]);
        else
            r |= CUDART_REPLACE(*slots[i], made[i]);
    }
    return r ? -1 : 0;
}

/* ---------------------------------------------------------------- the destroy's mark */

/* cudart._handles' mark lock's acquire and release, its made-once destroyed classes
 * (`_destroyed_class`), and "__class__": what `cudart_c_claim` does Python's `claim` with. */
static PyObject *cudart_mark_acquire, *cudart_mark_release, *cudart_dead_class_of;
static PyObject *cudart_class_attribute;

/* One destroy's call site: its function, and the destroyed subclass of its handle class
 * (`live`) once fetched. Read and written under the mark lock only. */
typedef struct {
    const char *function;
    PyObject *live, *dead;
} cudart_claim_site;

static inline int cudart_mark_lock(int take)
{
    PyObject *r = PyObject_CallNoArgs(take ? cudart_mark_acquire : cudart_mark_release);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* With the mark lock held: the site's destroyed class of `live`, fetched on first use
 * with the lock let go meanwhile (making a class may run any Python code). 0 with the
 * lock held, or -1 with it let go. */
static inline int cudart_claim_site_ready(cudart_claim_site *site, PyTypeObject *live)
{
    if (site->live == (PyObject *)live)
        return 0;
    if (cudart_mark_lock(0) < 0)
        return -1;
    PyObject *dead = PyObject_CallFunction(cudart_dead_class_of, "Os", (PyObject *)live,
                                           site->function);
    if (!dead)
        return -1;
    if (cudart_mark_lock(1) < 0) {
        Py_DECREF(dead);
        return -1;
    }
    /* Under the mark lock, which every reader of the site holds. The old classes stay
     * alive in cudart._handles' table of destroyed classes. */
    PyObject *old_live = site->live, *old_dead = site->dead;
    Py_INCREF((PyObject *)live);
    site->live = (PyObject *)live;
    site->dead = dead;
    Py_XDECREF(old_live);
    Py_XDECREF(old_dead);
    return 0;
}

/* Before C destroys `value`, an object of exactly its handle class `live` holding
 * `address`: mark it, as cudart._handles.claim does (the check and the mark one step
 * under its lock, so of threads destroying one object only one reaches C). NULL is not
 * marked. An object another thread marked first goes to Python's claim, which raises
 * its HandleDestroyedError. 1: marked, 0: not, -1: raised. */
static inline int cudart_c_claim(PyObject *value, void *address, PyTypeObject *live,
                                 cudart_claim_site *site, const char *parameter)
{
    if (!address)
        return 0;
    if (cudart_mark_lock(1) < 0 || cudart_claim_site_ready(site, live) < 0)
        return -1;
    int marked = Py_TYPE(value) != live                                         ? 0
                 : PyObject_SetAttr(value, cudart_class_attribute, site->dead) == 0 ? 1
                                                                                : -1;
    if (marked < 0) {
        PyObject *type, *error, *traceback;
        PyErr_Fetch(&type, &error, &traceback);
        cudart_mark_lock(0);
        PyErr_Restore(type, error, traceback);
        return -1;
    }
    if (cudart_mark_lock(0) < 0)
        return -1;
    if (marked)
        return 1;
    PyObject *r = PyObject_CallFunction(cudart_claim, "Oss", value, parameter, site->function);
    if (!r)
        return -1;
    marked = PyObject_IsTrue(r);
    Py_DECREF(r);
    return marked;
}

/* Take the mark lock and classes from cudart._handles, which `helpers` imports; 0 or -1. */
static inline int cudart_claim_helpers(PyObject *helpers)
{
    PyObject *handles = cudart_attribute(helpers, "_handles");
    PyObject *lock = handles ? cudart_attribute(handles, "_mark_lock") : NULL;
    PyObject *dead_class_of = handles ? cudart_attribute(handles, "_destroyed_class") : NULL;
    PyObject *acquire = lock ? cudart_attribute(lock, "acquire") : NULL;
    PyObject *release = lock ? cudart_attribute(lock, "release") : NULL;
    PyObject *class_attribute = PyUnicode_InternFromString("__class__");
    Py_XDECREF(lock);
    Py_XDECREF(handles);
    PyObject **const slots[] = {&cudart_dead_class_of, &cudart_mark_acquire,
                                &cudart_mark_release, &cudart_class_attribute};
    PyObject *made[] = {dead_class_of, acquire, release, class_attribute};
    return cudart_replace_all(slots, made, 4);
}

/* Take `helpers` (cudart._checked) and the checked module's namespace; 0 or -1. */
static inline int cudart_checked_helpers(cudart_view *view, PyObject *helpers,
                                         PyObject *namespace)
{
    PyObject *make_error = PyDict_GetItemString(namespace, "_error");
    PyObject *lib = PyDict_GetItemString(namespace, "_lib");
    if (!make_error || !lib) {
        PyErr_SetString(PyExc_LookupError, "the checked module has no _error or _lib");
        return -1;
    }
    Py_INCREF(make_error);
    Py_INCREF(lib);
    PyObject **const slots[] = {&view->make_error,  &view->error_lib,       &cudart_claim,
                                &cudart_unclaim,    &cudart_destroyed,      &cudart_failures,
                                &cudart_report_failures};
    PyObject *made[] = {
        make_error,
        lib,
        cudart_attribute(helpers, "claim"),
        cudart_attribute(helpers, "unclaim"),
        cudart_attribute(helpers, "destroyed"),
        cudart_attribute(helpers, "CALLBACK_FAILURES_UNRAISED"),
        cudart_attribute(helpers, "report_callback_failures"),
    };
    int found = made[2] && made[3] && made[4] && made[5] && made[6];
    int r = cudart_replace_all(slots, made, 7);
    if (found)
        cudart_forget_errors(view); /* made by the error factory replaced above */
    return r || cudart_claim_helpers(helpers) < 0 ? -1 : 0;
}

/* A class of the raw module (a handle or enum class), kept in *slot; 0 or -1. */
static inline int cudart_checked_class(PyObject *raw, const char *name, PyTypeObject **slot)
{
    PyObject *cls = PyObject_GetAttrString(raw, name);
    if (cls && !PyType_Check(cls)) {
        PyErr_Format(PyExc_TypeError, "%s of the raw module is not a class", name);
        Py_CLEAR(cls);
    }
    if (!cls)
        return -1;
    return CUDART_REPLACE(*slot, (PyTypeObject *)cls);
}

/* ---------------------------------------------------------------- the function objects */

/* A compiled checked function is an object of its own type, not a builtin function: it
 * has a __dict__, where cudart._checked.compile_checked puts what functools.wraps puts
 * (its reference as __wrapped__, the reference's __name__, __doc__, __annotations__),
 * so inspect.signature, help() and inspect.getsource see the Python function's own. It
 * is called through vectorcall, as a builtin function is: the slot and flag are CPython's
 * stable ABI (the limited API names them from 3.12; 3.11 has them at these values). */
#define CUDART_TPFLAGS_HAVE_VECTORCALL (1UL << 11)
#define CUDART_NARGS(nargsf) ((Py_ssize_t)((nargsf) & ~((size_t)1 << (8 * sizeof(size_t) - 1))))

typedef struct {
    PyObject_HEAD
    PyObject *dict;
    cudart_vectorcall call;
    cudart_view *view; /* the view it serves */
} cudart_checked_object;

/* The view a compiled checked function serves (`self` is the function object). */
static inline cudart_view *cudart_checked_view(PyObject *self)
{
    return ((cudart_checked_object *)self)->view;
}

static PyObject *cudart_checked_type; /* made once, by cudart_checked_new (published once) */

/* A call through tp_call (PyObject_Call with a tuple): as the vectorcall. */
static PyObject *cudart_checked_tp_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    Py_ssize_t n = PyTuple_Size(args), k = kwargs ? PyDict_Size(kwargs) : 0;
    PyObject **items = PyMem_Malloc(sizeof(PyObject *) * (size_t)(n + k + 1));
    PyObject *names = k ? PyTuple_New(k) : NULL;
    if (!items || (k && !names)) {
        PyMem_Free(items);
        Py_XDECREF(names);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++)
        items[i] = PyTuple_GetItem(args, i);
    Py_ssize_t pos = 0, j = 0;
    PyObject *key, *value;
    while (k && PyDict_Next(kwargs, &pos, &key, &value)) {
        Py_INCREF(key);
        PyTuple_SetItem(names, j, key);
        items[n + j++] = value;
    }
    PyObject *r = ((cudart_checked_object *)self)->call(self, items, (size_t)n, names);
    PyMem_Free(items);
    Py_XDECREF(names);
    return r;
}

/* A function at a module's top level is never bound as a method: taken from a class, it
 * stays itself (and pydoc documents it as a routine). */
static PyObject *cudart_checked_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)obj;
    (void)type;
    Py_INCREF(self);
    return self;
}

static PyObject *cudart_checked_repr(PyObject *self)
{
    PyObject *name = PyObject_GetAttrString(self, "__qualname__");
    PyObject *r = name ? PyUnicode_FromFormat("<compiled checked function %U>", name) : NULL;
    Py_XDECREF(name);
    return r;
}

static void cudart_checked_dealloc(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    Py_XDECREF(((cudart_checked_object *)self)->dict);
    PyObject_Free(self);
    Py_DECREF(type);
}

static PyMemberDef cudart_checked_members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(cudart_checked_object, dict), READONLY, NULL},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(cudart_checked_object, call), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

/* Pickled (and copied) by name, as a function is: the module's attribute of its name. */
static PyObject *cudart_checked_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyObject_GetAttrString(self, "__qualname__");
}

static PyMethodDef cudart_checked_methods[] = {
    {"__reduce__", cudart_checked_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef cudart_checked_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot cudart_checked_slots[] = {
    {Py_tp_getset, cudart_checked_getset},
    {Py_tp_methods, cudart_checked_methods},
    {Py_tp_call, cudart_checked_tp_call},
    {Py_tp_descr_get, cudart_checked_get},
    {Py_tp_repr, cudart_checked_repr},
    {Py_tp_dealloc, cudart_checked_dealloc},
    {Py_tp_members, cudart_checked_members},
    {Py_tp_doc, (void *)"A checked function compiled (issue 23): its __wrapped__ is the Python one."},
    {0, NULL},
};

static PyType_Spec cudart_checked_spec = {
    "cudart.compiled_checked_function",
    sizeof(cudart_checked_object),
    0,
    Py_TPFLAGS_DEFAULT | CUDART_TPFLAGS_HAVE_VECTORCALL,
    cudart_checked_slots,
};

/* A new compiled checked function calling `call`; NULL with an exception set. */
static inline PyObject *cudart_checked_new(cudart_vectorcall call, cudart_view *view)
{
    PyObject *type = CUDART_LOAD_ACQUIRE(cudart_checked_type);
    if (!type) {
        PyObject *made = PyType_FromSpec(&cudart_checked_spec);
        if (!made)
            return NULL;
        type = cudart_publish_once(&cudart_checked_type, made);
    }
    cudart_checked_object *f = PyObject_New(cudart_checked_object, (PyTypeObject *)type);
    if (!f)
        return NULL; /* (PyObject_Init took a reference to the heap type) */
    f->dict = PyDict_New();
    f->call = call;
    f->view = view;
    if (!f->dict) {
        Py_DECREF(f);
        return NULL;
    }
    return (PyObject *)f;
}

/* ---------------------------------------------------------------- a view's checked() */

/* checked(reference, helpers, namespace) -> {name: function}: the view's compiled checked
 * functions standing for those of `reference` (name -> the Python checked function),
 * with `helpers` (cudart._checked) and the checked module's namespace (its _error and
 * _lib). cudart._checked.compile_checked gives each its reference's name, docs and
 * signature (functools.update_wrapper). */
static PyObject *cudart_checked_install(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    cudart_view *view = cudart_view_of(self);
    if (cudart_arity("checked", nargs, 3) < 0)
        return NULL;
    PyObject *reference = args[0], *namespace = args[2];
    if (!PyDict_Check(reference) || !PyDict_Check(namespace)) {
        PyErr_SetString(PyExc_TypeError, "checked(reference, helpers, namespace): two dicts");
        return NULL;
    }
    if (cudart_checked_helpers(view, args[1], namespace) < 0)
        return NULL;
    PyObject *raw = PyDict_GetItemString(namespace, "_lib");
    Py_ssize_t handles = 0;
    for (const int *i = view->handle_list; *i >= 0; i++, handles++)
        if (cudart_checked_class(raw, view->handle_names[*i], &view->handles[*i]) < 0)
            return NULL;
    for (const int *i = view->enum_list; *i >= 0; i++)
        if (cudart_checked_class(raw, view->enum_names[*i], &view->enums[*i]) < 0)
            return NULL;
    /* The handle classes the functions read and make (their memory is found once). */
    PyTypeObject ***classes = PyMem_Malloc(sizeof(PyTypeObject **) * (size_t)(handles + 1));
    if (!classes)
        return PyErr_NoMemory();
    for (Py_ssize_t n = 0; n < handles; n++)
        classes[n] = &view->handles[view->handle_list[n]];
    classes[handles] = NULL;
    cudart_checked_find_memory(cudart_c_void_p, (PyTypeObject **const *)classes);
    PyMem_Free(classes);
    /* The calls after which a host callback's failure is reported: name -> per stream. */
    PyObject *reporting = PyObject_GetAttrString(args[1], "_REPORTS_CALLBACK_FAILURES");
    if (reporting && !PyDict_Check(reporting)) {
        PyErr_SetString(PyExc_TypeError, "_REPORTS_CALLBACK_FAILURES is not a dict");
        Py_CLEAR(reporting);
    }
    PyObject *out = reporting ? PyDict_New() : NULL;
    for (const unsigned short *row = view->checked; out && *row != CUDART_NO_ROW; row++) {
        const cudart_checked_entry *e = &view->checked_table[*row];
        PyObject *ref = PyDict_GetItemString(reference, e->name);
        if (!ref)
            continue;
        CUDART_STORE_RELAXED(view->reports[e->index],
                             (char)(PyDict_GetItemString(reporting, e->name) != NULL));
        Py_INCREF(ref);
        PyObject *fn = CUDART_REPLACE(view->references[e->index], ref) < 0
                           ? NULL
                           : cudart_checked_new(e->call, view);
        if (!fn || PyDict_SetItemString(out, e->name, fn) < 0)
            Py_CLEAR(out);
        Py_XDECREF(fn);
    }
    Py_XDECREF(reporting);
    return out;
}

/* A view module's own functions besides the minor's: bind, variant, checked... */
static PyMethodDef cudart_view_support_methods[] = {
    CUDART_SUPPORT_METHODS
    {"checked", (PyCFunction)(void (*)(void))cudart_checked_install, METH_FASTCALL,
     "checked(reference, helpers, namespace) -> the compiled checked functions"},
    {NULL, NULL, 0, NULL},
};

/* The view's functions on its module, as PyModule_AddFunctions adds an array's: each
 * `self` the module, each `__module__` its name. */
static int cudart_add_functions(PyObject *module, cudart_view *view)
{
    PyObject *name = PyModule_GetNameObject(module);
    if (!name)
        return -1;
    int status = 0;
    for (const unsigned short *row = view->functions; !status && *row != CUDART_NO_ROW; row++) {
        PyMethodDef *def = &view->function_table[*row];
        PyObject *fn = PyCFunction_NewEx(def, module, name);
        status = fn ? PyModule_AddObjectRef(module, def->ml_name, fn) : -1;
        Py_XDECREF(fn);
    }
    Py_DECREF(name);
    return status;
}

/* The module of `view` (cudart._fast_<ver>), whose definition's methods are
 * cudart_view_support_methods: made on first use, then always that one
 * (published once: threads making it at once keep the first). A new reference. */
static PyObject *cudart_view_module(cudart_view *view)
{
    PyObject *module = CUDART_LOAD_ACQUIRE(view->module);
    if (module) {
        Py_INCREF(module);
        return module;
    }
    if (cudart_main_interpreter_only(view->def.m_name) < 0)
        return NULL;
    /* Its definition was readied by the extension's exec (PyModuleDef_Init), once. */
    module = PyModule_Create(&view->def);
    if (!module)
        return NULL;
#ifdef Py_GIL_DISABLED
    PyUnstable_Module_SetGIL(module, Py_MOD_GIL_NOT_USED);
#endif
    if (cudart_add_functions(module, view) < 0 ||
        PyModule_AddIntConstant(module, "CUDA_VERSION", view->cuda_version) < 0 ||
        PyModule_AddIntConstant(module, "BYREF_OFFSET", (long)cudart_byref_offset) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    module = cudart_publish_once(&view->module, module);
    Py_INCREF(module);
    return module;
}

#endif /* CUDART_FASTCHECKED_H */
