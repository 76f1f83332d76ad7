/* pyscan's kernel launch as one C call: the hot path of every public call, without ctypes.
 *
 * Python's ctypes converts each argument of a foreign call through a Python object (about 3 us for
 * cuLaunchKernel's eleven on a fast CPU); PyCUDA, CuPy and PyTorch launch from compiled code.  This module is
 * that compiled piece for pyscan: it packs a kernel's arguments with C alignment (the types read off the
 * __global__ signature by pyscan.loader, struct-module letters) and calls cuLaunchKernel once, the GIL released.
 *
 * It links against nothing: pyscan.native compiles it at run time with the C compiler that built Python (as
 * pycuda compiles kernels with nvcc), and hands it libcuda's function addresses from pyscan.cuda's ctypes handle,
 * so the same module runs against a fake driver in the tests on a machine without a GPU.
 *
 *   bind(cuLaunchKernel, cuCtxGetCurrent, cuCtxSetCurrent)          the driver's function addresses (ints)
 *   launch(function, grid, block, shared, stream, types, *args) -> CUresult
 *       grid, block: ints or tuples of 1-3 ints; types: bytes, one letter per argument (P i I q Q f d h H b B ?)
 *   get_context() -> int (None if it fails), set_context(int) -> CUresult   cuCtxGetCurrent / cuCtxSetCurrent
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef int (*launch_kernel_t)(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, void *stream, void **params, void **extra);
typedef int (*get_context_t)(void **context);
typedef int (*set_context_t)(void *context);

static launch_kernel_t launch_kernel;
static get_context_t get_context_fn;
static set_context_t set_context_fn;

/* cuLaunchKernel's `extra` markers (cuda.h) */
#define LAUNCH_PARAM_END ((void *)0)
#define LAUNCH_PARAM_BUFFER_POINTER ((void *)1)
#define LAUNCH_PARAM_BUFFER_SIZE ((void *)2)

/* CUDA's limit on a kernel's parameter bytes before sm_70 (pyscan's kernels use under 100) */
#define ARGUMENT_BYTES 4096
/* arguments a launch takes (pyscan's kernels take under 10) */
#define MAX_ARGUMENTS 512

/* How the arguments reach the driver: 1, one packed buffer through `extra` (as pycuda passes them); 0, a pointer
 * per argument through kernelParams.  And whether the GIL is released around cuLaunchKernel (1: other Python
 * threads run meanwhile).  scripts/launch_variants.py times the four builds. */
#ifndef LAUNCH_WITH_EXTRA
#define LAUNCH_WITH_EXTRA 1
#endif
#ifndef LAUNCH_RELEASES_GIL
#define LAUNCH_RELEASES_GIL 1
#endif

static PyObject *bind(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "bind(cuLaunchKernel, cuCtxGetCurrent, cuCtxSetCurrent): 3 addresses");
        return NULL;
    }
    void *addresses[3];
    for (int i = 0; i < 3; i++) {
        addresses[i] = PyLong_AsVoidPtr(args[i]);
        if (addresses[i] == NULL) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bind: a function address is NULL");
            return NULL;
        }
    }
    launch_kernel = (launch_kernel_t)addresses[0];
    get_context_fn = (get_context_t)addresses[1];
    set_context_fn = (set_context_t)addresses[2];
    Py_RETURN_NONE;
}

/* An integer argument: a Python int, or anything with __index__ (NumPy ints) or __int__ (a pycuda
 * DeviceAllocation), as struct and pycuda take them. */
static PyObject *as_int(PyObject *value) {
    if (PyLong_Check(value)) {
        Py_INCREF(value);
        return value;
    }
    PyObject *number = PyNumber_Index(value);
    if (number == NULL && PyErr_ExceptionMatches(PyExc_TypeError) && !PyFloat_Check(value) &&
        Py_TYPE(value)->tp_as_number != NULL && Py_TYPE(value)->tp_as_number->nb_int != NULL) {
        PyErr_Clear();
        number = PyNumber_Long(value); /* __int__, never a string's parse */
    }
    return number;
}

/* One extent of a grid or block: an int of 1 .. 2^32 - 1. */
static int dim(PyObject *value, unsigned *out, const char *what) {
    PyObject *number = as_int(value);
    if (number == NULL) return -1;
    unsigned long long v = PyLong_AsUnsignedLongLong(number);
    Py_DECREF(number);
    if ((v == (unsigned long long)-1 && PyErr_Occurred()) || v == 0 || v > UINT32_MAX) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s: each extent must be an int from 1 to 2^32 - 1, got %R", what, value);
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

/* grid or block: an int, or a tuple of 1-3 ints (missing ones are 1) */
static int dims(PyObject *value, unsigned out[3], const char *what) {
    out[0] = out[1] = out[2] = 1;
    if (!PyTuple_Check(value)) return dim(value, out, what);
    if (PyTuple_GET_SIZE(value) < 1 || PyTuple_GET_SIZE(value) > 3) {
        PyErr_Format(PyExc_TypeError, "%s: expected an int or a tuple of 1 to 3 ints, got %R", what, value);
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(value); i++) {
        if (dim(PyTuple_GET_ITEM(value, i), out + i, what) < 0) return -1;
    }
    return 0;
}

/* Pack one argument of type letter `code` at the next multiple of its size (C alignment) in buffer; *at_out is
 * where it went (cuLaunchKernel's kernelParams point there). */
static int pack(char code, PyObject *value, char *buffer, size_t *offset, Py_ssize_t index, void **at_out) {
    size_t size;
    switch (code) {
        case 'P': case 'q': case 'Q': case 'd': size = 8; break;
        case 'i': case 'I': case 'f': size = 4; break;
        case 'h': case 'H': size = 2; break;
        case 'b': case 'B': case '?': size = 1; break;
        default:
            PyErr_Format(PyExc_ValueError, "argument %zd: unknown type letter '%c'", index, code);
            return -1;
    }
    size_t at = (*offset + size - 1) / size * size;
    if (at + size > ARGUMENT_BYTES) {
        PyErr_SetString(PyExc_ValueError, "the kernel's arguments pass 4096 bytes");
        return -1;
    }
    memset(buffer + *offset, 0, at - *offset); /* padding zeroed, as struct packs it */
    char *slot = buffer + at;
    *at_out = slot;
    *offset = at + size;
    if (code == 'f' || code == 'd') {
        double v = PyFloat_AsDouble(value);
        if (v == -1.0 && PyErr_Occurred()) return -1;
        if (code == 'f') {
            float f = (float)v;
            memcpy(slot, &f, 4);
        } else {
            memcpy(slot, &v, 8);
        }
        return 0;
    }
    if (code == '?') {
        int truth = PyObject_IsTrue(value);
        if (truth < 0) return -1;
        *slot = (char)truth;
        return 0;
    }
    PyObject *number = as_int(value);
    if (number == NULL) return -1;
    int overflow = 0;
    long long v = 0;
    unsigned long long u = 0;
    int is_unsigned = (code == 'P' || code == 'Q' || code == 'I' || code == 'H' || code == 'B');
    if (is_unsigned) {
        u = PyLong_AsUnsignedLongLong(number);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) overflow = 1;
    } else {
        v = PyLong_AsLongLongAndOverflow(number, &overflow);
        if (v == -1 && PyErr_Occurred()) overflow = 1;
    }
    Py_DECREF(number);
    if (!overflow) {
        switch (code) {
            case 'P': case 'Q': memcpy(slot, &u, 8); return 0;
            case 'q': memcpy(slot, &v, 8); return 0;
            case 'I': if (u <= UINT32_MAX) { uint32_t w = (uint32_t)u; memcpy(slot, &w, 4); return 0; } break;
            case 'i': if (v >= INT32_MIN && v <= INT32_MAX) { int32_t w = (int32_t)v; memcpy(slot, &w, 4); return 0; } break;
            case 'H': if (u <= UINT16_MAX) { uint16_t w = (uint16_t)u; memcpy(slot, &w, 2); return 0; } break;
            case 'h': if (v >= INT16_MIN && v <= INT16_MAX) { int16_t w = (int16_t)v; memcpy(slot, &w, 2); return 0; } break;
            case 'B': if (u <= UINT8_MAX) { *slot = (char)(uint8_t)u; return 0; } break;
            case 'b': if (v >= INT8_MIN && v <= INT8_MAX) { *slot = (char)(int8_t)v; return 0; } break;
        }
    }
    PyErr_Clear();
    PyErr_Format(PyExc_OverflowError, "argument %zd (type '%c') is out of range: %R", index, code, value);
    return -1;
}

static PyObject *launch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 6) {
        PyErr_SetString(PyExc_TypeError, "launch(function, grid, block, shared, stream, types, *args)");
        return NULL;
    }
    if (launch_kernel == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "launch: bind() the driver's functions first");
        return NULL;
    }
    void *function = PyLong_AsVoidPtr(args[0]);
    if (function == NULL && PyErr_Occurred()) return NULL;
    unsigned grid[3], block[3];
    if (dims(args[1], grid, "grid") < 0 || dims(args[2], block, "block") < 0) return NULL;
    PyObject *shared_bytes = as_int(args[3]);
    if (shared_bytes == NULL) return NULL;
    unsigned long long shared = PyLong_AsUnsignedLongLong(shared_bytes);
    Py_DECREF(shared_bytes);
    if ((shared == (unsigned long long)-1 && PyErr_Occurred()) || shared > UINT32_MAX) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "launch: shared memory must be 0 to 2^32 - 1 bytes, got %R", args[3]);
        return NULL;
    }
    void *stream = PyLong_AsVoidPtr(args[4]);
    if (stream == NULL && PyErr_Occurred()) return NULL;
    if (!PyBytes_Check(args[5])) {
        PyErr_SetString(PyExc_TypeError, "launch: types must be bytes");
        return NULL;
    }
    const char *types = PyBytes_AS_STRING(args[5]);
    Py_ssize_t count = PyBytes_GET_SIZE(args[5]);
    if (nargs - 6 != count) {
        PyErr_Format(PyExc_TypeError, "expected %zd kernel arguments (%s), got %zd", count, types, nargs - 6);
        return NULL;
    }
    _Alignas(16) char buffer[ARGUMENT_BYTES];
    void *params[MAX_ARGUMENTS];
    if (count > MAX_ARGUMENTS) {
        PyErr_Format(PyExc_ValueError, "launch: at most %d kernel arguments, got %zd", MAX_ARGUMENTS, count);
        return NULL;
    }
    size_t size = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (pack(types[i], args[6 + i], buffer, &size, i, params + i) < 0) return NULL;
    }
    int code;
#if LAUNCH_WITH_EXTRA
    void *extra[5] = {LAUNCH_PARAM_BUFFER_POINTER, buffer, LAUNCH_PARAM_BUFFER_SIZE, &size, LAUNCH_PARAM_END};
    void **by_params = NULL, **by_extra = count ? extra : NULL;
#else
    void **by_params = count ? params : NULL, **by_extra = NULL;
#endif
#if LAUNCH_RELEASES_GIL
    Py_BEGIN_ALLOW_THREADS
#endif
    code = launch_kernel(function, grid[0], grid[1], grid[2], block[0], block[1], block[2], (unsigned)shared, stream,
                         by_params, by_extra);
#if LAUNCH_RELEASES_GIL
    Py_END_ALLOW_THREADS
#endif
    return PyLong_FromLong(code);
}

/* None when cuCtxGetCurrent fails (pyscan.cuda then asks again through ctypes, for the error's name). */
static PyObject *get_context(PyObject *self, PyObject *unused) {
    void *context = NULL;
    if (get_context_fn == NULL || get_context_fn(&context)) Py_RETURN_NONE;
    return PyLong_FromVoidPtr(context);
}

static PyObject *set_context(PyObject *self, PyObject *value) {
    void *context = NULL;
    if (value != Py_None) {
        context = PyLong_AsVoidPtr(value);
        if (context == NULL && PyErr_Occurred()) return NULL;
    }
    if (set_context_fn == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "set_context: bind() the driver's functions first");
        return NULL;
    }
    return PyLong_FromLong(set_context_fn(context));
}

static PyMethodDef methods[] = {
    {"bind", (PyCFunction)(void (*)(void))bind, METH_FASTCALL, "bind(cuLaunchKernel, cuCtxGetCurrent, cuCtxSetCurrent)"},
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL,
     "launch(function, grid, block, shared, stream, types, *args) -> CUresult"},
    {"get_context", get_context, METH_NOARGS, "cuCtxGetCurrent: the current context's handle (0 if none; None if the call fails)"},
    {"set_context", set_context, METH_O, "cuCtxSetCurrent(handle) -> CUresult"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_launch", "pyscan's kernel launch in C", -1, methods};

PyMODINIT_FUNC PyInit__launch(void) { return PyModule_Create(&module); }
