"""Custom operators (op= a C expression with identity=), map= and initial=, without a GPU: the expression grammar and
its messages, the C the kernels get (checked against real C: the expressions and the identities' literals compiled
for the CPU by nvcc's host compiler), the #defines, the kernels compiled by nvcc for representative dtypes, every
step-model against a left-to-right reference, the errors raised before any GPU work, and the public dispatch on
test_interop's fake device.  The same cases on the GPU: tests/gpu/test_custom_operators_gpu.py."""

import dataclasses
import math
import re
import shutil
import subprocess

import numpy as np
import pytest
from bad_input_checks import raises_clearly
from custom_checks import (
    AFFINE,
    AFFINE_IDENTITY,
    AFFINE_SIGNED,
    DTYPES,
    OPS,
    affine_maps,
    affine_reference,
    check_reduce,
    check_scan,
    expression,
    identity_for,
    make,
)
from test_interop import FakeDeviceArray, _host, fake_gpu  # noqa: F401  (the fake device's fixture)

import pyscan
from pyscan import expressions, types
from pyscan.errors import ExpressionCompileError, KernelCompileError
from pyscan.expressions import ExpressionError, c_literal, parse
from pyscan.reductions import REDUCTIONS
from pyscan.runtime import loader
from pyscan.scans import SCANS
from pyscan.types import BFLOAT16, CustomOperator, defines, operator, result_dtype

NVCC = shutil.which("nvcc")
HOST_CXX = shutil.which("g++") or shutil.which("c++")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
ALL_DTYPES = tuple(types.ELEMENT_TYPES)


def _id(v):
    return np.dtype(v).name if isinstance(v, type) or isinstance(v, np.dtype) else str(v)


# ------------------------------------------------------------------------------------------------- the grammar

@pytest.mark.parametrize("source, c", [
    ("a+b", "(a + b)"),
    ("  a *   b ", "(a * b)"),
    ("max(a,b)", "pyscan_max(a, b)"),
    ("a > b ? a : b", "((a > b) ? a : b)"),
    ("(long long)a * b", "(((long long)a) * b)"),
    ("-a + ~b - !a", "(((-a) + (~b)) - (!a))"),
    ("a + b + 1", "((a + b) + 1)"),
    ("a << 2 | b & 0xffu", "((a << 2) | (b & 0xffu))"),
    ("1.5f * a + 2e-3", "((1.5f * a) + 2e-3)"),
    ("a && b || !a", "((a && b) || (!a))"),
    ("fmax(fabs(a), sqrt(b))", "pyscan_fmax(pyscan_fabs(a), pyscan_sqrt(b))"),
    ("a == b ? a : a != b ? b : 0", "((a == b) ? a : ((a != b) ? b : 0))"),
    ("(unsigned long long)a", "((unsigned long long)a)"),
    ("abs(a) >= abs(b) ? a : b", "((pyscan_abs(a) >= pyscan_abs(b)) ? a : b)"),
])
def test_expressions_are_written_back_from_the_tree(source, c):
    e = parse(source)
    assert e.c == c
    assert e.source == source and str(e) == source


def test_equal_trees_are_equal_operators_whatever_the_spacing():
    assert parse("a+b") == parse(" a + b ") and hash(parse("a+b")) == hash(parse("a   +b"))
    assert parse("a+b") != parse("b+a")
    assert operator("a+b", 0) == operator("a + b", 0.0) != operator("a + b", 1)
    assert operator("a+b", np.int64(0)) == operator("a+b", 0)
    nan = operator("fmax(a, b)", float("nan"))
    assert nan == operator("fmax(a,b)", np.nan)  # a NaN identity still names one operator (cache keys)


@pytest.mark.parametrize("source, words", [
    ("a;b", "';' is a statement separator"),
    ("{a}", "'{' is a block"),
    ("a}", "'}' is a block"),
    ("#define a b", "preprocessor"),
    ('a + "b"', "string literal"),
    ("a + 'b'", "character literal"),
    ("a \\\n+ b", "backslash"),
    ("a\n+b", "newline"),
    ("a // b", "starts a comment"),
    ("a /* b */", "starts a comment"),
    ("a = b", "assignment"),
    ("a += b", "assignment"),
    ("a[0]", "indexing"),
    ("a.b", "member access"),
    ("a -> b", "unexpected '>'|expected"),
    ("a++", "expected a number"),
    ("c", "unknown name 'c'.*a and b"),
    ("pow(a, b)", r"pow\(\) is not a function.*max, min"),
    ("max(a)", r"max\(\) takes 2 arguments, got 1"),
    ("sqrt(a, b)", r"sqrt\(\) takes 1 argument, got 2"),
    ("010 + a", "octal"),
    ("1.5L * a", "suffix 'L'"),
    ("1uu + a", "suffix 'uu'"),
    ("0x1p3 + a", "suffix 'p3'"),
    ("99999999999999999999999 + a", "does not fit"),
    ("", "empty"),
    ("   ", "empty"),
    ("(a + b", r"expected '\)'"),
    ("a + b)", r"unexpected '\)'"),
    ("a ? b", "expected ':'"),
    ("(long short)a", r"\(long short\) is not a cast"),
    ("int + a", "type name"),
    ("max + a", "is a function: call it"),
    ("a $ b", "not C"),
    ("a @ b", "not C"),
])
def test_what_is_not_an_expression_is_refused_clearly(source, words):
    with pytest.raises(ExpressionError, match=words) as info:
        parse(source)
    text = str(info.value)
    assert text.startswith(f"op={source!r}: ")  # the expression quoted
    assert "^" in text  # and the place marked


def test_a_map_has_its_own_variables():
    assert parse("x * x + i", expressions.MAP_VARIABLES, "map").c == "((x * x) + i)"
    with pytest.raises(ExpressionError, match=r"map='a \* b'.*unknown name 'a'.*x and i"):
        parse("a * b", expressions.MAP_VARIABLES, "map")
    with pytest.raises(TypeError, match="expected a str"):
        parse(3)


@pytest.mark.parametrize("source", ["a % b", "~a", "a << 1", "a & b", "a ^ b", "a | 1", "(a % b) + 1"])
def test_integer_operators_refuse_floats_before_nvcc(source):
    for dtype in (np.int32, np.uint64):
        parse(source).result_type(dtype, dtype)  # fine for integers
    with pytest.raises(TypeError, match="takes integers.*float"):
        parse(source).result_type(np.float32, np.float32)
    assert parse(f"(int){source.replace('a', '((int)a)').replace('b', '((int)b)')}").result_type(
        np.float64, np.float64) == np.int32  # after a cast they are integers


# ----------------------------------------------------------------------------------------- C's rules in NumPy

@pytest.mark.parametrize("source, a, b, dtype, want, want_type", [
    ("a / b", -7, 2, np.int32, -3, np.int32),  # C truncates toward zero
    ("a % b", -7, 2, np.int32, -1, np.int32),  # the sign of the dividend
    ("a / b", 7, -2, np.int64, -3, np.int64),
    ("a < b", -1, 1, np.int32, 1, np.int32),
    ("a < 1u", -1, 0, np.int32, 0, np.int32),  # int vs unsigned: -1 becomes 4294967295 (the result is int 0)
    ("(unsigned)a", -1, 0, np.int32, 4294967295, np.uint32),
    ("a + 3000000000", 1, 0, np.int32, 3000000001, np.int64),  # a decimal literal past int is long long
    ("a + 0xffffffff", 0, 0, np.int32, 4294967295, np.uint32),  # a hex one is unsigned int
    ("a + 0.5", 1, 0, np.float32, 1.5, np.float64),  # a float and a double give a double
    ("a + 0.5f", 1, 0, np.float32, 1.5, np.float32),
    ("max(a, b)", np.nan, 1.0, np.float32, 1.0, np.float32),  # CUDA's max of floats ignores NaN (fmaxf)
    ("min(a, b)", 2.0, np.nan, np.float64, 2.0, np.float64),
    ("max(a, 0)", -3.0, 0, np.float32, 0.0, np.float32),  # mixed: the common type
    ("abs(a)", -2**31, 0, np.int32, -2**31, np.int32),  # wraps, as np.abs and the GPU's negate on unsigned
    ("abs(a)", -2.5, 0, np.float32, 2.5, np.float32),
    ("fabs(a)", -3, 0, np.int32, 3.0, np.float64),  # <cmath> of an integer: double
    ("sqrt(a)", 16, 0, np.int64, 4.0, np.float64),
    ("floor(a) + ceil(b)", -1.5, 1.25, np.float32, -2.0 + 2.0, np.float32),
    ("trunc(a)", -1.75, 0, np.float64, -1.0, np.float64),
    ("a ? 1 : 2.0", 0, 0, np.int32, 2.0, np.float64),
    ("!a", np.nan, 0, np.float32, 0, np.int32),  # NaN is true in C
    ("a && b", 2, 3, np.int64, 1, np.int32),
    ("(bool)a + (char)b", 5, 300, np.int32, 1 + 44, np.int32),
    ("-a", 1, 0, np.uint32, 4294967295, np.uint32),
    ("a >> 1", -8, 0, np.int32, -4, np.int32),  # arithmetic shift of a signed value
    ("a << b", 1, 40, np.uint64, 2**40, np.uint64),
    ("a * b", 2**31 - 1, 2, np.int32, -2, np.int32),  # wraps (undefined in C, what the GPU does)
])
def test_numpy_evaluates_with_cs_rules(source, a, b, dtype, want, want_type):
    e = parse(source)
    got = e.evaluate(np.array([a], dtype), np.array([b], dtype))
    assert got.dtype == np.dtype(want_type), (source, got.dtype)
    assert got[0] == want, (source, got[0], want)
    assert e.result_type(dtype, dtype) == np.dtype(want_type)


# Expressions x types x operands for the check against real C below: what the kernels' op_combine computes,
# T(OP_EXPRESSION(a, b)) with a and b of the compute type T, for the CPU (nvcc's host compiler).
INTS = [(-7, 2), (7, -2), (13, 4), (-1, 7), (5, 1), (0, 3), (-100, -9)]
UINTS = [(7, 2), (4000000000, 3), (0, 5), (13, 4), (1, 4294967295)]
FLOATS = [(1.5, -2.25), (0.1, 3.0), (-0.0, 0.0), (1e30, 1e-30), (-7.75, 2.5), (3.0, np.inf), (-np.inf, 1.0)]
NANS = FLOATS + [(np.nan, 1.0), (2.0, np.nan), (np.nan, np.nan)]
C_CASES = [
    (np.int32, "a / b", INTS), (np.int32, "a % b", INTS), (np.int32, "a + b + 1", INTS), (np.int32, "-a + ~b", INTS),
    (np.int32, "!a + (a < b) * 2", INTS), (np.int32, "a << 3 | b >> 1", INTS), (np.int32, "a > b ? a : b", INTS),
    (np.int32, "abs(a) + max(a, b) - min(a, 0u)", INTS), (np.int32, "a * 3000000000", INTS),
    (np.int32, "(short)(a * 5000) + (char)(b * 77)", INTS), (np.int32, "fmax(a, b) + sqrt(abs(a))", INTS),
    (np.int32, "a && b || !a", INTS), (np.int32, "(unsigned)a < b", INTS), (np.int32, "0xffffffff & a", INTS),
    (np.uint32, "a - b", UINTS), (np.uint32, "a / b + a % b", UINTS), (np.uint32, "-a", UINTS),
    (np.uint32, "a < -1", UINTS), (np.uint32, "max(a, b) ^ (a >> 1)", UINTS), (np.uint32, "(int)a < 0", UINTS),
    (np.int64, "a * b - 1", INTS), (np.int64, "a / b", INTS), (np.int64, "(a ^ b) | 1", INTS),
    (np.int64, "min(a, b) + abs(a)", INTS), (np.int64, "a + 4294967296u", INTS),
    (np.uint64, "a + b", UINTS), (np.uint64, "a * b", UINTS), (np.uint64, "~a >> 3", UINTS),
    (np.uint64, "a < 1 ? a : b", UINTS),
    (np.float32, "a + b", NANS), (np.float32, "a * b", NANS), (np.float32, "max(a, b)", NANS),
    (np.float32, "min(a, b)", NANS), (np.float32, "fmin(a, b) - fmax(a, 0)", NANS), (np.float32, "a + 0.1", FLOATS),
    (np.float32, "a * 0.1f", FLOATS), (np.float32, "fabs(a) + floor(b)", FLOATS),
    (np.float32, "ceil(a) - trunc(b)", FLOATS), (np.float32, "sqrt(fabs(a))", FLOATS), (np.float32, "a / b", NANS),
    (np.float32, "a > b ? a : b", NANS), (np.float32, "-a + !b", NANS), (np.float32, "(double)a / 3", FLOATS),
    (np.float64, "a + b", NANS), (np.float64, "fmax(a, b)", NANS), (np.float64, "(float)a + b", FLOATS),
    (np.float64, "a * b + 1.5", FLOATS), (np.float64, "abs(a) < abs(b) ? a : b", NANS),
]
C_TYPE = {np.dtype(np.int32): "int", np.dtype(np.uint32): "unsigned int", np.dtype(np.int64): "long long",
          np.dtype(np.uint64): "unsigned long long", np.dtype(np.float32): "float", np.dtype(np.float64): "double"}


def _bits(values, dtype) -> list:
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(dtype).itemsize]
    return [int(v) for v in np.asarray(values, dtype).view(width)]


def _host_program(tmp_path, body: str) -> list:
    """Compile `body` (statements printing one hex word per line) with operators.cuh for the CPU; run it; its lines."""
    source = tmp_path / "host.cu"
    source.write_text(
        "#define MAP_EXPRESSION(x, i) (x)\n#define MAP_X_TYPE int\n"  # the expression functions are compiled
        f'#include "{loader.KERNEL_ROOT / "common" / "operators.cuh"}"\n#include <cstdio>\n#include <cstring>\n'
        "template <typename V> static void show(V v) { unsigned long long u = 0; memcpy(&u, &v, sizeof v); "
        'printf("%llx\\n", u); }\n'
        f"int main() {{\n{body}\n    return 0;\n}}\n")
    exe = tmp_path / "host"
    p = subprocess.run([NVCC, "-std=c++17", "-Xcompiler", "-ffp-contract=off", "-o", str(exe), str(source)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()


@needs_nvcc
@pytest.mark.skipif(HOST_CXX is None, reason="no host C++ compiler for nvcc")
def test_the_numpy_evaluator_agrees_with_c(tmp_path):
    """Every expression of C_CASES on its operands, compiled as the kernels compile it (the C written back from the
    tree, operators.cuh's pyscan_* functions) and run on the CPU, against Expression.evaluate bit for bit (NaN
    against NaN).  Operands are written with c_literal, so this also compiles the literals of four types."""
    lines, expected = [], []
    for dtype, source, pairs in C_CASES:
        dtype = np.dtype(dtype)
        e = parse(source)
        a = np.array([p[0] for p in pairs], dtype)
        b = np.array([p[1] for p in pairs], dtype)
        want = e.evaluate(a, b).astype(dtype)
        for k in range(a.size):
            lines.append(f"    {{ using T = {C_TYPE[dtype]}; const T a = {c_literal(a[k], dtype)}, "
                         f"b = {c_literal(b[k], dtype)}; show((T)({e.c})); }}")
            expected.append((dtype, source, a[k], b[k], want[k]))
    got = _host_program(tmp_path, "\n".join(lines))
    assert len(got) == len(expected)
    wrong = []
    for word, (dtype, source, a, b, want) in zip(got, expected):
        value = np.array([int(word, 16)], dtype=np.uint64).astype(
            {4: np.uint32, 8: np.uint64}[dtype.itemsize]).view(dtype)[0]
        if not (value == want or (dtype.kind == "f" and np.isnan(value) and np.isnan(want))):
            wrong.append(f"{dtype} {source} a={a!r} b={b!r}: C {value!r}, NumPy {want!r}")
    assert not wrong, "\n".join(wrong)


# --------------------------------------------------------------------------------------------- the literals

def _literal_samples(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return [False, True]
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return [int(info.min), int(info.max), 0, 1, int(info.max) // 3] + ([-1, -7] if dtype.kind == "i" else [])
    if dtype == BFLOAT16:
        return [0.0, -0.0, 1.0, -1.5, 3.3895313892515355e38, 2.0**-133, np.inf, -np.inf, np.nan, 0.0078125]
    info = np.finfo(dtype)
    specials = [0.0, -0.0, 1.0, -1.5, float(info.max), float(info.smallest_subnormal), float(info.tiny), np.inf,
                -np.inf, np.nan, 0.1]
    return [dtype.type(v) for v in specials]


def _decode(text: str, dtype) -> int:
    """The bits a literal of c_literal stands for, read back by hand (no compiler): the inverse of its forms."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return {"true": 1, "false": 0}[text]
    m = re.fullmatch(r"cuda::std::bit_cast<([\w ]+)>\((?:\(unsigned short\))?0x([0-9a-f]+)(?:U|ULL)\)", text)
    if m:
        assert m.group(1) == types.ELEMENT_TYPES[dtype]
        return int(m.group(2), 16)
    m = re.fullmatch(r"(?:\(\(([\w ]+)\))?\(?(-?\d+)U?LL(-1)?\)?\)?", text)  # ((type)(-5LL)), 7ULL, (-N LL-1)
    assert m, text
    if m.group(1):
        assert m.group(1) == types.ELEMENT_TYPES[dtype]
    v = int(m.group(2)) - (1 if m.group(3) else 0)
    return v % (1 << (8 * dtype.itemsize))


def _want_bits(v, dtype) -> int:
    dtype = np.dtype(dtype)
    if dtype == BFLOAT16:
        return int(types.float32_to_bfloat16(np.float32([v])).view(np.uint16)[0])
    if dtype.kind == "b":
        return int(bool(v))
    return _bits([v], dtype)[0]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=types.dtype_name)
def test_literals_stand_for_exactly_their_bits(dtype):
    for v in _literal_samples(dtype):
        text = c_literal(v, dtype)
        assert _decode(text, dtype) == _want_bits(v, dtype), (text, v)
    assert c_literal(-2**63, np.int64) == "(-9223372036854775807LL-1)"  # 9223372036854775808LL does not exist
    assert c_literal(2**64 - 1, np.uint64) == "18446744073709551615ULL"


@needs_nvcc
@pytest.mark.skipif(HOST_CXX is None, reason="no host C++ compiler for nvcc")
def test_literals_round_trip_through_the_compiler(tmp_path):
    """Every dtype's literals compiled (cuda::std::bit_cast works on the host too) and their bits printed."""
    lines, expected = [], []
    for dtype in ALL_DTYPES:
        for v in _literal_samples(dtype):
            lines.append(f"    show(({types.ELEMENT_TYPES[np.dtype(dtype)]})({c_literal(v, dtype)}));")
            expected.append((types.dtype_name(dtype), v, _want_bits(v, dtype)))
    got = _host_program(tmp_path, "\n".join(lines))
    wrong = [f"{name} {v!r}: {word} != {want:x}" for word, (name, v, want) in zip(got, expected) if int(word, 16) != want]
    assert len(got) == len(expected) and not wrong, wrong


# ---------------------------------------------------------------------------------------------- the #defines

def test_defines_of_a_custom_operator():
    op = operator("a * b", 1)
    d = defines(np.int8, op, np.int8)
    assert d["OP"] == "OP_EXPR" and (d["VALUE_TYPE"], d["ELEM_TYPE"]) == ("signed char", "int")
    assert d["OP_EXPRESSION"] == loader.Macro("(a * b)", ("a", "b"))
    assert d["OP_IDENTITY"] == loader.Macro("((int)1LL)")
    source = loader.build_source("scan/kogge_stone.cu", **d)
    assert "#define OP_EXPRESSION(a, b) ((a * b))" in source and "#define OP_IDENTITY (((int)1LL))" in source
    # the identity is the value dtype's, widened exactly to the compute type: -inf of float16 as a float
    d = defines(np.float16, operator("max(a, b)", -np.inf), np.float16)
    assert d["OP_IDENTITY"].text == "cuda::std::bit_cast<float>(0xff800000U)"
    assert defines(np.int32, operator("max(a,b)", -2**31))["OP_IDENTITY"].text == "((int)(-2147483648LL))"
    assert defines(np.uint64, operator("a&b", 2**64 - 1))["OP_IDENTITY"].text == "18446744073709551615ULL"
    # the same tree, whatever its spacing, is the same build
    assert defines(np.float32, operator("a+b", 0)) == defines(np.float32, operator(" a + b ", 0.0))
    # named operators' builds are as before: nothing added
    assert set(defines(np.float32, "add")) == {"IN_TYPE", "VALUE_TYPE", "ELEM_TYPE", "OUT_TYPE", "OP"}


def test_defines_of_a_map():
    m = types.parse_map("x * x")
    d = defines(np.int8, "add", np.int64, map=m)
    assert d["MAP_EXPRESSION"] == loader.Macro("(x * x)", ("x", "i")) and d["MAP_X_TYPE"] == "int"
    assert defines(np.float16, "add", np.float16, map=m)["MAP_X_TYPE"] == "float"  # x's own type, widened
    assert defines(np.uint64, "add", np.uint64, map=m)["MAP_X_TYPE"] == "unsigned long long"
    assert "#define MAP_EXPRESSION(x, i) ((x * x))" in loader.build_source("reduction/fast.cu", **d)


def test_axis_macros_of_a_custom_operator():
    from pyscan import axes

    m = axes.kernel_macros(np.int32, np.int64, np.int64, operator("a + b", 0))
    assert m["OP"] == "OP_EXPR" and m["VALUE_TYPE"] == m["ELEM_TYPE"] == "long long"
    assert m["OP_IDENTITY"].text == "0LL"
    axes.check_axis_types(np.float32, np.float32, operator("max(a, b)", -np.inf), "scan")  # taken


@pytest.mark.parametrize("text", ["a;b", "a\nb", "a // b", "a \\ b", '"a"', "{a}", "#a"])
def test_macro_text_is_checked_again_at_the_compilers_door(text):
    with pytest.raises(ValueError, match="macro OP_EXPRESSION"):
        loader.build_source("scan/naive.cu", OP_EXPRESSION=loader.Macro(text, ("a", "b")), OP="OP_EXPR")
    with pytest.raises(ValueError, match="not C identifiers"):
        loader.build_source("scan/naive.cu", M=loader.Macro("1", ("a b",)))


@needs_nvcc
def test_an_expression_nvcc_refuses_is_named_with_nvccs_log(tmp_path):
    """An expression that gets past the host's checks but not nvcc's (here: forced past them, '%' of floats) is an
    ExpressionCompileError, a KernelCompileError, quoting the expression as written, the build's types and nvcc."""
    macros = defines(np.float32, "add", np.float32)
    macros.update(OP="OP_EXPR", OP_EXPRESSION=loader.Macro("(a % b)", ("a", "b"), shown="op='a % b'"),
                  OP_IDENTITY=loader.Macro("0.0f", shown="identity=0"))
    source = tmp_path / "k.cu"
    source.write_text(loader.build_source("scan/kogge_stone.cu", **macros))
    p = subprocess.run([NVCC, "-std=c++17", "-arch=sm_90", "-cubin", "-o", str(tmp_path / "k.cubin"), str(source)],
                       capture_output=True, text=True)
    assert p.returncode != 0

    class CompileError(Exception):
        stderr = p.stdout + p.stderr

    error = loader.compile_error("scan/kogge_stone.cu", macros, CompileError())
    assert isinstance(error, ExpressionCompileError) and isinstance(error, KernelCompileError)
    text = str(error)
    assert "op='a % b'" in text and "identity=0" in text and "ELEM_TYPE=float" in text
    assert "integral" in text or "error" in text  # nvcc's own words follow
    assert not isinstance(loader.compile_error("scan/naive.cu", {"OP": "OP_ADD"}, CompileError()),
                          ExpressionCompileError)


# Representative specialisations of every kernel a custom operator or map reaches, compiled by nvcc for sm_90:
# (kernel file, x dtype, expression, identity, map, extra #defines); a dtype= where the result is not x's dtype.
COMPILES = [
    ("scan/decoupled_lookback.cu", "float16", "max(a, b)", -np.inf, None, {"VECTOR_LOADS": 1}),
    ("scan/coarsened.cu", "int8", "a * b", 1, None, {}),
    ("scan/single_pass.cu", "uint64", "a ^ b", 0, None, {}),
    ("scan/blelloch_sweeps.cu", "bool", "a | b", 0, None, {}),
    ("scan/add_block_sums.cu", "bfloat16", "fmax(a, b)", -np.inf, None, {}),
    ("scan/combine_initial.cu", "int16", "a + b + (a < b ? 0 : 0)", 0, None, {}),
    ("reduction/fast.cu", "float16", "max(a, b)", -np.inf, "abs(x) + i", {"FAST_UNROLL": 2}),
    ("reduction/fast.cu", "float32", "a + b", 0, "x * x", {"FAST_UNROLL": 1}),
    ("reduction/segmented.cu", "int32", "min(a, b)", 2**31 - 1, "x < 0", {}),  # the atomicCAS loop
    ("reduction/coarsened.cu", "float64", "a * b", 1, "(double)i", {}),
    ("reduction/convert.cu", "uint8", "a + b", 0, "(unsigned long long)x * x", {}),
    ("reduction/shared_memory.cu", "bfloat16", "a + b", 0, "sqrt(x)", {}),
]


@needs_nvcc
def test_kernels_compile_with_custom_operators_and_maps(tmp_path):
    procs = {}
    for k, (relpath, dtype, source, e, map_source, extra) in enumerate(COMPILES):
        x = types.as_dtype(dtype)
        op = operator(source, e)
        value = result_dtype(x, op, np.int64 if dtype == "int16" else None)
        m = types.parse_map(map_source) if map_source else None
        path = tmp_path / f"k{k}.cu"
        path.write_text(loader.build_source(relpath, **defines(x, op, value, map=m), **extra))
        procs[(relpath, dtype, source, map_source)] = subprocess.Popen(
            [NVCC, "-std=c++17", "-arch=sm_90", "-cubin", "-o", str(tmp_path / f"k{k}.cubin"), str(path)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # the axis kernels, through their own macros
    from pyscan import axes

    for k, (relpath, in_dtype, acc, source, e, extra) in enumerate([
            ("scan/decoupled_lookback.cu", np.float32, np.float32, "max(a, b)", -np.inf, {"ROWS": 1}),
            ("reduction/axis_columns.cu", np.int32, np.int64, "a + b", 0, {})]):
        macros = {**axes.kernel_macros(in_dtype, acc, acc, operator(source, e)), **extra}
        path = tmp_path / f"axis{k}.cu"
        path.write_text(loader.build_source(relpath, **macros))
        procs[(relpath, str(np.dtype(in_dtype)), source, None)] = subprocess.Popen(
            [NVCC, "-std=c++17", "-arch=sm_90", "-cubin", "-o", str(tmp_path / f"axis{k}.cubin"), str(path)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    failures = {case: p.communicate()[0] for case, p in procs.items() if p.wait() != 0}
    assert not failures, "\n".join(f"{case}:\n{log[:2000]}" for case, log in failures.items())


# -------------------------------------------------------------------------------------------- the step-models

SIZES = (0, 1, 2, 33, 1025, 4099, 9001)


@pytest.mark.parametrize("exclusive", [False, True], ids=["inclusive", "exclusive"])
@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("dtype", DTYPES, ids=_id)
def test_every_scan_model_takes_expressions(dtype, name, exclusive):
    """Every scan algorithm's model with "a + b", "max(a, b)" and "a * b" against the left-to-right reference in x's
    dtype (a custom operator's result dtype)."""
    rng = np.random.default_rng([DTYPES.index(dtype), list(OPS).index(name), int(exclusive)])
    value = np.dtype(dtype)
    for n in SIZES:
        x = make(rng, n, dtype, name)
        for algorithm in SCANS.names():
            if algorithm == "axis" and value not in (np.int32, np.int64, np.float32, np.float64):
                continue  # the axis kernels' dtypes (their model takes any; the GPU refuses the others)
            a = SCANS.get(algorithm)
            out = a.model(x, op=expression(name), identity=identity_for(name, value), exclusive=exclusive)
            check_scan(out, x, name, exclusive, a.error_depth(max(n, 1)), what=f"{algorithm} {value} {name} n={n}")


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("dtype", DTYPES, ids=_id)
def test_every_reduction_model_takes_expressions(dtype, name):
    rng = np.random.default_rng([DTYPES.index(dtype), list(OPS).index(name), 5])
    value = np.dtype(dtype)
    for n in SIZES[1:]:
        x = make(rng, n, dtype, name)
        for algorithm in REDUCTIONS.names():
            a = REDUCTIONS.get(algorithm)
            got = a.model(x, op=expression(name), identity=identity_for(name, value))
            depth = a.error_depth(n) if algorithm != "axis" else a.error_depth(n) + 16
            check_reduce(got, x, name, depth, what=f"{algorithm} {value} {name} n={n}")


@pytest.mark.parametrize("name", list(OPS))
def test_an_expression_equal_to_a_named_operator_gives_its_results(name):
    """int32 "a + b" / "max(a, b)" / "a * b" in int32 is op="add" / "max" / "mul" with dtype=np.int32, bit for bit."""
    rng = np.random.default_rng(list(OPS).index(name))
    x = make(rng, 20011, np.int32, name)
    for algorithm in SCANS.names():
        model = SCANS.get(algorithm).model
        np.testing.assert_array_equal(model(x, op=expression(name), identity=identity_for(name, x.dtype)),
                                      model(x, op=name, dtype=np.int32), err_msg=algorithm)
    for algorithm in REDUCTIONS.names():
        model = REDUCTIONS.get(algorithm).model
        assert model(x, op=expression(name), identity=identity_for(name, x.dtype)) == model(x, op=name, dtype=np.int32)


def test_unusual_associative_expressions_against_python_loops():
    """Expressions with no NumPy ufunc, against np.frompyfunc's left fold on Python ints: a + b + 1 (identity -1),
    the last of the largest magnitudes (ties to the later), and a saturating add in uint8 (via dtype=)."""
    rng = np.random.default_rng(12)
    x = rng.integers(-50, 50, 5003).astype(np.int32)
    cases = [
        ("a + b + 1", -1, lambda p, q: p + q + 1, np.int32),
        ("abs(a) > abs(b) ? a : b", 0, lambda p, q: p if abs(p) > abs(q) else q, np.int32),
        ("min(a + b, 255)", 0, lambda p, q: min(p + q, 255), np.uint8),
    ]
    for source, e, f, value in cases:
        data = np.abs(x) % 7 if value == np.uint8 else x
        want_scan = np.frompyfunc(f, 2, 1).accumulate(data.astype(object)).astype(value)
        for algorithm in SCANS.names():
            if algorithm == "axis" and value == np.uint8:
                continue
            got = SCANS.get(algorithm).model(data, op=source, identity=e, dtype=value)
            assert got.dtype == value
            np.testing.assert_array_equal(got, want_scan, err_msg=f"{algorithm} {source}")
        for algorithm in REDUCTIONS.names():
            assert REDUCTIONS.get(algorithm).model(data, op=source, identity=e, dtype=value) == want_scan[-1]


@pytest.mark.parametrize("exclusive", [False, True], ids=["inclusive", "exclusive"])
def test_scans_keep_the_order_of_a_non_commutative_operator(exclusive):
    """Affine maps composed left to right (a linear recurrence): associative, not commutative.  Every scan model
    gives the sequential result (the kernels combine earlier values on the left everywhere, the look-back windows
    included); of the reductions, `simple` keeps the order and the others do not (they need commutativity)."""
    rng = np.random.default_rng(21)
    for n in (1, 2, 33, 2049, 9001, 20011):
        x = affine_maps(rng, n)
        want = affine_reference(x)
        if exclusive:
            want = np.concatenate([np.array([AFFINE_IDENTITY], np.uint64), want[:-1]])
        for algorithm in SCANS.names():
            got = SCANS.get(algorithm).model(x, op=AFFINE, identity=AFFINE_IDENTITY, exclusive=exclusive)
            np.testing.assert_array_equal(got, want, err_msg=f"{algorithm} n={n}")
        signed = SCANS.get("axis").model(x.view(np.int64), op=AFFINE_SIGNED, identity=AFFINE_IDENTITY,
                                         exclusive=exclusive)
        np.testing.assert_array_equal(signed.view(np.uint64), want, err_msg=f"axis, int64, n={n}")
    x = affine_maps(rng, 5000)
    assert REDUCTIONS.get("simple").model(x, op=AFFINE, identity=AFFINE_IDENTITY) == affine_reference(x)[-1]
    assert REDUCTIONS.get("fast").model(x, op=AFFINE, identity=AFFINE_IDENTITY) != affine_reference(x)[-1]


def test_custom_operators_convert_every_combine_to_the_result_dtype():
    """bool "a + b" is logical or (each sum converted to bool), int8 "a * b" wraps at every step as in int8, and a
    custom float16 sum rounds to float16 after every combine: (1 + 2048) + 1 and 1 + (2048 + 1) are 2048 (2049 is no
    float16), where op="add" combines in float32 and rounds once, to 2050.  (The reduction trees that pair x0 with
    x2 first -- they reorder, for commutative operators -- get 2 + 2048 = 2050 either way.)"""
    mask = np.random.default_rng(1).random(3000) < 0.01
    for algorithm in ("decoupled_lookback", "blelloch", "kogge_stone"):
        np.testing.assert_array_equal(SCANS.get(algorithm).model(mask, op="a + b", identity=0),
                                      np.logical_or.accumulate(mask))
    x = np.arange(1, 40, dtype=np.int8)
    np.testing.assert_array_equal(SCANS.get("brent_kung").model(x, op="a * b", identity=1),
                                  np.multiply.accumulate(x, dtype=np.int8))
    half = np.float16([1, 2048, 1])
    for algorithm in SCANS.names():
        assert SCANS.get(algorithm).model(half, op="a + b", identity=0)[-1] == 2048, algorithm
        assert SCANS.get(algorithm).model(half)[-1] == 2050, algorithm
    assert REDUCTIONS.get("simple").model(half, op="a + b", identity=0) == 2048  # in order: x0 + x1, then + x2
    for algorithm in REDUCTIONS.names():
        assert REDUCTIONS.get(algorithm).model(half, op="a + b", identity=0) in (2048, 2050), algorithm
        assert REDUCTIONS.get(algorithm).model(half) == 2050, algorithm


@pytest.mark.parametrize("algorithm", REDUCTIONS.names())
def test_every_reduction_model_applies_a_map(algorithm):
    a = REDUCTIONS.get(algorithm)
    rng = np.random.default_rng(3)
    for n in (1, 31, 1025, 9001):
        f = (rng.standard_normal(n) * 3).astype(np.float32)
        ints = rng.integers(-1000, 1000, n).astype(np.int32)
        depth = a.error_depth(n) + (16 if algorithm == "axis" else 0)
        # a count of negatives, in int64 whatever x's dtype (the mapped values are of dtype=)
        assert a.model(f, map="x < 0", dtype=np.int64) == np.count_nonzero(f < 0)
        # a sum of squares of int32: x*x in int (no overflow here), summed in int64 (NumPy's result dtype)
        got = a.model(ints, map="x * x")
        assert got.dtype == np.int64 and got == np.sum(ints.astype(np.int64) ** 2)
        # L1 norm and a sum of squares of floats, within the sum's bound
        for source, values in (("abs(x)", np.abs(f)), ("x * x", f * f)):
            got = a.model(f, map=source)
            exact = math.fsum(values.astype(np.float64).tolist())
            assert got.dtype == np.float32
            assert abs(float(got) - exact) <= (depth + 3) * np.finfo(np.float32).eps * exact + 1e-30, (source, n)
        # the index: sum of i and a weighted sum; a map with a custom operator (the largest |x|)
        assert a.model(ints, map="i") == n * (n - 1) // 2
        assert a.model(ints, map="(long long)x * i") == np.sum(ints.astype(np.int64) * np.arange(n))
        assert a.model(ints, op="max(a, b)", identity=0, map="abs(x)") == np.max(np.abs(ints))
        # bool x is 0/1 in its map; float16 x is a float
        assert a.model(f > 0, map="x * 2") == 2 * np.count_nonzero(f > 0)
        half = f.astype(np.float16)
        assert a.model(half, op="max", map="x") == np.max(half)


def test_scan_models_take_no_map():
    with pytest.raises(TypeError, match="map= belongs to reductions"):
        SCANS.get("decoupled_lookback").model(np.arange(3), map="x")


@pytest.mark.parametrize("exclusive", [False, True], ids=["inclusive", "exclusive"])
def test_every_scan_model_starts_from_initial(exclusive):
    rng = np.random.default_rng(8)
    for n in (1, 33, 4099):
        for algorithm in SCANS.names():
            a = SCANS.get(algorithm)
            x = rng.integers(-1000, 1000, n).astype(np.int32)
            got = a.model(x, initial=7, exclusive=exclusive)  # np.cumsum's int64, from 7
            want = np.cumsum(np.concatenate([[7], x]))
            np.testing.assert_array_equal(got, want[:-1] if exclusive else want[1:], err_msg=algorithm)
            got = a.model(x, op="max(a, b)", identity=-2**31, initial=500, exclusive=exclusive)
            want = np.maximum.accumulate(np.concatenate([[500], x]))
            np.testing.assert_array_equal(got, want[:-1] if exclusive else want[1:], err_msg=algorithm)
            f = make(rng, n, np.float32, "add")
            check_scan(a.model(f, op="a + b", identity=0, initial=2.5, exclusive=exclusive), f, "add", exclusive,
                       a.error_depth(n), initial=2.5, what=f"{algorithm} n={n}")
    assert SCANS.get("kogge_stone").model(np.float32([1.0, 2.0]), initial=-0.0, exclusive=True)[0] == 0.0
    assert np.signbit(SCANS.get("kogge_stone").model(np.float32([1.0, 2.0]), initial=-0.0, exclusive=True)[0])


@pytest.mark.parametrize("algorithm", REDUCTIONS.names())
def test_every_reduction_model_starts_from_initial(algorithm):
    a = REDUCTIONS.get(algorithm)
    x = np.arange(-50, 60, dtype=np.int16)
    assert a.model(x, initial=1000) == np.add.reduce(x, initial=1000) and a.model(x, initial=1000).dtype == np.int64
    assert a.model(x, op="max", initial=100) == 100 and a.model(x, op="max", initial=-100) == 59
    assert a.model(x, op="a * b", identity=1, initial=0) == 0
    assert a.model(x, map="x < 0", initial=1) == 51


# ----------------------------------------------------------------------------------- errors before any GPU work

X = np.arange(1, 9, dtype=np.float32)


@pytest.mark.parametrize("call, exc, words", [
    (lambda x: pyscan.scan(x, op="a * b"), ValueError, "needs identity="),
    (lambda x: pyscan.scan(x, op="a ; b", identity=1), ExpressionError, "statement separator"),
    (lambda x: pyscan.scan(x, op="a % b", identity=0), TypeError, "'%' takes integers.*float"),
    (lambda x: pyscan.scan(x, op="a % b", identity=0, dtype=np.int32), None, None),  # fine with an integer dtype=
    (lambda x: pyscan.scan(x, op="a * b", identity=0.1), ValueError, "not exactly a value of the result dtype float32"),
    (lambda x: pyscan.scan(x, op="a * b", identity=0.1, dtype=np.float16), ValueError, "float16"),
    (lambda x: pyscan.scan(x, op="a * b", identity=1.5, dtype=np.int32), ValueError, "holds integers only"),
    (lambda x: pyscan.scan(x, op="max(a, b)", identity=-np.inf, dtype=np.int64), ValueError, "lowest integer"),
    (lambda x: pyscan.scan(x, op="a | b", identity=2, dtype=np.bool_), ValueError, "bool, which holds False and True"),
    (lambda x: pyscan.scan(x, op="a + b", identity=2**40, dtype=np.int32), ValueError, "does not fit"),
    (lambda x: pyscan.scan(x, op="a + b", identity="0"), TypeError, "expected a real number"),
    (lambda x: pyscan.scan(x, op="max", identity=0), ValueError, "not the identity of op 'max' for float32.*-inf"),
    (lambda x: pyscan.scan(x, op="add", identity=0), None, None),  # a named operator's own identity: taken
    (lambda x: pyscan.scan(x, op="sum", identity=0), ValueError, "unknown op 'sum'.*'add'.*C expression"),
    (lambda x: pyscan.scan(x, op=b"a+b", identity=0), TypeError, "op must be a str"),
    (lambda x: pyscan.scan(x, initial="1"), TypeError, "initial: expected a real number"),
    (lambda x: pyscan.scan(x, initial=1e300), ValueError, "overflows the result dtype float32"),
    (lambda x: pyscan.scan(x.astype(np.int8), initial=0.5), ValueError, "int64, which holds integers only"),
    (lambda x: pyscan.scan(x.astype(np.int32), initial=2**70), ValueError, "does not fit"),
    (lambda x: pyscan.scan(x.reshape(2, 4), op="a % b", identity=0, axis=0, dtype=np.float16), TypeError,
     "%"),
    (lambda x: pyscan.scan(x, map="x"), TypeError, "map"),
    (lambda x: pyscan.reduce(x, map="x *"), ExpressionError, "map='x \\*'"),
    (lambda x: pyscan.reduce(x, map="a * b"), ExpressionError, "unknown name 'a'.*x and i"),
    (lambda x: pyscan.reduce(x, map="x % 2"), TypeError, "'%' takes integers"),
    (lambda x: pyscan.reduce(x, map="x * x", algorithm="axis"), TypeError, "axis kernels.*take no map"),
    (lambda x: pyscan.reduce(x.reshape(2, 4), axis=0, map="x * x"), TypeError, "take no map"),
    (lambda x: pyscan.reduce(x, map=3), TypeError, "map: expected a str"),
    (lambda x: pyscan.reduce(x, op="bitwise_or", map="(int)x"), TypeError, "integers and bool"),
    (lambda x: pyscan.reduce(x, op="bitwise_or", map="(int)x", dtype=np.int32), None, None),  # dtype= decides
    (lambda x: pyscan.reduce(x, op="a*b", identity=1, initial=[1]), TypeError, "initial: expected a real number"),
    (lambda x: pyscan.reduce(x, op="min", identity=-np.inf), ValueError, "not the identity of op 'min'"),
])
def test_bad_custom_input_is_refused_before_the_gpu(call, exc, words, no_gpu):
    if exc is None:  # valid: it gets as far as the GPU, which the fixture blocks
        from bad_input_checks import GPUTouched

        with pytest.raises((GPUTouched, pyscan.GPUUnavailableError)):
            call(X.copy())
        return
    raises_clearly(call, X.copy(), exc, words)


def test_empty_reductions_give_initial_without_the_gpu(no_gpu):
    empty = np.zeros(0, np.float32)
    assert pyscan.reduce(empty, op="max", initial=3) == 3  # np.max([], initial=3): max of nothing from 3
    assert pyscan.reduce(empty, op="max", initial=3).dtype == np.float32
    assert pyscan.reduce(np.zeros(0, np.int8), initial=5) == 5 and pyscan.reduce(np.zeros(0, np.int8)).dtype == np.int64
    assert pyscan.reduce(empty, op="a * b", identity=1) == 1  # a custom operator's identity, as np.prod's 1
    assert pyscan.reduce(empty, op="fmax(a, b)", identity=np.nan, initial=2) == 2
    with pytest.raises(ValueError, match="zero-size"):
        pyscan.reduce(empty, op="max")


def test_custom_result_dtypes():
    op = operator("a + b", 0)
    assert result_dtype(np.int8, op) == np.int8  # x's dtype: NumPy has no accumulator rule for an expression
    assert result_dtype(np.int8, op, np.int64) == np.int64  # dtype= decides
    assert result_dtype(np.bool_, op) == np.bool_
    assert result_dtype(np.int8, "add") == np.int64  # named operators keep NumPy's rule
    assert types.mapped_types(np.float32, "add", types.parse_map("x < 0"), np.int64).value == np.int64
    assert types.mapped_types(np.int32, "add", types.parse_map("x * x")).value == np.int64
    assert types.mapped_types(np.int32, op, types.parse_map("x * x")).value == np.int32
    assert isinstance(op, CustomOperator) and str(op) == "a + b" and types.op_macro(op) == "OP_EXPR"


# -------------------------------------------------------------------------------- the dispatch on the fake device

@pytest.fixture
def fake_custom_gpu(fake_gpu, monkeypatch):  # noqa: F811  (the fixture imported above)
    """test_interop's fake device; the fast reduction's launch taking map= (the model on host memory), and
    combine_initial's pass on host memory, recording what it was asked."""
    passes = []

    def reduce_launch(x, *, op, call, out=None, dtype=None, map=None):
        values = _host(x.gpudata, x.shape, x.dtype).copy()
        got = np.asarray(REDUCTIONS.get("fast").model(values, op=op, dtype=dtype, map=map))
        out = call.empty((1,), got.dtype) if out is None else out
        _host(out.gpudata, (1,), got.dtype)[0] = got
        return out

    def combine_initial(call, y, total, start, op, value, *, n=None, inner=1, exclusive=False):
        passes.append((total, n, inner, exclusive, start))
        n = total if n is None else n
        held = _host(y.gpudata, (total,), value)
        compute = types.COMPUTE_TYPES[value]
        f = types.ufunc(op.bound(value) if isinstance(op, CustomOperator) else op)
        combined = types.store(f(np.asarray(start, compute), held.astype(compute)), types.Types(value, value, compute))
        first = exclusive & ((np.arange(total) // inner) % n == 0)
        held[...] = np.where(first, types.store(np.asarray([start], compute), types.Types(value, value, compute))[0],
                             combined)
        return 1

    entry = REDUCTIONS._algorithms["fast"]
    monkeypatch.setitem(REDUCTIONS._algorithms, "fast", dataclasses.replace(entry, launch=reduce_launch))
    monkeypatch.setattr(pyscan.scans, "combine_initial", combine_initial)
    monkeypatch.setattr(pyscan.reductions, "combine_initial", combine_initial)
    return passes


def test_scan_dispatch_custom_operator_and_initial(fake_custom_gpu):
    passes = fake_custom_gpu
    host = np.arange(1, 21, dtype=np.int32)
    x = FakeDeviceArray(host)
    got = pyscan.scan(x, op="a * b", identity=1).host
    assert got.dtype == np.int32  # x's dtype
    np.testing.assert_array_equal(got, np.multiply.accumulate(host, dtype=np.int32))
    assert not passes
    got = pyscan.scan(x, op="max(a, b)", identity=-2**31, initial=7, exclusive=True).host
    np.testing.assert_array_equal(got, np.maximum.accumulate(np.concatenate([[7], host]))[:-1])
    assert passes == [(20, None, 1, True, 7)]
    got = pyscan.scan(x, initial=-3).host  # a named operator: NumPy's int64, from -3
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.cumsum(np.concatenate([[-3], host]))[1:])
    np.testing.assert_array_equal(host, np.arange(1, 21))  # x untouched


def test_scan_dispatch_initial_along_an_axis(fake_custom_gpu, monkeypatch):
    from pyscan.scans import axis as saxis

    passes = fake_custom_gpu

    def scan_along(x, out, outer, n, inner, *, op, exclusive, call, acc_dtype=None):  # the axis model, on host
        values = _host(x.gpudata, (outer, n, inner), x.dtype).astype(acc_dtype or out.dtype)
        _host(out.gpudata, (outer, n, inner), out.dtype)[...] = saxis.model(values, op=op, exclusive=exclusive, axis=1)
        return 1

    monkeypatch.setattr(saxis, "scan_along", scan_along)
    host = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    for exclusive in (False, True):
        got = pyscan.scan(FakeDeviceArray(host), axis=1, initial=100, exclusive=exclusive).host
        padded = np.concatenate([np.full((2, 1, 4), 100), host], axis=1)
        want = np.cumsum(padded, axis=1)
        np.testing.assert_array_equal(got, want[:, :-1] if exclusive else want[:, 1:])
        assert passes[-1][:4] == (24, 3, 4, exclusive)  # every row of the axis starts from v


def test_reduce_dispatch_map_custom_operator_and_initial(fake_custom_gpu):
    passes = fake_custom_gpu
    host = np.array([3.0, -4.0, 0.5, -0.25], np.float32)
    x = FakeDeviceArray(host)
    got = pyscan.reduce(x, map="x * x").host
    assert got.dtype == np.float32 and got == np.sum(host * host)
    got = pyscan.reduce(x, map="x < 0", dtype=np.int64, initial=10).host
    assert got.dtype == np.int64 and got == 12
    assert passes[-1] == (1, None, 1, False, 10)
    got = pyscan.reduce(x, op="max(a, b)", identity=-np.inf, map="abs(x)").host
    assert got == 4.0
    got = pyscan.reduce(FakeDeviceArray(np.zeros(0, np.float32)), op="max", initial=2.5).host
    assert got == 2.5 and got.dtype == np.float32  # empty: initial, filled without a pass
    assert len(passes) == 1


def test_the_demo_shows_what_associativity_is_for(run_demo):
    out = run_demo("demos/custom_operator.py", "--model", "--size", "3000")
    assert "step-models" in out
    associative, _, rest = out.partition("NOT associative")
    assert "DIFFERENT" not in associative and associative.count("same") > 10
    assert rest.count("DIFFERENT") >= 10  # a - b: the algorithms disagree with the sequential scan and each other
