"""Lab probe: a small pyscan.reduce and its pieces (the array's read, the result, the launch) on a torch tensor and
a CuPy array, timed as the bench times (pyscan_tools.bench.measure: 2 warm-up calls, batches of about 2 ms between
the library's CUDA events, rounds interleaved over the rows) and then each alone in a hot loop (host time), to see
which piece costs more in the bench than in a loop (docs/public_call_overhead.md).

    python pyscan_tools/lab/bench_like_parts.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import cupy  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import pyscan  # noqa: E402
from pyscan.reductions import fast  # noqa: E402
from pyscan.runtime import arrays  # noqa: E402
from pyscan.timing import event_timer  # noqa: E402
from pyscan_tools.bench import measure  # noqa: E402
from pyscan_tools.lab.call_parts import us  # noqa: E402


def main():
    big = torch.arange(1 << 22, device="cuda", dtype=torch.int32)
    cbig = cupy.asarray(big)
    n = 1 << 16
    t, c = big[:n], cbig[:n]
    i32 = np.dtype(np.int32)
    pyscan.reduce(t, op="max"), pyscan.reduce(c, op="max")
    read = arrays.TORCH.ready(t)
    cread = arrays.CUPY.ready(c)
    p = fast._ready_plans[(i32, "max", 0)]
    out = torch.empty((), dtype=torch.int32, device="cuda")
    fn, blocks = p.choose(n)
    copy_src, copy_dst = big[:n].clone(), torch.empty(n, dtype=torch.int32, device="cuda")
    tt, ct = event_timer("torch"), event_timer("cupy")

    def launch():
        fast._launch(fn, blocks, out.data_ptr(), read[0], n, 4, 0, read[4], p.context)

    rows = {
        "copy (torch)": (lambda: copy_dst.copy_(copy_src), tt),
        "torch.amax(t)": (lambda: torch.amax(t), tt),
        "pyscan.reduce(t, max)": (lambda: pyscan.reduce(t, op="max"), tt),
        "pyscan.reduce(c, max)": (lambda: pyscan.reduce(c, op="max"), ct),
        "fast.ready(torch, read)": (lambda: fast.ready(arrays.TORCH, t, *read, "max"), tt),
        "fast.ready(cupy, read)": (lambda: fast.ready(arrays.CUPY, c, *cread, "max"), ct),
        "TORCH.ready + launch": (lambda: (arrays.TORCH.ready(t), launch()), tt),
        "TORCH.new + launch": (lambda: (arrays.TORCH.new(t, (), i32, 0, read[4]), launch()), tt),
        "CUPY.new + launch": (lambda: (arrays.CUPY.new(c, (), i32, 0, cread[4]), launch()), ct),
        "launch only": (launch, tt),
    }
    for label in ("interleaved (bench-like)", "interleaved again"):
        timed = {name: measure.Timed(call, timer) for name, (call, timer) in rows.items()}
        measure.measure_together(list(timed.values()))
        print(f"--- {label}: us per call (median of batches; calls per batch)")
        for name, row in timed.items():
            m = row.result()
            print(f"{name:<28}{1000 * m.ms:8.2f}  ({m.calls})", flush=True)
    print("--- hot loops (host us, best of 3 x 20000)")
    for name, (call, _) in rows.items():
        print(f"{name:<28}{us(call):8.2f}", flush=True)


if __name__ == "__main__":
    main()
