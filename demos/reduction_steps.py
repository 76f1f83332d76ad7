"""Watch a reduction tree work (PMPP ch. 10): every step of the simple (§10.3), convergent (§10.4), shared-memory
(§10.6) and coarsened (§10.8) kernels, which thread adds which pair at each stride, and which threads and warps
are busy at each step.

Two pictures:
  trees     one block on 16 elements (coarsened: 32, it takes 8 per thread), a row of boxes per step, an arrow
            per combine, the thread that did it in the box's corner
  activity  one block of 128 threads (4 warps): per step the threads that combine and the warps that run, with
            PMPP's execution resources (32 x running warps, summed): simple 864, convergent 384 at N = 256

On a GPU the tree values are the kernels' own: each kernel's TRACE build writes its array after every step, and
the demo checks them against the NumPy step-model step for step (the activity's N = 256 / 1024 runs are checked
the same way, and simple's and convergent's running warps against their COUNT_WORK builds).  The threads and
arrows come from the model's index arithmetic.  With no GPU it draws the models, and says so.

    python demos/reduction_steps.py                       # on screen
    python demos/reduction_steps.py --save out/           # reduction_trees.png, reduction_activity.png
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from pyscan.reductions import steps as rsteps
from pyscan_tools.pictures import visual

TREE_SIZES = {"simple": 16, "convergent": 16, "shared_memory": 16, "coarsened": 32}
ACTIVITY_SIZES = {"simple": 256, "convergent": 256, "shared_memory": 256, "coarsened": 1024}  # 128 threads each


def tree_panels(names, seed, on_gpu):
    panels = []
    for name in names:
        x = np.random.default_rng(seed).integers(0, 10, TREE_SIZES[name]).astype(np.int32)
        values = rsteps.checked_gpu_steps(name, x) if on_gpu else None
        steps, notes = rsteps.picture_steps(name, x, values=values)
        if int(np.asarray(steps[-1].values)[0]) != int(x.sum()):
            raise AssertionError(f"{name}: the last step holds {steps[-1].values}, NumPy's sum is {x.sum()}")
        panels.append((f"{rsteps.TITLES[name]}: {len(steps) - 1} steps, sum = {int(x.sum())}", steps, notes))
    return panels


def activity_panels(names, seed, on_gpu):
    from pyscan.reductions import REDUCTIONS

    panels, notes = [], []
    for name in names:
        n = ACTIVITY_SIZES[name]
        labels, active, threads = rsteps.active_threads(name, n)
        if on_gpu:
            x = np.random.default_rng(seed).integers(-50, 50, n).astype(np.int32)
            rsteps.checked_gpu_steps(name, x)  # the kernel's steps at this size equal the model's
            count = REDUCTIONS.get(name).count_work
            if count is not None:
                work = count(n)
                model = [len(np.unique(np.asarray(a) // 32)) for a in active]
                if list(work.active_warps) != model:
                    raise AssertionError(f"{name}: COUNT_WORK counted {work.active_warps} running warps per step, "
                                         f"the index arithmetic {model}")
                notes.append(f"{name}: running warps per step {model} equal the COUNT_WORK build's count")
        ops = sum(np.asarray(a).size * c for a, c in zip(active, rsteps.combines_per_thread(name, labels)))
        panels.append((f"{rsteps.TITLES[name]}, N = {n}", labels, active, threads, ops))
    return panels, notes


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernels", default=",".join(rsteps.TRACED), help="comma-separated (default %(default)s)")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--save", metavar="DIR", help="write reduction_trees.png and reduction_activity.png here")
    parser.add_argument("--model", action="store_true", help="draw the NumPy step-models even if a GPU is there")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.kernels.split(",") if n.strip()]
    unknown = [n for n in names if n not in rsteps.TRACED]
    if unknown or not names:
        parser.error(f"unknown kernel(s) {unknown}: expected some of {', '.join(rsteps.TRACED)}")
    save = visual.figure_destination(args.save, ".", where="into the current directory")
    device = visual.gpu_or_model(args.model, "drawing the NumPy step-models")
    on_gpu = device is not None
    source = f"GPU trace ({device})" if on_gpu else "NumPy step-model (no GPU)"
    trees = tree_panels(names, args.seed, on_gpu)
    activity, notes = activity_panels(names, args.seed, on_gpu)
    print(f"Reduction trees, {source}")
    for title, _, _ in trees:
        print(f"  {title}" + ("; every step equals the model's" if on_gpu else ""))
    for title, _, active, _, ops in activity:
        warps = [len(np.unique(np.asarray(a) // 32)) for a in active]
        print(f"  {title.split(':')[0]}: {ops} operations, running warps per step {warps}, "
              f"resources 32 x {sum(warps)} = {32 * sum(warps)}")
    for note in notes:
        print(f"  {note}")
    tree_fig = visual.draw_step_panels([(t, s, n) for t, s, n in trees], suptitle=f"{source}: one block, sum",
                                       label_width=4.2)
    activity_fig = visual.draw_activity(
        activity, suptitle=f"Threads at work per step, one block of 128 threads "
                           f"({'index arithmetic; values checked against the GPU trace' if on_gpu else 'NumPy model, no GPU'})")
    visual.save_or_show({"reduction_trees.png": tree_fig, "reduction_activity.png": activity_fig}, save)
    return 0


if __name__ == "__main__":
    sys.exit(main())
