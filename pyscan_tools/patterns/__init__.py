"""What the tools know about each pattern, written once: bench and check loop over PATTERNS and never ask a
pattern's name.

A Pattern gives, for the bench: the cases timed at every size, the inputs, the NumPy reference, the equality
of a result with it, the bytes a call moves (for the ratio to a copy), the public call as a user makes it; for
the check: its cases per algorithm, the few that prove `auto`, and how one case runs.  One module per pattern
(scan, reduce, histogram, life, basics) builds its Pattern from the library's own references
(pyscan.scans.reference, pyscan.reductions.reference, pyscan.histograms.reference, pyscan.life.reference).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Case:
    """One check case: a pattern, an algorithm (a registry name or auto) and its parameters, sorted."""

    pattern: str
    algorithm: str
    params: tuple = ()  # sorted (key, value) pairs

    @property
    def p(self) -> dict:
        return dict(self.params)

    @property
    def label(self) -> str:
        return f"{self.pattern}/{self.algorithm}[" + ",".join(f"{k}={v}" for k, v in self.params) + "]"

    @property
    def unit(self) -> tuple:
        """What one compile specialises: the cases of one unit share their kernels."""
        p = self.p
        return (self.pattern, self.algorithm, p.get("dtype"), p.get("op"))


def case(pattern: str, algorithm: str, **params) -> Case:
    return Case(pattern, algorithm, tuple(sorted(params.items())))


@dataclass(frozen=True)
class Pattern:
    name: str  # the registry's name (basics: the functions that have no registry)
    registry: str | None  # the name in pyscan.REGISTRIES whose algorithms the check covers
    # -- bench (a pattern without bench_cases is not benchmarked)
    bench_cases: tuple = ()  # (dtype, op) timed at every size; op is the data's kind where there is no operator
    sizes: dict | None = None  # preset name -> sizes: element counts, or (H, W) lattices for life
    make_input: Callable | None = None  # (size, dtype, op, rng) -> host array
    reference: Callable | None = None  # (host, op, units) -> what a call must give (units: life's generations)
    same: Callable | None = None  # (got as NumPy, expected) -> bool
    reads_only: bool = False  # True: a call reads its input once and writes little (reduce, histogram)
    public_name: str = ""  # the public function the bench times, as a user writes it
    public_call: Callable | None = None  # (pyscan, x, op, algorithm) -> (call, result): call() as a user makes it
    driver_call: Callable | None = None  # (registry entry, x: GPUArray, op) -> call of the driver alone, or None
    inputs_depend_on_op: bool = False  # histogram: the op is the data (uniform or all-equal bytes)
    units: int = 1  # what one timed call does: life advances this many generations
    lattice: bool = False  # sizes are (H, W): life's lattices, the axis patterns' 2-D shapes
    # False: each size is a shape of its own (axis patterns), not one input grown: a row's time at one size predicts
    # nothing of the next, and a refusal or a failure at one does not hold for the others
    sizes_grow: bool = True
    # (host, op) -> the bytes a call reads and the bytes it writes, where they differ (a scan into a wider dtype): the
    # baseline (copy_ms) is the mean time of a device copy of each; None: one copy of copy_bytes(host)
    copies: Callable | None = None
    check_max_cells: int | None = None  # results are checked up to this many cells (None: the bench's setting)
    baseline_columns: bool = False  # the table gives time / baseline and the fastest peer / pyscan, not x copy
    # -- check
    check_cases: Callable | None = None  # (algorithm, quick) -> [Case]
    auto_cases: Callable | None = None  # () -> [Case]: the few that prove `auto` dispatches
    run_case: Callable | None = None  # (Case, rng) -> (status, detail): "ok" / "mismatch" / "skip", and why

    def copy_bytes(self, host: np.ndarray) -> int:
        """The bytes the device copy of the same size moves one way: the input's bytes (life: int32 cells, the
        book's layout)."""
        return host.size * 4 if self.lattice else host.nbytes

    def copied_bytes(self, host: np.ndarray, op: str) -> tuple:
        """The bytes of each device copy timed beside the rows; copy_ms is the mean of their times."""
        return tuple(self.copies(host, op)) if self.copies else (self.copy_bytes(host),)

    def x_copy(self, ms: float, copy_ms: float) -> float:
        """The row's fraction of the copy's throughput.  A scan or a generation reads and writes every element
        once, as the copy: copy time / time.  A reduction or a histogram only reads: bytes read per second
        against the copy's bytes read + written per second = copy time / (2 x time)."""
        return copy_ms / (2 * ms) if self.reads_only else copy_ms / ms


def cells(size) -> int:
    return size[0] * size[1] if isinstance(size, tuple) else int(size)


def size_label(size) -> str:
    if isinstance(size, tuple):
        return f"{size[0]}x{size[1]}"
    n = int(size)
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def parse_size(token: str, lattice: bool):
    """One size: an element count ("4096", "2^12", "2**12", "4k", "16M") or, for a lattice (or a 2-D shape), "HxW" or
    a count of cells of a square (2^20 -> 1024 x 1024).  Returns an int, or (H, W) for a lattice."""
    text = token.strip().lower().replace("×", "x")
    if "x" in text:
        parts = text.split("x")
        if len(parts) != 2:
            raise ValueError(f"size {token!r}: expected HxW")
        h, w = (parse_size(p, False) for p in parts)
        return (h, w) if lattice else h * w
    try:
        if "^" in text or "**" in text:
            base, exp = text.replace("**", "^").split("^")
            value = int(base) ** int(exp)
        elif text[-1:] in ("k", "m", "g"):
            value = int(text[:-1]) * 2 ** {"k": 10, "m": 20, "g": 30}[text[-1]]
        else:
            value = int(text)
    except ValueError:
        raise ValueError(f"size {token!r}: expected a count like 4096, 2^12, 16M, or HxW (life, axes)") from None
    if value < 1:
        raise ValueError(f"size {token!r}: must be at least 1")
    if lattice:
        side = math.isqrt(value)
        if side * side != value:
            raise ValueError(f"size {token!r}: {value} cells is not a square; write HxW")
        return (side, side)
    return value


def first_difference(got, want) -> str:
    """'' if got equals want (NaN where want has NaN counts as equal), else where they first differ."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape} != expected {want.shape}"
    bad = np.flatnonzero(~((got == want) | ((got != got) & (want != want))).ravel())
    if bad.size == 0:
        return ""
    i = bad[0]
    return (f"{bad.size} of {want.size} elements differ; first at flat index {i}: got {got.ravel()[i]!r}, "
            f"expected {want.ravel()[i]!r}")


def _load() -> dict:
    from . import arg_extreme, axes, basics, histogram, life, numpy_histogram, reduce, scan, segments

    # the tools' order: the book's chapters from scan (PMPP ch. 11) down, then Life and the basics
    return {p.name: p for p in (scan.PATTERN, reduce.PATTERN, axes.AXIS_SCAN, axes.AXIS_REDUCE,
                                segments.SEGMENTED_SCAN, segments.SEGMENTED_REDUCE,
                                arg_extreme.PATTERN, histogram.PATTERN, numpy_histogram.HISTOGRAM,
                                numpy_histogram.BINCOUNT, life.PATTERN, basics.PATTERN)}


PATTERNS: dict = _load()
BENCH_PATTERNS = tuple(name for name, p in PATTERNS.items() if p.bench_cases)
CHECK_PATTERNS = tuple(name for name, p in PATTERNS.items() if p.run_case is not None)

__all__ = ["BENCH_PATTERNS", "CHECK_PATTERNS", "Case", "PATTERNS", "Pattern", "case", "cells", "first_difference",
           "parse_size", "size_label"]
