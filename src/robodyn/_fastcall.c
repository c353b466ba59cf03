/* robodyn._fastcall: one state through a compiled batch routine, called from Python without ctypes.
 *
 * A Caller wraps one routine of a library that robodyn.compile built and loaded (its address, taken from
 * ctypes), with the routine's constants k bound:
 *
 *     void NAME_ROUTINE_batch(const double *k, const double *x1, ..., double *out, size_t n_states)
 *
 * Calling it with the routine's joint arrays (each of n float64, or of its own length where ``lengths`` gives
 * one per array: a floating base's q of nq, the others of nv) runs the routine on that one state,
 * reading the arrays in place (no copies) and writing a new NumPy array made by ``empty(shape)``: what
 * ctypes spends converting arguments, and NumPy copying them into work buffers, is gone (PUMA inverse
 * dynamics: 0.26 us a call here, 1.3 us through ctypes). An argument that is not a float64 C-contiguous
 * buffer is converted by ``convert`` first. Nothing is shared between calls, so one Caller serves any
 * number of threads (each call holds the GIL: the routines take well under a microsecond on one state).
 *
 * ``strict``: an argument of another shape raises ValueError (``CompiledDynamics.one_state``); otherwise the
 * call returns NotImplemented, and the caller (the CompiledDynamics methods) takes its general batch path.
 * ``fallback``: a callable that gets every call that is not one state (a batch, ``out=`` or ``params=``, a
 * wrong shape), with the same arguments: a Caller with the method it stands for as fallback can be that method
 * on the instance (``CompiledDynamics`` installs it), so a call on one state skips the Python layers (0.2-0.3 us
 * of the PUMA's 0.6). Such a Caller also runs a plain batch itself: every joint array a float64 C-contiguous
 * (N, length) array of one N, and no keyword but ``out=`` (a writable C-contiguous float64 array of the result's
 * shape (N, ...) that overlaps no input, returned): the checks, the arrays' addresses and the call took 15-25 us
 * in Python (ctypes' conversions, NumPy's broadcasting), 1 us here; the GIL is released while a batch of 8 or
 * more states runs, as ctypes does. Anything else (broadcasting, params=, lists) is the fallback's.
 * ``__wrapped__`` and ``__doc__`` are the fallback's (``inspect.signature`` and ``help`` show the method). The
 * Caller takes part in the garbage collector's cycle search (fallback -> instance -> Caller).
 *
 * Only Python's C API is used (the buffer protocol, not NumPy's C API): nothing to build against but
 * Python.h. Built by setuptools as an optional extension; where it cannot be built, robodyn.compile keeps
 * its ctypes path.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <string.h>

#define MAX_INPUTS 3
#define MAX_TAIL 4   /* dimensions of one state's result: (n,), (n, n), (2, n, n), (F, 6, n), ... */
#define RELEASE_GIL 8  /* a batch of this many states or more runs without the GIL */

typedef void (*routine1)(const double *, const double *, double *, size_t);
typedef void (*routine2)(const double *, const double *, const double *, double *, size_t);
typedef void (*routine3)(const double *, const double *, const double *, const double *, double *, size_t);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    void *routine;
    Py_ssize_t inputs;  /* joint arrays: 1 to MAX_INPUTS */
    Py_ssize_t n;       /* their length (the first one's where lengths differ) */
    Py_ssize_t lengths[MAX_INPUTS];  /* each one's length */
    Py_ssize_t size;    /* the result's number of doubles */
    int strict;
    Py_buffer k;        /* the constants, held for the Caller's life */
    PyObject *k_owner;
    PyObject *empty;    /* empty(shape): a new float64 C-contiguous array */
    PyObject *shape;
    PyObject *convert;  /* convert(x): x as a float64 C-contiguous array */
    PyObject *keep;     /* whatever keeps the routine's library loaded */
    PyObject *name;     /* the robot's name, for messages */
    PyObject *fallback; /* called with any call that is not one state, or NULL */
    Py_ssize_t tail[MAX_TAIL];  /* shape: one state's result */
    Py_ssize_t tail_ndim;
} Caller;

/* 1 if view (asked with its shape and strides) has the shape of one state: n values in one dimension. */
static int state_shaped(const Py_buffer *view, Py_ssize_t n)
{
    return view->ndim == 1 && view->shape[0] == n;
}

/* 1 if view, of one state's shape, is n doubles in a row: read in place. */
static int in_place(const Py_buffer *view)
{
    return view->itemsize == 8 && view->strides[0] == 8 && view->format != NULL && strcmp(view->format, "d") == 0;
}

static int not_one_state(Caller *self, Py_ssize_t i)
{
    PyErr_Format(PyExc_ValueError, "one state of %R takes arrays of shape (%zd,) as argument %zd", self->name,
                 self->lengths[i], i + 1);
    return 0;
}

/* The buffer of one argument: 1 when it holds one state (view to release; converted first where it is not n
   doubles in a row), 0 when it is not one state (the error set), -1 when the conversion failed (its error set).
   A buffer of another shape (a batch handed to a method) is refused as it is, never converted first: the method
   converts it again on its own path. */
static int argument(Caller *self, Py_ssize_t i, PyObject *arg, Py_buffer *view, PyObject **converted)
{
    Py_ssize_t n = self->lengths[i];
    *converted = NULL;
    if (PyObject_GetBuffer(arg, view, PyBUF_STRIDES | PyBUF_FORMAT) == 0) {
        int shaped = state_shaped(view, n);
        if (shaped && in_place(view))
            return 1;
        PyBuffer_Release(view);
        if (!shaped)
            return not_one_state(self, i);
    } else {
        PyErr_Clear();  /* not a buffer (a list, say): converted below */
    }
    *converted = PyObject_CallOneArg(self->convert, arg);
    if (*converted == NULL)
        return -1;
    if (PyObject_GetBuffer(*converted, view, PyBUF_STRIDES | PyBUF_FORMAT) < 0) {
        Py_CLEAR(*converted);
        return -1;
    }
    if (state_shaped(view, n) && in_place(view))
        return 1;
    PyBuffer_Release(view);
    Py_CLEAR(*converted);
    return not_one_state(self, i);
}

static void run(Caller *self, const double **x, double *out, size_t n_states)
{
    const double *k = (const double *)self->k.buf;
    switch (self->inputs) {
    case 1:
        ((routine1)self->routine)(k, x[0], out, n_states);
        break;
    case 2:
        ((routine2)self->routine)(k, x[0], x[1], out, n_states);
        break;
    default:
        ((routine3)self->routine)(k, x[0], x[1], x[2], out, n_states);
        break;
    }
}

/* 1 if arg is a float64 C-contiguous (N, n) array with N >= 1 (*N set where it is -1, else N must match): its
   view held; else 0, nothing held and no error set. */
static int batch_view(PyObject *arg, Py_ssize_t n, Py_buffer *view, Py_ssize_t *N)
{
    if (PyObject_GetBuffer(arg, view, PyBUF_STRIDES | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        return 0;
    }
    if (view->ndim == 2 && view->shape[1] == n && view->shape[0] >= 1 && (*N < 0 || view->shape[0] == *N)
        && view->itemsize == 8 && view->format != NULL && strcmp(view->format, "d") == 0
        && view->strides[1] == 8 && view->strides[0] == 8 * n) {
        *N = view->shape[0];
        return 1;
    }
    PyBuffer_Release(view);
    return 0;
}

/* 1 if out is a writable float64 C-contiguous array of shape (N, tail...): its view held; else 0, nothing held. */
static int out_view(Caller *self, PyObject *out, Py_ssize_t N, Py_buffer *view)
{
    if (PyObject_GetBuffer(out, view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        return 0;
    }
    int ok = view->ndim == 1 + self->tail_ndim && view->shape[0] == N && view->itemsize == 8
             && view->format != NULL && strcmp(view->format, "d") == 0;
    for (Py_ssize_t d = 0; ok && d < self->tail_ndim; d++)
        ok = view->shape[1 + d] == self->tail[d];
    if (!ok)
        PyBuffer_Release(view);
    return ok;
}

static int overlap(const Py_buffer *a, const Py_buffer *b)
{
    const char *a0 = (const char *)a->buf, *b0 = (const char *)b->buf;
    return a0 < b0 + b->len && b0 < a0 + a->len;
}

/* A new empty (N, tail...) array. */
static PyObject *new_batch(Caller *self, Py_ssize_t N)
{
    PyObject *shape = PyTuple_New(1 + self->tail_ndim);
    if (shape == NULL)
        return NULL;
    for (Py_ssize_t d = 0; d <= self->tail_ndim; d++) {
        PyObject *size = PyLong_FromSsize_t(d == 0 ? N : self->tail[d - 1]);
        if (size == NULL) {
            Py_DECREF(shape);
            return NULL;
        }
        PyTuple_SET_ITEM(shape, d, size);
    }
    PyObject *result = PyObject_Vectorcall(self->empty, &shape, 1, NULL);
    Py_DECREF(shape);
    return result;
}

/* A plain batch (see the module's comment) run here: its result (out itself where given), NULL with an error set
   where it failed, or NULL with no error where the call is not a plain batch (then the fallback's). */
static PyObject *batch(Caller *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t keywords = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (nargs != self->inputs || keywords > 1
        || (keywords == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "out") != 0))
        return NULL;
    Py_buffer views[MAX_INPUTS], out;
    const double *x[MAX_INPUTS];
    Py_ssize_t held = 0, N = -1;
    PyObject *result = NULL;
    while (held < nargs && batch_view(args[held], self->lengths[held], &views[held], &N)) {
        x[held] = (const double *)views[held].buf;
        held++;
    }
    if (held == nargs) {
        if (keywords == 1 && out_view(self, args[nargs], N, &out)) {
            int clash = 0;
            for (Py_ssize_t i = 0; i < held; i++)
                clash |= overlap(&views[i], &out);
            if (!clash)
                result = Py_NewRef(args[nargs]);
            else
                PyBuffer_Release(&out);
        } else if (keywords == 0 && (result = new_batch(self, N)) != NULL) {
            if (PyObject_GetBuffer(result, &out, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
                Py_CLEAR(result);
            } else if (out.len != 8 * self->size * N) {
                PyBuffer_Release(&out);
                Py_CLEAR(result);
                PyErr_SetString(PyExc_RuntimeError, "empty(shape) made an array of another size");
            }
        }
        if (result != NULL) {
            if (N >= RELEASE_GIL) {
                Py_BEGIN_ALLOW_THREADS
                run(self, x, (double *)out.buf, (size_t)N);
                Py_END_ALLOW_THREADS
            } else {
                run(self, x, (double *)out.buf, (size_t)N);
            }
            PyBuffer_Release(&out);
        }
    }
    for (Py_ssize_t i = 0; i < held; i++)
        PyBuffer_Release(&views[i]);
    return result;
}

static PyObject *not_a_state(Caller *self)
{
    if (self->strict)
        return NULL;
    PyErr_Clear();
    Py_RETURN_NOTIMPLEMENTED;
}

/* The fallback's answer to a call that is not one state (its error cleared: the fallback gives its own). */
static PyObject *fall_back(Caller *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PyErr_Clear();
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

/* A call that is not one state, for a Caller with a fallback: a plain batch here, anything else the fallback's. */
static PyObject *batch_or_fall_back(Caller *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PyErr_Clear();
    PyObject *result = batch(self, args, PyVectorcall_NARGS(nargsf), kwnames);
    return result != NULL || PyErr_Occurred() ? result : fall_back(self, args, nargsf, kwnames);
}

static PyObject *caller_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Caller *self = (Caller *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != self->inputs || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0)) {
        if (self->fallback != NULL)
            return batch_or_fall_back(self, args, nargsf, kwnames);
        PyErr_Format(PyExc_TypeError, "one state of %R takes %zd joint arrays, got %zd", self->name,
                     self->inputs, nargs);
        return not_a_state(self);
    }
    Py_buffer views[MAX_INPUTS];
    PyObject *converted[MAX_INPUTS] = {NULL};
    const double *x[MAX_INPUTS];
    Py_ssize_t held = 0;
    PyObject *result = NULL;
    int other = 0;  /* not one state: the fallback's, after the views are released */
    for (; held < nargs; held++) {
        int got = argument(self, held, args[held], &views[held], &converted[held]);
        if (got != 1) {
            other = self->fallback != NULL;
            result = other ? NULL : (got == 0 || !self->strict) ? not_a_state(self) : NULL;
            goto done;
        }
        x[held] = (const double *)views[held].buf;
    }
    result = PyObject_Vectorcall(self->empty, &self->shape, 1, NULL);
    if (result != NULL) {
        Py_buffer out;
        if (PyObject_GetBuffer(result, &out, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
            Py_CLEAR(result);
        } else if (out.len != 8 * self->size) {
            PyBuffer_Release(&out);
            Py_CLEAR(result);
            PyErr_SetString(PyExc_RuntimeError, "empty(shape) made an array of another size");
        } else {
            run(self, x, (double *)out.buf, 1);
            PyBuffer_Release(&out);
        }
    }
done:
    for (Py_ssize_t i = 0; i < held; i++) {
        PyBuffer_Release(&views[i]);
        Py_XDECREF(converted[i]);
    }
    return other ? batch_or_fall_back(self, args, nargsf, kwnames) : result;
}

static PyObject *caller_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"address", "k", "inputs", "n", "size", "empty", "shape", "convert", "strict",
                               "keep", "name", "lengths", "fallback", NULL};
    PyObject *address, *k, *empty, *shape, *convert, *keep, *name, *given = NULL, *fallback = Py_None;
    Py_ssize_t inputs, n, size, lengths[MAX_INPUTS];
    int strict;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OnnnOO!OpOU|O!O:Caller", keywords, &PyLong_Type, &address,
                                     &k, &inputs, &n, &size, &empty, &PyTuple_Type, &shape, &convert, &strict,
                                     &keep, &name, &PyTuple_Type, &given, &fallback))
        return NULL;
    if (inputs < 1 || inputs > MAX_INPUTS || n < 1 || size < 1) {
        PyErr_SetString(PyExc_ValueError, "Caller: inputs must be 1 to 3, n and size positive");
        return NULL;
    }
    if (given != NULL && PyTuple_GET_SIZE(given) != inputs) {
        PyErr_SetString(PyExc_ValueError, "Caller: lengths must give one length per joint array");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < inputs; i++) {
        lengths[i] = given == NULL ? n : PyLong_AsSsize_t(PyTuple_GET_ITEM(given, i));
        if (lengths[i] < 1) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "Caller: lengths must be positive");
            return NULL;
        }
    }
    if (!PyCallable_Check(empty) || !PyCallable_Check(convert) || (fallback != Py_None && !PyCallable_Check(fallback))) {
        PyErr_SetString(PyExc_TypeError, "Caller: empty, convert and fallback must be callable");
        return NULL;
    }
    void *routine = PyLong_AsVoidPtr(address);
    if (routine == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "Caller: the routine's address is NULL");
        return NULL;
    }
    Caller *self = (Caller *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    if (PyObject_GetBuffer(k, &self->k, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->k_owner = Py_NewRef(k);
    if (self->k.itemsize != 8 || self->k.format == NULL || strcmp(self->k.format, "d") != 0 || self->k.len < 8) {
        Py_DECREF(self);
        PyErr_SetString(PyExc_ValueError, "Caller: k must be a float64 C-contiguous array of at least one value");
        return NULL;
    }
    self->vectorcall = caller_vectorcall;
    self->routine = routine;
    self->inputs = inputs;
    self->n = n;
    memcpy(self->lengths, lengths, sizeof(Py_ssize_t) * (size_t)inputs);
    self->size = size;
    self->strict = strict;
    self->empty = Py_NewRef(empty);
    self->shape = Py_NewRef(shape);
    self->convert = Py_NewRef(convert);
    self->keep = Py_NewRef(keep);
    self->name = Py_NewRef(name);
    self->fallback = fallback == Py_None ? NULL : Py_NewRef(fallback);
    self->tail_ndim = PyTuple_GET_SIZE(shape);
    if (self->tail_ndim > MAX_TAIL) {
        Py_DECREF(self);
        PyErr_SetString(PyExc_ValueError, "Caller: shape has more than 4 dimensions");
        return NULL;
    }
    for (Py_ssize_t d = 0; d < self->tail_ndim; d++) {
        self->tail[d] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, d));
        if (self->tail[d] < 0) {
            Py_DECREF(self);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "Caller: shape must hold sizes");
            return NULL;
        }
    }
    return (PyObject *)self;
}

static int caller_traverse(Caller *self, visitproc visit, void *arg)
{
    Py_VISIT(self->k_owner);
    Py_VISIT(self->empty);
    Py_VISIT(self->shape);
    Py_VISIT(self->convert);
    Py_VISIT(self->keep);
    Py_VISIT(self->name);
    Py_VISIT(self->fallback);
    return 0;
}

/* Breaks a cycle through the fallback (the only reference that can lead back to the Caller); calls on one state
   still work, the others answer as a Caller without fallback. */
static int caller_clear(Caller *self)
{
    Py_CLEAR(self->fallback);
    return 0;
}

static PyObject *caller_wrapped(Caller *self, void *closure)
{
    (void)closure;
    if (self->fallback == NULL) {
        PyErr_SetString(PyExc_AttributeError, "this Caller has no fallback: no __wrapped__");
        return NULL;
    }
    return Py_NewRef(self->fallback);
}

static PyObject *caller_doc(Caller *self, void *closure)
{
    (void)closure;
    if (self->fallback != NULL)
        return PyObject_GetAttrString(self->fallback, "__doc__");
    return PyUnicode_FromString(Py_TYPE(self)->tp_doc);
}

static PyGetSetDef caller_getset[] = {
    {"__wrapped__", (getter)caller_wrapped, NULL, "the method this Caller stands for (its fallback)", NULL},
    {"__doc__", (getter)caller_doc, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static void caller_dealloc(Caller *self)
{
    PyObject_GC_UnTrack(self);
    Py_CLEAR(self->fallback);
    if (self->k_owner != NULL) {
        PyBuffer_Release(&self->k);
        Py_CLEAR(self->k_owner);
    }
    Py_XDECREF(self->empty);
    Py_XDECREF(self->shape);
    Py_XDECREF(self->convert);
    Py_XDECREF(self->keep);
    Py_XDECREF(self->name);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *caller_repr(Caller *self)
{
    return PyUnicode_FromFormat("<one-state call of %U (%zd joint arrays of %zd)>", self->name, self->inputs,
                                self->n);
}

static PyTypeObject CallerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "robodyn._fastcall.Caller",
    .tp_doc = PyDoc_STR("A compiled routine on one state, called without ctypes (see the module's source)."),
    .tp_basicsize = sizeof(Caller),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC,
    .tp_new = caller_new,
    .tp_traverse = (traverseproc)caller_traverse,
    .tp_clear = (inquiry)caller_clear,
    .tp_getset = caller_getset,
    .tp_dealloc = (destructor)caller_dealloc,
    .tp_repr = (reprfunc)caller_repr,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Caller, vectorcall),
};

static struct PyModuleDef fastcall_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "robodyn._fastcall",
    .m_doc = PyDoc_STR("Compiled routines called on one state without ctypes (robodyn.compile's fast path)."),
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__fastcall(void)
{
    if (PyType_Ready(&CallerType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&fastcall_module);
    if (module == NULL)
        return NULL;
    if (PyModule_AddObjectRef(module, "Caller", (PyObject *)&CallerType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
