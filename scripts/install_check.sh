#!/usr/bin/env bash
# The README's set-up, as written, on a GPU box without network, in two stages (each well under 10 minutes):
#   bash scripts/install_check.sh install   a fresh virtual environment (seeing the system's numpy, matplotlib,
#                                           pytest, CuPy, torch), then the README's commands:
#                                             pip install -e ".[gpu,test]"   (+ --no-index --find-links, below)
#                                             python -m pyscan info
#                                             python demos/game_of_life.py   (no display: writes game_of_life.gif)
#   bash scripts/install_check.sh tests     in that environment, the README's test command:
#                                             python -m pytest -q -rs -n 2   (QUICK=1: -m "not slow")
# Carried files: pycuda's sdist and the wheels its build needs (setuptools, wheel, numpy) in .install-check/
# (pip download --no-binary pycuda --no-deps pycuda; pip download --only-binary :all: --python-version 3.12
# setuptools wheel packaging numpy markupsafe typing_extensions), and pycuda's pure-Python needs in .gpu-host/wheels/
# (its prebuilt pycuda wheel is not used: --no-binary pycuda builds pycuda from the sdist).
# Logs under $OUT (default ./gpu-out): install.log, demo.log, game_of_life.gif, pytest.log.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${OUT:-$root/gpu-out}; mkdir -p "$out"
venv=${VENV:-$root/.readme-venv}
case ${1:-install} in
  install)
    links=(--no-index --find-links .install-check)
    [ -d .gpu-host/wheels ] && links+=(--find-links .gpu-host/wheels)
    {
      echo "== nvcc: $(command -v nvcc) $(nvcc --version 2>/dev/null | tail -1)"
      echo "== g++: $(g++ --version 2>/dev/null | head -1); $(python3 --version); Python.h: $(python3 -c \
'import sysconfig, os; p = sysconfig.get_paths()["include"]; print(p, os.path.exists(p + "/Python.h"))')"
      # A python3 that is itself a virtual environment (the GPU host's, which holds numpy, matplotlib, CuPy and
      # torch) cannot lend its packages to a new one (--system-site-packages reaches only the base interpreter's):
      # install into it, as a user of that box would.
      if python3 -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)'; then
        echo "== python3 is a virtual environment already ($(python3 -c 'import sys; print(sys.prefix)')): installing into it"
        mkdir -p "$venv/bin" && ln -sf "$(python3 -c 'import sys; print(sys.prefix)')/bin/activate" "$venv/bin/activate"
      else
        rm -rf "$venv" && python3 -m venv --system-site-packages "$venv" || exit 3
      fi
      . "$venv/bin/activate"
      echo "== pip install ${links[*]} --no-binary pycuda -e \".[gpu,test]\""
      time python -m pip install "${links[@]}" --no-binary pycuda -e ".[gpu,test]" || exit 1
      python -m pip show pycuda | head -3
      echo "== python -m pyscan info"
      python -m pyscan info
    } > "$out/install.log" 2>&1
    rc=$?; tail -20 "$out/install.log"; [ $rc -eq 0 ] || exit $rc
    . "$venv/bin/activate"
    echo "== python demos/game_of_life.py (in $out, no display)"
    (cd "$out" && env -u DISPLAY -u WAYLAND_DISPLAY python "$root/demos/game_of_life.py") > "$out/demo.log" 2>&1
    rc=$?; cat "$out/demo.log"; ls -la "$out/game_of_life.gif"; exit $rc ;;
  tests)
    if [ -f "$venv/bin/activate" ]; then . "$venv/bin/activate"
    elif ! python3 -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)'; then exit 3  # no environment installed
    fi                                               # else: python3's own virtual environment, installed into
    echo "== python -m pytest -q -rs -n 2 ${QUICK:+-m \"not slow\"}"
    if [ -n "${QUICK:-}" ]; then
      python -m pytest -q -rs -n 2 -m "not slow" > "$out/pytest.log" 2>&1
    else
      python -m pytest -q -rs -n 2 > "$out/pytest.log" 2>&1
    fi
    rc=$?; tail -25 "$out/pytest.log"; exit $rc ;;
  *) echo "usage: bash scripts/install_check.sh install|tests" >&2; exit 2 ;;
esac
