"""The C launcher against cuda.core.launch, A/B in one process: the same public calls timed in alternating rounds
with pyscan.runtime.loader's launcher switched (as PYSCAN_LAUNCH=cuda.core does at import).  CUDA events around
batches of back-to-back calls (pyscan.timing, as the bench times them), the median over the rounds, microseconds
per call.  Run on a GPU host: python pyscan_tools/lab/launch_ab.py"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyscan  # noqa: E402
from pyscan.runtime import loader  # noqa: E402
from pyscan.timing import event_timer  # noqa: E402

ROUNDS, CALLS = 15, 100


def main():
    import cupy
    import torch

    c_launch = loader._c_launch
    if c_launch is None:
        print("the C launcher is not built here")
        return 3
    for n in (1 << 10, 1 << 16, 1 << 20):
        t = torch.arange(n, dtype=torch.int32, device="cuda")
        c = cupy.arange(n, dtype=cupy.int32)
        rows = [("pyscan.scan(torch)", "torch", lambda t=t: pyscan.scan(t)),
                ("pyscan.reduce(torch)", "torch", lambda t=t: pyscan.reduce(t)),
                ("pyscan.scan(cupy)", "cupy", lambda c=c: pyscan.scan(c)),
                ("pyscan.reduce(cupy)", "cupy", lambda c=c: pyscan.reduce(c))]
        times = {(name, path): [] for name, _, _ in rows for path in ("C", "cuda.core")}
        timers = {library: event_timer(library) for library in ("torch", "cupy")}
        for _, _, fn in rows:
            for _ in range(3):
                fn()
        for r in range(ROUNDS):
            for path in (("C", "cuda.core") if r % 2 else ("cuda.core", "C")):
                loader._c_launch = c_launch if path == "C" else None
                for name, library, fn in rows:
                    times[(name, path)].append(timers[library].per_call_ms(fn, CALLS) * 1e3)
        loader._c_launch = c_launch
        for name, _, _ in rows:
            a, b = (statistics.median(times[(name, p)]) for p in ("C", "cuda.core"))
            print(f"n=2^{n.bit_length() - 1:<3}{name:<22} C {a:6.2f} us   cuda.core {b:6.2f} us   ratio {b / a:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
