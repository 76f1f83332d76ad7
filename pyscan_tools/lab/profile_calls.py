"""Where a public call's host time goes: cProfile over many back-to-back calls on small arrays of each kind.
Run on a GPU host: python pyscan_tools/lab/profile_calls.py [kind ...]"""

import cProfile
import pstats
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyscan  # noqa: E402
from pyscan_tools.lab.per_kind_calls import kinds  # noqa: E402


def main(argv=None) -> int:
    names = (argv if argv is not None else sys.argv[1:]) or ["cupy", "numba"]
    arrays = kinds(np.arange(4096, dtype=np.int32))
    for name in names:
        x = arrays[name]
        for fn in (pyscan.scan, pyscan.reduce):
            for _ in range(50):
                fn(x)
            profile = cProfile.Profile()
            profile.enable()
            for _ in range(3000):
                fn(x)
            profile.disable()
            print(f"==== {fn.__name__} on {name}: 3000 calls")
            pstats.Stats(profile).sort_stats("tottime").print_stats(14)
    return 0


if __name__ == "__main__":
    sys.exit(main())
