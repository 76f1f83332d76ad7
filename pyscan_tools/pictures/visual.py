"""Pictures of scan steps and of counted work (PMPP Figs. 11.2 and 11.5, Hands-On ch. 4's sweeps).

    draw_steps(steps)            one algorithm: a row of boxes per step, arrows for the combines of that step
    draw_step_panels(panels)     several algorithms stacked in one figure
    draw_work(ns, measured)      additions against N beside the books' formulas
    draw_activity(panels)        which threads and warps work at each step of a reduction tree (PMPP ch. 10)

For the demos' figures (the same choices in every demo):

    gpu_or_model(use_model, without)    the GPU's name when the pictures can come from it, else None (and why)
    figure_destination(save, default)   a file or folder to write to, or None to show on screen
    save_or_show(figures, save)         show the figure(s), or write them and say where

A step is a pyscan.scans.steps.Step: `values` (the array after the step) and `edges` ((src, dst) pairs:
values[dst] = op(old[src], old[dst])).  The pictures only read those, so the same function draws a NumPy
step-model and a GPU trace (the trace's values with the model's edges).

The books' work formulas (additions for an inclusive scan of N = 2^k elements, one section):

    sequential    N - 1                 (PMPP §11.1)
    Kogge-Stone   N log2 N - (N - 1)    (PMPP §11.3: step with stride s adds into the N - s elements i >= s)
    Brent-Kung    2N - 2 - log2 N       (PMPP §11.4: N - 1 in the reduction tree, N - 1 - log2 N in the reverse tree)
    Blelloch      2(N - 1)              (up-sweep N - 1, down-sweep N - 1: one combine per tree node per sweep;
                                         the down-sweep's swap "left = old right" moves a value and is no addition.
                                         Counted for the exclusive scan, Blelloch's natural result.)

matplotlib is imported inside the drawing functions, so importing this module costs nothing; pass `ax=` to
draw into your own axes, or use the Agg backend (MPLBACKEND=Agg) to draw with no display.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import numpy as np

# --- counting --------------------------------------------------------------------------------------------------

BOOK_FORMULAS = {
    "sequential": ("N - 1", lambda n: n - 1),
    "kogge_stone": ("N log2 N - (N - 1)", lambda n: n * _log2(n) - (n - 1)),
    "brent_kung": ("2N - 2 - log2 N", lambda n: 2 * n - 2 - _log2(n)),
    "blelloch": ("2(N - 1)", lambda n: 2 * (n - 1)),
}

# Which formula each registered scan follows (algorithms that do the same combines as a book one).
FORMULA_OF = {
    "sequential": "sequential",
    "naive": "kogge_stone",  # Hillis-Steele: the same strides as Kogge-Stone
    "kogge_stone": "kogge_stone",
    "kogge_stone_double_buffer": "kogge_stone",
    "brent_kung": "brent_kung",
    "blelloch": "blelloch",
    "blelloch_block": "blelloch",
}

FAMILY_NAMES = {
    "sequential": "sequential",
    "kogge_stone": "Kogge-Stone",
    "brent_kung": "Brent-Kung",
    "blelloch": "Blelloch",
}


def _log2(n: int) -> int:
    if n < 1 or n & (n - 1):
        raise ValueError(f"the book formulas are for a power of two N, got {n}")
    return n.bit_length() - 1


def book_additions(algorithm: str, n: int) -> int:
    """The book's count of additions for `algorithm` (a FORMULA_OF key) on n = 2^k elements."""
    if algorithm not in FORMULA_OF:
        raise ValueError(f"no book formula for {algorithm!r}: expected one of {', '.join(map(repr, FORMULA_OF))}")
    return BOOK_FORMULAS[FORMULA_OF[algorithm]][1](n)


def count_additions(steps) -> int:
    """Combines (operator applications) a list of Steps performed: the number of edges."""
    return sum(len(step.edges) for step in steps)


def sequential_model(x, *, return_steps=True):
    """The sequential scan (PMPP Fig. 11.1) as steps: one combine a step, N - 1 in all.  The work baseline."""
    from pyscan.scans.steps import Step

    a = np.array(x, copy=True)
    steps = [Step("load", a.copy(), [])]
    for i in range(1, a.size):
        a[i] = a[i - 1] + a[i]
        steps.append(Step(f"i = {i}", a.copy(), [(i - 1, i)]))
    return (a, steps) if return_steps else a


def reduction_warp_slots(kernel: str, n: int) -> tuple[int, list]:
    """PMPP ch. 10's execution-resource count, derived from the kernel's index arithmetic (no GPU):
    (additions, active warps per step) of a single-block sum reduction of n = 2^k elements by n/2 threads.

    simple (Fig. 10.6):     step with stride s = 1, 2, ..., n/2: thread t is active if t % s == 0
    convergent (Fig. 10.9): step with stride s = n/2, ..., 1:     thread t is active if t < s
    A warp is counted in a step if any of its threads is active; the resources are 32 x active warps summed.
    The counts are the kernels' NumPy models' (pyscan.reductions.model_count_work), read off the same index
    arithmetic the kernels use.
    """
    from pyscan.reductions import model_count_work

    if kernel not in ("simple", "convergent"):
        raise ValueError(f"unknown reduction kernel {kernel!r}: expected 'simple' or 'convergent'")
    work = model_count_work(kernel, n)
    return int(work.additions), [int(w) for w in work.active_warps]


# --- drawing the steps -----------------------------------------------------------------------------------------

COMBINED = "#f4a259"  # a box that got op(old[src], old[dst]) in this step
CHANGED = "#cfe3f5"  # a box whose value changed without a combine (Blelloch's swap, "zero last", a shifted load)
PLAIN = "white"
ARROW = "#b23a48"
OWN = "#9a9a9a"
MOVE = "#2a7ab0"

_BOX_W, _BOX_H = 0.84, 0.62
_INCH_PER_UNIT = 0.62  # figure inches per element column


def _format(value) -> str:
    if isinstance(value, (np.integer, int)):
        return str(int(value))
    value = float(value)
    if math.isinf(value):
        return "-inf" if value < 0 else "inf"
    return f"{value:.3g}"


def _wrap(label: str, width_units: float, fontsize: float) -> str:
    """The step label broken into lines that fit the label column (an average character is ~0.55 em wide)."""
    import textwrap

    chars = max(8, int(width_units * _INCH_PER_UNIT * 72 / (0.55 * fontsize)))
    return textwrap.fill(str(label), width=chars)


def _row_gaps(steps) -> list:
    """Vertical distance between row r-1 and row r: more room where arrows are long and slanted."""
    gaps = []
    for step in steps[1:]:
        span = max((abs(d - s) for s, d in step.edges), default=0)
        gaps.append(1.15 + 0.12 * min(span, 8) if step.edges else 1.0)
    return gaps


MAX_PICTURE_COLUMNS = 64  # boxes per row beyond which a step picture is unreadable (and a figure huge)


def steps_height(steps) -> float:
    """Height of draw_steps' picture in data units (one element column = 1)."""
    return sum(_row_gaps(steps)) + _BOX_H + 1.0


def draw_steps(steps, *, ax=None, title=None, label_width=3.2, show_own_input=True, fontsize=None, valid=None,
               notes=None, width=None):
    """Draw a list of Steps: one row of boxes per step (top to bottom) holding the values, and for every combine
    (src, dst) of a step an arrow from box src of the row above to box dst.  A thin grey line marks dst's own
    operand.  Orange boxes are combine results; light blue boxes changed without a combine, with a dashed blue
    arrow where the value came from a partner of a combine (Blelloch's swap).  The arrows' gid is "combine" or
    "move".  valid: the number of real elements; boxes past it (the identity padding of a power-of-two section)
    get a dashed grey outline and grey text.

    A step may change the array's length (a reduction's "block results", a hierarchical scan's block sums): its
    edges then say where its values came from, src an index into the row above.  A box with one incoming edge
    that holds exactly the source's value was copied (light blue, dashed arrow); any other box with incoming
    edges was combined from them (orange).  A step that changes the length without edges is refused.
    notes: one {index: text} per step (or None), drawn small in the box's corner (e.g. the thread that did the
    combine); width: the number of columns to lay out (default: the longest row).  Returns the axes.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, Rectangle

    if not steps:
        raise ValueError("draw_steps: no steps to draw")
    n = len(steps[0].values)
    for r, step in enumerate(steps):
        values = np.asarray(step.values)
        if values.ndim != 1 or values.size == 0:
            raise ValueError(f"draw_steps: step {r} ({step.label!r}) has {values.shape} values, expected a 1-D row")
        if r and values.size != len(steps[r - 1].values) and not step.edges:
            raise ValueError(f"draw_steps: step {r} ({step.label!r}) has {values.size} values after a row of "
                             f"{len(steps[r - 1].values)}, and no edges saying where they came from")
    columns = max(len(step.values) for step in steps) if width is None else int(width)
    if columns > MAX_PICTURE_COLUMNS:
        raise ValueError(f"draw_steps: rows of {columns} values are too wide to draw (at most "
                         f"{MAX_PICTURE_COLUMNS}); draw a smaller input")
    gaps = _row_gaps(steps)
    ys = [0.0]
    for g in gaps:
        ys.append(ys[-1] - g)
    if ax is None:
        fig_width = (columns + label_width + 0.6) * _INCH_PER_UNIT
        height = (steps_height(steps) + (0.8 if title else 0.3)) * _INCH_PER_UNIT
        _, ax = plt.subplots(figsize=(fig_width, height))
    if fontsize is None:
        longest = max(len(_format(v)) for step in steps for v in step.values)
        fontsize = 10 if longest <= 3 else 9 if longest <= 4 else 7.5 if longest <= 5 else 6
    for i in range(n):  # element indices above the first row
        ax.text(i, ys[0] + _BOX_H / 2 + 0.2, str(i), ha="center", va="bottom", fontsize=fontsize - 2, color="#666")
    if valid is not None and valid < n:
        ax.text((valid + n - 1) / 2, ys[0] + _BOX_H / 2 + 0.55, "identity padding", ha="center", va="bottom",
                fontsize=fontsize - 2, color="#888", style="italic")
    for r, step in enumerate(steps):
        y = ys[r]
        values = np.asarray(step.values)
        prev = np.asarray(steps[r - 1].values) if r else None
        reshaped = prev is not None and prev.size != values.size
        dsts = {int(d) for _, d in step.edges}
        copies = _copies(step, prev) if reshaped else set()
        for i in range(values.size):
            if i in copies:
                face = CHANGED
            elif i in dsts:
                face = COMBINED
            elif prev is not None and not reshaped and not _same(values[i], prev[i]):
                face = CHANGED
            else:
                face = PLAIN
            pad = valid is not None and i >= valid and values.size == n
            ax.add_patch(Rectangle((i - _BOX_W / 2, y - _BOX_H / 2), _BOX_W, _BOX_H, facecolor=face,
                                   edgecolor="#999" if pad else "#333", linewidth=0.8, linestyle="--" if pad else "-",
                                   zorder=2))
            ax.text(i, y, _format(values[i]), ha="center", va="center", fontsize=fontsize, zorder=3,
                    color="#888" if pad else "black")
            note = (notes[r] or {}).get(i) if notes is not None and r < len(notes) else None
            if note is not None:
                ax.text(i + _BOX_W / 2 - 0.04, y - _BOX_H / 2 + 0.03, str(note), ha="right", va="bottom",
                        fontsize=max(6, fontsize - 3.5), color="#555", zorder=3)
        ax.text(-0.75, y, _wrap(step.label, label_width - 0.3, fontsize), ha="right", va="center", fontsize=fontsize,
                color="#222", linespacing=1.0)
        if r == 0:
            continue
        y_from, y_to = ys[r - 1] - _BOX_H / 2, y + _BOX_H / 2
        for src, dst in ([] if reshaped else _moves(step, prev, dsts)):
            ax.add_patch(FancyArrowPatch((src, y_from), (dst, y_to), arrowstyle="-|>", mutation_scale=9,
                                         color=MOVE, linewidth=1.0, linestyle=(0, (3, 2)), shrinkA=0, shrinkB=1,
                                         zorder=1.4, gid="move"))
        for src, dst in step.edges:
            src, dst = int(src), int(dst)
            if dst in copies:
                ax.add_patch(FancyArrowPatch((src, y_from), (dst, y_to), arrowstyle="-|>", mutation_scale=9,
                                             color=MOVE, linewidth=1.0, linestyle=(0, (3, 2)), shrinkA=0, shrinkB=1,
                                             zorder=1.4, gid="move"))
                continue
            if show_own_input and not reshaped:
                ax.plot([dst, dst], [y_from, y_to], color=OWN, linewidth=0.7, zorder=1)
            ax.add_patch(FancyArrowPatch((src, y_from), (dst, y_to), arrowstyle="-|>", mutation_scale=9,
                                         color=ARROW, linewidth=1.0, shrinkA=0, shrinkB=1, zorder=1.5,
                                         gid="combine"))
    ax.set_xlim(-label_width - 0.6, columns - 0.4)
    ax.set_ylim(ys[-1] - _BOX_H / 2 - 0.25, ys[0] + _BOX_H / 2 + 0.75)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=fontsize + 2, loc="left", fontweight="bold")
    return ax


def _moves(step, prev, dsts) -> list:
    """Values a step moved without combining, as (from, to) pairs, inferred for pictures only: for a combine
    (src, dst) whose src box changed without being combined into and now holds dst's old value, the step moved
    old[dst] to src.  That is Blelloch's down-sweep swap (left = old right; right = old left + old right)."""
    moves = []
    values = np.asarray(step.values)
    for src, dst in step.edges:
        src, dst = int(src), int(dst)
        if src not in dsts and not _same(values[src], prev[src]) and _same(values[src], prev[dst]):
            moves.append((dst, src))
    return moves


def _copies(step, prev) -> set:
    """Destinations of a length-changing step that were copied, not combined: one incoming edge, and the
    source's value unchanged."""
    incoming = {}
    for src, dst in step.edges:
        incoming.setdefault(int(dst), []).append(int(src))
    values = np.asarray(step.values)
    return {d for d, srcs in incoming.items() if len(srcs) == 1 and _same(values[d], prev[srcs[0]])}


def _same(a, b) -> bool:
    return bool(a == b) or (isinstance(a, (float, np.floating)) and math.isnan(a) and math.isnan(b))


def draw_step_panels(panels, *, suptitle=None, legend=True, label_width=3.2, valid=None):
    """Draw several algorithms stacked in one figure.  panels: a list of (title, steps) or (title, steps, notes)
    (notes as in draw_steps); valid as in draw_steps.  Rows may change length (see draw_steps); the figure is as
    wide as the longest row of any panel, at most MAX_PICTURE_COLUMNS boxes (ValueError beyond).
    Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    if not panels:
        raise ValueError("draw_step_panels: nothing to draw")
    panels = [tuple(p) + (None,) * (3 - len(p)) for p in panels]
    n = max(len(step.values) for _, steps, _ in panels for step in steps)
    if n > MAX_PICTURE_COLUMNS:
        raise ValueError(f"draw_step_panels: rows of {n} values are too wide to draw (at most "
                         f"{MAX_PICTURE_COLUMNS}); draw a smaller input")
    heights = [steps_height(steps) + 0.9 for _, steps, _ in panels]
    extra = (1.3 if suptitle else 0) + (0.9 if legend else 0)
    width = (n + label_width + 0.6) * _INCH_PER_UNIT
    fig, axes = plt.subplots(len(panels), 1, figsize=(width, (sum(heights) + extra) * _INCH_PER_UNIT),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (title, steps, notes) in zip(axes[:, 0], panels):
        draw_steps(steps, ax=ax, title=title, label_width=label_width, valid=valid, notes=notes, width=n)
    if legend:
        handles = [Patch(facecolor=COMBINED, edgecolor="#333", label="combined this step (arrow: the other operand)"),
                   Patch(facecolor=CHANGED, edgecolor="#333",
                         label="changed without a combine edge: moved (dashed arrow: from where), cleared or stored")]
        fig.legend(handles=handles, loc="lower center", ncol=2, frameon=False, fontsize=10 if n >= 14 else 7)
    if suptitle:
        fig.suptitle(suptitle, fontsize=13, y=1 - 0.35 / (sum(heights) + extra), va="top")
    top = 1 - 1.3 / (sum(heights) + extra) if suptitle else 0.99
    bottom = 0.9 / (sum(heights) + extra) if legend else 0.01
    fig.subplots_adjust(left=0.01, right=0.99, top=top, bottom=bottom, hspace=0.05)
    return fig


# --- drawing which threads work (PMPP ch. 10) ------------------------------------------------------------------

IDLE_LANE = "#f6d7b0"  # an idle thread in a warp that still runs (a wasted lane)
ACTIVE_LANE = "#b23a48"


def draw_activity(panels, *, warp_size=32, suptitle=None):
    """Threads that work at each step of a reduction tree, as PMPP ch. 10 counts them: one row per step, one column
    per thread of the block; dark = the thread combines, light = idle but its warp runs (some thread of the warp
    is active), white = the whole warp is idle.  Right of each row: the warps that run.  panels: a list of
    (title, labels, active, threads) or (title, labels, active, threads, operations) with `active` one array of
    active thread ids per step.  Each panel's title gets the operations (default: active threads summed) and the
    execution resources (warp_size x running warps summed).  Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    if not panels:
        raise ValueError("draw_activity: nothing to draw")
    panels = [tuple(p) + (None,) * (5 - len(p)) for p in panels]
    heights = [len(p[1]) + 1.6 for p in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(12, 0.34 * sum(heights) + (0.6 if suptitle else 0.2)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    cmap = ListedColormap(["white", IDLE_LANE, ACTIVE_LANE])
    for ax, (title, labels, active, threads, operations) in zip(axes[:, 0], panels):
        grid = np.zeros((len(labels), threads), np.int8)
        warps_per_step = []
        for r, ids in enumerate(active):
            ids = np.asarray(ids, int)
            running = np.unique(ids // warp_size)
            for w in running:
                grid[r, w * warp_size:min((w + 1) * warp_size, threads)] = 1
            grid[r, ids] = 2
            warps_per_step.append(len(running))
        ax.imshow(grid, cmap=cmap, vmin=0, vmax=2, aspect="auto", interpolation="nearest")
        for w in range(warp_size, threads, warp_size):
            ax.axvline(w - 0.5, color="#333", linewidth=1.2)
        ax.set_yticks(range(len(labels)))
        ax.set_yticklabels(labels, fontsize=8)
        ticks = list(range(0, threads, warp_size))
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"warp {k}\nthread {t}" for k, t in enumerate(ticks)], fontsize=7)
        for r, w in enumerate(warps_per_step):
            ax.text(threads + 0.5, r, f" {w} warp{'s' if w != 1 else ''}", va="center", fontsize=8)
        ops = int(sum(np.asarray(a).size for a in active)) if operations is None else int(operations)
        ax.set_title(f"{title}\n{ops} operations, {warp_size} x {sum(warps_per_step)} running warps = "
                     f"{warp_size * sum(warps_per_step)} execution resources", fontsize=9, loc="left")
        ax.set_xlim(-0.5, threads - 0.5)
    from matplotlib.patches import Patch

    fig.legend(handles=[Patch(facecolor=ACTIVE_LANE, label="thread combines"),
                        Patch(facecolor=IDLE_LANE, label="idle thread of a running warp (a wasted lane)"),
                        Patch(facecolor="white", edgecolor="#999", label="warp idle (costs nothing)")],
               loc="lower center", ncol=3, frameon=False, fontsize=9)
    if suptitle:
        fig.suptitle(suptitle, fontsize=11)
    fig.tight_layout(rect=(0, 0.035, 1, 1))
    return fig


# --- drawing the work ------------------------------------------------------------------------------------------

_STYLE = {"sequential": ("#555555", "o"), "kogge_stone": ("#b23a48", "s"), "brent_kung": ("#2a7ab0", "^"),
          "blelloch": ("#3a9a5b", "D")}


def draw_work(ns, measured, *, title=None, source="measured"):
    """Plot additions against N.  measured: {name: [count or None per N]} with names that FORMULA_OF knows
    (counts drawn as markers, labelled with `source`: one string, or {name: string}); the book formula of each
    family is drawn as a line.  Left: additions (log-log);
    right: additions per element (log2 x), where O(N) work is flat and Kogge-Stone's N log2 N climbs.
    Returns the figure."""
    import matplotlib.pyplot as plt

    ns = [int(n) for n in ns]
    fig, (ax_work, ax_per) = plt.subplots(1, 2, figsize=(12, 4.8))
    families = []
    for name in measured:
        fam = FORMULA_OF.get(name)
        if fam is not None and fam not in families:
            families.append(fam)
    for fam in families:
        color, _ = _STYLE.get(fam, ("black", "o"))
        text, formula = BOOK_FORMULAS[fam]
        book = [formula(n) for n in ns]
        label = f"book: {FAMILY_NAMES[fam]} {text}"
        ax_work.plot(ns, book, "-", color=color, alpha=0.45, linewidth=2.5, label=label)
        ax_per.plot(ns, [b / n for b, n in zip(book, ns)], "-", color=color, alpha=0.45, linewidth=2.5, label=label)
    markers = ["o", "s", "^", "D", "v", "P", "X"]
    for k, (name, counts) in enumerate(measured.items()):
        fam = FORMULA_OF.get(name)
        color = _STYLE.get(fam, ("black", "o"))[0]
        pts = [(n, c) for n, c in zip(ns, counts) if c is not None]
        if not pts:
            continue
        xs, cs = zip(*pts)
        kw = dict(linestyle="none", marker=markers[k % len(markers)], color=color, markerfacecolor="none",
                  markersize=7, label=f"{source.get(name, 'counted') if isinstance(source, dict) else source}: {name}")
        ax_work.plot(xs, cs, **kw)
        ax_per.plot(xs, [c / n for n, c in pts], **kw)
    ax_work.set_xscale("log", base=2)
    ax_work.set_yscale("log", base=2)
    ax_work.set_xlabel("N (elements in the section)")
    ax_work.set_ylabel("additions")
    ax_work.set_title("work: additions performed")
    ax_per.set_xscale("log", base=2)
    ax_per.set_xlabel("N (elements in the section)")
    ax_per.set_ylabel("additions per element")
    ax_per.set_title("work per element (flat = work-efficient)")
    for ax in (ax_work, ax_per):
        ax.set_xticks(ns)
        ax.set_xticklabels([str(n) for n in ns], fontsize=8)
        ax.grid(True, which="major", alpha=0.3)
    ax_per.legend(fontsize=8, loc="upper left")
    if title:
        fig.suptitle(title, fontsize=12)
    fig.tight_layout()
    return fig


# --- the demos' figures: from the GPU or the NumPy models, on screen or in files --------------------------------

def gpu_or_model(use_model: bool = False, without: str = "drawing the NumPy step-models") -> str | None:
    """The GPU's name when a demo's values can come from it, else None: with use_model (a demo's --model), or when
    no GPU is usable, which it says on stdout as "no GPU (<first part of the reason>): <without>"."""
    if use_model:
        return None
    from pyscan import device_name, gpu_unavailable_reason

    reason = gpu_unavailable_reason()
    if reason is not None:
        print(f"no GPU ({reason.split(';')[0]}): {without}")
        return None
    return device_name()


def has_display() -> bool:
    """False on Linux with no $DISPLAY (a server, CI, a container): figures can only be written to files there."""
    return bool(os.environ.get("DISPLAY")) or not sys.platform.startswith("linux")


def figure_destination(save, default, *, where: str | None = None):
    """Where a demo's figures go: `save` (its --save) when given; with no display, `default` (a file, or a folder
    for several figures), said on stdout as "no display: saving <where> (use --save to choose)" (where: default
    "to <default>"); else None: on screen.  Selects matplotlib's Agg backend whenever the figures go to files, so
    call it before pyplot draws anything."""
    if save is None and not has_display():
        save = default
        print(f"no display: saving {where or f'to {default}'} (use --save to choose)")
    if save is not None:
        import matplotlib

        matplotlib.use("Agg")
    return save


def save_or_show(figures, save, *, dpi: int = 110) -> list:
    """Show the figure(s) on screen when save is None; else write them: one figure to the file `save`, a
    {file name: figure} dict into the folder `save` (made, with the parents of a file, where missing), printing
    "wrote <path>" for each.  Closes the figures; returns the paths written."""
    import matplotlib.pyplot as plt

    named = figures if isinstance(figures, dict) else None
    written = []
    if save is None:
        plt.show()
    elif named is None:
        path = Path(save)
        path.parent.mkdir(parents=True, exist_ok=True)
        figures.savefig(path, dpi=dpi)
        written.append(path)
    else:
        folder = Path(save)
        folder.mkdir(parents=True, exist_ok=True)
        for name, fig in named.items():
            fig.savefig(folder / name, dpi=dpi)
            written.append(folder / name)
    for path in written:
        print(f"wrote {path}")
    for fig in (named.values() if named is not None else [figures]):
        plt.close(fig)
    return written
