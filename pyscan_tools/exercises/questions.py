"""Hands-On ch. 4's questions that pyscan can answer by counting and running, rather than by hand.

    python -m pyscan_tools.exercises.questions          (the counts need no GPU; the runs and timings do)

* Additions of the naive and the work-efficient prefix sum of 32 elements: read off the NumPy step-models (the
  kernels' own index arithmetic, pyscan.scans.tracing.model_count_work) and, on a GPU, counted by the kernels'
  COUNT_WORK builds (every op_combine performed, an atomic counter per combine), beside the books' formulas.
* The scalar multiply over 10,000 elements with block=(100,1,1), grid=(100,1,1): run, and checked against NumPy.
* The naive prefix sum at every length 1 .. 1024: run, and checked against NumPy.
* Timings of the naive, Kogge-Stone, Brent-Kung and Blelloch scans at a few lengths (device-resident input,
  median of launches between CUDA events).
"""

from __future__ import annotations

import sys

import numpy as np

N_COUNTED = 32
TIMED_LENGTHS = (32, 1024, 1 << 20, 1 << 24)
TIMED_SCANS = ("naive", "kogge_stone", "brent_kung", "blelloch", "decoupled_lookback")


def counted_additions(n: int = N_COUNTED, gpu: bool = False) -> dict:
    """{algorithm: (model additions, GPU-counted additions or None, the book's formula and value)}."""
    from pyscan.scans import tracing

    from ..pictures.visual import BOOK_FORMULAS, FORMULA_OF

    out = {}
    for name in ("naive", "kogge_stone", "brent_kung", "blelloch"):
        model = tracing.model_count_work(name, n).additions
        measured = tracing.count_work(name, n).additions if gpu else None
        formula, value = BOOK_FORMULAS[FORMULA_OF[name]]
        out[name] = (model, measured, formula, value(n))
    return out


def scalar_multiply_10000() -> float:
    """Max |error| of the worked solution run with block=(100,1,1), grid=(100,1,1) on 10,000 float32 elements."""
    from pyscan.runtime.arrays import Call
    from pyscan.runtime.loader import get_kernel

    call = Call.tool()
    x = np.random.default_rng(0).uniform(-1, 1, 10_000).astype(np.float32)
    x_dev = call.to_device(x)
    out = call.empty((x.size,), x.dtype)
    fn = get_kernel("basics/scalar_multiply.cu", "scalar_multiply", ELEM_TYPE="float")
    fn.prepared_call((100, 1, 1), (100, 1, 1), out.gpudata, x_dev.gpudata, np.float32(2.5), np.int64(x.size))
    return float(np.max(np.abs(out.get() - np.float32(2.5) * x)))


def naive_every_length(limit: int = 1024) -> list:
    """The lengths 1 .. limit at which the naive scan (kernels/scan/naive.cu, one block) differs from NumPy."""
    from pyscan.runtime.arrays import Call
    from pyscan.scans import SCANS

    driver = SCANS.get("naive").driver
    call = Call.tool()
    wrong = []
    rng = np.random.default_rng(1)
    for n in range(1, limit + 1):
        x = rng.integers(-100, 101, n).astype(np.int32)
        x_dev = call.to_device(x)
        out = call.empty((n,), x.dtype)
        driver(x_dev, out, op="add", exclusive=False, call=call)
        if not np.array_equal(out.get(), np.cumsum(x, dtype=np.int32)):
            wrong.append(n)
    return wrong


def timings() -> dict:
    """{(algorithm, n): median ms of one scan of n int32 on the device}."""
    from pyscan.runtime.arrays import Call
    from pyscan.scans import SCANS
    from pyscan.timing import median_ms

    call = Call.tool()
    rows = {}
    for n in TIMED_LENGTHS:
        x = call.to_device(np.ones(n, np.int32))
        out = call.empty((n,), np.int32)
        for name in TIMED_SCANS:
            driver = SCANS.get(name).driver
            rows[name, n] = median_ms(lambda d=driver, x=x, out=out: d(x, out, op="add", exclusive=False, call=call),
                                      repeat=15)
    return rows


def main() -> int:
    from pyscan import gpu_unavailable_reason

    gpu = gpu_unavailable_reason() is None
    print(f"Additions of one inclusive scan of {N_COUNTED} elements (Blelloch: its natural exclusive scan; the "
          f"inclusive one adds {N_COUNTED} more in the store):")
    for name, (model, measured, formula, book) in counted_additions(gpu=gpu).items():
        counted = f", counted on the GPU {measured}" if measured is not None else ""
        print(f"  {name:12s} model {model}{counted}; book {formula} = {book}")
    if not gpu:
        print("no GPU: the runs and timings are skipped")
        return 3
    print(f"scalar multiply, 10,000 float32, block=(100,1,1), grid=(100,1,1): max |error| {scalar_multiply_10000()}")
    wrong = naive_every_length()
    print(f"naive prefix sum at every length 1 .. 1024: {'right at all' if not wrong else f'wrong at {wrong[:10]}'}")
    rows = timings()
    print("median ms per scan (int32, input on the device):")
    print("  " + "n".rjust(10) + "".join(name.rjust(20) for name in TIMED_SCANS))
    for n in TIMED_LENGTHS:
        print("  " + f"{n:10d}" + "".join(f"{rows[name, n]:20.4f}" for name in TIMED_SCANS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
