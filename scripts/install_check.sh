#!/usr/bin/env bash
# The README's set-up, as written, on a GPU box without network: a fresh virtual environment (seeing the system's
# numpy, matplotlib, pytest, CuPy, torch), then
#     pip install -e ".[gpu,test]"        with --no-index --find-links for the carried files
#     python demos/game_of_life.py        (no display: writes game_of_life.gif and says so)
#     python -m pytest -q -n auto -rs     (the README's test command; -m "not slow" with QUICK=1)
# The carried files: pycuda's sdist and the wheels of its build (setuptools, wheel, numpy) in .install-check/
# (pip download --no-binary pycuda --no-deps pycuda; pip download --only-binary :all: setuptools wheel numpy ...),
# pycuda's pure-Python needs in .gpu-host/wheels/ (its prebuilt pycuda wheel is not used: --no-binary pycuda).
# Logs under $OUT (default ./gpu-out): install.log, demo.log, pytest.log, and the GIF.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-out}; mkdir -p "$out"
venv=${VENV:-/tmp/readme-venv}
links=(--no-index --find-links .install-check)
[ -d .gpu-host/wheels ] && links+=(--find-links .gpu-host/wheels)
{
  echo "== $(date -u +%FT%TZ) nvcc: $(command -v nvcc) $(nvcc --version 2>/dev/null | tail -1)"
  echo "== g++: $(g++ --version 2>/dev/null | head -1); python: $(python3 --version)"
  python3 -m venv --system-site-packages "$venv" || exit 3
  . "$venv/bin/activate"
  echo "== pip install ${links[*]} --no-binary pycuda -e \".[gpu,test]\""
  time python -m pip install "${links[@]}" --no-binary pycuda -e ".[gpu,test]" || exit 1
  python -m pip show pycuda | head -3
  python -m pyscan info
} > "$out/install.log" 2>&1
rc=$?; tail -15 "$out/install.log"; [ $rc -eq 0 ] || exit $rc
. "$venv/bin/activate"
(cd "$out" && env -u DISPLAY -u WAYLAND_DISPLAY python "$OLDPWD/demos/game_of_life.py") > "$out/demo.log" 2>&1
rc=$?; cat "$out/demo.log"; ls -la "$out/game_of_life.gif"; [ $rc -eq 0 ] || exit $rc
python -m pytest -q -n auto -rs ${QUICK:+-m "not slow"} 2>&1 | tee "$out/pytest.log" | tail -25
