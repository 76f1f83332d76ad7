"""GPU trace builds (TRACE=1) equal the NumPy step-models step for step, and the work-counting builds
(COUNT_WORK=1) count what the models and the books say (PMPP §11.2-§11.4).  Every algorithm that registers the option is
tested; Kogge-Stone, Brent-Kung and naive must have it (tests/unit/test_scan_trace.py checks that they do)."""

import numpy as np
import pytest
from scan_checks import make_input

from pyscan.scans import SCANS, tracing

OPERATOR_NAMES = ("add", "max", "min")  # the operators of these tests; every operator x dtype: test_dtypes*.py

TRACED = tracing.algorithms_with("trace")
COUNTED = tracing.algorithms_with("count_work")
# Every distinct traced section size is one more kernel build (~1-2 s of nvcc each), so the lengths are chosen to
# cover the cases with few sizes: one element, a padded section, a full one, many warps; max/min on two of them.
TRACE_LENGTHS = {"add": (1, 13, 16, 1000), "max": (13, 16), "min": (13, 16)}
COUNT_SIZES = (16, 128, 2048)


@pytest.mark.parametrize("op", OPERATOR_NAMES)
@pytest.mark.parametrize("algorithm", TRACED)
def test_trace_equals_model(algorithm, op, rng):
    limit = SCANS.get(algorithm).trace_limit
    lengths = TRACE_LENGTHS[op] + ((limit,) if limit and op == "add" else ())
    for n in lengths:
        if limit and n > limit:
            continue
        for exclusive in (False, True):
            x = make_input(rng, n, np.int32, op)
            trace = tracing.trace(algorithm, x, op=op, exclusive=exclusive)
            steps = tracing.model_steps(algorithm, x, op=op, exclusive=exclusive)
            what = f"{algorithm} {op} exclusive={exclusive} n={n}"
            assert len(trace) == len(steps), f"{what}: {len(trace)} traced steps, the model has {len(steps)}"
            for k, (values, step) in enumerate(zip(trace, steps)):
                np.testing.assert_array_equal(values, step.values, err_msg=f"{what}, step {k} ({step.label})")


@pytest.mark.parametrize("algorithm", COUNTED)
def test_counted_work_equals_model_and_book(algorithm):
    limit = (SCANS.get(algorithm).trace_limit or 2048)
    has_model = SCANS.get(algorithm).model_count_work is not None
    for n in COUNT_SIZES:
        if n > limit:
            continue
        gpu = tracing.count_work(algorithm, n)
        if has_model:
            model = tracing.model_count_work(algorithm, n)
            assert (gpu.additions, gpu.active_warps) == (model.additions, model.active_warps), f"{algorithm} n={n}"
        book = tracing.book_additions(algorithm, n)
        if book is not None:
            assert gpu.additions == book, f"{algorithm} n={n}: counted {gpu.additions}, the book says {book}"


def test_book_formulas_on_gpu():
    """The three formulas of the books (Kogge-Stone, Brent-Kung, Blelloch), asserted by name (so they cannot be skipped)."""
    for n in COUNT_SIZES:
        log = n.bit_length() - 1
        assert tracing.count_work("naive", n).additions == n * log - (n - 1)
        assert tracing.count_work("kogge_stone", n).additions == n * log - (n - 1)
        assert tracing.count_work("brent_kung", n).additions == 2 * n - 2 - log
