"""pyscan.histogram and pyscan.bincount on the GPU against np.histogram and np.bincount: every dtype, values on and
next to the edges, out of range, NaN, weights, density, 0 and 1 elements, NumPy / CuPy / torch / pycuda / Numba
input (each skips where its library is absent), large inputs with 100, 4096 and 2^20 bins, skewed data (all in
one bin), non-contiguous views, both strategies forced.  Counts are compared exactly; float weights within the
bound of tests/unit/test_histogram_numpy.py."""

import numpy as np
import pytest
from test_interop_gpu import to_kind, to_numpy

import pyscan
from pyscan.histograms import numpy_histogram as nh
from pyscan.histograms import numpy_plan as plan
from pyscan.runtime import arrays

DTYPES = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                                np.float16, np.float32, np.float64)]
INT_DTYPES = [d for d in DTYPES if d.kind in "iu"]
DEVICE_KINDS = ["cupy", "torch", "pycuda", "numba"]


def _module(x):
    return type(x).__module__.split(".")[0]


def _data(dtype, n, rng):
    if dtype.kind == "f":
        return (rng.standard_normal(n) * 3).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), n, endpoint=True).astype(dtype)


def _with_edges(x, bins, range_):
    """x, plus NumPy's edges for (bins, range) as x's dtype and their neighbours up and down."""
    try:
        edges = np.histogram(np.empty(0, x.dtype), bins, range_ if range_ is not None else (x.min(), x.max()))[1]
    except ValueError:
        return x
    e = edges.astype(x.dtype)
    if x.dtype.kind == "f":
        more = [e, np.nextafter(e, x.dtype.type(np.inf)), np.nextafter(e, x.dtype.type(-np.inf))]
    else:
        info = np.iinfo(x.dtype)
        more = [e, np.array([min(int(v) + 1, info.max) for v in e], x.dtype),
                np.array([max(int(v) - 1, info.min) for v in e], x.dtype)]
    return np.concatenate([x] + more)


def _same(got, want):
    hist, edges = to_numpy(got[0]), to_numpy(got[1])
    assert hist.dtype == want[0].dtype and edges.dtype == want[1].dtype
    np.testing.assert_array_equal(edges, want[1])
    np.testing.assert_array_equal(hist, want[0])


def _same_as_numpy(x, bins, range_):
    """pyscan.histogram(x, bins, range_) gives np.histogram's result, or raises NumPy's error."""
    try:
        want = np.histogram(x, bins, range_)
    except ValueError as exc:
        with pytest.raises(ValueError, match=str(exc)[:20]):
            pyscan.histogram(x, bins, range_)
        return
    _same(pyscan.histogram(x, bins, range_), want)


# ---- NumPy input: every dtype, bins, range -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("bins", [1, 7, 100, 4096])
@pytest.mark.parametrize("range_", [None, (-3.0, 3.0), (0.1, 2.7), (np.float32(-1.3), np.float32(2))],
                         ids=["none", "float", "fraction", "float32"])
def test_numpy_input_equals_numpy(dtype, bins, range_, rng):
    x = _with_edges(_data(dtype, 20_011, rng), bins, range_)
    _same_as_numpy(x, bins, range_)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("bins, range_", [(100, (0, 100)), (128, (-64, 64)), (1024, (0, 1)), (2**20, (0, 4096)),
                                          (40, (0, 10))], ids=str)
def test_power_of_two_steps(dtype, bins, range_, rng):
    """Equal bins a power of two wide: where the host finds the guess exact (numpy_plan.exact_guess), the kernel
    takes every guess without the correction, values on the edges and next to them included."""
    x = _with_edges(_data(dtype, 20_011, rng), bins, range_)
    if dtype.kind in "iu":
        x = np.concatenate([x, np.arange(max(range_[0], np.iinfo(dtype).min), min(range_[1], np.iinfo(dtype).max),
                                         dtype=dtype)])
    _same_as_numpy(x, bins, range_)


def test_power_of_two_steps_are_exact_guesses():
    """The cases above do reach the exact guess (and a float64 guess in float does not)."""
    for dtype, bins, range_ in ((np.int32, 100, (0, 100)), (np.float32, 1024, (0, 1)), (np.uint8, 128, (-64, 64))):
        assert nh._uniform_rule(np.dtype(dtype), bins, *range_, explicit_range=True).guess_margin == plan.EXACT_GUESS
    assert nh._uniform_rule(np.dtype(np.float64), 1024, 0, 1, explicit_range=True).guess_margin != plan.EXACT_GUESS


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_explicit_edges(dtype, rng):
    x = _data(dtype, 30_001, rng)
    for edges in (np.array([-5.0, -1.5, 0.0, 0.25, 3.0, 100.0]), np.array([-3, 0, 0, 1, 5, 5]),
                  np.array([-np.inf, 0.0, np.inf]), np.sort(rng.standard_normal(3000))):
        data = np.concatenate([x, edges[np.isfinite(edges)].astype(dtype)])
        _same(pyscan.histogram(data, edges), np.histogram(data, edges))


@pytest.mark.parametrize("dtype", [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)], ids=str)
def test_nan_and_inf(dtype, rng):
    x = _data(dtype, 10_000, rng)
    x[::97] = np.nan
    x[::101] = np.inf
    _same(pyscan.histogram(x, 50, (-2, 2)), np.histogram(x, 50, (-2, 2)))
    _same(pyscan.histogram(x, np.array([-np.inf, 0, np.inf])), np.histogram(x, np.array([-np.inf, 0, np.inf])))
    with pytest.raises(ValueError, match="autodetected range of \\[nan, nan\\] is not finite"):
        pyscan.histogram(x)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_zero_and_one_element(dtype):
    for x in (np.zeros(0, dtype), np.full(1, 3, dtype), np.full(1000, 3, dtype)):
        for range_ in (None, (0, 10)):
            _same(pyscan.histogram(x, 10, range_), np.histogram(x, 10, range_))


def test_n_dimensional_and_lists(rng):
    x = rng.standard_normal((64, 33, 5)).astype(np.float32)
    _same(pyscan.histogram(x, 20), np.histogram(x, 20))
    _same(pyscan.histogram(x[:, ::2, 1:], 20), np.histogram(x[:, ::2, 1:], 20))  # a non-contiguous NumPy view
    _same(pyscan.histogram([1, 2, 2, 3, 7], bins=[0, 2, 5, 7]), np.histogram([1, 2, 2, 3, 7], bins=[0, 2, 5, 7]))


# ---- weights and density ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["numpy", "cupy", "torch"])
@pytest.mark.parametrize("weight_dtype", [np.float16, np.float32, np.float64, np.int32], ids=lambda d: np.dtype(d).name)
def test_weights(kind, weight_dtype, rng):
    x = _data(np.dtype(np.float32), 200_003, rng)
    weights = ((rng.standard_normal(x.size) * 10) if np.dtype(weight_dtype).kind == "f"
               else rng.integers(0, 100, x.size)).astype(weight_dtype)
    for bins, range_ in ((100, None), (4096, (-2, 2)), (2**14, (-5, 5))):
        got = pyscan.histogram(to_kind(x, kind), bins, range_, weights=to_kind(weights, kind))
        assert _module(got[0]) == kind
        want = np.histogram(x, bins, range_, weights=weights)
        hist = to_numpy(got[0])
        assert hist.dtype == want[0].dtype
        if np.dtype(weight_dtype).kind == "f":
            eps = np.finfo(weight_dtype).eps
            bound = (x.size / 65536 + 2) * eps * np.histogram(x, bins, range_, weights=np.abs(weights.astype(float)))[0]
            assert np.all(np.abs(hist.astype(float) - want[0].astype(float)) <= bound + 1e-300)
        else:
            np.testing.assert_array_equal(hist, want[0])


@pytest.mark.parametrize("kind", ["numpy", "cupy"])
def test_density(kind, rng):
    x = _data(np.dtype(np.float64), 100_000, rng)
    for bins in (30, np.array([-10.0, -1.0, 0.0, 0.5, 3.0, 40.0])):
        got = pyscan.histogram(to_kind(x, kind), bins if kind == "numpy" or np.ndim(bins) == 0 else
                               to_kind(bins, kind), density=True)
        np.testing.assert_array_equal(to_numpy(got[0]), np.histogram(x, bins, density=True)[0])
        weights = rng.random(x.size)
        got = pyscan.histogram(to_kind(x, kind), bins, weights=to_kind(weights, kind), density=True)
        np.testing.assert_allclose(to_numpy(got[0]), np.histogram(x, bins, weights=weights, density=True)[0],
                                   rtol=1e-9)


# ---- device kinds ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", DEVICE_KINDS)
@pytest.mark.parametrize("dtype", [np.dtype(np.int32), np.dtype(np.float32), np.dtype(np.float16),
                                   np.dtype(np.uint8), np.dtype(np.int64)], ids=str)
def test_device_kinds(kind, dtype, rng):
    host = _data(dtype, 100_001, rng)
    x = to_kind(host, kind)
    for bins, range_ in ((10, None), (256, (0, 100)), (np.array([-7.0, 0.0, 1.0, 50.0]), None)):
        got = pyscan.histogram(x, bins, range_)
        assert _module(got[0]) == kind and _module(got[1]) == kind
        _same(got, np.histogram(host, bins, range_))
    np.testing.assert_array_equal(to_numpy(x), host)  # the input is untouched


@pytest.mark.parametrize("kind", DEVICE_KINDS)
@pytest.mark.parametrize("dtype", [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.uint8), np.dtype(np.int8),
                                   np.dtype(np.int32)], ids=str)
def test_the_ready_call_equals_the_first(kind, dtype, rng):
    """An int bins and a range: the first call takes the general path and keeps what it made; the next ones take
    the ready path (one launch that copies the edges -- an odd and an even number of them, of 2-, 4- and 8-byte
    types -- counts, and writes the histogram from its kept counters in its last block; 1-byte data through the
    byte values' counts, folded by that block), on every kind, fresh results each time, and on an empty array (the
    first ready call of a kind may be its second: a kind is looked up once seen)."""
    host = _data(dtype, 300_007, rng)
    x = to_kind(host, kind)
    for bins, range_ in ((1, (-5, 5)), (2, (-5, 5)), (7, (-100, 100)), (100, (0, 256)), (1000, (-8, 8))):
        want = np.histogram(host, bins, range_)
        results = [pyscan.histogram(x, bins, range_) for _ in range(3)]
        assert nh._ready_key(dtype, bins, range_, 0) in nh._ready
        for got in results:
            assert _module(got[0]) == kind and _module(got[1]) == kind
            _same(got, want)
        assert len({arrays.kind_of(r[0]).pointer(r[0]) for r in results}) == 3  # three results
        if kind in ("cupy", "torch"):
            _same(pyscan.histogram(x[:0], bins, range_), np.histogram(host[:0], bins, range_))


@pytest.mark.parametrize("kind", DEVICE_KINDS)
@pytest.mark.parametrize("dtype, bins", [  # float16's 11 bits: 5000 edges over the data's range repeat (NumPy refuses)
    (np.dtype(np.float16), 100), *((np.dtype(d), b) for d in (np.float32, np.int32, np.uint8) for b in (100, 5000))],
    ids=str)
def test_a_range_from_the_data_at_each_use(kind, dtype, bins, rng):
    """range=None: a rule's first use uploads its edges into the array it returns, which the count reads (its kept
    copy is made by the next use of the same range, and copied from after that); on 1-D arrays of every kind the
    calls after the first take the path made whole (FreshRange; not for float16), with NumPy's errors for NaN and
    inf and its widened range for constant data; new data at every call, the same data again, with
    weights and density (their own arrays: the weights' sums, the widths), and on a stream that is not the default
    one (the upload then waits for its pageable source)."""
    torch = pytest.importorskip("torch") if kind == "torch" else None
    hosts = [_data(dtype, 70_001, rng) for _ in range(3)]
    hosts = [h if dtype.kind != "f" else (h * (k + 1) + k).astype(dtype) for k, h in enumerate(hosts)]
    xs = [to_kind(h, kind) for h in hosts]
    for host, x in [*zip(hosts, xs), (hosts[0], xs[0]), (hosts[0], xs[0]), (hosts[1], xs[1])]:
        got = pyscan.histogram(x, bins)
        assert _module(got[0]) == kind and _module(got[1]) == kind
        _same(got, np.histogram(host, bins))
    assert ((dtype, bins, 0) in nh._fresh) == (dtype != np.float16)  # the path made whole, on every kind
    weights = rng.random(hosts[2].size).astype(np.float32)
    for _ in range(3):
        hist, edges = pyscan.histogram(xs[2], bins, weights=to_kind(weights, kind))
        want = np.histogram(hosts[2], bins, weights=weights)
        np.testing.assert_array_equal(to_numpy(edges), want[1])
        np.testing.assert_allclose(to_numpy(hist), want[0], rtol=1e-5)
        hist, edges = pyscan.histogram(xs[2], bins, density=True)
        want = np.histogram(hosts[2], bins, density=True)
        np.testing.assert_array_equal(to_numpy(edges), want[1])
        np.testing.assert_allclose(to_numpy(hist), want[0], rtol=1e-12)
    same = to_kind(np.full(1001, hosts[0][3]), kind)  # NumPy's widened range and its errors on that path too
    _same(pyscan.histogram(same, bins), np.histogram(to_numpy(same), bins))
    if dtype.kind == "f":
        for bad in (np.nan, np.inf):
            host = hosts[1].copy()
            host[-5] = bad
            with pytest.raises(ValueError, match="autodetected range"):
                pyscan.histogram(to_kind(host, kind), bins)
    if torch is not None:
        fresh = _data(dtype, 70_001, rng)
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            x = torch.from_numpy(fresh).cuda()
            results = [pyscan.histogram(x, bins) for _ in range(3)]
        stream.synchronize()
        for got in results:
            _same(got, np.histogram(fresh, bins))


@pytest.mark.parametrize("dtype", [np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.float32), np.dtype(np.int64)],
                         ids=str)
def test_ready_calls_across_the_one_launch_limit(dtype, rng, monkeypatch):
    """The ready call on either side of ONE_LAUNCH_MOST_BINS (one launch, or histogram_start and the count), many
    blocks (the last block's ticket), interleaved on one stream so that each leaves its kept counters zero for the
    next (the buffer grows with the bins), and on a second stream with a kept buffer of its own."""
    cupy = pytest.importorskip("cupy")
    monkeypatch.setattr(nh, "_ready", {})  # this test's ready calls only (the newest READY_KEPT are kept)
    host = _data(dtype, 3_000_017, rng)
    x = cupy.asarray(host)
    cupy.cuda.Device().synchronize()  # x is whole before the second stream (non-blocking) reads it
    # CuPy's arrays as a process's first call sees them: that call keeps its ready call too
    monkeypatch.delitem(arrays.READY, type(x), raising=False)
    monkeypatch.delitem(arrays._kinds_by_type, type(x), raising=False)
    cases = [(100, (-200, 200)), (nh.ONE_LAUNCH_MOST_BINS, (-1000, 1000)), (nh.ONE_LAUNCH_MOST_BINS + 1, (-1000, 1000)),
             (7, (-3, 100))]
    want = {bins: np.histogram(host, bins, range_) for bins, range_ in cases}
    for bins, range_ in cases:
        pyscan.histogram(x, bins, range_)  # the general path, which keeps the ready call
    ready = {bins: nh._ready[nh._ready_key(dtype, bins, range_, 0)] for bins, range_ in cases}
    assert ready[nh.ONE_LAUNCH_MOST_BINS + 1].one_launch is None
    assert ready[nh.ONE_LAUNCH_MOST_BINS].one_launch is not None and ready[7].one_launch is not None
    side = cupy.cuda.Stream(non_blocking=True)
    for _ in range(3):
        for bins, range_ in cases + cases[::-1]:
            _same(pyscan.histogram(x, bins, range_), want[bins])
            with side:
                got = pyscan.histogram(x, bins, range_)
            side.synchronize()
            _same(got, want[bins])


@pytest.mark.parametrize("kind", ["cupy", "torch"])
def test_device_edges_come_back_as_given(kind, rng):
    host = _data(np.dtype(np.float32), 10_000, rng)
    edges = to_kind(np.array([-3.0, -1.0, 0.0, 2.0, 3.0]), kind)
    hist, bin_edges = pyscan.histogram(to_kind(host, kind), edges)
    assert bin_edges is edges
    np.testing.assert_array_equal(to_numpy(hist), np.histogram(host, to_numpy(edges))[0])


@pytest.mark.parametrize("kind", ["cupy", "torch"])
def test_non_contiguous_device_views(kind, rng):
    host = _data(np.dtype(np.float32), (300, 201), rng)
    x = to_kind(host, kind)
    for view, host_view in ((x[::2], host[::2]), (x[:, 1::3], host[:, 1::3]), (x.T, host.T)):
        _same(pyscan.histogram(view, 64), np.histogram(host_view, 64))
        _same(pyscan.histogram(view, 64, (-1, 1)), np.histogram(host_view, 64, (-1, 1)))


def test_torch_stream(rng):
    torch = pytest.importorskip("torch")
    host = _data(np.dtype(np.float32), 1 << 20, rng)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        x = torch.from_numpy(host).cuda()
        hist, edges = pyscan.histogram(x, 100, (-3, 3))
        counts = pyscan.bincount((x.abs() * 10).to(torch.int32))
    stream.synchronize()
    np.testing.assert_array_equal(hist.cpu().numpy(), np.histogram(host, 100, (-3, 3))[0])
    np.testing.assert_array_equal(counts.cpu().numpy(), np.bincount((np.abs(host) * 10).astype(np.int32)))


# ---- large inputs, many bins, skew -------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["numpy", "cupy"])
@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint8)], ids=str)
@pytest.mark.parametrize("bins", [100, 4096, 2**20])
@pytest.mark.parametrize("skew", [0.0, 0.9, 1.0])
def test_large(kind, dtype, bins, skew, rng):
    n = 1 << 24
    host = (rng.random(n) * 1000).astype(dtype) if dtype.kind == "f" else rng.integers(0, 255, n).astype(dtype)
    hot = rng.random(n) < skew
    host[hot] = 7
    x = to_kind(host, kind)
    range_ = (0, 1000) if dtype.kind == "f" else (0, 256)
    _same(pyscan.histogram(x, bins, range_), np.histogram(host, bins, range_))
    if bins == 100:
        _same(pyscan.histogram(x, bins), np.histogram(host, bins))


@pytest.mark.parametrize("strategy", [plan.SHARED, plan.GLOBAL])
@pytest.mark.parametrize("aggregate", sorted(plan.AGGREGATIONS))
@pytest.mark.parametrize("bins", [1, 100, 4096])
@pytest.mark.parametrize("weighted", [False, True])
def test_strategies_forced(strategy, aggregate, bins, weighted, rng):
    host = (rng.random(1_000_003) * 10).astype(np.float32)
    host[::3] = 5.0
    host[1::7] = 11.0  # outside the range: inside runs of 5.0
    weights = rng.random(host.size) if weighted else None
    rule = plan.uniform_rule(host.dtype, bins, 0, 10, explicit_range=True)
    call = arrays.begin(host, what="x", dtypes=plan.VALUE_DTYPES, ndim=None)
    with call:
        out = call.empty((bins,), np.float64 if weighted else np.int64)
        device_weights = None if weights is None else call.to_device(weights)
        nh.count_into(call.x, device_weights, rule, out, call=call, strategy=strategy, aggregate=aggregate)
        counts = call.to_host(out)
    want = np.histogram(host, bins, (0, 10), weights=weights)[0]
    if weighted:  # double sums of float64 weights in another order: a few ulps of the sum of the bin
        np.testing.assert_allclose(counts, want, rtol=host.size * np.finfo(np.float64).eps)
    else:
        np.testing.assert_array_equal(counts, want)


@pytest.mark.parametrize("dtype", [np.dtype(np.uint8), np.dtype(np.int8)], ids=str)
@pytest.mark.parametrize("bins, range_", [(1, None), (7, (-3, 200)), (4096, (0, 256)), (2**20, (-128, 128)),
                                          (100, None)])
def test_byte_values_folded(dtype, bins, range_, rng):
    """1-byte data: the byte counts of fast.cu folded into NumPy's bins, for unaligned views too; each call twice
    (with a range, device data's second call and its view's take the ready path: nh._ready)."""
    host = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, 1_000_003, endpoint=True).astype(dtype)
    host[::5] = 3
    for kind in ("numpy", "cupy", "torch"):
        x = to_kind(host, kind)
        for data, view in ((x, host), (x[3:], host[3:]), (x[:0], host[:0])):
            want, want_edges = np.histogram(view, bins, range_)
            for _ in range(2):
                got, edges = pyscan.histogram(data, bins, range_)
                assert _module(got) == _module(edges) == kind
                np.testing.assert_array_equal(to_numpy(got), want)
                np.testing.assert_array_equal(to_numpy(edges), want_edges)
    if range_ is not None:
        assert nh._ready_key(dtype, bins, range_, 0) in nh._ready


# ---- bincount -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["numpy", "cupy", "torch"])
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_bincount(kind, dtype, rng):
    high = min(np.iinfo(dtype).max, 999)
    host = rng.integers(0, high, 100_003, endpoint=True).astype(dtype)
    x = to_kind(host, kind)
    got = pyscan.bincount(x)
    assert _module(got) == kind
    np.testing.assert_array_equal(to_numpy(got), np.bincount(host))
    np.testing.assert_array_equal(to_numpy(pyscan.bincount(x, minlength=5000)), np.bincount(host, minlength=5000))
    weights = rng.standard_normal(host.size)
    np.testing.assert_allclose(to_numpy(pyscan.bincount(x, weights=to_kind(weights, kind))),
                               np.bincount(host, weights), rtol=1e-9, atol=1e-9)
    if dtype.kind == "i":
        bad = host.copy()
        bad[777] = -1
        with pytest.raises(ValueError, match="negative"):
            pyscan.bincount(to_kind(bad, kind))


@pytest.mark.parametrize("kind", ["numpy", "cupy", "torch"])
@pytest.mark.parametrize("dtype", [d for d in INT_DTYPES if d.itemsize > 1], ids=str)
def test_bincount_one_pass_and_its_second_count(kind, dtype, rng, monkeypatch):
    """The one pass (the counts below a guess and the extremes, in one read) against np.bincount where its guess
    holds, where the greatest value is its last bin, where it misses (counted again), at its most bins and past them,
    and on the global histogram for a minlength past them (the greatest value below it, its last bin, just past it),
    at lengths around a warp, a vector, a block and beyond the grid; negative values and the dtype's ends found by
    it, with and without such a minlength."""
    monkeypatch.setattr(nh, "_expected_lengths", {})
    info = np.iinfo(dtype)
    steps = [(100, 0), (256, 0), (1000, 0), (1000, 0), (100, 4096), (9000, 0), (9000, 0), (12288, 0), (20000, 0),
             (20000, 0), (5, 0), (5, 0),  # 9000 and 12,288 values: the one pass's most bins; 20,000: past them
             (100, 20000), (100, 20000), (20000, 20000), (20001, 20000), (5, 12289), (12289, 12289)]  # the global pass
    for n in (1, 2, 33, 1025, 100_003, 1 << 22):
        for top, minlength in steps:
            host = rng.integers(0, top, n).astype(dtype)
            host[-1] = top - 1
            got = pyscan.bincount(to_kind(host, kind), minlength=minlength)
            np.testing.assert_array_equal(to_numpy(got), np.bincount(host, minlength=minlength))
            assert list(nh._expected_lengths.values()) == [max(top, minlength)]  # the next pass's guess
    ends = np.array([info.max, 0, 3], dtype)
    if info.max < 2**17:  # a result of info.max + 1 counts
        np.testing.assert_array_equal(to_numpy(pyscan.bincount(to_kind(ends, kind))), np.bincount(ends))
    if dtype.kind == "i":
        for bad_value in (-1, info.min):
            bad = rng.integers(0, 100, 100_003).astype(dtype)
            bad[rng.integers(bad.size)] = bad_value
            for minlength in (0, 20000):
                with pytest.raises(ValueError, match=f"found {bad_value}"):
                    pyscan.bincount(to_kind(bad, kind), minlength=minlength)


def test_bincount_large_and_empty(rng):
    host = rng.integers(0, 1000, 1 << 24).astype(np.int64)
    np.testing.assert_array_equal(pyscan.bincount(host), np.bincount(host))
    skewed = np.full(1 << 24, 2**20 - 1, np.int32)
    skewed[::11] = rng.integers(0, 2**20, skewed[::11].size)
    np.testing.assert_array_equal(pyscan.bincount(skewed), np.bincount(skewed))
    for minlength in (2**20, 2**21):  # the global pass, ten values in eleven on one counter: its last, or not
        np.testing.assert_array_equal(pyscan.bincount(skewed, minlength=minlength),
                                      np.bincount(skewed, minlength=minlength))
    np.testing.assert_array_equal(pyscan.bincount(np.zeros(0, np.int32), minlength=4), np.zeros(4, np.int64))
