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
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

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


def check_op(op) -> str:
    if not isinstance(op, str) or op not in OPERATORS:
        raise ValueError(f"unknown op {op!r}: expected one of {', '.join(map(repr, OPERATORS))}")
    return op


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
    logical operators take only bool)."""
    if requested is None:
        key = (dtype, op)
        found = _results.get(key)
        if found is not None:
            return found
    check_op(op)
    dtype = check_dtype(dtype)
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
    return result


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
    return OPERATORS[check_op(op)][0]


def ufunc(op):
    """The NumPy ufunc that combines the kernels' compute values: np.add, np.multiply, np.maximum, np.minimum, the
    bitwise ufuncs; for logical_and / logical_or, whose values are 0/1, np.bitwise_and / np.bitwise_or."""
    return OPERATORS[check_op(op)][2]


def numpy_ufunc(op):
    """The NumPy ufunc a NumPy user would call for `op` (np.logical_and for logical_and)."""
    return OPERATORS[check_op(op)][1]


def identity(op, dtype):
    """The identity of `op` for `dtype`, as a NumPy scalar: 0 (add, or, xor); 1 (mul, logical and); all ones
    (bitwise and); the lowest value or -inf (max); the highest or +inf (min).  bool: False or True."""
    dtype = check_dtype(dtype)
    check_op(op)
    if dtype == BFLOAT16:
        return identity(op, np.float32)  # its compute values (models work on them)
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


def defines(dtype, op, result=None, *, out=None) -> dict:
    """The #defines that specialise a kernel: x of `dtype` (IN_TYPE), combined with `op` (OP) into values of `result`
    (VALUE_TYPE; default: dtype itself, which is what a kernel that works on one type takes), in the compute type
    (ELEM_TYPE), stored as `out` (OUT_TYPE; default: the value type; a driver's intermediate arrays use the compute
    type)."""
    dtype = check_dtype(dtype)
    value = dtype if result is None else check_dtype(result)
    compute = COMPUTE_TYPES[value]
    stored = value if out is None else check_dtype(out)
    return {"IN_TYPE": ELEMENT_TYPES[dtype], "VALUE_TYPE": ELEMENT_TYPES[value], "ELEM_TYPE": ELEMENT_TYPES[compute],
            "OUT_TYPE": ELEMENT_TYPES[stored], "OP": op_macro(op)}


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


def typed_model(inner, *, scan: bool):
    """A step-model of any dtype and dtype= from `inner`, a model of the compute values: x converted on load as the
    kernels do (load()), `inner` run on the compute values, the result stored as the value dtype (store()); an
    exclusive scan starts with the value dtype's identity.  Models that need the input's element size (the fast
    kernels' vector widths) take a `types=` keyword (`inner.takes_types = True`)."""

    def model(x, *, op="add", exclusive=False, return_steps=False, dtype=None, **more):
        if not scan and not isinstance(x, np.ndarray):  # the reduction models' contract (reductions/_common.py)
            raise TypeError(f"{model.__name__}: x: the model takes a numpy.ndarray, got {type(x).__name__}")
        x = np.asarray(x)
        types = Types.of(x.dtype, op, dtype)
        if getattr(inner, "takes_types", False):
            more["types"] = types
        compute = load(x, types)
        kw = {"exclusive": exclusive} if scan else {}
        out = inner(compute, op=op, return_steps=return_steps, **kw, **more)
        result, steps = out if return_steps else (out, None)
        if scan:
            result = store(result, types)
            if exclusive and result.size:
                result[0] = identity(op, types.value) if types.value != BFLOAT16 else float32_to_bfloat16(
                    np.float32([identity(op, np.float32)]))[0]
        else:
            result = store(np.asarray([result]), types)[0]
        return (result, steps) if return_steps else result

    model.__name__ = getattr(inner, "__name__", "model")
    model.__doc__ = inner.__doc__
    model.compute_model = inner
    return model
