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
if __name__ == "__main__":
    from pyscan_tools.bench.cli import main

    main(sys.argv[1:] or ["scan", "reduce", "--sizes", "1024", "--dtype", "int32"])
    for why, count in counts.most_common(12):
        print(f"{count:8d}  {why}")
