"""Lab: the GPU time of pyscan's kernels per call, beside torch's, read from the CUDA profiler (CUPTI, through
torch.profiler), so host overhead does not hide it.  Needs a GPU, torch.

    python pyscan_tools/lab/kernel_times.py                      # scan and reduce, pyscan against torch, 2^10 .. 2^28
    python pyscan_tools/lab/kernel_times.py --sweep-scan         # decoupled_lookback Configs at the mid sizes
    python pyscan_tools/lab/kernel_times.py --sweep-reduce       # the fast reduction's grid at the mid sizes

Each row: microseconds of device time per call (every kernel, memset and copy the call ran, summed), the median
of --reps calls; and the number of device operations per call.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

import pyscan  # noqa: E402


def device_us(fn, reps: int) -> tuple:
    """(median device microseconds per call, device operations per call) of fn(), from the profiler."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        for _ in range(reps):
            torch.cuda.synchronize()
            with torch.profiler.record_function("call"):
                fn()
            torch.cuda.synchronize()
    events = prof.events()
    calls = sorted((e.time_range.start, e.time_range.end) for e in events if e.name == "call")
    kernels = [e for e in events if e.device_type == torch.autograd.DeviceType.CUDA]
    per_call = [[] for _ in calls]
    for k in kernels:  # a device op belongs to the call whose host range it follows (calls are synchronised)
        start = k.time_range.start
        index = max((i for i, (s, _) in enumerate(calls) if s <= start), default=None)
        if index is not None:
            per_call[index].append(k.time_range.elapsed_us())
    totals = [sum(p) for p in per_call if p]
    ops = statistics.median(len(p) for p in per_call) if per_call else 0
    return (statistics.median(totals) if totals else float("nan")), ops


def tensor(n, dtype):
    g = torch.Generator(device="cuda").manual_seed(n)
    if dtype.is_floating_point:
        return torch.randint(-4, 5, (n,), device="cuda", generator=g).to(dtype)
    return torch.randint(-100, 100, (n,), device="cuda", generator=g, dtype=dtype)


SIZES = [10, 12, 14, 16, 18, 20, 22, 24, 26, 28]


def compare(args):
    print(f"{'case':28s} {'n':>6s} {'pyscan':>9s} {'ops':>4s} {'torch':>9s} {'ops':>4s} {'copy':>8s}")
    for dtype in (torch.int32, torch.float32, torch.int64, torch.float64):
        for k in SIZES:
            x = tensor(1 << k, dtype)
            y = torch.empty_like(x)
            copy, _ = device_us(lambda x=x, y=y: y.copy_(x), args.reps)
            # dtype=x.dtype on both sides, as the bench calls them: pyscan, torch.cumsum and torch.sum of int32 give
            # int64 otherwise (NumPy's rule)
            rows = [("scan add", lambda x=x: pyscan.scan(x, dtype=x.dtype), lambda x=x: torch.cumsum(x, 0, dtype=x.dtype)),
                    ("reduce add", lambda x=x: pyscan.reduce(x, dtype=x.dtype), lambda x=x: torch.sum(x, dtype=x.dtype)),
                    ("reduce max", lambda x=x: pyscan.reduce(x, op="max"), lambda x=x: torch.amax(x))]
            for name, ours, theirs in rows:
                a, na = device_us(ours, args.reps)
                b, nb = device_us(theirs, args.reps)
                flag = "  <-- slower" if a > b * 1.02 else ""
                print(f"{name + ' ' + str(dtype)[6:]:28s} 2^{k:<4d} {a:9.2f} {na:4.0f} {b:9.2f} {nb:4.0f} {copy:8.2f}"
                      f"{flag}", flush=True)


def sweep_scan(args):
    from pyscan.scans import decoupled_lookback as dl

    shipped, small_max_tiles = dict(dl.CONFIG), dl.SMALL_MAX_TILES
    # every size runs the candidate as the large-array Config (below SMALL_MAX_TILES tiles the driver would run
    # SMALL's Config whatever the candidate; "vecs=4" is SMALL's)
    dl.SMALL_MAX_TILES = 0
    candidates = [dict(), dict(vecs=4), dict(vecs=2), dict(vecs=4, min_blocks=4), dict(threads=128, vecs=8),
                  dict(threads=128, vecs=4), dict(threads=512, vecs=2), dict(threads=128, vecs=2)]
    grids = [None, "tiles"]
    for dtype in (torch.int32, torch.int64):
        size = torch.tensor([], dtype=dtype).element_size()
        for k in (12, 14, 16, 18, 20, 22, 24, 26):
            x = tensor(1 << k, dtype)
            ref = torch.cumsum(x, 0, dtype=x.dtype)
            line = []
            for fields in candidates:
                for grid in grids:
                    config = dataclasses.replace(shipped[size], **fields)
                    dl.CONFIG[size] = config
                    dl._plans.clear()  # plans are made again, with CONFIG[size]
                    original = dl.Config.grid
                    if grid == "tiles":
                        dl.Config.grid = lambda self, tiles, vector, device: tiles
                    try:
                        ok = torch.equal(pyscan.scan(x, dtype=x.dtype), ref)  # the kernel of x's width
                        us, _ = device_us(lambda x=x: pyscan.scan(x, dtype=x.dtype), args.reps)
                    except Exception as exc:  # noqa: BLE001
                        ok, us = False, float("nan")
                        print("  error", fields, grid, exc)
                    finally:
                        dl.Config.grid = original
                    label = ",".join(f"{a}={b}" for a, b in fields.items()) or "shipped"
                    line.append((us, label + ("/tiles" if grid else ""), ok))
            dl.CONFIG.update(shipped)
            dl._plans.clear()
            line.sort()
            text = "  ".join(f"{label} {us:.2f}{'' if ok else ' WRONG'}" for us, label, ok in line[:6])
            base = next(us for us, label, _ in line if label == "shipped")
            print(f"scan {str(dtype)[6:]:6s} 2^{k:<3d} shipped {base:.2f} | best: {text}", flush=True)
    dl.SMALL_MAX_TILES = small_max_tiles


def sweep_reduce(args):
    from pyscan.reductions import fast

    saved = fast.FAST_BLOCK, fast.FAST_UNROLL  # a plan is made again when a knob changes (fast.plan)
    shipped = f"block={saved[0]},unroll={saved[1]}"
    for dtype in (torch.int32, torch.float32, torch.int64):
        for k in (14, 16, 18, 20, 22, 24, 26):
            x = tensor(1 << k, dtype)
            ref = torch.sum(x).item()
            line = []
            for block in (256, 512, 1024):
                for unroll in (1, 2, 4, 8):
                    fast.retune(FAST_BLOCK=block, FAST_UNROLL=unroll)
                    try:
                        ok = pyscan.reduce(x).item() == ref
                        us, _ = device_us(lambda x=x: pyscan.reduce(x), args.reps)
                    except Exception as exc:  # noqa: BLE001
                        ok, us = False, float("nan")
                        print("  error", block, unroll, exc)
                    line.append((us, f"block={block},unroll={unroll}", ok))
            fast.retune(FAST_BLOCK=saved[0], FAST_UNROLL=saved[1])
            base = next(us for us, label, _ in line if label == shipped)
            line.sort()
            text = "  ".join(f"{label} {us:.2f}{'' if ok else ' WRONG'}" for us, label, ok in line[:5])
            print(f"reduce {str(dtype)[6:]:8s} 2^{k:<3d} shipped {base:.2f} | best: {text}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--sweep-scan", action="store_true")
    p.add_argument("--sweep-reduce", action="store_true")
    args = p.parse_args()
    if args.sweep_scan:
        sweep_scan(args)
    elif args.sweep_reduce:
        sweep_reduce(args)
    else:
        compare(args)


if __name__ == "__main__":
    main()
