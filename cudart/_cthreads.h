/* The compiled modules' synchronization, written once (issue 25). Included by _capi.h.
 *
 * With a GIL, the GIL orders everything C does between two Python calls, and the lock
 * and critical-section macros are nothing: a GIL build pays nothing for them. Without
 * one (Py_GIL_DISABLED), they are CPython's PyMutex and per-object critical sections.
 * The atomics are GCC's builtins in both builds: an acquire load and a release store of
 * a pointer are plain moves on x86-64 (and ldar/stlr on AArch64), and they make the
 * C-level data races of the free-threaded build defined.
 *
 * Rules for their users:
 *  - never hold a CUDART_LOCK across Py_BEGIN_ALLOW_THREADS or a call into Python code:
 *    that code (a finalizer, a host callback, a converter) may come back to the same
 *    lock on this thread, and a PyMutex is not reentrant; take references under the
 *    lock, call and release them after it;
 *  - a critical section (CUDART_BEGIN_CRITICAL(o)) is suspended whenever its thread
 *    blocks or calls into code that does (CPython's rule), so it orders the C that runs
 *    between Python calls, never across them: code that calls Python inside one must
 *    check afterwards that what it read is still current (the launcher's generation).
 */
#ifndef CUDART_CTHREADS_H
#define CUDART_CTHREADS_H

#ifdef Py_GIL_DISABLED
#define CUDART_FREE_THREADED 1
typedef PyMutex cudart_mutex;
#define CUDART_MUTEX_INIT {0}
#define CUDART_LOCK(m) PyMutex_Lock(m)
#define CUDART_UNLOCK(m) PyMutex_Unlock(m)
#define CUDART_BEGIN_CRITICAL(o) Py_BEGIN_CRITICAL_SECTION(o)
#define CUDART_END_CRITICAL() Py_END_CRITICAL_SECTION()
#else
#define CUDART_FREE_THREADED 0
typedef char cudart_mutex;
#define CUDART_MUTEX_INIT 0
#define CUDART_LOCK(m) ((void)(m))
#define CUDART_UNLOCK(m) ((void)(m))
#define CUDART_BEGIN_CRITICAL(o) {
#define CUDART_END_CRITICAL() }
#endif

/* A value published by one thread and read by others: the reader sees everything the
 * publisher wrote before it (acquire/release), or, relaxed, just an untorn value. */
#define CUDART_LOAD_ACQUIRE(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#define CUDART_LOAD_RELAXED(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#define CUDART_STORE_RELEASE(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#define CUDART_STORE_RELAXED(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELAXED)
#define CUDART_ADD_RELAXED(p, n) ((void)__atomic_fetch_add(&(p), (n), __ATOMIC_RELAXED))

/* Publish `made` (a new reference) into the empty `*slot` once: returns the object that
 * is there now, a borrowed reference that stays valid as long as the slot is never
 * cleared. Where another thread published first, `made` is released and its object
 * returned: every thread then uses the one object, and none is freed under a reader. */
static inline PyObject *cudart_publish_once(PyObject **slot, PyObject *made)
{
    PyObject *expected = NULL;
    if (__atomic_compare_exchange_n(slot, &expected, made, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return made;
    Py_DECREF(made);
    return expected;
}

/* A reference kept forever: where a module replaces a reference that C functions read
 * without holding one (the checked functions' helpers and classes, replaced when
 * checked() runs again), the old object is parked here, not released, so a call that
 * loaded it a moment before still finds it alive. Bounded by how often checked() runs
 * (once per checked module in use). 0, or -1 with an exception. */
static inline int cudart_retire(PyObject *old)
{
    static PyObject *cudart_retired;
    static cudart_mutex cudart_retired_lock = CUDART_MUTEX_INIT;
    if (!old)
        return 0;
    int r = 0;
    CUDART_LOCK(&cudart_retired_lock);
    /* PyList_New and PyList_Append call no Python code. */
    if (!cudart_retired)
        cudart_retired = PyList_New(0);
    r = cudart_retired ? PyList_Append(cudart_retired, old) : -1;
    CUDART_UNLOCK(&cudart_retired_lock);
    Py_DECREF(old);
    return r;
}

/* The module slots of multi-phase init that say how its state may be shared, where the
 * API in use has them (3.12 and 3.13 on; never in the limited API of 3.11): the state is
 * static (one interpreter per process), and no GIL is needed (a free-threaded
 * interpreter keeps it off when it imports the module). */
#ifdef Py_mod_multiple_interpreters
#define CUDART_SLOT_INTERPRETERS \
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#else
#define CUDART_SLOT_INTERPRETERS
#endif
#ifdef Py_mod_gil
#define CUDART_SLOT_GIL {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#else
#define CUDART_SLOT_GIL
#endif
#define CUDART_MODULE_THREAD_SLOTS CUDART_SLOT_INTERPRETERS CUDART_SLOT_GIL

/* The same rule where the slot is unknown (the limited API of 3.11, whose interpreters
 * would refuse it): a module exec'd in another interpreter than the main one (id 0)
 * raises ImportError rather than share the static state across interpreters. 0 or -1. */
static inline int cudart_main_interpreter_only(const char *name)
{
    if (PyInterpreterState_GetID(PyInterpreterState_Get()) == 0)
        return 0;
    PyErr_Format(PyExc_ImportError, "%s keeps its state per process: it loads in the main "
                 "interpreter only", name);
    return -1;
}

#endif /* CUDART_CTHREADS_H */
