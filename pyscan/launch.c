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
 *
 * and the whole default public call of the fast reduction and the fast scan on a CuPy array or torch tensor (read
 * the array, choose the build and grid by the driver's rule, have the library allocate the result, launch), over
 * the live tables the Python side hands over (see "The direct reduction" and "The whole scan" below):
 *   configure_direct(readers, primaries, torch_dtypes, hooks), configure_reduce(...), configure_scan(...)
 *   reduce_direct(x, op) / scan_direct(x, op, exclusive) -> the result, or None (the Python path takes the call)
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

/* Bytes of an argument of type letter `code`; 0 for a letter that is not one. */
static size_t letter_size(char code) {
    switch (code) {
        case 'P': case 'q': case 'Q': case 'd': return 8;
        case 'i': case 'I': case 'f': return 4;
        case 'h': case 'H': return 2;
        case 'b': case 'B': case '?': return 1;
    }
    return 0;
}

static int unsigned_letter(char code) {
    return code == 'P' || code == 'Q' || code == 'I' || code == 'H' || code == 'B';
}

/* The next argument's slot of `size` bytes in buffer, at the next multiple of its size (C alignment), the padding
 * zeroed as struct packs it; NULL past ARGUMENT_BYTES. */
static char *next_slot(char *buffer, size_t *offset, size_t size) {
    size_t at = (*offset + size - 1) / size * size;
    if (at + size > ARGUMENT_BYTES) return NULL;
    memset(buffer + *offset, 0, at - *offset);
    *offset = at + size;
    return buffer + at;
}

/* Store an integer of type letter `code` at slot: v is its value for the signed letters, u for the unsigned ones.
 * 0, or -1 when it is out of the letter's range (or the letter is not an integer's). */
static int store_integer(char code, long long v, unsigned long long u, char *slot) {
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
    return -1;
}

/* Pack one argument of type letter `code` at the next multiple of its size (C alignment) in buffer; *at_out is
 * where it went (cuLaunchKernel's kernelParams point there). */
static int pack(char code, PyObject *value, char *buffer, size_t *offset, Py_ssize_t index, void **at_out) {
    size_t size = letter_size(code);
    if (!size) {
        PyErr_Format(PyExc_ValueError, "argument %zd: unknown type letter '%c'", index, code);
        return -1;
    }
    char *slot = next_slot(buffer, offset, size);
    if (slot == NULL) {
        PyErr_SetString(PyExc_ValueError, "the kernel's arguments pass 4096 bytes");
        return -1;
    }
    *at_out = slot;
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
    if (unsigned_letter(code)) {
        u = PyLong_AsUnsignedLongLong(number);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) overflow = 1;
    } else {
        v = PyLong_AsLongLongAndOverflow(number, &overflow);
        if (v == -1 && PyErr_Occurred()) overflow = 1;
    }
    Py_DECREF(number);
    if (!overflow && store_integer(code, v, u, slot) == 0) return 0;
    PyErr_Clear();
    PyErr_Format(PyExc_OverflowError, "argument %zd (type '%c') is out of range: %R", index, code, value);
    return -1;
}

/* Pack `count` non-negative integers by their type letters (a whole call's arguments, known in C): 0, or -1 when a
 * letter is not an integer's or a value does not fit it (the Python path then launches, and says so). */
static int pack_integers(const char *letters, const unsigned long long *values, int count, char *buffer,
                         size_t *size) {
    *size = 0;
    for (int i = 0; i < count; i++) {
        size_t bytes = letter_size(letters[i]);
        if (!bytes || letters[i] == 'f' || letters[i] == 'd' || letters[i] == '?') return -1;
        if (!unsigned_letter(letters[i]) && values[i] > (unsigned long long)INT64_MAX) return -1;
        char *slot = next_slot(buffer, size, bytes);
        if (slot == NULL || store_integer(letters[i], (long long)values[i], values[i], slot) < 0) return -1;
    }
    return 0;
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
    *s_itemsize, *s_address, *s_nbytes, *s_threads, *s_vecs, *s_types, *s_new_like, *s_min_blocks, *s_lock,
    *s_state, *s_acquire, *s_release, *s_small_max_tiles, *s_epochs;

static int intern_names(void) {
    struct { PyObject **slot; const char *text; } names[] = {
        {&s_dtype, "dtype"}, {&s_dim, "dim"}, {&s_is_contiguous, "is_contiguous"}, {&s_get_device, "get_device"},
        {&s_data_ptr, "data_ptr"}, {&s_numel, "numel"}, {&s_ndim, "ndim"}, {&s_flags, "flags"},
        {&s_c_contiguous, "c_contiguous"}, {&s_data, "data"}, {&s_ptr, "ptr"}, {&s_device_id, "device_id"},
        {&s_size, "size"}, {&s_default_stream, "default_stream"}, {&s_new_scalar, "new_scalar"},
        {&s_handle, "handle"}, {&s_itemsize, "itemsize"}, {&s_address, "address"}, {&s_nbytes, "nbytes"},
        {&s_threads, "threads"}, {&s_vecs, "vecs"}, {&s_types, "_types"}, {&s_new_like, "new_like"},
        {&s_min_blocks, "min_blocks"}, {&s_lock, "lock"}, {&s_state, "state"}, {&s_acquire, "acquire"},
        {&s_release, "release"}, {&s_small_max_tiles, "SMALL_MAX_TILES"}, {&s_epochs, "EPOCHS"},
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

/* The fast scan's tables: configure_scan(kernels, large, small, status, multiprocessors, module) --
 * decoupled_lookback's kernel cache, its Configs per element size, its tile-status buffers per element size
 * ({4: {(context, stream): Kept}, 8: ...}), the SM count per context, and its module dict, whose SMALL_MAX_TILES and
 * EPOCHS each call reads as they are. */
static PyObject *scan_kernels, *scan_large, *scan_small, *scan_status, *scan_multiprocessors, *scan_module;

static PyObject *configure_scan(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "configure_scan(kernels, large, small, status, multiprocessors, module)");
        return NULL;
    }
    for (int i = 0; i < 6; i++) {
        if (!PyDict_Check(args[i])) {
            PyErr_Format(PyExc_TypeError, "configure_scan: argument %d must be a dict", i);
            return NULL;
        }
    }
    if (intern_names() < 0) return NULL;
    PyObject **slots[] = {&scan_kernels, &scan_large, &scan_small, &scan_status, &scan_multiprocessors, &scan_module};
    for (int i = 0; i < 6; i++) {
        Py_INCREF(args[i]);
        Py_XSETREF(*slots[i], args[i]);
    }
    Py_RETURN_NONE;
}

/* A module constant read by its interned name: 1 and its value, 0 if it is missing or not an int, -1 on an
 * exception. */
static int module_int(PyObject *module, PyObject *name, long long *out) {
    PyObject *value = PyDict_GetItemWithError(module, name); /* borrowed */
    if (value == NULL) return PyErr_Occurred() ? -1 : 0;
    if (!PyLong_Check(value)) return 0;
    *out = PyLong_AsLongLong(value);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 1;
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

/* What every whole call reads before its pattern's own part: x's reader and kind, its view, its device's primary
 * context (current in this thread) and its library's current stream there. */
typedef struct {
    int reader;
    PyObject *kind; /* borrowed from direct_readers */
    View view;
    PyObject *device, *context, *stream; /* new references */
    unsigned long long stream_handle;
} Call;

/* 1 when x is a reader's 1-D contiguous array of n > 0 elements whose device's primary context is current here (the
 * call then filled in), 0 when it is not, -1 on an exception.  end_call releases what it took, in every case. */
static int start_call(PyObject *x, Call *call) {
    memset(call, 0, sizeof *call);
    PyObject *entry = PyDict_GetItemWithError(direct_readers, (PyObject *)Py_TYPE(x));
    if (entry == NULL) return PyErr_Occurred() ? -1 : 0;
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2) return 0;
    long reader = PyLong_AsLong(PyTuple_GET_ITEM(entry, 0));
    if (reader == -1 && PyErr_Occurred()) return -1;
    call->reader = (int)reader;
    call->kind = PyTuple_GET_ITEM(entry, 1);
    int found = read_view(call->reader, x, &call->view);
    if (found <= 0 || call->view.n <= 0) return found < 0 ? -1 : 0;
    call->device = PyLong_FromLongLong(call->view.device);
    if (call->device == NULL) return -1;
    int status = current_primary(call->device, &call->context);
    if (status <= 0) return status;
    call->stream = current_stream(call->reader, call->kind, x, call->device);
    if (call->stream == NULL) return -1;
    call->stream_handle = PyLong_AsUnsignedLongLong(call->stream);
    if (call->stream_handle == (unsigned long long)-1 && PyErr_Occurred()) return -1;
    return 1;
}

static void end_call(Call *call) {
    Py_XDECREF(call->view.dtype);
    Py_XDECREF(call->view.library_dtype);
    Py_XDECREF(call->device);
    Py_XDECREF(call->context);
    Py_XDECREF(call->stream);
}

/* A new array from the caller's library, as (native, address), a new tuple reference: torch, empty_like(like);
 * CuPy, empty(shape, dtype).  NULL with an exception if the library raises. */
static PyObject *library_result(int reader, PyObject *like, PyObject *shape, PyObject *dtype) {
    PyObject *native, *address = NULL;
    if (reader == 1) {
        native = PyObject_CallOneArg(PyTuple_GET_ITEM(torch_hooks, 1), like);
        if (native != NULL) address = call0(native, s_data_ptr);
    } else {
        native = PyObject_CallFunctionObjArgs(PyTuple_GET_ITEM(cupy_hooks, 1), shape, dtype, NULL);
        PyObject *data = native == NULL ? NULL : PyObject_GetAttr(native, s_data);
        if (data != NULL) {
            address = PyObject_GetAttr(data, s_ptr);
            Py_DECREF(data);
        }
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

static int has_hooks(int reader) { return (reader == 1 && torch_hooks != NULL) || (reader == 2 && cupy_hooks != NULL); }

/* The 0-d result: (native, address), a new tuple reference, through the library's own call or kind.new_scalar;
 * NULL without an exception when torch's kept 0-d tensor for (dtype, context) is not made yet (new_scalar makes
 * it). */
static PyObject *new_result(PyObject *x, Call *call) {
    if (!has_hooks(call->reader))
        return PyObject_CallMethodObjArgs(call->kind, s_new_scalar, x, call->view.dtype, call->context, NULL);
    if (call->reader == 1) {
        PyObject *key = PyTuple_Pack(2, call->view.library_dtype, call->context);
        if (key == NULL) return NULL;
        PyObject *like = PyDict_GetItemWithError(PyTuple_GET_ITEM(torch_hooks, 2), key); /* borrowed */
        Py_DECREF(key);
        return like == NULL ? NULL : library_result(1, like, NULL, NULL);
    }
    PyObject *shape = PyTuple_New(0);
    if (shape == NULL) return NULL;
    PyObject *pair = library_result(2, NULL, shape, call->view.dtype);
    Py_DECREF(shape);
    return pair;
}

/* A result like x (n elements): (native, address), a new tuple reference, through the library's own call or
 * kind.new_like. */
static PyObject *new_like(PyObject *x, Call *call) {
    if (call->reader == 1 && torch_hooks != NULL) return library_result(1, x, NULL, NULL);
    PyObject *n = PyLong_FromLongLong(call->view.n);
    if (n == NULL) return NULL;
    PyObject *pair;
    if (call->reader == 2 && cupy_hooks != NULL) {
        PyObject *shape = PyTuple_Pack(1, n);
        pair = shape == NULL ? NULL : library_result(2, NULL, shape, call->view.dtype);
        Py_XDECREF(shape);
    } else {
        pair = PyObject_CallMethodObjArgs(call->kind, s_new_like, x, n, call->view.dtype, NULL);
    }
    Py_DECREF(n);
    return pair;
}

/* The result's address; -1 with an exception set if result (a (native, address) pair) is not one. */
static int result_address(PyObject *result, unsigned long long *out) {
    if (!PyTuple_Check(result) || PyTuple_GET_SIZE(result) != 2) {
        PyErr_SetString(PyExc_TypeError, "a result must be a (native, address) pair");
        return -1;
    }
    *out = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(result, 1));
    return (*out == (unsigned long long)-1 && PyErr_Occurred()) ? -1 : 0;
}

/* A function handle (a Kernel's or a pycuda Function's .handle). */
static int function_handle(PyObject *fn, unsigned long long *out) {
    return as_ull(PyObject_GetAttr(fn, s_handle), out);
}

/* Launch the whole call's kernel with its packed arguments on the call's stream, the GIL released: 1 and the result's
 * native array in *native, or 0 when the driver refuses (the Python path launches again and raises its error). */
static int launch_whole(Call *call, unsigned long long function, unsigned grid, unsigned threads, unsigned shared,
                        void *arguments, size_t size, PyObject *result, PyObject **native) {
    void *extra[5] = {LAUNCH_PARAM_BUFFER_POINTER, arguments, LAUNCH_PARAM_BUFFER_SIZE, &size, LAUNCH_PARAM_END};
    int code;
    Py_BEGIN_ALLOW_THREADS
    code = launch_kernel((void *)(uintptr_t)function, grid, 1, 1, threads, 1, 1, shared,
                         (void *)(uintptr_t)call->stream_handle, NULL, extra);
    Py_END_ALLOW_THREADS
    if (code) return 0;
    *native = PyTuple_GET_ITEM(result, 0);
    Py_INCREF(*native);
    return 1;
}

/* The entry points' common end: the result, None (the Python path takes the call), or an interrupt passed on. */
static PyObject *whole_result(int status, PyObject *native) {
    if (status == 1) return native;
    if (status < 0) {
        if (!PyErr_ExceptionMatches(PyExc_Exception)) return NULL; /* an interrupt: not ours to swallow */
        PyErr_Clear();                                           /* the Python path says what was wrong */
    }
    Py_RETURN_NONE;
}

/* Whether the plan's knobs (a tuple in knob_names' order) are the knobs' values now: 1, 0, or -1 on an exception. */
static int knobs_match(PyObject *planned) {
    Py_ssize_t count = PyTuple_GET_SIZE(knob_names);
    if (!PyTuple_Check(planned) || PyTuple_GET_SIZE(planned) != count) return 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *value = PyDict_GetItemWithError(knob_values, PyTuple_GET_ITEM(knob_names, i)); /* borrowed */
        if (value == NULL) return PyErr_Occurred() ? -1 : 0;
        int same = PyObject_RichCompareBool(PyTuple_GET_ITEM(planned, i), value, Py_EQ);
        if (same <= 0) return same;
    }
    return 1;
}

/* The reduction's part of a started call: 1 and the result in *native, 0 when something is not ready, -1 on an
 * exception. */
static int reduce_ready(PyObject *x, PyObject *op, Call *call, PyObject **native) {
    int status = 0;
    PyObject *result = NULL;
    /* the plan the driver made, for the knobs as they are */
    PyObject *key = PyTuple_Pack(3, call->view.dtype, op, call->context);
    if (key == NULL) return -1;
    PyObject *plan = PyDict_GetItemWithError(reduce_plans, key); /* borrowed; an unhashable op raises */
    Py_DECREF(key);
    if (plan == NULL) return PyErr_Occurred() ? -1 : 0;
    if (!PyTuple_Check(plan) || PyTuple_GET_SIZE(plan) != 6) return 0;
    status = knobs_match(PyTuple_GET_ITEM(plan, 0));
    if (status <= 0) return status;
    status = 0;
    long long threads = PyLong_AsLongLong(PyTuple_GET_ITEM(PyTuple_GET_ITEM(plan, 0), 0)); /* FAST_BLOCK */
    long long most_small = PyLong_AsLongLong(PyTuple_GET_ITEM(plan, 2));
    long long most_large = PyLong_AsLongLong(PyTuple_GET_ITEM(plan, 4));
    long long per_block = PyLong_AsLongLong(PyTuple_GET_ITEM(plan, 5));
    if (PyErr_Occurred()) return -1;
    if (per_block <= 0 || threads <= 0 || threads > UINT32_MAX) return 0;
    /* fast._choose: one vector per thread on the small build while its resident blocks hold them, else every
     * resident block of the large build */
    long long blocks = (call->view.n + per_block - 1) / per_block;
    PyObject *fn = PyTuple_GET_ITEM(plan, 1);
    if (blocks > most_small) {
        fn = PyTuple_GET_ITEM(plan, 3);
        blocks = most_large;
    }
    if (blocks <= 0 || blocks > UINT32_MAX) return 0;
    unsigned long long function;
    if (function_handle(fn, &function) < 0) return -1;
    unsigned long long partials = 0, ticket = 0;
    if (blocks > 1) { /* the stream's workspace, if it is big enough already */
        PyObject *where = PyTuple_Pack(2, call->context, call->stream);
        if (where == NULL) return -1;
        PyObject *kept = PyDict_GetItemWithError(reduce_buffers, where); /* borrowed */
        Py_DECREF(where);
        if (kept == NULL) return PyErr_Occurred() ? -1 : 0;
        long long itemsize, nbytes;
        if (as_ll(PyObject_GetAttr(call->view.dtype, s_itemsize), &itemsize) < 0 ||
            as_ll(PyObject_GetAttr(kept, s_nbytes), &nbytes) < 0 || as_ull(PyObject_GetAttr(kept, s_address), &ticket) < 0)
            return -1;
        if (ticket == 0 || nbytes < partials_offset + blocks * itemsize) return 0;
        partials = ticket + (unsigned long long)partials_offset;
    }
    /* the result, from the caller's library */
    result = new_result(x, call);
    if (result == NULL) return PyErr_Occurred() ? -1 : 0;
    unsigned long long out;
    if (result_address(result, &out) < 0) {
        status = -1;
    } else { /* reduce_fast(out, partials, ticket, x, n): "PPPPq" */
        _Alignas(16) unsigned long long arguments[5] = {out, partials, ticket, call->view.address,
                                                        (unsigned long long)call->view.n};
        status = launch_whole(call, function, (unsigned)blocks, (unsigned)threads, 0, arguments, sizeof arguments,
                              result, native);
    }
    Py_DECREF(result);
    return status;
}

static PyObject *reduce_direct(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "reduce_direct(x, op)");
        return NULL;
    }
    if (direct_readers == NULL || reduce_plans == NULL || launch_kernel == NULL) Py_RETURN_NONE;
    PyObject *native = NULL;
    Call call;
    int status = start_call(args[0], &call);
    if (status == 1) status = reduce_ready(args[0], args[1], &call, &native);
    end_call(&call);
    return whole_result(status, native);
}

/* ---------------------------------------------------------------------------------------------------------------
 * The whole scan: a default pyscan.scan(x, op=..., exclusive=...) of a CuPy array or torch tensor, in C, with the
 * fast scan (kernels/scan/decoupled_lookback.cu).  The tile follows decoupled_lookback._policy (SMALL's below
 * SMALL_MAX_TILES of its tiles, except where the large tile covers the array in one), the grid Config.grid (one
 * block for one tile; persistent blocks for aligned arrays; a block per tile for unaligned ones), and an array of
 * more than one tile takes its stream's tile-status buffer and next epoch as next_status does, under the buffer's
 * lock (taken without waiting: a buffer busy in another thread, one too small, an epoch that must wrap, a build not
 * compiled yet go to the Python path, as does anything else not ready (see above)).
 */
static int scan_config(PyObject *configs, PyObject *itemsize_obj, long long itemsize, long long *tile,
                       long long *threads, long long *min_blocks) {
    PyObject *config = PyDict_GetItemWithError(configs, itemsize_obj); /* borrowed */
    if (config == NULL) return PyErr_Occurred() ? -1 : 0;
    long long vecs;
    if (as_ll(PyObject_GetAttr(config, s_threads), threads) < 0 || as_ll(PyObject_GetAttr(config, s_vecs), &vecs) < 0 ||
        as_ll(PyObject_GetAttr(config, s_min_blocks), min_blocks) < 0)
        return -1;
    *tile = *threads * vecs * (16 / itemsize);
    return *tile > 0 && *threads > 0;
}

/* The next epoch of the stream's tile-status buffer for `tiles` tiles: 1 with its address and epoch, 0 when it is
 * not ready (none yet, too small, its lock held, the epoch must wrap: next_status does those), -1 on an exception. */
static int next_status(Call *call, long long itemsize, long long tiles, unsigned long long *address,
                       unsigned long long *epoch) {
    PyObject *itemsize_obj = PyLong_FromLongLong(itemsize);
    if (itemsize_obj == NULL) return -1;
    PyObject *buffers = PyDict_GetItemWithError(scan_status, itemsize_obj); /* borrowed */
    Py_DECREF(itemsize_obj);
    if (buffers == NULL) return PyErr_Occurred() ? -1 : 0;
    if (!PyDict_Check(buffers)) return 0;
    PyObject *where = PyTuple_Pack(2, call->context, call->stream);
    if (where == NULL) return -1;
    PyObject *kept = PyDict_GetItemWithError(buffers, where); /* borrowed */
    Py_DECREF(where);
    if (kept == NULL) return PyErr_Occurred() ? -1 : 0;
    long long epochs;
    int found = module_int(scan_module, s_epochs, &epochs);
    if (found <= 0) return found;
    PyObject *lock = PyObject_GetAttr(kept, s_lock);
    if (lock == NULL) return -1;
    int held = is_true(PyObject_CallMethodOneArg(lock, s_acquire, Py_False));
    if (held <= 0) {
        Py_DECREF(lock);
        return held;
    }
    long long words = itemsize == 4 ? tiles : 4 * tiles, nbytes, state;
    int status = 0;
    if (as_ll(PyObject_GetAttr(kept, s_nbytes), &nbytes) < 0 || as_ull(PyObject_GetAttr(kept, s_address), address) < 0 ||
        as_ll(PyObject_GetAttr(kept, s_state), &state) < 0) {
        status = -1;
    } else if (*address && nbytes >= 8 * (2 + words) && state >= 0 && state + 1 < epochs) {
        PyObject *next = PyLong_FromLongLong(state + 1);
        status = next == NULL || PyObject_SetAttr(kept, s_state, next) < 0 ? -1 : 1;
        Py_XDECREF(next);
        *epoch = (unsigned long long)(state + 1);
    }
    /* release the lock in every case, an exception of the reads above kept aside meanwhile */
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *raised = status < 0 ? PyErr_GetRaisedException() : NULL;
#else
    PyObject *type = NULL, *value = NULL, *traceback = NULL;
    if (status < 0) PyErr_Fetch(&type, &value, &traceback);
#endif
    PyObject *released = PyObject_CallMethodNoArgs(lock, s_release);
    Py_DECREF(lock);
    if (status < 0) { /* the first exception is the one that matters */
        Py_XDECREF(released);
#if PY_VERSION_HEX >= 0x030C0000
        PyErr_SetRaisedException(raised);
#else
        PyErr_Restore(type, value, traceback);
#endif
        return -1;
    }
    if (released == NULL) return -1;
    Py_DECREF(released);
    return status;
}

/* The scan's part of a started call: 1 and the result in *native, 0 when something is not ready, -1 on an
 * exception. */
static int scan_ready(PyObject *x, PyObject *op, PyObject *exclusive, Call *call, PyObject **native) {
    int status = 0;
    PyObject *itemsize_obj = NULL, *result = NULL, *key = NULL, *types = NULL;
    /* the tile: decoupled_lookback._policy */
    itemsize_obj = PyObject_GetAttr(call->view.dtype, s_itemsize);
    if (itemsize_obj == NULL) return -1;
    long long itemsize = PyLong_AsLongLong(itemsize_obj), n = call->view.n;
    if (itemsize == -1 && PyErr_Occurred()) goto error;
    if (itemsize <= 0 || 16 % itemsize) goto done;
    long long small_tile = 0, small_threads = 0, small_blocks = 0, tile, threads, min_blocks;
    int has_small = scan_config(scan_small, itemsize_obj, itemsize, &small_tile, &small_threads, &small_blocks);
    int has_large = scan_config(scan_large, itemsize_obj, itemsize, &tile, &threads, &min_blocks);
    if (has_small < 0 || has_large < 0) goto error;
    if (!has_large) goto done;
    long long small_max_tiles = 0;
    int found = module_int(scan_module, s_small_max_tiles, &small_max_tiles);
    if (found < 0) goto error;
    if (!found) goto done;
    int small = has_small && n <= small_max_tiles * small_tile && (n <= small_tile || n > tile);
    if (small) {
        tile = small_tile;
        threads = small_threads;
        min_blocks = small_blocks;
    }
    long long tiles = (n + tile - 1) / tile;
    if (threads > 1024 || tiles > UINT32_MAX) goto done;
    /* the result */
    result = new_like(x, call);
    if (result == NULL) goto error;
    unsigned long long out;
    if (result_address(result, &out) < 0) goto error;
    /* the build: decoupled_lookback._kernels[(dtype, op, vector, context, small)] -> (Kernel, shared bytes) */
    int vector = !((out | call->view.address) & 15);
    key = PyTuple_Pack(5, call->view.dtype, op, vector ? Py_True : Py_False, call->context, small ? Py_True : Py_False);
    if (key == NULL) goto error;
    PyObject *built = PyDict_GetItemWithError(scan_kernels, key); /* borrowed */
    if (built == NULL) {
        if (PyErr_Occurred()) goto error;
        goto done; /* not compiled yet: the Python path compiles it */
    }
    if (!PyTuple_Check(built) || PyTuple_GET_SIZE(built) != 2) goto done;
    unsigned long long function, shared;
    if (function_handle(PyTuple_GET_ITEM(built, 0), &function) < 0) goto error;
    shared = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(built, 1));
    if (shared == (unsigned long long)-1 && PyErr_Occurred()) goto error;
    if (shared > UINT32_MAX) goto done;
    types = PyObject_GetAttr(PyTuple_GET_ITEM(built, 0), s_types);
    if (types == NULL) goto error;
    if (!PyBytes_Check(types) || PyBytes_GET_SIZE(types) != 8) goto done;
    int truth = PyObject_IsTrue(exclusive);
    if (truth < 0) goto error;
    /* the grid (Config.grid) and, past one tile, the stream's tile status and its next epoch */
    unsigned long long grid = (unsigned long long)tiles, status_address = 0, epoch = 0;
    if (tiles > 1) {
        if (vector) {
            PyObject *count = PyDict_GetItemWithError(scan_multiprocessors, call->context); /* borrowed */
            if (count == NULL) {
                if (PyErr_Occurred()) goto error;
                goto done; /* the Python path asks the device */
            }
            long long multiprocessors = PyLong_AsLongLong(count);
            if (multiprocessors == -1 && PyErr_Occurred()) goto error;
            if (multiprocessors <= 0 || min_blocks <= 0) goto done;
            if (multiprocessors * min_blocks < tiles) grid = (unsigned long long)(multiprocessors * min_blocks);
        }
        status = next_status(call, itemsize, tiles, &status_address, &epoch);
        if (status <= 0) goto done;
        status = 0;
    }
    /* decoupled_lookback_scan(out, x, n, exclusive, status, status + 16, tiles, epoch); one tile needs no status */
    unsigned long long arguments[8] = {out, call->view.address, (unsigned long long)n, (unsigned long long)truth,
                                       status_address, status_address ? status_address + 16 : 0,
                                       (unsigned long long)tiles, epoch};
    _Alignas(16) char buffer[128];
    size_t size;
    if (pack_integers(PyBytes_AS_STRING(types), arguments, 8, buffer, &size) < 0) goto done;
    status = launch_whole(call, function, (unsigned)grid, (unsigned)threads, (unsigned)shared, buffer, size, result,
                          native);
    goto done;
error:
    status = -1;
done:
    Py_XDECREF(itemsize_obj);
    Py_XDECREF(result);
    Py_XDECREF(key);
    Py_XDECREF(types);
    return status;
}

static PyObject *scan_direct(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "scan_direct(x, op, exclusive)");
        return NULL;
    }
    if (direct_readers == NULL || scan_kernels == NULL || launch_kernel == NULL) Py_RETURN_NONE;
    PyObject *native = NULL;
    Call call;
    int status = start_call(args[0], &call);
    if (status == 1) status = scan_ready(args[0], args[1], args[2], &call, &native);
    end_call(&call);
    return whole_result(status, native);
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
     "configure_scan(kernels, large, small, status, multiprocessors, module)"},
    {"scan_direct", (PyCFunction)(void (*)(void))scan_direct, METH_FASTCALL,
     "scan_direct(x, op, exclusive) -> the result of a ready default scan, or None (the Python path takes it)"},
    {"reduce_direct", (PyCFunction)(void (*)(void))reduce_direct, METH_FASTCALL,
     "reduce_direct(x, op) -> the 0-d result of a ready default reduction, or None (the Python path takes it)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_launch", "pyscan's kernel launch in C", -1, methods};

PyMODINIT_FUNC PyInit__launch(void) { return PyModule_Create(&module); }
