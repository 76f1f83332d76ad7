/* pyscan.runtime._launch: one kernel launch, and one stream-ordered allocation, with no Python in between --
   mechanism only.

   launch(context, function, stream, geometry, types, *args) -> CUresult (0: launched)
   allocate(pool, nbytes, stream) -> Memory (`.address`; freed on `stream` when it goes) or a CUresult (failed)
   capturing(stream) -> 0 (not capturing), 1 (capturing into a CUDA graph), 2 (a capture invalidated), or minus a
             CUresult (cuStreamIsCapturing failed: -906, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, for the legacy stream
             while a blocking stream is capturing); the one driver call pyscan makes to take its capture path

   context   a CUcontext handle to launch in (made current for the launch if it is not, then put back), or 0 for
             the thread's current one
   function  a CUkernel or CUfunction handle (cuda.core's Kernel.handle; cuLaunchKernel takes either)
   stream    a CUstream handle (0 and 1: the legacy default stream, 2: the per-thread one)
   geometry  (grid x, y, z, block x, y, z, dynamic shared bytes)
   types     the kernel's argument letters, as pycuda's prepare() takes them (pyscan.runtime.loader.signature)
   args      one value per letter: an int (or anything with __index__) for the integer letters and P, a float for
             f and d, packed to the letter's C type

   Why it exists: cuda.core.launch takes about 5.4 us a launch on the H100 host where cuLaunchKernel from C takes
   about 3 (docs/public_call_overhead.md), and a small pyscan call is one launch.  Which kernel, which geometry and
   which arguments are the Python plans' business; this file only packs and launches.  libcuda is opened at the
   first launch, so the module imports on machines without a driver.  allocate() is cuMemAllocFromPoolAsync on the
   pool cuda.core made: a small call allocates its result, and cuda.core's Buffer (or a Python owner calling
   cuda.bindings) costs 1-3 us more a call than this (pyscan_tools/lab/alloc_launch_ab.py). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stddef.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

typedef int CUresult;
typedef void *CUcontext;
typedef CUresult (*launch_kernel_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    void *, void **, void **);
typedef CUresult (*get_context_t)(CUcontext *);
typedef CUresult (*set_context_t)(CUcontext);
typedef CUresult (*alloc_async_t)(unsigned long long *, size_t, void *, void *);
typedef CUresult (*free_async_t)(unsigned long long, void *);
typedef CUresult (*is_capturing_t)(void *, int *);

static launch_kernel_t launch_kernel;
static get_context_t get_context;
static set_context_t set_context;
static alloc_async_t alloc_async;
static free_async_t free_async;
static is_capturing_t is_capturing;

enum { MOST_ARGS = 32 };

static int open_driver(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        PyErr_Format(PyExc_OSError, "pyscan launch: libcuda.so.1 could not be loaded (%s)", dlerror());
        return -1;
    }
    get_context = (get_context_t)dlsym(lib, "cuCtxGetCurrent");
    set_context = (set_context_t)dlsym(lib, "cuCtxSetCurrent");
    alloc_async = (alloc_async_t)dlsym(lib, "cuMemAllocFromPoolAsync");
    free_async = (free_async_t)dlsym(lib, "cuMemFreeAsync");
    is_capturing = (is_capturing_t)dlsym(lib, "cuStreamIsCapturing");
    launch_kernel = (launch_kernel_t)dlsym(lib, "cuLaunchKernel");
    if (launch_kernel == NULL || get_context == NULL || set_context == NULL || alloc_async == NULL ||
        free_async == NULL || is_capturing == NULL) {
        PyErr_SetString(PyExc_OSError, "pyscan launch: libcuda.so.1 lacks cuLaunchKernel, cuCtxGet/SetCurrent, "
                                       "cuMemAllocFromPoolAsync/cuMemFreeAsync or cuStreamIsCapturing");
        launch_kernel = NULL;
        return -1;
    }
    return 0;
}

static int fits(const char letter, long long v) {
    switch (letter) {
    case 'i': return v >= INT32_MIN && v <= INT32_MAX;
    case 'I': return v >= 0 && v <= UINT32_MAX;
    case 'h': return v >= INT16_MIN && v <= INT16_MAX;
    case 'H': return v >= 0 && v <= UINT16_MAX;
    case 'b': return v >= INT8_MIN && v <= INT8_MAX;
    case 'B': case '?': return v >= 0 && v <= UINT8_MAX;
    default: return 1;
    }
}

/* Pack one argument into its 8-byte slot; -1 with a TypeError naming the argument if it does not fit. */
static int pack(const char letter, PyObject *value, Py_ssize_t index, uint64_t *slot) {
    if (letter == 'f' || letter == 'd') {
        double v = PyFloat_AsDouble(value);
        if (v == -1.0 && PyErr_Occurred()) goto bad;
        if (letter == 'f') { float f = (float)v; memcpy(slot, &f, sizeof f); }
        else memcpy(slot, &v, sizeof v);
        return 0;
    }
    PyObject *integer = PyLong_CheckExact(value) ? (Py_INCREF(value), value) : PyNumber_Index(value);
    if (integer == NULL && Py_TYPE(value)->tp_as_number && Py_TYPE(value)->tp_as_number->nb_int) {
        PyErr_Clear();  /* pycuda's DeviceAllocation has __int__ only, as do NumPy's floats */
        integer = PyNumber_Long(value);
    }
    if (integer == NULL) goto bad;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(integer, &overflow);
    if (overflow > 0 && (letter == 'P' || letter == 'Q')) {  /* addresses and unsigned 64-bit values >= 2^63 */
        unsigned long long u = PyLong_AsUnsignedLongLong(integer);
        Py_DECREF(integer);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) goto bad;
        *slot = u;
        return 0;
    }
    Py_DECREF(integer);
    if (overflow || (v == -1 && PyErr_Occurred()) || !fits(letter, v) ||
        (v < 0 && (letter == 'P' || letter == 'Q'))) goto bad;
    switch (letter) {
    case 'i': case 'I': { uint32_t w = (uint32_t)v; memcpy(slot, &w, 4); break; }
    case 'h': case 'H': { uint16_t w = (uint16_t)v; memcpy(slot, &w, 2); break; }
    case 'b': case 'B': case '?': { uint8_t w = (uint8_t)v; memcpy(slot, &w, 1); break; }
    case 'q': case 'Q': case 'P': *slot = (uint64_t)v; break;
    default:
        PyErr_Format(PyExc_TypeError, "argument %zd: unknown argument letter '%c'", index, letter);
        return -1;
    }
    return 0;
bad:
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "argument %zd (%R) does not fit its type '%c'", index, value, letter);
    return -1;
}

static PyObject *launch(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs < 5) {
        PyErr_SetString(PyExc_TypeError, "launch(context, function, stream, geometry, types, *args)");
        return NULL;
    }
    if (launch_kernel == NULL && open_driver() < 0) return NULL;
    void *context = PyLong_AsVoidPtr(args[0]);
    void *function = PyLong_AsVoidPtr(args[1]);
    void *stream = PyLong_AsVoidPtr(args[2]);
    if (PyErr_Occurred()) return NULL;
    PyObject *geometry = args[3];
    if (!PyTuple_CheckExact(geometry) || PyTuple_GET_SIZE(geometry) != 7) {
        PyErr_SetString(PyExc_TypeError, "geometry: expected (grid x, y, z, block x, y, z, shared bytes)");
        return NULL;
    }
    unsigned dims[7];
    for (int i = 0; i < 7; i++) {
        unsigned long d = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(geometry, i));
        if (d == (unsigned long)-1 && PyErr_Occurred()) return NULL;
        dims[i] = (unsigned)d;
    }
    Py_ssize_t length;
    const char *types = PyBytes_Check(args[4]) ? PyBytes_AS_STRING(args[4]) : PyUnicode_AsUTF8AndSize(args[4], &length);
    if (types == NULL) return NULL;
    length = (Py_ssize_t)strlen(types);
    if (length != nargs - 5 || length > MOST_ARGS) {
        PyErr_Format(PyExc_TypeError, "expected %zd arguments (%s), got %zd", length, types, nargs - 5);
        return NULL;
    }
    uint64_t slots[MOST_ARGS];
    void *params[MOST_ARGS];
    for (Py_ssize_t i = 0; i < length; i++) {
        slots[i] = 0;
        if (pack(types[i], args[5 + i], i, &slots[i]) < 0) return NULL;
        params[i] = &slots[i];
    }
    CUcontext previous = NULL;
    if (context != NULL) {
        CUresult got = get_context(&previous);
        if (got) return PyLong_FromLong(got);
        if (previous == context) context = NULL;
        else if ((got = set_context(context))) return PyLong_FromLong(got);
    }
    CUresult result = launch_kernel(function, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], dims[6], stream,
                                    params, NULL);
    if (context != NULL) {
        CUresult restored = set_context(previous);
        if (!result) result = restored;
    }
    return PyLong_FromLong(result);
}

/* Device memory freed on its stream when the object goes (a failed free, at exit say, is ignored). */
typedef struct {
    PyObject_HEAD
    unsigned long long address;
    void *stream;
} Memory;

static void memory_dealloc(PyObject *self) {
    free_async(((Memory *)self)->address, ((Memory *)self)->stream);
    Py_TYPE(self)->tp_free(self);
}

static PyMemberDef memory_members[] = {
    {"address", T_ULONGLONG, offsetof(Memory, address), READONLY, "the device address"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject MemoryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pyscan.runtime._launch.Memory",
    .tp_basicsize = sizeof(Memory),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Device memory from a stream-ordered pool, freed on its stream when it goes.",
    .tp_dealloc = memory_dealloc,
    .tp_members = memory_members,
};

static PyObject *allocate(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "allocate(pool, nbytes, stream)");
        return NULL;
    }
    if (launch_kernel == NULL && open_driver() < 0) return NULL;
    void *pool = PyLong_AsVoidPtr(args[0]);
    size_t nbytes = PyLong_AsSize_t(args[1]);
    void *stream = PyLong_AsVoidPtr(args[2]);
    if (PyErr_Occurred()) return NULL;
    unsigned long long address = 0;
    CUresult result = alloc_async(&address, nbytes, pool, stream);
    if (result) return PyLong_FromLong(result);
    Memory *memory = PyObject_New(Memory, &MemoryType);
    if (memory == NULL) {
        free_async(address, stream);
        return NULL;
    }
    memory->address = address;
    memory->stream = stream;
    return (PyObject *)memory;
}

/* cuStreamIsCapturing, for the calls that keep state between launches or touch host memory: they take another
   path while their stream is being captured into a CUDA graph (docs/runtime.md, "CUDA graphs"). */
static PyObject *capturing(PyObject *module, PyObject *stream_handle) {
    (void)module;
    if (launch_kernel == NULL && open_driver() < 0) return NULL;
    void *stream = PyLong_AsVoidPtr(stream_handle);
    if (PyErr_Occurred()) return NULL;
    int status = 0;
    CUresult result = is_capturing(stream, &status);
    return PyLong_FromLong(result ? -(long)result : (long)status);
}

static PyMethodDef methods[] = {
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL,
     "launch(context, function, stream, geometry, types, *args) -> CUresult: one cuLaunchKernel"},
    {"allocate", (PyCFunction)(void (*)(void))allocate, METH_FASTCALL,
     "allocate(pool, nbytes, stream) -> Memory, or a CUresult: one cuMemAllocFromPoolAsync"},
    {"capturing", (PyCFunction)capturing, METH_O,
     "capturing(stream) -> 0 none, 1 capturing, 2 invalidated, -CUresult: one cuStreamIsCapturing"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_launch", "One kernel launch from C (mechanism only).",
                                    -1, methods};

PyMODINIT_FUNC PyInit__launch(void) {
    if (PyType_Ready(&MemoryType) < 0) return NULL;
    return PyModule_Create(&module);
}
