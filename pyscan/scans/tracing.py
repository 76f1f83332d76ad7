"""Looking inside the scans (PMPP §11.2-§11.4): GPU traces, step-models and counted work, by algorithm name.

    trace("kogge_stone", x)          # the GPU's shared array after every step (one section; TRACE=1 build)
    model_steps("kogge_stone", x)    # the NumPy step-model's Steps for the same section (values + edges)
    count_work("brent_kung", 1024)   # WorkCount measured on the GPU (COUNT_WORK=1 build)
    model_count_work("brent_kung", 1024)  # the same counts read off the step-model (no GPU)

They dispatch through the fields an algorithm registers in SCANS (`trace`, `count_work`, `model_count_work`);
an algorithm without the option raises ValueError naming the ones that have it.  For integer input, trace(...)
equals [s.values for s in model_steps(...)] step for step.
"""

from __future__ import annotations

import numpy as np

from ..types import ARITHMETIC
from .registry import SCANS


def _option(algorithm: str, option: str, what: str):
    fn = getattr(SCANS.get(algorithm), option)
    if fn is None:
        having = [a.name for a in SCANS if getattr(a, option) is not None]
        raise ValueError(f"scan algorithm {algorithm!r} has no {what}; the algorithms with one are: "
                         f"{', '.join(map(repr, having)) or 'none'}")
    return fn


def algorithms_with(option: str) -> tuple:
    """Names of the registered scans that have an option: "trace", "count_work", "model_count_work", ..."""
    return tuple(a.name for a in SCANS if getattr(a, option) is not None)


def trace(algorithm: str, x, *, op: str = "add", exclusive: bool = False) -> list:
    """The shared array of one section after every step (step 0: after the load), from the GPU's trace build.
    x: a 1-D NumPy array short enough for one traced section (the algorithm's `trace_limit`)."""
    return _option(algorithm, "trace", "trace build (TRACE=1)")(x, op=op, exclusive=exclusive)


def model_steps(algorithm: str, x, *, op: str = "add", exclusive: bool = False) -> list:
    """The step-model's Steps for the same section as trace(algorithm, x) (no GPU needed), in x's dtype as the
    trace builds compute (for add and mul NumPy's result dtype is wider for narrow integers: int32 adds in int64;
    the traces add in int32, wrapping like np.cumsum(x, dtype=x.dtype))."""
    x = np.asarray(x)
    dtype = x.dtype if op in ARITHMETIC else None
    _, steps = SCANS.get(algorithm).model(x, op=op, exclusive=exclusive, return_steps=True, dtype=dtype)
    return steps


def count_work(algorithm: str, n: int):
    """WorkCount of one section of n elements (a power of two) from the GPU's COUNT_WORK=1 build."""
    return _option(algorithm, "count_work", "work-counting build (COUNT_WORK=1)")(n)


def model_count_work(algorithm: str, n: int):
    """WorkCount of one section of n elements read off the NumPy step-model (no GPU needed)."""
    return _option(algorithm, "model_count_work", "model work count")(n)


def book_additions(algorithm: str, n: int) -> int | None:
    """The books' operation counts for a section of n = 2^k elements, where a book gives one (PMPP §11.3-11.4)."""
    log = int(n).bit_length() - 1
    formulas = {
        "sequential": n - 1,
        "naive": n * log - (n - 1),
        "kogge_stone": n * log - (n - 1),
        "kogge_stone_double_buffer": n * log - (n - 1),
        "brent_kung": 2 * n - 2 - log,
    }
    return formulas.get(algorithm)
