"""Timing of the decoupled look-back scan (and the other single-pass / Blelloch scans) against a device-to-device
copy and cupy.cumsum, and the cost of a small call against pycuda's InclusiveScanKernel.  Needs a GPU.

    python pyscan_tools/lab/time_scan.py [--sizes 24,28] [--reps 20] [--others] [--small]
    python pyscan_tools/lab/time_scan.py --check           # the current CONFIG on all dtypes, many lengths (exact)
    python pyscan_tools/lab/time_scan.py --tune            # time candidate geometries of decoupled_lookback for 32-bit
                                                           # types against the current one (last line: the JSON for
                                                           # PYSCAN_DECOUPLED_CONFIG)
    python pyscan_tools/lab/time_scan.py --prewarm         # compile every build the tests use, in parallel processes
    python pyscan_tools/lab/time_scan.py --exercise        # small odd sizes of every kernel of blelloch, blelloch_block,
                                                           # single_pass, decoupled_lookback, checked (for compute-sanitizer)
    (--prewarm / --exercise with --only decoupled_lookback: that algorithm only)

Times are CUDA-event medians of --reps runs after a warm-up; "x copy" = copy time / scan time (a scan reads and
writes every element once, as the copy does).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyscan  # noqa: E402
from pyscan.basics import pycuda_context  # noqa: E402
from pyscan.runtime import driver  # noqa: E402
from pyscan.runtime.arrays import Call  # noqa: E402
from pyscan.scans import SCANS  # noqa: E402
from pyscan.timing import median_ms  # noqa: E402


def pycuda_arrays():
    """(pycuda.driver, pycuda.gpuarray) with the primary context of pyscan's device current in pycuda: the arrays
    here are GPUArrays, the copies and events pycuda's (on the legacy default stream, as Call.tool()'s launches)."""
    drv = pycuda_context()
    import pycuda.gpuarray as ga

    return drv, ga


def event_ms(fn, reps):
    return median_ms(fn, reps, warmup=1)


def time_one(k, dtype, args, cp):
    drv, ga = pycuda_arrays()
    call = Call.tool()  # the drivers' device and stream (the legacy default one)
    n = 1 << k
    rng = np.random.default_rng(k)
    host = (rng.integers(-100, 100, n) if dtype.kind == "i" else rng.standard_normal(n)).astype(dtype)
    x = ga.to_gpu(host)
    out = ga.empty_like(x)
    copy_ms = event_ms(lambda: drv.memcpy_dtod(out.gpudata, x.gpudata, x.nbytes), args.reps)

    def row(what, ms):
        print(f"{n:>10} {str(dtype):>8} {what:>32} {ms:9.4f} {n / ms / 1e6:9.1f} {copy_ms / ms:7.3f}", flush=True)

    row("copy (memcpy_dtod)", copy_ms)
    fast = SCANS.get("decoupled_lookback").driver
    for op in ("add", "max") if args.ops else ("add",):
        ms = event_ms(lambda op=op: fast(x, out, op=op, exclusive=False, call=call), args.reps)
        row(f"decoupled_lookback {op} (driver)", ms)
    row("decoupled_lookback (scan())", event_ms(lambda: pyscan.scan(x, algorithm="decoupled_lookback"), args.reps))
    if dtype.kind == "i":
        fast(x, out, op="add", exclusive=False, call=call)
        if not np.array_equal(out.get(), np.cumsum(host, dtype=dtype)):
            print("   !!! decoupled_lookback result differs from np.cumsum")
    if cp is not None:
        xc = cp.asarray(host)
        row("cupy.cumsum", event_ms(lambda: cp.cumsum(xc), args.reps))
        del xc
        cp.get_default_memory_pool().free_all_blocks()
    if args.others and k <= 24:
        for name in ("single_pass", "blelloch_block", "hierarchical", "blelloch"):
            fn = SCANS.get(name).driver
            row(name, event_ms(lambda fn=fn: fn(x, out, op="add", exclusive=False, call=call), max(3, args.reps // 4)))


def table(args):
    try:
        import cupy as cp
    except ImportError:
        cp = None
    print(f"device: {driver.device_attributes()['name']}")
    print(f"{'n':>10} {'dtype':>8} {'what':>32} {'ms':>9} {'Gelem/s':>9} {'x copy':>7}")
    for k in [int(s) for s in args.sizes.split(",")]:
        for dtype in [np.dtype(d) for d in args.dtypes.split(",")]:
            time_one(k, dtype, args, cp)
            driver.trim()


def small(args):
    """Per-call cost at 2^10 int32 on a GPUArray: host wall time per call, synchronised every call."""
    drv, ga = pycuda_arrays()
    from pycuda.scan import InclusiveScanKernel

    call = Call.tool()

    x = ga.to_gpu(np.arange(1 << 10, dtype=np.int32))
    knl = InclusiveScanKernel(np.int32, "a+b")
    y = ga.to_gpu(np.arange(1 << 10, dtype=np.int32))
    out = ga.empty_like(x)
    calls = {
        "pycuda InclusiveScanKernel": lambda: knl(y),
        "pyscan.scan(auto)": lambda: pyscan.scan(x),
        "pyscan.scan(decoupled_lookback)": lambda: pyscan.scan(x, algorithm="decoupled_lookback"),
        "decoupled driver (out given)": lambda: SCANS.get("decoupled_lookback").driver(x, out, op="add", exclusive=False,
                                                                                       call=call),
    }
    results = {}
    for name, fn in calls.items():
        for _ in range(50):
            fn()
        drv.Context.synchronize()
        per = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(400):
                fn()
                drv.Context.synchronize()
            per.append((time.perf_counter() - t0) / 400 * 1e6)
        results[name] = min(per)
        print(f"2^10 int32 {name:>34}: {results[name]:7.1f} us per call (+ sync)", flush=True)
    ratio = results["pyscan.scan(decoupled_lookback)"] / results["pycuda InclusiveScanKernel"]
    print(f"pyscan.scan(decoupled_lookback) / InclusiveScanKernel = {ratio:.2f} (target <= 2)")


def exercise(only=None):
    """Every kernel of the four algorithms (or only one) on small odd sizes, checked against the models (for the
    sanitizers)."""
    _, ga = pycuda_arrays()
    rng = np.random.default_rng(7)
    bad = 0
    for name in [only] if only else ("blelloch", "blelloch_block", "single_pass", "decoupled_lookback"):
        for dtype in (np.int32, np.float64):
            for n in (1, 33, 2049, 9001):
                for op, exclusive in (("add", False), ("max", True)):
                    host = rng.integers(-50, 50, n).astype(dtype)
                    out = pyscan.scan(ga.to_gpu(host), algorithm=name, op=op, exclusive=exclusive).get()
                    ref = SCANS.get(name).model(host, op=op, exclusive=exclusive)
                    if not np.array_equal(out, ref):
                        bad += 1
                        print(f"MISMATCH {name} {np.dtype(dtype)} n={n} {op} exclusive={exclusive}")
        base = ga.to_gpu(rng.integers(-50, 50, 5000).astype(np.int32))
        view = base[1:4999]  # not 16-byte aligned
        if not np.array_equal(pyscan.scan(view, algorithm=name).get(), np.cumsum(view.get(), dtype=np.int32)):
            bad += 1
            print(f"MISMATCH {name} unaligned view")
    for name in ("blelloch", "blelloch_block") if not only else ():
        a = SCANS.get(name)
        for n in (5, 16):
            x = rng.integers(-9, 9, n).astype(np.int32)
            _, steps = a.model(x, exclusive=True, return_steps=True)
            trace = a.trace(x, exclusive=True)
            bad += sum(not np.array_equal(t, s.values) for t, s in zip(trace, steps))
        bad += a.count_work(64).additions != 126
    print(f"exercise: {bad} mismatches")
    return 1 if bad else 0


def prewarm_builds() -> list:
    """(kernel file, #defines) of every module the tests of these four algorithms compile."""
    from pyscan.scans import blelloch as bl
    from pyscan.scans import decoupled_lookback as dl
    from pyscan.scans import single_pass as sp
    from pyscan.scans.hierarchical import ADD_BLOCK_SUMS
    from pyscan.types import COMPUTE_TYPES, ELEMENT_TYPES, OPERATOR_NAMES, result_dtype
    from pyscan.types import defines as type_defines

    builds = []
    for dtype in ELEMENT_TYPES:  # np.dtypes (bfloat16 as pyscan.types.BFLOAT16)
        for op in OPERATOR_NAMES:
            try:
                value = result_dtype(dtype, op)  # NumPy's result dtype, what the drivers build for
            except TypeError:  # not an operator of this dtype (bitwise of floats)
                continue
            t = type_defines(dtype, op, value)
            section = type_defines(dtype, op, value, out=COMPUTE_TYPES[value])  # blelloch_block's local scans
            builds += [(dl.KERNEL, dl.kernel_defines(dtype, op, v, result=value)) for v in (False, True)]
            builds += [(sp.KERNEL, {**t, "SECTION_SIZE": sp.SECTION_SIZE}),
                       (bl.SWEEPS, bl.sweep_defines(dtype, op, result=value)),
                       (bl.BLOCK_FILE, {**section, "SECTION_SIZE": bl.BLOCK_SECTION}),
                       (ADD_BLOCK_SUMS, type_defines(value, op, value))]
    for op in OPERATOR_NAMES:
        t = type_defines("int32", op)
        builds += [(bl.BLOCK_FILE, {**t, "SECTION_SIZE": 1 << k, "TRACE": 1}) for k in range(1, 12)]
    t = type_defines("int32", "add")
    builds += [(bl.BLOCK_FILE, {**t, "SECTION_SIZE": 1 << k, "COUNT_WORK": 1}) for k in range(1, 12)]
    builds += [(bl.SWEEPS, bl.sweep_defines("int32", "add", True))]
    return builds


def _compile(build):
    """In a worker process: compile one build (pycuda's disk cache keeps it for the main process's get_kernel)."""
    from pyscan.basics import source_module

    source_module(build[0], **build[1])
    return build[0]


def prewarm(jobs=14, only=None):
    import multiprocessing as mp

    from pyscan.scans import decoupled_lookback as dl

    builds = prewarm_builds()
    if only == "decoupled_lookback":
        builds = [b for b in builds if b[0] == dl.KERNEL]
    t0 = time.perf_counter()
    with mp.get_context("spawn").Pool(jobs) as pool:
        pool.map(_compile, builds, chunksize=1)
    print(f"prewarm: {len(builds)} modules compiled in {time.perf_counter() - t0:.1f} s")


# Candidate Configs that --tune times for 32-bit types: Config fields by name (threads, vecs, min_blocks; the
# fields left out keep the current CONFIG[4]'s).  The current CONFIG[4] (the baseline) is timed first and last of
# every round, the others between.  docs/decoupled_lookback_tuning.md has what the earlier rounds measured.
CANDIDATES = [
    {"vecs": 4, "min_blocks": 5},  # 4096-element tiles, 5 blocks/SM (48 registers at most)
    {"vecs": 4, "min_blocks": 4},  # 4096-element tiles, 4 blocks/SM
    {"vecs": 8, "min_blocks": 2},  # 8192-element tiles, 2 blocks/SM (more registers, fewer look-back warps)
    {"threads": 512, "vecs": 4, "min_blocks": 2},  # 512 x 4 vectors (8192 elements), 2 blocks/SM
    {"threads": 128, "vecs": 8, "min_blocks": 6},  # 128 x 8 vectors (4096 elements), 6 blocks/SM
]
TUNE_ROUNDS = 3


def _baseline() -> dict:
    from pyscan.scans import decoupled_lookback as dl

    return dl.CONFIG[4].as_dict()


def _config(fields: dict):
    from pyscan.scans import decoupled_lookback as dl

    return dl.Config(**{**_baseline(), **fields})


def _tune_builds():
    from pyscan.scans import decoupled_lookback as dl
    from pyscan.types import defines as type_defines

    return [(dl.KERNEL, {**_config(c).defines(), "VECTOR_LOADS": 1, **type_defines(dt, "add")})
            for c in [{}] + CANDIDATES for dt in ("int32", "float32")]


class _Data:
    """One 2^k array of a 32-bit dtype on the GPU, its output, and the references for the correctness checks."""

    def __init__(self, dtype, k):
        _, ga = pycuda_arrays()
        rng = np.random.default_rng(k)
        lo, hi = (-100, 100) if dtype.kind == "i" else (-1, 2)  # float32: partial sums stay exact (< 2^24)
        host = rng.integers(lo, hi, 1 << k).astype(dtype)
        self.dtype, self.k = dtype, k
        self.x = ga.to_gpu(host)
        self.out = ga.empty_like(self.x)
        m = (1 << 24) + 5
        self.ref = np.cumsum(host[:m], dtype=dtype)
        self.xs, self.outs = self.x[:m], self.out[:m]
        self.ref_tail = np.cumsum(host, dtype=dtype)[-4096:]


def _time_candidate(c, d, args):
    """(ms at 2^k, correct) of Config c on _Data d; (inf, error text) when it fails to build or launch."""
    from pyscan.scans import decoupled_lookback as dl

    fn = dl.decoupled_lookback_driver
    call = Call.tool()
    dl.CONFIG[4] = c
    dl._plans.clear()  # plans are made again, with CONFIG[4]
    try:
        fn(d.xs, d.outs, op="add", exclusive=False, call=call)
        ok = np.array_equal(d.outs.get(), d.ref)
        ms = event_ms(lambda: fn(d.x, d.out, op="add", exclusive=False, call=call), args.reps)
        fn(d.x, d.out, op="add", exclusive=False, call=call)
        ok = ok and np.array_equal(d.out[-4096:].get(), d.ref_tail)  # a wrong tile prefix spreads to the end
    except Exception as e:  # noqa: BLE001 -- a candidate that cannot run is reported, not fatal
        return float("inf"), f"ERROR {type(e).__name__}: {str(e)[:120]}"
    return ms, "ok" if ok else "WRONG"


def _tune32(args):
    """Every candidate (and the baseline, first and last) on int32 and float32 at 2^28, TUNE_ROUNDS interleaved
    rounds, the copy timed in every round; returns the fastest correct candidate (by the sum of the medians)."""
    from pyscan.scans import decoupled_lookback as dl

    drv, _ = pycuda_arrays()
    device = Call.tool().device
    base = _config({})
    entries = [("baseline", base)] + [(f"c{i}", _config(c)) for i, c in enumerate(CANDIDATES)] + [("baseline'", base)]
    data = [_Data(np.dtype(np.int32), 28), _Data(np.dtype(np.float32), 28)]
    for _ in range(300):  # clocks up before the first candidate
        drv.memcpy_dtod(data[0].out.gpudata, data[0].x.gpudata, data[0].x.nbytes)
    times = {(name, d.dtype.name): [] for name, _ in entries for d in data}
    status = {}
    copies = []
    d0 = data[0]
    for r in range(TUNE_ROUNDS):
        copies.append(event_ms(lambda: drv.memcpy_dtod(d0.out.gpudata, d0.x.gpudata, d0.x.nbytes), args.reps))
        for name, c in entries:
            for d in data:
                ms, st = _time_candidate(c, d, args)
                times[(name, d.dtype.name)].append(ms)
                if st != "ok" or (name, d.dtype.name) not in status:
                    status[(name, d.dtype.name)] = st
        print(f"  round {r}: copy 2^28 int32 {copies[-1]:.4f} ms", flush=True)
    copy_ms = statistics.median(copies)
    print(f"copy 2^28 x 4 bytes: median {copy_ms:.4f} ms (rounds: {', '.join(f'{c:.4f}' for c in copies)}); "
          f"target 0.90 x = {copy_ms / 0.9:.4f} ms")
    print(f"{'':>10} {'config':>42} {'regs':>8} | {'int32 ms (min-max)':>24} {'x copy':>6} | "
          f"{'float32 ms (min-max)':>24} {'x copy':>6} | ok")
    score = {}
    for name, c in entries:
        cells = []
        for d in data:
            ts = times[(name, d.dtype.name)]
            med = statistics.median(ts)
            cells.append(f"{med:9.4f} ({min(ts):.4f}-{max(ts):.4f}) {copy_ms / med:6.3f}")
        dl.CONFIG[4] = c
        dl._plans.clear()
        try:
            plan = dl.plan(np.dtype(np.int32), "add", True, False, device)  # aligned, the large tile (2^28)
            regs = f"r{plan.kernel.num_regs} {plan.shared // 1024}K"
        except Exception:  # noqa: BLE001
            regs = "?"
        oks = [status[(name, d.dtype.name)] for d in data]
        print(f"{name:>10} {_short(c):>42} {regs:>8} | {cells[0]} | {cells[1]} | {' '.join(oks)}", flush=True)
        if all(o == "ok" for o in oks):
            score[name] = sum(statistics.median(times[(name, d.dtype.name)]) for d in data)
    base_runs = times[("baseline", "int32")] + times[("baseline'", "int32")]
    noise = (max(base_runs) - min(base_runs)) / statistics.median(base_runs)
    best = min(score, key=score.get)
    best_config = dict(entries)[best]
    base_score = min(score.get("baseline", float("inf")), score.get("baseline'", float("inf")))
    gain = 1 - score[best] / base_score
    threshold = max(0.03, noise)
    print(f"baseline int32 spread over {len(base_runs)} timings: {noise * 100:.1f} %; best: {best} {_short(best_config)} "
          f"{gain * 100:+.1f} % vs the better baseline (int32 + float32); switch threshold {threshold * 100:.1f} %")
    print(f"DECISION: {'SWITCH to ' + best if gain > threshold and best_config != base else 'KEEP the baseline'}")
    dl.CONFIG[4] = base
    dl._plans.clear()
    return best_config.as_dict()


def _short(c) -> str:
    return ", ".join(f"{k}={v}" for k, v in c.as_dict().items())


def _check_builds():
    from pyscan.scans import decoupled_lookback as dl

    return [(dl.KERNEL, dl.kernel_defines(dt, op, v)) for dt, op, v in CHECKED]


CHECKED = [("int32", "add", True), ("int32", "add", False), ("int64", "add", True), ("float32", "max", True),
           ("float64", "min", True), ("int32", "min", True), ("float32", "add", True), ("float64", "add", True)]


def check(args):
    """The current CONFIG (PYSCAN_DECOUPLED_CONFIG) on CHECKED (dtype, op, aligned) at many lengths, inclusive and
    exclusive, every element compared exactly with NumPy (float inputs are small integers: their sums are exact)."""
    import multiprocessing as mp

    from pyscan.scans import decoupled_lookback as dl
    from pyscan.types import identity

    with mp.get_context("spawn").Pool(14) as pool:
        pool.map(_compile, _check_builds(), chunksize=1)
    _, ga = pycuda_arrays()
    rng = np.random.default_rng(11)
    bad = 0
    for dtype, op, aligned in CHECKED:
        dtype = np.dtype(dtype)
        tile = dl.tile_size(dtype)
        lengths = [1, 31, tile - 1, tile, tile + 1, 2 * tile + 5, 33 * tile + 17, 3000 * tile + 3]
        if (dtype, op, aligned) == (np.dtype(np.int32), "add", True):
            lengths += [1 << 28, (1 << 28) - 3]
        for n in lengths:
            lo, hi = (-1, 2) if dtype == np.float32 else (-1000, 1000)
            host = rng.integers(lo, hi, n + 1).astype(dtype)
            x = ga.to_gpu(host)
            view = x[1:] if not aligned else x[:n]
            src = host[1:] if not aligned else host[:n]
            for exclusive in (False, True):
                got = pyscan.scan(view, algorithm="decoupled_lookback", op=op, exclusive=exclusive).get()
                f = {"add": np.add, "max": np.maximum, "min": np.minimum}[op]
                ref = f.accumulate(src, dtype=dtype)
                if exclusive:
                    ref = np.concatenate([[identity(op, dtype)], ref[:-1]]).astype(dtype)
                if not np.array_equal(got, ref):
                    bad += 1
                    first = int(np.flatnonzero(got != ref)[0])
                    print(f"  MISMATCH {dtype} {op} aligned={aligned} n={n} exclusive={exclusive} first at {first}")
            del x
            driver.trim()
    print(f"check {json.dumps({k: v.as_dict() for k, v in dl.CONFIG.items()})}: {bad} mismatches",
          flush=True)
    return 1 if bad else 0


def tune(args):
    """Time the candidate Configs of the decoupled look-back scan for 32-bit types (int32 and float32 at 2^28, against
    the current CONFIG[4] timed in the same rounds, and the copy), check each, print a table, a DECISION line, and as
    the LAST line the JSON for PYSCAN_DECOUPLED_CONFIG with the fastest correct candidate for 32-bit types."""
    import multiprocessing as mp

    from pyscan.scans import decoupled_lookback as dl

    with mp.get_context("spawn").Pool(14) as pool:
        pool.map(_compile, _tune_builds(), chunksize=1)
    best = {"4": _tune32(args), "8": dl.CONFIG[8].as_dict()}
    driver.trim()
    print(json.dumps(best))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="24,28", help="log2 of the lengths (default %(default)s)")
    p.add_argument("--dtypes", default="int32,float32")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--ops", action="store_true", help="also time max")
    p.add_argument("--others", action="store_true", help="also single_pass, blelloch_block, hierarchical, blelloch")
    p.add_argument("--small", action="store_true", help="only the small-call comparison")
    p.add_argument("--no-small", action="store_true", help="skip the small-call comparison")
    p.add_argument("--exercise", action="store_true")
    p.add_argument("--prewarm", action="store_true")
    p.add_argument("--only", choices=["decoupled_lookback"], help="--prewarm / --exercise: only this algorithm")
    p.add_argument("--tune", action="store_true", help="time the candidate Configs of decoupled_lookback")
    p.add_argument("--check", action="store_true", help="check the current CONFIG of decoupled_lookback, all dtypes")
    args = p.parse_args(argv)
    if args.prewarm:
        prewarm(only=args.only)
        return 0
    if args.tune:
        tune(args)
        return 0
    if args.check:
        return check(args)
    if args.exercise:
        return exercise(args.only)
    if not args.small:
        table(args)
    if not args.no_small:
        small(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
