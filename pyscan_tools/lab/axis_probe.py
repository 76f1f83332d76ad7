"""Scans and reductions along an axis beside torch's and CuPy's, per call, with a device copy of the same bytes:
the shapes where the peers are slowest (int32 and float32, both axes).  Each row is checked against NumPy.
Run on a GPU host: python pyscan_tools/lab/axis_probe.py [--rounds 5]
"""

# ruff: noqa: B023 - every lambda is timed at once, inside its loop iteration
from __future__ import annotations

import argparse
import statistics

import numpy as np

SHAPES = ((4096, 4096), (2**20, 16), (16, 2**20), (2**23, 2), (64, 65536))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args()
    import cupy
    import torch

    import pyscan

    start, end = cupy.cuda.Event(), cupy.cuda.Event()

    def per_call(fn):
        start.record()
        fn()
        end.record()
        end.synchronize()
        slow = cupy.cuda.get_elapsed_time(start, end) > 5  # ms: the peers' worst shapes take up to 0.7 s a call
        rounds, calls = (2, 1) if slow else (args.rounds, args.calls)
        times = []
        for _ in range(rounds):
            start.record()
            for _ in range(calls):
                fn()
            end.record()
            end.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, end) / calls * 1e3)
        return statistics.median(times)

    print(f"{torch.cuda.get_device_name()}: us per call; ratio = time / copy")
    print(f"{'what':<10}{'dtype':<8}{'shape':<14}{'axis':>5}{'copy':>9}{'pyscan':>9}{'torch':>10}{'cupy':>10}"
          f"{'py/copy':>9}{'best peer/py':>13}  check")
    for dtype in (np.int32, np.float32):
        for shape in SHAPES:
            host = (np.arange(np.prod(shape)) % 7 - 3).astype(dtype).reshape(shape)
            c = cupy.asarray(host)
            t = torch.as_tensor(host, device="cuda")
            copy = per_call(lambda: c.copy())
            for axis in (0, 1):
                for what in ("scan", "reduce"):
                    if what == "scan":
                        mine = lambda: pyscan.scan(c, axis=axis)  # noqa: E731
                        peers = (lambda: torch.cumsum(t, axis), lambda: cupy.cumsum(c, axis=axis))
                        expected = np.cumsum(host, axis=axis, dtype=dtype)
                    else:
                        mine = lambda: pyscan.reduce(c, axis=axis)  # noqa: E731
                        peers = (lambda: torch.sum(t, axis), lambda: cupy.sum(c, axis=axis))
                        expected = np.sum(host, axis=axis, dtype=dtype)
                    try:
                        got = cupy.asnumpy(mine())
                        ok = "ok" if np.array_equal(got.astype(expected.dtype), expected) else "MISMATCH"
                        ours = per_call(mine)
                    except Exception as exc:  # noqa: BLE001
                        print(f"{what:<10}{np.dtype(dtype).name:<8}{str(shape):<14}{axis:>5}  ERROR {exc}"[:200])
                        continue
                    theirs = [per_call(p) for p in peers]
                    print(f"{what:<10}{np.dtype(dtype).name:<8}{str(shape):<14}{axis:>5}{copy:9.1f}{ours:9.1f}"
                          f"{theirs[0]:10.1f}{theirs[1]:10.1f}{ours / copy:9.2f}{min(theirs) / ours:13.2f}  {ok}",
                          flush=True)


if __name__ == "__main__":
    main()
