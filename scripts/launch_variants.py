"""Lab: the host time of pyscan's C launch (pyscan/launch.c) built four ways: the arguments through cuLaunchKernel's
`extra` (one packed buffer) or its kernelParams (a pointer per argument), and the GIL released around the call or
kept.  Each row: the best of 30 batches of 200 launches of the one-tile scan kernel (fewer than the launch queue
holds), timed on the host before a synchronize.  scripts/launch_floor.cu gives the same launches from C alone.

    python3 scripts/launch_variants.py        (on a GPU host, with torch for the arrays)
"""
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import pyscan  # noqa: E402
from pyscan import cuda, native  # noqa: E402
from pyscan.scans import decoupled_lookback as dl  # noqa: E402

x = torch.arange(1024, device="cuda", dtype=torch.int32)
out = torch.empty_like(x)
pyscan.scan(x)
fn, shared = dl._kernel(np.dtype(np.int32), "add", True)
args = (out.data_ptr(), x.data_ptr(), 1024, 0, 0, 0, 1, 0)
types = fn.arg_types.encode()


def per_launch_us(launch) -> float:
    best = float("inf")
    for _ in range(30):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(200):
            launch(fn.handle, (1, 1, 1), (256, 1, 1), shared, 0, types, *args)
        best = min(best, (time.perf_counter() - start) / 200 * 1e6)
    torch.cuda.synchronize()
    return best


with tempfile.TemporaryDirectory() as where:
    for extra in (1, 0):
        for release in (1, 0):
            target = Path(where) / f"launch_{extra}{release}.so"
            command = native.compiler() + ["-O2", "-shared", "-fPIC", "-std=c11", f"-DLAUNCH_WITH_EXTRA={extra}",
                                           f"-DLAUNCH_RELEASES_GIL={release}", "-I",
                                           __import__("sysconfig").get_paths()["include"], str(native.SOURCE), "-o",
                                           str(target)]
            __import__("subprocess").run(command, check=True)
            module = native.load(target)
            native.bind(module, cuda.raw_lib())
            label = f"{'extra (packed buffer)' if extra else 'kernelParams'}, GIL {'released' if release else 'kept'}"
            assert module.launch(fn.handle, (1, 1, 1), (256, 1, 1), shared, 0, types, *args) == 0
            print(f"{label:40s} {per_launch_us(module.launch):6.2f} us", flush=True)
torch.cuda.synchronize()
expected = np.cumsum(np.arange(1024, dtype=np.int32), dtype=np.int32)
assert np.array_equal(out.cpu().numpy(), expected), "the launches did not scan"
print("results: ok")
