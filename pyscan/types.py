"""Element types and operators shared by the scan and reduction patterns (PMPP §11.1: any associative operator with
an identity element), and NumPy's rules for what a scan or reduction of them returns.

Three types take part in every call (kernels/common/operators.cuh has their macros):

    input     x's dtype as stored                                   IN_TYPE
    value     the dtype of the result: NumPy's accumulator dtype     VALUE_TYPE (and OUT_TYPE, as stored)
              (result_dtype(); dtype= chooses it, as NumPy's dtype= does)
    compute   the type the kernels combine in: the value dtype       ELEM_TYPE (alias T)
              widened to at least 32 bits (compute_dtype())

A kernel loads x[i] as T(VALUE(x[i])) (op_load: converted to the result dtype first, as NumPy converts its input to
the accumulator dtype, then widened, which is exact) and stores VALUE(t) (op_store).  Integers narrower than 32 bits
are combined in 32 bits and cut to their width on the store: the same bits as combining in the narrow type for
every operator here (two's-complement add, mul and the bitwise operators commute with cutting to the low bits; max
and min never leave the narrow range, since every operand came through it).  float16 and bfloat16 are combined in
float32 and rounded once, on the store (np.cumsum of float16 rounds to float16 after every addition).

bfloat16 has no NumPy dtype; pyscan names it BFLOAT16 (a 2-byte structured dtype that no NumPy array is mistaken
for) and takes it from torch tensors (torch.bfloat16).

Custom operators (PyCUDA's InclusiveScanKernel(dtype, "a*b") / ReductionKernel(reduce_expr=...)): op= may be a C
expression in a and b with identity= (CustomOperator, OP_EXPR in the kernels).  NumPy has no accumulator rule for
them: the result dtype is x's unless dtype= says otherwise.  The kernels evaluate the expression with a and b of the
compute type and convert its value to the value dtype after every combine, so an expression combines values of the
result dtype whatever their width (a custom float16 sum rounds to float16 at every step, as np.add.accumulate does).
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from . import expressions
from .runtime.loader import Macro

# bfloat16 stands for torch.bfloat16 (NumPy has no bfloat16): its bits, named.
BFLOAT16 = np.dtype([("bfloat16", "<u2")])

# NumPy dtype -> the C type of the kernels (IN_TYPE / OUT_TYPE; cuda_fp16.h's __half, cuda_bf16.h's __nv_bfloat16).
ELEMENT_TYPES = {
    np.dtype(np.bool_): "bool",
    np.dtype(np.int8): "signed char",
    np.dtype(np.int16): "short",
    np.dtype(np.int32): "int",
    np.dtype(np.int64): "long long",
    np.dtype(np.uint8): "unsigned char",
    np.dtype(np.uint16): "unsigned short",
    np.dtype(np.uint32): "unsigned int",
    np.dtype(np.uint64): "unsigned long long",
    np.dtype(np.float16): "__half",
    BFLOAT16: "__nv_bfloat16",
    np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
}


def dtype_name(dtype) -> str:
    """A dtype's name in messages: "bfloat16" for BFLOAT16, else NumPy's."""
    dtype = np.dtype(dtype)
    return "bfloat16" if dtype == BFLOAT16 else str(dtype)


SUPPORTED_DTYPES = tuple(dtype_name(d) for d in ELEMENT_TYPES)
NUMPY_DTYPES = tuple(d for d in ELEMENT_TYPES if d != BFLOAT16)  # the ones a NumPy array can hold

# The value dtype -> the compute dtype the kernels combine in (T): at least 32 bits.
COMPUTE_TYPES = {
    np.dtype(np.bool_): np.dtype(np.int32),
    np.dtype(np.int8): np.dtype(np.int32),
    np.dtype(np.int16): np.dtype(np.int32),
    np.dtype(np.int32): np.dtype(np.int32),
    np.dtype(np.int64): np.dtype(np.int64),
    np.dtype(np.uint8): np.dtype(np.uint32),
    np.dtype(np.uint16): np.dtype(np.uint32),
    np.dtype(np.uint32): np.dtype(np.uint32),
    np.dtype(np.uint64): np.dtype(np.uint64),
    np.dtype(np.float16): np.dtype(np.float32),
    BFLOAT16: np.dtype(np.float32),
    np.dtype(np.float32): np.dtype(np.float32),
    np.dtype(np.float64): np.dtype(np.float64),
}

# Operator name -> (the OP macro value, the NumPy ufunc a NumPy user calls, the ufunc on the kernels' compute values:
# the logical operators combine 0/1 values, on which bitwise and/or are logical and/or).
OPERATORS = {
    "add": ("OP_ADD", np.add, np.add),
    "mul": ("OP_MUL", np.multiply, np.multiply),
    "max": ("OP_MAX", np.maximum, np.maximum),
    "min": ("OP_MIN", np.minimum, np.minimum),
    "bitwise_and": ("OP_BITWISE_AND", np.bitwise_and, np.bitwise_and),
    "bitwise_or": ("OP_BITWISE_OR", np.bitwise_or, np.bitwise_or),
    "bitwise_xor": ("OP_BITWISE_XOR", np.bitwise_xor, np.bitwise_xor),
    "logical_and": ("OP_LOGICAL_AND", np.logical_and, np.bitwise_and),
    "logical_or": ("OP_LOGICAL_OR", np.logical_or, np.bitwise_or),
}
OPERATOR_NAMES = tuple(OPERATORS)
ARITHMETIC = ("add", "mul")  # NumPy widens bool and narrow integers to 64 bits for these (np.cumsum, np.prod)
BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor")  # integers and bool only, as NumPy
LOGICAL = ("logical_and", "logical_or")  # bool results, as np.logical_and.accumulate / .reduce


def check_op(op):
    """op as the kernels and models take it: a name of OPERATORS or a CustomOperator (operator() makes one from an
    expression)."""
    if isinstance(op, CustomOperator):
        return op
    if not isinstance(op, str) or op not in OPERATORS:
        raise ValueError(f"unknown op {op!r}: expected one of {', '.join(map(repr, OPERATORS))}, or a C expression in "
                         "a and b with identity= (op='a * b', identity=1)")
    return op


@dataclass(frozen=True)
class CustomOperator:
    """op= as a C expression in a and b (pyscan.expressions) with its identity: OP_EXPR, OP_EXPRESSION(a, b) and
    OP_IDENTITY in the kernels (kernels/common/operators.cuh).  `identity` is the value as given; kernels and models
    take it converted to their dtype (check_identity() has made sure the result dtype holds it exactly).  `value`
    is set only for the step-models (bound()): the dtype each combine's result is converted to, as the kernels'
    op_combine converts to VALUE_TYPE; None: the compute type itself.  Equal expressions (the same tree) with equal
    identities are equal operators: their kernels are built once."""

    expression: expressions.Expression
    identity: object = field(compare=False)
    identity_key: str = ""
    value: np.dtype | None = None

    def bound(self, value) -> CustomOperator:
        """This operator as the models run it for a result dtype: each combine converted to `value`."""
        return CustomOperator(self.expression, self.identity, self.identity_key, check_dtype(value))

    def macros(self, value) -> dict:
        """OP_EXPRESSION and OP_IDENTITY for a result dtype `value`: the identity written exactly in its compute type."""
        value = check_dtype(value)
        compute = COMPUTE_TYPES[value]
        e = np.asarray(scalar_of(self.identity, value, "identity", exact=False)).astype(compute)[()]  # via the value
        return {"OP_EXPRESSION": Macro(self.expression.c, expressions.OPERATOR_VARIABLES,
                                       shown=f"op={self.expression.source!r}"),
                "OP_IDENTITY": Macro(expressions.c_literal(e, compute), shown=f"identity={self.identity!r}")}

    def __str__(self):
        return self.expression.source


def _identity_key(v) -> str:
    """One spelling per value (0, 0.0 and False are one identity; -0.0 is another): equal keys, equal kernels."""
    if isinstance(v, numbers.Integral):
        return repr(int(v))
    f = float(v)
    if math.isnan(f):
        return "nan"
    if f.is_integer() and math.copysign(1.0, f) > 0 or f.is_integer() and f != 0:  # not -0.0
        return repr(int(f))
    return float.hex(f)


def operator(op, identity=None):
    """op= as the kernels and models take it: a name of OPERATORS as it is (identity= checked later, against the
    result dtype: check_identity), or a CustomOperator for a C expression in a and b, which needs identity=.
    ExpressionError (a ValueError) for an expression pyscan does not take, quoting it; TypeError for a non-str."""
    if isinstance(op, CustomOperator):
        if identity is not None and _identity_key(_number(identity, "identity")) != op.identity_key:
            raise ValueError(f"op={op.expression.source!r} has identity {op.identity!r}; identity={identity!r} "
                             "disagrees")
        return op
    if isinstance(op, str) and op in OPERATORS:
        return op
    if not isinstance(op, str):
        raise TypeError(f"op must be a str: one of {', '.join(map(repr, OPERATORS))}, or a C expression in a and b "
                        f"(op='a * b', identity=1); got {type(op).__name__} {op!r}")
    if op.strip().isidentifier() and op.strip() not in expressions.OPERATOR_VARIABLES:
        raise ValueError(f"unknown op {op!r}: expected one of {', '.join(map(repr, OPERATORS))}, or a C expression "
                         "in a and b with identity= (op='a * b', identity=1)")
    try:
        expression = expressions.parse(op, expressions.OPERATOR_VARIABLES, "op")
    except expressions.ExpressionError as e:
        raise expressions.ExpressionError(f"{e}\nop= is one of {', '.join(map(repr, OPERATORS))}, or a C expression "
                                          "in a and b with identity= (op='a * b', identity=1)") from None
    if identity is None:
        raise ValueError(f"op={op!r}: a custom operator needs identity=, the value e with e op x == x == x op e "
                         "(0 for a + b, 1 for a * b, -inf or the lowest integer for max(a, b)): it pads partial "
                         "sections and starts exclusive scans (PMPP §11.1)")
    identity = _number(identity, "identity")
    return CustomOperator(expression, identity, _identity_key(identity))


def _number(v, what: str):
    """v as a Python bool, int or float (a NumPy scalar or 0-d array unwrapped); TypeError for anything else."""
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v[()]
    if isinstance(v, np.generic):
        if v.dtype.kind not in "biuf":
            raise TypeError(f"{what}: expected a real number (bool, int or float), got {dtype_name(v.dtype)} {v!r}")
        v = v.item()
    if isinstance(v, bool) or isinstance(v, numbers.Integral):
        return v if isinstance(v, bool) else int(v)
    if isinstance(v, numbers.Real):
        return float(v)
    raise TypeError(f"{what}: expected a real number (bool, int or float), got {type(v).__name__} {v!r}")


def scalar_of(v, dtype, what: str, *, exact: bool):
    """v (a Python or NumPy number) as a NumPy scalar of dtype (BFLOAT16: its float32 value, as the models hold it).
    Integers must fit; a float for an integer dtype must be integral; exact=True (an identity): a float dtype must
    hold v exactly (0.1 is no float32 identity), exact=False (an initial value): rounded to nearest, as NumPy
    converts.  ValueError saying what was expected, TypeError for a non-number."""
    dtype = check_dtype(dtype)
    v = _number(v, what)
    name = dtype_name(dtype)
    if dtype.kind == "b":
        if v not in (0, 1) or (isinstance(v, float) and math.isnan(v)):
            raise ValueError(f"{what}={v!r}: the result dtype is bool, which holds False and True (0 and 1)")
        return np.bool_(bool(v))
    if dtype.kind in "iu":
        if isinstance(v, float) and not (math.isfinite(v) and v == int(v)):
            raise ValueError(f"{what}={v!r}: the result dtype is {name}, which holds integers only"
                             + (" (the lowest integer, np.iinfo(dtype).min, is max's identity)" if v == -math.inf
                                else ""))
        info = np.iinfo(dtype)
        if not info.min <= int(v) <= info.max:
            raise ValueError(f"{what}={v!r} does not fit in the result dtype {name} ({info.min} .. {info.max})")
        return dtype.type(int(v))
    as32 = dtype == BFLOAT16
    with np.errstate(over="ignore"):
        held = (bfloat16_to_float32(float32_to_bfloat16(np.float32([np.float64(v)])))[0] if as32
                else np.asarray(v, dtype=np.float64).astype(dtype)[()])
    if exact and not (float(held) == v or (math.isnan(float(held)) and math.isnan(v))):
        raise ValueError(f"{what}={v!r} is not exactly a value of the result dtype {name} (the nearest is "
                         f"{float(held)!r}): an identity must be exact")
    if not exact and math.isinf(float(held)) and math.isfinite(v):
        raise ValueError(f"{what}={v!r} overflows the result dtype {name}")
    return held


def _identity_in(op: CustomOperator, dtype):
    return scalar_of(op.identity, dtype, "identity", exact=False)


def check_identity(op, value, given=None) -> None:
    """ValueError unless the identity fits the result dtype `value`: a CustomOperator's exactly; `given` (identity=
    with a named operator) must be that operator's own identity for the dtype: it can only repeat it."""
    value = check_dtype(value)
    if isinstance(op, CustomOperator):
        scalar_of(op.identity, value, "identity", exact=True)
        return
    if given is None:
        return
    held = float(scalar_of(given, value, "identity", exact=True))
    own = float(identity(op, value))
    if not (held == own or (math.isnan(held) and math.isnan(own))):
        raise ValueError(f"identity={given!r} is not the identity of op {op!r} for {dtype_name(value)} "
                         f"({np.asarray(identity(op, value)).item()!r}): give identity= with a named operator only as "
                         "its own identity, or leave it out")


class ExpressionUfunc:
    """A CustomOperator on NumPy arrays, the step-models' stand-in for a ufunc: f(a, b), f.accumulate(values, axis)
    (left to right, one combine at a time, as the kernels' sequential loops) and f.reduce.  a and b are compute
    values; the expression's value is converted to the value dtype (if the operator is bound()) and back to the
    compute type, as op_combine does."""

    def __init__(self, op: CustomOperator):
        self.op = op

    def __call__(self, a, b, out=None):
        a, b = np.asarray(a), np.asarray(b)
        compute = np.result_type(a.dtype, b.dtype)
        result = self.op.expression.evaluate(a.astype(compute, copy=False), b.astype(compute, copy=False))
        value = self.op.value
        if value is None or value == compute:
            result = np.asarray(to_value(result, compute))
        else:
            result = load(to_value(result, value), Types(value, value, compute))
        if out is not None:
            out[...] = result
            return out
        return result

    def accumulate(self, values, axis=0, dtype=None, out=None):
        values = np.asarray(values) if dtype is None else np.asarray(values).astype(dtype)
        moved = np.moveaxis(values, axis, 0)
        result = np.empty_like(moved)
        if moved.shape[0]:
            result[0] = moved[0]
            for k in range(1, moved.shape[0]):
                result[k] = self(result[k - 1], moved[k])
        result = np.moveaxis(result, 0, axis)
        if out is not None:
            out[...] = result
            return out
        return result

    def reduce(self, values, axis=0, dtype=None):
        return np.take(self.accumulate(values, axis, dtype), -1, axis=axis)


def as_dtype(dtype) -> np.dtype:
    """np.dtype(dtype), also for torch dtypes (torch.bfloat16 -> BFLOAT16) and the string "bfloat16"."""
    if isinstance(dtype, np.dtype):
        return dtype
    if dtype == "bfloat16":
        return BFLOAT16
    if type(dtype).__module__ == "torch":
        name = str(dtype).rpartition(".")[2]
        return BFLOAT16 if name == "bfloat16" else np.dtype(np.bool_ if name == "bool" else name)
    return np.dtype(dtype)


def check_dtype(dtype, supported=None) -> np.dtype:
    try:
        dtype = as_dtype(dtype)
    except TypeError:
        raise TypeError(f"unsupported dtype {dtype!r}: expected one of {', '.join(SUPPORTED_DTYPES)}") from None
    supported = ELEMENT_TYPES if supported is None else supported
    if dtype not in supported:
        names = ", ".join(dtype_name(d) for d in supported)
        hint = " (complex dtypes are not supported: scan the real and imaginary parts, x.real and x.imag, for add)" \
            if dtype.kind == "c" else ""
        raise TypeError(f"unsupported dtype {dtype_name(dtype)}: expected one of {names}{hint}")
    return dtype


@functools.lru_cache(maxsize=1024)
def _check_expression(expression, compute: np.dtype) -> None:
    expression.result_type(compute, compute)  # TypeError where an operator takes integers and gets a float


def _default_result(dtype: np.dtype, op: str) -> np.dtype:
    if op in LOGICAL:
        return np.dtype(np.bool_)
    if op in ARITHMETIC and (dtype.kind == "b" or (dtype.kind in "iu" and dtype.itemsize < 8)):
        return np.dtype(np.uint64 if dtype.kind == "u" else np.int64)  # np.cumsum / np.sum / np.prod on Linux
    return dtype


def _check_op_dtype(dtype: np.dtype, op: str, what: str) -> None:
    if op in BITWISE and dtype.kind not in "biu":
        raise TypeError(f"op {op!r} takes integers and bool (as np.{op} does), got {what} {dtype_name(dtype)}")


_results: dict = {}  # (dtype, op) -> result dtype: the hot path's look-up


def result_dtype(dtype, op: str, requested=None) -> np.dtype:
    """The dtype a scan or reduction of `dtype` with `op` returns, NumPy's accumulator rule:

    * add and mul of bool and of integers narrower than 64 bits: int64 (unsigned: uint64), as np.cumsum, np.sum,
      np.cumprod and np.prod give on Linux; 64-bit integers and floats keep their dtype (float16 and bfloat16 too:
      they are combined in float32 and rounded once, compute_dtype());
    * max, min and the bitwise operators keep the input dtype (the bitwise ones take integers and bool only: a
      TypeError for floats, as NumPy's);
    * logical_and, logical_or: bool, as np.logical_and.accumulate / .reduce.

    requested (dtype=): the accumulator and result dtype, as NumPy's dtype= (the input converted to it on load;
    logical operators take only bool).

    A CustomOperator (a C expression): x's dtype, or dtype= (NumPy has no rule for an expression); TypeError where
    the expression applies an integer operator (%, <<, &, ~ ...) to the compute type's floats."""
    if requested is None:
        key = (dtype, op)
        found = _results.get(key)
        if found is not None:
            return found
    check_op(op)
    dtype = check_dtype(dtype)
    if isinstance(op, CustomOperator):
        result = dtype if requested is None else check_dtype(requested)
        _check_expression(op.expression, COMPUTE_TYPES[result])
        if requested is None and len(_results) < 4096:
            _results[(dtype, op)] = result
        return result
    _check_op_dtype(dtype, op, "x of dtype")
    if requested is None:
        result = _default_result(dtype, op)
        if len(_results) < 4096:
            _results[(dtype, op)] = result
        return result
    result = check_dtype(requested)
    if op in LOGICAL and result != np.bool_:
        raise TypeError(f"op {op!r} gives bool (as np.{op}.accumulate does), got dtype={dtype_name(result)}")
    _check_op_dtype(result, op, "dtype=")
    if (dtype, op) not in _results and len(_results) < 4096:  # (dtype, op) seen: the next call with dtype= is hot
        try:
            _check_op_dtype(dtype, op, "x of dtype")
            _results[(dtype, op)] = _default_result(dtype, op)
        except TypeError:
            pass
    return result


_requested: dict = {}  # (dtype, op, dtype= as the caller gave it) -> result dtype: the hot path's look-up


def requested_result(dtype, op: str, requested) -> np.dtype:
    """result_dtype(dtype, op, requested), cached per (dtype, op, requested) where `requested` is hashable: the commonest
    call with dtype= (the like-for-like call beside torch.sum(x, dtype=x.dtype)) looks it up instead of checking it."""
    key = (dtype, op, requested)
    try:
        found = _requested.get(key)
    except TypeError:  # an unhashable dtype= (checked, not kept)
        return result_dtype(dtype, op, requested)
    if found is None:
        found = result_dtype(dtype, op, requested)
        if len(_requested) < 4096:
            _requested[key] = found
    return found


def compute_dtype(value) -> np.dtype:
    """The dtype the kernels combine `value` (a result dtype) in: at least 32 bits (ELEM_TYPE)."""
    return COMPUTE_TYPES[check_dtype(value)]


class Types(NamedTuple):
    """The three types of one call: input (x's), value (the result's) and compute (what the kernels combine in)."""

    input: np.dtype
    value: np.dtype
    compute: np.dtype

    @classmethod
    def of(cls, dtype, op: str, requested=None) -> Types:
        dtype = check_dtype(dtype)
        value = result_dtype(dtype, op, requested)
        return cls(dtype, value, COMPUTE_TYPES[value])

    @property
    def widest(self) -> int:
        """The widest element size of input and compute (the compute type is at least as wide as the value)."""
        return max(self.input.itemsize, self.compute.itemsize)


def c_type(dtype) -> str:
    return ELEMENT_TYPES[check_dtype(dtype)]


def op_macro(op) -> str:
    return "OP_EXPR" if isinstance(op, CustomOperator) else OPERATORS[check_op(op)][0]


def ufunc(op):
    """The NumPy ufunc that combines the kernels' compute values: np.add, np.multiply, np.maximum, np.minimum, the
    bitwise ufuncs; for logical_and / logical_or, whose values are 0/1, np.bitwise_and / np.bitwise_or; for a
    CustomOperator its ExpressionUfunc (C's rules, pyscan.expressions)."""
    if isinstance(op, CustomOperator):
        return ExpressionUfunc(op)
    return OPERATORS[check_op(op)][2]


def numpy_ufunc(op):
    """The NumPy ufunc a NumPy user would call for `op` (np.logical_and for logical_and; a CustomOperator's
    ExpressionUfunc)."""
    if isinstance(op, CustomOperator):
        return ExpressionUfunc(op)
    return OPERATORS[check_op(op)][1]


def identity(op, dtype):
    """The identity of `op` for `dtype`, as a NumPy scalar: 0 (add, or, xor); 1 (mul, logical and); all ones
    (bitwise and); the lowest value or -inf (max); the highest or +inf (min).  bool: False or True."""
    dtype = check_dtype(dtype)
    check_op(op)
    if dtype == BFLOAT16:
        return identity(op, np.float32)  # its compute values (models work on them)
    if isinstance(op, CustomOperator):
        return _identity_in(op, dtype)
    if op in ("add", "bitwise_or", "bitwise_xor", "logical_or"):
        return dtype.type(0)
    if op in ("mul", "logical_and"):
        return dtype.type(1)
    if op == "bitwise_and":
        return dtype.type(True) if dtype.kind == "b" else dtype.type(-1 if dtype.kind == "i" else np.iinfo(dtype).max)
    if dtype.kind == "b":
        return dtype.type(op == "min")
    if dtype.kind == "f":
        return dtype.type(-np.inf if op == "max" else np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.min if op == "max" else info.max)


def defines(dtype, op, result=None, *, out=None, map=None) -> dict:
    """The #defines that specialise a kernel: x of `dtype` (IN_TYPE), combined with `op` (OP) into values of `result`
    (VALUE_TYPE; default: dtype itself, which is what a kernel that works on one type takes), in the compute type
    (ELEM_TYPE), stored as `out` (OUT_TYPE; default: the value type; a driver's intermediate arrays use the compute
    type).  A CustomOperator adds OP_EXPRESSION(a, b) and OP_IDENTITY (its identity as an exact literal of the
    compute type); `map` (an Expression in x and i: pyscan.reduce's map=) adds MAP_EXPRESSION(x, i) and MAP_X_TYPE,
    the type x has in it (x's dtype widened to at least 32 bits: its own compute type)."""
    dtype = check_dtype(dtype)
    value = dtype if result is None else check_dtype(result)
    compute = COMPUTE_TYPES[value]
    stored = value if out is None else check_dtype(out)
    macros = {"IN_TYPE": ELEMENT_TYPES[dtype], "VALUE_TYPE": ELEMENT_TYPES[value], "ELEM_TYPE": ELEMENT_TYPES[compute],
              "OUT_TYPE": ELEMENT_TYPES[stored], "OP": op_macro(op)}
    if isinstance(op, CustomOperator):
        macros.update(op.macros(value))
    if map is not None:
        macros["MAP_EXPRESSION"] = Macro(map.c, expressions.MAP_VARIABLES, shown=f"map={map.source!r}")
        macros["MAP_X_TYPE"] = ELEMENT_TYPES[COMPUTE_TYPES[dtype]]
    return macros


# --- conversions on the host, as the kernels' op_load / op_store do them (the models' and tests' side) ----------

def bfloat16_to_float32(bits: np.ndarray) -> np.ndarray:
    """BFLOAT16 (or uint16) bits -> float32 values (exact)."""
    return (np.asarray(bits).view(np.uint16).astype(np.uint32) << 16).view(np.float32)


def float32_to_bfloat16(values: np.ndarray) -> np.ndarray:
    """float32 -> BFLOAT16 bits, rounded to nearest even (__float2bfloat16_rn; NaN stays NaN)."""
    f = np.ascontiguousarray(values, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    rounded = np.where(np.isnan(f), np.uint16(0x7FC0), rounded)
    return rounded.view(BFLOAT16)


def to_value(x: np.ndarray, value: np.dtype) -> np.ndarray:
    """x converted to the value dtype, as the kernels' load does (NumPy's cast; bool: nonzero; bfloat16: rounded)."""
    x = np.asarray(x)
    if x.dtype == value:
        return x
    if x.dtype == BFLOAT16:
        x = bfloat16_to_float32(x)
    if value == BFLOAT16:
        return float32_to_bfloat16(x.astype(np.float64).astype(np.float32))
    with np.errstate(invalid="ignore", over="ignore"):
        return x.astype(value)


def load(x: np.ndarray, types: Types) -> np.ndarray:
    """op_load on the host: x as the kernels' compute values, T(VALUE(x))."""
    v = to_value(x, types.value)
    return bfloat16_to_float32(v) if v.dtype == BFLOAT16 else v.astype(types.compute)


def store(values: np.ndarray, types: Types) -> np.ndarray:
    """op_store on the host: compute values as the value dtype (rounded to nearest for float16 and bfloat16; cut to
    the width for integers; nonzero for bool)."""
    values = np.asarray(values)
    if types.value == BFLOAT16:
        return float32_to_bfloat16(values)
    with np.errstate(invalid="ignore", over="ignore"):
        return values.astype(types.value)


def check_model_input(x, op):
    """Validate the input of a NumPy step-model: a 1-D array of a compute dtype (the models work on the kernels'
    compute values; pyscan.registry's model wrapper converts any dtype), and a known operator."""
    check_op(op)
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"expected a 1-D array, got shape {x.shape}")
    check_dtype(x.dtype, set(COMPUTE_TYPES.values()))
    return x


def parse_map(map) -> expressions.Expression:
    """map= as an Expression in x and i (pyscan.expressions; ExpressionError quoting it, TypeError for a non-str)."""
    if isinstance(map, expressions.Expression) and map.variables == expressions.MAP_VARIABLES:
        return map
    return expressions.parse(map, expressions.MAP_VARIABLES, "map")


def mapped_types(dtype, op, map: expressions.Expression, requested=None) -> Types:
    """The three types of a reduction with map=: the input x's; the value dtype= (the mapped values' and the
    result's), by default what result_dtype() gives x's dtype; its compute type.  With dtype= the mapped values are
    of that dtype whatever x's (a bitwise operator over a map of floats takes dtype=np.int32).  TypeError where the
    map applies an integer operator to x's floats."""
    dtype = check_dtype(dtype)
    if requested is not None and not isinstance(op, CustomOperator):
        value = result_dtype(requested, op, requested)
    else:
        value = result_dtype(dtype, op, requested)
    map.result_type(COMPUTE_TYPES[dtype], np.dtype(np.int64))
    return Types(dtype, value, COMPUTE_TYPES[value])


def map_values(x: np.ndarray, map: expressions.Expression, types: Types) -> np.ndarray:
    """What a reduction with map= combines, on the host as the kernels' op_load_at does it: x[i] in its own compute
    type (x's dtype widened to at least 32 bits) and i (int64) through the map, the map's value converted to the value
    dtype, then widened to the compute type."""
    own = Types(types.input, types.input, COMPUTE_TYPES[types.input])
    mapped = map.evaluate(load(x, own), np.arange(x.size, dtype=np.int64))
    return load(to_value(mapped, types.value), Types(types.value, types.value, types.compute))


def initial_compute(initial, types: Types):
    """initial= as the kernels take it: converted to the value dtype (rounded to nearest for floats; integers must
    fit), then widened to the compute type."""
    held = scalar_of(initial, types.value, "initial", exact=False)
    return np.asarray(held).astype(types.compute)[()]


def typed_model(inner, *, scan: bool):
    """A step-model of any dtype and dtype= from `inner`, a model of the compute values: x converted on load as the
    kernels do (load()), `inner` run on the compute values, the result stored as the value dtype (store()); an
    exclusive scan starts with the value dtype's identity.  Models that need the input's element size (the fast
    kernels' vector widths) take a `types=` keyword (`inner.takes_types = True`).

    As the public calls, the model takes op= as a C expression with identity= (a CustomOperator, bound to the value
    dtype so that each combine is converted as the kernels' op_combine does), initial= (combined with every result
    afterwards, as the GPU's extra pass does: kernels/scan/combine_initial.cu) and, for reductions, map= (the
    mapped values are what the inner model reduces: map_values())."""

    def model(x, *, op="add", exclusive=False, return_steps=False, dtype=None, initial=None, map=None, **more):
        if not scan and not isinstance(x, np.ndarray):  # the reduction models' contract (reductions/_common.py)
            raise TypeError(f"{model.__name__}: x: the model takes a numpy.ndarray, got {type(x).__name__}")
        x = np.asarray(x)
        given = more.pop("identity", None)
        op = operator(op, given)
        if map is not None:
            if scan:
                raise TypeError("map= belongs to reductions (pyscan.reduce); a scan takes none: map x first")
            map = parse_map(map)
            types = mapped_types(x.dtype, op, map, dtype)
        else:
            types = Types.of(x.dtype, op, dtype)
        check_identity(op, types.value, given)
        start = initial_compute(initial, types) if initial is not None else None
        if isinstance(op, CustomOperator):
            op = op.bound(types.value)
        if getattr(inner, "takes_types", False):
            more["types"] = types
        compute = map_values(x, map, types) if map is not None else load(x, types)
        kw = {"exclusive": exclusive} if scan else {}
        out = inner(compute, op=op, return_steps=return_steps, **kw, **more)
        result, steps = out if return_steps else (out, None)
        widened = Types(types.value, types.value, types.compute)
        if scan:
            result = store(result, types)
            if exclusive and result.size:
                result[0] = identity(op, types.value) if types.value != BFLOAT16 else float32_to_bfloat16(
                    np.float32([identity(op, np.float32)]))[0]
            if start is not None and result.size:
                result = store(ufunc(op)(start, load(result, widened)), types)
                if exclusive:
                    result[0] = store(np.asarray([start]), types)[0]
        else:
            result = store(np.asarray([result]), types)
            if start is not None:
                result = store(ufunc(op)(start, load(result, widened)), types)
            result = result[0]
        return (result, steps) if return_steps else result

    model.__name__ = getattr(inner, "__name__", "model")
    model.__doc__ = inner.__doc__
    model.compute_model = inner
    return model
