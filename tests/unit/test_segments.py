"""Segments (offsets=) without a GPU: the NumPy models of the segments build of kernels/scan/decoupled_lookback.cu
against NumPy (per-segment np.cumsum / ufunc.accumulate, np.add.reduceat adjusted for empty
segments) at the lengths that matter (0, 1, 31, 32, 33, tile edges, one huge segment, 10^6 tiny ones); the kernels'
offset searches and walks in bounds for any offsets; the offsets' checks and their messages; the kernels' argument
types; and the public dispatch end to end on test_interop's fake device."""

import ctypes
import math

import numpy as np
import pytest
from segment_checks import offsets_of, values
from test_interop import FakeDeviceArray, fake_gpu  # noqa: F401  (the fake device's fixture)

import pyscan
from pyscan import segments
from pyscan.reductions import segments as rseg
from pyscan.runtime import arrays, driver
from pyscan.runtime.loader import build_source, signature
from pyscan.scans import segments as sseg
from pyscan.scans.reference import reference as scan_reference
from pyscan.types import (
    BFLOAT16,
    Types,
    as_dtype,
    bfloat16_to_float32,
    float32_to_bfloat16,
    identity,
    load,
    operator,
    result_dtype,
    store,
    ufunc,
)

RNG = np.random.default_rng(20240611)
OPS = ["add", "mul", "max", "min", "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or"]
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
          "float64", "bfloat16"]


def scan_reference_segments(x, o, op, exclusive=False, dtype=None):
    value = result_dtype(x.dtype, op, dtype)
    parts = [scan_reference(x[a:b], op, exclusive, dtype) for a, b in zip(o[:-1], o[1:]) if b > a]
    return np.concatenate(parts).astype(value) if parts else np.empty(0, value)


def reduce_reference_segments(x, o, op, dtype=None):
    value = result_dtype(x.dtype, op, dtype)
    if value == BFLOAT16:  # combined in float32, rounded once
        return float32_to_bfloat16(segments.reference_reduce(bfloat16_to_float32(x), o, op, np.float32))
    if x.dtype == BFLOAT16:
        x = bfloat16_to_float32(x)
    return segments.reference_reduce(x, o, op, value)


def equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype == BFLOAT16 or a.dtype.kind == "V":
        a, b = a.view(np.uint16), b.view(np.uint16)
    np.testing.assert_array_equal(a, b)


# ---- the models against NumPy ----------------------------------------------------------------------------------

LENGTH_MIXES = {
    "short": [0, 1, 31, 32, 33, 0, 0, 1, 2, 3, 5, 7, 11, 13, 0],
    "tile edges": [4095, 1, 4096, 0, 4097, 2047, 2049, 2048],
    "one huge": [3 * 4096 + 5],
    "huge between tiny": [1, 0, 2, 20000, 0, 1, 9000, 3],
    "empties at the ends": [0, 0, 5, 0, 0, 7, 0, 0],
    "primes": [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 4099],
}


@pytest.mark.parametrize("mix", list(LENGTH_MIXES))
@pytest.mark.parametrize("exclusive", [False, True])
def test_scan_model_matches_numpy_per_segment(mix, exclusive):
    o = offsets_of(LENGTH_MIXES[mix])
    x = values("int32", int(o[-1]), RNG)
    for op in ("add", "max", "bitwise_xor"):
        equal(sseg.segmented_scan_model(x, o, op=op, exclusive=exclusive),
              scan_reference_segments(x, o, op, exclusive))


@pytest.mark.parametrize("mix", list(LENGTH_MIXES))
def test_reduce_model_matches_reduceat_with_identity_for_empty_segments(mix):
    o = offsets_of(LENGTH_MIXES[mix])
    x = values("int64", int(o[-1]), RNG)
    for op in ("add", "min", "bitwise_or"):
        equal(rseg.segmented_reduce_model(x, o, op=op), reduce_reference_segments(x, o, op))


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_and_op(dtype):
    o = offsets_of([0, 1, 31, 32, 33, 0, 4100, 3, 0])
    x = values(dtype, int(o[-1]), RNG)
    for op in OPS:
        try:
            value = result_dtype(as_dtype(dtype), op)
        except TypeError:  # bitwise operators of floats
            continue
        if op == "mul" and value.kind == "f":
            continue  # products of thousands of small integers overflow to inf in either order: see the int ones
        equal(rseg.segmented_reduce_model(x, o, op=op), reduce_reference_segments(x, o, op))
        if as_dtype(dtype) == BFLOAT16 and op.startswith("logical"):
            continue  # (pyscan.scans.reference has no bfloat16 logical scan; the reduction above covers it)
        for exclusive in (False, True):
            equal(sseg.segmented_scan_model(x, o, op=op, exclusive=exclusive),
                  scan_reference_segments(x, o, op, exclusive))


def test_accumulator_dtype_and_dtype_argument():
    o = offsets_of([3, 0, 300])
    x = np.full(303, 100, np.int8)
    got = rseg.segmented_reduce_model(x, o)
    assert got.dtype == np.int64 and list(got) == [300, 0, 30000]
    wrapped = rseg.segmented_reduce_model(x, o, dtype=np.int8)
    assert wrapped.dtype == np.int8 and list(wrapped) == [np.int8(44), 0, np.int8(48)]


def test_empty_segments_give_the_identity_where_reduceat_gives_an_element():
    x = np.array([5, 6, 7], np.int32)
    o = np.array([0, 1, 1, 3])
    assert list(rseg.segmented_reduce_model(x, o, op="max")) == [5, np.iinfo(np.int32).min, 7]
    assert list(np.maximum.reduceat(x, o[:-1])) == [5, 6, 7]  # NumPy: x[o[s]] for the empty segment 1


def test_float_sums_within_rounding():
    o = offsets_of([1, 5000, 0, 12000, 7])
    x = RNG.standard_normal(int(o[-1])).astype(np.float32)
    got = rseg.segmented_reduce_model(x, o)
    exact = np.array([math.fsum(x[a:b].astype(np.float64)) for a, b in zip(o[:-1], o[1:])])
    bound = np.array([np.abs(x[a:b]).sum(dtype=np.float64) for a, b in zip(o[:-1], o[1:])]) * 64 * 2**-23
    assert np.all(np.abs(got - exact) <= bound + 1e-30)


def test_custom_operator_keeps_the_order():
    # a (.) b = the composition of affine maps packed in an int64 (low 32 bits: slope 1 offsets; here simply
    # "b when b is not zero else a": associative, not commutative) -- the scan keeps earlier values on the left
    op = operator("b != 0 ? b : a", 0)
    o = offsets_of([7, 0, 4500, 1, 33])
    x = RNG.integers(0, 3, int(o[-1])).astype(np.int32) * RNG.integers(0, 2, int(o[-1])).astype(np.int32)
    got = sseg.segmented_scan_model(x, o, op=op)
    want = []
    for a, b in zip(o[:-1], o[1:]):
        last = 0
        for v in x[a:b]:
            last = v if v != 0 else last
            want.append(last)
    np.testing.assert_array_equal(got, np.array(want, np.int32))
    red = rseg.segmented_reduce_model(x, o, op=op)
    assert red[1] == 0 and red[3] == (x[o[3]] if x[o[3]] else 0)


def test_a_million_tiny_segments():
    lengths = RNG.integers(0, 3, 10**6)
    o = offsets_of(lengths)
    x = values("int32", int(o[-1]), RNG)
    equal(rseg.segmented_reduce_model(x, o), reduce_reference_segments(x, o, "add"))
    got = sseg.segmented_scan_model(x, o)
    c = np.cumsum(x, dtype=np.int64)
    starts = np.repeat(o[:-1], lengths)
    before = np.where(starts > 0, c[np.maximum(starts - 1, 0)], 0)
    np.testing.assert_array_equal(got, c - before)


def test_power_law_mix():
    lengths = np.minimum((RNG.pareto(1.2, 3000) * 4).astype(np.int64), 60000)
    o = offsets_of(lengths)
    x = values("float64", int(o[-1]), RNG)
    equal(rseg.segmented_reduce_model(x, o), reduce_reference_segments(x, o, "add"))


# ---- the kernels' index arithmetic in bounds -------------------------------------------------------------------

@pytest.mark.parametrize("count", [1, 2, 31, 32, 33, 63, 64, 65, 1000, 1057, 40000])
def test_warp_lower_bound_is_searchsorted(count):
    o = np.sort(RNG.integers(0, 3 * count, count))
    for v in list(RNG.integers(-1, 3 * count + 1, 40)) + [int(o[0]), int(o[-1])]:
        for guess in (0, int(v) // 3, count, int(RNG.integers(0, count + 1))):
            got, read = segments.warp_lower_bound(o, count, int(v), guess)
            assert got == np.searchsorted(o, v, side="left")
            assert all(0 <= r < count for r in read)


def test_warp_lower_bound_stays_in_bounds_on_garbage():
    for count in (1, 33, 500, 5000):
        o = RNG.integers(-10**9, 10**9, count)
        for guess in (0, count // 2, count):
            got, read = segments.warp_lower_bound(o, count, 0, guess)
            assert 0 <= got <= count and all(0 <= r < count for r in read)


def _parts(n, part):
    return [(lo, min(n, lo + part)) for lo in range(0, n, part)] + [(n, n)]  # (n, n): a part past the end


@pytest.mark.parametrize("part", [1024, 512, 32])  # a warp's part: 32 x ITEMS elements (ITEMS 32, 16 or SMALL's)
def test_heads_and_writes_cover_every_segment_once(part):
    lengths = [0, 0, 1, 1500, 0, 3, 1024, 1, 0, 2048, 0, 0] + [1] * 300 + [0] * 200 + [5] + [32] * 40
    o = offsets_of(lengths)
    n, S = int(o[-1]), len(lengths)
    written = []
    for lo, hi in _parts(n, part):
        heads, first, read, ends = segments.part_heads(o, S, n, lo, hi)
        assert heads == {int(v) - lo for v in o[:-1] if lo <= v < hi}
        assert ends == (lo < hi and any(lo < int(v) <= hi for v in o[1:]))  # a segment ends in the part
        writes, read2 = segments.part_writes(o, S, lo, hi, first)
        assert all(0 <= r <= S for r in read + read2)
        assert ends or lo == 0 or not writes  # the reduction skips a part without an end: it had nothing to write
        for s, position in writes:
            empty = o[s + 1] == o[s]
            assert (position is None) == empty
            if not empty:
                assert position == o[s + 1] - 1 - lo
        written += [s for s, _ in writes]
    assert sorted(written) == list(range(S))


def test_a_part_whose_only_end_is_the_arrays_end():
    """The last part of a long last segment: its one end is o[S] = n, which the heads' walk reads as `past` (with an
    empty segment after it, as o[S - 1] = n); the reduction must not skip it."""
    for lengths in ([5, 4091], [5, 4091, 0], [4096], [4096, 0, 0]):
        o = offsets_of(lengths)
        n, S = int(o[-1]), len(lengths)
        for lo in (n - 1024, n - 32):
            _, first, _, ends = segments.part_heads(o, S, n, lo, n)
            writes, _ = segments.part_writes(o, S, lo, n, first)
            assert ends, (lengths, lo)
            assert writes, (lengths, lo)


def test_heads_and_writes_stay_in_bounds_on_bad_offsets():
    part = 512
    for trial in range(20):
        S = int(RNG.integers(1, 400))
        n = int(RNG.integers(1, 5000))
        o = RNG.integers(-50, n + 50, S + 1)
        if trial % 3 == 0:
            o = np.sort(o)[::-1].copy()
        for lo, hi in _parts(n, part):
            heads, first, read, _ = segments.part_heads(o, S, n, lo, hi)
            assert all(0 <= h < hi - lo for h in heads) and all(0 <= r <= S for r in read)
            writes, read2 = segments.part_writes(o, S, lo, hi, first)
            assert all(0 <= r <= S for r in read2)
            assert all(0 <= s < S and (p is None or 0 <= p < hi - lo) for s, p in writes)


# ---- the offsets' checks ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("offsets, n, error, words", [
    ([1, 3], 3, ValueError, r"offsets\[0\] must be 0, got 1"),
    ([0, 2], 3, ValueError, r"offsets\[-1\] must be len\(x\) = 3, got 2"),
    ([0, 2, 1, 3], 3, ValueError, r"non-decreasing: offsets\[1\] = 2 > offsets\[2\] = 1"),
    ([0, 4], 3, ValueError, r"offsets\[-1\] must be len\(x\) = 3"),
    (np.zeros(0, np.int64), 0, ValueError, "at least one entry"),
    ([[0, 3]], 3, ValueError, "1-D"),
    ([0.0, 3.0], 3, TypeError, "integer"),
    ([False, True], 1, TypeError, "integer"),
])
def test_bad_host_offsets(offsets, n, error, words):
    with pytest.raises(error, match=words):
        segments.check_host_offsets(np.asarray(offsets), n)


def test_the_device_checks_rule_is_the_hosts():
    for o, n in [([0, 3], 3), ([0, 0, 3], 3), ([1, 3], 3), ([0, 2, 1, 3], 3), ([0, -1, 3], 3), ([0, 5, 3], 3)]:
        try:
            segments.check_host_offsets(np.array(o), n)
            host_bad = False
        except ValueError:
            host_bad = True
        assert segments.offsets_model_check(np.array(o), n) == host_bad


def test_kernel_offsets_narrow_when_they_fit():
    assert segments.kernel_offsets(np.array([0, 5]), 5).dtype == np.int32
    assert segments.kernel_offsets(np.array([0, 2**31]), 2**31).dtype == np.int64


@pytest.mark.parametrize("relpath, function, off", [
    (sseg.KERNEL, sseg.FUNCTION, "int"), (sseg.KERNEL, sseg.FUNCTION, "long long"),
    (rseg.KERNEL, rseg.FUNCTION, "int"), (segments.CHECK_KERNEL, "segment_offsets_check", "long long")])
def test_kernel_argument_types(relpath, function, off):
    """What pyscan.scans.decoupled_lookback.launch passes for segments: (out, x, n, offsets, S, [exclusive,] counter,
    status, tiles, epoch)."""
    source = build_source(relpath, SEGMENTS=1, OFFSET_TYPE=off)
    want = {sseg.FUNCTION: "PPqPqiPPqI", rseg.FUNCTION: "PPqPqPPqI", "segment_offsets_check": "PqqP"}[function]
    assert signature(source, function) == want


# ---- the public dispatch on the fake device --------------------------------------------------------------------

def _host(view, dtype=None):
    dtype = np.dtype(dtype or view.dtype)
    count = int(np.prod(view.shape)) if view.shape else 1
    buffer = (ctypes.c_char * max(count * dtype.itemsize, 1)).from_address(int(view.gpudata))
    return np.frombuffer(buffer, dtype=dtype, count=count)


@pytest.fixture
def fake_segments(fake_gpu, monkeypatch):  # noqa: F811
    """The fake device, with the segmented kernels replaced by their models on the same host memory, and the
    device check by its host rule."""
    launched = []

    def launch_scan(call, x, out, offsets, *, op, exclusive, value):
        launched.append(("scan", offsets.dtype, offsets.segments))
        o = _host(offsets.view, offsets.dtype)[:offsets.segments + 1]
        _host(out, value)[...] = sseg.segmented_scan_model(_host(x), o, op=op, exclusive=exclusive, dtype=value)
        return 1

    def launch_reduce(call, x, out, offsets, *, op, value):
        launched.append(("reduce", offsets.dtype, offsets.segments))
        o = _host(offsets.view, offsets.dtype)[:offsets.segments + 1]
        _host(out, value)[...] = rseg.segmented_reduce_model(_host(x), o, op=op, dtype=value)
        return 1

    def check(o, call, what):
        launched.append(("check", o.dtype, o.segments))
        if segments.offsets_model_check(_host(o.view, o.dtype)[:o.segments + 1], call.size):
            raise segments._error(what, "the device check found offsets that break the rules")

    def to_device(self, host):  # the upload of host offsets: a fake array's memory
        array = FakeDeviceArray(np.ascontiguousarray(host).copy())
        self_keep.append(array)
        from pyscan.runtime.arrays import DeviceView

        return DeviceView(array.host.ctypes.data, array.host.shape, array.host.dtype, array)

    def combine_initial(call, y, total, start, op, value, **_):  # y = start op y, as combine_initial.cu
        types = Types.of(value, op)
        _host(y, value)[:total] = store(ufunc(op)(start, load(_host(y, value)[:total], types)), types)
        return 1

    self_keep = []
    monkeypatch.setattr(sseg, "combine_initial", combine_initial)
    monkeypatch.setattr(rseg, "combine_initial", combine_initial)
    monkeypatch.setattr(sseg, "launch_scan", launch_scan)
    monkeypatch.setattr(rseg, "launch_reduce", launch_reduce)
    monkeypatch.setattr(segments, "check_device_offsets", check)
    monkeypatch.setattr(pyscan.runtime.arrays.Call, "to_device", to_device)
    return launched


@pytest.mark.parametrize("device_offsets", [False, True])
def test_scan_and_reduce_dispatch(fake_segments, device_offsets):
    o = offsets_of([0, 1, 31, 32, 33, 0, 5000])
    x = values("int32", int(o[-1]), RNG)
    given = FakeDeviceArray(o.copy()) if device_offsets else o.copy()
    got = pyscan.scan(FakeDeviceArray(x.copy()), offsets=given)
    assert isinstance(got, FakeDeviceArray)
    equal(got.host, scan_reference_segments(x, o, "add"))
    red = pyscan.reduce(FakeDeviceArray(x.copy()), offsets=given, op="max")
    assert isinstance(red, FakeDeviceArray) and red.host.shape == (7,)
    equal(red.host, reduce_reference_segments(x, o, "max"))
    checks = [k for k in fake_segments if k[0] == "check"]
    assert len(checks) == (2 if device_offsets else 0)  # host offsets are checked on the host
    kinds = {k[1] for k in fake_segments if k[0] != "check"}
    assert kinds == ({np.dtype(np.int64)} if device_offsets else {np.dtype(np.int32)})


def test_exclusive_initial_dtype_and_out(fake_segments):
    o = offsets_of([3, 0, 4])
    x = np.arange(1, 8, dtype=np.int16)
    got = pyscan.scan(FakeDeviceArray(x), offsets=o, exclusive=True)
    assert list(got.host) == [0, 1, 3, 0, 4, 9, 15] and got.host.dtype == np.int64
    got = pyscan.scan(FakeDeviceArray(x), offsets=o, initial=10)
    assert list(got.host) == [11, 13, 16, 14, 19, 25, 32]
    got = pyscan.scan(FakeDeviceArray(x), offsets=o, exclusive=True, initial=10)
    assert list(got.host) == [10, 11, 13, 10, 14, 19, 25]
    red = pyscan.reduce(FakeDeviceArray(x), offsets=o, initial=100)
    assert list(red.host) == [106, 100, 122]
    red = pyscan.reduce(FakeDeviceArray(x), offsets=o, dtype=np.int8, op="mul")
    assert red.host.dtype == np.int8 and list(red.host) == [6, 1, np.int8(4 * 5 * 6 * 7 - 768)]
    out = FakeDeviceArray(np.zeros(3, np.int64))
    assert pyscan.reduce(FakeDeviceArray(x), offsets=o, out=out) is out and list(out.host) == [6, 0, 22]


def test_custom_operator_through_the_dispatch(fake_segments):
    o = offsets_of([2, 3])
    x = np.array([3, 1, 4, 1, 5], np.float32)
    got = pyscan.reduce(FakeDeviceArray(x), offsets=o, op="max(a, b)", identity=-np.inf)
    assert list(got.host) == [3, 5]


def test_empty_x_and_max_of_empty_segments(fake_segments):
    got = pyscan.reduce(FakeDeviceArray(np.zeros(0, np.float32)), offsets=[0, 0, 0], op="max")
    assert list(got.host) == [-np.inf, -np.inf]  # the identity: no error, unlike np.max of an empty array
    got = pyscan.reduce(FakeDeviceArray(np.zeros(0, np.int32)), offsets=[0, 0], initial=7)
    assert list(got.host) == [7]
    got = pyscan.scan(FakeDeviceArray(np.zeros(0, np.int32)), offsets=[0])
    assert got.host.shape == (0,)
    assert not [k for k in fake_segments if k[0] != "check"]


def test_nd_x_is_segmented_flat(fake_segments):
    x = np.arange(12, dtype=np.int64).reshape(3, 4)
    got = pyscan.reduce(FakeDeviceArray(x), offsets=[0, 5, 12])
    assert list(got.host) == [10, 56]


@pytest.mark.parametrize("call, error, words", [
    (lambda x: pyscan.scan(x, offsets=[0, 3, 2]), ValueError, "non-decreasing"),
    (lambda x: pyscan.reduce(x, offsets=[0, 4]), ValueError, r"len\(x\) = 3"),
    (lambda x: pyscan.scan(x, offsets=[0, 3], axis=0), ValueError, "axis"),
    (lambda x: pyscan.scan(x, offsets=[0, 3], algorithm="kogge_stone"), ValueError, "algorithm='auto'"),
    (lambda x: pyscan.reduce(x, offsets=[0, 3], keepdims=True), ValueError, "keepdims"),
    (lambda x: pyscan.reduce(x, offsets=[0, 3], map="x*x"), TypeError, "map="),
    (lambda x: pyscan.reduce(x, offsets=[0, 3], check_offsets=1), TypeError, "check_offsets"),
    (lambda x: pyscan.reduce(x, offsets=FakeDeviceArray(np.array([0, 3], np.int16))), TypeError, "int32 or int64"),
    (lambda x: pyscan.reduce(x, offsets=FakeDeviceArray(np.array([0, 2], np.int64))), ValueError, "device check"),
    (lambda x: pyscan.scan(x, offsets=FakeDeviceArray(np.array([1, 3], np.int32))), ValueError, "device check"),
])
def test_bad_calls_are_refused_before_any_kernel(fake_segments, call, error, words):
    with pytest.raises(error, match=words):
        call(FakeDeviceArray(np.arange(3, dtype=np.int32)))
    assert not [k for k in fake_segments if k[0] != "check"]


def test_check_offsets_false_skips_the_device_check(fake_segments):
    x = FakeDeviceArray(np.arange(4, dtype=np.int32))
    got = pyscan.reduce(x, offsets=FakeDeviceArray(np.array([0, 1, 4], np.int64)), check_offsets=False)
    assert list(got.host) == [0, 6]
    assert [k[0] for k in fake_segments] == ["reduce"]


def test_the_common_call_still_takes_the_fast_path(fake_gpu):  # noqa: F811
    seen, _ = fake_gpu
    got = pyscan.reduce(FakeDeviceArray(np.arange(5, dtype=np.int32)))
    assert int(got.host) == 10 and seen[-1][0] == "reduce"


def test_identity_of_every_named_operator_is_the_empty_segments_value():
    for op in OPS:
        for dtype in ("int32", "float64", "bool"):
            try:
                value = result_dtype(as_dtype(dtype), op)
            except TypeError:
                continue
            got = rseg.segmented_reduce_model(values(dtype, 4, RNG), np.array([0, 0, 4]), op=op)
            assert got[0] == identity(op, value)


def test_the_check_cases_run_on_the_fake_device(fake_segments, monkeypatch):
    """Every case of `python -m pyscan check segmented_scan segmented_reduce` passes with the models in place of
    the kernels (so a mismatch on the GPU is the kernels', not the check's)."""
    from pyscan_tools.patterns import PATTERNS
    from pyscan_tools.patterns import segments as pattern

    def launch_anyway(model):  # garbage offsets unchecked: the kernels give some values; so does this
        def launch(call, x, out, offsets, **kw):
            o = _host(offsets.view, offsets.dtype)[:offsets.segments + 1]
            if segments.offsets_model_check(o, x.size):
                return 1
            return model(call, x, out, offsets, **kw)
        return launch

    monkeypatch.setattr(pattern, "device_view", lambda host, offset: FakeDeviceArray(host.copy()))
    monkeypatch.setattr(sseg, "launch_scan", launch_anyway(sseg.launch_scan))
    monkeypatch.setattr(rseg, "launch_reduce", launch_anyway(rseg.launch_reduce))
    monkeypatch.setattr(pattern, "upload", lambda host: FakeDeviceArray(np.ascontiguousarray(host).copy()))
    monkeypatch.setattr(pattern, "to_numpy", lambda r: r.host if isinstance(r, FakeDeviceArray) else np.asarray(r))
    rng = np.random.default_rng(3)
    for name in ("segmented_scan", "segmented_reduce"):
        for c in PATTERNS[name].check_cases(name, False):
            status, detail = PATTERNS[name].run_case(c, rng)
            assert status == "ok", (c.label, detail)


def test_scan_in_place_and_nd(fake_segments):
    x = FakeDeviceArray(np.arange(1, 9, dtype=np.int64))
    assert pyscan.scan(x, offsets=[0, 4, 8], out=x) is x
    assert list(x.host) == [1, 3, 6, 10, 5, 11, 18, 26]
    y = pyscan.scan(FakeDeviceArray(np.ones((2, 3), np.float32)), offsets=[0, 2, 6])
    assert y.host.shape == (6,) and list(y.host) == [1, 2, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="shape"):
        pyscan.scan(FakeDeviceArray(np.ones(4, np.int32)), offsets=[0, 4], out=FakeDeviceArray(np.zeros(3, np.int64)))


# ---- the commonest segmented call (device x and offsets, check_offsets=False): the kernel a first call kept --------

@pytest.fixture
def ready_segments(fake_gpu, monkeypatch):  # noqa: F811
    """The fake device with a kind whose arrays the ready paths take, the segmented launch replaced by a recorder:
    (path, stream, arguments but the addresses) of every launch, "general" where the general path's launch_scan or
    launch_reduce made it."""
    from test_interop import FakeKind

    class ReadyKind(FakeKind):
        ready = arrays.Kind.ready  # 1-D C-contiguous arrays as they are

        def new(self, x, shape, dtype, device, stream):  # torch's rule: x's shape or (); new_shaped any shape
            assert shape in (x.shape, ()), f"new() of shape {shape} for x of shape {x.shape}: use new_shaped"
            return FakeKind.new(self, x, shape, dtype, device, stream)

        def new_shaped(self, x, shape, dtype, device, stream):
            return FakeKind.new(self, x, shape, dtype, device, stream)

    launches = []
    path = ["ready"]

    def record(out, x, n, dtype, offsets, op, value, device, stream, context=0, exclusive=None):
        launches.append((path[0], stream, (n, dtype, offsets[1:], op, value, device, exclusive)))

    def general(launcher):
        def wrapped(*args, **kwargs):
            path[0] = "general"
            try:
                return launcher(*args, **kwargs)
            finally:
                path[0] = "ready"
        return wrapped

    kind = ReadyKind()
    monkeypatch.setitem(arrays._kinds_by_type, FakeDeviceArray, kind)
    monkeypatch.setitem(arrays.READY, FakeDeviceArray, kind)
    for module in (sseg, rseg):
        monkeypatch.setattr(module, "launch", record)
    monkeypatch.setattr(sseg, "launch_scan", general(sseg.launch_scan))
    monkeypatch.setattr(rseg, "launch_reduce", general(rseg.launch_reduce))
    monkeypatch.setattr(driver, "primary", lambda device: 0)
    monkeypatch.setattr(sseg, "READY", set())
    return launches


def test_a_repeated_segmented_call_takes_the_ready_path(ready_segments):
    """The first call takes the general path and marks its key; the same call again launches through the same
    launch (pyscan.scans.segments.launch) with the general path's stream and arguments, and returns x's kind of the
    same shape and dtype; a call the ready path does not take (out=, stream=, a C expression) takes the general path,
    and int32 offsets, another kernel, are marked by their own first call."""
    n = 10_000
    x = FakeDeviceArray(values("float32", n, RNG))
    o = FakeDeviceArray(np.array([0, 3, 3, 5000, n], np.int64))
    calls = [lambda: pyscan.scan(x, offsets=o, check_offsets=False),
             lambda: pyscan.scan(x, offsets=o, check_offsets=False, op="max", dtype=np.float64),
             lambda: pyscan.reduce(x, offsets=o, check_offsets=False),
             lambda: pyscan.reduce(x, offsets=o, check_offsets=False, op="min")]
    for call in calls:
        ready_segments.clear()
        first, second = call(), call()
        assert [k[0] for k in ready_segments] == ["general", "ready"]
        assert ready_segments[0][1:] == ready_segments[1][1:]
        assert ready_segments[1][2][:3] == (n, np.dtype(np.float32), (4, np.dtype(np.int64)))
        assert isinstance(second, FakeDeviceArray) and second.shape == first.shape and second.dtype == first.dtype
        assert second.shape == ((n,) if ready_segments[1][2][-1] is not None else (4,))
    ready_segments.clear()
    pyscan.scan(x, offsets=o, check_offsets=False, exclusive=True)  # the inclusive scan's kernel, exclusive=True
    assert [(k[0], k[2][-1]) for k in ready_segments] == [("ready", True)]
    assert len(sseg.READY) == 4  # scan float32, scan max into float64, reduce add, reduce min
    others = [lambda: pyscan.scan(x, offsets=o, check_offsets=False, out=FakeDeviceArray(np.empty(n, np.float32))),
              lambda: pyscan.scan(x, offsets=o, check_offsets=False, stream=7),
              lambda: pyscan.reduce(x, offsets=o, check_offsets=False, op="a + b", identity=0)]
    for call in others:
        ready_segments.clear()
        call(), call()
        assert [k[0] for k in ready_segments] == ["general", "general"]
    ready_segments.clear()
    o32 = FakeDeviceArray(o.host.astype(np.int32))  # another kernel (OFFSET_TYPE int): marked by its first call
    pyscan.scan(x, offsets=o32, check_offsets=False), pyscan.scan(x, offsets=o32, check_offsets=False)
    assert [k[0] for k in ready_segments] == ["general", "ready"] and len(sseg.READY) == 5


def test_the_ready_path_declines_what_it_does_not_take(ready_segments, monkeypatch):
    """take_ready gives None (the general path's turn) for offsets on another device, fewer than two offsets, an
    empty x and a call whose key no first call marked."""
    x = FakeDeviceArray(values("int32", 100, RNG))
    o = FakeDeviceArray(np.array([0, 50, 100], np.int64))
    kind = arrays.READY[FakeDeviceArray]
    assert sseg.take_ready(kind, x, o, "add", None, False) is None  # nothing kept yet
    pyscan.scan(x, offsets=o, check_offsets=False)
    assert sseg.take_ready(kind, x, o, "add", None, False) is not None
    assert sseg.take_ready(kind, x, o, "add", None, None) is None  # the reduction's kernel: not kept
    assert sseg.take_ready(kind, x, FakeDeviceArray(o.host, device=1), "add", None, False) is None
    assert sseg.take_ready(kind, x, FakeDeviceArray(np.array([0], np.int64)), "add", None, False) is None
    assert sseg.take_ready(kind, FakeDeviceArray(np.empty(0, np.int32)), o, "add", None, False) is None
    assert sseg.take_ready(kind, x, o, "add", "not a dtype", False) is None
