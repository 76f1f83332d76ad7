"""Scans across blocks (PMPP §11.6-11.7): what one block hands to the next, from the GPU's own arrays.

  hierarchical (Figs. 11.9-11.10)  kernel 1 scans every section and writes its total to S; S is scanned; kernel 3
                                   adds S[b-1] to every element of section b
  single pass (§11.7)              one launch: each block scans its section, waits for its predecessor's flag,
                                   reads the running total scan_value[b], adds it and hands scan_value[b+1] on

The library's kernels run with four elements per block so that 16 elements make four blocks; every array is
read back after its launch and checked against NumPy.  With no GPU the same arrays come from NumPy, and the
picture says so.  (demos/scan_steps.py draws the steps inside one section.)

    python demos/multiblock_scan.py                      # on screen
    python demos/multiblock_scan.py --save docs/images/multiblock_scan_gpu.png
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from pyscan.scans import multiblock
from pyscan_tools.pictures import visual


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=16, help="elements (default 16: four blocks of four)")
    parser.add_argument("--section", type=int, default=multiblock.PICTURE_SECTION,
                        help="elements per block (a power of two, default %(default)s)")
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--save", metavar="PNG", help="write the picture instead of showing it")
    parser.add_argument("--model", action="store_true", help="use NumPy even if a GPU is there")
    args = parser.parse_args(argv)
    if not 2 <= args.size <= min(visual.MAX_PICTURE_COLUMNS, args.section ** 2):
        parser.error(f"--size must be 2 .. {min(visual.MAX_PICTURE_COLUMNS, args.section ** 2)} (the block sums are "
                     f"scanned in one section of {args.section}; wider pictures are unreadable), got {args.size}")
    save = visual.figure_destination(args.save, "multiblock_scan.png")
    device = visual.gpu_or_model(args.model, "the arrays come from NumPy")
    on_gpu = device is not None
    x = np.random.default_rng(args.seed).integers(1, 10, args.size).astype(np.int32)
    hier = multiblock.hierarchical_values(x, section_size=args.section, on_gpu=on_gpu)
    single = multiblock.single_pass_values(x, section_size=args.section, on_gpu=on_gpu)
    source = f"GPU ({device}), every array checked against NumPy" if on_gpu else "NumPy (no GPU)"
    blocks = -(-args.size // args.section)
    print(f"Scans across {blocks} blocks of {args.section} elements, {source}")
    print(f"  hierarchical: block sums S = {hier['sums'].tolist()}, scanned {hier['scanned_sums'].tolist()}")
    print(f"  single pass: hand-offs scan_value[0..{blocks - 1}] = {single['handoff'].tolist()}")
    print(f"  both: {hier['out'].tolist()} (= np.cumsum)")
    fig = visual.draw_step_panels(
        [("hierarchical scan (PMPP §11.6, Figs. 11.9-11.10): three kernels, S between them",
          multiblock.hierarchical_steps(hier, args.section)),
         ("single-pass scan (PMPP §11.7): one kernel, each block waits for the running total of the blocks before it",
          multiblock.single_pass_steps(single, args.section))],
        suptitle=f"{source}: inclusive sum of {args.size} int32, {blocks} blocks of {args.section}", label_width=6.5)
    visual.save_or_show(fig, save)
    return 0


if __name__ == "__main__":
    sys.exit(main())
