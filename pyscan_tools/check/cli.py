"""python -m pyscan check: every algorithm of every registry against NumPy; with --sanitize, under
compute-sanitizer as well.

    python -m pyscan check [PATTERN ...] [--pattern P ...] [--algorithm NAME ...] [--quick] [--jobs N]
    python -m pyscan check --sanitize [--tools memcheck,racecheck,synccheck,initcheck] [--quick] [--lineinfo]
                                      [--log-dir DIR] [--timeout SECONDS] [--jobs N]
    python -m pyscan check --list [--quick]          # the cases, without running them (needs no GPU)

Without --sanitize the cases run in --jobs worker processes (each its own CUDA context), split by compile unit
(pattern, algorithm, dtype, op) so that the cold nvcc compiles spread over the CPU cores.  Every case compares the
result with NumPy exactly, in NumPy's result dtype (int32 add in int64, int64 add wrapping, as np.cumsum); float
add runs on small integer values (every partial sum is exact in float32 and float64 whatever the order of the
additions, so a difference is an indexing bug, not rounding); max/min are exact anyway.  It also checks that the
result has the input's kind and shape and NumPy's result dtype, and that the input is untouched.  The cases come
from the registries (pyscan_tools.patterns), so an algorithm registered later is covered without an edit here.

With --sanitize (and only then) it first runs the same cases plainly (this warms the compile cache, so the slow
sanitized processes compile nothing, and separates wrong answers from sanitizer reports), then re-runs them under
each compute-sanitizer tool (pyscan_tools/check/sanitizer.py), prints a table tool -> errors, and fails unless
every tool ran to the end and reported 0 errors and 0 racecheck hazards.  --lineinfo compiles the kernels with
line information so that reports name file.cu:line.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

from ..cli import (
    EXIT_CODES_HELP,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    add_selection,
    chosen_algorithms,
    chosen_patterns,
)
from ..patterns import CHECK_PATTERNS
from .cases import make_cases, shard
from .report import coverage, print_failures, summary_table


def build_parser() -> argparse.ArgumentParser:
    from .sanitizer import TOOLS

    parser = argparse.ArgumentParser(
        prog="python -m pyscan check", description=__doc__.split("\n\n")[0],
        epilog=EXIT_CODES_HELP + ".  What the cases are and how --sanitize runs: pyscan_tools/check/cli.py's "
               "docstring.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_selection(parser, CHECK_PATTERNS)
    parser.add_argument("--quick", action="store_true", help="fewer sizes and dtypes (still every algorithm)")
    parser.add_argument("--sanitize", action="store_true",
                        help="also run the cases under compute-sanitizer (without it, no sanitizer runs)")
    parser.add_argument("--tools", default=",".join(TOOLS), help=f"with --sanitize: comma-separated, of {', '.join(TOOLS)}")
    parser.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 1),
                        help="worker processes: of the plain pass; with --sanitize, shared among the tools")
    parser.add_argument("--lineinfo", action="store_true", help="compile with -lineinfo (reports name file:line; "
                        "a different compile-cache entry, so the first run compiles everything again)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds for each pass (default 900)")
    parser.add_argument("--log-dir", help="where the logs go (default: a new temporary folder)")
    parser.add_argument("--list", action="store_true", help="print the cases and exit (needs no GPU)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every case")
    # internal: the worker side, and the sanitizer pass without the plain one
    parser.add_argument("--no-warm", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--exercise", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", help=argparse.SUPPRESS)
    parser.add_argument("--shard", help=argparse.SUPPRESS)
    parser.add_argument("--exact-alloc", action="store_true", help=argparse.SUPPRESS)
    return parser


def parse_args(argv=None) -> argparse.Namespace:
    import pyscan

    parser = build_parser()
    args = parser.parse_args(argv)
    args.selected_patterns = chosen_patterns(parser, args, CHECK_PATTERNS)
    known = {name for registry in pyscan.REGISTRIES.values() for name in registry.names()} | {"auto"}
    args.selected_algorithms = chosen_algorithms(parser, args, known)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    return args


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    everything = len(args.selected_patterns) == len(CHECK_PATTERNS)
    cases = make_cases(args.quick, None if everything else args.selected_patterns, args.selected_algorithms or None)
    if args.shard:
        cases = shard(cases, args.shard)
    if args.list:
        for case in cases:
            print(case.label)
        per = {}
        for case in cases:
            per[(case.pattern, case.algorithm)] = per.get((case.pattern, case.algorithm), 0) + 1
        print(f"{len(cases)} cases: " + ", ".join(f"{p}/{a} {n}" for (p, a), n in per.items()))
        return EXIT_OK

    from pyscan import gpu_unavailable_reason

    reason = gpu_unavailable_reason()
    if reason is not None:
        print(f"python -m pyscan check needs a GPU: {reason}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    if args.exercise:
        from .exercise import exercise

        t0 = time.perf_counter()
        counts = exercise(cases, args.json, exact_alloc=args.exact_alloc, lineinfo=args.lineinfo, verbose=args.verbose)
        print(f"exercise: {len(cases)} cases, " + ", ".join(f"{k} {v}" for k, v in counts.items())
              + f", {time.perf_counter() - t0:.1f} s", flush=True)
        return EXIT_OK if counts["mismatch"] == counts["error"] == 0 else EXIT_FAILED

    log_dir = args.log_dir or tempfile.mkdtemp(prefix="pyscan-check-")
    os.makedirs(log_dir, exist_ok=True)
    if args.sanitize:
        from .sanitizer import sanitize

        return sanitize(args, cases, log_dir)
    from .workers import run_plain

    t0 = time.monotonic()
    records, kernels, problems = run_plain(args, cases, log_dir)
    print("\n".join(summary_table(records, cases)))
    print(f"\n{len(records)} of {len(cases)} cases ran in {time.monotonic() - t0:.1f} s ({args.jobs} workers); "
          f"kernel files loaded: {len(kernels)}")
    for warning in coverage(cases, records, kernels, filtered=not everything or bool(args.selected_algorithms)):
        print(f"warning: {warning}")
    failed = print_failures(records)
    for problem in problems:
        print(problem)
    ok = failed == 0 and not problems and len(records) == len(cases)
    print("check: " + ("every case equals NumPy" if ok else f"FAILED ({failed} case(s) failed; logs in {log_dir})"))
    return EXIT_OK if ok else EXIT_FAILED
