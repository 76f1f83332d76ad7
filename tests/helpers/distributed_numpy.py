"""NumPy stand-ins for pyscan.distributed's local GPU steps, shared by tests/unit/test_distributed.py and, with
PYSCAN_DISTRIBUTED_TEST_CPU=1, tests/gpu/test_distributed_gpu.py (tests/helpers is on sys.path: pytest.ini's
pythonpath)."""

import numpy as np
from scan_checks import reference

from pyscan.types import result_dtype, ufunc


def numpy_reduce(x, op, dtype=None):
    """NumPy's reduction in its result dtype (np.sum of int32 in int64, wrapping modulo 2^64; or dtype=)."""
    return ufunc(op).reduce(x, dtype=result_dtype(x.dtype, op, dtype))


def numpy_local_steps():
    """NumPy in place of the local pyscan kernels, for CPU tensors on a gloo group."""
    import torch

    def local_scan(x, op, exclusive, stream, out=None, dtype=None):
        result = torch.from_numpy(reference(x.numpy(), op, exclusive, dtype))
        if out is None:
            return result
        out.copy_(result)
        return out

    def local_reduce(x, op, stream, dtype=None):
        return torch.as_tensor(numpy_reduce(x.numpy(), op, dtype))

    def local_histogram(x, bins, stream):
        return torch.from_numpy(np.histogram(x.numpy(), bins, range=(0, 256))[0].astype(np.uint64))

    return {"_local_scan": local_scan, "_local_reduce": local_reduce, "_local_histogram": local_histogram}
