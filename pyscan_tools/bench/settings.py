"""The bench's settings and the meaning of every field it writes (benchmarks/README.md says the same)."""

from __future__ import annotations

SCHEMA = "pyscan-bench/2"

# A measurement: two untimed calls (the first compiles, allocates caches), one timed call to learn the time per
# call, then BATCHES batches of back-to-back calls, each batch about BATCH_MS long (between 1 and MAX_CALLS calls);
# the median of the batches' per-call times is the row's time.  Fewer batches (never under MIN_BATCHES) when they
# would pass MEASURE_BUDGET_MS; none where the timed call took more than CALL_CAP_MS (that call is the row's time).
WARMUP_CALLS = 2
BATCHES = 5
MIN_BATCHES = 3
BATCH_MS = 2.0
MAX_CALLS = 200
MEASURE_BUDGET_MS = 200.0
CALL_CAP_MS = 250.0  # a row is skipped where its time per call, predicted from the previous size, passes this, and
# timed once where its call took longer (the peers' worst axis shapes take up to a second a call)
CHECK_MAX_CELLS = 2**22  # results are checked against NumPy up to this many elements (cells)

DEFINITIONS = {
    "ms": "per-call time: CUDA events (of the row's library, on its current stream) around a batch of back-to-back "
          "calls, divided by the calls; the median over the batches, which the rows of one size take in turns "
          "(round r: batch r of every row).  Small inputs: the host's time per call "
          "shows (checks, allocations, launches); large ones: the kernels'.  life: per generation",
    "calls": "calls per batch (about 2 ms of calls, 1 to 200; 1 in 1 batch where a call takes over CALL_CAP_MS)",
    "batches": "batches timed (the median is ms, the fastest ms_min)",
    "arrays": "the kind of array the call gets and returns: cupy, torch (CUDA tensors) or pycuda (GPUArray)",
    "gelem_per_s": "size / time / 1e9: elements (cells for life) per second, in billions",
    "copy_ms": "per-call time of a device-to-device copy of the input's bytes (life: the lattice as int32), in the "
               "same run, timed the same way; axis_scan into a wider dtype (bool, uint8 into int64): the mean of a "
               "copy of the input's bytes and one of the result's",
    "x_copy": "scan, axis_scan, life: copy_ms / ms (each element read and written once, as by the copy); reduce, "
              "axis_reduce, histogram: copy_ms / (2 x ms) (bytes read per second against the copy's bytes read + "
              "written per second).  The axis patterns' baseline / time: their table and targets give ms / baseline",
    "driver_ms": "pyscan rows: the registered driver alone on a pycuda GPUArray with its output preallocated (no "
                 "checks, no result object), timed the same way; the public call's extra is ms - driver_ms",
    "in_l2": "the input fits in the device's L2 cache, so repeated calls find it there (faster than DRAM allows)",
    "check": "ok: the result equals NumPy's exactly (inputs are small nonzero integers, so float sums are exact; "
             "along an axis every run of elements sums to at most 6 in magnitude, exact in float16, and the dtype "
             "must be the one asked for); MISMATCH: it does not; '-': not checked (sizes above CHECK_MAX_CELLS; the "
             "axis patterns' shapes are checked up to 2^24 elements)",
    "op": "scan/reduce: the operator; axis_scan/axis_reduce: the axis and the result dtype asked of every library; "
          "histogram: the data (uniform random bytes, or all bytes equal); life: '-'",
}
