"""Scans and reductions along an axis beside torch's and CuPy's, per call, like for like (every library asked for
the same result dtype), with the bytes each call must move timed as device copies in the same run.

    baseline of a scan:      a device copy of the input's bytes and one of the result's, averaged (reading the input
                             and writing the result once each at copy bandwidth)
    baseline of a reduction: half a device copy of the input's bytes (reading it once)

Also the host time of one call (the calls issued back to back, before the GPU is waited for) and the GPU time of one
call alone (events around one call after the stream is idle).  Each row is checked against NumPy.
Run on a GPU host: python pyscan_tools/lab/axis_probe.py [--rounds 5] [--what scan,reduce] [--dtypes int32,...]
"""

# ruff: noqa: B023 - every lambda is timed at once, inside its loop iteration
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

SHAPES = ((4096, 4096), (2**20, 16), (16, 2**20), (2**23, 2), (64, 65536))
# (input dtype, result dtype): like for like, and NumPy's accumulator rule where it widens (bool/uint8 -> int64)
DTYPES = {"int32": ("int32", "int32"), "float32": ("float32", "float32"), "float16": ("float16", "float16"),
          "int64": ("int64", "int64"), "bool": ("bool", "int64"), "uint8": ("uint8", "int64"),
          "int32>int64": ("int32", "int64")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--what", default="scan,reduce")
    parser.add_argument("--dtypes", default="int32,float32")
    parser.add_argument("--shapes", default="")
    parser.add_argument("--no-peers", action="store_true")
    args = parser.parse_args()
    import cupy
    import torch

    import pyscan

    shapes = SHAPES if not args.shapes else tuple(tuple(int(v) for v in s.split("x")) for s in args.shapes.split(","))
    start, end = cupy.cuda.Event(), cupy.cuda.Event()

    def per_call(fn):
        """(us per call back to back, host us per call, us of one call alone)"""
        start.record()
        fn()
        end.record()
        end.synchronize()
        slow = cupy.cuda.get_elapsed_time(start, end) > 5  # ms: the peers' worst shapes take up to 1 s a call
        rounds, calls = (2, 1) if slow else (args.rounds, args.calls)
        times, hosts, alone = [], [], []
        for _ in range(rounds):
            cupy.cuda.get_current_stream().synchronize()
            start.record()
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            hosts.append((time.perf_counter() - t0) / calls * 1e6)
            end.record()
            end.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, end) / calls * 1e3)
            start.record()
            fn()
            end.record()
            end.synchronize()
            alone.append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
        return statistics.median(times), statistics.median(hosts), statistics.median(alone)

    def copy_us(nbytes):
        a = cupy.empty(nbytes, cupy.uint8)
        b = cupy.empty(nbytes, cupy.uint8)
        return per_call(lambda: b.data.copy_from_device_async(a.data, nbytes))[0]

    print(f"{torch.cuda.get_device_name()}: us per call of back-to-back calls; host: us of Python a call; alone: us "
          f"of one call on an idle stream; x base: time / (copy of the bytes in and out, or half a copy of the "
          f"bytes read); peer/py: the faster peer's time / pyscan's")
    print(f"{'what':<7}{'dtype':<14}{'shape':<14}{'axis':>4}{'base':>8}{'pyscan':>9}{'host':>7}{'alone':>8}"
          f"{'torch':>11}{'cupy':>11}{'x base':>8}{'peer/py':>8}  check", flush=True)
    for label in args.dtypes.split(","):
        dtype, result = (np.dtype(d) for d in DTYPES[label])
        tdt = {np.dtype("bool"): torch.bool, np.dtype("uint8"): torch.uint8, np.dtype("int32"): torch.int32,
               np.dtype("int64"): torch.int64, np.dtype("float16"): torch.float16,
               np.dtype("float32"): torch.float32}
        for shape in shapes:
            size = int(np.prod(shape))
            host = ((np.arange(size) % 7 - 3) if dtype != np.bool_ else (np.arange(size) % 3 == 0)).astype(dtype)
            host = host.reshape(shape)
            c = cupy.asarray(host)
            t = torch.as_tensor(host, device="cuda")
            in_copy = copy_us(host.nbytes)
            out_copy = copy_us(size * result.itemsize) if result != dtype else in_copy
            for what in args.what.split(","):
                for axis in (0, 1):
                    if what == "scan":
                        base = (in_copy + out_copy) / 2
                        mine = lambda: pyscan.scan(c, axis=axis, dtype=result)  # noqa: E731
                        peers = (lambda: torch.cumsum(t, axis, dtype=tdt[result]),
                                 lambda: cupy.cumsum(c, axis=axis, dtype=result))
                        expected = np.cumsum(host, axis=axis, dtype=result)
                    else:
                        base = in_copy / 2
                        mine = lambda: pyscan.reduce(c, axis=axis, dtype=result)  # noqa: E731
                        peers = (lambda: torch.sum(t, axis, dtype=tdt[result]),
                                 lambda: cupy.sum(c, axis=axis, dtype=result))
                        expected = np.sum(host, axis=axis, dtype=result)
                    name = f"{dtype.name}>{result.name}" if result != dtype else dtype.name
                    try:
                        got = cupy.asnumpy(mine())
                        if result.kind == "f":
                            ok = np.allclose(got.astype(np.float64), expected.astype(np.float64), rtol=2e-2, atol=1)
                        else:
                            ok = np.array_equal(got, expected)
                        ours = per_call(mine)
                    except Exception as exc:  # noqa: BLE001
                        print(f"{what:<7}{name:<14}{str(shape):<14}{axis:>4}  ERROR {exc}"[:200], flush=True)
                        continue
                    theirs = [per_call(p)[0] for p in peers] if not args.no_peers else [float("nan")] * 2
                    best = min(theirs) if not args.no_peers else float("nan")
                    print(f"{what:<7}{name:<14}{str(shape):<14}{axis:>4}{base:8.1f}{ours[0]:9.1f}{ours[1]:7.1f}"
                          f"{ours[2]:8.1f}{theirs[0]:11.1f}{theirs[1]:11.1f}{ours[0] / base:8.2f}{best / ours[0]:8.2f}"
                          f"  {'ok' if ok else 'MISMATCH'}", flush=True)


if __name__ == "__main__":
    main()
