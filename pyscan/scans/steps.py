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


def pow2_at_least(n: int, minimum: int = 1) -> int:
    """The smallest power of two that is >= n and >= minimum (the padded size of a tree's section)."""
    return 1 << (max(int(n), minimum) - 1).bit_length()


def check_count_n(name: str, n, limit: int, counted: str = "n elements") -> int:
    """n for a work count: a power of two from 2 to limit, else ValueError saying so (counted: of what n is the
    size, as the message says it)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2 or n & (n - 1) or n > limit:
        raise ValueError(f"{name}: work is counted for {counted}, n a power of two 2 .. {limit}; got {n!r}")
    return int(n)
