"""The reduction registry: its order (PMPP §10.3 - §10.8, then beyond the book) and what `auto` runs."""

from __future__ import annotations

from ..registry import ReduceAlgorithm, Registry

REDUCTIONS = Registry(
    "reduce", entry_type=ReduceAlgorithm,
    order=("simple", "convergent", "shared_memory", "segmented", "coarsened", "fast", "axis"),
    auto=("fast", "coarsened"),
)
