"""pyscan: the parallel patterns of PMPP (histogram, reduction, scan) and Hands-On GPU Programming with
Python and CUDA (ch. 4), as readable CUDA kernels launched from Python through PyCUDA.

`import pyscan` needs only NumPy: pycuda is imported the first time a GPU function runs, and a missing piece
(pycuda, the CUDA driver, a device) raises GPUUnavailableError saying what is missing.
"""

from . import distributed, life
from .basics import scalar_multiply
from .errors import GPUUnavailableError, KernelCompileError
from .gpu import gpu_unavailable_reason
from .histograms import HISTOGRAM_ALGORITHMS, histogram, text_histogram
from .life import LIFE_KERNELS
from .loader import get_kernel, kernel_files
from .reductions import REDUCE_ALGORITHMS, reduce
from .registry import REGISTRIES
from .scans import SCAN_ALGORITHMS, scan

__version__ = "0.1.0"


def device_name() -> str | None:
    """The name of the GPU pyscan runs on by default (e.g. "NVIDIA H100 80GB HBM3"), or None when no GPU is usable
    (gpu_unavailable_reason() says why)."""
    if gpu_unavailable_reason() is not None:
        return None
    from .gpu import device_attributes

    return device_attributes()["name"]


__all__ = [
    "GPUUnavailableError", "KernelCompileError", "HISTOGRAM_ALGORITHMS", "LIFE_KERNELS", "REDUCE_ALGORITHMS",
    "REGISTRIES", "SCAN_ALGORITHMS", "distributed", "get_kernel", "gpu_unavailable_reason", "histogram", "kernel_files",
    "device_name", "life", "reduce",
    "scalar_multiply", "scan", "text_histogram",
]
