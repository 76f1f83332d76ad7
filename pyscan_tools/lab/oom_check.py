"""Out of memory: a scan whose result cannot fit names what was asked and what is free, no destructor raises, and
pyscan works afterwards.  Run on a GPU host: python pyscan_tools/lab/oom_check.py"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyscan  # noqa: E402
from pyscan.basics import pycuda_context  # noqa: E402


def main():
    drv = pycuda_context()
    import pycuda.gpuarray as ga

    free, _ = drv.mem_get_info()
    x = ga.empty(int(free * 0.6) // 4, np.int32)  # its scan's result (as large) cannot fit beside it
    try:
        pyscan.scan(x)
        print("no error: the result fitted")
    except pyscan.OutOfMemoryError as exc:
        print(f"OutOfMemoryError: {exc}")
    del x
    print("afterwards:", pyscan.scan(ga.to_gpu(np.arange(10, dtype=np.int32))).get()[-1])


if __name__ == "__main__":
    main()
