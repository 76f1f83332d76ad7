"""NumPy's dtype, accumulator and operator contract on the GPU (the models' side: tests/unit/test_dtypes.py).

* every scan algorithm x dtype x operator against NumPy (the fast scan, auto's choice, for every dtype; the book's
  algorithms for a subset of dtypes that covers 1-, 2-, 4- and 8-byte integers, bool and both float widths), a few
  lengths each, inclusive and exclusive alternating;
* every reduction algorithm the same way;
* the result dtype on NumPy, CuPy and torch input; torch bfloat16 against torch's float32 scan rounded to bfloat16;
  bool mask counts; dtype= conversions (narrow wrapping); NaN and inf with the new operators; unaligned views (the
  fast kernels' scalar paths) of narrow types.
"""

import numpy as np
import pytest
from dtype_checks import CASES, DTYPES, check, make

import pyscan
from pyscan.axes import AXIS_DTYPES, AXIS_OPERATORS
from pyscan.reductions import REDUCTIONS
from pyscan.reductions.reference import reference as reduce_reference
from pyscan.scans import SCANS
from pyscan.scans.reference import reference as scan_reference
from pyscan.types import OPERATOR_NAMES, Types, result_dtype

LENGTHS = (1, 33, 1025, 8209, 70001)
BOOK_DTYPES = (np.bool_, np.int8, np.uint16, np.int32, np.uint64, np.float16, np.float64)


def _takes(algorithm, dtype, op) -> bool:
    """Every algorithm takes every dtype and operator: the axis kernels too (AXIS_DTYPES, AXIS_OPERATORS are all of
    them; on 1-D x here, along axes in tests/gpu/test_axis_gpu.py)."""
    if algorithm != "axis":
        return True
    return op in AXIS_OPERATORS and np.dtype(dtype) in AXIS_DTYPES and result_dtype(dtype, op) in AXIS_DTYPES


SCAN_CASES = [(alg, d, op) for alg in SCANS.names() for d, op in CASES
              if (alg == "decoupled_lookback" or d in BOOK_DTYPES) and _takes(alg, d, op)]
REDUCE_CASES = [(alg, d, op) for alg in REDUCTIONS.names() for d, op in CASES
                if (alg == "fast" or d in BOOK_DTYPES) and _takes(alg, d, op)]


def _id(v):
    return v if isinstance(v, str) else np.dtype(v).name


@pytest.mark.parametrize("algorithm,dtype,op", SCAN_CASES, ids=lambda v: _id(v))
def test_scan_every_dtype_and_operator(algorithm, dtype, op):
    rng = np.random.default_rng([DTYPES.index(dtype), OPERATOR_NAMES.index(op), 11])
    depth = SCANS.get(algorithm).error_depth
    for i, n in enumerate(LENGTHS):
        x = make(rng, n, dtype, op)
        exclusive = bool(i % 2)
        out = pyscan.scan(x, op=op, exclusive=exclusive, algorithm=algorithm)
        check(out, x, op, exclusive, depth(n), what=f"{algorithm} {np.dtype(dtype)} {op} n={n}")


@pytest.mark.parametrize("algorithm,dtype,op", REDUCE_CASES, ids=lambda v: _id(v))
def test_reduce_every_dtype_and_operator(algorithm, dtype, op):
    rng = np.random.default_rng([DTYPES.index(dtype), OPERATOR_NAMES.index(op), 13])
    a = REDUCTIONS.get(algorithm)
    for n in LENGTHS:
        x = make(rng, n, dtype, op)
        got = pyscan.reduce(x, op=op, algorithm=algorithm)
        want = reduce_reference(x, op)
        value = result_dtype(x.dtype, op)
        assert np.asarray(got).dtype == value, (algorithm, n, np.asarray(got).dtype, value)
        if value.kind != "f" or op not in ("add", "mul"):
            assert got == want or (np.isnan(got) and np.isnan(want)), (algorithm, n, got, want)
            continue
        exact = float(np.sum(x.astype(np.float64))) if op == "add" else float(np.prod(x.astype(np.float64)))
        compute = Types.of(x.dtype, op).compute
        scale = float(np.sum(np.abs(x.astype(np.float64)))) if op == "add" else abs(exact)
        roundings = a.error_depth(n) if op == "add" else n
        tol = (roundings + 3) * np.finfo(compute).eps * scale + np.finfo(value).eps * abs(exact)
        assert abs(float(got) - exact) <= tol, (algorithm, n, float(got), exact, tol)


@pytest.mark.parametrize("dtype", DTYPES, ids=_id)
def test_result_dtypes_on_device_arrays(dtype):
    cupy = pytest.importorskip("cupy")
    x = np.arange(1, 100).astype(dtype)
    for op in ("add", "mul", "max", "logical_or"):
        c = cupy.asarray(x)
        assert pyscan.scan(c, op=op).dtype == result_dtype(x.dtype, op)
        assert pyscan.reduce(c, op=op).dtype == result_dtype(x.dtype, op)
    assert pyscan.scan(cupy.asarray(x)).dtype == cupy.cumsum(cupy.asarray(x)).dtype


def test_torch_int32_scan_is_int64_like_torch_cumsum():
    torch = pytest.importorskip("torch")
    t = torch.randint(-9, 9, (100_003,), dtype=torch.int32, device="cuda")
    out = pyscan.scan(t)
    assert out.dtype == torch.cumsum(t, 0).dtype == torch.int64
    assert torch.equal(out, torch.cumsum(t, 0))
    assert pyscan.reduce(t).dtype == torch.sum(t).dtype
    for dtype in (torch.bool, torch.int8, torch.uint8, torch.int16, torch.float16):
        t = torch.randint(0, 2, (5003,), device="cuda").to(dtype)
        # NumPy's rule (np.cumsum(uint8) is uint64) where torch's differs: torch.cumsum(uint8) is int64
        assert pyscan.scan(t).dtype == (torch.uint64 if dtype == torch.uint8 else torch.cumsum(t, 0).dtype), dtype
        assert torch.allclose(pyscan.scan(t).double(), torch.cumsum(t.double(), 0), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("op", ["add", "max", "min", "mul"])
def test_torch_bfloat16_against_float32_rounded(op):
    torch = pytest.importorskip("torch")
    g = torch.Generator(device="cuda").manual_seed(5)
    for n in (1, 4097, 100_003):
        values = torch.randn(n, device="cuda", generator=g)
        if op == "mul":
            values = 1 + values / 100
        t = values.bfloat16()
        out = pyscan.scan(t, op=op)
        assert out.dtype == torch.bfloat16
        f = {"add": torch.cumsum, "mul": torch.cumprod}.get(op)
        ref = f(t.float(), 0) if f else (torch.cummax(t.float(), 0) if op == "max" else torch.cummin(t.float(), 0)).values
        err = (out.float() - ref).abs()
        scale = torch.cumsum(t.float().abs(), 0) if op == "add" else ref.abs()
        depth = SCANS.get("decoupled_lookback").error_depth(n) if op == "add" else n
        assert bool((err <= depth * 2.0**-23 * scale + 2.0**-8 * ref.abs() + 1e-30).all()), (op, n)
        r = pyscan.reduce(t, op=op)
        assert r.dtype == torch.bfloat16 and r.shape == ()


def test_bool_mask_counts():
    rng = np.random.default_rng(2)
    for n in (1, 1000, 2**20 + 3):
        mask = rng.random(n) < 0.5
        out = pyscan.scan(mask)
        assert out.dtype == np.int64
        np.testing.assert_array_equal(out, np.cumsum(mask))
        assert pyscan.reduce(mask) == np.sum(mask) and pyscan.reduce(mask).dtype == np.int64


@pytest.mark.parametrize("algorithm", ["auto", "hierarchical", "blelloch", "single_pass", "kogge_stone"])
def test_dtype_argument_converts_in_the_loads(algorithm):
    rng = np.random.default_rng(4)
    x = rng.integers(-2**31, 2**31 - 1, 50_001, dtype=np.int32)
    for op, ref in (("add", np.cumsum(x, dtype=np.int8)), ("mul", np.cumprod(x, dtype=np.int8)),
                    ("max", np.maximum.accumulate(x, dtype=np.int8))):
        out = pyscan.scan(x, op=op, dtype=np.int8, algorithm=algorithm)
        assert out.dtype == np.int8
        np.testing.assert_array_equal(out, ref, err_msg=f"{algorithm} {op}")
    f = rng.standard_normal(50_001)
    out = pyscan.scan(f, dtype=np.float32, algorithm=algorithm)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.cumsum(f.astype(np.float32).astype(np.float64)), rtol=0, atol=1e-2)
    assert pyscan.reduce(x, dtype=np.int8) == np.sum(x, dtype=np.int8)
    np.testing.assert_array_equal(pyscan.scan(x, op="max", exclusive=True, dtype=np.int8)[:1], [-128])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_nan_and_inf_with_the_new_operators(dtype):
    x = np.array([1.5, 2, np.inf, 0.5, np.nan, 3] * 700, dtype)
    np.testing.assert_array_equal(pyscan.scan(x, op="mul"), np.cumprod(x))
    np.testing.assert_array_equal(pyscan.scan(x, op="logical_and"), np.logical_and.accumulate(x))
    np.testing.assert_array_equal(pyscan.scan(x, op="logical_or", exclusive=True)[1:],
                                  np.logical_or.accumulate(x)[:-1])
    assert np.isnan(pyscan.reduce(x, op="max")) and np.isnan(pyscan.reduce(x, op="mul"))
    with pytest.raises(TypeError, match="bitwise_and"):
        pyscan.scan(x, op="bitwise_and")


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.float16, np.int32])
def test_unaligned_views_of_narrow_types(dtype):
    import pycuda.gpuarray as ga

    rng = np.random.default_rng(8)
    x = make(rng, 100_013, dtype, "add")
    d = ga.to_gpu(x)
    for offset in (1, 3, 7):
        view = d[offset:]
        out = pyscan.scan(view).get()
        check(out, x[offset:], "add", False, SCANS.get("decoupled_lookback").error_depth(x.size), what=f"+{offset}")
        assert scan_reference(x[offset:], "max")[-1] == pyscan.reduce(view, op="max").get()


@pytest.mark.parametrize("dtype,op", [(np.float16, "add"), (np.float16, "max"), (np.int8, "max"), (np.uint8, "min"),
                                      (np.int16, "max")], ids=_id)
def test_narrow_builds_past_the_small_tiles(dtype, op):
    """x and the result narrower than the tile's element: the 1-D build holds them at their own width in shared
    memory and runs NARROW's four blocks per SM (pyscan/scans/decoupled_lookback.py), at lengths past SMALL's tiles;
    aligned and not (one block per tile), inclusive and exclusive, against NumPy."""
    import pycuda.gpuarray as ga

    from pyscan.scans import decoupled_lookback as dl

    assert dl.config(dtype, 1 << 20) is dl.NARROW[4]
    rng = np.random.default_rng([np.dtype(dtype).itemsize, len(op), 17])
    depth = SCANS.get("decoupled_lookback").error_depth
    for n in (dl.SMALL_MAX_TILES * dl._tile(dl.SMALL[4], 4) + 1, 1_000_003):
        x = make(rng, n, dtype, op)
        d = ga.to_gpu(x)
        for offset, exclusive in ((0, False), (0, True), (1, False)):
            out = pyscan.scan(d[offset:], op=op, exclusive=exclusive, dtype=dtype).get()
            check(out, x[offset:], op, exclusive, depth(n), dtype, what=f"{np.dtype(dtype)} {op} n={n} +{offset}")
