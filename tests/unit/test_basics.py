"""scalar_multiply (Hands-On ch. 4): bad input and bad factors, refused without a GPU.  Against NumPy on the GPU:
tests/gpu/test_basics_gpu.py."""

import numpy as np
import pytest

import pyscan


@pytest.mark.parametrize("bad, exc", [(None, TypeError), ([1.0, 2.0], TypeError), (np.ones((2, 2)), ValueError),
                                      (np.ones(3, np.float16), TypeError), (np.float32(1.0), TypeError)])
def test_scalar_multiply_bad_input(bad, exc):
    with pytest.raises(exc):
        pyscan.scalar_multiply(bad, 2.0)


def test_scalar_multiply_bad_factor():
    with pytest.raises(ValueError, match="not integral"):
        pyscan.scalar_multiply(np.ones(3, np.int32), 2.5)
    with pytest.raises(TypeError, match="real number"):
        pyscan.scalar_multiply(np.ones(3, np.float32), "2")
