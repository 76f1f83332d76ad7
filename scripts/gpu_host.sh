#!/usr/bin/env bash
# Runs on the GPU host (see README "Tests"): install the pycuda kit, then one stage of the GPU evidence.
#   bash scripts/gpu_host.sh STAGE...   (STAGE: tests ptests full suite gpu leaks slow demos bench axis sanitize histogram graphs segments)   (logs and pictures under $OUT, or ./gpu-out)
#   SHARD=I/N bash scripts/gpu_host.sh suite   (shard I of N of the whole suite, -n 16; thirds took 250-430 s a call at -n 12-14 on H100 hosts, so N = 4 leaves room under a 600 s call)
#   SHARD=I/N bash scripts/gpu_host.sh gpu     (shard I of N, 0 <= I < N, of tests/gpu alone, -n 16: CPU tests are CI's; on one H200 tests/gpu took about 590 s of pytest time in four pieces, the whole suite about 1,100; on one H100, halves reached 96 % in 474-535 s: take N >= 3)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-out}; mkdir -p "$out"
# pycuda: the kit in .gpu-host/ where there is one (a host without network), else the pycuda already installed
if [ -f .gpu-host/install.sh ]; then
  bash .gpu-host/install.sh /tmp/site >/dev/null || exit 1
  # the bench's cuda.compute peer (cuda-cccl), where the kit carries it
  if ls .gpu-host/peers/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu-host/peers/*.whl
  fi
elif ! python3 -c "import pycuda" 2>/dev/null; then
  echo "gpu_host.sh: no .gpu-host/ kit and no pycuda installed: pip install -e \".[gpu,test]\" first (README)" >&2
  exit 3
fi
# optional wheels carried in .whl/ (pytest-xdist for the parallel stage)
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
fi
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 MPLBACKEND=Agg
# the kernel launcher (a C extension): without it every GPU test skips
python3 setup.py -q build_ext --inplace > "$out/build_ext.log" 2>&1 || { tail -20 "$out/build_ext.log"; exit 1; }
# pycuda's compile cache carried between device calls (each call starts a fresh machine): .kcache/kcache.tar.xz
# (ignored by git; carry it) is unpacked into PYCUDA_CACHE_DIR, and the cache goes back out as $out/kcache.tar.xz
# (a few MB) for the next call.  Each test's time is logged as it ends (tests/conftest.py) under $out/durations.
export PYCUDA_CACHE_DIR=${PYCUDA_CACHE_DIR:-/tmp/pycuda-cache} PYSCAN_TEST_DURATIONS=$out/durations
mkdir -p "$PYCUDA_CACHE_DIR" "$PYSCAN_TEST_DURATIONS"
[ -f .kcache/kcache.tar.xz ] && tar -xJf .kcache/kcache.tar.xz -C "$PYCUDA_CACHE_DIR"
trap 'tar -cf - -C "$PYCUDA_CACHE_DIR" . | xz -T0 -3 > "$out/kcache.tar.xz"; cat "$PYSCAN_TEST_DURATIONS"/*.txt 2>/dev/null | sort -rn | head -300 > "$out/slowest_tests.txt"; cat "$PYSCAN_TEST_DURATIONS"/*.txt 2>/dev/null | grep " failed " > "$out/failed_tests.txt"; rm -rf "$PYSCAN_TEST_DURATIONS"' EXIT
# PYTEST_LIMIT=S: the suite and gpu stages' pytest is interrupted after S seconds (SIGINT), so that a shard cut short
# by the device call's limit still prints its summary line (what passed and failed by then) and hands back the cache
limit=""; [ -n "${PYTEST_LIMIT:-}" ] && limit="timeout -s INT $PYTEST_LIMIT"
for stage in "$@"; do
  case $stage in
    tests)    python3 -m pyscan info > "$out/info.txt" 2>&1
              python3 -m pytest -q -rs -m "not slow" 2>&1 | tee "$out/pytest.log" | tail -40 ;;
    ptests)   python3 -m pyscan info > "$out/info.txt" 2>&1      # parallel: warms the kernel cache fast
              python3 -m pytest -q -rfEs -n 12 -m "not slow" 2>&1 | tee "$out/pytest_parallel.log" | tail -60 ;;
    full)     python3 -m pytest -q -rs 2>&1 | tee "$out/pytest_full.log" | tail -40 ;;
    suite)    $limit python3 -m pytest -q -rfEs -n 16 --shard "${SHARD:-0/1}" 2>&1 | gzip > "$out/pytest_suite.log.gz"
              gzip -dc "$out/pytest_suite.log.gz" | tail -30 ;;
    gpu)      $limit python3 -m pytest -q -rfEs -n 16 --shard "${SHARD:-0/1}" tests/gpu --ignore tests/gpu/test_leaks.py 2>&1 \
                | gzip > "$out/pytest_gpu.log.gz"
              gzip -dc "$out/pytest_gpu.log.gz" | tail -30 ;;
    leaks)    python3 -m pytest -q -rs tests/gpu/test_leaks.py 2>&1 | tee "$out/pytest_leaks.log" | tail -20 ;;  # alone: device-wide free memory
    slow)     python3 -m pytest -q -rs -s -m slow 2>&1 | tee "$out/pytest_slow.log" | tail -30 ;;
    demos)    { python3 demos/scalar_multiply.py
                python3 demos/prefix_scan.py --size 16777216
                python3 demos/reduction.py
                python3 demos/histogram.py --save "$out/histogram.png"
                python3 demos/histogram.py --compare --no-chart
                python3 demos/game_of_life.py --save "$out/life.gif" --generations 60
                python3 demos/game_of_life.py --iterative --save /tmp/life_iterative.png
                python3 demos/scan_steps.py --save "$out/scan_steps.png"
                python3 demos/work_efficiency.py --save "$out/work_efficiency.png"; } 2>&1 | tee "$out/demos.log" | tail -120 ;;
    bench)    python3 -m pyscan bench all --json "$out/bench.json" --plot "$out/bench.png" 2>"$out/bench_progress.log" \
                | tee "$out/bench.txt" | tail -80 ;;
    axis)     python3 -m pyscan bench axis_scan axis_reduce --json "$out/bench_axis.json" --plot "$out/bench_axis.png" \
                2>"$out/bench_axis_progress.log" | tee "$out/bench_axis.txt" | tail -200 ;;
    sanitize) python3 -m pyscan check --sanitize 2>&1 | tee "$out/sanitize.log" | tail -30 ;;
    histogram) { python3 pyscan_tools/lab/histogram_call_profile.py
                 python3 pyscan_tools/lab/histogram_aggregation.py --size 2^26 --rounds 3 --calls 10
                 python3 -m pyscan bench numpy_histogram bincount --no-driver --json "$out/bench_histogram.json" \
                   2>"$out/bench_histogram_progress.log"; } 2>&1 | tee "$out/histogram.log" | tail -120 ;;
    graphs)   { python3 -m pytest -q -rs -p no:cacheprovider tests/gpu/test_graphs_gpu.py
                python3 pyscan_tools/lab/graph_replay_vs_torch.py
                python3 pyscan_tools/lab/time_public_calls.py; } 2>&1 | tee "$out/graphs.log" | tail -120 ;;
    segments) { python3 -m pytest -q -rs tests/gpu/test_segments_gpu.py tests/unit/test_segments.py
                python3 -m pyscan check segmented_scan segmented_reduce --sanitize
                python3 -m pyscan bench segmented_reduce segmented_scan --no-driver --json "$out/bench_segments.json" \
                  2>"$out/bench_segments_progress.log"; } 2>&1 | tee "$out/segments.log" | tail -150 ;;
  esac
done
