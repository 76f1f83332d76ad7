"""Host time of the ready pyscan.histogram call (an int bins and a range, 1-D device data) of another checkout
against this one's, in one process: the other checkout's pyscan/histograms/numpy_histogram.py is loaded beside this
one's as a second module (its registry entries left out) and the two are called in alternating batches, so the
host's drift falls on both alike (docs/histogram.md, "The ready call's host time";
benchmarks/histogram_ready_host_ab_h200.txt).  Needs a GPU, CuPy and torch.

    python pyscan_tools/lab/histogram_ready_ab.py OTHER_CHECKOUT

Per case, CuPy and torch arrays: µs a call by CUDA events around 50 back-to-back calls, and host µs a call of 50
calls without the final wait, each the median of 15 alternating batches; both modules' counts checked against
np.histogram first.  The other module uses this checkout's numpy_plan, so only the call's own code differs.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pyscan.histograms import numpy_histogram  # noqa: E402
from pyscan.timing import event_timer  # noqa: E402

CASES = ((np.float32, 100, 100), (np.uint8, 256, 256), (np.int32, 4096, 4096))  # dtype, bins, range's top


def other_module(checkout: str):
    """The other checkout's numpy_histogram.py as module pyscan.histograms._other_numpy_histogram."""
    source = (Path(checkout) / "pyscan/histograms/numpy_histogram.py").read_text()
    source = source[:source.index("KERNELS = (")]  # the registry entries: this checkout's are registered
    spec = importlib.util.spec_from_loader("pyscan.histograms._other_numpy_histogram", loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "pyscan.histograms"
    exec(compile(source, f"{checkout}/pyscan/histograms/numpy_histogram.py", "exec"), module.__dict__)  # noqa: S102
    return module


def main(checkout: str) -> None:
    import cupy
    import torch

    modules = {"other": other_module(checkout), "this": numpy_histogram}
    rng = np.random.default_rng(1)

    def wait():
        torch.cuda.synchronize()
        cupy.cuda.Device().synchronize()

    for size in (2**10, 2**20):
        for dtype, bins, top in CASES:
            host = (rng.random(size) * top).astype(dtype)
            expected = np.histogram(host, bins, (0, top))[0]
            for kind, x in (("cupy", cupy.asarray(host)), ("torch", torch.as_tensor(host, device="cuda"))):
                timer = event_timer(kind)
                calls = {tag: (lambda m=m, x=x, bins=bins, top=top: m.histogram(x, bins, range=(0, top)))
                         for tag, m in modules.items()}
                times = {tag: ([], []) for tag in calls}
                for tag, call in calls.items():
                    for _ in range(3):
                        hist = call()[0]
                    got = cupy.asnumpy(hist) if kind == "cupy" else hist.cpu().numpy()
                    assert np.array_equal(got, expected), (tag, kind, size)
                for _ in range(15):
                    for tag, call in calls.items():
                        times[tag][0].append(1e3 * timer.per_call_ms(call, 50))
                        wait()
                        start = time.perf_counter()
                        for _ in range(50):
                            call()
                        times[tag][1].append(1e6 * (time.perf_counter() - start) / 50)
                        wait()
                print(f"{kind:5s} {np.dtype(dtype).name:7s} {bins:4d} bins 2^{size.bit_length() - 1}: " + "  ".join(
                    f"{tag} {statistics.median(events):.2f} us (events), host {statistics.median(hosts):.2f}"
                    for tag, (events, hosts) in times.items()), flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
