"""pyscan: the parallel patterns of PMPP (histogram, reduction, scan) and Hands-On GPU Programming with
Python and CUDA (ch. 4), as readable CUDA kernels compiled by PyCUDA and launched through NVIDIA's cuda.core.

`import pyscan` needs only NumPy: cuda.core and pycuda are imported the first time a GPU function runs, and a
missing piece (cuda.core, pycuda, the CUDA driver, a device) raises GPUUnavailableError saying what is missing.
"""

import sys

from . import distributed, life
from .basics import pycuda_context, scalar_multiply, source_module
from .errors import ExpressionCompileError, GPUUnavailableError, KernelCompileError, OutOfMemoryError
from .expressions import ExpressionError
from .histograms import HISTOGRAM_ALGORITHMS, bincount, byte_histogram, histogram, text_histogram
from .life import LIFE_KERNELS
from .reductions import REDUCE_ALGORITHMS, argmax, argmin, reduce
from .registry import REGISTRIES
from .runtime.driver import gpu_unavailable_reason
from .runtime.loader import get_kernel, kernel_files
from .scans import SCAN_ALGORITHMS, scan

__version__ = "0.1.0"

if "torch" in sys.modules:  # torch first: register the custom operators now, before anything traces a call
    from .runtime.arrays import _import_torch_ops

    _import_torch_ops()
else:  # pyscan first: register them as soon as torch is imported, still before anything can trace a call
    from .runtime.arrays import register_after_torch_import

    register_after_torch_import()


def device_name() -> str | None:
    """The name of the GPU pyscan runs on by default (e.g. "NVIDIA H100 80GB HBM3"), or None when no GPU is usable
    (gpu_unavailable_reason() says why)."""
    if gpu_unavailable_reason() is not None:
        return None
    from .runtime.driver import device_attributes

    return device_attributes()["name"]


__all__ = [
    "ExpressionCompileError", "ExpressionError", "GPUUnavailableError", "KernelCompileError", "OutOfMemoryError",
    "HISTOGRAM_ALGORITHMS", "LIFE_KERNELS", "REDUCE_ALGORITHMS",
    "REGISTRIES", "SCAN_ALGORITHMS", "argmax", "argmin", "bincount", "byte_histogram", "distributed", "get_kernel",
    "gpu_unavailable_reason", "histogram", "kernel_files",
    "device_name", "life", "pycuda_context", "reduce",
    "scalar_multiply", "scan", "source_module", "text_histogram",
]
