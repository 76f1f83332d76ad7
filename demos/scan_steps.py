"""Watch a scan work: every step of Kogge-Stone (PMPP Fig. 11.2), Brent-Kung (Fig. 11.5) and Blelloch's up- and
down-sweep (Hands-On ch. 4), drawn as rows of boxes with an arrow for every combine.

On a GPU the values are the kernels' own: each algorithm's TRACE build writes its shared-memory array to a debug
buffer after every step.  The arrows come from the algorithm's NumPy step-model, and the demo checks that the
GPU's values equal the model's, step by step.  With no GPU it draws the NumPy step-model, and says so.

    python demos/scan_steps.py                          # 16 elements, on screen
    python demos/scan_steps.py --save docs/images/scan_steps.png
    python demos/scan_steps.py --save out/ --size 32 --algorithms kogge_stone,brent_kung --exclusive
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

import pyscan
from pyscan.scans import SCANS
from pyscan.scans.reference import reference
from pyscan_tools.pictures import visual

DEFAULT_ALGORITHMS = ("kogge_stone", "brent_kung", "blelloch")
TITLES = {
    "naive": "Hillis-Steele (Hands-On's naive scan)",
    "kogge_stone": "Kogge-Stone (PMPP Fig. 11.3)",
    "kogge_stone_double_buffer": "Kogge-Stone, double buffer (PMPP §11.2)",
    "brent_kung": "Brent-Kung (PMPP Fig. 11.7)",
    "blelloch": "Blelloch (Hands-On ch. 4, one launch per level)",
    "blelloch_block": "Blelloch, in shared memory (the lab report's kernel)",
}
PICTURE_SUFFIXES = (".png", ".svg", ".pdf", ".jpg")
# Scans whose picture is not one section's steps: refused with the reason (and where they are drawn instead).
MULTI_BLOCK = {
    "hierarchical": "a multi-block scheme (PMPP §11.6): its one-section steps are those of its block scan "
                    "('coarsened'); demos/multiblock_scan.py draws its kernels and block sums",
    "single_pass": "a multi-block scan (PMPP §11.7): one section of it is Brent-Kung ('brent_kung'); "
                   "demos/multiblock_scan.py draws its hand-off between blocks",
    "decoupled_lookback": "its tiles hold thousands of elements per block, far too wide to draw; "
                          "demos/multiblock_scan.py draws the single-pass hand-off it refines",
}


def resolve(name: str, on_gpu: bool) -> str | None:
    """A registered algorithm name for `name`.  "blelloch" means the in-shared-memory blelloch_block when it has a
    trace build (or, without a GPU, a model), else the per-level blelloch."""
    names = SCANS.names()
    if name == "blelloch" and "blelloch_block" in names:
        block = SCANS.get("blelloch_block")
        if (block.trace if on_gpu else block.model) is not None:
            return "blelloch_block"
    return name if name in names else None


def model_steps(algorithm, x, op, exclusive):
    result, steps = algorithm.model(x, op=op, exclusive=exclusive, return_steps=True)
    return np.asarray(result), list(steps)


def gpu_steps(algorithm, x, op, exclusive, steps):
    """The GPU trace as Steps (the trace's values, the model's labels and edges); checks them against the model."""
    trace = algorithm.trace(x, op=op, exclusive=exclusive)
    if len(trace) != len(steps):
        raise AssertionError(f"{algorithm.name}: the GPU trace has {len(trace)} steps, the model {len(steps)}")
    out = []
    for k, (values, step) in enumerate(zip(trace, steps)):
        values = np.asarray(values)
        if x.dtype.kind in "iu" and not np.array_equal(values, step.values):
            bad = np.flatnonzero(values != step.values)
            raise AssertionError(f"{algorithm.name}: step {k} ({step.label!r}) differs from the model at indices "
                                 f"{bad[:8].tolist()}: GPU {values[bad[:8]].tolist()}, model "
                                 f"{np.asarray(step.values)[bad[:8]].tolist()}")
        out.append(dataclasses.replace(step, values=values.copy(), edges=list(step.edges)))
    return out


def collect(names, x, op, exclusive, device):
    """[(name, title, steps)] and the source of the values ("GPU trace (...)" or "NumPy step-model (no GPU)")."""
    panels = []
    for requested in names:
        name = resolve(requested, device is not None)
        if name is None:
            print(f"skipping {requested!r}: not a registered scan (registered: {', '.join(SCANS.names())})")
            continue
        if name in MULTI_BLOCK:
            print(f"skipping {name}: {MULTI_BLOCK[name]}")
            continue
        algorithm = SCANS.get(name)
        if algorithm.model is None:
            print(f"skipping {name}: it has no NumPy step-model")
            continue
        result, steps = model_steps(algorithm, x, op, exclusive)
        width = max(len(step.values) for step in steps)
        if width > visual.MAX_PICTURE_COLUMNS:
            print(f"skipping {name}: its steps are {width} values wide (its section), more than a picture can "
                  f"show ({visual.MAX_PICTURE_COLUMNS})")
            continue
        expected = reference(x, op, exclusive)
        if x.dtype.kind in "iu" and not np.array_equal(result, expected):
            raise AssertionError(f"{name}: the step-model's result differs from NumPy's scan")
        if device is not None:
            if algorithm.trace is None:
                print(f"skipping {name}: it has no TRACE build (no 'trace' option)")
                continue
            steps = gpu_steps(algorithm, x, op, exclusive, steps)
            if not np.array_equal(np.asarray(steps[-1].values)[: x.size], expected):
                print(f"note: {name}'s last traced step is not the scan itself (the kernel finishes it after the trace)")
        panels.append((name, f"{TITLES.get(name, name)}: {len(steps) - 1} steps, "
                             f"{visual.count_additions(steps)} combines", steps))
    return panels


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=16, help="elements (default 16; pictures stay readable to ~32)")
    parser.add_argument("--algorithms", default=",".join(DEFAULT_ALGORITHMS),
                        help="comma-separated scan names (default %(default)s; 'blelloch' picks blelloch_block "
                             "when it has a trace build)")
    parser.add_argument("--op", default="add", choices=("add", "max", "min"))
    parser.add_argument("--exclusive", action="store_true", help="draw the exclusive scan")
    parser.add_argument("--dtype", default="int32", choices=("int32", "int64"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--save", metavar="DIR_OR_FILE",
                        help="write a picture instead of showing one: a FILE (.png/.svg/.pdf) gets all algorithms; "
                             "a DIR gets scan_steps.png and one scan_steps_<name>.png per algorithm")
    parser.add_argument("--model", action="store_true", help="draw the NumPy step-model even if a GPU is there")
    args = parser.parse_args(argv)
    if args.size < 2:
        parser.error(f"--size must be at least 2, got {args.size}")
    if args.size > visual.MAX_PICTURE_COLUMNS:
        parser.error(f"--size {args.size}: at most {visual.MAX_PICTURE_COLUMNS} elements make a readable picture "
                     "(16 or 32 read best)")
    save = visual.figure_destination(args.save, "scan_steps.png")
    x = np.random.default_rng(args.seed).integers(0, 10, args.size).astype(args.dtype)
    device = visual.gpu_or_model(args.model, "drawing the NumPy step-models")
    names = [n.strip() for n in args.algorithms.split(",") if n.strip()]
    try:
        panels = collect(names, x, args.op, args.exclusive, device)
    except pyscan.GPUUnavailableError as exc:  # pycuda is there but the device is not usable after all
        print(f"no GPU ({exc}): drawing the NumPy step-models")
        device = None
        panels = collect(names, x, args.op, args.exclusive, device)
    if not panels:
        print("nothing to draw")
        return 1
    source = f"GPU trace ({device})" if device is not None else "NumPy step-model (no GPU)"
    what = f"{'exclusive' if args.exclusive else 'inclusive'} scan, op {args.op}, {args.size} {args.dtype} elements"
    suptitle = f"{source}: {what}"
    print(suptitle)
    for _, title, _ in panels:
        print(f"  {title}" + ("; every step equals the model's" if device is not None else ""))

    fig = visual.draw_step_panels([(title, steps) for _, title, steps in panels], suptitle=suptitle, valid=args.size)
    if save is not None and Path(save).suffix.lower() not in PICTURE_SUFFIXES:  # a folder: one picture per algorithm
        figures = {"scan_steps.png": fig}
        for name, title, steps in panels:
            figures[f"scan_steps_{name}.png"] = visual.draw_step_panels([(title, steps)], suptitle=suptitle,
                                                                        valid=args.size)
        fig = figures
    visual.save_or_show(fig, save)
    return 0


if __name__ == "__main__":
    sys.exit(main())
