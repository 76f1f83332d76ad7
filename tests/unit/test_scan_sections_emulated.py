"""The single-section scans (PMPP §11.2-§11.5 and Hands-On ch. 4: naive, Kogge-Stone and its double buffer,
Brent-Kung, the coarsened three-phase scan, and Blelloch's work-efficient block scan) run on the CPU in their TRACE
and COUNT_WORK build (tests/emulate/sections_on_cpu.cpp: one block, its threads as std::threads, __syncthreads a
barrier), compiled by the host C++ compiler with AddressSanitizer from the kernels' own source: the shared array
after every step is the NumPy step-model's (pyscan.scans.tracing.model_steps, what the GPU's trace is held to), the
result is the model's, and the combines done and the warps active at each step are model_count_work's (and the
books' formulas where they give one).  No GPU; skipped where there is no g++ or no CUDA headers."""

import subprocess

import numpy as np
import pytest
from cuda_headers import ROOT, build_emulator, needs_emulator

from pyscan.scans import blelloch, hierarchical, single_section, tracing
from pyscan.scans.steps import pow2_at_least

pytestmark = needs_emulator()  # tests/helpers/cuda_headers.py

_built: dict = {}


def _geometry(name, n) -> tuple:
    """(threads, steps, #defines) of the one section pyscan.scans.tracing.trace launches for n elements."""
    if name == "blelloch_block":  # blelloch.blelloch_block_trace: S = 2^k >= n, S / 2 threads
        section = pow2_at_least(n, 2)
        return section // 2, blelloch.step_count(section), {"SECTION_SIZE": section}
    g = single_section.trace_geometry(name, n)
    return g.threads, single_section.trace_step_count(name, g.section), g.defines(name)


def _limit(name) -> int:
    """The most elements a trace of one section takes."""
    return blelloch.BLOCK_SECTION if name == "blelloch_block" else single_section.TRACE_LIMIT[name]


def _emulator(name, dtype, op, n, tmp_path_factory):
    """The trace and work-count build of the section that pyscan.scans.tracing.trace launches for n elements."""
    defines = _geometry(name, n)[2]
    path, function, macros = hierarchical.section_build(name, dtype, op, TRACE=1, COUNT_WORK=1, **defines)
    key = (path, function, tuple(sorted(macros.items())))
    if key not in _built:
        where = tmp_path_factory.mktemp("section")
        _built[key] = build_emulator("sections_on_cpu", where, macros, (
            f'-DSECTION_FILE="{ROOT / "kernels" / path}"', f"-DSECTION_FUNCTION={function}"))
    return _built[key]


def _run(name, x, op, exclusive, tmp_path, tmp_path_factory):
    """(result, trace rows, counters) of one section of x."""
    binary = _emulator(name, x.dtype, op, x.size, tmp_path_factory)
    threads, steps, defines = _geometry(name, x.size)
    (tmp_path / "x.bin").write_bytes(x.tobytes())
    files = [tmp_path / f for f in ("out.bin", "trace.bin", "counts.bin")]
    p = subprocess.run([str(binary), str(x.size), str(threads), str(steps), str(int(exclusive)),
                        str(tmp_path / "x.bin"), *map(str, files)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, (name, x.size, p.returncode, p.stderr[-4000:])
    out = np.fromfile(files[0], x.dtype)
    rows = np.fromfile(files[1], x.dtype).reshape(steps, defines["SECTION_SIZE"])
    return out, rows, np.fromfile(files[2], np.uint64)


NAMES = list(hierarchical.SECTION_SCANS)  # the book's section scans and Hands-On ch. 4's work-efficient one


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("op, exclusive", [("add", False), ("add", True), ("max", False)])
def test_traced_steps_are_the_model(name, op, exclusive, tmp_path, tmp_path_factory):
    rng = np.random.default_rng(len(name))
    # the largest section a trace takes (1024 threads) once a kernel: the emulator's slowest runs
    for n in (1, 2, 31, 33, 1000) + ((_limit(name),) if op == "add" and not exclusive else ()):
        x = rng.integers(-50, 50, n).astype(np.int32)
        out, rows, _ = _run(name, x, op, exclusive, tmp_path, tmp_path_factory)
        steps = tracing.model_steps(name, x, op=op, exclusive=exclusive)
        assert len(rows) == len(steps), (name, n)
        for i, (row, step) in enumerate(zip(rows, steps)):
            np.testing.assert_array_equal(row, step.values, err_msg=f"{name} n={n} step {i} ({step.label})")
        want = (np.maximum.accumulate(x) if op == "max" else np.cumsum(x, dtype=np.int32))
        if exclusive:
            want = np.concatenate([[0], want[:-1]]).astype(np.int32)
        np.testing.assert_array_equal(out, want, err_msg=f"{name} n={n}")


@pytest.mark.parametrize("name", NAMES)
def test_counted_work_is_the_model_and_the_book(name, tmp_path, tmp_path_factory):
    exclusive = name == "blelloch_block"  # its count is of the exclusive scan (blelloch.blelloch_block_count_work)
    for n in (2, 32, 1024, _limit(name)):
        _, _, counts = _run(name, np.ones(n, np.int32), "add", exclusive, tmp_path, tmp_path_factory)
        model = tracing.model_count_work(name, n)
        assert int(counts[0]) == model.additions, (name, n)
        assert [int(c) for c in counts[1:]] == model.active_warps, (name, n)
        book = tracing.book_additions(name, n)
        if book is not None:
            assert model.additions == book, (name, n)
