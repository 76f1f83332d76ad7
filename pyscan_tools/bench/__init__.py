"""python -m pyscan bench: pyscan's public calls beside the libraries users would call instead, timed in one run.

    settings.py  sizes, batches, caps, what every JSON field means
    arrays.py    the array kinds a user holds (CuPy, torch, pycuda): upload, download, device copy, CUDA events
    entries.py   pyscan's rows: the public function on each kind, and its driver alone
    peers.py     the libraries' rows: torch, CuPy, PyCUDA, cuda.compute (CUB), the book's Life kernel
    measure.py   per-call time of back-to-back calls (pyscan.timing), and the statistics
    run.py       the run: cases, sizes, inputs, checks, skips, errors
    report.py    the targets, the table, the JSON, the plot
    cli.py       the command
"""
