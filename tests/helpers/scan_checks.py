"""The scan reference helpers that tests/unit and tests/gpu share: make_input, reference, expected_scan,
check_scan, assert_scan_close.  tests/helpers is on sys.path (pytest.ini's pythonpath), so that
`from scan_checks import check_scan` works from either folder.

Float tolerance (add): an output is a tree of roundings of its inputs; with error_depth(n) = h roundings on any
path, |out_i - exact_i| <= h * eps * sum_{j<=i} |x_j| (pyscan/scans/single_section.py explains; eps = np.finfo(dtype).eps is
twice the unit roundoff, which also covers the second-order terms).  The reference is a long-double cumsum,
itself off by at most n * eps_ld * sum_{j<=i} |x_j|, so the test allows the sum of the two.  Integers and
max/min are compared exactly (max/min do no rounding; NaN positions must match too).
"""

from dataclasses import dataclass

import numpy as np

from pyscan.scans.reference import reference as numpy_reference
from pyscan.types import result_dtype


def make_input(rng, n, dtype, op):
    """Random test data: small integers for add (no overflow: exact either way), the full range for max/min
    (identities included); floats N(0, 100) with, for max/min, a NaN in the last quarter and some infinities."""
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        if op == "add":
            return rng.integers(-1000, 1000, n, dtype=dtype)
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    x = (rng.standard_normal(n) * 100).astype(dtype)
    if op != "add" and n >= 8:
        x[rng.integers(0, n, 2)] = [np.inf, -np.inf]
        x[rng.integers(3 * n // 4, n)] = np.nan
    return x


def reference(x, op, exclusive, dtype=None):
    """NumPy's scan by its rules: np.cumsum(x) (int32 add in int64), np.cumsum(x, dtype=...) (wrapping in a narrow
    dtype=), np.maximum/minimum.accumulate, ... (pyscan.scans.reference)."""
    return numpy_reference(np.asarray(x), op, exclusive, dtype)


@dataclass
class Expected:
    """What a scan of x must give: `exact` (integers, max/min), or for float add a float64 reference `ref` (from a
    long-double cumsum) and `mag` = sum_{j<=i} |x_j| for the bound."""

    dtype: np.dtype
    exact: np.ndarray = None
    ref: np.ndarray = None
    mag: np.ndarray = None


def expected_scan(x, op, exclusive) -> Expected:
    x = np.asarray(x)
    if x.dtype.kind != "f" or op != "add":
        return Expected(result_dtype(x.dtype, op), exact=reference(x, op, exclusive))
    wide = x.astype(np.longdouble)
    ref, mag = np.cumsum(wide), np.cumsum(np.abs(wide))
    if exclusive:
        ref = np.concatenate([np.zeros(min(1, x.size), np.longdouble), ref[:-1]])
    return Expected(x.dtype, ref=ref.astype(np.float64), mag=mag.astype(np.float64))


def check_scan(out, expected: Expected, depth, what=""):
    """Integers and max/min: exactly NumPy's (NaN where NumPy has NaN).  Float add: |out - ref| <= tol with
    tol = ((depth + 3) * eps + n * eps_longdouble) * mag: depth * eps for the scan (module docstring), n * eps_ld
    for the long-double reference, and 3 * eps for rounding the reference, the difference and mag to float64 (each
    off by at most eps64/2 relative, eps64 <= eps)."""
    out = np.asarray(out)
    shape = (expected.exact if expected.exact is not None else expected.ref).shape
    assert out.dtype == expected.dtype and out.shape == shape, f"{what}: got {out.dtype} {out.shape}"
    if expected.exact is not None:
        e = expected.exact
        if not np.array_equal(out, e, equal_nan=out.dtype.kind == "f"):
            same = (out == e) | (np.isnan(out) & np.isnan(e)) if out.dtype.kind == "f" else out == e
            bad = np.flatnonzero(~same)
            raise AssertionError(f"{what}: {bad.size} of {out.size} differ, first at {bad[:5].tolist()}: "
                                 f"got {out[bad[:5]].tolist()}, expected {e[bad[:5]].tolist()}")
        return
    n = out.size
    tol = ((depth + 3) * np.finfo(out.dtype).eps + n * np.finfo(np.longdouble).eps) * expected.mag
    err = np.abs(out.astype(np.float64) - expected.ref)
    bad = np.flatnonzero(~(err <= tol))
    if bad.size:
        raise AssertionError(f"{what}: {bad.size} of {n} outside the bound (depth {depth}), first at {bad[:5].tolist()}: "
                             f"error {err[bad[:5]].tolist()} > {tol[bad[:5]].tolist()}")


def assert_scan_close(out, x, op, exclusive, depth, what=""):
    check_scan(out, expected_scan(x, op, exclusive), depth, what)
