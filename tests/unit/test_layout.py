"""The test tree's layout: every test file is in tests/unit (runs without a GPU) or tests/gpu (needs one), and no two
share a basename (pytest imports test files by basename: there is no __init__.py)."""

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent


def all_test_files():
    return sorted(p for pattern in ("test_*.py", "*_test.py") for p in TESTS.rglob(pattern))


def test_every_test_file_is_in_unit_or_gpu():
    misplaced = [str(p.relative_to(TESTS)) for p in all_test_files() if p.parent not in (TESTS / "unit", TESTS / "gpu")]
    assert not misplaced, f"move these to tests/unit (no GPU needed) or tests/gpu (needs the GPU): {misplaced}"


def test_basenames_are_unique():
    counts = Counter(p.name for p in all_test_files())
    assert not [name for name, n in counts.items() if n > 1]
