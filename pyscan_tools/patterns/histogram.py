"""Histogram (PMPP ch. 9): the bench times pyscan.byte_histogram on 256 bins of uniform and of all-equal bytes (the
contention case) against cupy.histogram and torch.bincount; the check runs every algorithm on bytes, bins from 1
to 256, NumPy, bytes and device inputs, and the letter histogram of Fig. 9.1 (text_histogram)."""

from __future__ import annotations

import numpy as np

from pyscan.histograms.reference import reference_histogram

from . import Pattern, case, first_difference
from ._arrays import returning, to_numpy, upload

BINS = 256
SIZES = {"default": [2**k for k in range(20, 29, 2)], "full": [2**k for k in range(20, 29)],
         "quick": [2**20, 2**24, 2**28], "small": [2**12, 2**16 + 3]}


def make_input(size, dtype, data, rng) -> np.ndarray:
    """Uniform random bytes, or every byte equal ('a': all threads hit one counter)."""
    if data == "all-equal":
        return np.full(int(size), ord("a"), np.uint8)
    return rng.integers(0, 256, size=int(size), dtype=np.uint8)


def check_cases(name: str, quick: bool) -> list:
    cases = []
    for n in (1, 1025, 70001) if quick else (1, 7, 1025, 70001):
        for bins in (7, 256) if quick else (1, 7, 256):
            cases.append(case("histogram", name, n=n, bins=bins, data="uniform", kind="numpy"))
    cases.append(case("histogram", name, n=1025, bins=1, data="uniform", kind="bytes"))
    cases.append(case("histogram", name, n=70001, bins=256, data="equal", kind="gpu"))
    if not quick:
        cases.append(case("histogram", name, n=70001, bins=7, data="equal", kind="numpy"))
        cases.append(case("histogram", name, n=4099, bins=100, data="runs", kind="bytes"))
    cases.append(case("histogram", name, text="phrase"))
    cases.append(case("histogram", name, text="bytes", n=5000 if quick else 70001))
    if not quick:
        cases.append(case("histogram", name, text="unicode"))
    return cases


def auto_cases() -> list:
    return [case("histogram", "auto", n=1025, bins=256, data="uniform", kind="numpy")]


def _bytes(p, rng) -> np.ndarray:
    n = p["n"]
    if p["data"] == "equal":
        return np.full(n, 200, dtype=np.uint8)
    if p["data"] == "runs":  # long runs of equal bytes: what aggregation merges
        return np.repeat(rng.integers(0, 256, n // 50 + 1, dtype=np.uint8), 50)[:n]
    return rng.integers(0, 256, n, dtype=np.uint8)


def run_case(c, rng) -> tuple:
    import pyscan

    p = c.p
    if "text" in p:  # the letter histogram (text_histogram)
        if p["text"] == "phrase":
            text = "programming massively parallel processors"
        elif p["text"] == "unicode":
            text = "Ünïcödé façade, naïve café; ABC xyz! " * 37
        else:
            text = rng.integers(0, 256, p["n"], dtype=np.uint8).tobytes()
        raw = text.encode("utf-8") if isinstance(text, str) else text
        out = pyscan.text_histogram(text, algorithm=c.algorithm)
        diff = first_difference(to_numpy(out), reference_histogram(np.frombuffer(raw, np.uint8), letters=True))
        return ("mismatch", diff) if diff else ("ok", "")
    bins, data = p["bins"], _bytes(p, rng)
    keep = data.copy()
    arg = {"numpy": data, "bytes": data.tobytes(), "gpu": None}[p["kind"]]
    if p["kind"] == "gpu":
        arg = upload(data)
    out = to_numpy(pyscan.byte_histogram(arg, bins, algorithm=c.algorithm))
    if out.dtype.kind not in "iu" or out.shape != (bins,):
        return "mismatch", f"expected integer counts of shape ({bins},), got {out.dtype} {out.shape}"
    after = np.frombuffer(arg, np.uint8) if p["kind"] == "bytes" else to_numpy(arg)
    if not np.array_equal(after, keep):
        return "mismatch", "the input was modified"
    diff = first_difference(out, reference_histogram(data, bins))
    return ("mismatch", diff) if diff else ("ok", "")


def _same(got, expected) -> bool:
    return got.shape == expected.shape and np.array_equal(got.astype(np.int64), expected.astype(np.int64))


def driver_call(algorithm, x, data):
    """The registered driver alone on a uint8 GPUArray (counts into a device array)."""
    from pyscan.runtime.arrays import Call

    call = Call.tool()
    return lambda: algorithm.driver(x, BINS, call=call)


PATTERN = Pattern(
    name="histogram", registry="histogram",
    bench_cases=(("uint8", "uniform"), ("uint8", "all-equal")), sizes=SIZES, make_input=make_input,
    reference=lambda host, data, units: reference_histogram(host, BINS),
    same=_same, reads_only=True, inputs_depend_on_op=True,
    public_name="pyscan.byte_histogram", driver_call=driver_call,
    public_call=lambda pyscan, x, data, algorithm: returning(lambda: pyscan.byte_histogram(x, BINS, algorithm=algorithm)),
    check_cases=check_cases, auto_cases=auto_cases, run_case=run_case,
)
