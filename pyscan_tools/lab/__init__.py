"""Lab scripts: tuning sweeps and diagnostics run by hand on a GPU host; `python -m pyscan bench` is the benchmark."""
