"""The steps of pyscan.scan and pyscan.reduce timed inside one loop of back-to-back calls (each step's share of the
host time, measured in place rather than alone).  Run on a GPU host: python pyscan_tools/lab/call_steps.py"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyscan  # noqa: E402
from pyscan.reductions import fast  # noqa: E402
from pyscan.runtime import arrays  # noqa: E402
from pyscan.scans import decoupled_lookback as dl  # noqa: E402
from pyscan.types import ELEMENT_TYPES  # noqa: E402

N = 20000


def steps(x, reduce):
    clock = time.perf_counter
    total = [0.0] * 5
    for _ in range(N + 500):
        t0 = clock()
        call = arrays.begin(x, what="x", dtypes=ELEMENT_TYPES)
        t1 = clock()
        call.__enter__()
        t2 = clock()
        out = call.empty((), call.dtype) if reduce else call.result(call.shape, call.dtype)
        t3 = clock()
        if reduce:
            fast.launch_into(out.gpudata, call.x.gpudata, call.size, call.dtype, "add", call.device, call.stream)
        else:
            dl.launch(out.gpudata, call.x.gpudata, call.size, call.dtype, "add", False, call.device, call.stream)
        t4 = clock()
        call.finish_scalar(out) if reduce else call.finish(out)
        call.__exit__(None, None, None)
        t5 = clock()
        for i, (a, b) in enumerate(((t0, t1), (t1, t2), (t2, t3), (t3, t4), (t4, t5))):
            total[i] += b - a
    return [v / (N + 500) * 1e6 for v in total]


def whole(fn, x):
    for _ in range(500):
        fn(x)
    t0 = time.perf_counter()
    for _ in range(N):
        fn(x)
    return (time.perf_counter() - t0) / N * 1e6


def main():
    import cupy
    import torch

    for name, x in (("torch", torch.arange(1024, dtype=torch.int32, device="cuda")),
                    ("cupy", cupy.arange(1024, dtype=cupy.int32))):
        for reduce in (False, True):
            parts = steps(x, reduce)
            fn = pyscan.reduce if reduce else pyscan.scan
            label = "reduce" if reduce else "scan"
            print(f"{name} {label}: begin {parts[0]:.2f}, enter {parts[1]:.2f}, result {parts[2]:.2f}, launch "
                  f"{parts[3]:.2f}, finish+exit {parts[4]:.2f}; sum {sum(parts):.2f}; whole call {whole(fn, x):.2f} us")
            torch.cuda.synchronize()
    t = torch.arange(1024, dtype=torch.int32, device="cuda")
    print(f"torch.cumsum {whole(lambda a: torch.cumsum(a, 0), t):.2f} us, torch.sum {whole(torch.sum, t):.2f} us")


if __name__ == "__main__" and "--bench-like" not in sys.argv:
    main()


def bench_like():
    """The bench's own timing (CUDA events around a batch, the median of 7) for the same calls, in batches of 80 and
    of 2000, garbage collector on and off, beside the host's own time to issue the batch (perf_counter before the
    end event): whether a call is host- or device-bound at the bench's batch size."""
    import gc
    import statistics

    import cupy
    import torch

    from pyscan.timing import event_timer

    c = cupy.arange(1 << 16, dtype=cupy.int32)
    t = torch.arange(1 << 16, dtype=torch.int32, device="cuda")
    rows = (("pyscan.reduce(cupy)", "cupy", lambda: pyscan.reduce(c)), ("pyscan.scan(cupy)", "cupy", lambda: pyscan.scan(c)),
            ("pyscan.reduce(torch)", "torch", lambda: pyscan.reduce(t)), ("torch.sum", "torch", lambda: torch.sum(t)),
            ("torch.amax", "torch", lambda: torch.amax(t)), ("cupy.sum", "cupy", lambda: c.sum()))
    for name, library, fn in rows:
        timer = event_timer(library)
        for calls in (80, 2000):
            for label, setup in (("gc on", gc.enable), ("gc off", gc.disable)):
                setup()
                for _ in range(3):
                    fn()
                events, host = [], []
                for _ in range(7):
                    timer.start.record()
                    t0 = time.perf_counter()
                    for _ in range(calls):
                        fn()
                    host.append((time.perf_counter() - t0) / calls * 1e6)
                    timer.end.record()
                    timer.end.synchronize()
                    events.append(timer.elapsed(timer.start, timer.end) / calls * 1e3)
                gc.enable()
                print(f"{name:<22}{calls:>5} calls {label:<7} events {statistics.median(events):6.2f} us, host "
                      f"{statistics.median(host):6.2f} us", flush=True)


if __name__ == "__main__" and "--bench-like" in sys.argv:
    bench_like()
