"""What tests/unit/test_scan_sweeps.py and tests/gpu/test_scan_sweeps_gpu.py share: the four scans they test
(MINE), the dtypes, the random inputs, NumPy's scan and the check of an output against it within the float bound
(tests/unit/test_scan_sweeps.py states it).  tests/helpers is on sys.path (pytest.ini's pythonpath)."""

import numpy as np

from pyscan.types import identity, result_dtype, ufunc

MINE = ("blelloch", "blelloch_block", "single_pass", "decoupled_lookback")
DTYPES = (np.int32, np.int64, np.float32, np.float64)


def reference(x, op, exclusive):
    """NumPy's scan: integers in NumPy's result dtype (np.cumsum of int32 in int64; int64 add wraps); floats in
    float64."""
    x = np.asarray(x)
    f = ufunc(op)
    inc = f.accumulate(x, dtype=result_dtype(x.dtype, op)) if x.dtype.kind == "i" else f.accumulate(x.astype(np.float64))
    if not exclusive or x.size == 0:
        return inc
    return np.concatenate([[identity(op, inc.dtype)], inc[:-1]]).astype(inc.dtype)


def make_input(rng, n, dtype, op):
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)  # add wraps
    return rng.standard_normal(n).astype(dtype) * (100 if op != "add" else 1)


def check(out, x, op, exclusive, depth, what):
    out, x = np.asarray(out), np.asarray(x)
    ref = reference(x, op, exclusive)
    value = result_dtype(x.dtype, op)  # NumPy's: int64 for int32 add
    assert out.shape == x.shape and out.dtype == value, what
    if x.dtype.kind == "i" or op != "add":
        np.testing.assert_array_equal(out, ref.astype(value), err_msg=what)
        return
    mag = np.cumsum(np.abs(x.astype(np.float64)))
    if exclusive:
        mag = np.concatenate([[0.0], mag[:-1]])
    bound = depth * np.finfo(x.dtype).eps * mag
    err = np.abs(out.astype(np.float64) - ref)
    assert np.all(err <= bound), f"{what}: worst error {err.max():.3g} > bound at {np.argmax(err - bound)}"
