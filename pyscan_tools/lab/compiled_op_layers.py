"""Lab: where a compiled function's time goes when it calls pyscan's torch operators (docs/runtime.md, "torch").

Host microseconds a call, 2^16 float32 on the GPU: a torch.compile(fullgraph=True) function of pyscan.scan and
pyscan.reduce; torch.ops.pyscan.scan / reduce through the dispatcher (torch.library's Python autograd layer, its
redispatch, the CUDA kernel function); the same under torch.inference_mode() (no autograd key); the operator's CUDA
kernel function alone; the eager pyscan.scan.  Then cProfile of the compiled function, by cumulative and own time.

    python pyscan_tools/lab/compiled_op_layers.py
"""
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402

import pyscan  # noqa: E402
from pyscan import torch_ops as T  # noqa: E402


def f(x):
    return pyscan.scan(x) * 2 + pyscan.reduce(x, op="max")


def per_call_us(fn, n=400):
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / n * 1e6


def main():
    cf = torch.compile(f, fullgraph=True, dynamic=False)
    x = torch.randn(65536, device="cuda")
    for _ in range(10):
        cf(x)
    print("compiled f", per_call_us(lambda: cf(x)))
    print("op scan .default", per_call_us(lambda: T.scan_op(x, None, "add", False, None)))
    print("op reduce .default", per_call_us(lambda: torch.ops.pyscan.reduce.default(x, None, False, "max", None)))
    print("_scan_cuda direct", per_call_us(lambda: T._scan_cuda(x, None, "add", False, None)))
    print("pyscan.scan eager", per_call_us(lambda: pyscan.scan(x)))
    with torch.inference_mode():
        print("op scan .default inference_mode", per_call_us(lambda: T.scan_op(x, None, "add", False, None)))
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(400):
        cf(x)
    torch.cuda.synchronize()
    profiler.disable()
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    pstats.Stats(profiler).sort_stats("tottime").print_stats(20)


if __name__ == "__main__":
    main()
