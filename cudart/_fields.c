/* Record integer members that refuse what their C type cannot hold, in C:
 * cudart._fields.IntegerField, which cudart._layout.integer_fields and
 * device_address_fields put over ctypes' own field where this module is built.
 *
 * ctypes masks an int its member cannot hold (`rec.count = 2**40` stores 0). The Python
 * descriptor that refuses it (cudart/_layout.py, which serves where this module is not
 * built or $CUDART_BACKEND=ctypes) costs a Python frame per store, several times
 * ctypes' own store. This one is ctypes' field with a range test in front: an exact int
 * within [low, high] goes straight to the field's own setter, C to C; anything else goes
 * to `slow(value)`, the Python conversion (cudart._convert), which raises or returns
 * what ctypes stores. Reading is the field's own getter, called from C.
 *
 * `release` (a CUdeviceptr member, else None) is a ctypes object stored before an int
 * where the record may keep something: ctypes keeps nothing for an int, so without it
 * the object the member last kept alive (a device array) would stay kept until another
 * object is stored there.
 *
 * Immutable once made: nothing to lock on a free-threaded interpreter. Hand-written,
 * version-independent; the limited API of 3.11 where the interpreter has a GIL.
 */
#include "_capi.h"
#include "_cint.h"

#include <limits.h>
#include <stddef.h>

typedef struct {
    PyObject_HEAD
    PyObject *field;   /* ctypes' CField */
    descrgetfunc get;  /* its type's tp_descr_get, tp_descr_set */
    descrsetfunc set;
    long long low;     /* the C type's range: low < 0 (signed) or low == 0 */
    unsigned long long high;
    PyObject *slow;    /* slow(value) -> what the field stores, or raises */
    PyObject *release; /* stored before an int, or None */
    PyObject *offset;  /* the field's, as ctypes reports them */
    PyObject *size;
    PyObject *name;
} IntegerField;

/* Whether `value` (an int) is within the member's range: the one rule (cudart/_cint.h). */
static int
in_range(IntegerField *self, PyObject *value)
{
    unsigned long long bits;
    int status = cudart_cint(value, self->low, self->high, &bits);
    if (status < 0) {
        PyErr_Clear();
    }
    return status == 0;
}

/* "_objects" and "_b_base_", interned once (fields_exec). */
static PyObject *objects_name, *base_name;

/* Whether ctypes may keep something for a member of `obj`: a record that keeps nothing
 * (its `_objects` None) and is no view of another (its `_b_base_` None, where a view's
 * keeps live) needs no release store before an int. 1, 0, or -1 with an exception. */
static int
may_keep(PyObject *obj)
{
    PyObject *found = PyObject_GetAttr(obj, objects_name);
    if (found == NULL) {
        return -1;
    }
    int keeps = found != Py_None;
    Py_DECREF(found);
    if (keeps) {
        return 1;
    }
    found = PyObject_GetAttr(obj, base_name);
    if (found == NULL) {
        return -1;
    }
    keeps = found != Py_None;
    Py_DECREF(found);
    return keeps;
}

static int
field_set(IntegerField *self, PyObject *obj, PyObject *value)
{
    if (value != NULL && PyLong_CheckExact(value) && in_range(self, value)) {
        if (self->release != Py_None) {
            int keeps = may_keep(obj);
            if (keeps < 0 || (keeps && self->set(self->field, obj, self->release) < 0)) {
                return -1;
            }
        }
        return self->set(self->field, obj, value);
    }
    if (value == NULL) {
        return self->set(self->field, obj, NULL); /* del: ctypes refuses it */
    }
    PyObject *stored = PyObject_CallFunctionObjArgs(self->slow, value, NULL);
    if (stored == NULL) {
        return -1;
    }
    int status = self->set(self->field, obj, stored);
    Py_DECREF(stored);
    return status;
}

static PyObject *
field_get(IntegerField *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        Py_INCREF((PyObject *)self);
        return (PyObject *)self;
    }
    return self->get(self->field, obj, type);
}

static PyObject *
field_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *field, *low, *high, *slow, *release, *name;
    static char *keywords[] = {"field", "low", "high", "slow", "release", "name", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!O!OOU", keywords, &field, &PyLong_Type,
                                     &low, &PyLong_Type, &high, &slow, &release, &name)) {
        return NULL;
    }
    descrgetfunc get = (descrgetfunc)PyType_GetSlot(Py_TYPE(field), Py_tp_descr_get);
    descrsetfunc set = (descrsetfunc)PyType_GetSlot(Py_TYPE(field), Py_tp_descr_set);
    if (get == NULL || set == NULL) {
        PyErr_SetString(PyExc_TypeError, "field must be a data descriptor (ctypes' CField)");
        return NULL;
    }
    long long lo = PyLong_AsLongLong(low);
    if (lo == -1 && PyErr_Occurred()) {
        return NULL;
    }
    unsigned long long hi = PyLong_AsUnsignedLongLong(high);
    if (hi == (unsigned long long)-1 && PyErr_Occurred()) {
        return NULL;
    }
    if (lo > 0) {
        PyErr_SetString(PyExc_ValueError, "low must be 0 or negative");
        return NULL;
    }
    PyObject *offset = PyObject_GetAttrString(field, "offset");
    PyObject *size = offset ? PyObject_GetAttrString(field, "size") : NULL;
    if (size == NULL) {
        Py_XDECREF(offset);
        return NULL;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    IntegerField *self = (IntegerField *)alloc(type, 0);
    if (self == NULL) {
        Py_DECREF(offset);
        Py_DECREF(size);
        return NULL;
    }
    Py_INCREF(field);
    Py_INCREF(slow);
    Py_INCREF(release);
    Py_INCREF(name);
    self->field = field;
    self->get = get;
    self->set = set;
    self->low = lo;
    self->high = hi;
    self->slow = slow;
    self->release = release;
    self->offset = offset;
    self->size = size;
    self->name = name;
    return (PyObject *)self;
}

static int
field_traverse(IntegerField *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE((PyObject *)self));
    Py_VISIT(self->field);
    Py_VISIT(self->slow);
    Py_VISIT(self->release);
    return 0;
}

static void
field_dealloc(IntegerField *self)
{
    PyTypeObject *type = Py_TYPE((PyObject *)self);
    PyObject_GC_UnTrack(self);
    Py_CLEAR(self->field);
    Py_CLEAR(self->slow);
    Py_CLEAR(self->release);
    Py_CLEAR(self->offset);
    Py_CLEAR(self->size);
    Py_CLEAR(self->name);
    freefunc free = (freefunc)PyType_GetSlot(type, Py_tp_free);
    free(self);
    Py_DECREF(type);
}

static PyObject *
field_repr(IntegerField *self)
{
    return PyUnicode_FromFormat("<IntegerField %U offset=%S size=%S>", self->name, self->offset,
                                self->size);
}

static PyObject *
get_offset(IntegerField *self, void *closure)
{
    Py_INCREF(self->offset);
    return self->offset;
}

static PyObject *
get_size(IntegerField *self, void *closure)
{
    Py_INCREF(self->size);
    return self->size;
}

static PyObject *
get_name(IntegerField *self, void *closure)
{
    Py_INCREF(self->name);
    return self->name;
}

static PyGetSetDef field_getset[] = {
    {"offset", (getter)get_offset, NULL, "the member's offset, as ctypes' field says", NULL},
    {"size", (getter)get_size, NULL, "the member's size, as ctypes' field says", NULL},
    {"name", (getter)get_name, NULL, "the member's name", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot field_slots[] = {
    {Py_tp_doc, "A record's integer member: ctypes' field, with its C type's range checked "
                "on each store (cudart._layout.integer_fields)."},
    {Py_tp_new, field_new},
    {Py_tp_dealloc, field_dealloc},
    {Py_tp_traverse, field_traverse},
    {Py_tp_descr_get, field_get},
    {Py_tp_descr_set, field_set},
    {Py_tp_repr, field_repr},
    {Py_tp_getset, field_getset},
    {0, NULL},
};

static PyType_Spec field_spec = {
    .name = "cudart._fields.IntegerField",
    .basicsize = sizeof(IntegerField),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .slots = field_slots,
};

static int
fields_exec(PyObject *module)
{
    if (objects_name == NULL) {
        objects_name = PyUnicode_InternFromString("_objects");
        base_name = PyUnicode_InternFromString("_b_base_");
        if (objects_name == NULL || base_name == NULL) {
            return -1;
        }
    }
    PyObject *type = PyType_FromSpec(&field_spec);
    if (type == NULL) {
        return -1;
    }
    if (PyModule_AddObject(module, "IntegerField", type) < 0) {
        Py_DECREF(type);
        return -1;
    }
    return 0;
}

static PyModuleDef_Slot fields_module_slots[] = {
    {Py_mod_exec, fields_exec},
#ifdef Py_GIL_DISABLED
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef fields_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "cudart._fields",
    .m_doc = "Record integer members whose stores are range-checked in C (cudart._layout).",
    .m_size = 0,
    .m_slots = fields_module_slots,
};

PyMODINIT_FUNC
PyInit__fields(void)
{
    return PyModuleDef_Init(&fields_module);
}
