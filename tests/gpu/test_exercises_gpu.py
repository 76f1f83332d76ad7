"""The checker checks itself on the GPU: every worked solution passes every stage, and every known-wrong kernel
of tests/fakes/exercises/ is caught at the stage, with the diagnosis, its header names."""

import re
from pathlib import Path

import pytest

from pyscan.runtime.loader import KERNEL_ROOT
from pyscan_tools.exercises import EXERCISES, check, guess
from pyscan_tools.exercises.report import FAIL

pytestmark = pytest.mark.gpu

FAKES = Path(__file__).resolve().parent.parent / "fakes" / "exercises"
STAGE_NAMES = ("right on integers", "right on floats", "step by step", "races and memory")
FAKE_FILES = sorted(p.relative_to(FAKES).as_posix() for p in FAKES.rglob("*.cu"))


def expectation(path: Path) -> tuple:
    """(stages the failure may be found at, diagnosis or None) from the fake's '// checker must say:' line; "pass"
    -> ((), None)."""
    said = re.search(r"^// checker must say: (.+)$", path.read_text(), re.MULTILINE).group(1).strip()
    if said == "pass":
        return (), None
    stages = tuple(name for name in STAGE_NAMES if name in said)
    for name in STAGE_NAMES:
        said = said.replace(name, "")
    return stages, said.replace("|", " ").strip() or None


@pytest.mark.parametrize("name", list(EXERCISES))
def test_worked_solution_passes_every_check(name):
    exercise = EXERCISES[name]
    report = check(KERNEL_ROOT / exercise.solution, name, speed=False)
    assert report.failed is None, str(report)
    assert report.passed, str(report)


@pytest.mark.parametrize("fake", FAKE_FILES)
def test_known_wrong_kernel_is_caught(fake):
    path = FAKES / fake
    stages, diagnosis = expectation(path)
    exercise = guess(path)
    report = check(path, exercise.name, speed=False, sanitize="races and memory" in stages or not stages)
    if not stages:
        assert report.failed is None, str(report)
        return
    failed = report.failed
    assert failed is not None, f"{fake} was not caught:\n{report}"
    assert failed.status == FAIL
    assert failed.name in stages, f"{fake}: caught at {failed.name!r}, expected one of {stages}:\n{report}"
    if failed.name == "step by step":  # the picture of the steps, the diverging boxes marked
        assert failed.picture[:4] == b"\x89PNG"
    if diagnosis is not None:
        assert report.diagnosis == diagnosis, f"{fake}: diagnosis {report.diagnosis!r}, expected {diagnosis!r}:\n{report}"


def test_report_of_a_wrong_kernel_reads_well(tmp_path):
    path = FAKES / "exclusive_not_shifted.cu"
    report = check(path, speed=False, picture=tmp_path / "steps.png")
    text = str(report)
    assert "right on integers" in text and "hint:" in text and "inclusive vs exclusive" in text
    assert "<table>" in report._repr_html_()


def test_speed_stage_reports_fractions_of_copy():
    report = check(KERNEL_ROOT / EXERCISES["kogge_stone"].solution, "kogge_stone", sanitize=False)
    speed = report.stage("speed")
    assert speed.status == "pass", str(report)
    assert "x copy" in speed.summary, speed.summary
