"""Stress: the single-kernel scans run many times on grids far larger than the GPU holds at
once, every result checked, and the hierarchical scan on 2^30 int32 elements.

* `single_pass` (PMPP §11.7, the domino hand-off of block sums) and `decoupled_lookback` are the scans whose
  correctness depends on inter-block communication through global memory: flags, __threadfence, a dynamic block
  index.  A missing fence or a stale flag shows up as a rare wrong element or a hang, so each runs RUNS times
  on lengths between 2^22 and 2^24 (thousands of blocks, many more than are resident at once), with new data
  every run.  To check 1000 results in seconds, every check is on the device: run k scans
  x_k = a_k * x0 + c_k (a_k odd, c_k random, int32 arithmetic modulo 2^32), whose inclusive sum scan is
  a_k * S0 + c_k * (i + 1) modulo 2^32 (scan is linear over the ring Z/2^32), with S0 = np.cumsum(x0) computed
  once by NumPy; one ElementwiseKernel makes x_k, one ReductionKernel counts the elements that differ.  Every
  element of every result is checked.  The first and last runs are also checked on the host against NumPy.  The
  scans ask for dtype=np.int32 (the default result of int32 add is NumPy's int64; the ring is Z/2^32).
* The hierarchical scan at 2^30 int32 elements (4 GiB in, 4 GiB out, dtype=np.int32) is checked exactly against
  np.cumsum(dtype=int32) (wrapping) on the host.  It is skipped, with the reason, if the device or the host
  has too little free memory.

Run with -s to see the figures (runs, seconds, Gelem/s).
"""

import time

import numpy as np
import pytest

import pyscan

pytestmark = pytest.mark.slow

RUNS = 1000
MIN_N, MAX_N = 2**22, 2**24
STRESSED = ("single_pass", "decoupled_lookback")


@pytest.fixture(scope="module")
def device_kit():
    from pycuda.elementwise import ElementwiseKernel
    from pycuda.reduction import ReductionKernel

    from pyscan.basics import pycuda_context

    pycuda_context()
    # (pycuda's reduction kernel has its own parameter `out` and macro parameters `a`, `b`: other names here)
    make = ElementwiseKernel(
        "int *x, const int *x0, unsigned int mul, unsigned int add",
        "x[i] = (int)((unsigned int)x0[i] * mul + add)",
        "pyscan_stress_make")
    count_bad = ReductionKernel(
        np.int64, neutral="0", reduce_expr="a+b",
        map_expr="(long long)((unsigned int)res[i] != (unsigned int)s0[i] * mul + add * (unsigned int)(i + 1))",
        arguments="const int *res, const int *s0, unsigned int mul, unsigned int add",
        name="pyscan_stress_count")
    return make, count_bad


def _registered(name):
    if name not in pyscan.SCAN_ALGORITHMS:
        pytest.skip(f"scan algorithm {name!r} is not registered (have: {', '.join(pyscan.SCAN_ALGORITHMS)})")


@pytest.mark.parametrize("algorithm", STRESSED)
def test_repeated_scans_on_many_blocks(algorithm, device_kit):
    import pycuda.driver as drv
    import pycuda.gpuarray as ga

    _registered(algorithm)
    make, count_bad = device_kit
    rng = np.random.default_rng(20240811 + len(algorithm))
    x0 = rng.integers(-2**31, 2**31, MAX_N, dtype=np.int32)
    s0 = np.cumsum(x0, dtype=np.int32)
    x0_dev, s0_dev = ga.to_gpu(x0), ga.to_gpu(s0)
    x_dev = ga.empty(MAX_N, np.int32)
    lengths = rng.integers(MIN_N, MAX_N + 1, RUNS)
    lengths[0], lengths[-1] = MAX_N, MIN_N + 12345  # the largest, and an odd one
    a_s = (rng.integers(0, 2**31, RUNS, dtype=np.uint64) * 2 + 1).astype(np.uint32)  # odd: a bijection
    c_s = rng.integers(0, 2**32, RUNS, dtype=np.uint64).astype(np.uint32)
    a_s[0], c_s[0] = 1, 0  # run 0 scans x0 itself
    bad_runs = []
    elements = 0
    scan_seconds = 0.0
    start_all = time.perf_counter()
    for k in range(RUNS):
        n, a, c = int(lengths[k]), a_s[k], c_s[k]
        x = x_dev[:n]
        make(x, x0_dev[:n], a, c)
        t0 = time.perf_counter()
        out = pyscan.scan(x, algorithm=algorithm, dtype=np.int32)  # in Z/2^32, as the device check
        drv.Context.synchronize()
        scan_seconds += time.perf_counter() - t0
        bad = int(count_bad(out, s0_dev[:n], a, c).get())
        elements += n
        if bad:
            bad_runs.append((k, n, bad))
        if k in (0, RUNS - 1):  # an independent host check of the device check
            host_x = x.get()
            np.testing.assert_array_equal(out.get(), np.cumsum(host_x, dtype=np.int32),
                                          err_msg=f"{algorithm} run {k} n={n}")
        del out
    total = time.perf_counter() - start_all
    from pyscan.runtime import driver as rt

    print(f"\nstress {algorithm}: {RUNS} runs, n = {MIN_N}..{MAX_N} int32 (>= {MIN_N // 4096} blocks even at 4096 "
          f"elements a block, on {rt.multiprocessor_count(0)} SMs), "
          f"{elements / 1e9:.2f} G elements checked on the device, {len(bad_runs)} bad runs; "
          f"{total:.1f} s in all, scans {scan_seconds:.2f} s ({elements / scan_seconds / 1e9:.1f} Gelem/s incl. "
          f"launch overhead)")
    assert not bad_runs, f"{algorithm}: {len(bad_runs)} of {RUNS} runs wrong (run, n, wrong elements): {bad_runs[:10]}"


def _host_available_bytes():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def test_hierarchical_scan_at_2_to_the_30():
    import pycuda.driver as drv
    import pycuda.gpuarray as ga

    from pyscan.basics import pycuda_context
    from pyscan.runtime import driver as rt

    _registered("hierarchical")
    n = 2**30
    pycuda_context()
    rt.trim()
    free, total = drv.mem_get_info()
    need_device = 2 * 4 * n + 256 * 2**20  # in, out, block sums and slack
    if free < need_device:
        pytest.skip(f"needs {need_device / 2**30:.1f} GiB free on the device, has {free / 2**30:.1f} GiB")
    host = _host_available_bytes()
    need_host = 3 * 4 * n + 2**30  # x, the reference, the result
    if host is not None and host < need_host:
        pytest.skip(f"needs {need_host / 2**30:.1f} GiB of host memory, has {host / 2**30:.1f} GiB")
    rng = np.random.default_rng(30)
    t0 = time.perf_counter()
    x = rng.integers(-2**31, 2**31, n, dtype=np.int32)  # the sums wrap many times
    x_dev = ga.to_gpu(x)
    t1 = time.perf_counter()
    out_dev = pyscan.scan(x_dev, algorithm="hierarchical", dtype=np.int32)  # warm-up (compiles), then timed
    del out_dev
    start, end = drv.Event(), drv.Event()
    start.record()
    out_dev = pyscan.scan(x_dev, algorithm="hierarchical", dtype=np.int32)
    end.record()
    end.synchronize()
    gpu_ms = start.time_till(end)
    del x_dev
    out = out_dev.get()
    del out_dev
    rt.trim()
    t2 = time.perf_counter()
    want = np.cumsum(x, dtype=np.int32)
    t3 = time.perf_counter()
    wrong = np.flatnonzero(out != want)
    print(f"\nhierarchical scan of 2^30 int32: {gpu_ms:.1f} ms on the device ({n / gpu_ms / 1e6:.1f} Gelem/s); "
          f"data + upload {t1 - t0:.1f} s, scans + download {t2 - t1:.1f} s, np.cumsum {t3 - t2:.1f} s; "
          f"{wrong.size} wrong elements")
    assert wrong.size == 0, f"{wrong.size} wrong elements, first at {wrong[0]}: got {out[wrong[0]]}, want {want[wrong[0]]}"
    # a spot check of the wrap-around itself: the exact (int64) sum, taken modulo 2^32, is what came back
    exact = int(x.astype(np.int64).sum())
    assert int(out[-1]) == (exact + 2**31) % 2**32 - 2**31
