"""NaN and ±inf in float scans and reductions on the GPU: every algorithm, inclusive and exclusive, does what NumPy
does.  tests/unit/test_nan_inf.py states the behaviour, checks it on NumPy itself and runs the step-models.
"""

import numpy as np
import pytest
from nan_inf_cases import FLOATS, OPS, patterns, reduce_reference, scan_reference

import pyscan

pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")


@pytest.mark.parametrize("exclusive", [False, True], ids=["inclusive", "exclusive"])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("algorithm", ("auto",) + pyscan.SCAN_ALGORITHMS)
def test_scan_nan_inf(algorithm, dtype, op, exclusive, rng):
    for n in (1, 7, 1025, 4099):
        for name, x in patterns(n, dtype, rng):
            keep = x.copy()
            got = pyscan.scan(x, algorithm=algorithm, exclusive=exclusive, op=op)
            np.testing.assert_array_equal(got, scan_reference(keep, op, exclusive),
                                          err_msg=f"{algorithm} {op} exclusive={exclusive} n={n} {name}")
            np.testing.assert_array_equal(x, keep)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("algorithm", ("auto",) + pyscan.REDUCE_ALGORITHMS)
def test_reduce_nan_inf(algorithm, dtype, op, rng):
    for n in (1, 7, 1025, 4099, 70001):
        for name, x in patterns(n, dtype, rng):
            got = pyscan.reduce(x, algorithm=algorithm, op=op)
            want = reduce_reference(x, op)
            np.testing.assert_array_equal(got, want, err_msg=f"{algorithm} {op} n={n} {name}")
            assert np.asarray(got).dtype == x.dtype


def test_scan_nan_inf_gpuarray_in_gpuarray_out(rng):
    """The device path (no host round trip) behaves the same."""
    import pycuda.gpuarray as ga

    for name, x in patterns(3001, np.float32, rng):
        for op in OPS:
            got = pyscan.scan(ga.to_gpu(x), op=op)
            assert isinstance(got, ga.GPUArray)
            np.testing.assert_array_equal(got.get(), scan_reference(x, op, False), err_msg=f"{op} {name}")
