"""The check's cases, made from the registries and the patterns' check plans: every algorithm of every registry
(an algorithm registered later is covered without an edit here), a few that prove `auto`, and scalar_multiply."""

from __future__ import annotations

from ..patterns import PATTERNS


def make_cases(quick: bool = False, patterns=None, algorithms=None) -> list:
    """The cases of the patterns asked for (None: all), for the algorithms asked for (None: every registered one,
    plus the `auto` cases)."""
    import pyscan

    cases = []
    for pattern in PATTERNS.values():
        if pattern.run_case is None or (patterns and pattern.name not in patterns):
            continue
        if pattern.registry is None:  # the functions without a registry run when no algorithm is named
            if not algorithms:
                cases += pattern.check_cases(pattern.name, quick)
            continue
        registry = pyscan.REGISTRIES[pattern.registry]
        if not algorithms or "auto" in algorithms:
            cases += pattern.auto_cases()
        for name in registry.names():
            if not algorithms or name in algorithms:
                cases += pattern.check_cases(name, quick)
    return cases


def units(cases) -> list:
    """The compile units of the cases, in their order (the cases of one unit share their kernels)."""
    return list(dict.fromkeys(case.unit for case in cases))


def shard(cases, spec: str) -> list:
    """The cases of shard "i/k": every k-th compile unit from the i-th, so that compiles spread evenly."""
    index, count = (int(v) for v in spec.split("/"))
    mine = set(units(cases)[index::count])
    return [c for c in cases if c.unit in mine]
