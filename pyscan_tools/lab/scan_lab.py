"""Where does the decoupled look-back scan lose time against a copy?  Variants of the kernel's policy (Config
fields) and diagnostic builds side by side with copies (memcpy_dtod and copy kernels) and CUB's scan (torch.cumsum;
cupy.cumsum, also with its CUB accelerator), in interleaved rounds, at 2^k elements of one dtype.  Needs a GPU.
docs/decoupled_lookback_tuning.md has what it measured.

    python pyscan_tools/lab/scan_lab.py [--dtype int32] [--k 28] [--rounds 3] [--reps 20] [--variants default,nolookback]
    python pyscan_tools/lab/scan_lab.py --stats default     # also thread 0's clock64() cycles per phase, look-back counts
    python pyscan_tools/lab/scan_lab.py --once NAME          # one call of one variant (for ncu -k regex:decoupled_lookback)

"x memcpy" = memcpy time / time.  Diagnostics are the lab's own builds of the shipped kernel's loop (scan_tiles in
kernels/scan/decoupled_lookback.cu) with a probe (LAB_SOURCE below): "nolookback" skips the status and the
look-back (wrong results on purpose, not checked: the cost of the loads, block scan and stores alone), --stats
counts cycles per phase.  Every other variant is checked exactly on 2^24 + 5 elements and on the last 4096 elements
at 2^k, before and after its timed calls.  The switches of earlier rounds (pipeline depth, epochs off, L2 hints,
direct stores) are gone from the kernel: their variants cannot be built any more (their numbers are in the doc).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pyscan.basics import pycuda_context  # noqa: E402
from pyscan.runtime import driver  # noqa: E402
from pyscan.runtime.arrays import Call  # noqa: E402
from pyscan.scans import decoupled_lookback as dl  # noqa: E402
from pyscan.timing import median_ms  # noqa: E402

DTYPE = "int32"
SIZE = 4  # element size of the dtype being timed (--dtype): the CONFIG entry the variants override
SHIPPED = dl.CONFIG[SIZE]

# name -> Config field overrides on the current CONFIG entry, and (diagnostics) the lab build to use.
VARIANTS = {
    "default": {},
    "tile4096": {"vecs": 4, "min_blocks": 5},
    "tile8192_2sm": {"min_blocks": 2},
    "nolookback": {"lab": {"LAB_LOOK_BACK": 0, "LAB_STATS": 0}},
}
# For 64-bit types (--dtype int64 / float64).
VARIANTS_64 = {
    "default": {},
    "tile2048": {"vecs": 4, "min_blocks": 5},
    "nolookback": {"lab": {"LAB_LOOK_BACK": 0, "LAB_STATS": 0}},
}

# The lab's kernel: the shipped source with this appended.  scan_tiles is the shipped loop; the probe counts
# (thread 0) clock64() cycles per phase of an iteration and the look-back's windows and extra polls, into
# lab_stats[]: [0..4] phases (0 next index + barrier, 1 loads landed + block scan, 2 look-back, 3 barrier after
# it, 4 rescan + stores), [5] iterations, [6] windows read, [7] extra polls, [8] blocks.
LAB_SOURCE = r"""
#ifndef LAB_LOOK_BACK
#define LAB_LOOK_BACK 1
#endif
#ifndef LAB_STATS
#define LAB_STATS 1
#endif
__device__ unsigned long long lab_stats[16];

struct LabProbe {
    static constexpr bool look_back = LAB_LOOK_BACK;
    long long phases[5];
    long long last;
    unsigned long long iterations, windows, polls;
    __device__ LabProbe() : phases{0, 0, 0, 0, 0}, last(clock64()), iterations(0), windows(0), polls(0) {}
    __device__ void phase(int k) {
        if (LAB_STATS && threadIdx.x == 0) {
            const long long now = clock64();
            phases[k] += now - last;
            last = now;
        }
    }
    __device__ void window(int extra_polls) { ++windows; polls += extra_polls; }
    __device__ void iteration() { ++iterations; }
    __device__ void report() {
        if (!LAB_STATS || threadIdx.x != 0) return;
        for (int k = 0; k < 5; ++k) atomicAdd(&lab_stats[k], (unsigned long long)phases[k]);
        atomicAdd(&lab_stats[5], iterations);
        atomicAdd(&lab_stats[6], windows);
        atomicAdd(&lab_stats[7], polls);
        atomicAdd(&lab_stats[8], 1ull);
    }
};

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
    decoupled_lookback_lab(T* out, const T* in, long long n, int exclusive, unsigned long long* tile_counter,
                           unsigned long long* status, long long num_tiles, unsigned int epoch) {
    LabProbe probe;
    scan_tiles(out, in, n, exclusive, tile_counter, status, num_tiles, epoch, probe);
    probe.report();
}
"""

COPY_SOURCE = r"""
extern "C" __global__ void copy_v4(int4* __restrict__ out, const int4* __restrict__ in, long long n4) {
    // UNROLL independent 16-byte loads in flight per thread, then their stores; grid-stride
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (UNROLL - 1) * stride < n4; i += UNROLL * stride) {
        int4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = LOAD(in + i + u * stride);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) STORE(out + i + u * stride, v[u]);
    }
    for (; i < n4; i += stride) STORE(out + i, LOAD(in + i));
}
"""


def copy_kernel(streaming: bool, unroll: int):
    pycuda_context()  # SourceModule loads into pycuda's current context: the primary one, pyscan's
    from pycuda.compiler import SourceModule

    load, store = ("__ldcs", "__stcs") if streaming else ("__ldg", "PLAIN_STORE")
    src = "#define PLAIN_STORE(p, v) (*(p) = (v))\n" + COPY_SOURCE
    mod = SourceModule(src, no_extern_c=True, options=[f"-DLOAD={load}", f"-DSTORE={store}", f"-DUNROLL={unroll}"])
    fn = mod.get_function("copy_v4")
    fn.prepare("PPq")
    return mod, fn


def config_of(variant: dict):
    return dl.Config(**{**SHIPPED.as_dict(), **{k: v for k, v in variant.items() if k != "lab"}})


def build(variant: dict, dtype=None):
    """(kernel file, #defines) of the shipped build of a variant (its lab build adds LAB_SOURCE and its macros)."""
    from pyscan.types import defines as type_defines

    return (dl.KERNEL, {**config_of(variant).defines(), "VECTOR_LOADS": 1, **type_defines(dtype or DTYPE, "add")})


def _compile(b):
    """In a worker process: compile one build (pycuda's disk cache keeps it for the main process's get_kernel)."""
    from pyscan.basics import source_module

    source_module(b[0], **b[1])


_lab_kernels: dict = {}  # lab source -> (cuda.core ObjectCode, Kernel, lab_stats address, lab_stats bytes)


def lab_source(variant: dict, lab_defines: dict, dtype=None) -> str:
    """The lab build of a variant: the shipped kernel's source (its #defines included) with LAB_SOURCE appended."""
    from pyscan.runtime.loader import build_source

    kernel_file, defines = build(variant, dtype)
    macros = "".join(f"#define {k} {v}\n" for k, v in sorted(lab_defines.items()))
    return build_source(kernel_file, **defines) + macros + LAB_SOURCE


def lab_kernel(variant: dict, lab_defines: dict, device: int) -> tuple:
    """The lab build on `device`, compiled as the loader compiles a kernel file (pycuda's nvcc call, loaded by
    cuda.core): (ObjectCode, its decoupled_lookback_lab as a pyscan Kernel, address and bytes of lab_stats)."""
    from pycuda.compiler import compile as nvcc_compile

    from pyscan.runtime.loader import COMPILE_OPTIONS, Kernel

    source = lab_source(variant, lab_defines)
    found = _lab_kernels.get(source)
    if found is None:
        core, cu = driver.ready()
        image = nvcc_compile(source, options=list(COMPILE_OPTIONS), no_extern_c=True, arch=driver.architecture(device))
        module = core.ObjectCode.from_cubin(image)
        kernel = Kernel("decoupled_lookback_lab", module.get_kernel("decoupled_lookback_lab"), "PPqiPPqI")
        address, nbytes = driver._check(cu.cuLibraryGetGlobal(module.handle, b"lab_stats"), "cuLibraryGetGlobal")
        found = _lab_kernels[source] = (module, kernel, int(address), int(nbytes))
    return found


def use(variant: dict, call, lab_defines: dict | None = None):
    """Makes the driver launch this variant: its Config, and for a lab build the lab's kernel in place of the
    shipped one (same arguments) in the driver's plan for (DTYPE, add, aligned, the large tile) on the call's device;
    returns lab_kernel()'s tuple for a lab build, else None."""
    config = config_of(variant)
    dl.CONFIG[SIZE] = config
    dl._plans.clear()  # plans are made again, with CONFIG[SIZE]
    lab_defines = variant.get("lab") if lab_defines is None else lab_defines
    if lab_defines is None:
        return None
    lab = lab_kernel(variant, lab_defines, call.device)
    kernel = lab[1]
    shared = config.shared_bytes(True)
    if shared > 48 * 1024:
        kernel.set_max_dynamic_shared(shared)
    dl.plan(np.dtype(DTYPE), "add", True, False, call.device).kernel = kernel
    return lab


PHASES = ["next index + barrier", "loads landed + block scan", "look-back", "barrier after look-back",
          "rescan + stores"]


def stats(names, x, out, call):
    """Each variant once more as a lab build with the probe: thread 0's cycles per phase of an iteration, look-back
    counts."""
    for name in names:
        lab = {**VARIANTS[name].get("lab", {}), "LAB_STATS": 1}
        _, _, ptr, size = use(VARIANTS[name], call, lab)
        dl.decoupled_lookback_driver(x, out, op="add", exclusive=False, call=call)  # warm-up
        driver.memset32(ptr, 0, size // 4, call.stream)
        dl.decoupled_lookback_driver(x, out, op="add", exclusive=False, call=call)
        s = np.empty(size // 8, np.uint64)
        driver.copy_dtoh(s.ctypes.data, ptr, s.nbytes, call.stream)  # waits for the stream
        its, blocks = max(int(s[5]), 1), max(int(s[8]), 1)
        total = sum(int(v) for v in s[:5])
        print(f"stats {name}: {blocks} blocks, {its} iterations ({its / blocks:.1f} per block), "
              f"{int(s[6]) / its:.2f} windows and {int(s[7]) / its:.2f} extra polls per look-back; "
              f"cycles per iteration {total / its:.0f}:")
        for k, label in enumerate(PHASES):
            print(f"    {label:>28}: {int(s[k]) / its:8.0f} cycles ({100 * int(s[k]) / max(total, 1):5.1f} %)")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--k", type=int, default=28)
    p.add_argument("--dtype", default="int32", choices=["int32", "float32", "int64", "float64"])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--once")
    p.add_argument("--no-peers", action="store_true")
    p.add_argument("--stats", default="",
                   help="variants to run once more as lab builds counting cycles per phase (comma-separated)")
    p.add_argument("--variants", default=None, help="comma-separated (default: all of the dtype's size)")
    args = p.parse_args(argv)
    global SIZE, SHIPPED, DTYPE, VARIANTS
    DTYPE, SIZE = args.dtype, np.dtype(args.dtype).itemsize
    SHIPPED = dl.CONFIG[SIZE]
    if SIZE == 8:
        VARIANTS = VARIANTS_64
    args.variants = args.variants or ",".join(VARIANTS)
    drv = pycuda_context()  # the arrays are GPUArrays, the copies pycuda's (on the legacy default stream)
    import pycuda.gpuarray as ga

    call = Call.tool()  # the drivers' device and stream (the legacy default one)
    n = 1 << args.k
    rng = np.random.default_rng(args.k)
    dtype = np.dtype(args.dtype)
    lo, hi = (-1, 2) if dtype == np.float32 else (-100, 100)  # float32: every partial sum exact (< 2^24)
    host = rng.integers(lo, hi, n).astype(dtype)
    x = ga.to_gpu(host)
    out = ga.empty_like(x)

    def fast(x, out):
        dl.decoupled_lookback_driver(x, out, op="add", exclusive=False, call=call)

    if args.once:
        use(VARIANTS[args.once], call)
        fast(x, out)
        call.synchronize()
        return 0

    names = [v for v in args.variants.split(",") if v]
    import multiprocessing as mp

    with mp.get_context("spawn").Pool(14) as pool:
        pool.map(_compile, [build(VARIANTS[v]) for v in names if "lab" not in VARIANTS[v]], chunksize=1)

    m = (1 << 24) + 5
    ref_small = np.cumsum(host[:m], dtype=dtype)
    ref_tail = np.cumsum(host, dtype=dtype)[-4096:]
    status = {}
    for v in names:
        if VARIANTS[v].get("lab", {}).get("LAB_LOOK_BACK", 1) == 0:
            status[v] = "diagnostic"
            continue
        use(VARIANTS[v], call)
        fast(x[:m], out[:m])
        ok = np.array_equal(out[:m].get(), ref_small)
        fast(x, out)
        ok = ok and np.array_equal(out[-4096:].get(), ref_tail)
        status[v] = "ok" if ok else "WRONG"
        dl._plans.clear()

    calls = {"memcpy_dtod": lambda: drv.memcpy_dtod(out.gpudata, x.gpudata, x.nbytes)}
    keep = []
    for streaming in (False, True):
        for unroll in (1, 4):
            mod, fn = copy_kernel(streaming, unroll)
            keep.append(mod)
            grid = driver.multiprocessor_count(call.device) * 8
            calls[f"copy kernel {'cs' if streaming else 'plain'} x{unroll}"] = (
                lambda fn=fn, grid=grid: fn.prepared_call((grid, 1, 1), (256, 1, 1), out.gpudata, x.gpudata, x.nbytes // 16))
    tiles = -(-n // dl.tile_size(dtype))
    calls[f"memset of the status ({tiles} words)"] = lambda: drv.memset_d32_async(int(out.gpudata), 0, 2 * (2 + tiles))

    peers = {}
    if not args.no_peers:
        try:
            import torch

            xt = torch.from_numpy(host).cuda()
            yt = torch.empty_like(xt)
            ok = torch.equal(torch.cumsum(xt, 0, dtype=xt.dtype, out=yt)[-4096:].cpu(), torch.from_numpy(ref_tail))
            peers[f"torch.cumsum {dtype} (CUB)"] = (lambda: torch.cumsum(xt, 0, dtype=xt.dtype, out=yt), ok)
        except Exception as e:  # noqa: BLE001
            print(f"torch: {type(e).__name__}: {e}")
        try:
            import cupy as cp
            from cupy._core import _accelerator

            xc = cp.asarray(host)
            peers["cupy.cumsum"] = (lambda: cp.cumsum(xc), bool((cp.cumsum(xc)[-4096:].get() == ref_tail).all()))
            saved = _accelerator.get_routine_accelerators()

            def cub_cumsum():
                _accelerator.set_routine_accelerators(["cub"])
                try:
                    return cp.cumsum(xc)
                finally:
                    _accelerator.set_routine_accelerators(saved)

            peers["cupy.cumsum (CUB accelerator)"] = (cub_cumsum, bool((cub_cumsum()[-4096:].get() == ref_tail).all()))
        except Exception as e:  # noqa: BLE001
            print(f"cupy: {type(e).__name__}: {e}")

    for _ in range(300):
        calls["memcpy_dtod"]()
    times: dict = {}
    for r in range(args.rounds):
        order = ["memcpy_dtod"] + [c for c in calls if c != "memcpy_dtod"] + names + list(peers) + ["memcpy_dtod"]
        for name in order:
            if name in VARIANTS:
                use(VARIANTS[name], call)
                run = lambda: fast(x, out)  # noqa: E731
            elif name in peers:
                run = peers[name][0]
            else:
                run = calls[name]
            times.setdefault(name, []).append(median_ms(run, args.reps, warmup=2))
        print(f"round {r} done", flush=True)
    for v in names:  # again, after many calls (EPOCH: the epochs moved on)
        if status[v] == "ok":
            use(VARIANTS[v], call)
            fast(x, out)
            if not np.array_equal(out[-4096:].get(), ref_tail):
                status[v] = "WRONG after the timed calls"
    memcpy = statistics.median(times["memcpy_dtod"])
    print(f"\n{driver.device_attributes(call.device)['name']}: {dtype} n = 2^{args.k}; memcpy_dtod median {memcpy:.4f} ms "
          f"(0.90 x = {memcpy / 0.9:.4f} ms); medians over {args.rounds} rounds of {args.reps}-call medians")
    print(f"{'what':>40} {'ms':>8} {'min':>8} {'max':>8} {'x memcpy':>8}  check")
    for name, ts in times.items():
        med = statistics.median(ts)
        check = status.get(name) or (("ok" if peers[name][1] else "WRONG") if name in peers else "")
        label = f"{name} {VARIANTS[name]}" if name in VARIANTS and VARIANTS[name] else name
        print(f"{label[:40]:>40} {med:8.4f} {min(ts):8.4f} {max(ts):8.4f} {memcpy / med:8.3f}  {check}")
    if args.stats:
        stats(args.stats.split(","), x, out, call)
    return 0


if __name__ == "__main__":
    sys.exit(main())
