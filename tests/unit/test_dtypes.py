"""NumPy's dtype, accumulator and operator contract (pyscan.types) and every scan and reduction model against NumPy
for every dtype x operator: integers and bool exact (add and mul in int64 / uint64 as np.cumsum / np.cumprod, or
wrapping in an explicit narrow dtype=), floats within the algorithm's bound; float16 is combined in float32 and
rounded once, so |out - exact| <= depth * eps32 * sum|x_j| + eps16 / 2 * |exact| (one rounding to float16).
Float mul: every rounding of the product tree scales the result by (1 + d), so |out - exact| <= n * eps * |exact|."""

import numpy as np
import pytest
from dtype_checks import BITWISE, CASES, DTYPES, SIZES, check, make

from pyscan.reductions import REDUCTIONS
from pyscan.reductions.reference import reference as reduce_reference
from pyscan.scans import SCANS
from pyscan.types import (
    BFLOAT16,
    OPERATOR_NAMES,
    Types,
    bfloat16_to_float32,
    defines,
    float32_to_bfloat16,
    identity,
    result_dtype,
)

# ---------------------------------------------------------------------------------------------------- the rules

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_result_dtype_is_numpys(dtype):
    x = np.ones(3, dtype)
    assert result_dtype(x.dtype, "add") == np.cumsum(x).dtype == np.sum(x).dtype
    assert result_dtype(x.dtype, "mul") == np.cumprod(x).dtype == np.prod(x).dtype
    assert result_dtype(x.dtype, "max") == np.maximum.accumulate(x).dtype == np.max(x).dtype
    assert result_dtype(x.dtype, "min") == np.minimum.reduce(x).dtype
    assert result_dtype(x.dtype, "logical_and") == np.logical_and.accumulate(x).dtype == np.bool_
    assert result_dtype(x.dtype, "logical_or") == np.logical_or.reduce(x).dtype
    if x.dtype.kind != "f":
        for op in BITWISE:
            assert result_dtype(x.dtype, op) == getattr(np, op).accumulate(x).dtype
    else:
        for op in BITWISE:
            with pytest.raises(TypeError, match=f"{op}.*integers and bool.*{x.dtype}"):
                result_dtype(x.dtype, op)
            with pytest.raises(TypeError):
                getattr(np, op).reduce(x)  # as NumPy refuses


def test_dtype_argument_chooses_the_accumulator():
    assert result_dtype(np.int32, "add", np.int8) == np.int8
    assert result_dtype(np.float64, "add", np.float32) == np.float32
    assert result_dtype(np.int32, "max", np.int16) == np.int16
    with pytest.raises(TypeError, match="bool"):
        result_dtype(np.int32, "logical_or", np.int32)
    with pytest.raises(TypeError, match="complex"):
        result_dtype(np.complex64, "add")
    with pytest.raises(TypeError, match="bitwise_and"):
        result_dtype(np.int32, "bitwise_and", np.float32)


def test_defines_name_the_four_types():
    d = defines(np.int8, "add", result_dtype(np.int8, "add"))
    assert d == {"IN_TYPE": "signed char", "VALUE_TYPE": "long long", "ELEM_TYPE": "long long",
                 "OUT_TYPE": "long long", "OP": "OP_ADD"}
    d = defines(np.float16, "max", np.float16)
    assert (d["IN_TYPE"], d["VALUE_TYPE"], d["ELEM_TYPE"], d["OUT_TYPE"]) == ("__half", "__half", "float", "__half")
    d = defines(np.float32, "logical_or", np.bool_, out=np.int32)
    assert (d["VALUE_TYPE"], d["ELEM_TYPE"], d["OUT_TYPE"], d["OP"]) == ("bool", "int", "int", "OP_LOGICAL_OR")
    assert defines(BFLOAT16, "add")["IN_TYPE"] == "__nv_bfloat16"
    assert defines(np.int32, "add") == {"IN_TYPE": "int", "VALUE_TYPE": "int", "ELEM_TYPE": "int", "OUT_TYPE": "int",
                                        "OP": "OP_ADD"}  # one type where no result dtype is given


def test_identities():
    assert identity("mul", np.int8) == 1 and identity("bitwise_and", np.uint16) == 0xFFFF
    assert identity("bitwise_and", np.int32) == -1 and identity("max", np.int8) == -128
    assert identity("logical_and", np.bool_) and not identity("logical_or", np.bool_)
    assert identity("max", np.bool_) == False and identity("min", np.bool_) == True  # noqa: E712


def test_bfloat16_round_trip_rounds_to_nearest_even():
    f = np.array([1.0, 1.00390625, 1.01171875, -3.5, np.inf, 1e-45], np.float32)
    b = float32_to_bfloat16(f)
    assert b.dtype == BFLOAT16
    np.testing.assert_array_equal(bfloat16_to_float32(b), [1.0, 1.0, 1.015625, -3.5, np.inf, 0.0])
    assert np.isnan(bfloat16_to_float32(float32_to_bfloat16(np.float32([np.nan]))))[0]


# ---------------------------------------------------------------------------------------------------- the models

@pytest.mark.parametrize("exclusive", [False, True], ids=["inclusive", "exclusive"])
@pytest.mark.parametrize("dtype,op", CASES, ids=lambda v: np.dtype(v).name if not isinstance(v, str) else v)
@pytest.mark.parametrize("algorithm", SCANS.names())
def test_scan_model_matches_numpy(algorithm, dtype, op, exclusive):
    a = SCANS.get(algorithm)
    rng = np.random.default_rng([DTYPES.index(dtype), OPERATOR_NAMES.index(op)])
    for n in SIZES:
        x = make(rng, n, dtype, op)
        out = a.model(x, op=op, exclusive=exclusive)
        check(out, x, op, exclusive, a.error_depth(max(n, 1)), what=f"{algorithm} {np.dtype(dtype)} {op} n={n}")


@pytest.mark.parametrize("dtype,op", CASES, ids=lambda v: np.dtype(v).name if not isinstance(v, str) else v)
@pytest.mark.parametrize("algorithm", REDUCTIONS.names())
def test_reduce_model_matches_numpy(algorithm, dtype, op):
    a = REDUCTIONS.get(algorithm)
    rng = np.random.default_rng([DTYPES.index(dtype), OPERATOR_NAMES.index(op), 7])
    for n in SIZES[1:]:
        x = make(rng, n, dtype, op)
        got = a.model(x, op=op)
        want = reduce_reference(x, op)
        assert np.asarray(got).dtype == result_dtype(x.dtype, op) == np.asarray(want).dtype
        value = result_dtype(x.dtype, op)
        if value.kind != "f" or op not in ("add", "mul"):
            assert got == want or (np.isnan(got) and np.isnan(want)), (algorithm, n, got, want)
        else:
            exact = float(np.sum(x.astype(np.float64))) if op == "add" else float(np.prod(x.astype(np.float64)))
            compute = Types.of(x.dtype, op).compute
            scale = float(np.sum(np.abs(x.astype(np.float64)))) if op == "add" else abs(exact)
            roundings = a.error_depth(n) if op == "add" else n  # mul: every rounding of the tree scales the result
            tol = (roundings + 3) * np.finfo(compute).eps * scale + np.finfo(value).eps * abs(exact)
            assert abs(float(got) - exact) <= tol, (algorithm, n, float(got), exact, tol)


@pytest.mark.parametrize("algorithm", ["decoupled_lookback", "hierarchical", "blelloch", "single_pass"])
def test_narrow_dtype_wraps_like_numpy(algorithm):
    rng = np.random.default_rng(3)
    a = SCANS.get(algorithm)
    for n in (33, 1025, 9001):
        x = rng.integers(-2**31, 2**31 - 1, n, dtype=np.int32)
        for op, ref in (("add", np.cumsum(x, dtype=np.int8)), ("mul", np.cumprod(x, dtype=np.int8)),
                        ("max", np.maximum.accumulate(x, dtype=np.int8))):
            out = a.model(x, op=op, dtype=np.int8)
            assert out.dtype == np.int8
            np.testing.assert_array_equal(out, ref, err_msg=f"{algorithm} {op} n={n}")
        out = a.model(x, op="max", exclusive=True, dtype=np.int8)
        assert out[0] == -128  # the value dtype's identity


def test_bool_mask_counts_are_cumsum():
    rng = np.random.default_rng(5)
    mask = rng.random(10_000) < 0.3
    for name in SCANS.names():
        out = SCANS.get(name).model(mask)
        assert out.dtype == np.int64
        np.testing.assert_array_equal(out, np.cumsum(mask))
    assert REDUCTIONS.get("fast").model(mask) == np.sum(mask)


def test_bfloat16_models_round_once():
    rng = np.random.default_rng(9)
    values = rng.standard_normal(5000).astype(np.float32)
    x = float32_to_bfloat16(values)
    for name in ("decoupled_lookback", "hierarchical"):
        out = SCANS.get(name).model(x)
        assert out.dtype == BFLOAT16
        exact = np.cumsum(bfloat16_to_float32(x).astype(np.float64))
        mag = np.cumsum(np.abs(bfloat16_to_float32(x).astype(np.float64)))
        err = np.abs(bfloat16_to_float32(out).astype(np.float64) - exact)
        tol = SCANS.get(name).error_depth(5000) * np.finfo(np.float32).eps * mag + 2.0**-8 * np.abs(exact) + 1e-30
        assert np.all(err <= tol)
