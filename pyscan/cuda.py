"""The few CUDA driver-API calls pyscan makes itself, through ctypes on libcuda.

pycuda compiles the kernels and holds NumPy and GPUArray data; these calls are what pycuda cannot do for a program
that lives in CuPy or PyTorch: launch on *their* streams (a pycuda `Stream` cannot wrap a foreign `cudaStream_t`),
make the primary context of *any* device current in *any* thread, and order work between streams with events.
ctypes releases the GIL around each call, so threads do not serialise on a launch.

Every call is checked: a non-zero CUresult raises CudaError with the driver's name for it
(`CUDA_ERROR_INVALID_VALUE`, ...) and the call that failed.  Loading libcuda is lazy: importing this module needs
nothing.
"""

from __future__ import annotations

import ctypes
import threading

# cuLaunchKernel's `extra` markers (cuda.h): the arguments as one packed buffer.
LAUNCH_PARAM_END = 0
LAUNCH_PARAM_BUFFER_POINTER = 1
LAUNCH_PARAM_BUFFER_SIZE = 2

# cuda.h constants used here.
DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39
DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82
DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106
DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
FUNC_ATTRIBUTE_NUM_REGS = 4
FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9
EVENT_DISABLE_TIMING = 2
ERROR_NOT_READY = 600
STREAM_LEGACY = 1  # the legacy default stream's handle (CU_STREAM_LEGACY), as __cuda_array_interface__ v3 writes it
STREAM_PER_THREAD = 2  # CU_STREAM_PER_THREAD

_P = ctypes.c_void_p
_SIGNATURES = {
    # name: argument types (the result is always CUresult, an int)
    "cuInit": [ctypes.c_uint],
    "cuGetErrorName": [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)],
    "cuDeviceGetCount": [ctypes.POINTER(ctypes.c_int)],
    "cuDeviceGet": [ctypes.POINTER(ctypes.c_int), ctypes.c_int],
    "cuDeviceGetAttribute": [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int],
    "cuDevicePrimaryCtxRetain": [ctypes.POINTER(_P), ctypes.c_int],
    "cuCtxGetCurrent": [ctypes.POINTER(_P)],
    "cuCtxSetCurrent": [_P],
    "cuCtxGetDevice": [ctypes.POINTER(ctypes.c_int)],
    "cuCtxSynchronize": [],
    "cuModuleLoadData": [ctypes.POINTER(_P), ctypes.c_char_p],
    "cuModuleGetFunction": [ctypes.POINTER(_P), _P, ctypes.c_char_p],
    "cuFuncGetAttribute": [ctypes.POINTER(ctypes.c_int), ctypes.c_int, _P],
    "cuFuncSetAttribute": [_P, ctypes.c_int, ctypes.c_int],
    "cuLaunchKernel": [_P, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                       ctypes.c_uint, _P, _P, _P],
    "cuMemAlloc_v2": [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t],
    "cuMemFree_v2": [ctypes.c_uint64],
    "cuMemsetD32Async": [ctypes.c_uint64, ctypes.c_uint, ctypes.c_size_t, _P],
    "cuMemcpyDtoHAsync_v2": [_P, ctypes.c_uint64, ctypes.c_size_t, _P],
    "cuMemcpyHtoDAsync_v2": [ctypes.c_uint64, _P, ctypes.c_size_t, _P],
    "cuMemcpyDtoDAsync_v2": [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_size_t, _P],
    "cuStreamSynchronize": [_P],
    "cuStreamWaitEvent": [_P, _P, ctypes.c_uint],
    "cuEventCreate": [ctypes.POINTER(_P), ctypes.c_uint],
    "cuEventRecord": [_P, _P],
    "cuEventQuery": [_P],
    "cuEventDestroy_v2": [_P],
    "cuPointerGetAttribute": [_P, ctypes.c_int, ctypes.c_uint64],
    "cuMemPoolCreate": [ctypes.POINTER(_P), _P],
    "cuMemPoolSetAttribute": [_P, ctypes.c_int, _P],
    "cuMemPoolTrimTo": [_P, ctypes.c_size_t],
    "cuMemAllocFromPoolAsync": [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t, _P, _P],
    "cuMemFreeAsync": [ctypes.c_uint64, _P],
}


class CudaError(RuntimeError):
    """A CUDA driver call failed; `code` is its CUresult."""

    def __init__(self, call: str, code: int, name: str):
        super().__init__(f"{call} failed: {name} ({code})")
        self.call, self.code, self.name = call, code, name


class _Driver:
    """libcuda's functions as attributes, each returning CUresult."""

    def __init__(self, lib):
        self.cdll = lib
        for name, argtypes in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = argtypes, ctypes.c_int
            setattr(self, name, fn)


_lib: _Driver | None = None
_lock = threading.Lock()


def lib() -> _Driver:
    """libcuda, loaded once (OSError if the NVIDIA driver library is not installed)."""
    global _lib
    if _lib is None:
        with _lock:
            if _lib is None:
                _lib = _Driver(ctypes.CDLL("libcuda.so.1"))
    return _lib


def raw_lib():
    """libcuda's ctypes CDLL itself (pyscan.native takes its functions' addresses)."""
    return lib().cdll


def error_name(code: int) -> str:
    name = ctypes.c_char_p()
    if lib().cuGetErrorName(code, ctypes.byref(name)) == 0 and name.value:
        return name.value.decode()
    return "CUDA_ERROR_UNKNOWN"


def check(code: int, call: str) -> None:
    if code:
        raise CudaError(call, code, error_name(code))


def init() -> None:
    check(lib().cuInit(0), "cuInit")


def device_count() -> int:
    count = ctypes.c_int()
    check(lib().cuDeviceGetCount(ctypes.byref(count)), "cuDeviceGetCount")
    return count.value


def device_attribute(ordinal: int, attribute: int) -> int:
    value = ctypes.c_int()
    check(lib().cuDeviceGetAttribute(ctypes.byref(value), attribute, ordinal), "cuDeviceGetAttribute")
    return value.value


def primary_context(ordinal: int) -> int:
    """The handle of device `ordinal`'s primary context (retained once per process: it lives as long as pyscan)."""
    ctx = _P()
    check(lib().cuDevicePrimaryCtxRetain(ctypes.byref(ctx), ordinal), "cuDevicePrimaryCtxRetain")
    return ctx.value


_native_context = None  # (get_context, set_context) of pyscan.native's C module; False where there is none


def _find_native_context():
    global _native_context
    lib()  # libcuda first: no driver raises OSError here, as the ctypes calls do
    from . import native

    module = native.launcher()
    _native_context = (module.get_context, module.set_context) if module is not None else False
    return _native_context


def current_context() -> int:
    """The handle of the context current in this thread, 0 if none."""
    fast = _native_context
    if fast is None:
        fast = _find_native_context()
    if fast:
        handle = fast[0]()
        if handle is not None:
            return handle
    ctx = _P()
    check(lib().cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
    return ctx.value or 0


def set_current_context(handle: int) -> None:
    fast = _native_context
    if fast is None:
        fast = _find_native_context()
    code = fast[1](handle or None) if fast else lib().cuCtxSetCurrent(handle or None)
    check(code, "cuCtxSetCurrent")


def context_device() -> int:
    """The ordinal of the current context's device."""
    ordinal = ctypes.c_int()
    check(lib().cuCtxGetDevice(ctypes.byref(ordinal)), "cuCtxGetDevice")
    return ordinal.value


def pointer_device(pointer: int) -> int:
    """The ordinal of the device that holds device memory at `pointer`."""
    ordinal = ctypes.c_int()
    check(lib().cuPointerGetAttribute(ctypes.byref(ordinal), POINTER_ATTRIBUTE_DEVICE_ORDINAL, pointer),
          "cuPointerGetAttribute(DEVICE_ORDINAL)")
    return ordinal.value


def load_module(image: bytes) -> int:
    module = _P()
    check(lib().cuModuleLoadData(ctypes.byref(module), image), "cuModuleLoadData")
    return module.value


def module_function(module: int, name: str) -> int:
    function = _P()
    check(lib().cuModuleGetFunction(ctypes.byref(function), module, name.encode()), f"cuModuleGetFunction({name})")
    return function.value


def function_attribute(function: int, attribute: int) -> int:
    value = ctypes.c_int()
    check(lib().cuFuncGetAttribute(ctypes.byref(value), attribute, function), "cuFuncGetAttribute")
    return value.value


def set_function_attribute(function: int, attribute: int, value: int) -> None:
    check(lib().cuFuncSetAttribute(function, attribute, value), "cuFuncSetAttribute")


def mem_alloc(nbytes: int) -> int:
    pointer = ctypes.c_uint64()
    check(lib().cuMemAlloc_v2(ctypes.byref(pointer), max(1, nbytes)), "cuMemAlloc")
    return pointer.value


def mem_free(pointer: int) -> None:
    check(lib().cuMemFree_v2(pointer), "cuMemFree")


def memset_d32(pointer: int, value: int, count: int, stream: int) -> None:
    check(lib().cuMemsetD32Async(pointer, value, count, stream or None), "cuMemsetD32Async")


def copy_dtoh(host_pointer: int, device_pointer: int, nbytes: int, stream: int) -> None:
    """Device to host on `stream`; the host memory is pageable, so wait for the stream before reading it."""
    check(lib().cuMemcpyDtoHAsync_v2(host_pointer, device_pointer, nbytes, stream or None), "cuMemcpyDtoHAsync")


def copy_htod(device_pointer: int, host_pointer: int, nbytes: int, stream: int) -> None:
    check(lib().cuMemcpyHtoDAsync_v2(device_pointer, host_pointer, nbytes, stream or None), "cuMemcpyHtoDAsync")


def copy_dtod(destination: int, source: int, nbytes: int, stream: int) -> None:
    check(lib().cuMemcpyDtoDAsync_v2(destination, source, nbytes, stream or None), "cuMemcpyDtoDAsync")


def stream_synchronize(stream: int) -> None:
    check(lib().cuStreamSynchronize(stream or None), "cuStreamSynchronize")


def event_create() -> int:
    event = _P()
    check(lib().cuEventCreate(ctypes.byref(event), EVENT_DISABLE_TIMING), "cuEventCreate")
    return event.value


def event_record(event: int, stream: int) -> None:
    check(lib().cuEventRecord(event, stream or None), "cuEventRecord")


def event_done(event: int) -> bool:
    code = lib().cuEventQuery(event)
    if code == ERROR_NOT_READY:
        return False
    check(code, "cuEventQuery")
    return True


def event_destroy(event: int) -> None:
    check(lib().cuEventDestroy_v2(event), "cuEventDestroy")


def stream_wait_event(stream: int, event: int) -> None:
    check(lib().cuStreamWaitEvent(stream or None, event, 0), "cuStreamWaitEvent")
