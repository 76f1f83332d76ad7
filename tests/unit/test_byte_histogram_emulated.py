"""The byte histograms of PMPP ch. 9 (atomic_block, atomic_interleaved, privatized, aggregated, coarsened: Figs.
9.6-9.11 and §9.5) and the fast one run on the CPU (tests/emulate/byte_histogram_on_cpu.cpp: blocks one after the
other, a block's threads as std::threads, __syncthreads a barrier, shared memory one array a block's threads share),
compiled by the host C++ compiler with AddressSanitizer from the kernels' own source, over the grid their drivers
launch (pyscan.histograms.models' *_config, sized here for a 2-SM device, so that most cases take several blocks):
the counts are the NumPy models' and the reference histogram's, byte values and the book's letters, uniform and
skewed bytes, and (fast.cu) data that starts off a 16-byte boundary.  No GPU; skipped where there is no g++ or no
CUDA headers."""

import subprocess

import numpy as np
import pytest
from cuda_headers import ROOT, build_emulator, needs_emulator

from pyscan.histograms import HISTOGRAMS
from pyscan.histograms import models as m
from pyscan.histograms.fast import fast_defines
from pyscan.histograms.reference import LETTER_BINS, reference_histogram

pytestmark = needs_emulator()  # tests/helpers/cuda_headers.py

SMS = 2  # the device the grids are sized for
NAMES = ("atomic_block", "atomic_interleaved", "privatized", "aggregated", "coarsened", "fast")
_built: dict = {}


def _config(name, n) -> tuple:
    """(grid, block) of the driver's launch for n bytes (the models' *_config, the drivers' own)."""
    return getattr(m, f"{name}_config")(n, SMS)


def _emulator(name, letters, tmp_path_factory):
    (relpath,) = HISTOGRAMS.get(name).kernels
    defines = {"LETTERS": int(letters), **(fast_defines() if name == "fast" else {})}
    key = (name, letters)
    if key not in _built:
        _built[key] = build_emulator("byte_histogram_on_cpu", tmp_path_factory.mktemp("byte_histogram"), defines, (
            f'-DHISTOGRAM_FILE="{ROOT / "kernels" / relpath}"', f"-DHISTOGRAM_FUNCTION=histogram_{name}",
            f"-DDYNAMIC_SHARED={int(name == 'fast')}"))
    return _built[key]


def _count(name, data, bins, letters, skip, tmp_path, tmp_path_factory):
    binary = _emulator(name, letters, tmp_path_factory)
    grid, block = _config(name, data.size)
    (tmp_path / "x.bin").write_bytes(bytes(skip) + data.tobytes())
    p = subprocess.run([str(binary), str(data.size), str(skip), str(grid), str(block), str(bins),
                        str(tmp_path / "x.bin"), str(tmp_path / "out.bin")], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, (name, data.size, skip, p.returncode, p.stderr[-4000:])
    return np.fromfile(tmp_path / "out.bin", np.uint64)


@pytest.mark.parametrize("letters", [False, True], ids=["bytes", "letters"])
@pytest.mark.parametrize("name", NAMES)
def test_counts_are_the_models(name, letters, tmp_path, tmp_path_factory):
    rng = np.random.default_rng(len(name) + letters)
    model = HISTOGRAMS.get(name).model
    for n in (1, 31, 1000, 3 * 256 * 32 + 17):
        if letters:
            data = rng.choice(np.frombuffer(b"the quick brown fox jumps over a lazy dog, 42 !", np.uint8), n)
        else:
            data = rng.integers(0, 256, n, dtype=np.uint8)
        for bins, values in ((LETTER_BINS, data),) if letters else ((256, data), (37, data), (256, np.full(n, 200,
                                                                                                            np.uint8))):
            for skip in (0, 5) if name == "fast" else (0,):
                got = _count(name, values, bins, letters, skip, tmp_path, tmp_path_factory)
                want = reference_histogram(values, bins, letters=letters)
                np.testing.assert_array_equal(got, want, err_msg=f"{name} n={n} bins={bins} skip={skip}")
                kwargs = {"address": skip} if name == "fast" else {}
                np.testing.assert_array_equal(model(values, bins, letters=letters, sms=SMS, **kwargs), want)
