"""Lab check: the fast reduction's knobs at bandwidth-bound sizes, each setting timed as the public call on torch
tensors beside torch's own call in the same rounds (CUDA events around batches of back-to-back calls; round r
times batch r of every row), so a row's ratio to torch holds on a noisy machine.  The shipped setting is first.

    python pyscan_tools/lab/reduce_knobs_vs_peers.py [DTYPE:OP:LOG2 ...]     (default: CASES)
"""
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import pyscan  # noqa: E402
from pyscan.reductions import fast  # noqa: E402

CASES = [("int32", "add", 1 << 22), ("int64", "max", 1 << 22), ("float32", "add", 1 << 24), ("int32", "max", 1 << 24),
         ("float64", "min", 1 << 24), ("float32", "max", 1 << 26), ("int64", "add", 1 << 26),
         ("float32", "add", 1 << 28), ("int32", "add", 1 << 28), ("float64", "max", 1 << 28),
         ("int64", "min", 1 << 28)]
SHIPPED = dict(FAST_BLOCK=fast.FAST_BLOCK, FAST_UNROLL=fast.FAST_UNROLL, FAST_LOAD=fast.FAST_LOAD,
               BLOCKS_PER_SM=fast.BLOCKS_PER_SM)
# The shipped setting and its neighbours (docs/reduction.md has the sweeps that chose it).
VARIANTS = [SHIPPED] + [dict(SHIPPED, **change) for change in (
    {"FAST_UNROLL": 4}, {"FAST_LOAD": 1}, {"FAST_UNROLL": 4, "FAST_LOAD": 1})]
if sys.argv[1:]:
    CASES = [(dtype, op, 1 << int(log2)) for dtype, op, log2 in (case.split(":") for case in sys.argv[1:])]
ROUNDS, CALLS = 15, 20
PEERS = {"add": lambda t: torch.sum(t, dtype=t.dtype), "max": torch.amax, "min": torch.amin}


def use(knobs):
    fast.retune(**knobs)


def batch_ms(call):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(CALLS):
        call()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / CALLS


for dtype, op, n in CASES:
    rng = np.random.default_rng(0)
    host = rng.integers(-1000, 1000, n).astype(dtype)
    t = torch.from_numpy(host).cuda()
    want = {"add": np.add, "max": np.maximum, "min": np.minimum}[op].reduce(host, dtype=host.dtype)
    rows = [("torch", lambda t=t, op=op: PEERS[op](t), None)]
    for knobs in VARIANTS:
        use(knobs)
        got = pyscan.reduce(t, op=op).item()
        assert abs(got - want) <= 1e-6 * np.abs(host).sum(dtype=np.float64), (dtype, op, knobs, got, want)
        rows.append((" ".join(f"{k}={v}" for k, v in knobs.items() if SHIPPED[k] != v) or "shipped",
                     lambda t=t, op=op: pyscan.reduce(t, op=op), knobs))
    times = {label: [] for label, _, _ in rows}
    for _ in range(ROUNDS):
        for label, call, knobs in rows:
            if knobs is not None:
                use(knobs)
                call()  # the first call after a change re-plans
            times[label].append(batch_ms(call))
    use(SHIPPED)
    peer = statistics.median(times["torch"])
    print(f"{dtype} {op} 2^{n.bit_length() - 1}: torch {peer * 1e3:.1f} us")
    for label, values in times.items():
        if label != "torch":
            ms = statistics.median(values)
            print(f"  {label:42s} {ms * 1e3:8.1f} us   torch/this {peer / ms:.3f}")
