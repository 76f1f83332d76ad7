"""Devices and contexts: which GPU a call runs on, made current in whichever thread makes the call.

pyscan works in each device's *primary* context, as the CUDA runtime, CuPy, PyTorch and Numba do, so all of them
share one process, one device and each other's memory.

* Every public call runs on the device that holds its data (NumPy input: `CUDA_DEVICE`, as in pycuda.autoinit, or
  0): `enter_device(ordinal)` makes that device's primary context current in the calling thread through the driver
  API (pyscan.cuda), and `leave_device` restores whatever was current before, so neither pycuda's nor the
  caller's view of the thread's context changes behind their back.  A pycuda GPUArray runs in the context already
  current when it is on the array's device (`pycuda.autoinit`'s, say).  No call needs pycuda's context stack, so
  any thread may call.
* Tools that drive pycuda themselves (GPUArrays made outside a call, pycuda events, SourceModule) get pycuda's
  default context from `driver()`: the primary context of `CUDA_DEVICE` (or 0), or the context already current
  when pyscan first needs one.

Importing this module needs nothing: pycuda and libcuda are loaded the first time a GPU function runs, and a missing
piece (pycuda, the CUDA driver, a device) raises GPUUnavailableError saying what is missing.
"""

from __future__ import annotations

import atexit
import os
import threading

from . import cuda
from .errors import GPUUnavailableError

_INSTALL_HINT = (
    'install it with `pip install -e ".[gpu]"` from the pyscan checkout (or `pip install pycuda`): it builds from '
    "source and needs the CUDA toolkit with its headers (cuRAND's included), a C++ compiler and the Python headers "
    '(README, "Set-up on a GPU box")'
)

_driver = None  # the pycuda.driver module once the default context is chosen
_default_context = None  # the pycuda Context that NumPy and GPUArray calls use, in every thread
_pushed_by_pyscan = False  # whether pyscan pushed _default_context in the first thread (popped at exit)
_thread = threading.local()  # .pycuda_ready: _default_context is current on pycuda's stack in this thread
_setup_lock = threading.RLock()


def _import_driver():
    try:
        import pycuda.driver as drv
    except ImportError as exc:
        text = str(exc)
        if "libcuda" in text:
            raise GPUUnavailableError(
                f"no CUDA driver: pycuda is installed but cannot load the NVIDIA driver library ({text}). "
                "pyscan's GPU functions need a machine with an NVIDIA GPU and its driver."
            ) from exc
        raise GPUUnavailableError(f"pycuda is not installed ({text}); {_INSTALL_HINT}.") from exc
    return drv


def pycuda_driver():
    """The `pycuda.driver` module, with no context made current (for its compiler and exception types)."""
    return _driver or _import_driver()


def driver():
    """Return `pycuda.driver` with pyscan's default context current in this thread (pushed on first use in each
    thread).  The device is `CUDA_DEVICE` (as in pycuda.autoinit) or 0.  Raises GPUUnavailableError naming what is
    missing."""
    if getattr(_thread, "pycuda_ready", False):
        return _driver
    return _setup_thread()


def _setup_thread():
    global _driver, _default_context, _pushed_by_pyscan
    with _setup_lock:
        drv = _driver
        if drv is None:
            drv = _import_driver()
            try:
                drv.init()
            except drv.Error as exc:
                raise GPUUnavailableError(
                    f"no CUDA driver: cuInit failed ({exc}). pyscan's GPU functions need an NVIDIA GPU and its driver."
                ) from exc
        current = drv.Context.get_current()
        main = threading.current_thread() is threading.main_thread()
        if _default_context is None:
            if current is None:
                count = drv.Device.count()
                if count == 0:
                    raise GPUUnavailableError("no CUDA device: the driver is loaded but sees no GPU.")
                ordinal = int(os.environ.get("CUDA_DEVICE", "0"))
                if not 0 <= ordinal < count:
                    raise GPUUnavailableError(f"CUDA_DEVICE={ordinal}, but the driver sees {count} device(s).")
                _default_context = drv.Device(ordinal).retain_primary_context()
                _push(main)
                atexit.register(_release_context)
            else:
                _default_context = current
        elif current is None:
            _push(main)  # a new thread: the same context, pushed on this thread's pycuda stack
        _driver = drv
        _thread.pycuda_ready = True
        return drv


def _push(main: bool) -> None:
    """Push the default context on pycuda's stack in this thread (the main thread's is popped at exit).

    Only tools that drive pycuda themselves get here in another thread (the public calls need no pycuda context:
    pyscan.memory and pyscan.cuda work without one).  Such a thread must pop it before it ends
    (`pycuda.driver.Context.pop()`): pycuda aborts the process when a thread ends with a context on its stack."""
    global _pushed_by_pyscan
    _default_context.push()
    _pushed_by_pyscan = _pushed_by_pyscan or main


_release_hooks: list = []


def at_release(hook) -> None:
    """Calls hook() at exit while the context is still current (for device memory a module keeps between calls:
    the loader's modules, the memory pool, kept status buffers)."""
    if hook not in _release_hooks:
        _release_hooks.append(hook)


def _release_context():
    """At exit: drop everything pyscan holds on the device *before* popping the context.

    Freeing pycuda objects after the pop makes pycuda abort the process ("explicit_context_dependent failed:
    invalid device context"), so the release hooks run first, then unreachable GPUArrays are collected."""
    global _pushed_by_pyscan
    if _default_context is None or _driver is None:
        return
    import gc

    from pycuda.tools import clear_context_caches

    if not _pushed_by_pyscan:  # pyscan ran in other threads only: make the context current for the clean-up
        _default_context.push()
    for hook in reversed(_release_hooks):
        hook()
    gc.collect()
    _default_context.pop()
    clear_context_caches()
    _pushed_by_pyscan = False


def ready() -> bool:
    """Whether pycuda and the driver are set up in this process (then pyscan.cuda's calls work in any thread)."""
    return _driver is not None


def gpu_unavailable_reason() -> str | None:
    """None when a GPU is usable, else the reason it is not (the GPUUnavailableError message)."""
    try:
        driver()
    except GPUUnavailableError as exc:
        return str(exc)
    return None


def gpuarray():
    """Return the `pycuda.gpuarray` module (with a current context)."""
    driver()
    import pycuda.gpuarray as ga

    return ga


def is_gpuarray(x) -> bool:
    """True if x is a pycuda GPUArray.  Never imports pycuda: a GPUArray can only exist if it was imported."""
    import sys

    module = sys.modules.get("pycuda.gpuarray")
    return module is not None and isinstance(x, module.GPUArray)


# --- any device, by ordinal (the driver API through pyscan.cuda) ------------------------------------------------

_primary: dict = {}  # ordinal -> primary context handle
_device_info: dict = {}  # ordinal -> (multiprocessors, "sm_XY")


def ensure_driver_api() -> None:
    """The driver initialised for pyscan's own calls (pyscan.cuda), without touching pycuda's context stack: pycuda
    must be installed (it is pyscan's compiler) and libcuda must load.  Raises GPUUnavailableError otherwise."""
    if _driver_api_ready:
        return
    _import_driver()  # pycuda present (and its messages for what is missing)
    try:
        cuda.init()
        count = cuda.device_count()
    except (OSError, cuda.CudaError) as exc:
        raise GPUUnavailableError(f"no CUDA driver: {exc}. pyscan's GPU functions need an NVIDIA GPU and its "
                                  "driver.") from exc
    if count == 0:
        raise GPUUnavailableError("no CUDA device: the driver is loaded but sees no GPU.")
    _set_driver_api_ready()


_driver_api_ready = False


def _set_driver_api_ready():
    global _driver_api_ready
    _driver_api_ready = True


def default_device() -> int:
    """The device of NumPy input: `CUDA_DEVICE` (as in pycuda.autoinit) or 0."""
    return int(os.environ.get("CUDA_DEVICE", "0"))


def primary_context(ordinal: int) -> int:
    handle = _primary.get(ordinal)
    if handle is None:
        ensure_driver_api()
        count = cuda.device_count()
        if not 0 <= ordinal < count:
            raise GPUUnavailableError(f"device {ordinal} does not exist: the driver sees {count} device(s)")
        handle = _primary[ordinal] = cuda.primary_context(ordinal)
    return handle


def primary_if_current(ordinal: int) -> int:
    """Device `ordinal`'s primary context if it is the one current in this thread, else 0 (also for a device no
    call has entered yet, and for -1, a torch CPU tensor's device): a call in it needs no switch."""
    target = _primary.get(ordinal)
    if target is None:
        return 0
    return target if cuda.current_context() == target else 0


def enter_device(ordinal: int, keep_current: bool = False) -> tuple:
    """Make device `ordinal`'s primary context current in this thread (with keep_current, a context already current
    on that device stays, as pycuda.autoinit's does for GPUArrays); returns (what to give leave_device(), the
    context the call runs in)."""
    target = _primary.get(ordinal) or primary_context(ordinal)
    previous = cuda.current_context()
    if previous == target:
        return -1, target
    if keep_current and previous and cuda.context_device() == ordinal:
        return -1, previous
    cuda.set_current_context(target)
    return previous, target


def leave_device(previous: int) -> None:
    if previous != -1:
        cuda.set_current_context(previous)


_context_devices: dict = {}  # context handle -> device ordinal


def current_device() -> int:
    """The ordinal of the device of the running call's context, else of the thread's current one (pycuda's default
    one if none is); cached per context, so a call asks the driver nothing."""
    from . import streams

    context = streams.current_context()
    if not context:
        driver()
        context = cuda.current_context()
    ordinal = _context_devices.get(context)
    if ordinal is None:
        ordinal = _context_devices[context] = cuda.context_device()
    return ordinal


def _info(ordinal: int) -> tuple:
    info = _device_info.get(ordinal)
    if info is None:
        ensure_driver_api()
        major = cuda.device_attribute(ordinal, cuda.DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        minor = cuda.device_attribute(ordinal, cuda.DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        sms = cuda.device_attribute(ordinal, cuda.DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        info = _device_info[ordinal] = (sms, f"sm_{major}{minor}")
    return info


def multiprocessor_count(ordinal: int | None = None) -> int:
    """SMs of device `ordinal` (default: the current context's device)."""
    return _info(current_device() if ordinal is None else ordinal)[0]


def architecture(ordinal: int | None = None) -> str:
    """"sm_90" for an H100: the target the kernels are compiled for."""
    return _info(current_device() if ordinal is None else ordinal)[1]


def device_attributes() -> dict:
    """Name, compute capability, SM count and memory of pyscan's default device."""
    drv = driver()
    dev = drv.Context.get_device()
    attrs = dev.get_attributes()
    free, total = drv.mem_get_info()
    return {
        "name": dev.name(),
        "compute_capability": dev.compute_capability(),
        "multiprocessors": attrs[drv.device_attribute.MULTIPROCESSOR_COUNT],
        "max_threads_per_block": attrs[drv.device_attribute.MAX_THREADS_PER_BLOCK],
        "shared_memory_per_block": attrs[drv.device_attribute.MAX_SHARED_MEMORY_PER_BLOCK],
        "total_memory": total,
        "free_memory": free,
        "pci_bus_id": dev.pci_bus_id(),
    }
