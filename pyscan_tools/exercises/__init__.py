"""Learn by doing: the books' exercises as stubs, and a checker that says exactly what is wrong.

    python -m pyscan exercise list                      every exercise with its book section
    python -m pyscan exercise start NAME [DIR]          the stub (and a stub driver) in DIR, headers beside it
    python -m pyscan exercise check FILE [--exercise NAME] [--picture PNG]

    from pyscan_tools.exercises import check
    report = check("kogge_stone.cu", "kogge_stone")     # a Report: str() a table, _repr_html_ in Jupyter

The checker's stages, stopping at the first class of failure: compiles -> right on integers -> right on floats ->
step by step -> races and memory -> speed (checker.py).  The project's own kernels are the worked solutions
(registry.py names them); tests/fakes/exercises/ holds known-wrong kernels the checker must catch.
"""

from .registry import EXERCISES, EXERCISES_IN_ORDER, Exercise, get, guess
from .report import Report, Stage
from .starting import start


def check(path, exercise=None, **options):
    """Check a kernel file against an exercise (its name, or None to read it off the stub's marker line): a Report.
    Options: picture=PATH (a PNG of the first diverging step), sanitize=True, speed=True, gpu=None (auto)."""
    from .checker import check as _check

    return _check(path, exercise, **options)


__all__ = ["EXERCISES", "EXERCISES_IN_ORDER", "Exercise", "Report", "Stage", "check", "get", "guess", "start"]
