"""Conway's Game of Life on the GPU (Hands-On GPU Programming with Python and CUDA, ch. 4).

On screen, a matplotlib animation of a 256x256 lattice, 25 % alive, one generation a frame, as in the book; the
lattice stays on the GPU (pyscan.life.Life), only each frame's picture comes back.

    python demos/game_of_life.py                                   # animate on screen; with no display (a
                                                                   # GPU server): writes game_of_life.gif
    python demos/game_of_life.py --save life.gif --generations 60  # headless: an animated GIF (PillowWriter)
    python demos/game_of_life.py --save life.png                   # headless: the last frame
    python demos/game_of_life.py --iterative [--save it.png]       # the book's single-block iterative kernel:
                                                                   # 32x32, many generations in ONE launch
Options: --size N (or --size HxW), --density, --generations, --kernel (auto, global, tiled, fast, ...), --seed.
Without a GPU it says so and shows the NumPy reference instead, labelled as such.
"""

import argparse
import gc
import sys

import numpy as np

import pyscan
from pyscan import life

HEADLESS_FILE = "game_of_life.gif"
HEADLESS_GENERATIONS = 60  # a GIF of a few seconds (200 frames would be a large file)


def has_display() -> bool:
    """Whether matplotlib can open a window here: an interactive backend, and on Linux an X or Wayland display."""
    import os

    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return False
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    return plt.get_backend().lower() not in ("agg", "pdf", "ps", "svg", "cairo", "template")


class ReferenceGame:
    """The NumPy reference with the interface of pyscan.life.Life (for machines without a GPU)."""

    kernel = "NumPy reference"

    def __init__(self, lattice):
        self._lattice, self.generation = lattice.copy(), 0

    def advance(self, generations=1):
        self._lattice = life.reference_step(self._lattice, generations)
        self.generation += generations
        return self

    def get(self):
        return self._lattice.copy()

    @property
    def population(self):
        return int(self._lattice.sum())


def parse_size(text):
    parts = text.lower().split("x")
    if len(parts) > 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"expected N or HxW with positive integers, got {text!r}")
    return (int(parts[0]), int(parts[-1]))


def new_game(lattice, kernel, force_cpu):
    """A Life on the GPU, or the NumPy reference (with a clear message) when there is no GPU."""
    reason = "--cpu given" if force_cpu else pyscan.gpu_unavailable_reason()
    if reason is None:
        return life.Life(lattice, kernel=kernel), None
    print(f"no GPU ({reason}); showing the NumPy reference (pyscan.life.reference_step) instead", file=sys.stderr)
    return ReferenceGame(lattice), "NumPy reference, no GPU"


def title(game, note, shape):
    where = note or f"GPU kernel {game.kernel!r}"
    return f"{shape[0]}x{shape[1]} torus, generation {game.generation}, {game.population} alive\n({where})"


def figure(plt, lattice):
    height, width = lattice.shape
    scale = 6.0 / max(height, width)
    fig, ax = plt.subplots(figsize=(max(3.0, width * scale), max(3.0, height * scale) + 0.6))
    image = ax.imshow(lattice, interpolation="nearest", cmap="binary", vmin=0, vmax=1)
    ax.set_xticks([])
    ax.set_yticks([])
    return fig, ax, image


def save_without_matplotlib(path, frames, fps):
    """Pillow only: frames scaled up with nearest neighbour (black = alive), no titles."""
    from PIL import Image

    height, width = frames[0].shape
    scale = max(1, 512 // max(height, width))
    images = [Image.fromarray(((1 - f.astype(np.uint8)) * 255).astype(np.uint8)).resize((width * scale, height * scale),
                                                                                         Image.NEAREST) for f in frames]
    if path.lower().endswith(".gif"):
        images[0].save(path, save_all=True, append_images=images[1:], duration=int(1000 / fps), loop=0)
    else:
        images[-1].save(path)


def run_animation(args, plt, lattice):
    game, note = new_game(lattice, args.kernel, args.cpu)
    headless_png = args.save and args.save.lower().endswith(".png")
    if plt is None:  # no matplotlib: Pillow can still write the files
        frames = [game.get()]
        for _ in range(args.generations):
            frames.append(game.advance(1).get())
        save_without_matplotlib(args.save, frames if not headless_png else frames[-1:], args.fps)
    elif headless_png:
        game.advance(args.generations)
        fig, ax, _ = figure(plt, game.get())
        ax.set_title(title(game, note, lattice.shape), fontsize=9)
        fig.savefig(args.save, dpi=100, bbox_inches="tight")
    else:
        from matplotlib.animation import FuncAnimation, PillowWriter

        fig, ax, image = figure(plt, game.get())
        ax.set_title(title(game, note, lattice.shape), fontsize=9)

        def update(frame):
            if frame:  # frame 0 is the start
                game.advance(1)  # one generation on the GPU; the lattice never leaves it ...
            image.set_data(game.get())  # ... except for this picture
            ax.set_title(title(game, note, lattice.shape), fontsize=9)
            return (image,)

        animation = FuncAnimation(fig, update, frames=args.generations + 1, interval=1000 / args.fps, blit=False,
                                  repeat=False)
        if args.save:
            animation.save(args.save, writer=PillowWriter(fps=args.fps), dpi=80)
        else:
            plt.show()
    if args.save:
        print(f"wrote {args.save}: {lattice.shape[0]}x{lattice.shape[1]}, {game.generation} generations, "
              f"{game.population} alive at the end ({note or 'GPU kernel ' + repr(game.kernel)})")
    return 0


def run_iterative(args, plt, lattice):
    """The book's second Life program: one block, many generations in one launch, then a look at the result."""
    kernel = args.kernel if args.kernel in ("iterative_block", "shared") else "iterative_block"
    if lattice.size > 1024:
        sys.exit(f"--iterative runs the book's single-block kernel: at most 1024 cells (e.g. --size 32), "
                 f"got {lattice.shape[0]}x{lattice.shape[1]}")
    game, note = new_game(lattice, kernel, args.cpu)
    snapshots = [game.get()]
    chunks = 1 if not (args.save and args.save.lower().endswith(".gif")) else 50
    every = max(1, args.generations // chunks)
    while game.generation < args.generations:
        game.advance(min(every, args.generations - game.generation))  # ONE launch of the single-block kernel
        snapshots.append(game.get())
    same = np.array_equal(snapshots[-1], life.reference_step(lattice, args.generations))
    how = note or f"GPU kernel {kernel!r}, one block, each snapshot one launch"
    summary = (f"{lattice.shape[0]}x{lattice.shape[1]} ({how}): {args.generations} generations, "
               f"{game.population} alive; equals the NumPy reference: {'yes' if same else 'NO'}")
    print(summary)
    if plt is None:
        save_without_matplotlib(args.save, snapshots, args.fps)
        return 0 if same else 1
    if args.save and args.save.lower().endswith(".gif"):
        from matplotlib.animation import FuncAnimation, PillowWriter

        fig, ax, image = figure(plt, snapshots[0])

        def update(i):
            image.set_data(snapshots[i])
            ax.set_title(f"{kernel if not note else note}: generation {min(i * every, args.generations)}", fontsize=9)
            return (image,)

        FuncAnimation(fig, update, frames=len(snapshots)).save(args.save, writer=PillowWriter(fps=args.fps), dpi=80)
    else:
        fig, axes = plt.subplots(1, 2, figsize=(8, 4.6))
        for ax, picture, label in zip(axes, (snapshots[0], snapshots[-1]), ("generation 0", f"generation {args.generations}")):
            ax.imshow(picture, interpolation="nearest", cmap="binary", vmin=0, vmax=1)
            ax.set_title(label, fontsize=9)
            ax.set_xticks([])
            ax.set_yticks([])
        fig.suptitle(summary, fontsize=8)
        if args.save:
            fig.savefig(args.save, dpi=100, bbox_inches="tight")
        else:
            plt.show()
    if args.save:
        print(f"wrote {args.save}")
    return 0 if same else 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=parse_size, default=None, help="N or HxW (default 256, or 32 with --iterative)")
    parser.add_argument("--density", type=float, default=0.25, help="fraction of cells alive at the start")
    parser.add_argument("--generations", type=int, default=None,
                        help="generations to run (default 200, or 10000 with --iterative)")
    parser.add_argument("--kernel", default="auto", choices=("auto",) + life.LIFE_KERNELS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", help="write a .gif (animation) or .png (last frame) instead of showing a window")
    parser.add_argument("--fps", type=float, default=12)
    parser.add_argument("--iterative", action="store_true",
                        help="the book's single-block iterative kernel on 32x32, many generations in one launch")
    parser.add_argument("--cpu", action="store_true", help="use the NumPy reference even if there is a GPU")
    args = parser.parse_args(argv)
    if args.save and not args.save.lower().endswith((".gif", ".png")):
        parser.error("--save: expected a file name ending in .gif or .png")
    if not 0 <= args.density <= 1:
        parser.error("--density: expected a fraction between 0 and 1")
    size = args.size or ((32, 32) if args.iterative else (256, 256))
    if not args.save and not has_display():
        # a headless machine (where most GPUs are): the animation goes to a file, and the run says where
        args.save = HEADLESS_FILE
        if args.generations is None and not args.iterative:
            args.generations = HEADLESS_GENERATIONS
        print(f"no display here: writing the animation to {args.save} instead of a window "
              "(--save PATH chooses the file)", file=sys.stderr)
    args.generations = args.generations if args.generations is not None else (10000 if args.iterative else 200)
    if args.generations < 0:
        parser.error("--generations: expected a non-negative number")

    try:
        import matplotlib

        if args.save:
            matplotlib.use("Agg")  # headless
        import matplotlib.pyplot as plt
        if not args.save and plt.get_backend().lower() in ("agg", "pdf", "ps", "svg", "cairo", "template"):
            sys.exit(f"matplotlib has no on-screen backend here ({plt.get_backend()}): write a file instead, "
                     "e.g. --save life.gif or --save life.png")
    except ImportError:
        if not args.save:
            sys.exit("matplotlib is not installed: install it to see the animation, or write a file with --save")
        print("matplotlib is not installed: writing the frames with Pillow, without titles", file=sys.stderr)
        plt = None

    lattice = (np.random.default_rng(args.seed).random(size) < args.density).astype(np.int32)  # 25 % alive by default
    try:
        return run_iterative(args, plt, lattice) if args.iterative else run_animation(args, plt, lattice)
    finally:
        # The animation's figure keeps the game (and its device buffers) alive through its callbacks.  Free them now,
        # while the CUDA context is current: freed at interpreter exit, after pyscan has popped the context, pycuda
        # aborts ("explicit_context_dependent failed: invalid device context"), as seen on the GPU host.
        if plt is not None:
            plt.close("all")
        gc.collect()


if __name__ == "__main__":
    sys.exit(main())
