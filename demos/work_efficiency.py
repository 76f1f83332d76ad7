"""Counted work: how many additions each scan really performs, beside the books' formulas (PMPP §11.3-11.4,
Hands-On ch. 4), and the execution resources of the two reduction kernels of PMPP ch. 10.

On a GPU the counts come from each kernel's COUNT_WORK build, which counts, with atomics, the operator
applications it performs and the warps with an active thread at each step.  With no GPU the additions are
counted from the NumPy step-models' combines (and the reductions' warps from the kernels' index arithmetic),
and the output says so.

    python demos/work_efficiency.py                        # table, and the plot on screen
    python demos/work_efficiency.py --save docs/images/work_efficiency.png
    python demos/work_efficiency.py --algorithms all --max-n 1024
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import pyscan
from pyscan.reductions import REDUCTIONS
from pyscan.scans import SCANS
from pyscan_tools.pictures import visual

DEFAULT_ALGORITHMS = ("kogge_stone", "brent_kung", "blelloch_block")
REDUCTION_KERNELS = ("simple", "convergent")
REDUCTION_NS = (64, 256, 1024, 2048)
BOOK_REDUCTION_AT_256 = {"simple": (255, 736), "convergent": (255, 384)}  # PMPP ch. 10: (operations, resources)


def scan_exclusive(name: str) -> bool:
    """Blelloch's scan is exclusive by nature (its formula counts that); the others are counted inclusive."""
    return visual.FORMULA_OF.get(name) == "blelloch"


def model_additions(name: str, n: int) -> int:
    """Combines the NumPy step-model performs on n elements (the same for any values)."""
    x = np.ones(n, np.int64)
    if name == "sequential":
        return visual.count_additions(visual.sequential_model(x)[1])
    _, steps = SCANS.get(name).model(x, op="add", exclusive=scan_exclusive(name), return_steps=True)
    return visual.count_additions(steps)


def scan_counts(names, ns, on_gpu):
    """{name: [(additions, warp_slots, active_warps) or None per n]} and notes on what was skipped.  On a GPU: the
    COUNT_WORK build; without one: the model's `model_count_work` (additions and warps read off the step-model)
    where the algorithm has it, else its edges (additions only).  `sequential` has no kernel: its model's edges."""
    counts, notes = {}, []
    for name in names:
        row = []
        entry = SCANS.get(name) if name != "sequential" else None
        for n in ns:
            try:
                if on_gpu and entry is not None:
                    work = entry.count_work(n)
                elif entry is not None and entry.model_count_work is not None:
                    work = entry.model_count_work(n)
                else:
                    row.append((model_additions(name, n), None, None))
                    continue
                row.append((int(work.additions), int(work.warp_slots), [int(w) for w in work.active_warps]))
            except (ValueError, NotImplementedError) as exc:  # a length the algorithm's single section cannot hold
                row.append(None)
                notes.append(f"{name} at N = {n}: {exc}")
        counts[name] = row
    return counts, notes


def print_scan_table(counts, ns, source):
    names = list(counts)
    print(f"Additions per scan of one section of N elements ({source}) against the book's formula")
    print("(Blelloch counted for its exclusive scan; '=' the count equals the formula, '!' it does not)\n")
    head = f"{'N':>6}" + "".join(f"{name:>{_width(name)}}" for name in names)
    print(head)
    print(f"{'':>6}" + "".join(f"{'(' + visual.BOOK_FORMULAS[visual.FORMULA_OF[n]][0] + ')':>{_width(n)}}" for n in names))
    mismatches = 0
    for k, n in enumerate(ns):
        cells = []
        for name in names:
            entry = counts[name][k]
            book = visual.book_additions(name, n)
            if entry is None:
                cells.append(f"{'n/a':>{_width(name)}}")
                continue
            ok = entry[0] == book
            mismatches += not ok
            cell = f"{entry[0]} {'=' if ok else '!'} {book}"
            cells.append(f"{cell:>{_width(name)}}")
        print(f"{n:>6}" + "".join(cells))
    if any(e is not None and e[1] is not None for row in counts.values() for e in row):
        print(f"\nActive-warp slots ({source}): 32 x the warps with an active thread, summed over the steps "
              "(PMPP ch. 10's measure)\n")
        gpu_names = [name for name in names if any(e is not None and e[1] is not None for e in counts[name])]
        print(f"{'N':>6}" + "".join(f"{name:>{_width(name)}}" for name in gpu_names))
        for k, n in enumerate(ns):
            print(f"{n:>6}" + "".join(
                f"{(str(counts[name][k][1]) if counts[name][k] else 'n/a'):>{_width(name)}}" for name in gpu_names))
        k = ns.index(256) if 256 in ns else len(ns) - 1
        print(f"\nActive warps at each step, N = {ns[k]} (steps that combine nothing, such as Blelloch's 'clear "
              "last', count 0)")
        for name in gpu_names:
            if counts[name][k] is not None:
                print(f"  {name:<27}{counts[name][k][2]}")
    return mismatches


def _width(name):
    return max(len(name), len(visual.BOOK_FORMULAS[visual.FORMULA_OF[name]][0]) + 2, 16) + 2


def reduction_counts(on_gpu):
    """{kernel: {n: (additions, warp_slots)}} and the source of each kernel's numbers: the COUNT_WORK build on a
    GPU; without one the NumPy model's count (`model_count_work`), else the kernel's index arithmetic."""
    table, sources = {}, {}
    for kernel in REDUCTION_KERNELS:
        entry = REDUCTIONS.get(kernel) if kernel in REDUCTIONS.names() else None
        if on_gpu and entry is not None and entry.count_work is not None:
            count, sources[kernel] = entry.count_work, "GPU count"
        elif entry is not None and entry.model_count_work is not None:
            count, sources[kernel] = entry.model_count_work, "NumPy model" + ("" if on_gpu else " (no GPU)")
        else:
            count, sources[kernel] = None, "index arithmetic" + ("" if on_gpu else " (no GPU)")
        table[kernel] = {}
        for n in REDUCTION_NS:
            if count is not None:
                work = count(n)
                table[kernel][n] = (int(work.additions), int(work.warp_slots))
            else:
                additions, warps = visual.reduction_warp_slots(kernel, n)
                table[kernel][n] = (additions, 32 * sum(warps))
    return table, sources


def print_reduction_table(table, sources):
    print("\nReduction kernels of PMPP ch. 10, one block of N/2 threads: operations and execution resources "
          "(32 x active warps, summed over the steps)\n")
    print(f"{'kernel':<12}{'N':>6}{'ops':>7}{'resources':>11}   {'book (N = 256)':<24}source")
    for kernel, row in table.items():
        for n, (ops, slots) in row.items():
            book = BOOK_REDUCTION_AT_256[kernel] if n == 256 else None
            book_text = f"{book[0]} / {book[1]}" if book else ""
            if book and (ops, slots) != book:
                book_text += " (differs)"
            print(f"{kernel:<12}{n:>6}{ops:>7}{slots:>11}   {book_text:<24}{sources[kernel]}")
    simple = table["simple"].get(256)
    if simple and simple[1] != BOOK_REDUCTION_AT_256["simple"][1]:
        _, warps = visual.reduction_warp_slots("simple", 256)
        print(f"\nThe simple kernel at N = 256: 128 threads in 4 warps, 8 strides; by its index arithmetic the "
              f"active warps per stride are {warps}: {sum(warps)} warp-steps x 32 = {32 * sum(warps)}.  The book's "
              f"{BOOK_REDUCTION_AT_256['simple'][1]} = {BOOK_REDUCTION_AT_256['simple'][1] // 32} x 32 misses some: "
              "at stride 32, threads 0, 32, 64 and 96 (one in each warp) are still active, so all 4 warps take "
              "part in 6 of the 8 steps.")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algorithms", default=",".join(DEFAULT_ALGORITHMS),
                        help="comma-separated scans (default %(default)s), or 'all' for every one with a formula")
    parser.add_argument("--max-n", type=int, default=2048, help="largest N (a power of two; default %(default)s)")
    parser.add_argument("--save", metavar="FILE", help="write the plot to FILE instead of showing it")
    parser.add_argument("--model", action="store_true", help="count from the NumPy models even if a GPU is there")
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args(argv)
    if args.max_n < 16 or args.max_n & (args.max_n - 1):
        parser.error(f"--max-n must be a power of two >= 16, got {args.max_n}")
    ns = [1 << k for k in range(4, args.max_n.bit_length())]

    device = visual.gpu_or_model(args.model, "counting from the NumPy step-models\n")
    on_gpu = device is not None
    registered = SCANS.names()
    if args.algorithms == "all":
        wanted = [name for name in visual.FORMULA_OF if name in registered]
    else:
        wanted = [name.strip() for name in args.algorithms.split(",") if name.strip()]
    names = ["sequential"]
    for name in wanted:
        if name not in registered:
            print(f"skipping {name!r}: not a registered scan (registered: {', '.join(registered)})")
        elif name not in visual.FORMULA_OF:
            print(f"skipping {name}: no book formula to compare with")
        elif on_gpu and SCANS.get(name).count_work is None:
            print(f"skipping {name}: it has no COUNT_WORK build (no count_work)")
        elif not on_gpu and SCANS.get(name).model is None:
            print(f"skipping {name}: it has no NumPy step-model")
        else:
            names.append(name)

    try:
        counts, notes = scan_counts(names, ns, on_gpu)
        reductions, sources = reduction_counts(on_gpu)
    except pyscan.GPUUnavailableError as exc:
        print(f"no GPU ({exc}): counting from the NumPy step-models\n")
        on_gpu, device = False, None
        counts, notes = scan_counts(names, ns, on_gpu)
        reductions, sources = reduction_counts(on_gpu)
    source = f"GPU count, {device}" if on_gpu else "counted from the NumPy step-models, no GPU"
    mismatches = print_scan_table(counts, ns, source)
    if on_gpu:
        print("\n(sequential: counted from the sequential model; it has no kernel)")
    for note in notes:
        print(f"n/a: {note}")
    print_reduction_table(reductions, sources)

    if not args.no_plot:
        print()
        save = visual.figure_destination(args.save, "work_efficiency.png", where="the plot to work_efficiency.png")
        measured = {name: [e[0] if e else None for e in row] for name, row in counts.items()}
        label = {name: ("GPU count" if on_gpu and name != "sequential" else "model") for name in measured}
        title = (f"Additions counted on the GPU ({device}) against the books' formulas" if on_gpu
                 else "Additions counted from the NumPy step-models (no GPU) against the books' formulas")
        fig = visual.draw_work(ns, measured, title=title, source=label)
        visual.save_or_show(fig, save)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
