"""scripts/books_numbers.py: the arithmetic that reproduces the books' numbers, and pyscan's counts beside them."""

from __future__ import annotations

import math

import pytest


@pytest.fixture(scope="module")
def bn(load_script):
    return load_script("scripts/books_numbers.py")


@pytest.mark.parametrize("n", [16, 512, 1024, 2048])
def test_kogge_stone_additions(bn, n):
    assert bn.kogge_stone_additions(n) == n * int(math.log2(n)) - (n - 1)
    assert sum(bn.scan_step_combines("kogge_stone", n)) == bn.kogge_stone_additions(n)
    assert sum(bn.scan_step_combines("brent_kung", n)) == 2 * n - 2 - int(math.log2(n))


def test_step_counts_reproduce_pmpp(bn):
    n, p = 1024, 32
    assert bn.steps_every_thread([n] * 10, p) == 320 and n / 320 == 3.2  # PMPP §11.3
    assert round(bn.kogge_stone_additions(512) / 511) == 8
    assert round((2 * n - 2 - 10) / p + 10, 1) == 73.6  # PMPP §11.4 (reconstructed formula)
    assert bn.three_phase_steps_every_thread(n, 64, p) == 72  # PMPP §11.5 (reconstructed)
    assert round(1024 / 18, 1) == 56.9
    # the active rule, by hand: Kogge-Stone step s keeps n - s threads busy
    assert bn.steps_active(bn.scan_step_combines("kogge_stone", n), p) == sum(
        math.ceil((n - (1 << k)) / p) for k in range(10))
    assert bn.steps_active([0, 33, 32, 1], 32) == 2 + 1 + 1


def test_reduction_numbers_reproduce_pmpp(bn):
    assert bn.reduction_resources("convergent", 256) == (255, 384)  # PMPP §10.4: 0.66
    assert bn.reduction_resources("simple", 256) == (255, 864)  # the book prints 736 (see the table's reason)
    assert bn.reduction_memory_requests("simple", 2048) == 1149  # PMPP §10.5
    assert bn.reduction_memory_requests("convergent", 2048) == 204


def test_table(bn, tmp_path):
    rows = bn.rows()
    assert all(len(row) == 6 for row in rows)
    claims = " ".join(row[2] for row in rows)
    for number in ("320", "3.2", "73.6", "72", "56.9", "736", "384", "1149", "204", "8"):
        assert number in claims
    out = tmp_path / "n.md"
    assert bn.main(["--write", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("# The books' numbers") and text.count("\n| PMPP") == len(rows)
