"""Which way the bench's public calls go: counts of ready_call() taking a call or handing it to begin(), with why, while
`python -m pyscan bench` runs in this process.  Run on a GPU host: python pyscan_tools/lab/bench_paths.py [bench args]"""

import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pyscan.runtime import arrays, driver  # noqa: E402

counts = collections.Counter()
original = arrays.ready_call


def counted(x, dtypes):
    call = original(x, dtypes)
    if call is not None:
        counts["ready"] += 1
        return call
    kind = arrays._kinds_by_type.get(type(x))
    why = "kind" if kind is None else None
    if why is None:
        address, shape, dtype, contiguous, device = kind.view(x)
        current = int(driver._cu.cuCtxGetCurrent()[1]) if driver._cu is not None else None
        why = (f"{kind.name}: shape {shape}, contiguous {contiguous}, dtype {dtype}, device {device}, context "
               f"{'primary' if current == driver._primary.get(device or 0) else hex(current or 0)}")
    counts[why] += 1
    return None


arrays.ready_call = counted

def epilogue():
    """After the bench, in its process: the same calls on a fresh small array and on a prefix view of a large one,
    timed as the bench times them (event batches of about 2 ms), with and without the bench's state."""
    import cupy
    import torch

    import pyscan
    from pyscan.timing import event_timer

    fresh_c, big_c = cupy.arange(1024, dtype=cupy.int32), cupy.arange(1 << 28, dtype=cupy.int32)
    fresh_t, big_t = torch.arange(1024, dtype=torch.int32, device="cuda"), torch.arange(1 << 28, dtype=torch.int32,
                                                                                       device="cuda")
    rows = [("reduce fresh cupy", "cupy", lambda: pyscan.reduce(fresh_c)),
            ("reduce view cupy", "cupy", lambda v=big_c[:1024]: pyscan.reduce(v)),
            ("reduce fresh torch", "torch", lambda: pyscan.reduce(fresh_t)),
            ("reduce view torch", "torch", lambda v=big_t[:1024]: pyscan.reduce(v)),
            ("torch.sum view", "torch", lambda v=big_t[:1024]: torch.sum(v)),
            ("scan fresh cupy", "cupy", lambda: pyscan.scan(fresh_c)),
            ("scan view torch", "torch", lambda v=big_t[:1024]: pyscan.scan(v)),
            ("torch.cumsum view", "torch", lambda v=big_t[:1024]: torch.cumsum(v, 0))]
    for name, library, fn in rows:
        timer = event_timer(library)
        for _ in range(3):
            fn()
        batches = sorted(timer.per_call_ms(fn, 100) * 1e3 for _ in range(7))
        print(f"{name:<22} median {batches[3]:6.2f} us  min {batches[0]:6.2f}")
    from pyscan_tools.bench.measure import Timed, measure_together

    timed = [Timed(fn, event_timer(library)) for _, library, fn in rows]
    measure_together(timed)
    for (name, _, _), row in zip(rows, timed):
        result = row.result()
        print(f"{name:<22} in rounds: median {result.ms * 1e3:6.2f} us  min {result.ms_min * 1e3:6.2f} "
              f"({result.calls} calls x {result.batches})")


if __name__ == "__main__":
    from pyscan_tools.bench.cli import main

    main(sys.argv[1:] or ["scan", "reduce", "--sizes", "1024", "--dtype", "int32"])
    for why, count in counts.most_common(12):
        print(f"{count:8d}  {why}")
    epilogue()
