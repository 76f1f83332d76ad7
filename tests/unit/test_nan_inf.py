"""NaN and ±inf in float scans and reductions: pyscan does what NumPy does.

The behaviour, for float32 and float64, every algorithm, inclusive and exclusive:
* add: a NaN makes its prefix and every later one NaN (np.cumsum); +inf stays +inf until a -inf (or a NaN)
  arrives, and +inf + -inf = NaN from there on; reductions likewise (np.sum).
* max / min: NaN propagates, as np.maximum.accumulate / np.minimum.accumulate / np.max / np.min do (the kernels
  use max_nan/min_nan of kernels/common/operators.cuh, not fmax/fmin, which would drop the NaN); +inf wins a max,
  -inf wins a min; a -inf in a max (+inf in a min) is the identity and changes nothing.
* An exclusive scan starts from the identity (0, -inf for max, +inf for min) and is the inclusive scan shifted
  by one, so a NaN at position i shows from position i + 1.
Which positions are NaN or infinite does not depend on the order in which a parallel algorithm combines the
elements (NaN absorbs everything; inf + finite = inf; +inf meets -inf in every order), so the comparisons are
exact: the finite values are small integers, whose sums are exact in float32 and float64 in any order, and
np.testing.assert_array_equal counts NaN == NaN.  (NaN's sign bit may differ from NumPy's: not compared.)

The tests here run the NumPy step-models of every algorithm (pyscan.scans.SCANS[...].model,
pyscan.reductions.REDUCTIONS[...].model), without a GPU; tests/gpu/test_nan_inf_gpu.py runs every algorithm on the GPU.
"""

import numpy as np
import pytest
from nan_inf_cases import FLOATS, INF, NAN, OPS, patterns, reduce_reference, scan_reference

pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")


def test_reference_behaviour_is_numpys():
    """The facts the module docstring states, checked on NumPy itself (so the documentation cannot drift)."""
    x = np.array([1, INF, 2, -INF, 3], np.float32)
    np.testing.assert_array_equal(np.cumsum(x), [1, INF, INF, NAN, NAN])
    y = np.array([1, NAN, 5, INF], np.float64)
    np.testing.assert_array_equal(np.maximum.accumulate(y), [1, NAN, NAN, NAN])
    np.testing.assert_array_equal(np.minimum.accumulate(y), [1, NAN, NAN, NAN])
    assert np.isnan(np.max(y)) and np.isnan(np.min(y)) and np.isnan(np.sum(y))
    assert np.max(np.array([-INF, 3.0])) == 3.0 and np.min(np.array([INF, 3.0])) == 3.0
    np.testing.assert_array_equal(scan_reference(y, "max", True), [-INF, 1, NAN, NAN])


# ------------------------------------------------------------------------------------------------- models


def _scan_models():
    from pyscan.scans import SCANS

    return [a for a in SCANS if a.model is not None]


def _reduce_models():
    from pyscan.reductions import REDUCTIONS

    return [a for a in REDUCTIONS if a.model is not None]


@pytest.mark.parametrize("algorithm", _scan_models(), ids=lambda a: a.name)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_scan_models_nan_inf(algorithm, dtype, rng):
    for n in (1, 2, 37, 1100):
        for name, x in patterns(n, dtype, rng):
            keep = x.copy()
            for op in OPS:
                for exclusive in (False, True):
                    got = algorithm.model(x, op=op, exclusive=exclusive)
                    np.testing.assert_array_equal(
                        got, scan_reference(keep, op, exclusive),
                        err_msg=f"model {algorithm.name} {np.dtype(dtype).name} {op} exclusive={exclusive} "
                                f"n={n} {name}")
                    assert np.asarray(got).dtype == x.dtype
            np.testing.assert_array_equal(x, keep)


@pytest.mark.parametrize("algorithm", _reduce_models(), ids=lambda a: a.name)
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_reduce_models_nan_inf(algorithm, dtype, rng):
    for n in (1, 2, 37, 1100):
        for name, x in patterns(n, dtype, rng):
            for op in OPS:
                got = algorithm.model(x, op=op)
                np.testing.assert_array_equal(got, reduce_reference(x, op),
                                              err_msg=f"model {algorithm.name} {op} n={n} {name}")


def test_there_are_models():
    assert _scan_models(), "no scan algorithm registers a model"
    assert _reduce_models(), "no reduce algorithm registers a model"
