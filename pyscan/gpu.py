"""Access to the GPU through pycuda, imported lazily so that `import pyscan` works without pycuda or a GPU.

pyscan works in the device's *primary* context (as `pycuda.autoprimaryctx` does, and as the CUDA runtime,
CuPy and PyTorch do), so pyscan, CuPy and PyTorch can share one process and one device.  If a context is
already current when pyscan first needs one (the user imported `pycuda.autoinit`, say), pyscan uses it.
"""

from __future__ import annotations

import atexit
import os

from .errors import GPUUnavailableError

_INSTALL_HINT = (
    'install it with `pip install "pyscan[gpu]"` (or `pip install pycuda`) on a machine with an NVIDIA GPU, '
    "its driver and the CUDA toolkit (nvcc)"
)

_driver = None  # the pycuda.driver module once a context is current
_pushed_context = None


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


def driver():
    """Return `pycuda.driver` with a current context, creating the primary context of the chosen device once.

    The device is `CUDA_DEVICE` (as in pycuda.autoinit) or 0.  Raises GPUUnavailableError naming what is missing.
    """
    global _driver, _pushed_context
    if _driver is not None:
        return _driver
    drv = _import_driver()
    try:
        drv.init()
    except drv.Error as exc:
        raise GPUUnavailableError(
            f"no CUDA driver: cuInit failed ({exc}). pyscan's GPU functions need an NVIDIA GPU and its driver."
        ) from exc
    if drv.Context.get_current() is None:
        count = drv.Device.count()
        if count == 0:
            raise GPUUnavailableError("no CUDA device: the driver is loaded but sees no GPU.")
        ordinal = int(os.environ.get("CUDA_DEVICE", "0"))
        if not 0 <= ordinal < count:
            raise GPUUnavailableError(f"CUDA_DEVICE={ordinal}, but the driver sees {count} device(s).")
        context = drv.Device(ordinal).retain_primary_context()
        context.push()
        _pushed_context = context
        atexit.register(_release_context)
    _driver = drv
    return drv


_release_hooks: list = []


def at_release(hook) -> None:
    """Calls hook() at exit before the context is popped (for device memory a module keeps between calls)."""
    if hook not in _release_hooks:
        _release_hooks.append(hook)


def _release_context():
    """At exit: drop everything pyscan holds on the device *before* popping the context.

    Compiled modules (the loader's cache), the memory pool's held blocks and any unreachable GPUArrays are
    released while the context is still current; freeing them after the pop makes pycuda abort the process
    ("explicit_context_dependent failed: invalid device context").
    """
    global _pushed_context
    if _pushed_context is not None:
        import gc

        from pycuda.tools import clear_context_caches

        from . import arrays, loader

        loader._cache.clear()
        for hook in _release_hooks:
            hook()
        gc.collect()
        arrays.free_pool()
        if arrays._pool is not None:
            arrays._pool.stop_holding()
        _pushed_context.pop()
        clear_context_caches()
        _pushed_context = None


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


def device_attributes() -> dict:
    """Name, compute capability, SM count and memory of the current device."""
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


def multiprocessor_count() -> int:
    drv = driver()
    return drv.Context.get_device().get_attribute(drv.device_attribute.MULTIPROCESSOR_COUNT)
