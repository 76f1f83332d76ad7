"""Tools around the pyscan library: the benchmark (`python -m pyscan bench`) and the correctness and sanitizer
check (`python -m pyscan check`).  They live apart from the library (pyscan/ holds the patterns and their
runtime only) and share one description per pattern:

    patterns/   what the tools know about each pattern: inputs, the NumPy reference, equality, bytes moved,
                the check's cases (one module per pattern, PATTERNS in the tools' order)
    bench/      settings, array kinds, pyscan's rows, the peers' rows, measuring, the run, the report, the CLI
    check/      the cases, running them in worker processes, compute-sanitizer, the CLI
    lab/        tuning sweeps and diagnostics run by hand on a GPU host (not installed with the package)
    cli.py      the vocabulary both commands share (--pattern, --algorithm) and their exit codes
"""
