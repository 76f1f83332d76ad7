"""The CUDA runtime pyscan stands on: NVIDIA's cuda.core (devices, streams, kernels, stream-ordered memory) and
its cuda.bindings (copies to and from host memory, memsets, the current context).  Each device's primary context,
the caller's streams as they are, one pool per device (docs/runtime.md).  Importing this module needs nothing; the
first GPU call imports cuda.core, and a missing piece raises GPUUnavailableError naming it.
"""

from __future__ import annotations

import importlib
import os
import threading

from ..errors import CaptureError, GPUUnavailableError, OutOfMemoryError

_INSTALL_HINT = ('install the GPU extra, `pip install -e ".[gpu]"` from the pyscan checkout: pycuda builds from source '
                 "and needs the CUDA toolkit with its headers, a C++ compiler and the Python headers (README, "
                 '"Set-up on a GPU box")')
_core = _cu = _allocate = None  # cuda.core, cuda.bindings.driver and the launcher's allocate(), once set up
_capturing = None  # the launcher's capturing(stream): cuStreamIsCapturing, once set up
_reason: str | None = None  # why no GPU is usable, once found
_lock = threading.RLock()


def _check(result, call: str):
    """cuda.bindings returns (CUresult, values...): raise CudaError unless it is CUDA_SUCCESS; return the values."""
    err = result[0]
    if err != 0:
        raise CudaError(call, err)
    return result[1] if len(result) == 2 else result[1:]


class CudaError(RuntimeError):
    """A CUDA driver call failed; `code` is its CUresult."""

    def __init__(self, call: str, code):
        name = getattr(code, "name", str(code))
        super().__init__(f"{call} failed: {name} ({int(code)})")
        self.call, self.code, self.name = call, int(code), name


def ready():
    """(cuda.core, cuda.bindings.driver), set up; GPUUnavailableError saying what is missing otherwise."""
    if _cu is not None:
        return _core, _cu
    with _lock:
        if _cu is None:
            _setup()
    return _core, _cu


def _setup():
    global _core, _cu, _reason, _allocate, _capturing
    if _reason is not None:
        raise GPUUnavailableError(_reason)
    try:
        try:
            import cuda.core as core
            from cuda.bindings import driver as cu
        except ImportError as exc:
            raise GPUUnavailableError(f"cuda.core is not installed ({exc}); `pip install cuda-core cuda-bindings`") from None
        try:
            launcher = importlib.import_module(f"{__package__}._launch")
        except ImportError as exc:
            raise GPUUnavailableError(f"pyscan's kernel launcher is not built ({exc}); `pip install -e .` in the "
                                      "checkout builds it (or `python setup.py build_ext --inplace`)") from None
        try:
            import pycuda.compiler  # noqa: F401 - the compiler; pycuda.driver loads libcuda
        except ImportError as exc:
            text = str(exc)
            if "libcuda" in text:
                raise GPUUnavailableError(f"no CUDA driver: pycuda cannot load the NVIDIA driver library ({text}); "
                                          "pyscan's GPU functions need an NVIDIA GPU and its driver.") from None
            raise GPUUnavailableError(f"pycuda (pyscan's kernel compiler) is not installed ({text}); "
                                      f"{_INSTALL_HINT}.") from None
        try:
            _check(cu.cuInit(0), "cuInit")
            count = _check(cu.cuDeviceGetCount(), "cuDeviceGetCount")
        except Exception as exc:  # noqa: BLE001 - no libcuda (cuda.pathfinder's error) or cuInit failing
            raise GPUUnavailableError(f"no CUDA driver: {str(exc).splitlines()[0].rstrip('.')}. pyscan's GPU functions "
                                      "need an NVIDIA GPU and its driver.") from None
        if count == 0:
            raise GPUUnavailableError("no CUDA device: the driver is loaded but sees no GPU.")
    except GPUUnavailableError as exc:
        _reason = str(exc)
        raise
    _devices.extend(range(count))
    _core, _cu, _allocate, _capturing = core, cu, launcher.allocate, launcher.capturing


def gpu_unavailable_reason() -> str | None:
    """None when a GPU is usable, else the reason it is not (the GPUUnavailableError message)."""
    try:
        ready()
    except GPUUnavailableError as exc:
        return str(exc)
    return None


# --- devices and contexts -----------------------------------------------------------------------------------------

_devices: list = []  # the ordinals the driver sees
_primary: dict = {}  # ordinal -> its primary context's handle (an int)
_info: dict = {}  # ordinal -> (SMs, "sm_XY", cuda.core Device)


def default_device() -> int:
    """The device of NumPy input: `CUDA_DEVICE` (as in pycuda.autoinit) or 0."""
    return int(os.environ.get("CUDA_DEVICE", "0"))


def device_count() -> int:
    ready()
    return len(_devices)


def primary(ordinal: int) -> int:
    handle = _primary.get(ordinal)
    if handle is None:
        core, cu = ready()
        if ordinal not in _devices:
            raise GPUUnavailableError(f"device {ordinal} does not exist: the driver sees {len(_devices)} device(s)")
        core.Device(ordinal).set_current()  # retains the primary context, as cuda.core's Device does
        handle = _primary[ordinal] = int(_check(cu.cuCtxGetCurrent(), "cuCtxGetCurrent"))
    return handle


def current_context() -> int:
    return int(_check(_cu.cuCtxGetCurrent(), "cuCtxGetCurrent")) if _cu is not None else 0


def enter(ordinal: int, keep_any_on_device: bool = False) -> int:
    """Make device `ordinal`'s primary context current in this thread; returns what leave() puts back (-1: nothing
    changed).  keep_any_on_device: a context already current on that device stays (pycuda.autoinit's, for GPUArrays)."""
    target = _primary.get(ordinal) or primary(ordinal)
    previous = int(_cu.cuCtxGetCurrent()[1])
    if previous == target:
        return -1
    if keep_any_on_device and previous and int(_check(_cu.cuCtxGetDevice(), "cuCtxGetDevice")) == ordinal:
        return -1
    _check(_cu.cuCtxSetCurrent(target), "cuCtxSetCurrent")
    return previous


def leave(previous: int) -> None:
    if previous != -1:
        _check(_cu.cuCtxSetCurrent(previous), "cuCtxSetCurrent")


def device_of_pointer(address: int) -> int:
    """The device holding device memory at `address` (the only one where there is one)."""
    if len(_devices) == 1 or not address:
        return _devices[0] if len(_devices) == 1 else default_device()
    attribute = _cu.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
    return int(_check(_cu.cuPointerGetAttribute(attribute, address), "cuPointerGetAttribute"))


def _device_info(ordinal: int) -> tuple:
    info = _info.get(ordinal)
    if info is None:
        core, _ = ready()
        device = core.Device(ordinal)
        major, minor = device.compute_capability
        info = _info[ordinal] = (device.properties.multiprocessor_count, f"sm_{major}{minor}", device)
    return info


def multiprocessor_count(ordinal: int) -> int:
    return _device_info(ordinal)[0]


def architecture(ordinal: int) -> str:
    """"sm_90" for an H100: the target the kernels are compiled for."""
    return _device_info(ordinal)[1]


def device_attributes(ordinal: int | None = None) -> dict:
    """Name, compute capability, SMs and memory of a device (default: NumPy input's)."""
    ordinal = default_device() if ordinal is None else ordinal
    sms, _, device = _device_info(ordinal)
    previous = enter(ordinal)
    try:
        free, total = _check(_cu.cuMemGetInfo(), "cuMemGetInfo")
    finally:
        leave(previous)
    props = device.properties
    return {"name": device.name, "compute_capability": tuple(device.compute_capability), "multiprocessors": sms,
            "max_threads_per_block": props.max_threads_per_block,
            "shared_memory_per_block": props.max_shared_memory_per_block, "total_memory": int(total),
            "free_memory": int(free), "pci_bus_id": device.pci_bus_id}


def device_attribute(ordinal: int, name: str) -> int:
    """A cuda.core DeviceProperties attribute (e.g. "max_registers_per_multiprocessor")."""
    return getattr(_device_info(ordinal)[2].properties, name)


# --- streams ------------------------------------------------------------------------------------------------------

STREAM_LEGACY, STREAM_PER_THREAD = 1, 2  # cudaStreamLegacy, cudaStreamPerThread, as __cuda_array_interface__ writes
_streams: dict = {}  # handle -> cuda.core Stream


def stream(handle: int):
    """cuda.core's Stream over the stream handle (0 and 1: the legacy default stream; 2: the per-thread one)."""
    wrapped = _streams.get(handle)
    if wrapped is None:
        core, _ = ready()
        if handle in (0, STREAM_LEGACY):
            wrapped = core.LEGACY_DEFAULT_STREAM
        elif handle == STREAM_PER_THREAD:
            wrapped = core.PER_THREAD_DEFAULT_STREAM
        else:
            wrapped = core.Stream.from_handle(handle)
        _streams[handle] = wrapped
    return wrapped


def handle_of(stream_object) -> int:
    """The handle of a stream argument: a raw `cudaStream_t` int (0: the legacy default stream), any object with
    the `__cuda_stream__` protocol (cuda.core, CuPy, recent torch), a torch, CuPy, pycuda or Numba stream."""
    if stream_object is None:
        return 0
    if isinstance(stream_object, bool):
        raise TypeError("stream: expected a stream object or a cudaStream_t handle (int), got a bool")
    if isinstance(stream_object, int):
        if stream_object < 0:
            raise ValueError(f"stream: a cudaStream_t handle is a non-negative int, got {stream_object}")
        return stream_object
    protocol = getattr(stream_object, "__cuda_stream__", None)
    if protocol is not None:
        return int((protocol() if callable(protocol) else protocol)[1])
    for attribute in ("cuda_stream", "ptr", "handle"):  # torch, CuPy, pycuda / Numba (a ctypes c_void_p)
        value = getattr(stream_object, attribute, None)
        if value is not None:
            value = getattr(value, "value", value)
            return 0 if value is None else int(value)
    raise TypeError(f"stream: expected a pycuda, CuPy, torch, Numba or cuda.core stream or a cudaStream_t handle "
                    f"(int), got {type(stream_object).__module__}.{type(stream_object).__name__}")


def capturing(handle: int, device: int | None = None) -> bool:
    """Whether stream `handle` is being captured into a CUDA graph (cuStreamIsCapturing from C: the check the calls
    that keep state between launches make before they pick their path; docs/runtime.md, "CUDA graphs").  The hot
    paths ask `_capturing(handle)` first and come here on any non-zero code.  The legacy stream while a blocking
    stream is capturing raises CaptureError: nothing may run on it then.  The legacy stream asked from a thread with
    no current context (a worker thread's first call) answers CUDA_ERROR_INVALID_CONTEXT: asked again in `device`'s
    primary context (tests/gpu/test_interop_gpu.py, the thread pool)."""
    if _capturing is None:  # not set up: nothing has run on a GPU
        return False
    code = _capturing(handle)
    if code == -201 and device is not None:  # CUDA_ERROR_INVALID_CONTEXT
        previous = enter(device)
        try:
            code = _capturing(handle)
        finally:
            leave(previous)
    if code < 0:
        if code == -906:  # CUDA_ERROR_STREAM_CAPTURE_IMPLICIT
            raise CaptureError("pyscan: the legacy default stream cannot be used while a stream is capturing a CUDA "
                               "graph (NumPy and GPUArray input run on it): pass device arrays of the capturing "
                               "library (torch, CuPy) or stream= the capturing stream")
        raise CudaError("cuStreamIsCapturing", _cu.CUresult(-code))
    return code != 0


def refuse_capture(handle: int, what: str) -> None:
    """CaptureError naming `what` when stream `handle` is capturing: a wait or a host copy would invalidate it."""
    if capturing(handle):
        raise CaptureError(f"pyscan: {what} cannot be captured into a CUDA graph (stream 0x{handle:x} is capturing): "
                           "a host copy or a wait for the GPU has no place in a graph.  Capture only calls on device "
                           "arrays whose sizes and parameters are known without reading the data (docs/runtime.md, "
                           '"CUDA graphs"); make this call before or after the capture.')


def synchronize(handle: int) -> None:
    refuse_capture(handle, "waiting for the stream")
    _check(_cu.cuStreamSynchronize(handle), "cuStreamSynchronize")


# --- memory -------------------------------------------------------------------------------------------------------

_pools: dict = {}  # ordinal -> its pool's CUmemoryPool handle (an int); cuda.core's DeviceMemoryResource made it
_resources: dict = {}  # ordinal -> that DeviceMemoryResource, kept alive
_exact = False


def exact_allocations(on: bool = True) -> None:
    """From now on allocate each buffer exactly (cuMemAlloc / cuMemFree, synchronous) instead of from the pool: for
    compute-sanitizer's memcheck, which then sees every buffer's own bounds."""
    global _exact
    _exact = bool(on)


def pool(ordinal: int) -> int:
    handle = _pools.get(ordinal)
    if handle is None:
        core, cu = ready()
        with _lock:
            if ordinal not in _pools:
                resource = core.DeviceMemoryResource(ordinal, core.DeviceMemoryResourceOptions())
                keep = cu.cuuint64_t(2**64 - 1)  # keep what it has between calls, as CuPy's and torch's pools do
                _check(cu.cuMemPoolSetAttribute(resource.handle, cu.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                                keep), "cuMemPoolSetAttribute")
                _resources[ordinal], _pools[ordinal] = resource, int(resource.handle)
            handle = _pools[ordinal]
    return handle


def allocate(nbytes: int, ordinal: int, handle: int):
    """nbytes (at least 1) of device `ordinal`'s memory from its pool, allocated on stream `handle` and freed on it when
    the returned object (`.address`) goes: the launcher's allocate() (pyscan/runtime/_launch.c), a cuda.core Buffer
    costing 1-3 us more a call.  OutOfMemoryError names what was asked and what is free."""
    if _exact:
        synchronize(handle)
        err, address = _cu.cuMemAlloc(max(1, nbytes))
        memory = err = int(err) or _Exact(int(address))
    else:
        memory = err = _allocate(_pools.get(ordinal) or pool(ordinal), nbytes or 1, handle)
    if type(memory) is not int:
        return memory
    if err == 2:  # CUDA_ERROR_OUT_OF_MEMORY
        free, total = _check(_cu.cuMemGetInfo(), "cuMemGetInfo")
        raise OutOfMemoryError(f"out of device memory: asked for {nbytes:,} bytes on device {ordinal}, which has "
                               f"{int(free):,} of {int(total):,} bytes free")
    raise CudaError("cuMemAllocFromPoolAsync", _cu.CUresult(int(err)))


class _Exact:
    """An exact allocation (cuMemAlloc), freed at once when it goes; a destructor raises nothing."""

    __slots__ = ("address",)

    def __init__(self, address):
        self.address = address

    def __del__(self):
        try:
            _cu.cuMemFree(self.address)
        except Exception:  # noqa: BLE001 - at exit the driver may be gone
            pass


def trim() -> None:
    """Give the memory the pools keep but no buffer uses back to the driver (waits for the device first)."""
    for ordinal, handle in list(_pools.items()):
        previous = enter(ordinal)
        try:
            _check(_cu.cuCtxSynchronize(), "cuCtxSynchronize")
            _check(_cu.cuMemPoolTrimTo(handle, 0), "cuMemPoolTrimTo")
        finally:
            leave(previous)


def copy_htod(device: int, host: int, nbytes: int, handle: int) -> None:
    refuse_capture(handle, "copying host memory to the device (NumPy input, explicit bin edges, a first upload)")
    if nbytes:
        _check(_cu.cuMemcpyHtoDAsync(device, host, nbytes, handle), "cuMemcpyHtoDAsync")


def upload(device: int, host: int, nbytes: int, handle: int) -> None:
    """copy_htod from pageable host memory: on a stream other than the default ones it also waits, so that the host
    memory has been read before its owner may free or change it."""
    copy_htod(device, host, nbytes, handle)
    if handle not in (0, STREAM_LEGACY):
        synchronize(handle)


def copy_dtoh(host: int, device: int, nbytes: int, handle: int) -> None:
    """Device to host on the stream, then wait for it (the host memory is pageable)."""
    refuse_capture(handle, "copying a device result to host memory (NumPy results, a range read from the data)")
    if nbytes:
        _check(_cu.cuMemcpyDtoHAsync(host, device, nbytes, handle), "cuMemcpyDtoHAsync")
    synchronize(handle)


def copy_dtod(destination: int, source: int, nbytes: int, handle: int) -> None:
    if nbytes:
        _check(_cu.cuMemcpyDtoDAsync(destination, source, nbytes, handle), "cuMemcpyDtoDAsync")


def memset32(address: int, value: int, words: int, handle: int) -> None:
    if words:
        _check(_cu.cuMemsetD32Async(address, value, words, handle), "cuMemsetD32Async")
