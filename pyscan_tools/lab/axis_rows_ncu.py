"""Reductions along the last axis under Nsight Compute: two calls each of pyscan.reduce(x, axis=1) and cupy.sum(x,
axis=1) on CuPy arrays of the bench's row shapes, so ncu reports each kernel's device time and DRAM bytes apart from
the host (benchmarks/axis_rows_ncu_h200.txt).  Run on a GPU host:

    ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv \\
        python pyscan_tools/lab/axis_rows_ncu.py > ncu.csv

Without ncu, `--time` prints per-call times instead (CUDA events around back-to-back calls, best of 7 rounds), and
the host time of a call (the calls issued back to back, the GPU waited for once), with argmax and bool counts along
axis 1 beside CuPy's.  cupy.sum of int32 returns int64 (NumPy's rule; pyscan.reduce too): those rows are not like
for like.
"""

from __future__ import annotations

import argparse

CASES = (((8388608, 2), "int32"), ((8388608, 2), "float32"), ((64, 65536), "int32"), ((64, 65536), "float16"),
         ((4096, 4096), "float16"), ((16, 1048576), "float16"))


def _time(f, rounds=7, calls=40):
    """µs a call: CUDA events around `calls` back-to-back calls, best of `rounds` (pyscan.timing)."""
    from pyscan.timing import event_timer

    timer = event_timer("cupy")
    f()
    return min(timer.per_call_ms(f, calls) for _ in range(rounds)) * 1e3


def _host(f, calls=200):
    """µs of host time a call: the calls issued back to back, not waited for (pyscan.timing.HostTimer)."""
    from pyscan.timing import HostTimer

    f()
    return HostTimer().per_call_ms(f, calls) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time", action="store_true", help="print µs per call instead of running for ncu")
    args = parser.parse_args()
    import cupy as cp

    import pyscan

    for shape, dtype in CASES:
        x = cp.ones(shape, dtype)
        if args.time:
            y = cp.empty_like(x)
            copy = _time(lambda: y.__setitem__(Ellipsis, x))  # noqa: B023 - timed at once
            ours = _time(lambda: pyscan.reduce(x, axis=1))  # noqa: B023
            theirs = _time(lambda: cp.sum(x, axis=1))  # noqa: B023
            host = _host(lambda: pyscan.reduce(x, axis=1))  # noqa: B023
            print(f"{str(shape):14s} {dtype:8s} copy {copy:7.1f}  pyscan {ours:7.1f} (host {host:5.1f})  "
                  f"cupy {theirs:7.1f} us")
            continue
        for _ in range(2):
            pyscan.reduce(x, axis=1)
            cp.sum(x, axis=1)
        cp.cuda.Device().synchronize()
    if args.time:
        x = cp.arange(2**24, dtype="int32").reshape(2**23, 2) % 7
        mask = (x > 3)
        rows = [("argmax int32", lambda: pyscan.argmax(x, axis=1), lambda: cp.argmax(x, axis=1)),
                ("bool sum into int64", lambda: pyscan.reduce(mask, axis=1), lambda: cp.sum(mask, axis=1))]
        for name, ours, theirs in rows:
            print(f"(8388608, 2)   {name:20s} pyscan {_time(ours):7.1f}  cupy {_time(theirs):7.1f} us")


if __name__ == "__main__":
    main()
