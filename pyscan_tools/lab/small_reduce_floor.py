"""Where the host time of a small pyscan.reduce goes, beside torch.sum's whole call: each part alone, the steps of
the ready path timed in place, and the launch with a CUkernel handle (cuda.core's) against the CUfunction handle
cuKernelGetFunction gives for the current context.  Host microseconds per call, best of 3 loops of REPS calls.
Run on a GPU host: python pyscan_tools/lab/small_reduce_floor.py"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyscan  # noqa: E402
from pyscan.reductions import fast  # noqa: E402
from pyscan.runtime import arrays, driver  # noqa: E402
from pyscan.runtime.loader import launch_raw  # noqa: E402
from pyscan_tools.lab.call_parts import us  # noqa: E402

REPS = 20000  # as call_parts.us


def in_place(t, op="add"):
    """The ready path's steps timed inside one loop (reduce's checks and ready, the result, the plan, the launch)."""
    clock = time.perf_counter
    total = [0.0] * 4
    kind = arrays.TORCH
    for _ in range(REPS):
        t0 = clock()
        address, n, dtype, device, stream = kind.ready(t)
        t1 = clock()
        default = fast.RESULTS.get((dtype, op))
        native, out = kind.new(t, (), default, device, stream)
        t2 = clock()
        p = fast._ready_plans.get((dtype, op, device))
        fn, blocks = p.choose(n)
        t3 = clock()
        fast._launch(fn, blocks, out, address, n, p.partial_size, device, stream, p.context)
        t4 = clock()
        for i, (a, b) in enumerate(((t0, t1), (t1, t2), (t2, t3), (t3, t4))):
            total[i] += b - a
    return [v / REPS * 1e6 for v in total]


def main():
    import torch

    driver.ready()
    for dtype in (torch.int32, torch.float32):
        for log2n in (10, 16):
            one_size(dtype, log2n)


def one_size(dtype, log2n):
    import cupy
    import torch
    from cuda.bindings import driver as cu

    n = 1 << log2n
    t = torch.arange(n, device="cuda").to(dtype)
    c = cupy.asarray(t)
    np_dtype = arrays.TORCH._to_numpy[dtype]
    pyscan.reduce(t), pyscan.reduce(c), pyscan.reduce(t, op="max")
    p = fast.plan(np_dtype, "add", 0)
    fn, blocks = p.choose(n)
    out = torch.empty((), dtype=torch.int64 if dtype == torch.int32 else dtype, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    geometry = fn.config(blocks, fast.FAST_BLOCK)
    err, function = cu.cuKernelGetFunction(cu.CUkernel(fn.function))
    function = int(function)
    kept = fast._workspace.get(fast.PARTIALS_OFFSET + blocks * p.partial_size, 0, stream)
    args = (out.data_ptr(), kept.address + 16, kept.address, t.data_ptr(), n) if blocks > 1 else (
        out.data_ptr(), 0, 0, t.data_ptr(), n)
    template, where = out, torch.device("cuda", 0)
    templates = {}

    def template_new(x, shape, dtype, device, stream):  # the 0-d result like a kept 0-d tensor of its dtype
        like = templates.get((dtype, device))
        if like is None:
            like = templates[(dtype, device)] = torch.empty((), dtype=arrays.TORCH._to_torch[dtype], device=where)
        native = torch.empty_like(like)
        return native, native.data_ptr()

    rows = [
        ("torch.sum(t)", lambda: torch.sum(t)),
        ("torch.amax(t)", lambda: torch.amax(t)),
        ("cupy.sum(c)", lambda: cupy.sum(c)),
        ("pyscan.reduce(t)", lambda: pyscan.reduce(t)),
        ("pyscan.reduce(c)", lambda: pyscan.reduce(c)),
        ("pyscan.reduce(t, op=max)", lambda: pyscan.reduce(t, op="max")),
        ("TORCH.ready(t)", lambda: arrays.TORCH.ready(t)),
        ("CUPY.ready(c)", lambda: arrays.CUPY.ready(c)),
        ("TORCH.new 0-d", lambda: arrays.TORCH.new(t, (), np_dtype, 0, stream)),
        ("CUPY.new 0-d", lambda: arrays.CUPY.new(c, (), np_dtype, 0, stream)),
        ("t.new_empty(())", lambda: t.new_empty(())),
        ("cupy.ndarray(())", lambda: cupy.ndarray((), np_dtype)),
        ("launch_typed (CUkernel)", lambda: fn.launch_typed(p.context, stream, geometry, *args)),
        ("launch_raw (CUkernel)", lambda: launch_raw(p.context, fn.function, stream, geometry, fn.arg_types,
                                                   *args)),
        ("launch_raw (CUfunction)", lambda: launch_raw(p.context, function, stream, geometry, fn.arg_types,
                                                     *args)),
        ("launch_raw (CUfunction, ctx 0)", lambda: launch_raw(0, function, stream, geometry, fn.arg_types,
                                                            *args)),
        ("driver._capturing(stream)", lambda: driver._capturing(stream)),
        ("workspace.get", lambda: fast._workspace.get(16 + blocks * p.partial_size, 0, stream)),
        ("p.choose(n)", lambda: p.choose(n)),
        ("python call baseline", lambda: None),
        ("torch.empty_like(template)", lambda: torch.empty_like(template)),
        ("template.new_empty(())", lambda: template.new_empty(())),
        ("torch.empty((), dtype, device)", lambda: torch.empty((), dtype=template.dtype, device=where)),
        ("pyscan.reduce(t), templated new", lambda: pyscan.reduce(t)),
        ("pyscan.reduce(t), again as shipped", lambda: pyscan.reduce(t)),
    ]
    print(f"--- {dtype} n=2^{log2n}: blocks {blocks}")
    for name, f in rows:
        if name.endswith("templated new"):
            arrays.TORCH.new = template_new
        value = us(f)
        vars(arrays.TORCH).pop("new", None)
        torch.cuda.synchronize()
        print(f"{name:<36}{value:8.2f} us", flush=True)
    steps = in_place(t)
    torch.cuda.synchronize()
    print("in place: ready %.2f  new %.2f  plan %.2f  launch %.2f  (sum %.2f)" % (*steps, sum(steps)))


if __name__ == "__main__":
    main()
