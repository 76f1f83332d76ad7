"""The exercises without a GPU: the registry is complete, `start` writes compiling stubs, `check` compiles and says
what needs a GPU (a compile error with the student's file:line), the index-pattern hints, the references."""

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from pyscan.runtime.loader import KERNEL_ROOT, global_functions
from pyscan_tools.exercises import EXERCISES, EXERCISES_IN_ORDER, check, get, guess, runners, start
from pyscan_tools.exercises.cli import main as exercise_main
from pyscan_tools.exercises.hints import index_hint, scalar_hint
from pyscan_tools.exercises.registry import KINDS, MARKER, STUBS
from pyscan_tools.exercises.report import FAIL, NEEDS_GPU, PASS

NVCC = shutil.which("nvcc") or (shutil.which("nvcc", path="/usr/local/cuda/bin"))
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
FAKES = Path(__file__).resolve().parent.parent / "fakes" / "exercises"
BOOK_LIST = ("scalar_multiply", "naive_prefix", "kogge_stone", "kogge_stone_double_buffer", "kogge_stone_exclusive",
             "brent_kung", "coarsened_scan", "hierarchical_scan", "segmented_scan", "blelloch", "convergent_reduction",
             "shared_memory_reduction", "coarsened_reduction", "max_reduction", "privatized_histogram",
             "aggregated_histogram", "life_shared")


def test_every_exercise_of_the_issue_is_registered():
    assert set(BOOK_LIST) <= set(EXERCISES)
    assert [e.name for e in EXERCISES_IN_ORDER] == list(EXERCISES)


@pytest.mark.parametrize("name", list(EXERCISES))
def test_registry_entry_is_complete(name):
    e = get(name)
    assert e.kind in KINDS
    assert e.source and e.task
    solution = KERNEL_ROOT / e.solution
    assert solution.is_file(), f"{name}: worked solution {solution} missing"
    assert e.function in global_functions(solution.read_text())
    stub = e.stub_path.read_text()
    assert stub.startswith(MARKER + name), f"{name}: the stub's first line is the marker"
    assert "TODO" in stub
    if e.kind not in ("blelloch",):  # blelloch's stub has five kernels: blelloch_up_sweep among them
        assert e.function in global_functions(stub), f"{name}: the stub declares {e.function}"
    if e.driver_stub:
        assert (STUBS / e.driver_stub).is_file()
    if e.algorithm and e.kind not in ("histogram", "life"):
        from pyscan.reductions import REDUCTIONS
        from pyscan.scans import SCANS

        registry = REDUCTIONS if e.kind.startswith("reduce") else SCANS
        assert registry.get(e.algorithm).model is not None, f"{name}: a model to compare steps with"
    assert runners.integer_cases(e, quick=True), name


def test_stub_signatures_match_the_solutions():
    from pyscan.runtime.loader import build_source, signature

    for e in EXERCISES_IN_ORDER:
        if e.kind in ("blelloch", "histogram", "life"):
            continue
        def plain(text):  # the declaration the loader reads: optional trailing parameters (TRACE, COUNT_WORK) dropped
            text = re.sub(r"#if (COUNT_WORK|TRACE)\n.*?#endif", "", text, flags=re.DOTALL)
            return "#define ELEM_TYPE int\n" + text.replace("SCAN_EXTRA_PARAMS", "")

        solution = signature(plain(build_source(e.solution)), e.function)
        stub_signature = signature(plain(e.stub_path.read_text()), e.function)
        assert solution == stub_signature, f"{e.name}: {solution} != {stub_signature}"


def test_start_writes_the_stub_and_headers(tmp_path):
    written = start("hierarchical_scan", tmp_path / "mine")
    assert [p.name for p in written] == ["hierarchical_scan.cu", "hierarchical_scan_driver.py"]
    assert (tmp_path / "mine" / "pyscan_headers" / "common" / "scan_section.cuh").is_file()
    assert guess(written[0]).name == "hierarchical_scan"
    with pytest.raises(FileExistsError):
        start("hierarchical_scan", tmp_path / "mine")
    start("hierarchical_scan", tmp_path / "mine", force=True)


def test_cli_list_and_start(tmp_path, capsys):
    assert exercise_main(["list"]) == 0
    out = capsys.readouterr().out
    assert "PMPP §11.4, Fig. 11.7" in out and "life_shared" in out
    assert exercise_main(["start", "kogge_stone", str(tmp_path)]) == 0
    assert (tmp_path / "kogge_stone.cu").is_file()
    assert exercise_main(["start", "no_such_exercise", str(tmp_path)]) == 2


@needs_nvcc
@pytest.mark.parametrize("name", list(EXERCISES))
def test_stubs_compile(name, tmp_path):
    from pyscan_tools.exercises.compiling import compile_builds

    path = start(name, tmp_path)[0]
    ok, lines = compile_builds(path.resolve(), get(name), nvcc=NVCC)
    assert ok, "\n".join(lines)


@needs_nvcc
@pytest.mark.parametrize("fake", sorted(p.relative_to(FAKES).as_posix() for p in FAKES.rglob("*.cu")))
def test_fakes_compile(fake):
    from pyscan_tools.exercises.compiling import compile_builds

    ok, lines = compile_builds(FAKES / fake, guess(FAKES / fake), nvcc=NVCC)
    assert ok, f"{fake}: " + "\n".join(lines)


def test_every_exercise_has_two_known_wrong_kernels():
    wrong = {}
    for fake in FAKES.rglob("*.cu"):
        text = fake.read_text()
        expect = re.search(r"^// checker must say: (.+)$", text, re.MULTILINE).group(1)
        if expect != "pass":
            wrong[guess(fake).name] = wrong.get(guess(fake).name, 0) + 1
    assert {name: wrong.get(name, 0) for name in EXERCISES if wrong.get(name, 0) < 2} == {}


@needs_nvcc
def test_check_without_gpu_compiles_and_names_what_needs_one(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(Path(NVCC).parent) + ":" + __import__("os").environ.get("PATH", ""))
    path = start("kogge_stone", tmp_path)[0]
    report = check(path, gpu=False, picture=tmp_path / "model.png")
    assert report.stage("compiles").status == PASS
    assert report.needs_gpu and report.failed is None
    assert report.stage("right on integers").status == NEEDS_GPU
    assert (tmp_path / "model.png").read_bytes()[:4] == b"\x89PNG"
    text = str(report)
    assert "needs a GPU" in text and "stride 8" in text  # the model's steps, what the TRACE build must show
    assert "<table>" in report._repr_html_()


@needs_nvcc
def test_a_compile_error_names_the_students_file_and_line(tmp_path):
    path = start("brent_kung", tmp_path)[0]
    lines = path.read_text().splitlines()
    todo = next(i for i, line in enumerate(lines) if "TODO 1" in line)
    lines.insert(todo + 1, "    XY[tid] = undeclared_thing;")
    path.write_text("\n".join(lines) + "\n")
    report = check(path, gpu=False)
    stage = report.stage("compiles")
    assert stage.status == FAIL and report.diagnosis == "compile"
    assert f"{path}:{todo + 2}:" in "\n".join(stage.details), stage.details
    assert "undeclared_thing" in str(report)


@needs_nvcc
def test_cli_check_exit_codes(tmp_path, capsys):
    from pyscan import gpu_unavailable_reason

    path = start("scalar_multiply", tmp_path)[0]
    code = exercise_main(["check", str(path), "--no-sanitize", "--no-speed", "--quick"])
    if gpu_unavailable_reason() is not None:
        assert code == 3
        assert "needs a GPU" in capsys.readouterr().out
    assert exercise_main(["check", str(tmp_path / "missing.cu")]) == 2
    (tmp_path / "plain.cu").write_text("// no marker\n")
    assert exercise_main(["check", str(tmp_path / "plain.cu")]) == 2


# --- the hints, on synthetic results ------------------------------------------------------------------------

def _hint(want, got, **kw):
    want, got = np.asarray(want), np.asarray(got)
    return index_hint(want, got, want == got, **kw)


def test_hint_shifted():
    x = np.arange(1, 101)
    inclusive = np.cumsum(x)
    exclusive = np.concatenate([[0], inclusive[:-1]])
    assert _hint(exclusive, inclusive).kind == "shifted"


def test_hint_bounds_at_the_end_and_past_it():
    want = np.arange(100)
    got = want.copy()
    got[-1] = 0
    assert _hint(want, got).kind == "bounds"
    assert index_hint(want, want, np.ones(100, bool), guard_written=np.array([0])).kind == "bounds"


def test_hint_block_sums():
    want = np.arange(3000)
    got = want.copy()
    got[1024:] -= 5
    assert _hint(want, got, block=1024).kind == "block_sums"


def test_hint_identity_and_first_element():
    want = np.cumsum(np.arange(1, 50))
    assert _hint(want, want + 1).kind == "identity"
    got = want.copy()
    got[0] = 7
    assert _hint(want, got).kind == "first_element"


def test_hint_warp_boundary_and_scattered():
    want = np.arange(1024)
    got = want.copy()
    got[64:] += np.arange(960) % 3 + 1
    assert _hint(want, got, block=1024).kind == "warp_boundary"
    got = want.copy()
    got[[5, 77, 300]] = -1
    assert _hint(want, got, block=1024).kind == "scattered"


def test_scalar_hints():
    x = np.array([3, 4, 5], np.int32)
    assert scalar_hint(12, 7, x, "add").kind == "bounds"
    assert scalar_hint(-3, 0, -x, "max").kind == "identity"


# --- references and bounds (what the checker compares with) --------------------------------------------------

def test_expected_values_of_each_kind():
    for e in EXERCISES_IN_ORDER:
        case = runners.integer_cases(e, quick=True)[0]
        want, tolerance = runners.expected(e, case)
        assert tolerance is None, e.name  # integers: exact
    e = get("kogge_stone_exclusive")
    case = runners.make_case(e, 5, np.int32)
    want, _ = runners.expected(e, case)
    assert want[0] == 0 and np.array_equal(want[1:], np.cumsum(case.inputs["x"])[:-1])
    e = get("kogge_stone")
    case = runners.make_case(e, 5000, np.float32)
    want, bound = runners.expected(e, case)
    assert want.dtype == np.float64 and bound.shape == (5000,) and np.all(bound > 0)
    e = get("segmented_scan")
    x = np.array([1, 2, 3, 4, 5], np.int32)
    want = runners._segmented_reference(x, np.array([0, 0, 1, 0, 1]), "add")
    assert want.tolist() == [1, 3, 3, 7, 5]


def test_sizes_break_hierarchies():
    ks = runners.sizes(get("kogge_stone"))
    assert {1, 31, 32, 33, 1023, 1024, 1025, 3072, 1024 ** 2 - 1, 1024 ** 2 + 1} <= set(ks)
    assert max(runners.sizes(get("naive_prefix"))) == 1024
    hidden = runners.hidden_sizes(get("kogge_stone"), 7)
    assert hidden == runners.hidden_sizes(get("kogge_stone"), 7) and len(hidden) >= 1


@needs_nvcc
def test_the_kernel_runs_in_a_child_process(monkeypatch):
    """check() runs the stages that launch the kernel in a spawned process: asked to use a GPU on a machine without
    one, the child's failure comes back as the report's first running stage (and this process is untouched)."""
    from pyscan import gpu_unavailable_reason

    if gpu_unavailable_reason() is None:
        pytest.skip("this machine has a GPU: tests/gpu/test_exercises_gpu.py runs the child for real")
    monkeypatch.setenv("PATH", str(Path(NVCC).parent) + ":" + __import__("os").environ.get("PATH", ""))
    report = check(KERNEL_ROOT / "scan/kogge_stone.cu", "kogge_stone", gpu=True, speed=False, sanitize=False)
    failed = report.failed
    assert failed.name == "right on integers" and failed.diagnosis == "error"
    assert "GPUUnavailableError" in failed.summary
