"""The books' numbers beside pyscan's: every quantitative claim of PMPP ch. 9-11 that pyscan can count or measure,
recomputed here, and written as the table of docs/books_numbers.md.

    python scripts/books_numbers.py                         # print the table
    python scripts/books_numbers.py --write docs/books_numbers.md

Counted values come from pyscan's NumPy step-models (the kernels' index arithmetic; the GPU tests hold the
kernels' COUNT_WORK and TRACE builds to the same numbers), measured ones from benchmarks/bench.json (the latest
H100 run of `python -m pyscan bench all`).  No GPU is needed.

Counting rules (the books count in different ways; each row says which):

    steps with P execution units, "every thread"   a step of a phase in which T threads run takes ceil(T / P)
                                                   unit-steps, whether or not a thread has work (PMPP's rule
                                                   for Kogge-Stone: N log2 N / P)
    steps with P execution units, "active"         a step takes ceil(A / P) where A = the combines it performs
                                                   (threads with nothing to do occupy no unit)
    execution resources (PMPP ch. 10)              32 x the warps with an active thread, summed over the steps
    global memory requests (PMPP §10.5)            per running warp and load/store instruction, the 128-byte
                                                   lines its active threads touch (4-byte elements)
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
LINE_BYTES = 128
WARP = 32


# --- scan (PMPP ch. 11) ----------------------------------------------------------------------------------------

def scan_step_combines(name: str, n: int) -> list:
    """Combines per step of pyscan's step-model of `name` on one section of n elements (inclusive add)."""
    from pyscan.scans import SCANS

    _, steps = SCANS.get(name).model(np.ones(n, np.int64), op="add", exclusive=False, return_steps=True)
    return [len(s.edges) for s in steps if s.edges]


def kogge_stone_additions(n: int) -> int:
    """PMPP §11.3: step with stride s adds into the n - s elements i >= s: n log2 n - (n - 1)."""
    return sum(n - (1 << k) for k in range(int(math.log2(n))))


def steps_every_thread(threads_per_step, p: int) -> int:
    return sum(math.ceil(t / p) for t in threads_per_step)


def steps_active(combines_per_step, p: int) -> int:
    return sum(math.ceil(c / p) for c in combines_per_step if c)


def three_phase_steps_every_thread(n: int, threads: int, p: int) -> int:
    """PMPP §11.5's coarsened (three-phase) scan of n elements by `threads` threads, counted with the "every thread"
    rule: phase 1, each thread scans its n/threads elements (n/threads - 1 steps); phase 2, Kogge-Stone over the
    threads' totals (log2(threads) steps); phase 3, each thread adds its predecessor's total to n/threads - 1
    elements.  Every step of a phase runs all threads."""
    per = n // threads
    units = math.ceil(threads / p)
    return (per - 1) * units + int(math.log2(threads)) * units + (per - 1) * units


# --- reduction (PMPP ch. 10) -----------------------------------------------------------------------------------

def reduction_active(kernel: str, n: int) -> list:
    """Active thread ids per step of simple.cu / convergent.cu on one block of n/2 threads (pyscan's model)."""
    from pyscan.reductions import book

    _, _, threads = book._in_place_level(np.ones(n, np.int32), "add", n // 2, kernel, False)
    return [np.asarray(t) for t in threads]


def reduction_resources(kernel: str, n: int) -> tuple:
    """(operations, execution resources) of one block, PMPP ch. 10's measure."""
    active = reduction_active(kernel, n)
    ops = sum(a.size for a in active)
    return ops, WARP * sum(np.unique(a // WARP).size for a in active)


def reduction_memory_requests(kernel: str, n: int, elem_bytes: int = 4) -> int:
    """Global memory requests of one block on n elements: per running warp and per instruction (load
    input[i], load input[i + stride], store input[i]), the 128-byte lines its active threads touch."""
    from pyscan.reductions import book

    block = n // 2
    total = 0
    for stride, active in zip(book._strides(kernel, block), reduction_active(kernel, n)):
        i = 2 * active if kernel == "simple" else active
        per_line = LINE_BYTES // elem_bytes
        for w in np.unique(active // WARP):
            mine = i[active // WARP == w]
            for addresses in (mine, mine + stride, mine):
                total += np.unique(addresses // per_line).size
    return total


# --- measured (benchmarks/bench.json) --------------------------------------------------------------------------

def bench_rows(path=ROOT / "benchmarks" / "bench.json") -> tuple:
    if not Path(path).exists():
        return None, []
    data = json.loads(Path(path).read_text())
    return data.get("device", {}), data.get("rows", [])


def bench_ms(rows, pattern, name, op, size):
    for r in rows:
        if (r.get("pattern"), r.get("name"), r.get("op"), r.get("size")) == (pattern, name, op, size) and r.get("ms"):
            return float(r["ms"])
    return None


# --- the table ---------------------------------------------------------------------------------------------------

def rows() -> list:
    """[(where, claim, book's number, how the book's number comes about, pyscan's number, why they differ)]."""
    out = []
    n, p = 1024, 32
    ks = scan_step_combines("kogge_stone", n)
    bk = scan_step_combines("brent_kung", n)
    seq = n  # PMPP counts the sequential scan as N steps (one add per element)

    out.append(("PMPP §11.3", "Kogge-Stone additions at N = 512, against the sequential N - 1",
                "about 8 x", f"(N log2 N - (N - 1)) / (N - 1) = {kogge_stone_additions(512)} / 511 = "
                f"{kogge_stone_additions(512) / 511:.2f}",
                f"{sum(scan_step_combines('kogge_stone', 512))} combines counted in the model (and by the kernel's "
                f"COUNT_WORK build): {sum(scan_step_combines('kogge_stone', 512)) / 511:.2f} x", "equal"))
    ks_every = steps_every_thread([n] * int(math.log2(n)), p)
    ks_active = steps_active(ks, p)
    out.append(("PMPP §11.3", f"Kogge-Stone steps with P = {p} execution units, N = {n}", "320 steps",
                f"N log2 N / P = {n} x {int(math.log2(n))} / {p} = {ks_every}",
                f"{ks_active} (active rule: step with stride s keeps N - s threads busy)",
                "the book lets all N threads occupy a unit in every step; in step s only N - s threads add, and the "
                f"last steps need fewer units ({ks_every} with the book's rule)"))
    out.append(("PMPP §11.3", "Kogge-Stone speed-up over the sequential scan with P = 32", "3.2 x",
                f"{seq} / {ks_every} = {seq / ks_every:.1f}", f"{seq} / {ks_active} = {seq / ks_active:.2f}",
                "follows from the step counts above"))
    bk_active = steps_active(bk, p)
    bk_book = (2 * n - 2 - math.log2(n)) / p + math.log2(n)
    out.append(("PMPP §11.4", f"Brent-Kung steps with P = {p}, N = {n}", "73.6 steps, about 14 x",
                f"(2N - 2 - log2 N) / P + log2 N = {bk_book:.1f} (reconstructed: reproduces the book's number); "
                f"{seq} / {bk_book:.1f} = {seq / bk_book:.1f} x",
                f"{bk_active} steps (active rule, from the model's {len(bk)} tree steps), {seq / bk_active:.1f} x",
                "the book spreads the 2N - 2 - log2 N additions evenly over the units and adds one step per tree "
                "level; counting each tree step as ceil(active / P) gives a step fewer per sparse level"))
    three = three_phase_steps_every_thread(n, 64, p)
    out.append(("PMPP §11.5", f"three-phase (coarsened) scan steps with P = {p}, N = {n}", "72 steps",
                f"64 threads of 16: phases 1 and 3 (16 - 1) x 64/32 each, phase 2 log2 64 x 64/32: {three} "
                "(reconstructed: reproduces the book's number; check the book's thread count)",
                f"{steps_active(scan_step_combines('coarsened', n), p)} steps (active rule) for pyscan's coarsened "
                "section (128 threads of 8 at N = 1024)",
                "a different split of the section between threads; the work-efficient phases 1 and 3 keep every "
                "unit busy"))
    bk_depth = len(bk)
    out.append(("PMPP §11.4", "Brent-Kung's steps against the sequential scan's, N = 1024, enough units",
                "56.9 x fewer", f"1024 / 18 = {1024 / 18:.1f} (reconstructed: 2 log2 N - 2 = 18 steps)",
                f"{bk_depth} tree steps in the model (log2 N up, log2 N - 1 down): 1024 / {bk_depth} = "
                f"{1024 / bk_depth:.1f} x",
                "pyscan's Brent-Kung (PMPP Fig. 11.7) runs the up-sweep to the root (stride N/2: the section total, "
                "which an inclusive scan of the whole section needs), one step more than 18"))
    out.append(("PMPP §11.3", "Kogge-Stone is not work-efficient: extra additions at N = 1024",
                "N log2 N - (N - 1) against N - 1", f"{kogge_stone_additions(n)} against {n - 1}",
                f"{sum(ks)} against {n - 1} (model; GPU COUNT_WORK equal)", "equal"))

    for kernel, book_resources in (("simple", 736), ("convergent", 384)):
        ops, res = reduction_resources(kernel, 256)
        out.append(("PMPP §10.4", f"{kernel} reduction, N = 256: operations / execution resources / utilisation",
                    f"255 / {book_resources} / {255 / book_resources:.2f}",
                    f"utilisation = 255 / {book_resources}",
                    f"{ops} / {res} / {ops / res:.2f} (model; the COUNT_WORK build counts the same on the GPU)",
                    "equal" if res == book_resources else
                    "at stride 32 threads 0, 32, 64 and 96 (one in each of the four warps) are still active, so all "
                    "four warps run in six of the eight steps: 27 warp-steps, 864; the book's 736 = 23 x 32 has "
                    "four warp-steps fewer"))
    for kernel, book_requests in (("simple", 1149), ("convergent", 204)):
        got = reduction_memory_requests(kernel, 2048)
        out.append(("PMPP §10.5", f"{kernel} reduction, N = 2048 (1024 threads): global memory requests",
                    str(book_requests),
                    "per running warp and instruction (2 loads, 1 store), the 128-byte lines it touches",
                    f"{got} (counted from the model's active threads and addresses)",
                    "equal" if got == book_requests else "differs: see the counting rule"))
    out.append(("PMPP §10.1 / §11.1", "one reduction per output: the O(N^2) scan baseline at N = 1024",
                "N(N - 1)/2 additions", f"{n * (n - 1) // 2}",
                f"{n * (n - 1) // 2} against {sum(ks)} (Kogge-Stone) and {sum(bk)} (Brent-Kung), model counts",
                "equal (the baseline is arithmetic; pyscan has no kernel for it)"))

    device, bench = bench_rows()
    size = 2**28
    block = bench_ms(bench, "histogram", "atomic_block", "uniform", size)
    inter = bench_ms(bench, "histogram", "atomic_interleaved", "uniform", size)
    copy = bench_ms(bench, "histogram", "copy (memcpy_dtod)", "uniform", size)
    same = bench_ms(bench, "histogram", "atomic_interleaved", "all-equal", size)
    priv = bench_ms(bench, "histogram", "privatized", "all-equal", size)
    aggr = bench_ms(bench, "histogram", "aggregated", "all-equal", size)
    name = (device or {}).get("name", "the benchmark GPU")
    clock = 1.755e9 if "H100" in name else None  # the H100 SXM's boost clock
    if same:
        rate = size / (same * 1e-3)
        cycles = f", i.e. {clock / rate:.1f} cycles each at {clock / 1e9:.3f} GHz" if clock else ""
        out.append(("PMPP §9.3", "atomics on one address: throughput = 1 / (latency of a read-modify-write)",
                    "hundreds of cycles each on DRAM: a few million per second per address; far more in the L2",
                    "1 / (read latency + write latency) per address",
                    f"{rate / 1e9:.2f} G atomics/s on one address ({name}, 2^28 equal bytes, atomic_interleaved "
                    f"{same:.1f} ms){cycles}",
                    "the H100 performs atomics in its L2 cache (the book's 'last-level cache atomics'), and atomics "
                    "of one warp on one address can be combined before they reach it"))
    if block and inter:
        ratio = f", about 1/{round(inter / copy)} of the copy's bytes per second" if copy else ""
        out.append(("PMPP §9.4", "interleaved partitioning (Fig. 9.8) is faster than contiguous (Fig. 9.6)",
                    "interleaved several times faster (coalesced reads)", "-",
                    f"{block:.1f} ms contiguous vs {inter:.1f} ms interleaved at 2^28 uniform bytes ({name}): "
                    f"{block / inter:.2f} x",
                    f"both run at {size / (inter * 1e-3) / 1e9:.1f} G global atomics/s{ratio}: the atomics, not the "
                    "reads, set the time, so how the reads coalesce does not show; and a thread's contiguous "
                    "section is read from L1/L2 after its first miss"))
    if same and priv and aggr:
        out.append(("PMPP §9.5-9.6", "privatization and aggregation on highly contended (all-equal) data",
                    "large gains", "-", f"{same:.1f} -> {priv:.2f} -> {aggr:.2f} ms at 2^28 equal bytes ({name})",
                    "measured; shared-memory atomics take the contention, aggregation collapses runs of one bin "
                    "to one atomic"))
    return out


def markdown(table) -> str:
    lines = ["# The books' numbers beside pyscan's", "",
             "Generated by `python scripts/books_numbers.py --write docs/books_numbers.md` (no GPU needed): counted "
             "values come from pyscan's NumPy step-models (the kernels' index arithmetic, which the GPU tests hold "
             "the kernels' COUNT_WORK and TRACE builds to), measured ones from `benchmarks/bench.json`.  "
             "Where the book's arithmetic is marked *reconstructed*, the formula shown reproduces the printed "
             "number but is not quoted from the book: check it against your edition.", "",
             "| where | claim | book | the book's arithmetic | pyscan | why they differ |",
             "|---|---|---|---|---|---|"]
    for row in table:
        lines.append("| " + " | ".join(str(c).replace("|", "/") for c in row) + " |")
    lines += ["", "Counting rules: see the docstring of `scripts/books_numbers.py`.", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", metavar="MD", help="write the markdown table to this file")
    args = parser.parse_args(argv)
    text = markdown(rows())
    if args.write:
        Path(args.write).write_text(text)
        print(f"wrote {args.write}")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
