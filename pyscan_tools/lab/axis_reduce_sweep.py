"""The axis reduction's column geometry swept on the bench's shapes (docs/axis.md, "Tuning the column reduction").

    python -m pyscan_tools.lab.axis_reduce_sweep int32,float16 grid   # every (lanes a thread, rows, blocks per SM)
    python -m pyscan_tools.lab.axis_reduce_sweep int32,float16 list   # the shipped plan, every shape and axis

µs per public call on CuPy arrays (CUDA events around 100 back-to-back calls, the median of 5); "base" is half a
device copy of x (reading it once).  grid mode patches pyscan.reductions.axis's constants (column_vec,
COLUMN_MIN_ROWS, BLOCKS_PER_SM) and clears its plans before each variant, and checks every variant's result against
the first's; the last column is the shipped plan's passes (kernel:grid:(lanes, rows, chunk rows))."""

import itertools
import sys

import numpy as np

import pyscan
from pyscan.reductions import axis as raxis
from pyscan.runtime import driver

CASES = [((4096, 4096), 0), ((16, 2**20), 0), ((64, 65536), 0), ((2**20, 16), 0), ((2**23, 2), 0),
         ((2**23, 2), 1), ((2**20, 16), 1), ((64, 65536), 1), ((16, 2**20), 1), ((4096, 4096), 1)]
KNOBS = ("BLOCKS_PER_SM", "COLUMN_MIN_ROWS", "column_vec")


def timeit(cp, f, reps=100, rounds=5):
    f()
    f()
    cp.cuda.runtime.deviceSynchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(rounds):
        start.record()
        for _ in range(reps):
            f()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) * 1000 / reps)
    return float(np.median(times))


def lanes_rule(lanes):
    return lambda inner, itemsize: lanes if inner >= 32 else 1


def variants(mode):
    found = {"shipped": {}}
    if mode == "grid":
        for lanes, rows, blocks in itertools.product((1, 2, 4, 8), (8, 32, 64), (4, 8)):
            found[f"v{lanes}m{rows}b{blocks}"] = {"column_vec": lanes_rule(lanes), "COLUMN_MIN_ROWS": rows,
                                                  "BLOCKS_PER_SM": blocks}
    return found


def plan_of(shape, axis, itemsize, sms):
    outer, n, inner = (1, shape[0], shape[1]) if axis == 0 else (shape[0], shape[1], 1)
    kind, grid, chunks, geometry = raxis.pass_plan(outer, n, inner, sms, itemsize)
    return f"{kind}:{grid}:{geometry[2:5] if kind == 'columns' else geometry}:{chunks} chunks"


def main(argv):
    import cupy as cp

    dtypes = argv[0].split(",") if argv else ["int32", "float16"]
    mode = argv[1] if len(argv) > 1 else "grid"
    chosen = variants(mode)
    cases = [c for c in CASES if c[1] == 0] if mode == "grid" else CASES
    defaults = {k: getattr(raxis, k) for k in KNOBS}
    for dtype in dtypes:
        for shape, axis in cases:
            if dtype.startswith("float"):
                x = cp.random.random(shape).astype(dtype)
            else:
                x = cp.random.randint(0, 100, shape).astype(dtype)
            y = cp.empty_like(x)
            base = timeit(cp, lambda: cp.copyto(y, x)) / 2  # noqa: B023  (timed at once)
            row, first = [f"{dtype:8s} {str(shape):14s} ax{axis} base {base:6.1f}"], None
            for name, knobs in chosen.items():
                for k, v in {**defaults, **knobs}.items():
                    setattr(raxis, k, v)
                raxis._plans.clear()
                raxis.READY.clear()
                got = cp.asnumpy(pyscan.reduce(x, axis=axis)).astype(np.float64)
                if first is None:
                    first = got
                assert np.allclose(got, first, rtol=1e-2, atol=1e-2), name
                t = timeit(cp, lambda: pyscan.reduce(x, axis=axis))  # noqa: B023  (timed at once)
                row.append(f"{name} {t:6.1f}")
                if len(chosen) > 1:
                    print(f"  {dtype} {shape} ax{axis} {name} {t:6.1f}", flush=True)
            for k, v in defaults.items():
                setattr(raxis, k, v)
            raxis._plans.clear()
            raxis.READY.clear()
            sms = driver.multiprocessor_count(0)
            print("  ".join(row), " | ", plan_of(shape, axis, np.dtype(dtype).itemsize, sms), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
