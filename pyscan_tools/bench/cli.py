"""python -m pyscan bench: pyscan's public calls beside torch, CuPy, PyCUDA and cuda.compute, timed as users call
them, in one run on one GPU, next to a device copy of the same bytes.

    python -m pyscan bench [PATTERN ... | all] [--pattern P] [--algorithm NAME] [--sizes ...] [--dtype D]
                           [--arrays cupy torch] [--quick] [--json out.json] [--plot out.png]

Every row is the per-call time of back-to-back calls (CUDA events around a batch of calls, divided by the
calls; the median of 5 batches): for small inputs the host's work per call shows, for large ones the kernels'.
pyscan's rows call the public function (pyscan.scan, pyscan.reduce, pyscan.byte_histogram, pyscan.life.Life) on the
array a user holds -- a CuPy array and a torch tensor -- and get their result back in the same kind; the
registered driver alone is an extra column.  benchmarks/README.md explains every column and target.
"""

from __future__ import annotations

import argparse
import signal
import sys

from ..cli import EXIT_CODES_HELP, EXIT_FAILED, EXIT_OK, EXIT_UNAVAILABLE, add_selection, chosen_algorithms, chosen_patterns
from ..patterns import BENCH_PATTERNS, PATTERNS, cells, parse_size

PRESETS = ("default", "full", "quick", "small")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pyscan bench", description=__doc__.split("\n\n")[0],
        epilog="Sizes: element counts (4096, 2^12, 16M), HxW or a square count of cells for life and the axis patterns, "
               "or a preset: default (scan, reduce: every power of 4 from 2^10 to 2^28; axis_scan, axis_reduce: "
               "4096x4096, 2^20x16, 16x2^20, 2^23x2, 64x65536), full (every power of 2), quick, small.  "
               + EXIT_CODES_HELP + "; targets not met are reported, not an error.")
    add_selection(parser, BENCH_PATTERNS)
    parser.add_argument("--sizes", nargs="+", metavar="SIZE", help="sizes, or a preset: " + ", ".join(PRESETS))
    parser.add_argument("--quick", action="store_true", help="the quick preset (four sizes for scan and reduce; three "
                                                                 "shapes for axis_scan and axis_reduce)")
    parser.add_argument("--dtype", action="append", default=[], metavar="DTYPE",
                        help="only cases of this input dtype (int32, int64, float32, float64, float16, uint8, bool); "
                             "repeatable")
    parser.add_argument("--arrays", nargs="+", default=["cupy", "torch"], choices=("cupy", "torch", "pycuda"),
                        help="the array kinds pyscan's public calls get (default: cupy torch, those that import; "
                             "pycuda GPUArrays where neither does)")
    parser.add_argument("--json", metavar="PATH", help="write every row, the device and the versions as JSON")
    parser.add_argument("--plot", metavar="PATH", help="write a PNG: throughput against size, one panel per case")
    parser.add_argument("--no-peers", action="store_true", help="no torch/CuPy/PyCUDA/cuda.compute rows")
    parser.add_argument("--no-driver", action="store_true", help="no driver-alone column")
    parser.add_argument("--no-check", action="store_true", help="do not check results against NumPy")
    return parser


def sizes_for(tokens, pattern, quick: bool) -> list:
    """The sizes of a pattern: the preset (quick or default) when no --sizes came, else the tokens (each a size or
    a preset name), sorted from small to large; shapes of as many cells (the axis patterns) in the order given."""
    out = []
    for token in tokens or ["quick" if quick else "default"]:
        for part in str(token).replace(",", " ").split():
            out.extend(pattern.sizes[part] if part in PRESETS else [parse_size(part, pattern.lattice)])
    return sorted(dict.fromkeys(out), key=cells)


def parse_args(argv=None, registries=None) -> argparse.Namespace:
    """The arguments, checked; algorithm names against `registries` (default pyscan.REGISTRIES)."""
    if registries is None:
        import pyscan

        registries = pyscan.REGISTRIES
    parser = build_parser()
    args = parser.parse_args(argv)
    args.patterns = chosen_patterns(parser, args, BENCH_PATTERNS)
    known = {name for registry in registries.values() for name in registry.names()} | {"auto"}
    args.algorithms = chosen_algorithms(parser, args, known) or ("auto",)
    args.dtypes = tuple(args.dtype)
    try:
        args.size_plan = {p: sizes_for(args.sizes, PATTERNS[p], args.quick) for p in args.patterns}
    except ValueError as exc:
        parser.error(str(exc))
    return args


def _versions() -> dict:
    from importlib import metadata

    out = {}
    for name in ("cupy", "torch", "pycuda"):
        module = sys.modules.get(name)
        if module is not None:
            out[name] = getattr(module, "VERSION_TEXT", None) or getattr(module, "__version__", None)
    try:
        out["cuda-cccl"] = metadata.version("cuda-cccl")
    except metadata.PackageNotFoundError:
        out["cuda-cccl"] = None
    return out


def main(argv=None) -> int:
    args = parse_args(argv)
    from pyscan import gpu_unavailable_reason

    from .arrays import open_kinds
    from .report import format_table, plot, write_json
    from .run import Bench

    reason = gpu_unavailable_reason()
    if reason is not None:
        print(f"python -m pyscan bench: {reason}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    kinds, missing = open_kinds(dict.fromkeys([*args.arrays, "pycuda"]))
    if not any(k in kinds for k in args.arrays) and "pycuda" not in kinds:
        print(f"python -m pyscan bench: no array kind opens here: {missing}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    first = next(k for k in ("cupy", "torch", "pycuda") if k in kinds)
    bench = Bench(args, kinds, device=kinds[first].device(), versions=_versions())
    bench.left_out.update({f"{k} arrays": why for k, why in missing.items() if k in args.arrays})

    def interrupt(signum, frame):
        raise KeyboardInterrupt
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        result = bench.run()
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(format_table(result))
    if args.json:
        write_json(result, args.json)
        print(f"\nwrote {args.json}", file=sys.stderr)
    if args.plot:
        plot(result, args.plot)
        print(f"wrote {args.plot}", file=sys.stderr)
    bad = [r for r in result["rows"] if r["kind"] == "pyscan" and (r["error"] or r["check"] == "MISMATCH")]
    return EXIT_FAILED if bad or result["aborted"] else EXIT_OK
