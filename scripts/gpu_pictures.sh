#!/usr/bin/env bash
# Every GPU picture of the chapter guides (docs/*.md) in one command, on the GPU host:
#
#   bash scripts/gpu_pictures.sh
#
# writes $OUT/docs_images.tar (docs_images/*.png, named as docs/images/ expects them) and $OUT/gpu_pictures.log
# (the demos' and charts' output, then the GPU tests of the same pictures).  $OUT defaults to ./gpu-out.
# Set GPU_PICTURES_QUICK=1 for a short run (fewer race runs, scan end to end up to 256 MB).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-out}; mkdir -p "$out"
# GPU_PICTURES_NO_INSTALL=1: use the Python already set up (without pycuda the demos draw their NumPy models and
# say so; the timed charts refuse): a smoke test of this script without a GPU.
if [ -f .gpu-host/install.sh ] && [ "${GPU_PICTURES_NO_INSTALL:-0}" != 1 ]; then
  bash .gpu-host/install.sh /tmp/site >/dev/null || { echo "installing the pycuda kit failed" >&2; exit 1; }
fi
export PYTHONPATH=/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 MPLBACKEND=Agg
work=$(mktemp -d); pics=$work/docs_images; mkdir -p "$pics"
runs=300; max_mb=2048
if [ "${GPU_PICTURES_QUICK:-0}" = 1 ]; then runs=50; max_mb=256; fi
failed=$work/failed
step() { echo; echo "=== $*"; local t=$SECONDS; "$@" || { echo "FAILED ($?): $*"; echo "$*" >> "$failed"; }; echo "--- $((SECONDS - t)) s"; }
{
  python3 -m pyscan info 2>&1 | head -12
  step python3 demos/races.py --runs "$runs" --save "$pics/races_gpu.png"
  step python3 demos/reduction_steps.py --save "$work/reduction"
  for f in reduction_trees reduction_activity; do
    [ -f "$work/reduction/$f.png" ] && cp "$work/reduction/$f.png" "$pics/${f}_gpu.png"
  done
  step python3 demos/multiblock_scan.py --save "$pics/multiblock_scan_gpu.png"
  step python3 demos/scan_steps.py --save "$pics/scan_steps_gpu.png"
  step python3 scripts/gpu_charts.py contention --save "$pics/histogram_contention_gpu.png"
  step python3 scripts/gpu_charts.py end_to_end --max-mb "$max_mb" --save "$pics/scan_end_to_end_gpu.png"
  step python3 scripts/gpu_charts.py life --save "$pics/life_one_block_gpu.png"
  step python3 scripts/books_numbers.py
  step python3 -m pytest -q -rs -p no:cacheprovider tests/unit/test_races.py tests/gpu/test_races_gpu.py \
       tests/unit/test_reduction_steps.py tests/gpu/test_reduction_steps_gpu.py tests/unit/test_multiblock_scan.py \
       tests/gpu/test_multiblock_scan_gpu.py tests/unit/test_books_numbers.py tests/unit/test_gpu_charts.py \
       tests/gpu/test_gpu_charts_gpu.py
  echo; echo "pictures:"; ls -l "$pics"
} 2>&1 | tee "$out/gpu_pictures.log"
tar -cf "$out/docs_images.tar" -C "$work" docs_images && echo "wrote $out/docs_images.tar" | tee -a "$out/gpu_pictures.log"
if [ -s "$failed" ]; then echo "failed steps:"; cat "$failed"; exit 1; fi
