"""What tests/unit/test_scan_sweeps.py and tests/gpu/test_scan_sweeps_gpu.py share: the four scans they test
(MINE), the dtypes, the random inputs, NumPy's scan and the check of an output against it within the float bound
(tests/unit/test_scan_sweeps.py states it).  tests/helpers is on sys.path (pytest.ini's pythonpath)."""

import numpy as np

from pyscan.types import identity, ufunc

MINE = ("blelloch", "blelloch_block", "single_pass", "decoupled_lookback")
DTYPES = (np.int32, np.int64, np.float32, np.float64)


def reference(x, op, exclusive):
    """NumPy's scan: integer add wraps like np.cumsum(x, dtype=x.dtype); floats in float64."""
    x = np.asarray(x)
    f = ufunc(op)
    inc = f.accumulate(x, dtype=x.dtype) if x.dtype.kind == "i" else f.accumulate(x.astype(np.float64))
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
    assert out.shape == x.shape and out.dtype == x.dtype, what
    if x.dtype.kind == "i" or op != "add":
        np.testing.assert_array_equal(out, ref.astype(x.dtype), err_msg=what)
        return
    mag = np.cumsum(np.abs(x.astype(np.float64)))
    if exclusive:
        mag = np.concatenate([[0.0], mag[:-1]])
    bound = depth * np.finfo(x.dtype).eps * mag
    err = np.abs(out.astype(np.float64) - ref)
    assert np.all(err <= bound), f"{what}: worst error {err.max():.3g} > bound at {np.argmax(err - bound)}"
