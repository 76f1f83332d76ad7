"""The histogram registry: its order (PMPP ch. 9's strategies, then beyond the book) and what `auto` runs."""

from __future__ import annotations

from ..registry import Registry

HISTOGRAMS = Registry(
    "histogram",
    order=("atomic_block", "atomic_interleaved", "privatized", "aggregated", "coarsened", "fast"),
    auto=("fast", "aggregated"),
)
