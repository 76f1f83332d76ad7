"""Races that fail on screen: the books' buggy kernels as printed, run many times on the GPU, the wrong results
counted against NumPy, one wrong result drawn beside the right one, and then the library's fixed kernel.

    scan       Hands-On ch. 4's naive_prefix as printed: no barrier between read and write (PMPP §11.2)
    histogram  PMPP §9.2 (Figs. 9.4-9.5): histo[bin]++ without atomics loses updates
    life       Hands-On ch. 4's one-block iterative Game of Life without __syncthreads()

A race does not strike on every run: the count says how often it did on this GPU.  Every run is also checked
for what cannot go wrong (nothing written outside the output; the bounds of pyscan_tools.pictures.races.check_invariants).
With no GPU the demo runs nothing and draws one interleaving of each race from the NumPy race model, and says so.

    python demos/races.py                         # 100 runs of each, the picture on screen
    python demos/races.py --runs 1000 --save docs/images/races_gpu.png
    python demos/races.py --races histogram --runs 20
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from pyscan_tools.pictures import races, visual


def run(names, runs, seed, on_gpu):
    """{name: RaceCount}: on a GPU the racy and the fixed kernels; without one the race model (no counts)."""
    counts = {}
    for name in names:
        if on_gpu:
            counts[name] = races.count_wrong(name, runs, seed=seed)
        else:
            x = races.make_input(name, np.random.default_rng(seed))
            right = races.reference(name, x)
            count = races.RaceCount(name)
            count.example = (x, races.race_model(name, x), right, right)
            counts[name] = count
    return counts


def draw(counts, source, on_gpu):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(counts), 3, figsize=(15, 3.7 * len(counts)), squeeze=False)
    for row, (name, count) in zip(axes, counts.items()):
        race = races.RACES[name]
        if count.example is None:  # the race never struck: draw the model's interleaving, and say so
            x = races.make_input(name, np.random.default_rng(0))
            right = races.reference(name, x)
            example, how = (x, races.race_model(name, x), right, races.run_fixed(name, x)), \
                "no wrong run: one possible interleaving (NumPy race model)"
        else:
            example = count.example
            how = (f"wrong in {count.wrong} of {count.runs} runs on the GPU; one of them" if on_gpu
                   else "one possible interleaving (NumPy race model, no GPU)")
        x, bad, right, fixed = example
        fixed_how = (f"the fix, kernels/{race.fixed}\nwrong in {count.fixed_wrong} of {count.fixed_runs} runs"
                     if on_gpu else f"the fix, kernels/{race.fixed}\nnot run (no GPU): the right answer drawn")
        row[0].set_title(f"{race.title}\n{how}", fontsize=9, loc="left")
        row[1].set_title(f"right (NumPy)\n{race.source.split(' (')[0]}", fontsize=9, loc="left")
        row[2].set_title(fixed_how, fontsize=9, loc="left")
        if name == "scan":
            idx = np.arange(right.size)
            row[0].bar(idx, bad - right, width=1.0, color="#b23a48")
            row[0].set_ylabel("racy - right")
            for w in range(0, right.size, 256):
                row[0].axvline(w, color="#ccc", linewidth=0.5)
            row[1].plot(idx, right, color="#2a7ab0")
            row[1].plot(idx, bad, color="#b23a48", linestyle="--", linewidth=1, label="racy")
            row[1].legend(fontsize=8)
            row[1].set_ylabel("inclusive prefix sum")
            row[1].set_yscale("symlog")
            row[2].bar(idx, fixed - right, width=1.0, color="#3a9a5b")
            row[2].set_ylabel("fixed - right")
            row[2].set_ylim(row[0].get_ylim())
            for ax in row:
                ax.set_xlabel(f"element (one block of {right.size} threads)")
        elif name == "histogram":
            from pyscan.histograms import LETTER_LABELS

            idx = np.arange(right.size)
            # On a log scale: the racy counts are a few hundred beside ~160,000 right ones, invisible on a linear
            # axis.  Each racy bar is labelled with the count it kept and the share of updates lost.
            row[0].bar(idx - 0.2, right, width=0.4, color="#2a7ab0", label="right")
            row[0].bar(idx + 0.2, np.maximum(bad, 1), width=0.4, color="#b23a48", label="histo[bin]++ (racy)")
            row[0].set_yscale("log")
            row[0].set_ylim(0.8, float(right.max()) * 60)
            row[0].legend(fontsize=8, loc="upper right", ncol=2)
            lost = 1 - bad.astype(float) / np.maximum(right, 1)
            for i, f in enumerate(lost):
                row[0].text(i, float(right[i]) * 1.4, f"{int(bad[i]):,}\nlost {100 * f:.1f}%", ha="center",
                            va="bottom", fontsize=6.5, color="#b23a48")
            row[0].set_ylabel("count (log scale)")
            row[1].bar(idx, right, color="#2a7ab0")
            row[2].bar(idx, fixed, color="#3a9a5b")
            for ax in row:
                ax.set_xticks(idx)
                ax.set_xticklabels(LETTER_LABELS)
            row[1].set_ylabel("count")
            row[2].set_ylabel("count")
        else:
            wrong = bad != right
            row[0].imshow(bad, cmap="Greys", vmin=0, vmax=1, interpolation="nearest")
            ys, xs = np.nonzero(wrong)
            row[0].scatter(xs, ys, s=14, facecolors="none", edgecolors="#b23a48", linewidths=0.8)
            row[0].set_xlabel(f"{int(wrong.sum())} of {wrong.size} cells wrong (circled) after "
                              f"{races.LIFE_GENERATIONS} generations")
            row[1].imshow(right, cmap="Greys", vmin=0, vmax=1, interpolation="nearest")
            row[2].imshow(fixed, cmap="Greys", vmin=0, vmax=1, interpolation="nearest")
            row[2].set_xlabel(f"{int((fixed != right).sum())} cells differ from NumPy")
            for ax in row:
                ax.set_xticks([])
                ax.set_yticks([])
    fig.suptitle(f"Races from the books, {source}", fontsize=12)
    fig.tight_layout()
    return fig


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100, help="runs of each racy kernel (default %(default)s)")
    parser.add_argument("--races", default=",".join(races.RACES), help="comma-separated (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", metavar="PNG", help="write the picture instead of showing it")
    parser.add_argument("--model", action="store_true", help="draw the NumPy race models even if a GPU is there")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    names = [n.strip() for n in args.races.split(",") if n.strip()]
    unknown = [n for n in names if n not in races.RACES]
    if unknown or not names:
        parser.error(f"unknown race(s) {unknown}: expected some of {', '.join(races.RACES)}")
    save = visual.figure_destination(args.save, "races.png")
    device = visual.gpu_or_model(args.model, "no runs; drawing one interleaving of each race (NumPy model)")
    on_gpu = device is not None
    counts = run(names, args.runs, args.seed, on_gpu)
    source = f"run on the GPU ({device})" if on_gpu else "NumPy race models (no GPU: nothing was run)"
    print(f"Races, {source}")
    for name, count in counts.items():
        race = races.RACES[name]
        print(f"  {race.title} -- {race.source}")
        if on_gpu:
            print(f"    {count.line()}")
            print("    every racy run wrote only its output and kept the invariants of races.check_invariants")
        else:
            _, bad, right, _ = count.example
            print(f"    the model's interleaving gets {int(np.count_nonzero(bad != right))} of {right.size} outputs wrong")
        print(f"    why: {race.what_goes_wrong}")
    fig = draw(counts, source, on_gpu)
    visual.save_or_show(fig, save, dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main())
