"""The picture of temporal blocking in docs/life.md, drawn from the NumPy model of kernels/life/temporal.cu
(pyscan.life.reference.temporal_tile): one tile's shared memory after the load and after generations 1..k, each
cell coloured by whether the model's value there is the true one (the np.roll reference on the torus).

    python -m pyscan_tools.pictures.life_halo [--k 8] [--save docs/images/life_temporal_halo_model.png]

The rows computed shrink by one at the top and the bottom each generation (the k-row halo is used up); across the
row, the cells next to the shared tile's edges go wrong one more column each generation (the words past the tile
are taken as 0), inside the one-word halo: after k generations the output tile -- the framed rectangle -- is
exact, and is the only part the kernel writes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pyscan.life import reference as R  # noqa: E402

NOT_COMPUTED, EXACT, WRONG = 0, 1, 2
DEFAULT_SAVE = "docs/images/life_temporal_halo_model.png"


def tile_status(k: int, *, shape=(300, 3000), tile=(1, 1), density=0.35, seed=0):
    """[(g, status (sh, 32 * SW) of NOT_COMPUTED / EXACT / WRONG)] for one interior tile of a random lattice."""
    lattice = (np.random.default_rng(seed).random(shape) < density).astype(np.uint8)
    height, width = shape
    tx, ty = tile
    history = []
    R.temporal_tile(R.pack_bits(lattice), width, k, tx, ty, history=history)
    y0, x0 = ty * R.TEMPORAL_TILE_ROWS - k, 32 * (tx * R.TEMPORAL_TILE_WORDS - 1)
    out = []
    truth = lattice
    for g, words, (first, end) in history:
        if g:
            truth = R.reference_step(truth, 1)
        cells = R.unpack_bits(words, 32 * words.shape[1])
        rows = (y0 + np.arange(cells.shape[0])) % height
        cols = (x0 + np.arange(cells.shape[1])) % width
        want = truth[np.ix_(rows, cols)]
        status = np.where(cells == want, EXACT, WRONG)
        status[:first] = NOT_COMPUTED
        status[end:] = NOT_COMPUTED
        out.append((g, status))
    return out


def draw(k: int = R.TEMPORAL_DEFAULT_K, zoom: int = 48):
    """The figure: for a few generations g, the whole shared tile (top) and its left `zoom` columns (bottom)."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch, Rectangle

    states = tile_status(k)
    shown = [s for s in states if s[0] in sorted({0, 1, 2, k // 2, k - 1, k})]
    cmap = ListedColormap(["#d9d9d9", "#4daf4a", "#e41a1c"])
    fig, axes = plt.subplots(2, len(shown), figsize=(2.6 * len(shown), 6.2), gridspec_kw={"height_ratios": [1, 1]})
    rows_out, cols_out = R.TEMPORAL_TILE_ROWS, 32 * R.TEMPORAL_TILE_WORDS
    for j, (g, status) in enumerate(shown):
        for ax, cols in ((axes[0, j], status.shape[1]), (axes[1, j], zoom)):
            ax.imshow(status[:, :cols], cmap=cmap, vmin=0, vmax=2, aspect="auto", interpolation="nearest")
            ax.add_patch(Rectangle((31.5, k - 0.5), cols_out, rows_out, fill=False, lw=1.2, ec="black"))
            if cols == zoom:
                ax.axvline(31.5, color="black", lw=0.6, ls=":")
            ax.set_xticks([0, 32, cols - 1] if cols == zoom else [32, cols_out + 32])
            ax.set_yticks([0, k, k + rows_out, status.shape[0] - 1])
            ax.tick_params(labelsize=7)
        what = "after the load" if g == 0 else (f"generation {g}" + (" (stored)" if g == k else ""))
        axes[0, j].set_title(what, fontsize=9)
    axes[0, 0].set_ylabel("shared row (whole tile)", fontsize=8)
    axes[1, 0].set_ylabel(f"shared row (left {zoom} columns)", fontsize=8)
    fig.legend(handles=[Patch(color="#4daf4a", label="computed, exact"), Patch(color="#e41a1c", label="computed, wrong"),
                        Patch(color="#d9d9d9", label="not computed this generation"),
                        Patch(fill=False, ec="black", label="output tile (written)")],
               loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle(f"temporal.cu, k = {k}: one tile of {rows_out} rows x {cols_out} columns with a {k}-row and "
                 f"32-column halo in shared memory ({rows_out + 2 * k} x {32 * (R.TEMPORAL_TILE_WORDS + 2)} cells), "
                 "from the NumPy model", fontsize=9)
    fig.tight_layout(rect=(0, 0.05, 1, 0.95))
    return fig


def main(argv=None):
    from .visual import figure_destination, save_or_show

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, default=R.TEMPORAL_DEFAULT_K)
    parser.add_argument("--save", help=f"the PNG to write (default on screen; {DEFAULT_SAVE} without a display)")
    args = parser.parse_args(argv)
    if not 1 <= args.k <= R.TEMPORAL_MAX_K:
        parser.error(f"--k: 1..{R.TEMPORAL_MAX_K}")
    save = figure_destination(args.save, DEFAULT_SAVE)
    save_or_show(draw(args.k), save)
    return 0


if __name__ == "__main__":
    sys.exit(main())
