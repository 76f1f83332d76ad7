"""Arrays in and out: NumPy, pycuda GPUArray, CuPy, torch, Numba, and anything with `__cuda_array_interface__`.

`begin(x, ...)` checks x before anything touches the GPU and returns the `Call` the drivers are handed; a `Kind`
reads (`view`, `ready`) and makes (`empty`, `new`) one library's arrays.  docs/runtime.md says what a call promises:
no copies of device input, results in the caller's kind, the caller's stream and device.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import sys

import numpy as np

from ..types import BFLOAT16, dtype_name
from ..types import ELEMENT_TYPES as READY_DTYPES
from . import driver


def overlaps(a, b) -> bool:
    """Whether two device arrays as the drivers see them (.gpudata, .size, .dtype) share a byte of memory."""
    a0, b0 = int(a.gpudata), int(b.gpudata)
    return a0 < b0 + b.size * np.dtype(b.dtype).itemsize and b0 < a0 + a.size * np.dtype(a.dtype).itemsize


class DeviceView:
    """Contiguous device memory as the drivers see it: an address (`gpudata`), shape, dtype and size, and what owns
    the memory (`native`: the caller's array or pyscan's Allocation, kept alive with the view)."""

    __slots__ = ("gpudata", "shape", "dtype", "size", "native")

    def __init__(self, gpudata: int, shape: tuple, dtype, native, size: int | None = None):
        self.gpudata, self.shape, self.dtype, self.native = gpudata, shape, dtype, native
        self.size = math.prod(shape) if size is None else size

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def get(self, stream: int = 0) -> np.ndarray:
        """A NumPy copy, taken on `stream` (waits for it)."""
        host = np.empty(self.shape, self.dtype)
        driver.copy_dtoh(host.ctypes.data, self.gpudata, host.nbytes, stream)
        return host

    def __int__(self):
        return self.gpudata

    def __repr__(self):
        return f"DeviceView(0x{self.gpudata:x}, shape={self.shape}, dtype={self.dtype})"


def describe(x) -> str:
    if kind_of(x) is not None:
        return f"{type(x).__module__}.{type(x).__name__} of dtype {x.dtype} and shape {tuple(x.shape)}"
    return f"{type(x).__name__} {x!r}"[:200]


def _c_strides(shape, itemsize) -> tuple:
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def _c_contiguous(shape, strides, itemsize) -> bool:
    if strides is None:
        return True
    expected = itemsize
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent > 1 and stride != expected:
            return False
        expected *= extent
    return True


# --- the kinds of array -------------------------------------------------------------------------------------------

class Kind:
    """How one library's arrays are read and made.  `view(x)` -> (address, shape, dtype, C-contiguous, device or None:
    look it up from the address, stream or None: default_stream(x, device) gives it); `empty(shape, dtype, device,
    stream, on_default)` -> a new array of the library's own type usable on `stream` (on_default: `stream` is the
    caller's default)."""

    name = ""
    fix_contiguous = "a contiguous copy"
    keep_any_on_device = False  # run in the thread's current context when it is on the array's device (pycuda)

    def default_stream(self, x, device) -> int:
        """The stream a call on x runs on when it names none."""
        return self.view(x)[5]

    def empty(self, shape, dtype, device, stream, on_default=True):
        buffer = driver.allocate(math.prod(shape) * dtype.itemsize, device, stream)
        return DeviceView(buffer.address, shape, dtype, buffer)

    def pointer(self, native) -> int:
        return native.gpudata

    def contiguous_copy(self, x, stream):
        """A C-contiguous copy of x made by its own library on `stream` (None: the library's current one), or None
        where the kind cannot (then begin() refuses x, naming the fix)."""
        return None

    def zero_d(self, native):
        return native.reshape(())

    def ready(self, x):
        """(address, length, dtype, device, stream) of a 1-D C-contiguous array that the commonest call takes as it is
        (on its library's stream, pyscan's kernels launched in the device's primary context), or None: begin() then
        takes x, and says what is wrong if anything is.  An array whose device is looked up from its address (its
        results come from pyscan's pool) only while that device's primary context is current."""
        read = self.ready_nd(x)
        if read is None or len(read[1]) != 1:
            return None
        address, shape, dtype, device, stream = read
        return address, shape[0], dtype, device, stream

    def new(self, x, shape, dtype, device, stream):
        """(a new array of this kind, its address) on the stream ready() gave."""
        native = self.empty(shape, dtype, device, stream)
        return native, self.pointer(native)

    def ready_nd(self, x):
        """(address, shape, dtype, device, stream) of a C-contiguous array of any shape that a call along an axis takes
        as it is (ready()'s rule without its 1-D one: ready() is this for 1-D arrays), or None."""
        try:
            address, shape, dtype, contiguous, device, stream = self.view(x)
        except TypeError:
            return None
        if not contiguous or dtype not in READY_DTYPES:
            return None
        if device is None:
            device = driver.device_of_pointer(address)
            if driver._primary.get(device) != driver.current_context():
                return None
        return address, shape, dtype, device, self.default_stream(x, device) if stream is None else stream

    # (a new array of this kind of any `shape` and dtype, its address) on the stream ready_nd() gave: new() takes any
    # shape; torch's new() makes results of x's shape or () only, and has its own.
    new_shaped = new


class _Templated(Kind):
    """A kind whose library builds arrays in Python costing several µs (pycuda's GPUArray, numba's DeviceNDArray):
    its results copy the attributes of one array its own constructor made for that shape, dtype and device, and are
    then given their memory."""

    _templates: dict = {}

    def like(self, make, shape, dtype, device, *more):
        """A new array of that shape, dtype and device, its memory not yet set (`make(shape, dtype, device, *more)`
        makes the template, which keeps no memory alive)."""
        key = (type(self), shape, dtype, device)
        template = self._templates.get(key)
        if template is None:
            template = make(shape, dtype, device, *more)
            if len(self._templates) < 1024:
                self._templates[key] = template
        new = type(template).__new__(type(template))
        new.__dict__.update(template.__dict__)
        return new


class _NumPy(Kind):
    """Host arrays: copied to pyscan's memory on the device and the result copied back."""

    name = "numpy"

    def view(self, x):
        return 0, x.shape, x.dtype, True, driver.default_device(), 0


class _Own(Kind):
    """pyscan's own device memory (DeviceView): what tools and traces that drive the kernels directly make."""

    name = "pyscan"

    def view(self, x):
        return x.gpudata, x.shape, x.dtype, True, None, 0


class _GPUArray(_Templated):
    """pycuda GPUArrays: used where they are; results GPUArrays over pyscan's memory (no pycuda context needed)."""

    name, fix_contiguous, keep_any_on_device = "pycuda", "x.copy()", True

    def view(self, x):
        address = x.gpudata  # None for an empty GPUArray
        return (int(address) if address is not None else 0), x.shape, x.dtype, x.flags.c_contiguous, None, 0

    def empty(self, shape, dtype, device, stream, on_default=True):
        buffer = driver.allocate(math.prod(shape) * dtype.itemsize, device, stream)
        array = self.like(self._template, shape, dtype, device)
        array.gpudata, array.base = buffer.address, buffer
        return array

    @staticmethod
    def _template(shape, dtype, device):
        import pycuda.gpuarray as ga

        return ga.GPUArray(shape, dtype, gpudata=0)

    def pointer(self, native) -> int:
        return int(native.gpudata) if native.gpudata is not None else 0


class _Interface(_GPUArray):
    """Any other object with __cuda_array_interface__: read through the interface; results are GPUArrays."""

    name, fix_contiguous, keep_any_on_device = "__cuda_array_interface__", "a C-contiguous copy", False

    def view(self, x):
        cai = x.__cuda_array_interface__
        dtype = np.dtype(cai["typestr"])
        shape = tuple(cai["shape"])
        return (int(cai["data"][0]), shape, dtype, _c_contiguous(shape, cai.get("strides"), dtype.itemsize), None,
                int(cai.get("stream") or 0))


class _Numba(_Templated):
    """Numba device arrays, read from their own attributes (cheaper than building the interface's dict)."""

    name, fix_contiguous = "numba", "x.copy_to_host() and back, or a C-contiguous device array"
    _contexts: dict = {}  # device -> _numba(device)

    def view(self, x):
        stream = x.stream
        return ((x.device_ctypes_pointer.value or 0), x.shape, x.dtype, x.is_c_contiguous(), None,
                int(stream.handle.value or 0) if stream else 0)

    def empty(self, shape, dtype, device, stream, on_default=True):
        """A Numba array over pyscan's stream-ordered memory (numba's device_array is a synchronous cuMemAlloc)."""
        nbytes = math.prod(shape) * dtype.itemsize
        buffer = driver.allocate(nbytes, device, stream)
        context, pointer, memory_pointer, device_array = self._numba(device)
        data = memory_pointer(context, pointer(buffer.address), nbytes, owner=buffer)
        array = self.like(self._template, shape, dtype, device, device_array, data)
        array.gpu_data = data
        return array

    @staticmethod
    def _template(shape, dtype, device, device_array, data):
        template = device_array(shape, _c_strides(shape, dtype.itemsize), dtype, gpu_data=data)
        template.gpu_data = None  # it keeps no memory alive
        return template

    def _numba(self, device):
        """(numba's context of the device, its device-pointer type, MemoryPointer, DeviceNDArray), found once."""
        known = self._contexts.get(device)
        if known is None:
            from numba import cuda as numba_cuda
            from numba.cuda.cudadrv import devicearray
            from numba.cuda.cudadrv import driver as numba_driver

            with numba_cuda.gpus[device]:
                context = numba_cuda.current_context()
            binding = getattr(numba_driver, "binding", None)
            pointer = binding.CUdeviceptr if getattr(numba_driver, "USE_NV_BINDING", False) else ctypes.c_void_p
            known = self._contexts[device] = (context, pointer, numba_driver.MemoryPointer, devicearray.DeviceNDArray)
        return known

    def pointer(self, native) -> int:
        return native.device_ctypes_pointer.value or 0


class _CuPy(Kind):
    name, fix_contiguous = "cupy", "cupy.ascontiguousarray(x)"
    _takes_device = True  # get_current_stream(device): CuPy >= 13

    def view(self, x):
        data = x.data
        return data.ptr, x.shape, x.dtype, x.flags.c_contiguous, data.device_id, None

    def pointer(self, native) -> int:
        return native.data.ptr

    def contiguous_copy(self, x, stream):
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(x.data.device_id):
            if stream is None:
                return cupy.ascontiguousarray(x)
            with cupy.cuda.ExternalStream(stream):  # the copy and its pool block on the call's stream
                return cupy.ascontiguousarray(x)

    def ready(self, x):  # Kind.ready's rule, read with CuPy's cheapest accessors (the peers' own kinds are hot)
        if x.ndim != 1 or not x.flags.c_contiguous or x.dtype not in READY_DTYPES:
            return None
        data = x.data
        device = data.device_id
        return data.ptr, x.size, x.dtype, device, self.default_stream(x, device)

    def ready_nd(self, x):
        if not x.flags.c_contiguous or x.dtype not in READY_DTYPES:
            return None
        data = x.data
        device = data.device_id
        return data.ptr, x.shape, x.dtype, device, self.default_stream(x, device)

    def default_stream(self, x, device):
        cupy = sys.modules["cupy"]
        if self._takes_device:
            try:
                return cupy.cuda.get_current_stream(device).ptr
            except TypeError:  # an older CuPy: one current stream
                _CuPy._takes_device = False
        return cupy.cuda.get_current_stream().ptr

    def new(self, x, shape, dtype, device, stream):
        # cupy.empty's own constructor, on x's device (current, the common case): the hot call
        cupy = sys.modules["cupy"]
        native = (cupy.ndarray(shape, dtype) if device == cupy.cuda.runtime.getDevice() else
                  self.empty(shape, dtype, device, stream))
        return native, native.data.ptr

    new_shaped = new  # any shape

    def empty(self, shape, dtype, device, stream, on_default=True):
        cupy = sys.modules["cupy"]
        if device != cupy.cuda.runtime.getDevice():
            with cupy.cuda.Device(device):
                return self.empty(shape, dtype, device, stream, on_default)
        if on_default:
            return cupy.empty(shape, dtype)
        with cupy.cuda.ExternalStream(stream):  # CuPy's pool keeps the block for this stream
            return cupy.empty(shape, dtype)


class _Torch(Kind):
    name, fix_contiguous = "torch", "x.contiguous()"
    _to_numpy: dict = {}
    _to_torch: dict = {}
    _devices: dict = {}
    _current = None  # torch's current raw stream of a device
    _compiling = None  # torch.compiler.is_compiling

    @classmethod
    def _dtypes(cls):
        torch = sys.modules["torch"]
        for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
                     "float64", "bool"):
            if hasattr(torch, name):
                numpy_dtype = np.dtype(np.bool_ if name == "bool" else name)
                cls._to_numpy[getattr(torch, name)] = numpy_dtype
                cls._to_torch[numpy_dtype] = getattr(torch, name)
        if hasattr(torch, "bfloat16"):  # NumPy has none: pyscan.types.BFLOAT16 names it
            cls._to_numpy[torch.bfloat16], cls._to_torch[BFLOAT16] = BFLOAT16, torch.bfloat16
        cls._compiling = staticmethod(torch.compiler.is_compiling)  # a constant True to torch.compile's tracer
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        cls._current = raw or (lambda d: torch.cuda.current_stream(d).cuda_stream)

    def view(self, x):
        if not x.is_cuda:
            raise TypeError(f"a torch tensor on {x.device}: pyscan takes CUDA tensors (x.cuda()) or NumPy arrays "
                            "(x.numpy())")
        dtype = self._to_numpy.get(x.dtype)
        if dtype is None:
            raise TypeError(f"unsupported dtype {x.dtype}")
        return x.data_ptr(), tuple(x.shape), dtype, x.is_contiguous(), x.get_device(), None

    def pointer(self, native) -> int:
        return native.data_ptr()

    def default_stream(self, x, device):
        return self._current(device)

    def contiguous_copy(self, x, stream):
        torch = sys.modules["torch"]
        if stream is None:
            return x.contiguous()
        with torch.cuda.stream(torch.cuda.ExternalStream(stream, device=x.device)):
            return x.contiguous()

    def ready(self, x):  # Kind.ready's rule, read with torch's cheapest accessors
        if x.dim() != 1 or not x.is_cuda or not x.is_contiguous():
            return None
        if x.requires_grad or self._compiling():  # autograd, torch.compile, export: pyscan.torch_ops
            return None
        dtype = self._to_numpy.get(x.dtype)
        if dtype not in READY_DTYPES:
            return None
        device = x.get_device()
        return x.data_ptr(), x.shape[0], dtype, device, self._current(device)

    def ready_nd(self, x):
        if not x.is_cuda or not x.is_contiguous() or x.requires_grad or self._compiling():
            return None
        dtype = self._to_numpy.get(x.dtype)
        if dtype not in READY_DTYPES:
            return None
        device = x.get_device()
        return x.data_ptr(), x.shape, dtype, device, self._current(device)

    def new_shaped(self, x, shape, dtype, device, stream):
        native = x.new_empty(shape) if self._to_numpy.get(x.dtype) == dtype else x.new_empty(
            shape, dtype=self._to_torch[dtype])
        return native, native.data_ptr()

    def new(self, x, shape, dtype, device, stream):
        # empty_like's rule, inlined: the hot call.  A scan's result is like x (x's dtype given only where the
        # result's differs: int32 add -> int64); a reduction's 0-d result is like a kept 0-d tensor of its dtype
        # (torch.empty_like with no arguments to parse: 1.7-2.0 us on an H100 host where x.new_empty((), dtype=...)
        # takes 2.3-3.1; pyscan_tools/lab/small_reduce_floor.py)
        torch = sys.modules["torch"]
        if shape == ():
            like = self._zero_d.get((dtype, device))  # (no `or`: a tensor's truth is a read of its value)
            if like is None:
                like = self._zero_d_like(dtype, device, stream)
            native = torch.empty_like(like) if like is not None else x.new_empty((), dtype=self._to_torch[dtype])
        elif self._to_numpy.get(x.dtype) == dtype:
            native = torch.empty_like(x)
        else:
            native = torch.empty_like(x, dtype=self._to_torch[dtype])
        return native, native.data_ptr()

    _zero_d: dict = {}  # (dtype, device) -> a 0-d tensor that reductions' results are made like

    def _zero_d_like(self, dtype, device, stream):
        """The kept 0-d tensor of dtype on device, made now over 16 bytes of pyscan's memory allocated on the call's
        stream, not torch's memory: a tensor torch's allocator made during a capture, or a warm-up of torch.compile's
        CUDA-graph trees, would live in the graph's pool, which they refuse to leave untracked.  None while the
        stream is capturing (an allocation there would be a node of the graph; one on the legacy stream would
        invalidate the capture: tests/gpu/test_graphs_gpu.py): the result is then made with new_empty."""
        torch = sys.modules["torch"]
        try:
            if driver.capturing(stream, device):  # CaptureError: the legacy stream while another stream captures
                return None
            memory = _Interfaced(driver.allocate(16, device, stream), dtype.itemsize)
        except Exception:  # noqa: BLE001 - CudaError, CaptureError: this call takes new_empty
            return None
        raw = torch.as_tensor(memory, device=self._device(device))  # the tensor keeps `memory` (and its buffer)
        like = self._zero_d[(dtype, device)] = raw.view(self._to_torch[dtype]).reshape(())
        return like

    def _device(self, device):
        where = self._devices.get(device)
        if where is None:
            where = self._devices[device] = sys.modules["torch"].device("cuda", device)
        return where

    def empty_like(self, x, shape, dtype, device, stream, on_default=True):
        """torch.empty_like / Tensor.new_empty: half the host time of torch.empty's dtype and device arguments (a
        scan's result is like x; a reduction's is x.new_empty(())), for a Call's results.  (new(), the ready path's,
        makes 0-d results like a kept tensor over pyscan's memory, never torch's: one torch's allocator made while
        torch.compile's CUDA-graph trees record would stay in their pool, untracked, which they refuse.)"""
        if not on_default:
            return self.empty(shape, dtype, device, stream, on_default)
        if shape == ():
            if self._to_numpy.get(x.dtype) == dtype:
                return x.new_empty(())
            return x.new_empty((), dtype=self._to_torch[dtype])
        if self._to_numpy.get(x.dtype) != dtype:  # a scan whose result dtype is not x's (int32 add -> int64)
            return sys.modules["torch"].empty_like(x, dtype=self._to_torch[dtype])
        return sys.modules["torch"].empty_like(x)

    def empty(self, shape, dtype, device, stream, on_default=True):
        torch = sys.modules["torch"]
        where = self._device(device)
        if on_default:
            return torch.empty(shape, dtype=self._to_torch[dtype], device=where)
        # the caching allocator ties a block to the stream current at allocation: make it the call's stream
        with torch.cuda.stream(torch.cuda.ExternalStream(stream, device=where)):
            return torch.empty(shape, dtype=self._to_torch[dtype], device=where)


class _Interfaced:
    """`nbytes` bytes of pyscan's memory as a uint8 array of __cuda_array_interface__ (torch.as_tensor's input)."""

    def __init__(self, buffer, nbytes: int):
        self.buffer = buffer
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (buffer.address, False),
                                         "strides": None, "version": 3}


class _TorchTraced(_Torch):
    """torch's fake and functional tensors (torch.export, AOT tracing): no memory to read; every call on one goes
    through the custom operators (pyscan.torch_ops)."""

    name = "torch (traced)"

    def ready(self, x):
        return None

    def ready_nd(self, x):
        return None


TORCH_TRACED = _TorchTraced()
_TRACED_TYPE_NAMES = frozenset({"FakeTensor", "FunctionalTensor"})


def torch_route(x, kind):
    """pyscan.torch_ops when a call on x goes through torch's custom operators (x a torch tensor that requires grad,
    is on the CPU or is traced: torch_ops.routed), else None.  The public functions ask after their fast path."""
    if kind is None:
        kind = _kinds_by_type.get(type(x))  # NumPy's, and kinds seen before
        if kind is None:
            torch = sys.modules.get("torch")
            if torch is None or not isinstance(x, torch.Tensor):
                return None
            kind = kind_of(x)
    if kind is not TORCH and kind is not TORCH_TRACED:
        return None
    ops = sys.modules.get("pyscan.torch_ops") or _import_torch_ops()
    return ops if ops is not None and ops.routed(x) else None


class _AfterTorchImport:
    """A finder on sys.meta_path that lets the other finders find torch, then has torch's module run
    _import_torch_ops() right after its own code: the custom operators and the dtype tables are made when torch is
    imported, not by the first call, which may be one that torch.compile traces (Dynamo cannot trace the tables being
    filled: tests/gpu/test_graphs_gpu.py, the compile test run alone).  It removes itself at its first use."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec("torch")
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run_torch = loader.exec_module

        def exec_module(module):
            run_torch(module)
            _import_torch_ops()

        loader.exec_module = exec_module
        return spec


def register_after_torch_import() -> None:
    if not any(isinstance(finder, _AfterTorchImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterTorchImport())


def _import_torch_ops():
    """pyscan.torch_ops, imported (registering the custom operators), or None where this torch has no
    torch.library.custom_op (older than 2.4): then torch tensors take the eager path only."""
    try:
        import importlib

        return importlib.import_module("pyscan.torch_ops")
    except (ImportError, AttributeError):
        return None
    except Exception as exc:  # noqa: BLE001 - registering must not break the eager path
        import warnings

        warnings.warn(f"pyscan: the torch operators could not be registered ({exc}); torch tensors take the eager "
                      "path only (no autograd, torch.compile or CPU tensors)", RuntimeWarning, stacklevel=2)
        return None


NUMPY, OWN, GPUARRAY, INTERFACE, NUMBA, CUPY, TORCH = (_NumPy(), _Own(), _GPUArray(), _Interface(), _Numba(), _CuPy(),
                                                      _Torch())
_kinds_by_type: dict = {np.ndarray: NUMPY, DeviceView: OWN}
READY: dict = {}  # type -> Kind of the device arrays seen: the public calls' first look-up (Kind.ready)


def kind_of(x) -> Kind | None:
    """The Kind of x, or None if pyscan cannot take it."""
    kind = _kinds_by_type.get(type(x))
    if kind is not None:
        return kind
    root = (type(x).__module__ or "").partition(".")[0]
    gpuarray = sys.modules.get("pycuda.gpuarray")
    if isinstance(x, np.ndarray):
        kind = NUMPY
    elif gpuarray is not None and isinstance(x, gpuarray.GPUArray):
        kind = GPUARRAY
    elif root == "cupy" and hasattr(x, "data") and hasattr(x, "device"):
        kind = CUPY
    elif root == "torch" and "torch" in sys.modules and isinstance(x, sys.modules["torch"].Tensor):
        kind = TORCH_TRACED if type(x).__name__ in _TRACED_TYPE_NAMES else TORCH
    elif root == "numba" and hasattr(x, "device_ctypes_pointer") and hasattr(x, "is_c_contiguous"):
        kind = NUMBA
    elif hasattr(x, "__cuda_array_interface__"):
        kind = INTERFACE
    else:
        return None
    if (kind is TORCH or kind is TORCH_TRACED) and not TORCH._to_numpy:
        TORCH._dtypes()
        _import_torch_ops()  # the custom operators registered before anything traces a call
    _kinds_by_type[type(x)] = kind
    if kind is not NUMPY:
        READY[type(x)] = kind
    return kind


EXPECTED_KINDS = ("a numpy.ndarray or a device array (pycuda GPUArray, CuPy ndarray, torch CUDA tensor, Numba "
                  "device array, or any object with __cuda_array_interface__)")


# --- one call -----------------------------------------------------------------------------------------------------

class Call:
    """One call on one array (see the module docstring): its kind, device and stream, what the drivers allocate and
    launch with, and how the result goes back."""

    __slots__ = ("kind", "x", "host", "shape", "dtype", "size", "device", "stream", "on_default", "context", "_previous",
                 "_out")

    def __init__(self, kind, x, host, shape, dtype, size, device, stream, on_default):
        self.kind, self.x, self.host, self.shape, self.dtype, self.size = kind, x, host, shape, dtype, size
        self.device, self.stream, self.on_default = device, stream, on_default
        self.context = 0  # kernels launch in the context current inside `with call:`
        self._out = None
        self._previous = -1

    @classmethod
    def tool(cls, device: int | None = None, stream: int = 0) -> Call:
        """A call for tools and traces that drive the kernels themselves: pyscan's memory (DeviceView) on `device`
        (default: NumPy input's), `stream` (default: the legacy one); its device's context made current."""
        driver.ready()
        device = driver.default_device() if device is None else device
        driver.enter(device)
        return cls(OWN, None, None, (), np.dtype(np.uint8), 0, device, stream, True)

    def __enter__(self):
        self._previous = driver.enter(self.device, self.kind.keep_any_on_device)
        if self.host is not None and self.x is None:
            self.x = self.to_device(self.host)
        return self

    def __exit__(self, *exc):
        driver.leave(self._previous)
        self._previous = -1
        return False

    # memory on the call's device and stream --------------------------------------------------------------------
    def empty(self, shape, dtype):
        """A new device array of the caller's kind, as a DeviceView (the GPUArray itself for GPUArray input)."""
        if type(shape) is not tuple:
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if dtype is not self.dtype:
            dtype = np.dtype(dtype)
        kind = self.kind if self.kind is not NUMPY else OWN
        if kind is TORCH and (shape == () or shape == self.shape):
            native = kind.empty_like(self.x.native, shape, dtype, self.device, self.stream, self.on_default)
        else:
            native = kind.empty(shape, dtype, self.device, self.stream, self.on_default)
        if kind is GPUARRAY or kind is OWN:
            return native
        return DeviceView(kind.pointer(native), shape, dtype, native)

    def scratch(self, shape, dtype=np.uint8) -> DeviceView:
        """An array of pyscan's memory (whatever the caller's kind) on the call's stream, freed on it when it goes."""
        return OWN.empty((shape,) if isinstance(shape, int) else tuple(shape), np.dtype(dtype), self.device,
                         self.stream)

    def to_device(self, host) -> DeviceView:
        """A device copy of a NumPy array in pyscan's memory, on the call's stream."""
        host = np.ascontiguousarray(host)
        return self.upload(OWN.empty(host.shape, host.dtype, self.device, self.stream), host)

    def upload(self, view, host: np.ndarray):
        """Copy a NumPy array into a device array of its size (a DeviceView), on the call's stream."""
        host = np.ascontiguousarray(host)
        driver.upload(int(view.gpudata), host.ctypes.data, host.nbytes, self.stream)
        return view

    def to_host(self, array) -> np.ndarray:
        host = np.empty(array.shape, array.dtype)
        driver.copy_dtoh(host.ctypes.data, int(array.gpudata), host.nbytes, self.stream)
        return host

    def memset32(self, array, value: int, words: int) -> None:
        driver.memset32(int(array.gpudata), value, words, self.stream)

    def copy(self, destination, source, nbytes: int) -> None:
        driver.copy_dtod(int(destination.gpudata), int(source.gpudata), nbytes, self.stream)

    def synchronize(self) -> None:
        driver.synchronize(self.stream)

    # the result --------------------------------------------------------------------------------------------------
    def expect_out(self, out, shape, dtype, what="out") -> None:
        """Check `out` now (before any GPU work): the caller's array of that shape and dtype, C-contiguous, writeable
        (NumPy), on the input's device, of the input's side.  result() then returns it.  out=None: result()
        allocates."""
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
            address, out_shape, out_dtype, contiguous, device, _ = kind.view(out)
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
        if device is not None and kind is not NUMPY and device != self.device:
            raise ValueError(f"{what}: on device {device}, but the input is on device {self.device}")
        self._out = (kind, out, address)

    def result(self, shape, dtype):
        """The array the result goes to: the `out` given to expect_out, or a new one of the caller's kind."""
        if self._out is None:
            return self.empty(shape, dtype)
        kind, out, address = self._out
        if kind is NUMPY:
            return _HostOut(out, self.empty(shape, dtype))
        return out if kind is GPUARRAY else DeviceView(address, tuple(shape), np.dtype(dtype), out)

    def finish(self, result):
        """The result in the caller's kind (NumPy: copied back, after the call's stream has finished)."""
        if isinstance(result, _HostOut):
            driver.copy_dtoh(result.host.ctypes.data, result.device.gpudata, result.host.nbytes, self.stream)
            return result.host
        if self.kind is NUMPY:
            return self.to_host(result)
        return result if self.kind is GPUARRAY or self.kind is OWN else result.native

    def on_device(self, result):
        """A device result kept on the device: the caller's kind, a GPUArray over pyscan's memory for NumPy input."""
        if self.kind is NUMPY:
            import pycuda.gpuarray as ga

            return ga.GPUArray(result.shape, result.dtype, gpudata=result.gpudata, base=result.native)
        return result if self.kind is GPUARRAY or self.kind is OWN else result.native

    def finish_scalar(self, result):
        """A one-element device result as the caller expects a reduction: a NumPy scalar for NumPy input, else a
        0-d array of the caller's kind."""
        if self.kind is NUMPY:
            return self.to_host(result).reshape(-1)[0]
        native = result if self.kind is GPUARRAY or self.kind is OWN else result.native
        return native if result.shape == () else self.kind.zero_d(native)


class _HostOut:
    """out= a NumPy array: the device result is copied into it at the end."""

    __slots__ = ("host", "device")

    def __init__(self, host, device):
        self.host, self.device = host, device

    def __getattr__(self, name):  # drivers see the device buffer
        return getattr(self.device, name)


def begin(x, *, what: str, dtypes, ndim: int | None = 1, max_length: int | None = None, stream=None,
          strided: str = "refuse") -> Call:
    """Check x and the stream argument (raising TypeError / ValueError before any GPU work) and return the Call.
    strided: what a device array that is not C-contiguous gets: "refuse" (a ValueError naming the fix), "copy" (a
    C-contiguous copy by the caller's own library on the call's stream, where the kind can: CuPy, torch) or
    "copy_nd" (copied unless it is 1-D: the N-d / axis path keeps 1-D calls as they were)."""
    kind = _kinds_by_type.get(type(x)) or kind_of(x)
    if kind is None:
        raise TypeError(f"{what}: expected {EXPECTED_KINDS}, got {describe(x)}")
    try:
        address, shape, dtype, contiguous, device, own_stream = kind.view(x)
    except TypeError as exc:
        raise TypeError(f"{what}: {exc}") from None
    if type(shape) is not tuple:
        shape = tuple(shape)
    if ndim is not None and len(shape) != ndim:
        raise ValueError(f"{what}: expected a {ndim}-D array, got shape {shape}")
    if dtype not in dtypes:  # a dict keyed by dtypes, or a tuple of dtypes or types (np.dtype equals its type)
        names = ", ".join(dtype_name(d) for d in dtypes)
        hint = " (complex is not supported: pass x.real and x.imag separately)" if dtype.kind == "c" else ""
        raise TypeError(f"{what}: unsupported dtype {dtype_name(dtype)}: expected one of {names}{hint}")
    size = shape[0] if len(shape) == 1 else math.prod(shape)
    if max_length is not None and size > max_length:
        raise ValueError(f"{what}: {size} elements is more than the kernels' limit of {max_length}")
    handle = driver.handle_of(stream) if stream is not None else None
    if kind is not NUMPY and not contiguous:
        copy = kind.contiguous_copy if strided == "copy" or (strided == "copy_nd" and len(shape) != 1) else None
        made = copy(x, handle) if copy is not None else None
        if made is None:
            raise ValueError(f"{what}: the {kind.name} array is not contiguous (a strided view; pyscan needs C order"
                             f"{'' if copy is None else ' and cannot copy this kind'}); pass {kind.fix_contiguous}")
        x = made  # a C-contiguous copy made by the caller's library on the call's stream (docs/axis.md)
        address, shape, dtype, contiguous, device, own_stream = kind.view(x)
        shape = tuple(shape)
    if device is None:
        driver.ready()
        device = driver.device_of_pointer(address)
    if kind is NUMPY:  # x is made contiguous (copied only if it is not) when the call uploads it, after every check
        if "torch" in sys.modules:  # its uploads and waits would run outside a graph torch is capturing here
            _refuse_host_input_under_torch_capture(what)
        return Call(kind, None, x, shape, dtype, size, device, handle or 0, True)
    view = x if kind is GPUARRAY or kind is OWN else DeviceView(address, shape, dtype, x, size)
    default = kind.default_stream(x, device) if own_stream is None else own_stream
    handle = default if handle is None else handle
    return Call(kind, view, None, shape, dtype, size, device, handle, handle == default)


def _refuse_host_input_under_torch_capture(what: str) -> None:
    torch = sys.modules["torch"]
    try:
        capturing = torch.cuda.is_initialized() and torch.cuda.is_current_stream_capturing()
    except Exception:  # noqa: BLE001 - a torch without CUDA
        return
    if capturing:
        from ..errors import CaptureError

        raise CaptureError(f"{what}: a NumPy array while torch is capturing a CUDA graph: pyscan would copy it to the "
                           "device and the result back, waiting for the GPU, outside the graph.  Capture calls on "
                           "torch CUDA tensors (docs/runtime.md, \"CUDA graphs\").")


def check_array(x, *, dtypes, ndim=1, what="x", max_length=None):
    """Validate x without a GPU; return (array, on_gpu): NumPy input made C-contiguous (copied only if needed), a
    device array as it is.  (The models' and tools' checks; public functions use begin().)"""
    call = begin(x, what=what, dtypes=dtypes, ndim=ndim, max_length=max_length)  # NumPy input needs no GPU
    return (np.ascontiguousarray(x), False) if call.host is not None else (x, True)
