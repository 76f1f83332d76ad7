"""PMPP ch. 9: the letter histogram of Fig. 9.1, and the histogram kernels side by side.

    python demos/histogram.py [FILE] [--save chart.png]   counts of a-d, e-h, ..., y-z and the bar chart
    python demos/histogram.py --compare [--size N]        every algorithm on N text bytes (default 2^26):
                                                          uniform letters, then one repeated letter
    python demos/histogram.py --bench [--size N]          every algorithm and cupy.histogram on N uint8
                                                          (default 2^28), 256 bins, uniform and all-equal
                                                          (pyscan_tools/lab/tune_fast.py histogram: the fast kernel's knobs)
    python demos/histogram.py --atomics [--save F.png]    pyscan.histogram's atomics per value, from its NumPy
                                                          step-model (no GPU): float32 data, 100 / 4,096 / 2^20
                                                          bins, 0-100 % of the values in one bin, for each
                                                          aggregation (none, runs, warp, warp_runs)

The text is the phrase "programming massively parallel processors" unless a text file is named.  Times are
CUDA-event times of the whole call (result buffer, zeroing, kernel), the median of --repeat runs after a
warm-up.  Without a GPU the demo says so and draws the chart from the NumPy reference, labelled as such;
--compare and --bench need one: without it they say why on stderr and the demo exits with status 3.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import pyscan
from pyscan.histograms import HISTOGRAMS, LETTER_LABELS, reference_histogram
from pyscan.timing import median_ms

PHRASE = "programming massively parallel processors"


def letter_counts(text: bytes):
    """(counts, where they came from): the GPU's text_histogram, or the NumPy reference if there is no GPU."""
    try:
        return pyscan.text_histogram(text), "GPU, pyscan.text_histogram (auto)"
    except pyscan.GPUUnavailableError as exc:
        print(f"no GPU: {exc}\nshowing the NumPy reference instead (pyscan.histograms.reference_histogram).", file=sys.stderr)
        return reference_histogram(np.frombuffer(text, np.uint8), letters=True), "NumPy reference, no GPU"


def print_counts(counts, origin):
    width = 50 / max(1, int(counts.max()))
    print(f"letter histogram ({origin}):")
    for label, count in zip(LETTER_LABELS, counts):
        print(f"  {label}  {int(count):>10}  {'#' * int(round(int(count) * width))}")


def draw_chart(counts, title, origin, save):
    try:
        import matplotlib
    except ImportError:
        print("(matplotlib is not installed: no chart beyond the text one above)")
        return
    if save:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    bars = ax.bar(LETTER_LABELS, counts.astype(np.int64), color="#4477aa" if "GPU," in origin else "#999999")
    ax.bar_label(bars, labels=[str(int(c)) for c in counts])
    ax.set_xlabel("letter bin")
    ax.set_ylabel("count")
    ax.set_title(f"{title}\n({origin})", fontsize=10)
    ax.margins(y=0.15)
    fig.tight_layout()
    if save:
        fig.savefig(save, dpi=120)
        print(f"chart saved to {save}")
    elif matplotlib.get_backend().lower() == "agg":
        print("(no display for the chart: use --save FILE to write it as a PNG)")
    else:
        plt.show()


# ---- timing --------------------------------------------------------------------------------------------

def time_ms(call, repeat):
    """Median CUDA-event time of call() in ms, after two warm-up calls (compilation, caches, pools)."""
    return median_ms(call, repeat)


def compare(size, repeat):
    """Every algorithm on `size` text bytes, uniform letters and one repeated letter, times side by side."""
    pyscan.pycuda_context()
    import pycuda.gpuarray as ga

    rng = np.random.default_rng(9)
    inputs = {"uniform letters": rng.integers(ord("a"), ord("z") + 1, size, dtype=np.uint8),
              "one letter ('e')": np.full(size, ord("e"), np.uint8)}
    print(f"\nletter histogram of {size} bytes ({size / 2**20:.0f} MiB), median of {repeat} runs:")
    print(f"{'algorithm':<20}" + "".join(f"{name:>28}" for name in inputs) + f"{'slowdown':>10}")
    ok = True
    for algorithm in HISTOGRAMS:
        cells, times = [], []
        for data in inputs.values():
            data_gpu = ga.to_gpu(data)
            expected = reference_histogram(data, letters=True)
            ok_here = np.array_equal(pyscan.text_histogram(data_gpu, algorithm=algorithm.name).get(), expected)
            ok &= ok_here
            ms = time_ms(lambda a=algorithm.name, d=data_gpu: pyscan.text_histogram(d, algorithm=a), repeat)
            times.append(ms)
            cells.append(f"{ms:9.3f} ms {size / ms / 1e6:7.1f} GB/s{'' if ok_here else ' WRONG'}")
        print(f"{algorithm.name:<20}" + "".join(f"{c:>28}" for c in cells) + f"{times[1] / times[0]:>9.1f}x")
    print("all results equal the NumPy reference" if ok else "SOME RESULTS ARE WRONG")
    return ok


def bench(size, repeat):
    """Every algorithm and cupy.histogram on `size` uint8, 256 bins, uniform and all-equal."""
    drv = pyscan.pycuda_context()
    import pycuda.gpuarray as ga

    try:
        import cupy
    except ImportError:
        cupy = None
    rng = np.random.default_rng(10)
    inputs = {"uniform": rng.integers(0, 256, size, dtype=np.uint8), "all-equal": np.full(size, 97, np.uint8)}
    device = pyscan.device_name()
    print(f"\nbyte histogram, 256 bins, {size} uint8 ({size / 2**20:.0f} MiB) on {device}; median of {repeat} runs")
    copy_src = ga.to_gpu(inputs["uniform"])
    copy_dst = ga.empty_like(copy_src)
    copy_ms = time_ms(lambda: drv.memcpy_dtod(copy_dst.gpudata, copy_src.gpudata, size), repeat)
    print(f"device-to-device copy of the input: {copy_ms:.3f} ms, {size / copy_ms / 1e6:.1f} Gelem/s (bytes)")
    copy_src = copy_dst = None  # free the device memory
    rows = {}
    ok = True
    candidates = [(a.name, lambda d, b, name=a.name: pyscan.byte_histogram(d, b, algorithm=name)) for a in HISTOGRAMS]
    for kind, data in inputs.items():
        data_gpu = ga.to_gpu(data)
        expected = np.bincount(data, minlength=256)  # = np.histogram(data, 256, (0, 256)) (tests/unit/test_histogram.py)
        for name, driver in candidates:
            right = np.array_equal(driver(data_gpu, 256).get(), expected)
            ok &= right
            rows.setdefault(name, {})[kind] = (time_ms(lambda d=driver, x=data_gpu: d(x, 256), repeat), right)
        if cupy is not None:
            x = cupy.asarray(data)
            right = np.array_equal(cupy.histogram(x, bins=256, range=(0, 256))[0].get(), expected)
            rows.setdefault("cupy.histogram", {})[kind] = (
                time_ms(lambda x=x: cupy.histogram(x, bins=256, range=(0, 256)), repeat), right)
            x = None
        data_gpu = None
    reference_row = rows.get("cupy.histogram")
    header = f"{'algorithm':<24}"
    for kind in inputs:
        header += f"{kind + ' ms':>14}{'Gelem/s':>10}{'x cupy':>8}"
    print(header)
    for name, cells in rows.items():
        line = f"{name:<24}"
        for kind in inputs:
            ms, right = cells[kind]
            ratio = f"{reference_row[kind][0] / ms:8.2f}" if reference_row else f"{'-':>8}"
            line += f"{ms:14.3f}{size / ms / 1e6:10.1f}{ratio}"
            if not right:
                line += " WRONG"
        print(line)
    if cupy is None:
        print("(cupy is not installed: no cupy.histogram row)")
    print("all results equal NumPy" if ok else "SOME RESULTS ARE WRONG")
    return ok


def draw_atomics(save, size=2**20, sms=4):
    """Atomics per value that numpy_histogram.cu issues (its step-model): shared-memory ones for 100 and 4,096
    bins, global ones for 2^20, against the share of the values in one bin.  A grid for `sms` SMs, so that each
    thread counts 128 values, as on an H100's 132 SMs at 2^25 values (runs grow with the values per thread)."""
    import matplotlib.pyplot as plt

    from pyscan.histograms import numpy_models as nm
    from pyscan.histograms import numpy_plan as plan

    rng = np.random.default_rng(1)
    skews = np.linspace(0, 100, 11)
    fig, axes = plt.subplots(2, 3, figsize=(13, 7), sharey="row", sharex=True)
    for column, bins in enumerate((100, 4096, 2**20)):
        for aggregate, style in (("none", "k:"), ("runs", "C0--"), ("warp", "C1--"), ("warp_runs", "C2-")):
            total, hot = [], []
            for skew in skews:
                x = rng.integers(0, bins, size).astype(np.float32) + np.float32(0.5)
                x[rng.random(size) < skew / 100] = np.float32(bins // 2 + 0.5)
                rule = plan.uniform_rule(x.dtype, bins, 0, bins, explicit_range=True)
                _, stats = nm.numpy_histogram_model(x, rule, aggregate=aggregate, sms=sms, return_stats=True)
                field = "shared_atomics" if stats["strategy"] == plan.SHARED else "global_atomics"
                total.append(stats[field] / size)
                hot.append(stats["hot_bin_atomics"] / size)
            chosen = plan.choose_strategy(bins, False)[0]
            label = aggregate + (" (default)" if aggregate == plan.AGGREGATE[chosen] else "")
            axes[0, column].plot(skews, total, style, marker="o", ms=3, label=label)
            axes[1, column].plot(skews, hot, style, marker="o", ms=3, label=label)
        kind = "shared-memory" if plan.choose_strategy(bins, False)[0] == plan.SHARED else "global"
        axes[0, column].set_title(f"{bins} bins: {kind} atomics")
        axes[1, column].set_xlabel("% of the values in one bin")
    for ax in axes.ravel():
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel("atomics per value")
    axes[1, 0].set_ylabel("atomics on the hot bin per value\n(they wait for each other)")
    axes[0, 0].legend()
    per_thread = size // (plan.grid_size(size, 4, False, sms) * plan.BLOCK)
    fig.suptitle(f"pyscan.histogram, float32, {per_thread} values per thread: the atomics of numpy_histogram.cu "
                 "(NumPy step-model)")
    fig.tight_layout()
    if save:
        fig.savefig(save, dpi=110)
        print(f"wrote {save}")
    else:
        plt.show()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", nargs="?", help="a text file to count (default: the phrase of PMPP ch. 9)")
    parser.add_argument("--save", metavar="FILE", help="write the bar chart to this PNG instead of showing it")
    parser.add_argument("--compare", action="store_true", help="time every algorithm on a large text input")
    parser.add_argument("--bench", action="store_true", help="time every algorithm and cupy.histogram on bytes")
    parser.add_argument("--size", type=int, help="input length for --compare (2^26) or --bench (2^28)")
    parser.add_argument("--repeat", type=int, default=10, help="timed runs per measurement (median)")
    parser.add_argument("--no-chart", action="store_true", help="print the counts only")
    parser.add_argument("--atomics", action="store_true",
                        help="draw pyscan.histogram's atomics per value from its step-model (no GPU needed)")
    args = parser.parse_args(argv)
    if args.atomics:
        draw_atomics(args.save)
        return 0
    if args.compare or args.bench:
        reason = pyscan.gpu_unavailable_reason()
        if reason is not None:
            print(f"--compare/--bench need a GPU: {reason}", file=sys.stderr)
            return 3

    if args.file:
        with open(args.file, "rb") as f:
            text = f.read()
        title = f"letter histogram of {args.file}"
    else:
        text = PHRASE.encode()
        title = f'PMPP Fig. 9.1: letter histogram of "{PHRASE}"'
    counts, origin = letter_counts(text)
    print_counts(counts, origin)
    if not args.no_chart:
        draw_chart(counts, title, origin, args.save)
    ok = True
    if args.compare:
        ok &= compare(args.size or 2**26, args.repeat)
    if args.bench:
        ok &= bench(args.size or 2**28, args.repeat)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
