"""The scans that must have the GPU trace builds (TRACE=1) and the work-counting builds (COUNT_WORK=1) register
them: no GPU needed.  The builds against the NumPy step-models and the books (PMPP §11.2-§11.4), on the GPU:
tests/gpu/test_scan_trace_gpu.py."""

from pyscan.scans import tracing

TRACED = tracing.algorithms_with("trace")
COUNTED = tracing.algorithms_with("count_work")


def test_required_builds_exist():
    for name in ("naive", "kogge_stone", "kogge_stone_double_buffer", "brent_kung", "coarsened"):
        assert name in TRACED and name in COUNTED
