"""The books' exercises and their checker, from the library's namespace (the code lives with the tools, in
pyscan_tools/exercises/: it drives compute-sanitizer, nvcc and matplotlib, which the library itself never needs).

    import pyscan.exercises
    report = pyscan.exercises.check("kogge_stone.cu", "kogge_stone")   # a table in a terminal, HTML in Jupyter
    pyscan.exercises.start("kogge_stone", "my_exercises/")             # the stub and the headers it includes
    pyscan.exercises.names()                                           # every exercise, in the books' order
"""

from __future__ import annotations


def check(path, exercise=None, **options):
    """Check a kernel file against an exercise (its name; None: read off the stub's marker line): a Report."""
    from pyscan_tools.exercises import check as _check

    return _check(path, exercise, **options)


def start(name, folder=".", *, force=False):
    """Write the exercise's stub file(s) and the headers they include into `folder`; returns the paths written."""
    from pyscan_tools.exercises import start as _start

    return _start(name, folder, force=force)


def names() -> tuple:
    from pyscan_tools.exercises import EXERCISES_IN_ORDER

    return tuple(e.name for e in EXERCISES_IN_ORDER)
