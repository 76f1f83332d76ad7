"""Lab check: pyscan from a new thread, and from a pool, with faulthandler on (run on a GPU host)."""
import faulthandler
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import pyscan

faulthandler.enable()
mode = sys.argv[1] if len(sys.argv) > 1 else "new"
if mode == "main-first":
    print("main", pyscan.scan(np.arange(5, dtype=np.int32)), flush=True)
result = {}
thread = threading.Thread(target=lambda: result.update(r=pyscan.scan(np.arange(5, dtype=np.int32))))
thread.start()
thread.join()
print("thread", result, flush=True)
with ThreadPoolExecutor(4) as pool:
    print("pool", list(pool.map(lambda i: int(pyscan.reduce(np.arange(i + 10, dtype=np.int64))), range(8))), flush=True)
print("done", flush=True)
