"""blelloch, blelloch_block, single_pass and decoupled_lookback on the GPU: the things the general matrix
(test_scan_gpu.py) does not do: tile and section boundaries, unaligned GPUArray views (the scalar path of the vector
kernel), traces and counts of both Blelloch kernels, and repeated single-kernel scans on grids far larger than the GPU
holds at once.  Their step-models and kernel builds, without a GPU: tests/unit/test_scan_sweeps.py.

Float bound (add): |out_i - ref_i| <= error_depth(n) * eps * sum_{j<=i} |x_j| with ref in float64 (each
algorithm's error_depth documents the roundings on a path from an input to an output).
"""

import numpy as np
import pytest
from sweep_checks import DTYPES, MINE, check, make_input, reference

from pyscan.scans import SCANS
from pyscan.scans import decoupled_lookback as dl

OPERATOR_NAMES = ("add", "max", "min")  # the operators of these tests; every operator x dtype: test_dtypes*.py

GPU_LENGTHS = (1, 2, 31, 33, 1023, 1025, 2047, 2048, 2049, 4095, 4096, 4097, 8191, 8192, 8193, 3 * 8192 + 1, 65537,
               2**20 + 7)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", MINE)
def test_gpu_boundaries(name, dtype, exclusive, rng):
    import pycuda.gpuarray as ga

    import pyscan

    depth = SCANS.get(name).error_depth
    for op in OPERATOR_NAMES:
        for n in GPU_LENGTHS:
            x = make_input(rng, n, dtype, op)
            out = pyscan.scan(ga.to_gpu(x), algorithm=name, op=op, exclusive=exclusive)
            check(out.get(), x, op, exclusive, depth(n), f"{name} {np.dtype(dtype)} {op} n={n}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", MINE)
def test_gpu_unaligned_views(name, dtype, rng):
    """A GPUArray view starting 1..3 elements into an allocation (not 16-byte aligned): decoupled_lookback takes
    its scalar path; the others do not care."""
    import pycuda.gpuarray as ga

    import pyscan

    depth = SCANS.get(name).error_depth
    tile = dl.tile_size(dtype)
    base = make_input(rng, 3 * tile + 100, dtype, "add")
    base_dev = ga.to_gpu(base)
    for offset in (1, 2, 3):
        for n in (1, tile + 1, 3 * tile + 7):
            view = base_dev[offset:offset + n]
            out = pyscan.scan(view, algorithm=name)
            check(out.get(), base[offset:offset + n], "add", False, depth(n), f"{name} offset={offset} n={n}")
    np.testing.assert_array_equal(base_dev.get(), base)


@pytest.mark.parametrize("op", OPERATOR_NAMES)
@pytest.mark.parametrize("name", ["blelloch", "blelloch_block"])
def test_gpu_trace_equals_model(name, op, rng):
    a = SCANS.get(name)
    for n in (1, 2, 3, 16, 100, 1000, 2048):
        for exclusive in (False, True):
            x = make_input(rng, n, np.int32, op)
            trace = a.trace(x, op=op, exclusive=exclusive)
            # the trace build adds in x's dtype (the full int32 range wraps); the model likewise with dtype=
            _, steps = a.model(x, op=op, exclusive=exclusive, return_steps=True, dtype=x.dtype)
            assert len(trace) == len(steps)
            for k, (values, step) in enumerate(zip(trace, steps)):
                np.testing.assert_array_equal(values, step.values, err_msg=f"{name} n={n} step {k} {step.label}")


@pytest.mark.parametrize("name", ["blelloch", "blelloch_block"])
def test_gpu_counted_work(name):
    a = SCANS.get(name)
    for k in range(4, 12):
        n = 1 << k
        gpu, model = a.count_work(n), a.model_count_work(n)
        assert gpu.additions == 2 * (n - 1), (name, n, gpu)
        assert gpu.active_warps == model.active_warps, (name, n)


def _count_mismatches():
    from pycuda.reduction import ReductionKernel

    return ReductionKernel(np.int64, neutral="0", reduce_expr="a+b", map_expr="(long long)(a[i] != b[i])",
                           arguments="const int *a, const int *b", name="pyscan_sweeps_mismatch")


@pytest.mark.slow
def test_gpu_single_pass_200_runs_at_2_to_the_24(rng):
    """PMPP §11.7's domino on 8192 blocks (the H100 holds 132 x 2 of them at once), 200 times: no hang, every
    element right (checked on the device against NumPy's result)."""
    import pycuda.gpuarray as ga

    import pyscan

    n = 1 << 24
    x = rng.integers(-2**31, 2**31, n, dtype=np.int32)
    x_dev = ga.to_gpu(x)
    ref = ga.to_gpu(np.cumsum(x, dtype=np.int32))
    mismatches = _count_mismatches()
    bad = []
    for run in range(200):
        out = pyscan.scan(x_dev, algorithm="single_pass", dtype=np.int32)  # int32 sums, as ref
        wrong = int(mismatches(out, ref).get())
        if wrong:
            bad.append((run, wrong))
    assert not bad, f"single_pass: runs with wrong elements (run, count): {bad[:10]}"


@pytest.mark.slow
@pytest.mark.parametrize("exclusive", [False, True])
def test_gpu_decoupled_lookback_repeated_many_tiles(exclusive, rng):
    """500 runs of 2^24 + 3 int32 (2049 tiles of the default CONFIG; the H100 holds 132 x 4 at once) and 30 runs of
    each other dtype at sizes with > 1000 tiles, every element checked."""
    import pycuda.gpuarray as ga

    import pyscan

    n = (1 << 24) + 3
    x = rng.integers(-2**31, 2**31, n, dtype=np.int32)
    x_dev = ga.to_gpu(x)
    ref = ga.to_gpu(reference(x, "add", exclusive).astype(np.int32))  # int32 sums: the mismatch kernel reads ints
    mismatches = _count_mismatches()
    bad = [(run, w) for run in range(500)
           if (w := int(mismatches(pyscan.scan(x_dev, algorithm="decoupled_lookback", exclusive=exclusive,
                                               dtype=np.int32), ref).get()))]
    assert not bad, f"decoupled_lookback int32: runs with wrong elements: {bad[:10]}"
    for dtype, op in ((np.int64, "add"), (np.float64, "max"), (np.float32, "min")):
        m = 1000 * dl.tile_size(dtype) + 1
        y = make_input(rng, m, dtype, op)
        y_dev = ga.to_gpu(y)
        expected = reference(y, op, exclusive).astype(dtype)
        for run in range(30):
            out = pyscan.scan(y_dev, algorithm="decoupled_lookback", op=op, exclusive=exclusive).get()
            np.testing.assert_array_equal(out, expected, err_msg=f"{np.dtype(dtype)} {op} run {run}")


def test_gpu_decoupled_small_call_is_one_launch():
    """One tile: one launch, no scratch, no memset."""
    import pycuda.gpuarray as ga

    import pyscan

    x = ga.to_gpu(np.arange(1024, dtype=np.int32))
    out = ga.empty_like(x)
    from pyscan.runtime.arrays import Call

    assert dl.decoupled_lookback_driver(x, out, op="add", exclusive=False, call=Call.tool()) == 1
    np.testing.assert_array_equal(out.get(), np.cumsum(np.arange(1024, dtype=np.int32)))
    np.testing.assert_array_equal(pyscan.scan(x, algorithm="decoupled_lookback").get(), out.get())


def test_gpu_decoupled_status_kept_between_calls(rng):
    """EPOCH: the status buffer is kept between calls and never zeroed again; calls of growing and shrinking
    lengths, of each element size (their own buffers), aligned and unaligned, all exact, and after each the
    kernel's last block has put the tile counter and the finished-blocks count back to 0."""
    import pycuda.driver as drv
    import pycuda.gpuarray as ga

    import pyscan

    lengths = [2**20 + 7, 3 * 8192 + 1, 65537, 2**22 + 3, 8193, 2**20 + 7]
    for n in lengths:
        for dtype in (np.int32, np.int64, np.float64):
            x = make_input(rng, n + 1, dtype, "max")
            for view, host in ((ga.to_gpu(x)[:n], x[:n]), (ga.to_gpu(x)[1:], x[1:])):
                for op, exclusive in (("add", False), ("max", True)):
                    out = pyscan.scan(view, algorithm="decoupled_lookback", op=op, exclusive=exclusive).get()
                    check(out, host, op, exclusive, dl.decoupled_lookback_error_depth(n), f"{dtype} n={n} {op}")
                kept = dl._status[np.dtype(dtype).itemsize].kept(0, stream=0)  # the legacy stream's buffer
                counters = np.empty(2, np.uint32)
                drv.memcpy_dtoh(counters, kept.address)
                assert counters.tolist() == [0, 0], f"{dtype} n={n}: counter and finished blocks {counters}"
    words = 2 + dl.status_words(-(-(2**22 + 3) // dl.tile_size(np.int32)), 4)
    assert dl._status[4].kept(0, stream=0).nbytes >= 8 * words


def test_gpu_decoupled_epoch_wraps(rng):
    """After 2^30 - 1 calls the epochs start over at 1 with the flags zeroed again: calls across the wrap stay
    exact (a flag of an old epoch that happened to equal the new one would give wrong prefixes or a hang)."""
    import pycuda.gpuarray as ga

    import pyscan

    x = make_input(rng, 2**20 + 5, np.int32, "add")
    x_dev = ga.to_gpu(x)
    pyscan.scan(x_dev, algorithm="decoupled_lookback", dtype=np.int32)  # 32-bit sums: the 4-byte status
    kept = dl._status[4].kept(0, stream=0)
    kept.state = dl.EPOCHS - 3
    seen = []
    for _ in range(6):
        out = pyscan.scan(x_dev, algorithm="decoupled_lookback", dtype=np.int32).get()
        seen.append(kept.state)
        np.testing.assert_array_equal(out, reference(x, "add", False).astype(np.int32))
    assert seen == [dl.EPOCHS - 2, dl.EPOCHS - 1, 1, 2, 3, 4]
