"""Arrays in and out: NumPy, pycuda GPUArray, CuPy, torch, Numba, and anything with `__cuda_array_interface__`.

Every public GPU function starts with `begin(x, ...)`, which checks x *before anything touches the GPU* (a message
that says what was expected and what came) and returns a `Call`:

    call = arrays.begin(x, what="scan: x", dtypes=ELEMENT_TYPES, stream=stream)
    with call:                                  # x's device current in this thread, launches on the call's stream
        out = call.result(x.shape, x.dtype)     # a new array of the caller's kind (or call.expect_out(out, ...))
        driver(call.x, out, ...)                # drivers see .gpudata / .shape / .dtype / .size
        return call.finish(out)                 # the caller's kind: CuPy in, CuPy out; NumPy in, NumPy out

* **No copies of device input.**  A device array is used where it is (any offset); one that is not C-contiguous is
  refused with a ValueError saying how to make it contiguous.  A NumPy array is copied to the device (made
  contiguous first if it is not), the result copied back.  The input is never modified.
* **Results in the caller's kind**, allocated by the caller's library on the caller's device: `cupy.empty`,
  `torch.empty(device=x.device)`, `numba.cuda.device_array`; for GPUArray input and other
  `__cuda_array_interface__` objects a GPUArray over pyscan's own stream-ordered memory (pyscan.memory), which
  NumPy input uses too.  Scratch buffers of a call come from the same place, so the stream-ordered pools keep them
  safe when calls on several streams overlap.
* **Streams.**  `stream=None` means: CuPy and torch input on that library's *current* stream (ordered with the
  caller's work exactly like a CuPy or torch operation), Numba and other `__cuda_array_interface__` input on the
  stream the array names (v3 of the interface), NumPy and GPUArray input on the legacy default stream.  Any other
  stream (pyscan.streams.handle) is used as given; ordering it after the producer of x is then the caller's job,
  as with CuPy's and torch's own `with stream:` blocks.
* **Devices.**  Device data runs on the device that holds it (its primary context made current in this thread for
  the call; a GPUArray keeps a context already current on its device); NumPy input on `CUDA_DEVICE` or device 0.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from . import cuda, gpu, memory, streams

INT32_MAX = 2**31 - 1


def describe(x) -> str:
    kind = kind_of(x)
    if kind is not None:
        try:
            shape = tuple(x.shape)
            dtype = x.dtype
        except AttributeError:  # pragma: no cover - every kind has them
            return f"{type(x).__module__}.{type(x).__name__}"
        return f"{type(x).__module__}.{type(x).__name__} of dtype {dtype} and shape {shape}"
    return f"{type(x).__name__} {x!r}"[:200]


# --- the kinds of array -------------------------------------------------------------------------------------------

class DeviceView:
    """Contiguous device memory as the drivers see it: an address (`gpudata`), shape, dtype and size, and the
    caller's array it belongs to (`native`, kept alive with the view)."""

    __slots__ = ("gpudata", "shape", "dtype", "size", "native")

    def __init__(self, gpudata: int, shape: tuple, dtype, native):
        self.gpudata, self.shape, self.dtype, self.native = int(gpudata), tuple(shape), np.dtype(dtype), native
        self.size = math.prod(self.shape)

    @classmethod
    def of(cls, gpudata: int, shape: tuple, dtype: np.dtype, size: int, native):
        """A view of values already checked (an int address, a tuple shape, a np.dtype, its size): the hot path."""
        view = cls.__new__(cls)
        view.gpudata, view.shape, view.dtype, view.size, view.native = gpudata, shape, dtype, size, native
        return view

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def get(self) -> np.ndarray:
        """A NumPy copy, taken on the running call's stream (waits for it)."""
        return to_host(self)

    def __repr__(self):
        return f"DeviceView(0x{self.gpudata:x}, shape={self.shape}, dtype={self.dtype})"


def _module_root(x) -> str:
    return (type(x).__module__ or "").partition(".")[0]


def _c_contiguous(shape, strides, itemsize) -> bool:
    if strides is None:
        return True
    expected = itemsize
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent > 1 and stride != expected:
            return False
        expected *= extent
    return True


class Kind:
    """How one library's arrays are read and made.  `view(x)` -> (address, shape, dtype, C-contiguous, device or
    None for pycuda's default device); `default_stream(x, device)`; `empty(shape, dtype, device, stream,
    on_library_stream)` -> a new array of the library's own type, usable on `stream` (on_library_stream: `stream`
    is the library's current one, so no stream switch is needed to allocate for it)."""

    name = ""
    library_streams = False  # the library has a current stream (CuPy, torch)
    direct_path = False  # direct(), new_like() and new_scalar() are implemented (see DIRECT_KINDS)
    direct_reader = 0  # how pyscan/launch.c reads the view direct() reads: 1 torch's, 2 CuPy's, 0 it cannot
    keep_current_context = False  # run in the thread's current context when it is on the array's device (pycuda)
    fix_contiguous = "a contiguous copy"

    def zero_d(self, native):
        return native.reshape(())

    def pointer(self, native) -> int:
        return self.view(native)[0]

    def locate(self, address: int) -> int:
        return gpu.default_device()


class _NumPy(Kind):
    """Host arrays: copied to pyscan's own device memory (pyscan.memory) and the result copied back."""

    name = "numpy"

    def view(self, x):
        return 0, x.shape, x.dtype, True, None

    def default_stream(self, x, device):
        return 0

    def empty(self, shape, dtype, device, stream, on_library_stream=True):
        return memory.DeviceBuffer(math.prod(shape) * np.dtype(dtype).itemsize, device, stream,
                                   streams.current_context())

    def pointer(self, native) -> int:
        return native.address


class _GPUArray(Kind):
    """pycuda GPUArrays: used where they are, results GPUArrays over pyscan's own memory (no pycuda context needed,
    so any thread may make them)."""

    name, fix_contiguous, keep_current_context = "pycuda", "x.copy()", True

    def view(self, x):
        address = x.gpudata  # None for an empty GPUArray
        address = int(address) if address is not None else 0
        return address, x.shape, x.dtype, bool(x.flags.c_contiguous), None  # the device: locate(), after the checks

    def locate(self, address: int) -> int:
        """The device holding device memory at `address` (the default device for no memory)."""
        if not address:
            return gpu.default_device()
        gpu.ensure_driver_api()
        return cuda.pointer_device(address)

    def default_stream(self, x, device):
        return 0

    def empty(self, shape, dtype, device, stream, on_library_stream=True):
        import pycuda.gpuarray as ga

        buffer = memory.DeviceBuffer(math.prod(shape) * np.dtype(dtype).itemsize, device, stream,
                                     streams.current_context())
        return ga.GPUArray(shape, dtype, gpudata=buffer.address, base=buffer)

    def pointer(self, native) -> int:
        return int(native.gpudata) if native.gpudata is not None else 0


class _Interface(_GPUArray):
    """Any other object with __cuda_array_interface__: read through the interface; results are GPUArrays."""

    name, fix_contiguous = "__cuda_array_interface__", "a C-contiguous copy"

    def view(self, x):
        cai = x.__cuda_array_interface__
        dtype = np.dtype(cai["typestr"])
        shape = tuple(cai["shape"])
        address = int(cai["data"][0])
        return address, shape, dtype, _c_contiguous(shape, cai.get("strides"), dtype.itemsize), None

    def default_stream(self, x, device):
        return int(x.__cuda_array_interface__.get("stream") or 0)

    def pointer(self, native) -> int:
        return int(native.__cuda_array_interface__["data"][0])


class _Numba(_Interface):
    name, keep_current_context = "numba", False
    fix_contiguous = "x.copy_to_host() and back, or a C-contiguous device array"

    def empty(self, shape, dtype, device, stream, on_library_stream=True):
        from numba import cuda as numba_cuda

        with numba_cuda.gpus[device]:
            return numba_cuda.device_array(shape, dtype, stream=numba_cuda.external_stream(stream) if stream else 0)


class _CuPy(Kind):
    name, library_streams, fix_contiguous, direct_path = "cupy", True, "cupy.ascontiguousarray(x)", True
    direct_reader = 2

    def direct(self, x):
        """(address, n, dtype, stream, context) of a 1-D C-contiguous array whose device's primary context is
        current in this thread, its stream CuPy's current one there; None otherwise (see DIRECT_KINDS)."""
        if x.ndim != 1 or not x.flags.c_contiguous:
            return None
        data = x.data
        device = data.device_id
        context = gpu.primary_if_current(device)
        if not context:
            return None
        return data.ptr, x.size, x.dtype, self.default_stream(x, device), context

    def direct_hooks(self):
        """CuPy's own calls for pyscan/launch.c's whole calls: get_current_stream (of a device) and empty; None for
        a CuPy whose get_current_stream takes no device (default_stream handles both)."""
        cupy = sys.modules.get("cupy")
        if cupy is None:
            return None
        import inspect

        try:
            takes_device = bool(inspect.signature(cupy.cuda.get_current_stream).parameters)
        except (TypeError, ValueError):  # a compiled function without a signature: assume the current form
            takes_device = True
        return (cupy.cuda.get_current_stream, cupy.empty) if takes_device else None

    def new_like(self, x, n, dtype):
        """(a new array like x, its address), allocated on CuPy's current device and stream (which direct() found
        to be x's)."""
        native = sys.modules["cupy"].empty((n,), dtype)
        return native, native.data.ptr

    def new_scalar(self, x, dtype, context):
        native = sys.modules["cupy"].empty((), dtype)
        return native, native.data.ptr

    def view(self, x):
        data = x.data
        return data.ptr, x.shape, x.dtype, x.flags.c_contiguous, data.device_id

    def pointer(self, native) -> int:
        return native.data.ptr

    def default_stream(self, x, device):
        cupy = sys.modules["cupy"]
        try:
            return cupy.cuda.get_current_stream(device).ptr
        except TypeError:  # an older CuPy: one current stream
            return cupy.cuda.get_current_stream().ptr

    def empty(self, shape, dtype, device, stream, on_library_stream=True):
        cupy = sys.modules["cupy"]
        if device != cupy.cuda.runtime.getDevice():
            with cupy.cuda.Device(device):
                return self.empty(shape, dtype, device, stream, on_library_stream)
        if on_library_stream:
            return cupy.empty(shape, dtype)
        with cupy.cuda.ExternalStream(stream):  # CuPy's pool keeps the block for this stream
            return cupy.empty(shape, dtype)


class _Torch(Kind):
    name, library_streams, fix_contiguous, direct_path = "torch", True, "x.contiguous()", True
    direct_reader = 1
    _devices: dict = {}
    _scalars: dict = {}  # (torch dtype, context) -> a 0-d tensor on its device that new_scalar's results are like

    _to_numpy: dict = {}
    _to_torch: dict = {}

    @classmethod
    def _dtypes(cls):
        torch = sys.modules["torch"]
        for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
                     "float64", "bool"):
            if hasattr(torch, name):
                numpy_dtype = np.dtype(np.bool_ if name == "bool" else name)
                cls._to_numpy[getattr(torch, name)] = numpy_dtype
                cls._to_torch[numpy_dtype] = getattr(torch, name)

    @classmethod
    def dtype_of(cls, torch_dtype):
        """The NumPy dtype of a torch dtype (None where NumPy has none, as for bfloat16)."""
        if not cls._to_numpy:
            cls._dtypes()
        return cls._to_numpy.get(torch_dtype)

    @classmethod
    def torch_dtype(cls, dtype):
        if not cls._to_torch:
            cls._dtypes()
        return cls._to_torch[np.dtype(dtype)]

    def view(self, x):
        if not x.is_cuda:
            raise TypeError(f"a torch tensor on {x.device}: pyscan takes CUDA tensors (x.cuda()) or NumPy arrays "
                            "(x.numpy())")
        dtype = self._to_numpy.get(x.dtype) or self.dtype_of(x.dtype)
        if dtype is None:
            raise TypeError(f"unsupported dtype {x.dtype}")
        return x.data_ptr(), tuple(x.shape), dtype, x.is_contiguous(), x.get_device()

    def pointer(self, native) -> int:
        return native.data_ptr()

    _current_stream = None  # device -> torch's current stream handle there

    def default_stream(self, x, device):
        current = self._current_stream
        if current is None:
            torch = sys.modules["torch"]
            raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
            current = _Torch._current_stream = raw or (lambda d: torch.cuda.current_stream(d).cuda_stream)
        return current(device)

    def direct(self, x):
        """(address, n, dtype, stream, context) of a 1-D contiguous CUDA tensor whose device's primary context is
        current in this thread, its stream torch's current one there; None otherwise (see DIRECT_KINDS)."""
        dtype = self._to_numpy.get(x.dtype)  # empty until the first begin(): then None, and begin() fills it
        if dtype is None or x.dim() != 1 or not x.is_contiguous():
            return None
        device = x.get_device()  # -1 for a CPU tensor: no context
        context = gpu.primary_if_current(device)
        current = self._current_stream
        if not context or current is None:
            return None
        return x.data_ptr(), x.numel(), dtype, current(device), context

    def direct_hooks(self):
        """torch's own calls for pyscan/launch.c's whole calls (what default_stream and new_scalar do): its current
        raw stream of a device, empty_like, and the kept 0-d tensors; None before torch has a raw stream here."""
        torch = sys.modules.get("torch")
        raw = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
        return None if raw is None else (raw, torch.empty_like, self._scalars)

    def new_like(self, x, n, dtype):
        """(a new tensor like x, its address) from torch's caching allocator on the current stream."""
        native = sys.modules["torch"].empty_like(x)
        return native, native.data_ptr()

    def new_scalar(self, x, dtype, context):
        """(a new 0-d tensor of x's dtype on x's device, its address): empty_like of a 0-d tensor kept per dtype and
        device (context: the device's primary context, which direct() found), which costs torch less than
        x.new_empty(()) or torch.empty((), dtype=, device=) (docs/public_call_overhead.md)."""
        key = (x.dtype, context)
        like = self._scalars.get(key)
        if like is None:
            like = self._scalars[key] = x.new_empty(())
        native = sys.modules["torch"].empty_like(like)
        return native, native.data_ptr()

    def empty_like(self, x, device, stream, on_library_stream=True):
        """A tensor like x (its shape, dtype and device): torch.empty_like, cheaper than torch.empty's arguments."""
        if on_library_stream:
            return sys.modules["torch"].empty_like(x)
        return self.empty(tuple(x.shape), self.dtype_of(x.dtype), device, stream, on_library_stream)

    def empty(self, shape, dtype, device, stream, on_library_stream=True):
        torch = sys.modules["torch"]
        where = self._devices.get(device)
        if where is None:
            where = self._devices[device] = torch.device("cuda", device)
        if on_library_stream:
            return torch.empty(shape, dtype=self._to_torch.get(dtype) or self.torch_dtype(dtype), device=where)
        # the caching allocator ties a block to the stream current at allocation: make it the call's stream
        with torch.cuda.stream(torch.cuda.ExternalStream(stream, device=where)):
            return torch.empty(shape, dtype=self.torch_dtype(dtype), device=where)


NUMPY, GPUARRAY, INTERFACE, NUMBA, CUPY, TORCH = _NumPy(), _GPUArray(), _Interface(), _Numba(), _CuPy(), _Torch()
_kinds_by_type: dict = {}
# The direct path.  A public call with nothing but x and op given (algorithm "auto", no out=, no stream=) on a type
# in DIRECT_KINDS launches straight from `view = kind.direct(x)` = (address, n, dtype, stream, context): a 1-D
# C-contiguous CuPy array or torch CUDA tensor whose device's primary context is current in this thread (its library
# made it so when it last ran there), the stream its library's current one.  No Call, no context switch, no
# thread-local state; the result from kind.new_like() / new_scalar(); the launch the driver's own (the pattern's
# registered `direct`).  It reads what begin() reads, fewer times.  A view of None (anything else: another shape,
# a strided view, another device's context, an unsupported dtype) sends the call through begin(), which takes every
# other case and says what is wrong if anything is.
DIRECT_KINDS: dict = {}  # type -> its Kind, for the kinds with a direct path (filled by kind_of)
DIRECT_READERS: dict = {}  # type -> (Kind.direct_reader, Kind), for the C module's whole direct calls (the same)


def kind_of(x) -> Kind | None:
    """The Kind of x, or None if pyscan cannot take it."""
    kind = _kinds_by_type.get(type(x))
    if kind is not None:
        return kind
    root = _module_root(x)
    if isinstance(x, np.ndarray):
        kind = NUMPY
    elif gpu.is_gpuarray(x):
        kind = GPUARRAY
    elif root == "cupy" and hasattr(x, "data") and hasattr(x, "device"):
        kind = CUPY
    elif root == "torch" and "torch" in sys.modules and isinstance(x, sys.modules["torch"].Tensor):
        kind = TORCH
    elif root == "numba" and hasattr(x, "__cuda_array_interface__"):
        kind = NUMBA
    elif hasattr(type(x), "__cuda_array_interface__") or hasattr(x, "__cuda_array_interface__"):
        kind = INTERFACE
    else:
        return None
    _kinds_by_type[type(x)] = kind
    if kind.direct_path:
        DIRECT_KINDS[type(x)] = kind
        if kind.direct_reader:
            DIRECT_READERS[type(x)] = (kind.direct_reader, kind)
            if _native is not None:  # its library's own calls, for the whole calls from now on
                configure_native(_native)
    return kind


EXPECTED_KINDS = ("a numpy.ndarray or a device array (pycuda GPUArray, CuPy ndarray, torch CUDA tensor, Numba "
                  "device array, or any object with __cuda_array_interface__)")


# --- one public call ----------------------------------------------------------------------------------------------

_local = streams._local  # .call: the Call running in this thread (beside its stream and context)


class Call:
    """One public call on one array (see the module docstring)."""

    __slots__ = ("kind", "x", "host", "shape", "dtype", "size", "device", "stream", "library_stream", "_previous",
                 "_saved", "_out")

    def __init__(self, kind, x, host, address, shape, dtype, device, stream, library_stream, size=None):
        # shape: a tuple, dtype: a np.dtype (begin() passes them so); size: math.prod(shape) if known
        self.kind, self.host, self.shape, self.dtype, self.device = kind, host, shape, dtype, device
        self.size = math.prod(shape) if size is None else size
        self.stream, self.library_stream = stream, library_stream
        self.x = None if host is not None else (
            x if kind is GPUARRAY else DeviceView.of(address, shape, dtype, self.size, x))
        self._out = None

    def __enter__(self):
        self._previous, context = gpu.enter_device(self.device, keep_current=self.kind.keep_current_context)
        local = _local
        self._saved = (local.stream, local.context, local.call)
        local.stream, local.context, local.call = self.stream, context, self
        if self.host is not None and self.x is None:
            self.x = self.upload(self.host)
        return self

    def __exit__(self, *exc):
        _local.stream, _local.context, _local.call = self._saved
        if self._previous != -1:
            gpu.leave_device(self._previous)
        return False

    # allocation ---------------------------------------------------------------------------------------------------
    def allocate(self, shape, dtype):
        """A new device array of the caller's kind on the call's device and stream, as a DeviceView (the GPUArray
        itself for GPUArray input)."""
        kind = self.kind
        if kind is TORCH and dtype is self.dtype and self.stream == self.library_stream:
            native = self.x.native.new_empty(shape)  # cheaper than torch.empty's dtype and device arguments
        else:
            native = kind.empty(shape, dtype, self.device, self.stream, self.stream == self.library_stream)
        if kind is GPUARRAY:
            return native
        if type(shape) is not tuple:
            shape = tuple(shape)
        if dtype is not self.dtype:
            dtype = np.dtype(dtype)
        return DeviceView.of(kind.pointer(native), shape, dtype,
                             shape[0] if len(shape) == 1 else math.prod(shape), native)

    def upload(self, host: np.ndarray) -> DeviceView:
        """A device copy of a NumPy array in pyscan's memory, on the call's stream."""
        host = np.ascontiguousarray(host)  # held until the copy has read it
        device = DeviceView(0, host.shape, host.dtype, None)
        buffer = memory.DeviceBuffer(host.nbytes, self.device, self.stream, streams.current_context())
        device.gpudata, device.native = buffer.address, buffer
        if host.size:
            cuda.copy_htod(buffer.address, host.ctypes.data, host.nbytes, self.stream)
            if self.stream not in (0, cuda.STREAM_LEGACY):
                cuda.stream_synchronize(self.stream)  # pageable host memory: read before `host` may go
        return device

    def expect_out(self, out, shape, dtype, what="out") -> None:
        """Check `out` now (before any GPU work): the caller's array of that shape and dtype, C-contiguous, writeable
        (NumPy), on the input's device, of the input's side (NumPy for NumPy input, a device array otherwise).
        result() then returns it.  out=None: result() allocates."""
        if out is None:
            self._out = None
            return
        kind = kind_of(out)
        dtype = np.dtype(dtype)
        if kind is None:
            raise TypeError(f"{what}: expected {EXPECTED_KINDS}, got {describe(out)}")
        if (kind is NUMPY) != (self.kind is NUMPY):
            raise TypeError(f"{what}: expected {'a NumPy array' if self.kind is NUMPY else 'a device array'} like the "
                            f"input, got {describe(out)}")
        try:
            address, out_shape, out_dtype, contiguous, device = kind.view(out)
        except TypeError as exc:
            raise TypeError(f"{what}: {exc}") from None
        if tuple(out_shape) != tuple(shape) or np.dtype(out_dtype) != dtype:
            raise ValueError(f"{what}: expected shape {tuple(shape)} and dtype {dtype}, got shape {tuple(out_shape)} "
                             f"and dtype {np.dtype(out_dtype)}")
        if kind is NUMPY:
            if not out.flags.c_contiguous or not out.flags.writeable:
                raise ValueError(f"{what}: the NumPy array must be C-contiguous and writeable")
        elif not contiguous:
            raise ValueError(f"{what}: the array is not contiguous (pyscan needs C order); pass {kind.fix_contiguous}")
        if device is not None and self.device is not None and device != self.device:
            raise ValueError(f"{what}: on device {device}, but the input is on device {self.device}")
        self._out = (kind, out, address)

    def result(self, shape, dtype):
        """The array the result goes to: the `out` given to expect_out, or a new one of the caller's kind."""
        if self._out is None:
            if shape is self.shape and dtype is self.dtype and self.host is None and self.kind is TORCH:
                native = TORCH.empty_like(self.x.native, self.device, self.stream, self.stream == self.library_stream)
                return DeviceView.of(native.data_ptr(), shape, dtype, self.size, native)
            return self.allocate(shape, dtype)
        kind, out, address = self._out
        if kind is NUMPY:
            return _HostOut(out, self.allocate(shape, dtype))
        return out if kind is GPUARRAY else DeviceView(address, shape, dtype, out)

    def finish(self, result):
        """The result in the caller's kind (NumPy: copied back, after the call's stream has finished)."""
        if isinstance(result, _HostOut):
            copy_to_host(result.device, result.host, self.stream)
            return result.host
        if self.kind is NUMPY:
            host = np.empty(result.shape, result.dtype)
            copy_to_host(result, host, self.stream)
            return host
        return result if self.kind is GPUARRAY else result.native

    def on_device(self, result):
        """A device result kept on the device: the caller's kind, a GPUArray over pyscan's memory for NumPy input."""
        if self.kind is NUMPY:
            import pycuda.gpuarray as ga

            return ga.GPUArray(result.shape, result.dtype, gpudata=int(result.gpudata), base=result.native)
        return result if self.kind is GPUARRAY else result.native

    def finish_scalar(self, result):
        """A one-element device result as the caller expects a reduction: a NumPy scalar for NumPy input, else a
        0-d array of the caller's kind."""
        if self.kind is NUMPY:
            host = np.empty(1, result.dtype)
            copy_to_host(result, host, self.stream)
            return host[0]
        native = result if self.kind is GPUARRAY else result.native
        return native if result.shape == () else self.kind.zero_d(native)


class _HostOut:
    """out= a NumPy array: the device result is copied into it at the end."""

    __slots__ = ("host", "device")

    def __init__(self, host, device):
        self.host, self.device = host, device

    def __getattr__(self, name):  # drivers see the device buffer
        return getattr(self.device, name)


def to_host(device_array) -> np.ndarray:
    """A NumPy copy of a device array (GPUArray or DeviceView), taken on the running call's stream."""
    host = np.empty(device_array.shape, device_array.dtype)
    copy_to_host(device_array, host, streams.current())
    return host


def copy_to_host(device_array, host: np.ndarray, stream: int) -> None:
    if host.size:
        cuda.copy_dtoh(host.ctypes.data, int(device_array.gpudata), host.nbytes, stream)
    cuda.stream_synchronize(stream)


def begin(x, *, what: str, dtypes, ndim: int | None = 1, max_length: int | None = None, stream=None) -> Call:
    """Check x and the stream argument (raising TypeError / ValueError before any GPU work) and return the Call."""
    kind = _kinds_by_type.get(type(x)) or kind_of(x)
    if kind is None:
        raise TypeError(f"{what}: expected {EXPECTED_KINDS}, got {describe(x)}")
    try:
        address, shape, dtype, contiguous, device = kind.view(x)
    except TypeError as exc:
        raise TypeError(f"{what}: {exc}") from None
    if type(shape) is not tuple:
        shape = tuple(shape)
    if ndim is not None and len(shape) != ndim:
        raise ValueError(f"{what}: expected a {ndim}-D array, got shape {shape}")
    if dtype not in dtypes:  # a dict keyed by dtypes, or a tuple of dtypes or types (np.dtype equals its type)
        names = ", ".join(str(np.dtype(d)) for d in dtypes)
        raise TypeError(f"{what}: unsupported dtype {dtype}: expected one of {names}")
    size = shape[0] if len(shape) == 1 else math.prod(shape)
    if max_length is not None and size > max_length:
        raise ValueError(f"{what}: {size} elements is more than the kernels' limit of {max_length}")
    host = None
    if kind is NUMPY:
        host = x  # made contiguous (copied only if it is not) when the call uploads it, after every check
    elif not contiguous:
        raise ValueError(f"{what}: the {kind.name} array is not contiguous (a strided view; pyscan needs C order); "
                         f"pass {kind.fix_contiguous}")
    library_stream = None
    if stream is not None:
        stream = streams.handle(stream)
    if kind.library_streams:
        library_stream = kind.default_stream(x, device)
        if stream is None:
            stream = library_stream
    elif stream is None:
        stream = kind.default_stream(x, device) if kind is not NUMPY else 0
    if device is None:
        device = kind.locate(address)
    return Call(kind, x, host, address, shape, dtype, device, stream, library_stream, size)


_native = None  # the C module configure_native handed the tables to (kind_of hands it a new kind's hooks)


def configure_native(module) -> None:
    """Hand pyscan/launch.c the tables every whole call reads: the direct kinds' readers, the primary contexts,
    torch's dtypes and the libraries' own calls (direct_hooks; kind_of hands them over again when a kind is first
    seen later)."""
    global _native
    module.configure_direct(DIRECT_READERS, gpu._primary, _Torch._to_numpy, direct_hooks())
    _native = module


def direct_hooks() -> dict:
    """{Kind.direct_reader: the library's own calls} of the kinds whose arrays have been seen and that have them
    (for pyscan/launch.c's whole calls)."""
    hooks = {}
    for reader, kind in set(DIRECT_READERS.values()):
        found = kind.direct_hooks()
        if found is not None:
            hooks[reader] = found
    return hooks


def direct(x, launch, dtypes):
    """(kind, launch, address, n, dtype, stream, context) when a call on x may take the direct path (DIRECT_KINDS)
    with `launch` (the registered `direct` of the algorithm `auto` runs; None: the pattern has none): a view of
    x's kind, n > 0 elements of one of `dtypes`; else None, and the call goes through begin()."""
    kind = DIRECT_KINDS.get(type(x))
    if kind is None or launch is None:
        return None
    view = kind.direct(x)
    if view is None or not view[1] or view[2] not in dtypes:
        return None
    return (kind, launch, *view)


def running() -> Call | None:
    """The Call running in this thread, if any."""
    return _local.call


# --- scratch, and pycuda's pool for tools outside a call -----------------------------------------------------------

_pool = None


def device_pool():
    """A pycuda DeviceMemoryPool for GPUArrays made outside any call (tools and tests that drive the kernels
    directly, in the thread where pycuda's context is current)."""
    global _pool
    if _pool is None:
        gpu.driver()
        from pycuda.tools import DeviceMemoryPool

        _pool = DeviceMemoryPool()
        gpu.at_release(_release_pool)
    return _pool


def exact_tool_allocations(drv) -> None:
    """GPUArrays made outside a call (tools driving the kernels directly) allocated exactly, not from the pool (for
    compute-sanitizer's memcheck; see pyscan.memory.exact_allocations for the public calls' memory)."""
    global _pool

    class _Exact:
        allocate = staticmethod(lambda nbytes: drv.mem_alloc(max(int(nbytes), 1)))
        free_held = stop_holding = staticmethod(lambda: None)

    _pool = _Exact()


def _release_pool():
    if _pool is not None:
        _pool.free_held()
        _pool.stop_holding()


def free_pool():
    """Give the memory pyscan keeps but no array uses back to the driver (its own pools and pycuda's)."""
    if _pool is not None:
        _pool.free_held()
    memory.trim()


def empty(shape, dtype):
    """An uninitialised device array for a driver: inside a public call, of the caller's kind on the call's device
    and stream; outside one, a GPUArray from the pycuda pool."""
    call = _local.call
    if call is not None:
        return call.allocate(shape, dtype)
    return gpu.gpuarray().empty(shape, dtype, allocator=device_pool().allocate)


def upload(host: np.ndarray):
    """A device copy of the NumPy array `host`: inside a call, in pyscan's memory on the call's stream; outside one,
    a GPUArray from the pycuda pool."""
    call = _local.call
    if call is not None:
        return call.upload(host)
    return gpu.gpuarray().to_gpu(np.ascontiguousarray(host), allocator=device_pool().allocate)


def memset32(array, value: int, words: int) -> None:
    """Set `words` 32-bit words of a device array to `value`, on the running call's stream."""
    cuda.memset_d32(int(array.gpudata), value, words, streams.current())


def check_array(x, *, dtypes, ndim=1, what="x", max_length=None):
    """Validate x without a GPU; return (array, on_gpu): NumPy input made C-contiguous (copied only if needed), a
    device array as it is.  (Public functions use begin(); this serves the models' and tools' checks.)"""
    call = begin(x, what=what, dtypes=dtypes, ndim=ndim, max_length=max_length)
    return (np.ascontiguousarray(call.host), False) if call.host is not None else (x, True)


def to_device(x):
    """A GPUArray holding x (x itself if it is one already)."""
    if gpu.is_gpuarray(x):
        return x
    return upload(np.ascontiguousarray(x))
