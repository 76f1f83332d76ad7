"""The NaN/inf cases that tests/unit/test_nan_inf.py and tests/gpu/test_nan_inf_gpu.py share, and NumPy's answers
(tests/unit/test_nan_inf.py states the behaviour and checks it on NumPy itself)."""

import numpy as np

from pyscan.types import identity

FLOATS = (np.float32, np.float64)
OPS = ("add", "max", "min")
NAN, INF = np.nan, np.inf


def patterns(n, dtype, rng):
    """(name, x) pairs: finite small integers with NaN / ±inf planted at the start, middle, end and spread."""
    base = rng.integers(-8, 9, n).astype(dtype)
    out = []

    def plant(name, where):
        x = base.copy()
        for i, v in where:
            if 0 <= i < n:
                x[i] = v
        out.append((name, x))

    mid = n // 2
    plant("finite", [])
    plant("nan_first", [(0, NAN)])
    plant("nan_middle", [(mid, NAN)])
    plant("nan_last", [(n - 1, NAN)])
    plant("pos_inf_middle", [(mid, INF)])
    plant("neg_inf_middle", [(mid, -INF)])
    plant("inf_then_neg_inf", [(n // 3, INF), (2 * n // 3, -INF)])
    plant("neg_inf_then_inf", [(n // 4, -INF), (n // 2 + 1, INF)])
    plant("inf_then_nan", [(n // 3, INF), (2 * n // 3 + 1, NAN)])
    plant("nan_then_inf", [(n // 3, NAN), (2 * n // 3 + 1, INF)])
    if n > 1:
        out.append(("all_nan", np.full(n, NAN, dtype)))
        out.append(("all_pos_inf", np.full(n, INF, dtype)))
        out.append(("all_neg_inf", np.full(n, -INF, dtype)))
        x = base.copy()
        x[rng.choice(n, size=max(1, n // 50), replace=False)] = rng.choice([NAN, INF, -INF], size=max(1, n // 50))
        out.append(("scattered", x))
    return out


def scan_reference(x, op, exclusive):
    if op == "add":
        inclusive = np.cumsum(x, dtype=x.dtype)
    else:
        inclusive = (np.maximum if op == "max" else np.minimum).accumulate(x, dtype=x.dtype)
    if not exclusive:
        return inclusive
    out = np.empty_like(inclusive)
    out[:1] = identity(op, x.dtype)
    out[1:] = inclusive[:-1]
    return out


def reduce_reference(x, op):
    return {"add": np.sum, "max": np.max, "min": np.min}[op](x)
