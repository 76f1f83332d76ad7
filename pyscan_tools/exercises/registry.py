"""The exercises: every fact of each once (its book section, its stub, the worked solution, the model its steps are
compared with, the sizes it takes).  Needs only the standard library.

An exercise's `kind` says how the checker drives the kernel (runners.py): the section-scan contract of
pyscan/scans/hierarchical.py, the reduction launches of pyscan/reductions/book.py, the histogram launch of
pyscan/histograms/launch.py, the one-block Game of Life of Hands-On ch. 4, a plain map, or a host driver of the
student's own (a stub Python file beside the kernel).  `algorithm` names the registered algorithm whose NumPy
step-model, trace layout and error depth the checker uses; the worked solution is the project's own kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

STUBS = Path(__file__).resolve().parent / "stubs"
MARKER = "// pyscan exercise: "  # the first line of every stub: the checker guesses the exercise from it

KINDS = ("map", "section_scan", "hierarchical", "blelloch", "segmented_scan", "reduce_tree", "reduce_atomic",
         "histogram", "life")


@dataclass(frozen=True)
class Exercise:
    name: str
    source: str  # the book's figure or section
    task: str  # what the student writes, one or two sentences
    kind: str  # how the checker drives it (KINDS)
    stub: str  # the .cu template under stubs/
    solution: str  # the worked solution: a kernel file under kernels/
    function: str  # the __global__ function the stub and the solution share
    algorithm: str | None = None  # the registered algorithm: model, trace layout, error depth
    driver_stub: str | None = None  # a stub Python driver under stubs/ (host code the student writes)
    op: str = "add"
    exclusive: bool = False
    section: int | None = None  # elements one block handles (the sizes that break hierarchies are built on it)
    threads: int | None = None  # threads per block
    defines: dict = field(default_factory=dict)  # the solution's other #defines (COARSEN=8, ...)
    max_length: int | None = None  # the most elements the exercise takes; None: any length
    floats: bool = True  # whether the float stage applies (histograms and Game of Life are integer only)

    @property
    def stub_path(self) -> Path:
        return STUBS / self.stub

    @property
    def files(self) -> tuple:
        """The files `exercise start` writes: the stub kernel, and the stub driver where there is one."""
        return (self.stub,) + ((self.driver_stub,) if self.driver_stub else ())


def _scan(name, source, task, stub, solution, function, algorithm, section, threads, **more):
    return Exercise(name, source, task, "section_scan", stub, solution, function, algorithm, section=section,
                    threads=threads, **more)


EXERCISES_IN_ORDER = (
    Exercise("scalar_multiply", "Hands-On ch. 4 (SourceModule; the chapter's questions)",
             "out[i] = a * x[i] over a grid of blocks: 10,000 elements with block=(100,1,1), grid=(100,1,1), and any n",
             "map", "scalar_multiply.cu", "basics/scalar_multiply.cu", "scalar_multiply", section=100, threads=100),
    _scan("naive_prefix", "Hands-On ch. 4 (naive parallel prefix; the chapter's questions)",
          "the naive (Hillis-Steele) prefix sum of any length up to 1024 in one block, without the book's race",
          "naive_prefix.cu", "scan/naive.cu", "naive_scan", "naive", 1024, 1024, max_length=1024),
    _scan("kogge_stone", "PMPP §11.2, Fig. 11.3", "the Kogge-Stone scan of one section in shared memory",
          "kogge_stone.cu", "scan/kogge_stone.cu", "kogge_stone_scan", "kogge_stone", 1024, 1024),
    _scan("kogge_stone_double_buffer", "PMPP §11.2 (exercise after Fig. 11.3)",
          "Kogge-Stone with two shared buffers and one __syncthreads() per step",
          "kogge_stone_double_buffer.cu", "scan/kogge_stone_double_buffer.cu", "kogge_stone_double_buffer_scan",
          "kogge_stone_double_buffer", 1024, 1024),
    _scan("kogge_stone_exclusive", "PMPP §11.3 (the exclusive scan kernel)",
          "the exclusive Kogge-Stone scan: shift the load by one, the identity first",
          "kogge_stone_exclusive.cu", "scan/kogge_stone.cu", "kogge_stone_scan", "kogge_stone", 1024, 1024,
          exclusive=True),
    _scan("brent_kung", "PMPP §11.4, Fig. 11.7", "the Brent-Kung scan: a reduction tree, then the reverse tree",
          "brent_kung.cu", "scan/brent_kung.cu", "brent_kung_scan", "brent_kung", 2048, 1024),
    _scan("coarsened_scan", "PMPP §11.5, Fig. 11.8",
          "the three-phase coarsened scan: sequential sub-section scans, Kogge-Stone of their sums, add back",
          "coarsened_scan.cu", "scan/coarsened.cu", "coarsened_scan", "coarsened", 4096, 512,
          defines={"COARSEN": 8}),
    Exercise("hierarchical_scan", "PMPP §11.6, Figs. 11.9-11.10",
             "the hierarchical scan: a section kernel writing block sums, the kernel that adds them back, and the "
             "host code that scans the block sums recursively",
             "hierarchical", "hierarchical_scan.cu", "scan/kogge_stone.cu", "kogge_stone_scan", "kogge_stone",
             driver_stub="hierarchical_scan_driver.py", section=1024, threads=1024),
    Exercise("segmented_scan", "PMPP ch. 11 exercises (segmented scan)",
             "an inclusive scan that starts afresh at every element whose flag is set, Kogge-Stone on (flag, value) "
             "pairs, one section",
             "segmented_scan", "segmented_scan.cu", "scan/segmented.cu", "segmented_scan", section=1024,
             threads=1024, max_length=1024),
    Exercise("blelloch", "Hands-On ch. 4 (work-efficient parallel prefix)",
             "Blelloch's up-sweep and down-sweep kernels, one launch per tree level, and the host loop that runs them",
             "blelloch", "blelloch.cu", "scan/blelloch_sweeps.cu", "blelloch_up_sweep", "blelloch",
             driver_stub="blelloch_driver.py", threads=256),
    Exercise("convergent_reduction", "PMPP §10.4, Fig. 10.9",
             "the convergent sum reduction in global memory: stride halving, active threads kept together",
             "reduce_tree", "convergent_reduction.cu", "reduction/convergent.cu", "reduce_convergent", "convergent",
             section=2048, threads=1024),
    Exercise("shared_memory_reduction", "PMPP §10.6, Fig. 10.11",
             "the reduction tree in shared memory after a first combine from global memory",
             "reduce_tree", "shared_memory_reduction.cu", "reduction/shared_memory.cu", "reduce_shared_memory",
             "shared_memory", section=2048, threads=1024),
    Exercise("coarsened_reduction", "PMPP §10.8, Fig. 10.15",
             "thread coarsening: 2 * COARSE_FACTOR elements per thread, then the tree, one atomic per block",
             "reduce_atomic", "coarsened_reduction.cu", "reduction/coarsened.cu", "reduce_coarsened", "coarsened",
             section=8192, threads=1024, defines={"COARSE_FACTOR": 4}),
    Exercise("max_reduction", "PMPP ch. 10 exercises (a max reduction of any length)",
             "the shared-memory reduction for max, of any length (the host relaunches it on the partial results)",
             "reduce_tree", "max_reduction.cu", "reduction/shared_memory.cu", "reduce_shared_memory", "shared_memory",
             op="max", section=2048, threads=1024),
    Exercise("privatized_histogram", "PMPP §9.4, Fig. 9.10",
             "a private histogram per block in shared memory, committed to the global one with atomics",
             "histogram", "privatized_histogram.cu", "histogram/privatized.cu", "histogram_privatized", "privatized",
             section=256, threads=256, floats=False),
    Exercise("aggregated_histogram", "PMPP §9.5, Fig. 9.11",
             "privatization plus aggregation: runs of one bin added with one atomic (the listing's three bugs avoided)",
             "histogram", "aggregated_histogram.cu", "histogram/aggregated.cu", "histogram_aggregated", "aggregated",
             section=256, threads=256, floats=False),
    Exercise("life_shared", "Hands-On ch. 4 (Using shared memory), conway_ker_shared",
             "the Game of Life of one block in shared memory: all generations on chip, two barriers per generation",
             "life", "life_shared.cu", "life/shared.cu", "conway_shared", "shared", max_length=1024, floats=False),
)

EXERCISES = {e.name: e for e in EXERCISES_IN_ORDER}


def get(name: str) -> Exercise:
    """The exercise called `name`; ValueError naming them all for an unknown one."""
    if name not in EXERCISES:
        raise ValueError(f"unknown exercise {name!r}: expected one of {', '.join(EXERCISES)}")
    return EXERCISES[name]


def guess(path) -> Exercise | None:
    """The exercise a .cu file was started from, read off its first marker line (None if it has none)."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines()[:20]:
        if line.startswith(MARKER):
            name = line[len(MARKER):].split()[0] if line[len(MARKER):].split() else ""
            return EXERCISES.get(name)
    return None
