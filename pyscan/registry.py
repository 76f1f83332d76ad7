"""One registry of algorithms per pattern.  It feeds the public API (`algorithm=` names, the `*_ALGORITHMS`
tuples, `auto`), the tests, the benchmarks, the sanitizer check and the demos: adding an algorithm is one
kernel file, one driver function, one entry in its pattern's `ORDER` and one `register()` call.

An entry is a typed record: the fields every pattern has (`Algorithm`), and per pattern the facts its tools
use (`ScanAlgorithm`: trace, work counts, error depth; `ReduceAlgorithm`: the launch without the copy back,
the builds to prewarm, work counts, error depth).  The registry keeps

* an explicit order (`order=`): the order of the book's chapter, the fast kernels after; it is the order of
  `names()`, of the docs' tables and of the tools' rows, whatever order the modules happen to be imported in;
* an explicit `auto` priority (`auto=`): the names `auto` may run, best first; `choose(n)` takes the first
  registered one whose `max_length` admits n elements.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Callable


@dataclass(frozen=True)
class Algorithm:
    name: str
    driver: Callable  # host-side driver; its signature is the pattern's (see the pattern's package docstring)
    kernels: tuple  # kernel files under kernels/ that it launches
    source: str  # where it comes from: a book figure or section, or a paper
    summary: str  # one line: what it does
    model: Callable | None = None  # the NumPy step-model, where the pattern has them
    fast: bool = False  # a beyond-the-book kernel tuned for speed
    max_length: int | None = None  # the most elements (life: cells) it takes; None: any length
    # ready(kind, x, address, n, dtype, device, stream, op[, exclusive]) -> the result: the commonest call (a 1-D
    # C-contiguous device array on its library's stream, read by arrays.ready) made whole, for `auto`'s first choice
    ready: Callable | None = None
    pattern: str = ""  # set by Registry.register

    def takes(self, n: int) -> bool:
        """Whether the algorithm accepts n elements (cells)."""
        return self.max_length is None or n <= self.max_length


@dataclass(frozen=True)
class ScanAlgorithm(Algorithm):
    trace: Callable | None = None  # trace(x, *, op, exclusive) -> the kernel's steps read back from the GPU
    count_work: Callable | None = None  # count_work(n) -> WorkCount measured on the GPU (COUNT_WORK build)
    model_count_work: Callable | None = None  # the same counts from the model's index arithmetic
    error_depth: Callable | None = None  # error_depth(n) -> additions an input passes through (float bound)
    trace_limit: int | None = None  # trace() takes at most this many elements
    section_size: int | None = None  # elements one block scans
    block_scans: tuple = ()  # hierarchical: the section scans it can run in its blocks


@dataclass(frozen=True)
class ReduceAlgorithm(Algorithm):
    # launch(x, *, op, call, out=None, dtype=None, map=None) -> one-element device array (no copy back); map: an
    # Expression in x and i applied in the loads (pyscan.reduce's map=), or TypeError where the kernels take none
    launch: Callable | None = None
    error_depth: Callable | None = None  # error_depth(n) -> additions an input passes through (float bound)
    builds: Callable | None = None  # builds(dtype, op) -> [(kernel file, macros)] it compiles (for prewarm)
    per_thread: int | None = None  # elements a thread combines before the tree
    count_work: Callable | None = None  # as ScanAlgorithm's
    model_count_work: Callable | None = None


class Registry:
    def __init__(self, pattern: str, *, order: tuple, auto: tuple, entry_type: type = Algorithm):
        self.pattern = pattern
        self.order = tuple(order)
        self.auto_priority = tuple(auto)
        self.entry_type = entry_type
        unknown = [name for name in self.auto_priority if name not in self.order]
        if unknown:
            raise ValueError(f"{pattern} registry: auto names {unknown} are not in its order")
        self._algorithms: dict[str, Algorithm] = {}
        REGISTRIES[pattern] = self

    def register(self, name, driver, **entry_fields) -> Algorithm:
        """Add an algorithm: entry_fields are the fields of the registry's entry type (kernels, source, summary,
        model, fast, max_length, and the pattern's own)."""
        if name in self._algorithms:
            raise ValueError(f"{self.pattern} algorithm {name!r} registered twice")
        if name not in self.order:
            raise ValueError(f"{self.pattern} algorithm {name!r} is not in the registry's order {self.order}: "
                             f"add it there (the order is the docs' and the tools')")
        known = {f.name for f in fields(self.entry_type)} - {"name", "driver", "pattern"}
        unknown = sorted(set(entry_fields) - known)
        if unknown:
            raise TypeError(f"{self.pattern} algorithm {name!r}: {self.entry_type.__name__} has no field(s) "
                            f"{unknown}; its fields: {', '.join(sorted(known))}")
        entry_fields["kernels"] = tuple(entry_fields.get("kernels", ()))
        if issubclass(self.entry_type, (ScanAlgorithm, ReduceAlgorithm)) and entry_fields.get("model") is not None:
            # the models compute on the kernels' compute values; the registered model takes every dtype and
            # dtype=, converting on load and store as the kernels do (model.compute_model is the inner one)
            from .types import typed_model

            entry_fields["model"] = typed_model(entry_fields["model"], scan=issubclass(self.entry_type, ScanAlgorithm))
        algorithm = self.entry_type(name=name, driver=driver, pattern=self.pattern, **entry_fields)
        self._algorithms[name] = algorithm
        return algorithm

    def names(self) -> tuple:
        return tuple(name for name in self.order if name in self._algorithms)

    def get(self, name) -> Algorithm:
        algorithm = self._algorithms.get(name) if isinstance(name, str) else None
        if algorithm is not None:  # the hot path of every call: no message built
            return algorithm
        valid = ", ".join(map(repr, ("auto",) + self.names()))
        if not isinstance(name, str):
            raise TypeError(f"{self.pattern} algorithm must be a name (str), got {type(name).__name__} {name!r}; "
                            f"expected one of {valid}")
        if name not in self._algorithms:
            raise ValueError(f"unknown {self.pattern} algorithm {name!r}: expected one of {valid}")
        return self._algorithms[name]

    def choose(self, n: int | None = None) -> str:
        """The algorithm `auto` runs for n elements (cells): the first of the auto priority that is registered
        and takes n (n=None: the first registered)."""
        for name in self.auto_priority:
            algorithm = self._algorithms.get(name)
            if algorithm is not None and (n is None or algorithm.takes(n)):
                return name
        raise ValueError(f"{self.pattern}: no algorithm of the auto priority {self.auto_priority} is registered "
                         f"and takes {n} elements")

    def auto_ready(self) -> Callable:
        """The ready() of auto's first choice, which must take every length (so it is auto's choice for every n)."""
        first = self.get(self.choose())
        if first.max_length is not None or first.ready is None:
            raise RuntimeError(f"{self.pattern}: {first.name!r}, auto's first choice, must take any length and have "
                               "ready()")
        return first.ready

    def __iter__(self):
        return iter(self._algorithms[name] for name in self.names())

    def __len__(self):
        return len(self._algorithms)


REGISTRIES: dict[str, Registry] = {}

__all__ = ["Algorithm", "REGISTRIES", "ReduceAlgorithm", "Registry", "ScanAlgorithm"]
