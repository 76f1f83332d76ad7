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

/* ---------------------------------------------------------------------------------------------------------------
 * The direct reduction: a whole default call pyscan.reduce(x, op=...) on a CuPy array or torch tensor, in C.
 *
 * pyscan.reductions.fast hands over its live tables once (configure_reduce); reduce_direct(x, op) then reads x
 * (the same reads as the kinds' direct() in pyscan/arrays.py), finds the plan the Python driver made for (dtype,
 * op, context), checks that the tuning knobs are the ones it was made for, chooses the build and grid by the
 * driver's rule (fast._choose), takes the per-stream workspace, has the kind allocate the 0-d result and launches.
 * Anything it does not find ready -- another kind, shape or dtype, a context not current, no plan yet, a workspace
 * too small, any exception from reading x -- gives None, and the Python path takes the call (and makes what was
 * missing, or raises what was wrong).  A launch the driver refuses also gives None: the Python path launches again
 * and raises the driver's error.  Interrupts (BaseException that is not Exception) propagate.
 */
static PyObject *direct_readers;  /* type -> (reader, kind): 1 torch-like, 2 CuPy-like (arrays.DIRECT_READERS) */
static PyObject *primaries;       /* device ordinal -> primary context handle (gpu._primary) */
static PyObject *torch_dtypes;    /* torch dtype -> NumPy dtype (arrays._Torch._to_numpy) */
static PyObject *reduce_plans;    /* (dtype, op, context) -> plan (fast._plans) */
static PyObject *reduce_buffers;  /* (context, stream) -> Kept (fast._workspace._buffers) */
static PyObject *knob_values;     /* fast's module dict, and the names of its knobs in a plan's first item */
static PyObject *knob_names;
static Py_ssize_t partials_offset;
/* The libraries' own calls, where the kinds hand them over (arrays.direct_hooks), instead of the kinds' Python
 * methods: torch (reader 1): (its current raw stream of a device, empty_like, the kind's kept 0-d tensors keyed by
 * (torch dtype, context)); CuPy (reader 2): (get_current_stream of a device, empty). */
static PyObject *torch_hooks, *cupy_hooks;

static PyObject *s_dtype, *s_dim, *s_is_contiguous, *s_get_device, *s_data_ptr, *s_numel, *s_ndim, *s_flags,
    *s_c_contiguous, *s_data, *s_ptr, *s_device_id, *s_size, *s_default_stream, *s_new_scalar, *s_handle,
    *s_itemsize, *s_address, *s_nbytes, *s_threads, *s_vecs, *s_types, *s_new_like;

static int intern_names(void) {
    struct { PyObject **slot; const char *text; } names[] = {
        {&s_dtype, "dtype"}, {&s_dim, "dim"}, {&s_is_contiguous, "is_contiguous"}, {&s_get_device, "get_device"},
        {&s_data_ptr, "data_ptr"}, {&s_numel, "numel"}, {&s_ndim, "ndim"}, {&s_flags, "flags"},
        {&s_c_contiguous, "c_contiguous"}, {&s_data, "data"}, {&s_ptr, "ptr"}, {&s_device_id, "device_id"},
        {&s_size, "size"}, {&s_default_stream, "default_stream"}, {&s_new_scalar, "new_scalar"},
        {&s_handle, "handle"}, {&s_itemsize, "itemsize"}, {&s_address, "address"}, {&s_nbytes, "nbytes"},
        {&s_threads, "threads"}, {&s_vecs, "vecs"}, {&s_types, "_types"}, {&s_new_like, "new_like"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (*names[i].slot == NULL && (*names[i].slot = PyUnicode_InternFromString(names[i].text)) == NULL) return -1;
    }
    return 0;
}

/* The tables every whole call reads: configure_direct(readers, primaries, torch_dtypes, hooks). */
static PyObject *configure_direct(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "configure_direct(readers, primaries, torch_dtypes, hooks)");
        return NULL;
    }
    for (int i = 0; i < 4; i++) {
        if (!PyDict_Check(args[i])) {
            PyErr_Format(PyExc_TypeError, "configure_direct: argument %d must be a dict", i);
            return NULL;
        }
    }
    PyObject *found[2] = {NULL, NULL}; /* {1: torch's (stream, empty_like, kept 0-d tensors), 2: CuPy's (stream, empty)} */
    for (long reader = 1; reader <= 2; reader++) {
        PyObject *number = PyLong_FromLong(reader);
        if (number == NULL) return NULL;
        PyObject *entry = PyDict_GetItemWithError(args[3], number);
        Py_DECREF(number);
        if (entry == NULL && PyErr_Occurred()) return NULL;
        if (entry != NULL && (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != (reader == 1 ? 3 : 2) ||
                              (reader == 1 && !PyDict_Check(PyTuple_GET_ITEM(entry, 2))))) {
            PyErr_Format(PyExc_TypeError, "configure_direct: hooks[%ld] has the wrong form", reader);
            return NULL;
        }
        found[reader - 1] = entry;
    }
    if (intern_names() < 0) return NULL;
    PyObject **slots[] = {&direct_readers, &primaries, &torch_dtypes};
    for (int i = 0; i < 3; i++) {
        Py_INCREF(args[i]);
        Py_XSETREF(*slots[i], args[i]);
    }
    Py_XINCREF(found[0]);
    Py_XSETREF(torch_hooks, found[0]);
    Py_XINCREF(found[1]);
    Py_XSETREF(cupy_hooks, found[1]);
    Py_RETURN_NONE;
}

/* The fast reduction's tables: configure_reduce(plans, buffers, knob_values, knob_names, partials_offset). */
static PyObject *configure_reduce(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "configure_reduce(plans, buffers, knob_values, knob_names, partials_offset)");
        return NULL;
    }
    if (!PyDict_Check(args[0]) || !PyDict_Check(args[1]) || !PyDict_Check(args[2]) || !PyTuple_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "configure_reduce: plans, buffers and knob_values dicts, knob_names a tuple");
        return NULL;
    }
    Py_ssize_t offset = PyLong_AsSsize_t(args[4]);
    if (offset == -1 && PyErr_Occurred()) return NULL;
    PyObject **slots[] = {&reduce_plans, &reduce_buffers, &knob_values, &knob_names};
    for (int i = 0; i < 4; i++) {
        Py_INCREF(args[i]);
        Py_XSETREF(*slots[i], args[i]);
    }
    partials_offset = offset;
    Py_RETURN_NONE;
}

/* The fast scan's tables: configure_scan(kernels, large, small) -- decoupled_lookback's kernel cache and its
 * Configs per element size. */
static PyObject *scan_kernels, *scan_large, *scan_small;

static PyObject *configure_scan(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyDict_Check(args[0]) || !PyDict_Check(args[1]) || !PyDict_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "configure_scan(kernels, large, small): three dicts");
        return NULL;
    }
    PyObject **slots[] = {&scan_kernels, &scan_large, &scan_small};
    for (int i = 0; i < 3; i++) {
        Py_INCREF(args[i]);
        Py_XSETREF(*slots[i], args[i]);
    }
    Py_RETURN_NONE;
}

/* a new reference to obj.name() */
static PyObject *call0(PyObject *obj, PyObject *name) { return PyObject_CallMethodNoArgs(obj, name); }

/* An int attribute or result as a C integer; -1 with an exception set if it is not one. */
static int as_ull(PyObject *value, unsigned long long *out) {
    if (value == NULL) return -1;
    *out = PyLong_AsUnsignedLongLong(value);
    Py_DECREF(value);
    return (*out == (unsigned long long)-1 && PyErr_Occurred()) ? -1 : 0;
}

static int as_ll(PyObject *value, long long *out) {
    if (value == NULL) return -1;
    *out = PyLong_AsLongLong(value);
    Py_DECREF(value);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* Whether value (a new reference, or NULL with an exception) is True; -1 on an exception. */
static int is_true(PyObject *value) {
    if (value == NULL) return -1;
    int truth = value == Py_True;
    Py_DECREF(value);
    return truth;
}

typedef struct {
    PyObject *dtype;         /* the NumPy dtype: a new reference */
    PyObject *library_dtype; /* torch's dtype object (a new reference; NULL for CuPy, whose dtype is NumPy's) */
    unsigned long long address;
    long long n, device;
} View;

/* Read x as the kinds' direct() do: 1 and the view for a 1-D contiguous array, 0 when it is not one (or not
 * readable), -1 on an exception. */
static int read_view(int reader, PyObject *x, View *view) {
    view->dtype = view->library_dtype = NULL;
    if (reader == 1) { /* torch: dtype, dim(), is_contiguous(), get_device(), data_ptr(), numel() */
        PyObject *torch_dtype = PyObject_GetAttr(x, s_dtype);
        if (torch_dtype == NULL) return -1;
        PyObject *dtype = PyDict_GetItemWithError(torch_dtypes, torch_dtype);
        if (dtype == NULL) {
            Py_DECREF(torch_dtype);
            return PyErr_Occurred() ? -1 : 0;
        }
        view->library_dtype = torch_dtype; /* released by the caller */
        long long dims;
        if (as_ll(call0(x, s_dim), &dims) < 0) return -1;
        if (dims != 1) return 0;
        int contiguous = is_true(call0(x, s_is_contiguous));
        if (contiguous <= 0) return contiguous;
        if (as_ll(call0(x, s_get_device), &view->device) < 0 || as_ull(call0(x, s_data_ptr), &view->address) < 0 ||
            as_ll(call0(x, s_numel), &view->n) < 0) return -1;
        Py_INCREF(dtype);
        view->dtype = dtype;
        return 1;
    }
    if (reader == 2) { /* CuPy: ndim, flags.c_contiguous, data.ptr, data.device_id, size, dtype */
        long long dims;
        if (as_ll(PyObject_GetAttr(x, s_ndim), &dims) < 0) return -1;
        if (dims != 1) return 0;
        PyObject *flags = PyObject_GetAttr(x, s_flags);
        if (flags == NULL) return -1;
        int contiguous = is_true(PyObject_GetAttr(flags, s_c_contiguous));
        Py_DECREF(flags);
        if (contiguous <= 0) return contiguous;
        PyObject *data = PyObject_GetAttr(x, s_data);
        if (data == NULL) return -1;
        int bad = as_ull(PyObject_GetAttr(data, s_ptr), &view->address) < 0 ||
                  as_ll(PyObject_GetAttr(data, s_device_id), &view->device) < 0;
        Py_DECREF(data);
        if (bad || as_ll(PyObject_GetAttr(x, s_size), &view->n) < 0) return -1;
        view->dtype = PyObject_GetAttr(x, s_dtype);
        return view->dtype == NULL ? -1 : 1;
    }
    return 0;
}

/* The knobs' values now, as a tuple in the order of knob_names (a new reference). */
static PyObject *knobs_now(void) {
    Py_ssize_t count = PyTuple_GET_SIZE(knob_names);
    PyObject *now = PyTuple_New(count);
    if (now == NULL) return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *value = PyDict_GetItemWithError(knob_values, PyTuple_GET_ITEM(knob_names, i));
        if (value == NULL) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "a knob is missing");
            Py_DECREF(now);
            return NULL;
        }
        Py_INCREF(value);
        PyTuple_SET_ITEM(now, i, value);
    }
    return now;
}

/* The library's current stream on view's device (a new reference to an int), through its hook or the kind. */
static PyObject *current_stream(int reader, PyObject *kind, PyObject *x, PyObject *device) {
    if (reader == 1 && torch_hooks != NULL) return PyObject_CallOneArg(PyTuple_GET_ITEM(torch_hooks, 0), device);
    if (reader == 2 && cupy_hooks != NULL) {
        PyObject *stream = PyObject_CallOneArg(PyTuple_GET_ITEM(cupy_hooks, 0), device);
        if (stream == NULL) return NULL;
        PyObject *handle = PyObject_GetAttr(stream, s_ptr);
        Py_DECREF(stream);
        return handle;
    }
    return PyObject_CallMethodObjArgs(kind, s_default_stream, x, device, NULL);
}

/* The 0-d result: (native, address) as a new tuple reference, through the library's hook or kind.new_scalar; NULL
 * without an exception when torch's kept 0-d tensor for (dtype, context) is not made yet (new_scalar makes it). */
static PyObject *new_result(int reader, PyObject *kind, PyObject *x, View *view, PyObject *context) {
    PyObject *native = NULL, *address = NULL;
    if (reader == 1 && torch_hooks != NULL) {
        PyObject *key = PyTuple_Pack(2, view->library_dtype, context);
        if (key == NULL) return NULL;
        PyObject *like = PyDict_GetItemWithError(PyTuple_GET_ITEM(torch_hooks, 2), key); /* borrowed */
        Py_DECREF(key);
        if (like == NULL) return NULL;
        native = PyObject_CallOneArg(PyTuple_GET_ITEM(torch_hooks, 1), like);
        if (native != NULL) address = call0(native, s_data_ptr);
    } else if (reader == 2 && cupy_hooks != NULL) {
        PyObject *shape = PyTuple_New(0);
        if (shape == NULL) return NULL;
        native = PyObject_CallFunctionObjArgs(PyTuple_GET_ITEM(cupy_hooks, 1), shape, view->dtype, NULL);
        Py_DECREF(shape);
        if (native != NULL) {
            PyObject *data = PyObject_GetAttr(native, s_data);
            if (data != NULL) {
                address = PyObject_GetAttr(data, s_ptr);
                Py_DECREF(data);
            }
        }
    } else {
        return PyObject_CallMethodObjArgs(kind, s_new_scalar, x, view->dtype, context, NULL);
    }
    if (address == NULL) {
        Py_XDECREF(native);
        return NULL;
    }
    PyObject *pair = PyTuple_Pack(2, native, address);
    Py_DECREF(native);
    Py_DECREF(address);
    return pair;
}

/* The device's primary context if it is current in this thread: 1 and a new reference in *context, 0 if not (or
 * the device has none yet), -1 on an exception. */
static int current_primary(PyObject *device, PyObject **context) {
    PyObject *found = PyDict_GetItemWithError(primaries, device); /* borrowed */
    if (found == NULL) return PyErr_Occurred() ? -1 : 0;
    void *current = NULL;
    void *handle = PyLong_AsVoidPtr(found);
    if (handle == NULL && PyErr_Occurred()) return -1;
    if (get_context_fn == NULL || get_context_fn(&current) || handle != current) return 0;
    Py_INCREF(found);
    *context = found;
    return 1;
}

/* A result like x (n elements): (native, address) as a new tuple reference, through the library's hook or
 * kind.new_like. */
static PyObject *new_like(int reader, PyObject *kind, PyObject *x, View *view) {
    PyObject *native = NULL, *address = NULL;
    if (reader == 1 && torch_hooks != NULL) {
        native = PyObject_CallOneArg(PyTuple_GET_ITEM(torch_hooks, 1), x);
        if (native != NULL) address = call0(native, s_data_ptr);
    } else if (reader == 2 && cupy_hooks != NULL) {
        PyObject *shape = Py_BuildValue("(L)", view->n);
        if (shape == NULL) return NULL;
        native = PyObject_CallFunctionObjArgs(PyTuple_GET_ITEM(cupy_hooks, 1), shape, view->dtype, NULL);
        Py_DECREF(shape);
        if (native != NULL) {
            PyObject *data = PyObject_GetAttr(native, s_data);
            if (data != NULL) {
                address = PyObject_GetAttr(data, s_ptr);
                Py_DECREF(data);
            }
        }
    } else {
        PyObject *n = PyLong_FromLongLong(view->n);
        if (n == NULL) return NULL;
        PyObject *pair = PyObject_CallMethodObjArgs(kind, s_new_like, x, n, view->dtype, NULL);
        Py_DECREF(n);
        return pair;
    }
    if (address == NULL) {
        Py_XDECREF(native);
        return NULL;
    }
    PyObject *pair = PyTuple_Pack(2, native, address);
    Py_DECREF(native);
    Py_DECREF(address);
    return pair;
}

/* The launch of a ready call: 1 and the result in *native, 0 when something is not ready, -1 on an exception. */
static int reduce_ready(PyObject *x, PyObject *op, PyObject **native) {
    PyObject *entry = PyDict_GetItemWithError(direct_readers, (PyObject *)Py_TYPE(x));
    if (entry == NULL) return PyErr_Occurred() ? -1 : 0;
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2) return 0;
    long reader = PyLong_AsLong(PyTuple_GET_ITEM(entry, 0));
    if (reader == -1 && PyErr_Occurred()) return -1;
    PyObject *kind = PyTuple_GET_ITEM(entry, 1);
    View view;
    int found = read_view((int)reader, x, &view);
    if (found <= 0) {
        Py_XDECREF(view.library_dtype);
        return found;
    }
    int status = 0;
    PyObject *device = NULL, *context = NULL, *key = NULL, *knobs = NULL, *stream = NULL, *result = NULL;
    PyObject *fn_handle = NULL;
    if (view.n <= 0) goto done;
    device = PyLong_FromLongLong(view.device);
    if (device == NULL) goto error;
    status = current_primary(device, &context);
    if (status <= 0) goto done;
    status = 0;
    /* the plan the driver made, for the knobs as they are */
    key = PyTuple_Pack(3, view.dtype, op, context);
    if (key == NULL) goto error;
    PyObject *plan = PyDict_GetItemWithError(reduce_plans, key); /* borrowed; an unhashable op raises */
    if (plan == NULL) goto not_found;
    if (!PyTuple_Check(plan) || PyTuple_GET_SIZE(plan) != 6) goto done;
    knobs = knobs_now();
    if (knobs == NULL) goto error;
    int same = PyObject_RichCompareBool(PyTuple_GET_ITEM(plan, 0), knobs, Py_EQ);
    if (same <= 0) { status = same; goto done; }
    long long threads = PyLong_AsLongLong(PyTuple_GET_ITEM(knobs, 0)); /* FAST_BLOCK */
    long long most_small = PyLong_AsLongLong(PyTuple_GET_ITEM(plan, 2));
    long long most_large = PyLong_AsLongLong(PyTuple_GET_ITEM(plan, 4));
    long long per_block = PyLong_AsLongLong(PyTuple_GET_ITEM(plan, 5));
    if (PyErr_Occurred()) goto error;
    if (per_block <= 0 || threads <= 0) goto done;
    /* fast._choose: one vector per thread on the small build while its resident blocks hold them, else every
     * resident block of the large build */
    long long blocks = (view.n + per_block - 1) / per_block;
    PyObject *fn = PyTuple_GET_ITEM(plan, 1);
    if (blocks > most_small) {
        fn = PyTuple_GET_ITEM(plan, 3);
        blocks = most_large;
    }
    unsigned long long function;
    fn_handle = PyObject_GetAttr(fn, s_handle);
    if (fn_handle == NULL) goto error;
    Py_INCREF(fn_handle);
    if (as_ull(fn_handle, &function) < 0) goto error;
    /* the stream: the library's current one */
    stream = current_stream((int)reader, kind, x, device);
    if (stream == NULL) goto error;
    unsigned long long stream_handle = PyLong_AsUnsignedLongLong(stream);
    if (stream_handle == (unsigned long long)-1 && PyErr_Occurred()) goto error;
    unsigned long long partials = 0, ticket = 0;
    if (blocks > 1) { /* the stream's workspace, if it is big enough already */
        PyObject *where = PyTuple_Pack(2, context, stream);
        if (where == NULL) goto error;
        PyObject *kept = PyDict_GetItemWithError(reduce_buffers, where); /* borrowed */
        Py_DECREF(where);
        if (kept == NULL) goto not_found;
        long long itemsize, nbytes;
        if (as_ll(PyObject_GetAttr(view.dtype, s_itemsize), &itemsize) < 0 ||
            as_ll(PyObject_GetAttr(kept, s_nbytes), &nbytes) < 0 || as_ull(PyObject_GetAttr(kept, s_address), &ticket) < 0)
            goto error;
        if (ticket == 0 || nbytes < partials_offset + blocks * itemsize) goto done;
        partials = ticket + (unsigned long long)partials_offset;
    }
    /* the result, from the caller's library */
    result = new_result((int)reader, kind, x, &view, context);
    if (result == NULL) goto not_found;
    if (!PyTuple_Check(result) || PyTuple_GET_SIZE(result) != 2) goto done;
    unsigned long long out = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(result, 1));
    if (out == (unsigned long long)-1 && PyErr_Occurred()) goto error;
    /* reduce_fast(out, partials, ticket, x, n): "PPPPq" */
    _Alignas(16) unsigned long long arguments[5] = {out, partials, ticket, view.address, (unsigned long long)view.n};
    size_t size = sizeof arguments;
    void *extra[5] = {LAUNCH_PARAM_BUFFER_POINTER, arguments, LAUNCH_PARAM_BUFFER_SIZE, &size, LAUNCH_PARAM_END};
    int code;
    Py_BEGIN_ALLOW_THREADS
    code = launch_kernel((void *)(uintptr_t)function, (unsigned)blocks, 1, 1, (unsigned)threads, 1, 1, 0,
                         (void *)(uintptr_t)stream_handle, NULL, extra);
    Py_END_ALLOW_THREADS
    if (code) goto done; /* the Python path launches again and raises the driver's error */
    *native = PyTuple_GET_ITEM(result, 0);
    Py_INCREF(*native);
    status = 1;
    goto done;
not_found:
    if (PyErr_Occurred()) goto error;
    goto done;
error:
    status = -1;
done:
    Py_XDECREF(view.dtype);
    Py_XDECREF(view.library_dtype);
    Py_XDECREF(device);
    Py_XDECREF(context);
    Py_XDECREF(key);
    Py_XDECREF(knobs);
    Py_XDECREF(stream);
    Py_XDECREF(result);
    Py_XDECREF(fn_handle);
    return status;
}

static PyObject *reduce_direct(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "reduce_direct(x, op)");
        return NULL;
    }
    if (direct_readers == NULL || reduce_plans == NULL || launch_kernel == NULL) Py_RETURN_NONE;
    PyObject *native = NULL;
    int status = reduce_ready(args[0], args[1], &native);
    if (status == 1) return native;
    if (status < 0) {
        if (!PyErr_ExceptionMatches(PyExc_Exception)) return NULL; /* an interrupt: not ours to swallow */
        PyErr_Clear();                                           /* the Python path says what was wrong */
    }
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------------------------------------------------------
 * The whole one-tile scan: a default pyscan.scan(x, op=..., exclusive=...) of a CuPy array or torch tensor short
 * enough for one tile of the fast scan (kernels/scan/decoupled_lookback.cu: no tile status, one block), in C.
 * The tile follows decoupled_lookback._policy: SMALL's tile up to its length, else the large Config's; longer
 * arrays, and builds not compiled yet, go to the Python path, as does anything else not ready (see above).
 */
static int scan_tile(PyObject *configs, PyObject *itemsize_obj, long long itemsize, long long *tile, long long *threads) {
    PyObject *config = PyDict_GetItemWithError(configs, itemsize_obj); /* borrowed */
    if (config == NULL) return PyErr_Occurred() ? -1 : 0;
    long long vecs;
    if (as_ll(PyObject_GetAttr(config, s_threads), threads) < 0 || as_ll(PyObject_GetAttr(config, s_vecs), &vecs) < 0)
        return -1;
    *tile = *threads * vecs * (16 / itemsize);
    return 1;
}

static int scan_ready(PyObject *x, PyObject *op, PyObject *exclusive, PyObject **native) {
    PyObject *entry = PyDict_GetItemWithError(direct_readers, (PyObject *)Py_TYPE(x));
    if (entry == NULL) return PyErr_Occurred() ? -1 : 0;
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2) return 0;
    long reader = PyLong_AsLong(PyTuple_GET_ITEM(entry, 0));
    if (reader == -1 && PyErr_Occurred()) return -1;
    PyObject *kind = PyTuple_GET_ITEM(entry, 1);
    View view;
    int found = read_view((int)reader, x, &view);
    if (found <= 0) {
        Py_XDECREF(view.library_dtype);
        return found;
    }
    int status = 0;
    PyObject *device = NULL, *context = NULL, *itemsize_obj = NULL, *stream = NULL, *result = NULL, *key = NULL;
    PyObject *handle = NULL, *types = NULL, *numbers[8] = {NULL};
    if (view.n <= 0) goto done;
    device = PyLong_FromLongLong(view.device);
    if (device == NULL) goto error;
    status = current_primary(device, &context);
    if (status <= 0) goto done;
    status = 0;
    /* the tile: decoupled_lookback._policy, for one tile */
    itemsize_obj = PyObject_GetAttr(view.dtype, s_itemsize);
    if (itemsize_obj == NULL) goto error;
    long long itemsize = PyLong_AsLongLong(itemsize_obj);
    if (itemsize == -1 && PyErr_Occurred()) goto error;
    if (itemsize <= 0 || 16 % itemsize) goto done;
    long long small_tile = 0, small_threads = 0, tile, threads;
    int has_small = scan_tile(scan_small, itemsize_obj, itemsize, &small_tile, &small_threads);
    int has_large = scan_tile(scan_large, itemsize_obj, itemsize, &tile, &threads);
    if (has_small < 0 || has_large < 0) goto error;
    if (!has_large) goto done;
    int small = has_small && view.n <= small_tile;
    if (small) threads = small_threads;
    else if (view.n > tile) goto done; /* more than one tile: the Python path (the tile status and its epoch) */
    /* the stream and the result */
    stream = current_stream((int)reader, kind, x, device);
    if (stream == NULL) goto error;
    unsigned long long stream_handle = PyLong_AsUnsignedLongLong(stream);
    if (stream_handle == (unsigned long long)-1 && PyErr_Occurred()) goto error;
    result = new_like((int)reader, kind, x, &view);
    if (result == NULL) goto error;
    if (!PyTuple_Check(result) || PyTuple_GET_SIZE(result) != 2) goto done;
    unsigned long long out = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(result, 1));
    if (out == (unsigned long long)-1 && PyErr_Occurred()) goto error;
    /* the build: decoupled_lookback._kernels[(dtype, op, vector, context, small)] -> (Kernel, shared bytes) */
    PyObject *vector = ((out | view.address) & 15) ? Py_False : Py_True;
    key = PyTuple_Pack(5, view.dtype, op, vector, context, small ? Py_True : Py_False);
    if (key == NULL) goto error;
    PyObject *built = PyDict_GetItemWithError(scan_kernels, key); /* borrowed */
    if (built == NULL) {
        if (PyErr_Occurred()) goto error;
        goto done; /* not compiled yet: the Python path compiles it */
    }
    if (!PyTuple_Check(built) || PyTuple_GET_SIZE(built) != 2) goto done;
    unsigned long long function, shared;
    handle = PyObject_GetAttr(PyTuple_GET_ITEM(built, 0), s_handle);
    if (handle == NULL) goto error;
    Py_INCREF(handle);
    if (as_ull(handle, &function) < 0) goto error;
    shared = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(built, 1));
    if (shared == (unsigned long long)-1 && PyErr_Occurred()) goto error;
    types = PyObject_GetAttr(PyTuple_GET_ITEM(built, 0), s_types);
    if (types == NULL) goto error;
    if (!PyBytes_Check(types) || PyBytes_GET_SIZE(types) != 8) goto done;
    /* decoupled_lookback_scan(out, x, n, exclusive, status, status + 16, tiles, epoch): one tile, no status */
    int truth = PyObject_IsTrue(exclusive);
    if (truth < 0) goto error;
    numbers[0] = PyLong_FromUnsignedLongLong(out);
    numbers[1] = PyLong_FromUnsignedLongLong(view.address);
    numbers[2] = PyLong_FromLongLong(view.n);
    numbers[3] = PyLong_FromLong(truth);
    numbers[4] = PyLong_FromLong(0);
    numbers[5] = PyLong_FromLong(0);
    numbers[6] = PyLong_FromLong(1);
    numbers[7] = PyLong_FromLong(0);
    for (int i = 0; i < 8; i++) {
        if (numbers[i] == NULL) goto error;
    }
    _Alignas(16) char buffer[128];
    void *params[8];
    size_t size = 0;
    const char *letters = PyBytes_AS_STRING(types);
    for (int i = 0; i < 8; i++) {
        if (pack(letters[i], numbers[i], buffer, &size, i, params + i) < 0) goto error;
    }
    void *extra[5] = {LAUNCH_PARAM_BUFFER_POINTER, buffer, LAUNCH_PARAM_BUFFER_SIZE, &size, LAUNCH_PARAM_END};
    int code;
    Py_BEGIN_ALLOW_THREADS
    code = launch_kernel((void *)(uintptr_t)function, 1, 1, 1, (unsigned)threads, 1, 1, (unsigned)shared,
                         (void *)(uintptr_t)stream_handle, NULL, extra);
    Py_END_ALLOW_THREADS
    if (code) goto done; /* the Python path launches again and raises the driver's error */
    *native = PyTuple_GET_ITEM(result, 0);
    Py_INCREF(*native);
    status = 1;
    goto done;
error:
    status = -1;
done:
    Py_XDECREF(view.dtype);
    Py_XDECREF(view.library_dtype);
    Py_XDECREF(device);
    Py_XDECREF(context);
    Py_XDECREF(itemsize_obj);
    Py_XDECREF(stream);
    Py_XDECREF(result);
    Py_XDECREF(key);
    Py_XDECREF(handle);
    Py_XDECREF(types);
    for (int i = 0; i < 8; i++) Py_XDECREF(numbers[i]);
    return status;
}

static PyObject *scan_direct(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "scan_direct(x, op, exclusive)");
        return NULL;
    }
    if (direct_readers == NULL || scan_kernels == NULL || launch_kernel == NULL) Py_RETURN_NONE;
    PyObject *native = NULL;
    int status = scan_ready(args[0], args[1], args[2], &native);
    if (status == 1) return native;
    if (status < 0) {
        if (!PyErr_ExceptionMatches(PyExc_Exception)) return NULL; /* an interrupt: not ours to swallow */
        PyErr_Clear();                                           /* the Python path says what was wrong */
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"bind", (PyCFunction)(void (*)(void))bind, METH_FASTCALL, "bind(cuLaunchKernel, cuCtxGetCurrent, cuCtxSetCurrent)"},
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL,
     "launch(function, grid, block, shared, stream, types, *args) -> CUresult"},
    {"get_context", get_context, METH_NOARGS, "cuCtxGetCurrent: the current context's handle (0 if none; None if the call fails)"},
    {"set_context", set_context, METH_O, "cuCtxSetCurrent(handle) -> CUresult"},
    {"configure_direct", (PyCFunction)(void (*)(void))configure_direct, METH_FASTCALL,
     "configure_direct(readers, primaries, torch_dtypes, hooks): the tables every whole call reads"},
    {"configure_reduce", (PyCFunction)(void (*)(void))configure_reduce, METH_FASTCALL,
     "configure_reduce(plans, buffers, knob_values, knob_names, partials_offset)"},
    {"configure_scan", (PyCFunction)(void (*)(void))configure_scan, METH_FASTCALL,
     "configure_scan(kernels, large, small)"},
    {"scan_direct", (PyCFunction)(void (*)(void))scan_direct, METH_FASTCALL,
     "scan_direct(x, op, exclusive) -> the result of a ready one-tile default scan, or None (the Python path takes it)"},
    {"reduce_direct", (PyCFunction)(void (*)(void))reduce_direct, METH_FASTCALL,
     "reduce_direct(x, op) -> the 0-d result of a ready default reduction, or None (the Python path takes it)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_launch", "pyscan's kernel launch in C", -1, methods};

PyMODINIT_FUNC PyInit__launch(void) { return PyModule_Create(&module); }
