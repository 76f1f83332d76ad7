"""The process compute-sanitizer runs for the checker: a few small integer cases of one exercise on a student's
kernel, with line information in the kernels and every buffer allocated exactly (so that an overrun of one element
leaves the allocation).  Prints one line per case and "worker: FAILED" if a case was wrong or raised.

    python -m pyscan_tools.exercises.worker FILE EXERCISE
"""

from __future__ import annotations

import sys

import numpy as np


def main(argv=None) -> int:
    from ..check.exercise import _configure
    from . import runners
    from .checker import sanitizer_cases
    from .registry import get

    path, name = (argv or sys.argv[1:])[:2]
    exercise = get(name)
    _configure(exact_alloc=True, lineinfo=True)
    failed = False
    for case in sanitizer_cases(exercise):
        try:
            result = runners.run(exercise, runners.target(exercise, path), case)
            want, tolerance = runners.expected(exercise, case)
            right = bool(np.all(runners.compare(want, result.got, tolerance))) and not len(result.guard_written)
            print(f"{'ok' if right else 'wrong':6s} {case.label}", flush=True)
            failed = failed or not right
        except Exception as exc:  # noqa: BLE001 - reported, then the tool's summary follows
            print(f"error  {case.label}: {type(exc).__name__}: {exc}", flush=True)
            failed = True
            break
    print("worker: FAILED" if failed else "worker: done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
