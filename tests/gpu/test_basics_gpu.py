"""scalar_multiply (Hands-On ch. 4) against NumPy, on the GPU.  Bad input (no GPU needed): tests/unit/test_basics.py."""

import numpy as np
import pytest

import pyscan


@pytest.mark.parametrize("n", [0, 1, 1000, 10**6 + 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_scalar_multiply_numpy(n, dtype, rng):
    x = (rng.standard_normal(n) * 100).astype(dtype)
    a = 3 if np.dtype(dtype).kind == "i" else 2.5
    out = pyscan.scalar_multiply(x, a)
    assert isinstance(out, np.ndarray) and out.dtype == x.dtype and out.shape == x.shape
    np.testing.assert_array_equal(out, (x * dtype(a)).astype(dtype))  # one rounding, exact in both


def test_scalar_multiply_gpuarray_stays_on_gpu(rng):
    import pycuda.gpuarray as ga

    x = rng.standard_normal(4097).astype(np.float32)
    out = pyscan.scalar_multiply(ga.to_gpu(x), np.float32(-1.5))
    assert isinstance(out, ga.GPUArray)
    np.testing.assert_array_equal(out.get(), x * np.float32(-1.5))


def test_scalar_multiply_non_contiguous_copied(rng):
    x = rng.standard_normal(2001).astype(np.float32)
    np.testing.assert_array_equal(pyscan.scalar_multiply(x[::2], 2.0), x[::2] * 2)
