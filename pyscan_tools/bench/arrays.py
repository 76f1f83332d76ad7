"""The kinds of device array a user holds, as the bench needs them: upload a host array, a prefix view, download,
a device-to-device copy call, and the library's CUDA events.  CuPy and torch are the kinds the public calls are
timed on; pycuda's GPUArray feeds PyCUDA's kernels, the book's Life kernel and pyscan's drivers alone."""

from __future__ import annotations

import numpy as np

from pyscan.timing import event_timer


class ArrayKind:
    name = ""
    module = ""

    @classmethod
    def available(cls) -> bool:
        try:
            __import__(cls.module)
        except Exception:  # noqa: BLE001  a broken install is as good as none here
            return False
        return True

    def timer(self):
        return event_timer(self.name)

    def prefix(self, x, n: int):
        """The first n elements of a 1-D device array, as a view."""
        return x[:n]


class CuPyKind(ArrayKind):
    name = module = "cupy"

    def __init__(self):
        import cupy

        self.cupy = cupy

    def upload(self, host):
        return self.cupy.asarray(host)

    def download(self, x) -> np.ndarray:
        return self.cupy.asnumpy(x)

    def copy_call(self, src, nbytes: int):
        dst = self.cupy.empty(nbytes, np.uint8)
        return lambda: dst.data.copy_from_device_async(src.data, nbytes)

    def free(self):
        self.cupy.get_default_memory_pool().free_all_blocks()

    def synchronize(self):
        self.cupy.cuda.Device().synchronize()

    def device(self) -> dict:
        props = self.cupy.cuda.runtime.getDeviceProperties(self.cupy.cuda.Device().id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        return {"name": name, "compute_capability": f"{props['major']}.{props['minor']}",
                "multiprocessors": props["multiProcessorCount"], "l2_cache_bytes": props["l2CacheSize"],
                "total_memory_gib": round(props["totalGlobalMem"] / 2**30, 1)}


class TorchKind(ArrayKind):
    name = module = "torch"

    def __init__(self):
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError("torch has no usable CUDA device")
        self.torch = torch

    def upload(self, host):
        return self.torch.from_numpy(np.ascontiguousarray(host)).cuda()

    def download(self, x) -> np.ndarray:
        if x.dtype == self.torch.uint64:  # torch's numpy bridge may not take uint64 (histogram counts)
            return x.to(self.torch.int64).cpu().numpy().astype(np.uint64)
        return x.detach().cpu().numpy()

    def copy_call(self, src, nbytes: int):
        dst = self.torch.empty_like(src)
        return lambda: dst.copy_(src)

    def free(self):
        self.torch.cuda.empty_cache()

    def synchronize(self):
        self.torch.cuda.synchronize()

    def device(self) -> dict:
        props = self.torch.cuda.get_device_properties(self.torch.cuda.current_device())
        return {"name": props.name, "compute_capability": f"{props.major}.{props.minor}",
                "multiprocessors": props.multi_processor_count,
                "l2_cache_bytes": getattr(props, "L2_cache_size", 0),
                "total_memory_gib": round(props.total_memory / 2**30, 1)}


class PyCUDAKind(ArrayKind):
    name = module = "pycuda"

    def __init__(self):
        from pyscan.basics import pycuda_context

        self.drv = pycuda_context()
        import pycuda.gpuarray as ga

        self.ga = ga

    def upload(self, host):
        return self.ga.to_gpu(np.ascontiguousarray(host))

    def download(self, x) -> np.ndarray:
        return x.get()

    def copy_call(self, src, nbytes: int):
        dst = self.ga.empty(nbytes, np.uint8)
        drv = self.drv
        return lambda: drv.memcpy_dtod_async(dst.gpudata, src.gpudata, nbytes)

    def free(self):
        from pyscan.runtime import driver

        driver.trim()

    def synchronize(self):
        self.drv.Context.synchronize()

    def device(self) -> dict:
        from pyscan.runtime import driver

        attrs = driver.device_attributes()
        dev = self.drv.Context.get_device()
        return {"name": attrs["name"], "compute_capability": "%d.%d" % attrs["compute_capability"],
                "multiprocessors": attrs["multiprocessors"],
                "l2_cache_bytes": int(dev.get_attribute(self.drv.device_attribute.L2_CACHE_SIZE)),
                "total_memory_gib": round(attrs["total_memory"] / 2**30, 1)}


KINDS = {kind.name: kind for kind in (CuPyKind, TorchKind, PyCUDAKind)}
USER_KINDS = ("cupy", "torch")  # the public calls are timed on these (pycuda where neither imports)


def open_kinds(names) -> tuple:
    """(kinds that opened, {name: why not}) for the names asked for."""
    opened, missing = {}, {}
    for name in names:
        try:
            if not KINDS[name].available():
                raise ImportError(f"{name} is not installed")
            opened[name] = KINDS[name]()
        except Exception as exc:  # noqa: BLE001  a kind that cannot run here is reported, not fatal
            missing[name] = f"{type(exc).__name__}: {exc}"
    return opened, missing
