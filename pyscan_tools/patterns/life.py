"""Conway's Game of Life on a torus (Hands-On ch. 4): the bench times Life.advance on a device lattice, per
generation, against the book's conway_ker as printed; the check runs every kernel through life.step and the Life
class on lattices of several shapes and dtypes against pyscan.life.reference_step."""

from __future__ import annotations

import re

import numpy as np

from pyscan.life.reference import reference_step

from . import Pattern, case, first_difference

GENERATIONS_PER_CALL = 16  # kernels that run several generations a launch need more than one to be timed fairly
SIDES = (1024, 2048, 4096, 8192, 16384)
SIZES = {"default": [(s, s) for s in SIDES], "full": [(s, s) for s in SIDES],
         "quick": [(1024, 1024), (4096, 4096), (16384, 16384)], "small": [(32, 32), (100, 37)]}
SHAPES = ((32, 32), (7, 13), (100, 37))
# temporal (k generations a launch): shapes not multiples of its 64-row x 960-column tile, 1 x n and n x 1, and the
# k of each pass fixed through the driver (1, the default 8, a remainder, the largest)
TEMPORAL_SHAPES = ((67, 1001), (1, 97), (97, 1))
TEMPORAL_KS = (1, 5, 8, 16)


def make_input(size, dtype, op, rng) -> np.ndarray:
    """A lattice of int32 cells (the book's layout), 25 % alive."""
    h, w = size
    return (rng.integers(0, 4, size=(h, w), dtype=np.uint8) == 0).astype(np.int32)


def public_call(pyscan, x, op, algorithm):
    game = pyscan.life.Life(x, kernel=algorithm)
    return (lambda: game.advance(GENERATIONS_PER_CALL)), (lambda: game.lattice)  # the caller's kind, on the device


def check_cases(name: str, quick: bool) -> list:
    cases = []
    dtypes = ("bool", "uint8", "int32")
    for i, shape in enumerate(SHAPES):
        if quick:
            cases.append(case("life", name, api="step", shape=shape, dtype=dtypes[i % 3], generations=(3, 2, 1)[i]))
        else:
            cases += [case("life", name, api="step", shape=shape, dtype=dtype, generations=g)
                      for dtype in dtypes for g in (1, 4)]
    cases.append(case("life", name, api="Life", shape=(32, 32), dtype="uint8", generations=5))
    if not quick:
        cases.append(case("life", name, api="Life", shape=(7, 13), dtype="bool", generations=3))
    if name == "temporal":
        for shape in TEMPORAL_SHAPES[:1] if quick else TEMPORAL_SHAPES:
            cases += [case("life", name, api="passes", shape=shape, dtype="uint8", generations=2 * k + 3, k=k)
                      for k in TEMPORAL_KS]
    return cases


def auto_cases() -> list:
    return [case("life", "auto", api="step", shape=(100, 37), dtype="uint8", generations=2)]


def run_case(c, rng) -> tuple:
    import pyscan

    p = c.p
    h, w = p["shape"]
    lattice = (rng.random((h, w)) < 0.35).astype(p["dtype"])
    keep = lattice.copy()
    want = reference_step(lattice, p["generations"])
    try:
        if p["api"] == "step":
            out = pyscan.life.step(lattice, p["generations"], kernel=c.algorithm)
        elif p["api"] == "passes":  # the temporal driver with k generations a pass (and a remainder pass)
            from pyscan.life import LIFE, _upload
            from pyscan.runtime.arrays import Call

            call = Call.tool()
            driver = LIFE.get(c.algorithm).driver(_upload(lattice, call), call, generations_per_pass=p["k"])
            driver.advance(p["generations"])
            out = driver.cells().get()
        else:
            game = pyscan.life.Life(lattice, kernel=c.algorithm)
            game.advance(p["generations"])
            out = game.get()
            population = int(want.astype(np.int64).sum())
            if int(game.population) != population or int(game.generation) != p["generations"]:
                return "mismatch", (f"population {game.population} / generation {game.generation}, expected "
                                    f"{population} / {p['generations']}")
    except ValueError as exc:
        if h * w > 1024 and re.search(r"1024|limit|block", str(exc)):
            return "skip", f"{h}x{w} past the kernel's limit: {exc}"
        raise
    if not isinstance(out, np.ndarray) or out.dtype != lattice.dtype or out.shape != lattice.shape:
        return "mismatch", (f"expected {lattice.dtype} {lattice.shape}, got {type(out).__name__} "
                            f"{getattr(out, 'dtype', '')} {getattr(out, 'shape', '')}")
    if not np.array_equal(lattice, keep):
        return "mismatch", "the input was modified"
    diff = first_difference(out, want)
    return ("mismatch", diff) if diff else ("ok", "")


def _same(got, expected) -> bool:
    return got.shape == expected.shape and np.array_equal(got != 0, expected != 0)


PATTERN = Pattern(
    name="life", registry="life",
    bench_cases=(("int32", "-"),), sizes=SIZES, make_input=make_input,
    reference=lambda host, op, units: reference_step(host, units),
    same=_same, reads_only=False, public_name="pyscan.life.Life(x).advance", public_call=public_call,
    units=GENERATIONS_PER_CALL, lattice=True,
    check_cases=check_cases, auto_cases=auto_cases, run_case=run_case,
)


