"""What a row times: an Entry makes (call, result) for an input of its array kind.  pyscan's rows are the public
function as a user calls it, on each array kind a user may hold; the peers' rows come from peers.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Entry:
    name: str  # the row's name
    kind: str  # "pyscan" or "peer"
    library: str  # pyscan, torch, cupy, pycuda, cuda.compute, book
    arrays: str  # the array kind it is called on; its library's events time it
    make: Callable  # (x of that kind) -> (call, result)
    algorithm: str | None = None  # pyscan rows: the algorithm asked for
    reference: bool = False  # the pattern's x_ref


def pyscan_entries(pyscan, pattern, op: str, kinds, algorithms) -> list:
    """pyscan's public function on every array kind, for every algorithm asked for."""
    out = []
    for algorithm in algorithms:
        suffix = "" if algorithm == "auto" else f"[{algorithm}]"
        for kind in kinds:
            def make(x, algorithm=algorithm):
                return pattern.public_call(pyscan, x, op, algorithm)
            out.append(Entry(f"{pattern.public_name}{suffix} ({kind})", "pyscan", "pyscan", kind, make,
                             algorithm=algorithm))
    return out


def peer_entries(peers, op: str) -> list:
    from .peers import peer_name

    return [Entry(peer_name(p, op), "peer", p.library, p.arrays, lambda x, p=p: p.make(x, op), reference=p.reference)
            for p in peers]
