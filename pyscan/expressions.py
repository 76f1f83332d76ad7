"""Operators and maps written as C expressions, PyCUDA's way: `pyscan.scan(x, op="a*b", identity=1)` is
InclusiveScanKernel(dtype, "a*b", neutral="1"), `pyscan.reduce(x, op="max(a, b)", identity=..., map="x*x")` is
ReductionKernel(..., reduce_expr="max(a, b)", map_expr="x[i]*x[i]").

An expression is C text that pyscan puts into the kernels as a #define (OP_EXPRESSION(a, b), MAP_EXPRESSION(x, i):
kernels/common/operators.cuh).  Whatever goes into a compiler must be what was checked, so the text is parsed here
into a tree, every name is checked, and the C that the kernels get is written back from the tree (fully
parenthesised), not copied from the caller.  The grammar is a small, side-effect-free part of C:

    numbers       1, 1u, 10LL, 0xff, 1.5, 1.5f, 2e-3 (C's literal types: 1 is int, 1.5 is double, 1.5f float)
    variables     a, b (an operator's operands); x, i (a map's element and its 64-bit index)
    operators     + - * / %  << >>  < <= > >= == !=  & ^ |  && ||  ! ~ unary - +  ?:  ( )
    casts         (int) (unsigned) (long long) (unsigned long long) (float) (double) (bool) (char) (short) ...
    functions     max min fmax fmin abs fabs sqrt floor ceil trunc

Nothing else: no assignments, increments, member access, indexing, string or character literals, comments,
preprocessor text, statements, or other functions (so no ';', '{', '}', '#', '"', '\\', '//', '/*', newlines).

The same tree is evaluated by NumPy for the step-models (`Expression.evaluate`), with C's rules, not NumPy's:
integer promotion and the usual arithmetic conversions (int + unsigned is unsigned, a float and a double give a
double), integer division and % truncating toward zero, comparisons and logical operators giving int 0/1, a cast
converting as C does.  The functions are pyscan's own (operators.cuh's pyscan_max, ..., mirrored by _FUNCTIONS
here) so that both sides agree on every type: max/min convert both operands to their common type and, for floating
types, ignore a NaN operand as CUDA's max/min of floats (fmaxf) do; fmax/fmin/fabs/sqrt/floor/ceil/trunc of an
integer compute in double, as C++'s <cmath> overloads do.  Where C leaves the result undefined (signed overflow,
an integer divided by zero, a float converted to an integer that cannot hold it, shifts by the width or more) the
GPU and the model may differ.  The GPU may also contract a*b + c into one fused multiply-add (nvcc's default), one
rounding where the model has two: float results of such expressions can differ in the last bit.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

import numpy as np

OPERATOR_VARIABLES = ("a", "b")
MAP_VARIABLES = ("x", "i")

# name -> number of arguments (the C side: operators.cuh, pyscan_<name>)
FUNCTIONS = {"max": 2, "min": 2, "fmax": 2, "fmin": 2, "abs": 1, "fabs": 1, "sqrt": 1, "floor": 1, "ceil": 1,
             "trunc": 1}

# The spellings a cast may use -> the NumPy dtype of that C type (LP64: long is 64 bits; char is signed, as nvcc's)
CAST_TYPES = {
    "bool": np.bool_, "char": np.int8, "signed char": np.int8, "unsigned char": np.uint8,
    "short": np.int16, "short int": np.int16, "signed short": np.int16, "unsigned short": np.uint16,
    "unsigned short int": np.uint16, "int": np.int32, "signed": np.int32, "signed int": np.int32,
    "unsigned": np.uint32, "unsigned int": np.uint32, "long": np.int64, "long int": np.int64,
    "long long": np.int64, "long long int": np.int64, "signed long long": np.int64, "unsigned long": np.uint64,
    "unsigned long long": np.uint64, "unsigned long long int": np.uint64, "float": np.float32, "double": np.float64,
}
TYPE_WORDS = frozenset(w for spelling in CAST_TYPES for w in spelling.split())

# NumPy dtype -> C type, for the types an expression computes in
C_NAMES = {np.dtype(np.int32): "int", np.dtype(np.uint32): "unsigned int", np.dtype(np.int64): "long long",
           np.dtype(np.uint64): "unsigned long long", np.dtype(np.float32): "float", np.dtype(np.float64): "double"}

_INT32, _UINT32 = np.dtype(np.int32), np.dtype(np.uint32)
_INT64, _UINT64 = np.dtype(np.int64), np.dtype(np.uint64)
_FLOAT32, _FLOAT64 = np.dtype(np.float32), np.dtype(np.float64)

_TOKEN = re.compile(r"""
    (?P<space>[ \t]+)
  | (?P<number>(?:0[xX][0-9A-Fa-f]+|(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|[0-9]+)
               [A-Za-z0-9_]*)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op><<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>&|^!~?:(),])
""", re.VERBOSE)

# Characters that are never part of an expression, with why (the first one found is reported).
_FORBIDDEN = {";": "a statement separator", "{": "a block", "}": "a block", "#": "preprocessor text",
              '"': "a string literal", "'": "a character literal", "\\": "a backslash (line continuation)",
              "\n": "a newline", "\r": "a newline", "=": "an assignment (compare with ==)", "[": "indexing",
              "]": "indexing", ".": "member access", "@": "not C", "$": "not C", "`": "not C"}

_INT_SUFFIXES = {"": "", "u": "u", "l": "l", "ll": "ll", "ul": "ul", "lu": "ul", "ull": "ull", "llu": "ull"}
_BINARY_LEVELS = (("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", "<=", ">", ">="), ("<<", ">>"),
                  ("+", "-"), ("*", "/", "%"))
_INTEGER_ONLY = {"%", "<<", ">>", "&", "|", "^", "~"}


class ExpressionError(ValueError):
    """An operator or map expression that pyscan does not take: the message quotes it and marks the place."""


def _fail(what: str, source: str, pos: int, problem: str):
    raise ExpressionError(f"{what}={source!r}: {problem}\n    {source}\n    {' ' * pos}^")


# ---------------------------------------------------------------------------------------------------------------
# Parsing: text -> tree.  Nodes are tuples: ("num", value, dtype, text), ("var", name), ("unary", op, e),
# ("cast", dtype, spelling, e), ("bin", op, left, right), ("cond", c, t, f), ("call", name, args).

def _number(text: str, what: str, source: str, pos: int):
    """(value, dtype) of a C literal, by C++'s rules for its type."""
    m = re.match(r"(0[xX][0-9A-Fa-f]+|[0-9.]+(?:[eE][+-]?[0-9]+)?)(.*)$", text)
    digits, suffix = m.group(1), m.group(2)
    is_float = not digits.lower().startswith("0x") and any(c in digits for c in ".eE")
    if is_float:
        if suffix not in ("", "f", "F"):
            _fail(what, source, pos, f"the suffix {suffix!r} of {text!r} is not taken (a float literal takes f or "
                                     "nothing: 1.5f is float, 1.5 double)")
        value = float(digits)
        return (np.float32(value) if suffix else value), (_FLOAT32 if suffix else _FLOAT64)
    key = suffix.lower()
    if key not in _INT_SUFFIXES or ("ll" in key and "lL" in suffix or "Ll" in suffix):
        _fail(what, source, pos, f"the suffix {suffix!r} of {text!r} is not a C integer suffix (u, l, ll, ul, ull)")
    if len(digits) > 1 and digits[0] == "0" and digits[1] not in "xX":
        _fail(what, source, pos, f"{text!r} would be an octal literal in C: write it in decimal, or in hex with 0x")
    value = int(digits, 0)
    hexadecimal = digits.lower().startswith("0x")
    kind = _INT_SUFFIXES[key]
    if kind == "":
        candidates = (_INT32, _UINT32, _INT64, _UINT64) if hexadecimal else (_INT32, _INT64)
    elif kind == "u":
        candidates = (_UINT32, _UINT64)
    elif kind in ("l", "ll"):
        candidates = (_INT64, _UINT64) if hexadecimal else (_INT64,)
    else:
        candidates = (_UINT64,)
    for dtype in candidates:
        if value <= np.iinfo(dtype).max:
            return value, dtype
    _fail(what, source, pos, f"{text!r} does not fit in the literal's type ({'unsigned ' if 'u' in kind else ''}"
                             "long long)")


def _tokens(source: str, what: str) -> list:
    for pos, ch in enumerate(source):
        if source.startswith("//", pos) or source.startswith("/*", pos):
            _fail(what, source, pos, f"{source[pos:pos + 2]!r} starts a comment in C, and comments are not taken (C's "
                                     "/ of two integers already divides toward zero)")
        if ch in _FORBIDDEN and not (ch == "=" and pos > 0 and source[pos - 1] in "<>=!") and not (
                ch == "=" and source.startswith("==", pos)) and not (ch == "." and _in_number(source, pos)):
            _fail(what, source, pos, f"{ch!r} is {_FORBIDDEN[ch]}, not part of an expression")
    out, pos = [], 0
    while pos < len(source):
        m = _TOKEN.match(source, pos)
        if m is None:
            _fail(what, source, pos, f"{source[pos]!r} is not part of an expression (numbers, a name, operators, "
                                     "parentheses and commas)")
        if m.lastgroup != "space":
            out.append((m.lastgroup, m.group(), pos))
        pos = m.end()
    out.append(("end", "", len(source)))
    return out


def _in_number(source: str, pos: int) -> bool:
    """Whether the '.' at pos is a decimal point (a digit on either side of it)."""
    before = pos > 0 and source[pos - 1].isdigit()
    after = pos + 1 < len(source) and source[pos + 1].isdigit()
    return before or after


class _Parser:
    def __init__(self, source: str, variables: tuple, what: str):
        self.source, self.variables, self.what = source, variables, what
        self.tokens = _tokens(source, what)
        self.k = 0

    def fail(self, problem: str, pos: int | None = None):
        _fail(self.what, self.source, self.tokens[self.k][2] if pos is None else pos, problem)

    def peek(self, offset: int = 0):
        return self.tokens[min(self.k + offset, len(self.tokens) - 1)]

    def take(self, text: str | None = None):
        token = self.tokens[self.k]
        if text is not None and token[1] != text:
            got = "the end" if token[0] == "end" else repr(token[1])
            self.fail(f"expected {text!r}, got {got}")
        self.k += 1
        return token

    def parse(self):
        if self.peek()[0] == "end":
            self.fail("the expression is empty")
        tree = self.conditional()
        if self.peek()[0] != "end":
            self.fail(f"unexpected {self.peek()[1]!r} (an operator or the end was expected)")
        return tree

    def conditional(self):
        condition = self.binary(0)
        if self.peek()[1] != "?":
            return condition
        self.take("?")
        then = self.conditional()
        self.take(":")
        return ("cond", condition, then, self.conditional())

    def binary(self, level: int):
        if level == len(_BINARY_LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek()[0] == "op" and self.peek()[1] in _BINARY_LEVELS[level]:
            op = self.take()[1]
            left = ("bin", op, left, self.binary(level + 1))
        return left

    def unary(self):
        kind, text, pos = self.peek()
        if kind == "op" and text in ("-", "+", "!", "~"):
            self.take()
            return ("unary", text, self.unary())
        if text == "(" and self.peek(1)[0] == "name" and self.peek(1)[1] in TYPE_WORDS:
            self.take("(")
            words = []
            while self.peek()[0] == "name" and self.peek()[1] in TYPE_WORDS:
                words.append(self.take()[1])
            spelling = " ".join(words)
            if spelling not in CAST_TYPES:
                self.fail(f"({spelling}) is not a cast pyscan takes: (bool), (int), (unsigned), (long long), "
                          "(unsigned long long), (float), (double), ...", pos)
            self.take(")")
            return ("cast", np.dtype(CAST_TYPES[spelling]), spelling, self.unary())
        return self.primary()

    def primary(self):
        kind, text, pos = self.take()
        if kind == "number":
            value, dtype = _number(text, self.what, self.source, pos)
            return ("num", value, dtype, text)
        if kind == "name":
            if self.peek()[1] == "(":
                if text not in FUNCTIONS:
                    _fail(self.what, self.source, pos, f"{text}() is not a function pyscan takes: "
                                                       f"{', '.join(FUNCTIONS)}")
                self.take("(")
                args = [self.conditional()]
                while self.peek()[1] == ",":
                    self.take(",")
                    args.append(self.conditional())
                self.take(")")
                if len(args) != FUNCTIONS[text]:
                    _fail(self.what, self.source, pos, f"{text}() takes {FUNCTIONS[text]} argument"
                                                       f"{'s' if FUNCTIONS[text] > 1 else ''}, got {len(args)}")
                return ("call", text, tuple(args))
            if text in self.variables:
                return ("var", text)
            if text in TYPE_WORDS:
                _fail(self.what, self.source, pos, f"{text!r} is a type name: it goes in a cast, ({text})x")
            if text in FUNCTIONS:
                _fail(self.what, self.source, pos, f"{text} is a function: call it, {text}(...)")
            _fail(self.what, self.source, pos, f"unknown name {text!r}: the expression's variables are "
                                               f"{' and '.join(self.variables)}, and its functions "
                                               f"{', '.join(FUNCTIONS)}")
        if text == "(":
            inner = self.conditional()
            self.take(")")
            return inner
        got = "the end" if kind == "end" else repr(text)
        _fail(self.what, self.source, pos, f"expected a number, a variable, a function call or '(', got {got}")


def _to_c(node) -> str:
    """The tree as C, every operation in parentheses (the C the kernels compile)."""
    tag = node[0]
    if tag == "num":
        return node[3]
    if tag == "var":
        return node[1]
    if tag == "unary":
        return f"({node[1]}{_to_c(node[2])})"
    if tag == "cast":
        return f"(({node[2]}){_to_c(node[3])})"
    if tag == "bin":
        return f"({_to_c(node[2])} {node[1]} {_to_c(node[3])})"
    if tag == "cond":
        return f"({_to_c(node[1])} ? {_to_c(node[2])} : {_to_c(node[3])})"
    return f"pyscan_{node[1]}({', '.join(_to_c(a) for a in node[2])})"


# ---------------------------------------------------------------------------------------------------------------
# Evaluation with NumPy, by C's rules (the module docstring).

def _promote(v: np.ndarray) -> np.ndarray:
    """C's integer promotion: bool and the integers narrower than int become int."""
    if v.dtype.kind == "b" or (v.dtype.kind in "iu" and v.dtype.itemsize < 4):
        return v.astype(_INT32)
    return v


def _common(x: np.dtype, y: np.dtype) -> np.dtype:
    """C's usual arithmetic conversions of two promoted types."""
    if _FLOAT64 in (x, y):
        return _FLOAT64
    if _FLOAT32 in (x, y):
        return _FLOAT32
    if x == y:
        return x
    if x.kind == y.kind:
        return x if x.itemsize > y.itemsize else y
    signed, unsigned = (x, y) if x.kind == "i" else (y, x)
    if unsigned.itemsize >= signed.itemsize:
        return unsigned
    return signed  # a wider signed type holds every value of the unsigned one (long long + unsigned int)


def _both(x, y):
    x, y = _promote(x), _promote(y)
    c = _common(x.dtype, y.dtype)
    return x.astype(c, copy=False), y.astype(c, copy=False), c


def _truth(v: np.ndarray) -> np.ndarray:
    return v != 0  # NaN is nonzero: true, as in C


def _as_int(b: np.ndarray) -> np.ndarray:
    return b.astype(_INT32)


def _divide(x, y):
    if x.dtype.kind == "f":
        return np.divide(x, y)
    safe = np.where(y == 0, 1, y).astype(x.dtype)  # division by zero is undefined in C: 0 here
    q = np.floor_divide(x, safe)
    if x.dtype.kind == "i":  # C truncates toward zero; floor_divide rounds down
        q = q + ((np.remainder(x, safe) != 0) & ((x < 0) != (safe < 0))).astype(x.dtype)
    return np.where(y == 0, np.zeros((), x.dtype), q).astype(x.dtype)


def _remainder(x, y):
    safe = np.where(y == 0, 1, y).astype(x.dtype)
    return np.where(y == 0, np.zeros((), x.dtype), np.fmod(x, safe)).astype(x.dtype)


_BINARY = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": _divide, "%": _remainder,
    "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor,
}
_COMPARE = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "==": np.equal,
            "!=": np.not_equal}


def _floating(v: np.ndarray) -> np.ndarray:
    """An argument of the <cmath> functions: floats as they are, integers as double (C++'s overloads)."""
    v = _promote(v)
    return v if v.dtype.kind == "f" else v.astype(_FLOAT64)


def _max(x, y):
    x, y, c = _both(x, y)
    return np.fmax(x, y) if c.kind == "f" else np.maximum(x, y)


def _min(x, y):
    x, y, c = _both(x, y)
    return np.fmin(x, y) if c.kind == "f" else np.minimum(x, y)


def _fmax(x, y):
    x, y, c = _both(x, y)
    return np.fmax(_floating(x), _floating(y))


def _fmin(x, y):
    x, y, c = _both(x, y)
    return np.fmin(_floating(x), _floating(y))


def _abs(x):
    x = _promote(x)
    return x if x.dtype.kind == "u" else np.abs(x)  # abs(INT_MIN) stays INT_MIN, as the GPU's wrapping negate


_FUNCTIONS = {
    "max": _max, "min": _min, "fmax": _fmax, "fmin": _fmin, "abs": _abs,
    "fabs": lambda x: np.abs(_floating(x)), "sqrt": lambda x: np.sqrt(_floating(x)),
    "floor": lambda x: np.floor(_floating(x)), "ceil": lambda x: np.ceil(_floating(x)),
    "trunc": lambda x: np.trunc(_floating(x)),
}


def _cast(v: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "b":
        return _truth(v)
    return v.astype(dtype)


def _evaluate(node, env: dict, what: str, source: str) -> np.ndarray:
    tag = node[0]
    if tag == "num":
        return np.asarray(node[1], dtype=node[2])
    if tag == "var":
        return env[node[1]]
    if tag == "cast":
        return _cast(_evaluate(node[3], env, what, source), node[1])
    if tag == "unary":
        v = _promote(_evaluate(node[2], env, what, source))
        op = node[1]
        if op == "!":
            return _as_int(v == 0)
        if op == "~":
            _integers_only(op, v.dtype, what, source)
            return np.invert(v)
        return np.negative(v) if op == "-" else v
    if tag == "cond":
        condition = _truth(_evaluate(node[1], env, what, source))
        then, other, _ = _both(_evaluate(node[2], env, what, source), _evaluate(node[3], env, what, source))
        return np.where(condition, then, other)
    if tag == "call":
        return _FUNCTIONS[node[1]](*(_promote(_evaluate(a, env, what, source)) for a in node[2]))
    op, left, right = node[1], _evaluate(node[2], env, what, source), _evaluate(node[3], env, what, source)
    if op == "&&":
        return _as_int(_truth(left) & _truth(right))
    if op == "||":
        return _as_int(_truth(left) | _truth(right))
    if op in ("<<", ">>"):
        left, right = _promote(left), _promote(right)
        _integers_only(op, left.dtype, what, source)
        _integers_only(op, right.dtype, what, source)
        shift = right.astype(left.dtype)
        return (np.left_shift if op == "<<" else np.right_shift)(left, shift)
    x, y, c = _both(left, right)
    if op in _COMPARE:
        return _as_int(_COMPARE[op](x, y))
    if op in _INTEGER_ONLY:
        _integers_only(op, c, what, source)
    return _BINARY[op](x, y)


def _integers_only(op: str, dtype: np.dtype, what: str, source: str):
    if dtype.kind == "f":
        raise TypeError(f"{what}={source!r}: {op!r} takes integers, and here an operand is {C_NAMES[dtype]}: cast it to "
                        "an integer type first, e.g. (long long)")


# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Expression:
    """A checked C expression: `source` as the caller wrote it, `c` the C the kernels compile (written from the tree:
    equal for equal trees, whatever the spacing), `variables` its parameter names.  Hashable: kernels are cached
    by it."""

    c: str
    variables: tuple
    source: str = field(compare=False)
    what: str = field(compare=False)
    tree: tuple = field(compare=False, repr=False)

    def evaluate(self, *values):
        """The expression on NumPy arrays (one per variable, broadcast together), with C's rules: the array of the
        C type the expression gives (bool results of comparisons as int 0/1)."""
        env = {name: np.asarray(v) for name, v in zip(self.variables, values)}
        with np.errstate(all="ignore"):
            return np.asarray(_evaluate(self.tree, env, self.what, self.source))

    def result_type(self, *dtypes) -> np.dtype:
        """The C type (a NumPy dtype) the expression gives for variables of these dtypes; TypeError where an
        operator takes integers and gets a float (what nvcc would refuse)."""
        return self.evaluate(*(np.zeros(0, d) for d in dtypes)).dtype

    def __str__(self):
        return self.source


def parse(source, variables: tuple = OPERATOR_VARIABLES, what: str = "op") -> Expression:
    """`source` checked and parsed (ExpressionError: what is wrong, quoted and marked; TypeError: not a str).
    Parsed once per (source, variables, what): a call that names the same expression again looks it up (an
    Expression is immutable), as its kernels are."""
    if not isinstance(source, str):
        raise TypeError(f"{what}: expected a str (a name or a C expression), got {type(source).__name__} {source!r}")
    return _parse(source, tuple(variables), what)


@functools.lru_cache(maxsize=256)
def _parse(source: str, variables: tuple, what: str) -> Expression:
    tree = _Parser(source, variables, what).parse()
    return Expression(_to_c(tree), variables, source, what, tree)


# ---------------------------------------------------------------------------------------------------------------
# C literals: a value of a dtype written so that the compiler makes exactly its bits.

def c_literal(value, dtype) -> str:
    """`value` (already of `dtype`: a NumPy scalar or a Python number that the dtype holds exactly) as a C expression
    of the dtype's C type with exactly its bits: integers as decimal literals with an LL / ULL suffix (the lowest
    int64 as (-9223372036854775807LL-1), since 9223372036854775808LL does not exist), floats as their bit pattern
    through cuda::std::bit_cast (NaN payloads, -0.0 and infinities included; usable on host and device), bool as
    true / false."""
    from .types import BFLOAT16, ELEMENT_TYPES, check_dtype, float32_to_bfloat16

    dtype = check_dtype(dtype)
    c_type = ELEMENT_TYPES[dtype]
    if dtype.kind == "b":
        return "true" if bool(value) else "false"
    if dtype == BFLOAT16:
        bits = int(np.asarray(float32_to_bfloat16(np.float32([value]))).view(np.uint16)[0])
        return f"cuda::std::bit_cast<__nv_bfloat16>((unsigned short){bits:#06x}U)"
    if dtype.kind == "f":
        unsigned = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize]
        bits = int(np.asarray(value, dtype).reshape(1).view(unsigned)[0])
        width = 2 * dtype.itemsize
        word = {2: "(unsigned short)", 4: "", 8: ""}[dtype.itemsize]
        suffix = {2: "U", 4: "U", 8: "ULL"}[dtype.itemsize]
        return f"cuda::std::bit_cast<{c_type}>({word}0x{bits:0{width}x}{suffix})"
    v = int(value)
    info = np.iinfo(dtype)
    if not info.min <= v <= info.max:
        raise ValueError(f"{v} does not fit in {dtype}")
    if dtype.kind == "u":
        text = f"{v}ULL"
    elif v == -2**63:
        text = "(-9223372036854775807LL-1)"
    else:
        text = f"{v}LL" if v >= 0 else f"({v}LL)"
    return text if dtype.itemsize == 8 else f"(({c_type}){text})"


__all__ = ["CAST_TYPES", "FUNCTIONS", "MAP_VARIABLES", "OPERATOR_VARIABLES", "Expression", "ExpressionError",
           "c_literal", "parse"]
