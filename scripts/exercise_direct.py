"""Lab: the public calls' direct path (torch and CuPy arrays, default arguments) over lengths and dtypes, every
result checked against NumPy: a process to run under compute-sanitizer, which `python -m pyscan check --sanitize`
does not reach (its cases are GPUArrays and NumPy arrays).

    compute-sanitizer --tool memcheck --error-exitcode 1 python3 scripts/exercise_direct.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import pyscan  # noqa: E402

LENGTHS = (1, 2, 31, 33, 1023, 1025, 4097, 100_003, 1 << 20)
DTYPES = ("int32", "int64", "float32", "float64")


def arrays():
    for library in ("torch", "cupy"):
        try:
            lib = __import__(library)
        except ImportError:
            print(f"{library}: not installed, left out")
            continue
        yield library, (lambda h, lib=lib: lib.from_numpy(h).cuda()) if library == "torch" else lib.asarray


def host(value) -> np.ndarray:
    return value.cpu().numpy() if hasattr(value, "cpu") else value.get()


def main() -> int:
    checked = 0
    for library, make in arrays():
        for dtype in DTYPES:
            for n in LENGTHS:
                values = (np.arange(n) % 7 - 3).astype(dtype)  # small integers: float sums are exact
                x = make(values)
                for _ in range(2):  # the second call surely takes the direct path
                    for op, ufunc in (("add", np.add), ("max", np.maximum), ("min", np.minimum)):
                        scanned, total = host(pyscan.scan(x, op=op)), host(pyscan.reduce(x, op=op))
                        want = ufunc.accumulate(values, dtype=values.dtype)
                        assert np.array_equal(scanned, want), (library, dtype, n, op)
                        assert total == ufunc.reduce(values, dtype=values.dtype), (library, dtype, n, op)
                        checked += 2
    print(f"{checked} direct calls checked against NumPy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
