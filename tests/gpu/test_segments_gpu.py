"""Segments on the GPU: pyscan.scan(x, offsets=o) and pyscan.reduce(x, offsets=o) against NumPy (per-segment
np.cumsum / ufunc.accumulate; np.add.reduceat adjusted for empty segments) and against the kernels' NumPy models
(tests/unit/test_segments.py holds the models to NumPy without a GPU).  Lengths 0, 1, 31, 32, 33 and primes, one
huge segment, 10^6 and 10^7 tiny ones, a power-law mix; every dtype and named operator, exclusive, custom
operators; host and device offsets (int32 and int64), NumPy / CuPy / torch input; bad offsets refused by the device
check, and run unchecked without a fault; more than 2^31 elements."""

import numpy as np
import pytest
from segment_checks import offsets_of, values
from test_interop_gpu import _library, assert_kind, to_kind, to_numpy

import pyscan
from pyscan import segments
from pyscan.reductions import segments as rseg
from pyscan.scans import decoupled_lookback as dl
from pyscan.scans import segments as sseg
from pyscan.scans.reference import reference as scan_reference
from pyscan.types import (
    BFLOAT16,
    OPERATOR_NAMES,
    as_dtype,
    bfloat16_to_float32,
    float32_to_bfloat16,
    result_dtype,
)

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
          "float64", "bfloat16"]
MIX = [0, 1, 31, 32, 33, 0, 2, 3, 5, 7, 11, 13, 4095, 4096, 4097, 0, 2047, 2048, 2049, 1, 20011, 0, 0, 9973, 1]


def as_bits(a):
    a = np.asarray(a)
    return a.view(np.uint16) if a.dtype == BFLOAT16 else a


def scan_reference_segments(x, o, op, exclusive=False):
    value = result_dtype(x.dtype, op)
    parts = [scan_reference(x[a:b], op, exclusive) for a, b in zip(o[:-1], o[1:]) if b > a]
    return np.concatenate(parts).astype(value) if parts else np.empty(0, value)


def reduce_reference_segments(x, o, op):
    value = result_dtype(x.dtype, op)
    if value == BFLOAT16:
        return float32_to_bfloat16(segments.reference_reduce(bfloat16_to_float32(x), o, op, np.float32))
    if x.dtype == BFLOAT16:
        x = bfloat16_to_float32(x)
    return segments.reference_reduce(x, o, op, value)


def host_of(result):
    """A result as NumPy: torch bfloat16 as BFLOAT16 bits (torch has no NumPy bfloat16)."""
    if type(result).__module__.split(".")[0] == "torch":
        import torch

        if result.dtype == torch.bfloat16:
            return result.view(torch.int16).cpu().numpy().view(BFLOAT16)
    return to_numpy(result)


def _torch_bf16(host):
    torch = pytest.importorskip("torch")
    return torch.from_numpy(host.view(np.int16).copy()).view(torch.bfloat16).cuda()


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_and_operator(dtype):
    rng = np.random.default_rng(DTYPES.index(dtype))
    o = offsets_of(MIX)
    x = values(dtype, int(o[-1]), rng)
    given = _torch_bf16(x) if as_dtype(dtype) == BFLOAT16 else x
    for op in OPERATOR_NAMES:
        try:
            result_dtype(as_dtype(dtype), op)
        except TypeError:
            continue
        if op == "mul" and as_dtype(dtype).kind == "f":
            continue  # thousands of products overflow: the integer types check mul
        got = host_of(pyscan.reduce(given, offsets=o, op=op))
        want = rseg.segmented_reduce_model(x, o, op=op)
        np.testing.assert_array_equal(as_bits(got), as_bits(want), err_msg=f"reduce {dtype} {op}")
        np.testing.assert_array_equal(as_bits(want), as_bits(reduce_reference_segments(x, o, op)))
        for exclusive in (False, True):
            got = host_of(pyscan.scan(given, offsets=o, op=op, exclusive=exclusive))
            want = sseg.segmented_scan_model(x, o, op=op, exclusive=exclusive)
            np.testing.assert_array_equal(as_bits(got), as_bits(want), err_msg=f"scan {dtype} {op} {exclusive}")


@pytest.mark.parametrize("kind", ["numpy", "cupy", "torch", "pycuda"])
@pytest.mark.parametrize("offsets_on", ["host", "device32", "device64"])
def test_each_kind_and_offsets(kind, offsets_on):
    rng = np.random.default_rng(5)
    o = offsets_of(MIX)
    x = values("float32", int(o[-1]), rng)
    xd = to_kind(x, kind)
    if offsets_on == "host":
        od = o
    else:
        od = to_kind(o.astype(np.int32 if offsets_on == "device32" else np.int64), "cupy" if kind == "numpy" else kind)
    red = pyscan.reduce(xd, offsets=od)
    assert_kind(red, kind)
    np.testing.assert_array_equal(to_numpy(red), reduce_reference_segments(x, o, "add"))
    got = pyscan.scan(xd, offsets=od, exclusive=True)
    assert_kind(got, kind)
    np.testing.assert_array_equal(to_numpy(got), scan_reference_segments(x, o, "add", True))


@pytest.mark.parametrize("kind", ["cupy", "torch", "pycuda", "numba"])
@pytest.mark.parametrize("offsets_dtype", [np.int32, np.int64])
def test_repeated_calls_take_the_ready_path(kind, offsets_dtype, monkeypatch):
    """check_offsets=False calls on device arrays: the first keeps its kernel; later ones take the ready path
    (pyscan.scans.segments.take_ready: no begin(), no Call) and launch what the general path (stream= the same stream)
    launches -- the same kernel, geometry, stream and non-address arguments -- with the same results, in x's
    kind."""
    from pyscan.runtime import arrays, loader

    rng = np.random.default_rng(17)
    o = offsets_of(MIX)
    x = values("float32", int(o[-1]), rng)
    xd, od = to_kind(x, kind), to_kind(o.astype(offsets_dtype), kind)
    calls = {f"scan {op} {exclusive}": (lambda options, op=op, exclusive=exclusive: pyscan.scan(
                 xd, offsets=od, op=op, exclusive=exclusive, check_offsets=False, **options),
                 scan_reference_segments(x, o, op, exclusive)) for op in ("add", "max") for exclusive in (False, True)}
    calls.update({f"reduce {op}": (lambda options, op=op: pyscan.reduce(xd, offsets=od, op=op, check_offsets=False,
                                                                       **options),
                                   reduce_reference_segments(x, o, op)) for op in ("add", "max")})
    for call, _ in calls.values():
        call({})  # the first call keeps its kernel
    default = arrays.kind_of(xd).default_stream(xd, 0)
    launches, begun = [], []
    launch_raw, begin = loader.launch_raw, arrays.begin

    def record(context, function, handle, geometry, letters, *args):
        kept = tuple(a for a, letter in zip(args, letters) if letter not in "PI")  # no addresses, no epoch
        launches.append((function, geometry, handle, kept))
        return launch_raw(context, function, handle, geometry, letters, *args)

    monkeypatch.setattr(loader, "launch_raw", record)
    monkeypatch.setattr(arrays, "begin", lambda *a, **k: begun.append(1) or begin(*a, **k))
    for name, (call, want) in calls.items():
        seen = {}
        for path, options in (("ready", {}), ("general", {"stream": default})):
            launches.clear(), begun.clear()
            got = call(options)
            assert_kind(got, kind)
            np.testing.assert_array_equal(to_numpy(got), want, err_msg=f"{name} on {kind}, {path} path")
            seen[path] = (list(launches), len(begun))
        assert seen["ready"][1] == 0 and seen["general"][1] == 2, name  # general: x and the offsets begun
        assert seen["ready"][0] == seen["general"][0] and len(seen["ready"][0]) == 1, name


def test_one_huge_segment_and_tiny_ones_around_it():
    rng = np.random.default_rng(7)
    for lengths in ([1 << 24], [1, 0, 1 << 24, 0, 3], [0, (1 << 24) + 17]):
        o = offsets_of(lengths)
        x = values("int32", int(o[-1]), rng)
        np.testing.assert_array_equal(pyscan.reduce(x, offsets=o), reduce_reference_segments(x, o, "add"))
        np.testing.assert_array_equal(pyscan.scan(x, offsets=o), scan_reference_segments(x, o, "add"))


@pytest.mark.parametrize("segments_count", [10**6, 10**7])
def test_many_tiny_segments(segments_count):
    rng = np.random.default_rng(8)
    lengths = rng.integers(0, 3, segments_count)
    o = offsets_of(lengths)
    x = values("int32", int(o[-1]), rng)
    cp = pytest.importorskip("cupy")
    got = pyscan.reduce(cp.asarray(x), offsets=cp.asarray(o))
    np.testing.assert_array_equal(got.get(), reduce_reference_segments(x, o, "add"))
    got = pyscan.scan(cp.asarray(x), offsets=cp.asarray(o)).get()
    c = np.cumsum(x, dtype=np.int64)
    starts = np.repeat(o[:-1], lengths)
    np.testing.assert_array_equal(got, c - np.where(starts > 0, c[np.maximum(starts - 1, 0)], 0))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_power_law_mix(dtype):
    rng = np.random.default_rng(9)
    lengths = np.minimum((rng.pareto(1.1, 20000) * 8).astype(np.int64), 1 << 22)
    o = offsets_of(lengths)
    x = values(dtype, int(o[-1]), rng)
    np.testing.assert_array_equal(pyscan.reduce(x, offsets=o), reduce_reference_segments(x, o, "add"))
    np.testing.assert_array_equal(pyscan.scan(x, offsets=o, op="max"), scan_reference_segments(x, o, "max"))


def test_float_sums_within_the_bound():
    rng = np.random.default_rng(10)
    o = offsets_of([1, 100000, 0, 3, 1 << 20])
    x = rng.standard_normal(int(o[-1])).astype(np.float32)
    got = pyscan.reduce(x, offsets=o).astype(np.float64)
    exact = np.array([np.sum(x[a:b], dtype=np.float64) for a, b in zip(o[:-1], o[1:])])
    size = np.array([np.abs(x[a:b]).sum(dtype=np.float64) for a, b in zip(o[:-1], o[1:])])
    depth = np.array([dl.decoupled_lookback_error_depth(int(length)) for length in np.diff(o)])
    assert np.all(np.abs(got - exact) <= depth * 2**-23 * size + 1e-30)


@pytest.mark.parametrize("lengths", [MIX, [5000] * 40, [1] * 3000 + [70001], [9000]])
def test_unaligned_x_and_every_tile_size(lengths):
    """x one element off 16-byte alignment (the scalar-load build, a block per tile) and aligned, through the
    SMALL tile, the large one and one tile, int32 and float64 (8-byte tiles)."""
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(12)
    o = offsets_of(lengths)
    for dtype in ("int32", "float64"):
        x = values(dtype, int(o[-1]) + 1, rng)
        whole = cp.asarray(x)
        for start in (0, 1):
            xd = whole[start:start + int(o[-1])]
            host = x[start:start + int(o[-1])]
            od = cp.asarray(o)
            np.testing.assert_array_equal(pyscan.reduce(xd, offsets=od).get(), reduce_reference_segments(host, o, "add"))
            for exclusive in (False, True):
                np.testing.assert_array_equal(pyscan.scan(xd, offsets=od, exclusive=exclusive).get(),
                                              scan_reference_segments(host, o, "add", exclusive))


def test_custom_operator_keeps_the_order():
    rng = np.random.default_rng(11)
    o = offsets_of([7, 0, 45000, 1, 33, 9000])
    x = rng.integers(0, 3, int(o[-1])).astype(np.int32) * (rng.random(int(o[-1])) < 0.01)
    x = x.astype(np.int32)
    got = pyscan.scan(x, offsets=o, op="b != 0 ? b : a", identity=0)
    want = sseg.segmented_scan_model(x, o, op=pyscan.types.operator("b != 0 ? b : a", 0))
    np.testing.assert_array_equal(got, want)
    got = pyscan.reduce(x.astype(np.float64), offsets=o, op="max(a, b)", identity=-np.inf)
    np.testing.assert_array_equal(got, reduce_reference_segments(x.astype(np.float64), o, "max"))


def test_initial_and_out():
    cp = pytest.importorskip("cupy")
    o = offsets_of([3, 0, 4])
    x = cp.arange(1, 8, dtype=cp.int16)
    np.testing.assert_array_equal(pyscan.scan(x, offsets=o, initial=10).get(), [11, 13, 16, 14, 19, 25, 32])
    out = cp.zeros(3, cp.int64)
    assert pyscan.reduce(x, offsets=o, out=out, initial=100) is out
    np.testing.assert_array_equal(out.get(), [106, 100, 122])


@pytest.mark.parametrize("bad", [[1, 5, 10], [0, 5, 9], [0, 6, 5, 10], [0, -1, 10], [0, 11, 10]])
def test_bad_device_offsets_are_refused_and_run_unchecked_without_a_fault(bad):
    cp = pytest.importorskip("cupy")
    x = cp.arange(10, dtype=cp.float32)
    od = cp.asarray(np.array(bad, np.int64))
    with pytest.raises(ValueError, match="device check"):
        pyscan.reduce(x, offsets=od)
    with pytest.raises(ValueError, match="device check"):
        pyscan.scan(x, offsets=od)
    pyscan.reduce(x, offsets=od, check_offsets=False)  # wrong values, but no fault (the sanitizer checks reads)
    pyscan.scan(x, offsets=od, check_offsets=False)
    cp.cuda.get_current_stream().synchronize()
    np.testing.assert_array_equal(pyscan.reduce(x, offsets=cp.asarray([0, 4, 10])).get(), [6, 39])  # still sound


def test_garbage_offsets_unchecked_never_fault():
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(12)
    x = cp.asarray(rng.standard_normal(100000).astype(np.float32))
    for _ in range(10):
        od = cp.asarray(rng.integers(-10**9, 10**9, 5000).astype(np.int64))
        pyscan.reduce(x, offsets=od, check_offsets=False)
        pyscan.scan(x, offsets=od, check_offsets=False)
    cp.cuda.get_current_stream().synchronize()


def test_status_words_shared_with_the_fast_scan_on_one_stream():
    rng = np.random.default_rng(13)
    o = offsets_of([50000, 1, 70000])
    x = values("int32", int(o[-1]), rng)
    for _ in range(20):
        np.testing.assert_array_equal(pyscan.scan(x), np.cumsum(x))
        np.testing.assert_array_equal(pyscan.scan(x, offsets=o), scan_reference_segments(x, o, "add"))
        np.testing.assert_array_equal(pyscan.reduce(x, offsets=o), reduce_reference_segments(x, o, "add"))


@pytest.mark.slow
def test_more_than_2_to_the_31_elements():
    torch = pytest.importorskip("torch")
    n = (1 << 31) + 4099
    try:
        x = torch.ones(n, dtype=torch.int8, device="cuda")
    except RuntimeError as exc:  # not enough memory
        pytest.skip(str(exc))
    o = torch.tensor([0, 5, (1 << 31) - 1, (1 << 31) + 1, n], dtype=torch.int64, device="cuda")
    got = pyscan.reduce(x, offsets=o).cpu().numpy()
    np.testing.assert_array_equal(got, np.diff(o.cpu().numpy()))
    y = pyscan.scan(x, offsets=o)
    assert int(y[-1]) == n - ((1 << 31) + 1) and int(y[(1 << 31) - 2]) == (1 << 31) - 6
    del y
    _library("torch").cuda.synchronize()
