"""One registry of algorithms per pattern.  It feeds the public API (`algorithm=` names, the `*_ALGORITHMS`
tuples, `auto`), the tests, the benchmarks, the sanitizer check and the demos: adding an algorithm is one
kernel file, one driver function and one `register()` call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Algorithm:
    name: str
    pattern: str  # "scan", "reduce", "histogram", "life"
    driver: Callable  # host-side driver; its signature is the pattern's (see the pattern's package)
    kernels: tuple  # kernel files under kernels/ that it launches
    source: str  # where it comes from: a book figure or section, or a paper
    summary: str  # one line: what it does
    model: Callable | None = None  # the NumPy step-model, where the pattern has them
    fast: bool = False  # a beyond-the-book kernel tuned for speed
    options: dict = field(default_factory=dict)  # pattern-specific facts (limits, trace support, ...)


class Registry:
    def __init__(self, pattern: str):
        self.pattern = pattern
        self._algorithms: dict[str, Algorithm] = {}
        REGISTRIES[pattern] = self

    def register(self, name, driver, *, kernels, source, summary, model=None, fast=False, **options):
        if name in self._algorithms:
            raise ValueError(f"{self.pattern} algorithm {name!r} registered twice")
        algorithm = Algorithm(name, self.pattern, driver, tuple(kernels), source, summary, model, fast, options)
        self._algorithms[name] = algorithm
        return algorithm

    def names(self) -> tuple:
        return tuple(self._algorithms)

    def get(self, name) -> Algorithm:
        valid = ", ".join(map(repr, ("auto",) + self.names()))
        if not isinstance(name, str):
            raise TypeError(f"{self.pattern} algorithm must be a name (str), got {type(name).__name__} {name!r}; "
                            f"expected one of {valid}")
        if name not in self._algorithms:
            raise ValueError(f"unknown {self.pattern} algorithm {name!r}: expected one of {valid}")
        return self._algorithms[name]

    def __iter__(self):
        return iter(self._algorithms.values())

    def __len__(self):
        return len(self._algorithms)


REGISTRIES: dict[str, Registry] = {}
