"""pyscan.distributed without a GPU: the host-side logic (rank totals, exclusive prefixes, identities, integer
wrap-around, NaN, empty shards) and the per-rank combine steps, driven by a fake group that runs R ranks in R
threads and meets them at its collectives as torch.distributed's do; checked against NumPy on the concatenation.
With PyTorch installed (not needed by CI), the torch path too: input checks, and scan / reduce / histogram over a
real gloo group of 3 processes on the CPU, with NumPy standing in for the local GPU kernels.
"""

import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np
import pytest
from distributed_numpy import numpy_local_steps, numpy_reduce
from scan_checks import check_scan, expected_scan, make_input, reference

from pyscan import distributed
from pyscan.distributed import (
    _NumpyArrays,
    combine_changes_nothing,
    exclusive_prefixes,
    histogram_combine,
    rank_prefix,
    rank_totals,
    reduce_combine,
    reduce_records,
    scan_combine,
    scan_in_place_steps,
    shard_record,
)
from pyscan.types import identity, result_dtype

OPERATOR_NAMES = ("add", "max", "min")  # the operators of these tests; every operator x dtype: test_dtypes*.py

DTYPES = ("int32", "int64", "float32", "float64")
SHARD_LENGTHS = (0, 0, 1, 2, 3, 31, 33, 1000, 1025)


# ------------------------------------------------------------------------------------------ the fake group


class FakeWorld:
    """R ranks in R threads.  Each collective stores this rank's contribution, waits for every rank at a barrier,
    reads the result, and waits again before anyone may store the next one."""

    def __init__(self, size):
        self.size = size
        self.barrier = threading.Barrier(size, timeout=30)
        self.slots = [None] * size
        self.calls = [0] * size

    def group(self, rank):
        return FakeGroup(self, rank)


class FakeGroup:
    def __init__(self, world, rank):
        self.world, self.rank, self.size = world, rank, world.size

    def _exchange(self, value):
        w = self.world
        w.calls[self.rank] += 1
        w.slots[self.rank] = np.array(value, copy=True)
        w.barrier.wait()
        everyone = np.stack(w.slots)
        w.barrier.wait()
        return everyone

    def all_gather(self, record):
        return self._exchange(record)

    def all_reduce_sum(self, x):
        x[...] = np.add.reduce(self._exchange(x), axis=0, dtype=x.dtype)  # integer sums wrap, as NCCL's do


def run_ranks(size, per_rank):
    """per_rank(rank, group) in `size` threads; the results in rank order (the first exception is raised)."""
    world = FakeWorld(size)
    with ThreadPoolExecutor(size) as pool:
        futures = [pool.submit(per_rank, r, world.group(r)) for r in range(size)]
        results = [f.result() for f in futures]
    assert len(set(world.calls)) == 1, f"ranks made different numbers of collective calls: {world.calls}"
    return results


# ------------------------------------------------------------------------------------------- test data


def shard_data(rng, n, dtype, op):
    """Integers over the dtype's whole range (add wraps often); floats as the scan tests make them (NaN and
    infinities for max/min)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    return make_input(rng, n, dtype, op)


def make_shards(rng, ranks, dtype, op, lengths=None):
    if lengths is None:
        lengths = rng.choice(SHARD_LENGTHS, ranks)
    return [shard_data(rng, int(n), dtype, op) for n in lengths]


def layouts(rng, ranks):
    """Shard lengths: random ones, and an empty shard first, in the middle and last."""
    out = [list(rng.choice(SHARD_LENGTHS, ranks))]
    for empty in sorted({0, ranks // 2, ranks - 1}):
        lengths = [int(n) for n in rng.integers(1, 300, ranks)]
        lengths[empty] = 0
        out.append(lengths)
    return out


# ------------------------------------------------------------------------------------ host-side functions


def test_exclusive_prefixes_wrap_like_cumsum():
    totals = np.array([2**31 - 1, 1, 5, -7], np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning: wrapping is the specified behaviour
        prefixes = exclusive_prefixes(totals, "add")
    assert prefixes.dtype == np.int32
    np.testing.assert_array_equal(prefixes, [0, 2**31 - 1, -(2**31), -(2**31) + 5])
    big = np.array([2**63 - 1, 2**63 - 1, 3], np.int64)
    np.testing.assert_array_equal(exclusive_prefixes(big, "add"), np.cumsum(np.r_[0, big[:-1]].astype(np.int64)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPERATOR_NAMES)
def test_exclusive_prefixes_against_numpy(dtype, op, rng):
    for ranks in (1, 2, 3, 8):
        # the totals come in the result dtype (int64 for int32 add); the prefixes stay in the totals' dtype
        totals = shard_data(rng, ranks, dtype, op).astype(result_dtype(dtype, op))
        expected = reference(totals, op, exclusive=True)
        np.testing.assert_array_equal(exclusive_prefixes(totals, op), expected)  # same order: exact, floats too
    assert exclusive_prefixes(np.array([], dtype), op).shape == (0,)


def test_prefixes_propagate_nan_and_identities():
    totals = np.array([1.0, np.nan, 2.0], np.float32)
    for op in OPERATOR_NAMES:
        p = exclusive_prefixes(totals, op)
        assert p[0] == identity(op, np.float32) and p[1] == 1.0 and np.isnan(p[2])
        assert not combine_changes_nothing(p[2], op)
    assert np.isnan(exclusive_prefixes(np.array([np.inf, -np.inf, 0.0]), "add")[2])
    assert exclusive_prefixes(np.array([5, 9], np.int64), "min")[0] == np.iinfo(np.int64).max
    assert exclusive_prefixes(np.array([5, 9], np.int32), "max")[0] == np.iinfo(np.int32).min


def test_rank_totals_inclusive_and_exclusive():
    # rank 0 scanned [3, 4] -> inclusive [3, 7] / exclusive [0, 3]; rank 1 empty; rank 2 scanned [-1]
    inclusive = np.array([[7, 4], [0, 0], [-1, -1]], np.int64)
    exclusive = np.array([[3, 4], [0, 0], [0, -1]], np.int64)
    np.testing.assert_array_equal(rank_totals(inclusive, "add", False), [7, 0, -1])
    np.testing.assert_array_equal(rank_totals(exclusive, "add", True), [7, 0, -1])
    assert rank_prefix(exclusive, 2, "add", True) == 7
    assert rank_prefix(exclusive, 0, "add", True) == 0
    with pytest.raises(ValueError, match="rank 3 is not one of the 3"):
        rank_prefix(exclusive, 3, "add", True)
    with pytest.raises(ValueError, match=r"shape \(ranks, 2\)"):
        rank_totals(np.zeros(3), "add", False)


@pytest.mark.parametrize("op", OPERATOR_NAMES)
def test_empty_shard_record_is_the_identity(op):
    for dtype in DTYPES:
        e = np.array([], dtype)
        record = shard_record(e, e, op)
        assert record.dtype == np.dtype(dtype)
        for exclusive in (False, True):
            assert rank_totals(record[None, :], op, exclusive)[0] == identity(op, dtype)


def test_combine_changes_nothing_only_for_the_identity():
    assert combine_changes_nothing(np.int32(0), "add") and not combine_changes_nothing(np.int32(1), "add")
    assert combine_changes_nothing(np.float64(-np.inf), "max") and not combine_changes_nothing(np.float64(np.inf), "max")
    assert combine_changes_nothing(np.int64(np.iinfo(np.int64).max), "min")


def test_reduce_records():
    records = np.array([[5, 1], [0, 0], [-2, 1]], np.int32)  # rank 1 empty
    assert reduce_records(records, "add") == 3
    assert reduce_records(records, "max") == 5 and reduce_records(records, "min") == -2
    nothing = np.array([[0, 0], [0, 0]], np.float32)
    assert reduce_records(nothing, "add") == 0 and reduce_records(nothing, "add").dtype == np.float32
    for op in ("max", "min"):
        with pytest.raises(ValueError, match=f"every shard is empty.*np.{op}"):
            reduce_records(nothing, op)
    with_nan = np.array([[1.0, 1], [np.nan, 1], [3.0, 1]])
    assert np.isnan(reduce_records(with_nan, "max")) and np.isnan(reduce_records(with_nan, "min"))


# ------------------------------------------------------------------------- R ranks through the fake group


def fake_distributed_scan(shards, op, exclusive):
    """Every rank: its local scan (NumPy standing in for pyscan.scan, in NumPy's result dtype), then the combine
    steps of the library."""

    def per_rank(rank, group):
        local = reference(shards[rank], op, exclusive)
        return scan_combine(local, shards[rank], op=op, exclusive=exclusive, comm=group, arrays=_NumpyArrays)

    return run_ranks(len(shards), per_rank)


def fake_distributed_scan_in_place(shards, op, exclusive):
    """Every rank: its local reduction, then the in-place steps of the library (NumPy scans in place).  A shard
    whose result dtype is not its own (int32 add gives int64) cannot be scanned in place: its rank converts it to
    the result dtype first, as a caller of distributed.scan(x, out=x) must."""

    def per_rank(rank, group):
        x = shards[rank].astype(result_dtype(shards[rank].dtype, op))
        total = numpy_reduce(x, op) if x.size else None

        def scan_in_place(y):
            y[...] = reference(y, op, exclusive)

        out = scan_in_place_steps(x, total, dtype=x.dtype, op=op, exclusive=exclusive, comm=group, arrays=_NumpyArrays,
                                  scan_in_place=scan_in_place)
        assert out is x
        return out

    return run_ranks(len(shards), per_rank)


# The two ways of scanning across ranks, each with the float-add error depth of its result for n elements on R
# ranks.  Scan-then-combine: np.cumsum is one chain of n roundings; the prefix adds at most one per rank and one
# more.  In place: the prefix is built from the ranks' reductions (up to n roundings) before the local scan's n.
FAKE_SCANS = {
    "scan-then-combine": (fake_distributed_scan, lambda n, ranks: n + ranks + 1),
    "in-place": (fake_distributed_scan_in_place, lambda n, ranks: 2 * n + ranks + 1),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPERATOR_NAMES)
@pytest.mark.parametrize("exclusive", [False, True], ids=["inclusive", "exclusive"])
@pytest.mark.parametrize("way", FAKE_SCANS)
def test_fake_group_scan_equals_scan_of_concatenation(way, dtype, op, exclusive, rng):
    distributed_scan, error_depth = FAKE_SCANS[way]
    for ranks in (1, 2, 3, 5):
        for lengths in layouts(rng, ranks):
            shards = make_shards(rng, ranks, dtype, op, lengths)
            parts = distributed_scan(shards, op, exclusive)
            whole = np.concatenate(shards)
            for r, (part, shard) in enumerate(zip(parts, shards)):
                assert part.dtype == result_dtype(shard.dtype, op) and part.shape == shard.shape, f"{way}: rank {r}"
            check_scan(np.concatenate(parts), expected_scan(whole, op, exclusive), error_depth(whole.size, ranks),
                       f"{way}: {dtype} {op} exclusive={exclusive} lengths={lengths}")


def test_fake_group_int32_add_is_int64_and_int64_add_wraps(rng):
    """int32 add accumulates in int64 across the ranks (np.cumsum of int32 is int64: no wrap at 2^31); int64 add
    wraps modulo 2^64, as np.cumsum does."""
    shards = [np.full(n, 2**30, np.int32) for n in (3, 0, 5, 2)]
    for scan in (fake_distributed_scan, fake_distributed_scan_in_place):
        whole = np.concatenate(scan(shards, "add", False))
        assert whole.dtype == np.int64 and whole[-1] == 10 * 2**30
        np.testing.assert_array_equal(whole, np.cumsum(np.concatenate(shards)))
    big = [np.full(n, 2**62, np.int64) for n in (3, 0, 5, 2)]
    for scan in (fake_distributed_scan, fake_distributed_scan_in_place):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy's own cumsum below may warn of the overflow it wraps
            np.testing.assert_array_equal(np.concatenate(scan(big, "add", False)), np.cumsum(np.concatenate(big)))


def test_fake_group_nan_crosses_ranks():
    shards = [np.array([1.0, np.nan]), np.array([], np.float64), np.array([2.0, 3.0])]
    for op in OPERATOR_NAMES:
        for scan in (fake_distributed_scan, fake_distributed_scan_in_place):
            inclusive = np.concatenate(scan(shards, op, False))
            exclusive = np.concatenate(scan(shards, op, True))
            assert not np.isnan(inclusive[0]) and np.isnan(inclusive[1:]).all(), op
            assert not np.isnan(exclusive[:2]).any() and np.isnan(exclusive[2:]).all(), op  # shows from i + 1


def fake_distributed_reduce(shards, op):
    def per_rank(rank, group):
        x = shards[rank]
        local = numpy_reduce(x, op) if x.size else None
        return reduce_combine(local, nonempty=x.size > 0, dtype=result_dtype(x.dtype, op), op=op, comm=group,
                              arrays=_NumpyArrays)

    return run_ranks(len(shards), per_rank)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPERATOR_NAMES)
def test_fake_group_reduce_equals_reduce_of_concatenation(dtype, op, rng):
    for ranks in (1, 2, 3, 5):
        for lengths in layouts(rng, ranks):
            shards = make_shards(rng, ranks, dtype, op, lengths)
            whole = np.concatenate(shards)
            if whole.size == 0 and op != "add":
                with pytest.raises(ValueError, match="every shard is empty"):
                    fake_distributed_reduce(shards, op)
                continue
            results = fake_distributed_reduce(shards, op)
            assert len({np.asarray(r).tobytes() for r in results}) == 1, "the ranks disagree"
            got = results[0]
            assert np.asarray(got).dtype == result_dtype(dtype, op) == numpy_reduce(whole, op).dtype
            if whole.size == 0:
                assert op == "add" and got == 0
            elif np.dtype(dtype).kind == "i" or op != "add":
                np.testing.assert_array_equal(got, numpy_reduce(whole, op))
            else:  # float add: NumPy's and the ranks' orders differ; each is within n eps sum|x| of the exact sum
                exact = np.sum(whole.astype(np.longdouble))
                tol = 2 * (whole.size + ranks) * np.finfo(dtype).eps * np.sum(np.abs(whole.astype(np.float64)))
                assert abs(float(got) - float(exact)) <= tol


@pytest.mark.parametrize("op", OPERATOR_NAMES)
def test_fake_group_reduce_of_empty_shards(op):
    shards = [np.array([], np.int32)] * 3
    if op == "add":
        assert fake_distributed_reduce(shards, op) == [0, 0, 0]
    else:
        with pytest.raises(ValueError, match="every shard is empty"):
            fake_distributed_reduce(shards, op)


def test_fake_group_histogram(rng):
    for ranks in (1, 2, 4):
        for bins in (1, 7, 256):
            shards = [rng.integers(0, 256, int(n), dtype=np.uint8) for n in rng.choice(SHARD_LENGTHS, ranks)]

            def per_rank(rank, group, shards=shards, bins=bins):
                counts = np.histogram(shards[rank], bins, range=(0, 256))[0].astype(np.uint64)
                return histogram_combine(counts, comm=group, arrays=_NumpyArrays)

            expected = np.histogram(np.concatenate(shards), bins, range=(0, 256))[0]
            for counts in run_ranks(ranks, per_rank):
                assert counts.dtype == np.uint64
                np.testing.assert_array_equal(counts, expected)


def test_histogram_counts_past_2_63_keep_their_bits():
    big = np.array([2**63 + 5, 7], np.uint64)

    def per_rank(rank, group):
        return histogram_combine(big.copy() if rank == 0 else np.array([1, 2], np.uint64), comm=group,
                                 arrays=_NumpyArrays)

    for counts in run_ranks(2, per_rank):
        np.testing.assert_array_equal(counts, np.array([2**63 + 6, 9], np.uint64))


def test_import_needs_no_torch():
    """`import pyscan` works where torch cannot be imported; pyscan.distributed's functions then say what is missing."""
    import subprocess
    import sys
    from pathlib import Path

    code = "\n".join([
        "import sys",
        "sys.modules['torch'] = None  # import torch now raises ImportError",
        "import pyscan",
        "try:",
        "    pyscan.distributed.scan(None)",
        "except ImportError as exc:",
        "    print(exc)",
    ])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    assert "pyscan.distributed needs PyTorch" in out.stdout, out.stdout


# ------------------------------------------------------------------------------------- with PyTorch (CPU)


def _torch():
    return pytest.importorskip("torch", reason="PyTorch is not installed: the torch path of pyscan.distributed "
                                               "is tested where it is (the logic above runs without it)",
                               exc_type=ImportError)


def test_torch_input_checks(monkeypatch):
    torch = _torch()
    with pytest.raises(TypeError, match="expected a torch.Tensor.*numpy.ndarray"):
        distributed.scan(np.zeros(3, np.int32))
    with pytest.raises(ValueError, match=r"expected a 1-D shard, got shape \(2, 2\)"):
        distributed.scan(torch.zeros((2, 2), dtype=torch.int32))
    with pytest.raises(TypeError, match="unsupported dtype torch.int16: expected one of torch.int32"):
        distributed.reduce(torch.zeros(3, dtype=torch.int16))
    with pytest.raises(TypeError, match="unsupported dtype torch.int32: expected one of torch.uint8"):
        distributed.histogram(torch.zeros(3, dtype=torch.int32))
    with pytest.raises(ValueError, match="unknown op 'prod'"):
        distributed.scan(torch.zeros(3, dtype=torch.int32), op="prod")
    with pytest.raises(ValueError, match="op 'mul' is not supported across ranks.*'add', 'max', 'min'"):
        distributed.reduce(torch.zeros(3, dtype=torch.int32), op="mul")
    with pytest.raises(TypeError, match="exclusive must be True or False"):
        distributed.scan(torch.zeros(3, dtype=torch.int32), exclusive=1)
    with pytest.raises(ValueError, match="bins must be between 1 and 256, got 0"):
        distributed.histogram(torch.zeros(3, dtype=torch.uint8), bins=0)
    if not torch.distributed.is_initialized():
        with pytest.raises(RuntimeError, match="torch.distributed is not initialised"):
            distributed.scan(torch.zeros(3, dtype=torch.int32))
    # A CPU shard on an NCCL group
    monkeypatch.setattr(torch.distributed, "is_initialized", lambda: True)
    monkeypatch.setattr(distributed, "_backend", lambda dist, group: "nccl")
    with pytest.raises(ValueError, match="the shard is on cpu, but the group's backend is 'nccl'.*LOCAL_RANK"):
        distributed.scan(torch.zeros(3, dtype=torch.float32))


def test_torch_one_process_gloo_group(monkeypatch, tmp_path, rng):
    torch = _torch()
    import torch.distributed as dist

    if dist.is_initialized():
        pytest.skip("a default process group is already initialised in this process")
    for name, fn in numpy_local_steps().items():
        monkeypatch.setattr(distributed, name, fn)
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        x = shard_data(rng, 1000, "int32", "add")
        out = distributed.scan(torch.from_numpy(x))
        assert out.dtype == torch.int64  # np.cumsum of int32 is int64
        np.testing.assert_array_equal(out.numpy(), np.cumsum(x))
        assert distributed.scan(torch.zeros(0, dtype=torch.int32)).dtype == torch.int64
        assert distributed.scan(torch.zeros(0, dtype=torch.float64), exclusive=True).shape == (0,)
        y = torch.from_numpy(x.copy())
        with pytest.raises(ValueError, match=r"expected shape \(1000,\), dtype torch.int64"):
            distributed.scan(y, out=y)  # int32 add gives int64: not in place in an int32 shard
        assert distributed.scan(y, out=y, op="max") is y
        np.testing.assert_array_equal(y.numpy(), np.maximum.accumulate(x))
        y = torch.from_numpy(x.astype(np.int64))
        assert distributed.scan(y, out=y) is y
        np.testing.assert_array_equal(y.numpy(), np.cumsum(x))
        z = torch.from_numpy(x.copy())  # dtype= keeps int32 (wrapping, as np.cumsum(x, dtype=np.int32)): in place
        assert distributed.scan(z, out=z, dtype=torch.int32) is z
        np.testing.assert_array_equal(z.numpy(), np.cumsum(x, dtype=np.int32))
        small = distributed.reduce(torch.from_numpy(x), dtype=np.int32)
        assert small.dtype == torch.int32 and small.item() == np.sum(x, dtype=np.int32)
        with pytest.raises(TypeError, match="dtype=int8 is not one the ranks exchange"):
            distributed.scan(torch.from_numpy(x), dtype=torch.int8)
        out = torch.empty(x.size, dtype=torch.int32)
        assert distributed.scan(torch.from_numpy(x), out=out, op="max", exclusive=True) is out
        np.testing.assert_array_equal(out.numpy(), reference(x, "max", True))
        with pytest.raises(ValueError, match="overlaps the shard without being it"):
            distributed.scan(y[:-1], out=y[1:])
        with pytest.raises(ValueError, match=r"expected shape \(1000,\), dtype torch.int32"):
            distributed.scan(torch.from_numpy(x), op="min", out=torch.empty(1000, dtype=torch.int64))
        total = distributed.reduce(torch.from_numpy(x))
        assert total.dtype == torch.int64 and total.item() == np.sum(x)
        assert distributed.reduce(torch.zeros(0, dtype=torch.int64)).item() == 0
        with pytest.raises(ValueError, match="every shard is empty"):
            distributed.reduce(torch.zeros(0, dtype=torch.int64), op="max")
        counts = distributed.histogram(torch.from_numpy(x.view(np.uint8)), bins=16)
        assert counts.dtype == torch.uint64
        np.testing.assert_array_equal(counts.numpy(), np.histogram(x.view(np.uint8), 16, range=(0, 256))[0])
        with pytest.raises(ValueError, match="a stream needs a CUDA shard"):
            distributed.scan(torch.from_numpy(x), stream=0)
    finally:
        dist.destroy_process_group()


class FakeCudaEvent:
    """torch.cuda.Event on a host without CUDA: `start.elapsed_time(end)` is the next of a rank's given times (ms)."""

    def __init__(self, times):
        self.times = times

    def record(self):
        pass

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return next(self.times)


def fake_cuda_timing(torch, setattr_, times):
    """Replace torch.cuda's events and synchronize so that slowest_rank_ms measures `times`, one per timed call."""
    times = iter(times)
    setattr_(torch.cuda, "Event", lambda enable_timing: FakeCudaEvent(times))
    setattr_(torch.cuda, "synchronize", lambda: None)


def test_slowest_rank_ms_one_process_gloo_group(monkeypatch, tmp_path):
    torch = _torch()
    import torch.distributed as dist

    if dist.is_initialized():
        pytest.skip("a default process group is already initialised in this process")
    fake_cuda_timing(torch, monkeypatch.setattr, [3.0, 1.0, 2.0, 7.0])
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        calls = []
        result = distributed.slowest_rank_ms(lambda: calls.append(1), repeat=4, device=torch.device("cpu"))
        assert result == (2.5, [2.5])
        assert len(calls) == 2 + 4  # the warm-up calls are not timed
    finally:
        dist.destroy_process_group()


GLOO_RANKS = 3
GLOO_SEED = 20240611
# Per rank, the times of 3 calls for slowest_rank_ms: the slowest rank per call is 4, 5, 9 (median 5), which is
# not the largest of the ranks' own medians (2, 1, 2).
GLOO_TIMES = ([1.0, 5.0, 2.0], [4.0, 1.0, 1.0], [2.0, 2.0, 9.0])


def gloo_shards(dtype, op, layout):
    """The same shards on every rank: generated from a seed, not sent."""
    rng = np.random.default_rng([GLOO_SEED, DTYPES.index(dtype), OPERATOR_NAMES.index(op), layout])
    lengths = layouts(rng, GLOO_RANKS)[layout]
    return make_shards(rng, GLOO_RANKS, dtype, op, lengths)


def part_of(expected, start, stop):
    """The expectation for elements start..stop-1 of the whole scan."""
    return replace(expected, **{f: getattr(expected, f)[start:stop] for f in ("exact", "ref", "mag")
                                if getattr(expected, f) is not None})


def gloo_worker(rank, store_path, results_dir):
    """One rank of the 3-process gloo test: every scan / reduce / histogram case; failures are written to
    rank<r>.txt, not raised, so that no rank leaves the others waiting at a collective."""
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    for name, fn in numpy_local_steps().items():
        setattr(distributed, name, fn)
    dist.init_process_group("gloo", init_method=f"file://{store_path}", rank=rank, world_size=GLOO_RANKS,
                            timeout=timedelta(seconds=60))
    failures, cases = [], 0
    try:
        for dtype in DTYPES:
            for op in OPERATOR_NAMES:
                for layout in range(3):
                    shards = gloo_shards(dtype, op, layout)
                    mine, whole = torch.from_numpy(shards[rank]), np.concatenate(shards)
                    start = sum(s.size for s in shards[:rank])
                    for exclusive in (False, True):
                        cases += 1
                        expected = part_of(expected_scan(whole, op, exclusive), start, start + mine.numel())
                        # in place in the result dtype (an int32 shard's add is int64: converted first)
                        in_place = torch.from_numpy(shards[rank].astype(result_dtype(dtype, op)))
                        for mode, got in (("new", distributed.scan(mine, op=op, exclusive=exclusive)),
                                          ("in place", distributed.scan(in_place, op=op, exclusive=exclusive,
                                                                        out=in_place))):
                            try:
                                check_scan(got.numpy(), expected, 2 * whole.size + GLOO_RANKS + 1)
                            except AssertionError as exc:
                                failures.append(f"scan {mode} {dtype} {op} exclusive={exclusive} layout={layout}: {exc}")
                    cases += 1
                    try:
                        value, error = distributed.reduce(mine, op=op), None
                    except ValueError as exc:
                        value, error = None, exc
                    if whole.size == 0 and op != "add":
                        if error is None:
                            failures.append(f"reduce {dtype} {op} layout={layout}: no error for empty shards")
                    elif error is not None or value.dim() != 0 or value.numpy().dtype != result_dtype(dtype, op):
                        failures.append(f"reduce {dtype} {op} layout={layout}: {value!r} {error!r}")
                    elif np.dtype(dtype).kind == "i" or op != "add":
                        if not np.array_equal(value.numpy(), numpy_reduce(whole, op), equal_nan=True):
                            failures.append(f"reduce {dtype} {op} layout={layout}: {value} != {numpy_reduce(whole, op)}")
        data = np.random.default_rng(GLOO_SEED).integers(0, 256, 3000, dtype=np.uint8)
        parts = np.split(data, [0, 2000])  # rank 0 empty
        counts = distributed.histogram(torch.from_numpy(parts[rank]), bins=100)
        cases += 1
        if counts.dtype != torch.uint64 or not np.array_equal(counts.numpy(), np.histogram(data, 100, (0, 256))[0]):
            failures.append(f"histogram: {counts}")
        fake_cuda_timing(torch, setattr, GLOO_TIMES[rank])
        cases += 1
        timed = distributed.slowest_rank_ms(lambda: None, repeat=3, device=torch.device("cpu"))
        if timed != (5.0, [2.0, 1.0, 2.0]):
            failures.append(f"slowest_rank_ms: {timed}")
    finally:
        dist.destroy_process_group()
    (results_dir / f"rank{rank}.txt").write_text("\n".join([f"{cases} cases"] + failures))


@pytest.mark.slow  # three processes importing torch: ~30 s on two cores
def test_torch_gloo_three_processes(tmp_path):
    _torch()
    import torch.multiprocessing as mp

    mp.start_processes(gloo_worker, args=(tmp_path / "store", tmp_path), nprocs=GLOO_RANKS, join=True,
                       start_method="spawn")
    reports = [(tmp_path / f"rank{r}.txt").read_text().splitlines() for r in range(GLOO_RANKS)]
    for r, lines in enumerate(reports):
        assert lines[0] == f"{len(DTYPES) * len(OPERATOR_NAMES) * 3 * 3 + 2} cases", (r, lines[0])
        assert lines[1:] == [], f"rank {r}:\n" + "\n".join(lines[1:])
