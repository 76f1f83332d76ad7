"""The NumPy step-models of every registered scan against NumPy's own scans, their steps, and the work
counts read off them (PMPP §11.2-§11.4).  No GPU needed.

The reference helpers (make_input, reference, expected_scan, check_scan, assert_scan_close) and the float
tolerance they allow are in tests/helpers/scan_checks.py, shared with the GPU tests.
"""

import numpy as np
import pytest
from scan_checks import assert_scan_close, make_input, reference

from pyscan.scans import SCANS, tracing
from pyscan.scans.hierarchical import SECTION_SCANS, hierarchical_error_depth, hierarchical_model
from pyscan.scans.single_section import SECTION_KERNELS, trace_geometry, trace_step_count
from pyscan.types import Types, identity, ufunc

OPERATOR_NAMES = ("add", "max", "min")  # the operators of these tests; every operator x dtype: test_dtypes*.py

DTYPES = (np.int32, np.int64, np.float32, np.float64)
MODEL_LENGTHS = (0, 1, 2, 3, 31, 32, 33, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4097, 65537)
ALGORITHMS = SCANS.names()
MINE = tuple(SECTION_KERNELS)


# ------------------------------------------------------------------------------------------------ the models


def test_registry_has_the_books_table():
    for name in ("naive", "kogge_stone", "kogge_stone_double_buffer", "brent_kung", "coarsened", "hierarchical"):
        assert name in ALGORITHMS
    for algorithm in SCANS:
        assert algorithm.model is not None, f"{algorithm.name} has no step-model"
        assert callable(algorithm.error_depth), f"{algorithm.name} has no error_depth"


@pytest.mark.parametrize("exclusive", [False, True], ids=["inclusive", "exclusive"])
@pytest.mark.parametrize("op", OPERATOR_NAMES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_model_matches_numpy(algorithm, dtype, op, exclusive, rng):
    a = SCANS.get(algorithm)
    for n in MODEL_LENGTHS:
        x = make_input(rng, n, dtype, op)
        before = x.copy()
        out = a.model(x, op=op, exclusive=exclusive)
        assert_scan_close(out, x, op, exclusive, a.error_depth(n), f"{algorithm} n={n}")
        np.testing.assert_array_equal(x, before)  # the input is untouched


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_model_integer_add_wraps(algorithm, dtype, rng):
    info = np.iinfo(dtype)
    for n in (5, 1025, 9000):
        x = rng.integers(info.max // 4, info.max, n, dtype=dtype)  # the running sum overflows many times
        for exclusive in (False, True):
            out = SCANS.get(algorithm).model(x, op="add", exclusive=exclusive)
            np.testing.assert_array_equal(out, reference(x, "add", exclusive), err_msg=f"{algorithm} n={n}")


def test_model_bad_input():
    model = SCANS.get("kogge_stone").model
    with pytest.raises(ValueError, match="op"):
        model(np.ones(3, np.int32), op="prod")
    with pytest.raises(TypeError, match="dtype"):
        model(np.ones(3, np.complex64))
    with pytest.raises(TypeError, match="integers and bool"):
        model(np.ones(3, np.float32), op="bitwise_or")
    with pytest.raises(ValueError, match="1-D"):
        model(np.ones((2, 2), np.int32))
    with pytest.raises(ValueError, match="at most"):
        model(np.ones(5000, np.int32), return_steps=True)


# ---------------------------------------------------------------------------------------------------- steps


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_steps_generic(algorithm, rng):
    """Every model's steps: a load step first, arrays of one length >= n, edges inside it, result unchanged."""
    a = SCANS.get(algorithm)
    for n in (1, 2, 5, 16, 33, 100):
        for exclusive in (False, True):
            x = rng.integers(-50, 50, n, dtype=np.int32)
            result, steps = a.model(x, op="add", exclusive=exclusive, return_steps=True)
            np.testing.assert_array_equal(result, reference(x, "add", exclusive))
            assert len(steps) >= 2 and "load" in steps[0].label.lower()
            size = steps[0].values.size
            assert size >= n
            compute = Types.of(x.dtype, "add").compute  # int32 add accumulates in int64, NumPy's rule
            for step in steps:
                assert step.values.shape == (size,) and step.values.dtype == compute == np.int64
                for src, dst in step.edges:
                    assert 0 <= src < size and 0 <= dst < size and src != dst
    _, empty = a.model(np.zeros(0, np.int32), return_steps=True)
    assert empty == []


@pytest.mark.parametrize("op", OPERATOR_NAMES)
@pytest.mark.parametrize("algorithm", MINE)
def test_steps_explain_every_change(algorithm, op, rng):
    """For the single-section scans each step changes exactly its edges' destinations, each to
    op(previous[src], previous[dst]) -- coarsened's sequential phase chains: op(current[src], previous[dst])."""
    f = ufunc(op)
    for n in (1, 2, 3, 16, 37, 128, 1000, 2048):
        for exclusive in (False, True):
            x = make_input(rng, n, np.int64, op)
            _, steps = SCANS.get(algorithm).model(x, op=op, exclusive=exclusive, return_steps=True)
            g = trace_geometry(algorithm, n)
            assert len(steps) == trace_step_count(algorithm, g.section)
            assert steps[0].values.size == g.section
            padded = np.full(g.section, identity(op, x.dtype), x.dtype)
            padded[:n] = x
            loaded = padded if not exclusive else np.concatenate([[identity(op, x.dtype)], padded[:-1]]).astype(x.dtype)
            np.testing.assert_array_equal(steps[0].values, loaded)
            for prev, step in zip(steps, steps[1:]):
                src = np.array([e[0] for e in step.edges], dtype=int)
                dst = np.array([e[1] for e in step.edges], dtype=int)
                assert np.unique(dst).size == dst.size, f"{step.label}: a destination twice"
                unchanged = np.ones(g.section, bool)
                unchanged[dst] = False
                np.testing.assert_array_equal(step.values[unchanged], prev.values[unchanged], err_msg=step.label)
                sources = step.values[src] if step.label.startswith("phase 1") else prev.values[src]
                np.testing.assert_array_equal(step.values[dst], f(sources, prev.values[dst]), err_msg=step.label)
            reference_full = reference(padded, op, exclusive)
            np.testing.assert_array_equal(steps[-1].values, reference_full)


def test_kogge_stone_step_edges_are_the_books():
    """PMPP Fig. 11.2 for 16 elements: strides 1, 2, 4, 8; at stride s element k >= s receives from k - s."""
    _, steps = SCANS.get("kogge_stone").model(np.arange(16, dtype=np.int32), return_steps=True)
    assert [s.label for s in steps] == ["load", "stride 1", "stride 2", "stride 4", "stride 8"]
    for s, step in zip((1, 2, 4, 8), steps[1:]):
        assert step.edges == [(k - s, k) for k in range(s, 16)]


def test_brent_kung_step_edges_are_the_books():
    """PMPP Fig. 11.5 for 16 elements: 4 reduction-tree steps, 3 reverse-tree steps."""
    _, steps = SCANS.get("brent_kung").model(np.arange(16, dtype=np.int32), return_steps=True)
    assert len(steps) == 8
    assert steps[1].edges == [(k - 1, k) for k in range(1, 16, 2)]
    assert steps[4].edges == [(7, 15)]
    assert steps[5].edges == [(7, 11)]  # reverse tree, stride 4
    assert steps[7].edges == [(k, k + 1) for k in range(1, 15, 2) if k + 1 < 16]


# ---------------------------------------------------------------------------------------------- work counts

POWERS = [2**k for k in range(4, 12)]  # 16 .. 2048


@pytest.mark.parametrize("n", POWERS)
def test_model_counts_match_the_books(n):
    log = n.bit_length() - 1
    for name in ("naive", "kogge_stone", "kogge_stone_double_buffer"):
        assert tracing.model_count_work(name, n).additions == n * log - (n - 1) == tracing.book_additions(name, n)
    assert tracing.model_count_work("brent_kung", n).additions == 2 * n - 2 - log == tracing.book_additions("brent_kung", n)
    g = trace_geometry("coarsened", n)
    b, c = g.threads, g.coarsen
    blog = b.bit_length() - 1
    expected = b * (c - 1) + (b * blog - (b - 1)) + (b - 1) * (c - 1)  # phases 1, 2, 3 (coarsened.cu's header)
    assert tracing.model_count_work("coarsened", n).additions == expected


@pytest.mark.parametrize("n", POWERS)
def test_model_active_warps(n):
    """Warps with a combining thread per step, from the thread mappings of the kernels."""
    log = n.bit_length() - 1
    threads = min(n, 1024)
    ks = tracing.model_count_work("kogge_stone", n)
    assert len(ks.active_warps) == log
    for i, stride in enumerate(2**k for k in range(log)):
        active_threads = {k % threads for k in range(stride, n)}
        assert ks.active_warps[i] == len({t // 32 for t in active_threads})
    bk = tracing.model_count_work("brent_kung", n)
    up = [-(-len(range(2 * s - 1, n, 2 * s)) // 32) for s in (2**k for k in range(log))]
    down = [-(-len(range(2 * s - 1, n - s, 2 * s)) // 32) for s in (2**k for k in range(log - 2, -1, -1))]
    assert bk.active_warps == up + down
    assert bk.warp_slots == 32 * sum(up + down)


def test_count_input_checked():
    for bad in (0, 1, 24, 4096, True, 16.0):
        with pytest.raises(ValueError, match="power of two"):
            tracing.model_count_work("kogge_stone", bad)


def test_tracing_dispatch_errors(monkeypatch):
    from pyscan.registry import ScanAlgorithm

    with pytest.raises(ValueError, match="unknown scan algorithm"):
        tracing.trace("nope", np.ones(4, np.int32))
    fake = ScanAlgorithm(name="fake", driver=lambda *a, **k: 0, kernels=(), source="test", summary="no trace",
                         pattern="scan")
    monkeypatch.setitem(SCANS._algorithms, "fake", fake)
    with pytest.raises(ValueError, match="has no trace build.*'kogge_stone'"):
        tracing.trace("fake", np.ones(4, np.int32))
    with pytest.raises(ValueError, match="has no work-counting build"):
        tracing.count_work("fake", 16)
    assert "kogge_stone" in tracing.algorithms_with("trace")
    assert len(tracing.model_steps("brent_kung", np.arange(8, dtype=np.int32))) == 6


# ------------------------------------------------------------------------------------ hierarchical scheme


def test_hierarchical_model_small_sections(rng):
    """The scheme itself, with a plain NumPy section scan and tiny sections: many recursion levels."""
    def section(rows, *, op, exclusive):
        inc = ufunc(op).accumulate(rows, axis=1, dtype=rows.dtype)
        if not exclusive:
            return inc
        out = np.empty_like(inc)
        out[:, 0] = identity(op, rows.dtype)
        out[:, 1:] = inc[:, :-1]
        return out

    for op in OPERATOR_NAMES:
        for n in (0, 1, 3, 4, 5, 17, 64, 65, 1000):
            x = make_input(rng, n, np.int32, op)
            for exclusive in (False, True):
                np.testing.assert_array_equal(hierarchical_model(x, section, 4, op=op, exclusive=exclusive),
                                              reference(x, op, exclusive))


def test_error_depth_grows_with_levels():
    for name in MINE + ("hierarchical",):
        depth = SCANS.get(name).error_depth
        values = [depth(n) for n in (1, 1024, 4097, 2**20 + 7, 2**24, 2**31 - 1)]
        assert values == sorted(values) and values[0] >= 1 and values[-1] < 200
    assert hierarchical_error_depth(5, 4, 3) == 3 + 3 + 1
    assert hierarchical_error_depth(17, 4, 3) == 3 + (3 + 3 + 1) + 1


def test_section_scans_registered():
    for name in MINE:
        s = SECTION_SCANS[name]
        assert s.threads <= 1024 and s.section_size % s.threads == 0
