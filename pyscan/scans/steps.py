"""What a step-model returns: one array per step, and the combines that step performed (for pictures)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Step:
    """One step of a scan (or reduction) algorithm.

    label:  what the step is ("load", "stride 4", "up-sweep d=2", ...)
    values: the array after the step (a copy: later steps do not change it)
    edges:  the combines the step performed, as (source, destination) index pairs:
            values[dst] = op(old[src], old[dst]) (or the algorithm's documented variant).
    """

    label: str
    values: np.ndarray
    edges: list = field(default_factory=list)


@dataclass
class WorkCount:
    """Work an algorithm really did: operator applications, and warps with at least one active thread per step."""

    additions: int
    active_warps: list = field(default_factory=list)  # one entry per step

    @property
    def warp_slots(self) -> int:
        """Execution resources consumed, counted as PMPP ch. 10 does: active warps x 32 threads, summed over steps."""
        return 32 * sum(self.active_warps)
