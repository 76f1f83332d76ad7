"""python -m pyscan exercise list | start NAME [DIR] | check FILE [--exercise NAME]

    list    every exercise with its book section and what to write
    start   the stub kernel (and, where the exercise has host code, a stub Python driver) in DIR (default: here),
            with the project's headers it includes in DIR/pyscan_headers/
    check   compiles -> right on integers -> right on floats -> step by step -> races and memory -> speed, stopping
            at the first class of failure with its diagnosis; without a GPU: the compile stage and the model's steps

Exit status: 0 every check passed (list, start: done); 1 a stage failed; 2 a usage error; 3 cannot run here (no
usable GPU: the stages that need one are named; no nvcc).
"""

from __future__ import annotations

import argparse
import sys

from ..cli import EXIT_FAILED, EXIT_OK, EXIT_UNAVAILABLE, EXIT_USAGE


def _list() -> int:
    from .registry import EXERCISES_IN_ORDER

    width = max(len(e.name) for e in EXERCISES_IN_ORDER)
    for e in EXERCISES_IN_ORDER:
        print(f"{e.name:{width}s}  {e.source}")
        print(f"{'':{width}s}  {e.task}; solution: kernels/{e.solution}")
    return EXIT_OK


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pyscan exercise", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("list", help="every exercise with its book section")
    start = sub.add_parser("start", help="write an exercise's stub(s) into a folder")
    start.add_argument("name", help="the exercise (see `list`)")
    start.add_argument("folder", nargs="?", default=".", help="where to write (default: here)")
    start.add_argument("--force", action="store_true", help="overwrite a stub already there")
    check = sub.add_parser("check", help="check a kernel file")
    check.add_argument("file", help="your .cu file")
    check.add_argument("--exercise", help="the exercise (default: read off the file's '// pyscan exercise:' line)")
    check.add_argument("--picture", metavar="PNG", help="save the step picture (the diverging boxes marked) here")
    check.add_argument("--no-sanitize", action="store_true", help="skip compute-sanitizer (repeated runs still)")
    check.add_argument("--no-speed", action="store_true", help="skip the timings")
    check.add_argument("--quick", action="store_true", help="the small sizes only")
    args = parser.parse_args(argv)
    if args.action == "list":
        return _list()
    if args.action == "start":
        from .starting import start as write_stub

        try:
            written = write_stub(args.name, args.folder, force=args.force)
        except (ValueError, FileExistsError) as exc:
            print(exc, file=sys.stderr)
            return EXIT_USAGE
        for path in written:
            print(f"wrote {path}")
        print(f"headers it includes: {args.folder.rstrip('/')}/pyscan_headers/\n"
              f"check it: python -m pyscan exercise check {written[0]}")
        return EXIT_OK
    from .checker import check as run_check

    try:
        report = run_check(args.file, args.exercise, picture=args.picture, sanitize=not args.no_sanitize,
                           speed=not args.no_speed, quick=args.quick)
    except (ValueError, FileNotFoundError) as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    print(report)
    if report.failed is not None:
        return EXIT_FAILED
    return EXIT_UNAVAILABLE if report.needs_gpu else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
