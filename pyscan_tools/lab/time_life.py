"""Tuning script (`python -m pyscan bench life` is the benchmark): timing of the Game of Life kernels per
generation, in Gcell/s, against the book's conway_ker and a device-to-device copy of the lattice bytes (CUDA events,
warm-up, the median of the timed runs).

    python pyscan_tools/lab/time_life.py [--sizes 4096 16384] [--repeats 20] [--warmup 3] [--json out.json] [--sweep-rows]
    python pyscan_tools/lab/time_life.py --smoke     # every kernel on small odd sizes against the reference (for sanitizers)
    python pyscan_tools/lab/time_life.py --sweep-k [--sizes 16384 65536] [--ks 1 2 4 8 12 16] [--json k.json]
                                         [--tile-rows 32 64 128] [--blocks 128 256 512] [--max-k 32]
                                         # temporal (k generations a launch) against fast: Tcell/s against k
                                         # (and the tilings given; default the shipped one)

Each row times `driver.advance(1)` -- one generation, the lattice staying on the device (for `fast`, on its
packed words: packing happens once, outside the timing) -- in batches of BATCH launches between two CUDA events.
`book` is conway_ker exactly as printed (int32 cells, N divisible by 32).  Every kernel starts from the same
random lattice (25 % alive) and runs the same number of generations; its final lattice is compared with the one
of `global`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pyscan.life import LIFE, LIFE_KERNELS, _upload, reference_step  # noqa: E402
from pyscan.life.drivers import FastDriver, TemporalDriver  # noqa: E402
from pyscan.runtime.arrays import Call  # noqa: E402
from pyscan.runtime.driver import device_attributes, multiprocessor_count  # noqa: E402
from pyscan.runtime.loader import get_kernel  # noqa: E402
from pyscan.timing import event_timer  # noqa: E402

BATCH = 10  # launches between two CUDA events: keeps the GPU's queue full, so the host's launch cost is not timed


def time_launches(launch, *, repeats: int, warmup: int, batch: int = BATCH) -> float:
    """Seconds per `launch()`: the median over `repeats` samples, each `batch` back-to-back launches bracketed by
    CUDA events (pyscan.timing: pycuda's, on the legacy default stream, where Call.tool()'s launches go), after
    `warmup` untimed batches."""
    timer = event_timer("pycuda")
    for _ in range(warmup * batch):
        launch()
    return statistics.median(timer.per_call_ms(launch, batch) for _ in range(repeats)) * 1e-3


def random_lattice(size: int, dtype=np.int32, density: float = 0.25, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).random((size, size)) < density).astype(dtype)


def time_kernel(name: str, lattice: np.ndarray, *, repeats: int, warmup: int, **driver_options):
    call = Call.tool()
    driver = LIFE.get(name).driver(_upload(lattice, call), call, **driver_options)
    seconds = time_launches(lambda: driver.advance(1), repeats=repeats, warmup=warmup)
    return seconds, driver.cells().get()


def time_book(lattice: np.ndarray, *, repeats: int, warmup: int):
    """The book's conway_ker (kernels/life/global.cu: conway_ker_book) on int32 cells, grid (N/32, N/32) of 32x32."""
    n = lattice.shape[0]
    if lattice.shape != (n, n) or n % 32:
        raise ValueError("the book's kernel needs an N x N lattice with N divisible by 32")
    call = Call.tool()
    fn = get_kernel("life/global.cu", "conway_ker_book", device=call.device)
    buffers = [_upload(lattice.astype(np.int32), call), call.empty(lattice.shape, np.int32)]

    def launch():
        fn.prepared_call((n // 32, n // 32, 1), (32, 32, 1), buffers[1].gpudata, buffers[0].gpudata)
        buffers.reverse()

    seconds = time_launches(launch, repeats=repeats, warmup=warmup)
    return seconds, buffers[0].get()


def time_copy(nbytes: int, *, repeats: int, warmup: int) -> float:
    call = Call.tool()
    src, dst = call.empty((nbytes,), np.uint8), call.empty((nbytes,), np.uint8)
    call.memset32(src, 0x01010101, nbytes // 4)
    return time_launches(lambda: call.copy(dst, src, nbytes), repeats=repeats, warmup=warmup)


def run(sizes, *, repeats=20, warmup=3, sweep_rows=False, progress=print):
    device = Call.tool().device
    info, sms = device_attributes(device), multiprocessor_count(device)
    rows = []
    for size in sizes:
        cells = size * size
        base = random_lattice(size)
        generations = (warmup + repeats) * BATCH
        copy4 = time_copy(4 * cells, repeats=repeats, warmup=warmup)
        copy1 = time_copy(cells, repeats=repeats, warmup=warmup)
        entries = [("copy int32 lattice (4 B/cell)", copy4, None), ("copy uint8 lattice (1 B/cell)", copy1, None)]
        seconds, expected = time_kernel("global", base, repeats=repeats, warmup=warmup)
        expected = expected.astype(np.uint8)
        entries.append(("global (int32)", seconds, True))
        if size % 32 == 0:
            seconds, out = time_book(base, repeats=repeats, warmup=warmup)
            entries.insert(2, ("book conway_ker (int32)", seconds, bool(np.array_equal(out, expected))))
        plan = [("global", np.uint8, {}), ("tiled", np.int32, {}), ("tiled", np.uint8, {}), ("fast", np.uint8, {})]
        if sweep_rows:
            plan += [("fast", np.uint8, {"rows": r}) for r in (1, 2, 4, 8, 16, 32)]
        for name, dtype, options in plan:
            progress(f"  {size}x{size}: {name} {np.dtype(dtype)} {options or ''}", file=sys.stderr)
            seconds, out = time_kernel(name, base.astype(dtype), repeats=repeats, warmup=warmup, **options)
            label = f"{name} ({np.dtype(dtype)})" if name != "fast" else "fast (bit-packed)"
            if options:
                label += "".join(f" {k}={v}" for k, v in options.items())
            elif name == "fast":
                label += f" rows={FastDriver.default_rows(size, -(-size // 32), sms)}"
            entries.append((label, seconds, bool(np.array_equal(out.astype(np.uint8), expected))))
        book = next((s for label, s, _ in entries if label.startswith("book")), None)
        for label, seconds, ok in entries:
            rows.append({
                "size": size, "kernel": label, "ms": seconds * 1e3, "gcells_per_s": cells / seconds / 1e9,
                "vs_book": (book / seconds) if book else None, "vs_copy_int32": copy4 / seconds,
                "equal_to_global": ok, "generations": generations,
            })
    return {"device": info["name"], "date": time.strftime("%Y-%m-%d %H:%M:%S"), "repeats": repeats,
            "warmup": warmup, "rows": rows}


def format_table(result) -> str:
    lines = [f"Game of Life, one generation, {result['device']}, {result['date']}, median of {result['repeats']} "
             f"after {result['warmup']} warm-up",
             "(Gcell/s = cells / seconds per generation; x copy4 = time of a device-to-device copy of the int32 lattice "
             "/ the kernel's time)",
             f"{'size':>7} {'kernel':<34} {'ms':>9} {'Gcell/s':>9} {'x book':>7} {'x copy4':>8} {'== global':>9}"]
    for r in result["rows"]:
        vs_book = f"{r['vs_book']:.2f}" if r["vs_book"] else "-"
        ok = {None: "-", True: "yes", False: "NO"}[r["equal_to_global"]]
        lines.append(f"{r['size']:>7} {r['kernel']:<34} {r['ms']:>9.4f} {r['gcells_per_s']:>9.1f} {vs_book:>7} "
                     f"{r['vs_copy_int32']:>8.2f} {ok:>9}")
    return "\n".join(lines)


def smoke(generations=30) -> bool:
    """Every kernel on a few small, odd sizes against the reference; short enough for compute-sanitizer."""
    ok = True
    rng = np.random.default_rng(1)
    for shape in [(1, 1), (3, 5), (32, 32), (17, 31), (37, 100), (33, 65)]:
        lattice = (rng.random(shape) < 0.25).astype(np.uint8)
        expected = reference_step(lattice, generations)
        for name in LIFE_KERNELS:
            limit = LIFE.get(name).max_length
            if limit is not None and lattice.size > limit:
                continue
            from pyscan.life import step

            good = np.array_equal(step(lattice, generations, kernel=name), expected)
            ok &= good
            print(f"smoke {name:<16} {shape}: {'ok' if good else 'MISMATCH'}")
    return ok


def sweep_k(sizes, ks, *, tilings=((None, None),), max_k=None, repeats=20, warmup=3, progress=print):
    """temporal.cu with k generations a launch, for each k, against fast.cu (one a launch): seconds per
    generation (a launch of k generations timed as fast's are, divided by k), Tcell/s, and whether the packed
    lattice after all the timed generations equals fast's after as many.  uint8 lattices, 25 % alive (generated
    as bytes: a 65536^2 lattice is 4 GiB on the host)."""
    device = Call.tool().device
    rows = []
    for size in sizes:
        cells = size * size
        lattice = (np.random.default_rng(0).integers(0, 4, size=(size, size), dtype=np.uint8) == 0).astype(np.uint8)
        call = Call.tool()
        copy = time_copy(cells // 8, repeats=repeats, warmup=warmup)  # the packed lattice's bytes, one way
        progress(f"  {size}x{size}: fast", file=sys.stderr)
        fast = FastDriver(_upload(lattice, call), call)
        seconds = time_launches(lambda fast=fast: fast.advance(1), repeats=repeats, warmup=warmup)
        rows.append({"size": size, "kernel": "fast", "k": 1, "ms_per_generation": seconds * 1e3,
                     "tcells_per_s": cells / seconds / 1e12, "vs_fast": 1.0, "equal_to_fast": None,
                     "copy_packed_ms": copy * 1e3})
        fast_seconds = seconds
        for (tile_rows, block), k in [(t, k) for t in tilings for k in ks]:
            progress(f"  {size}x{size}: temporal k={k} tile_rows={tile_rows} block={block}", file=sys.stderr)
            driver = TemporalDriver(_upload(lattice, call), call, generations_per_pass=k, tile_rows=tile_rows,
                                    block=block, max_k=max_k)
            launches = [0]

            def launch(driver=driver, k=k, launches=launches):
                driver.advance(k)
                launches[0] += 1

            seconds = time_launches(launch, repeats=repeats, warmup=warmup) / k
            check = FastDriver(_upload(lattice, call), call)
            check.advance(launches[0] * k)
            equal = bool(np.array_equal(driver._current.get(), check._current.get()))
            rows.append({"size": size, "kernel": f"temporal {driver.tile_rows}r/{driver.block}t", "k": k,
                         "tile_rows": driver.tile_rows, "block": driver.block, "ms_per_generation": seconds * 1e3,
                         "tcells_per_s": cells / seconds / 1e12, "vs_fast": fast_seconds / seconds,
                         "equal_to_fast": equal, "copy_packed_ms": copy * 1e3})
            del driver, check  # the next k's buffers
    return {"device": device_attributes(device)["name"], "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            "repeats": repeats, "warmup": warmup, "rows": rows,
            "tiling": {"tile_rows": TemporalDriver.tile_rows, "tile_words": TemporalDriver.tile_words,
                       "max_k": TemporalDriver.max_k, "block": TemporalDriver.block}}


def format_k_table(result) -> str:
    t = result["tiling"]
    lines = [f"Game of Life, temporal blocking: Tcell/s against k, {result['device']}, {result['date']}, median of "
             f"{result['repeats']} after {result['warmup']} warm-up; shipped tiling {t['tile_rows']} rows x "
             f"{32 * t['tile_words']} columns, {t['block']} threads",
             f"{'size':>7} {'kernel':<20} {'k':>3} {'ms/gen':>9} {'Tcell/s':>8} {'x fast':>7} {'== fast':>8}"]
    for r in result["rows"]:
        ok = {None: "-", True: "yes", False: "NO"}[r["equal_to_fast"]]
        lines.append(f"{r['size']:>7} {r['kernel']:<20} {r['k']:>3} {r['ms_per_generation']:>9.4f} "
                     f"{r['tcells_per_s']:>8.2f} {r['vs_fast']:>7.2f} {ok:>8}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 16384])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--json")
    parser.add_argument("--sweep-rows", action="store_true", help="also time fast with 1..32 rows per thread")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--sweep-k", action="store_true", help="temporal with k generations a launch, against fast")
    parser.add_argument("--ks", type=int, nargs="+", default=[1, 2, 4, 6, 8, 12, 16])
    parser.add_argument("--tile-rows", type=int, nargs="+", default=[None], help="with --sweep-k: TILE_ROWS values")
    parser.add_argument("--blocks", type=int, nargs="+", default=[None], help="with --sweep-k: BLOCK values")
    parser.add_argument("--max-k", type=int, help="with --sweep-k: MAX_K (shared tile size), up to 32; --ks up to it")
    args = parser.parse_args(argv)
    if args.smoke:
        return 0 if smoke() else 1
    if args.repeats < 10:
        parser.error("--repeats: at least 10")
    if args.sweep_k:
        max_k = args.max_k or TemporalDriver.max_k
        if not all(1 <= k <= max_k for k in args.ks):
            parser.error(f"--ks: each in 1..{max_k} (--max-k)")
        tilings = [(t, b) for t in args.tile_rows for b in args.blocks]
        result = sweep_k(args.sizes, args.ks, tilings=tilings, max_k=args.max_k, repeats=args.repeats,
                         warmup=args.warmup)
        print(format_k_table(result))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=1)
        return 0 if all(r["equal_to_fast"] is not False for r in result["rows"]) else 1
    result = run(args.sizes, repeats=args.repeats, warmup=args.warmup, sweep_rows=args.sweep_rows)
    print(format_table(result))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
