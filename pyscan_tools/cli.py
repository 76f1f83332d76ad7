"""What `python -m pyscan bench` and `python -m pyscan check` share: how patterns and algorithms are chosen on the
command line, and the exit codes.

Exit codes (both commands, and `python -m pyscan info`):

    0  done: everything ran and every result was right (the bench's targets are reported, not enforced)
    1  a failure: a wrong result, an error, a sanitizer report, an interrupted run
    2  usage: unknown pattern, algorithm, size or option (argparse's own code)
    3  cannot run here: no usable GPU (the message says what is missing), or no compute-sanitizer for --sanitize
"""

from __future__ import annotations

import argparse

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 3

EXIT_CODES_HELP = ("exit status: 0 done, every result right; 1 a wrong result, an error or an interrupted run; "
                   "2 a usage error; 3 cannot run here (no usable GPU, or no compute-sanitizer for --sanitize)")


def add_selection(parser: argparse.ArgumentParser, patterns, *, default_all: bool = True) -> None:
    """The pattern and algorithm options, as both commands spell them: patterns as positional words or
    --pattern (repeatable, commas allowed), algorithms as --algorithm (repeatable, commas allowed)."""
    names = ", ".join(patterns)
    parser.add_argument("patterns", nargs="*", metavar="PATTERN",
                        help=f"patterns to run: {names} or all (default all); the same as --pattern")
    parser.add_argument("--pattern", action="append", default=[], metavar="NAME",
                        help=f"a pattern to run ({names}); repeatable")
    parser.add_argument("--algorithm", action="append", default=[], metavar="NAME",
                        help="an algorithm name of the patterns' registries, or auto; repeatable")


def words(values) -> list:
    """Command-line values split at commas and spaces: ["a,b", "c"] -> ["a", "b", "c"]."""
    return [w for value in values or () for w in str(value).replace(",", " ").split()]


def chosen_patterns(parser, args, patterns) -> tuple:
    """The patterns asked for, in the tools' order; a usage error (exit 2) names an unknown one."""
    asked = words(args.patterns) + words(args.pattern)
    if not asked or "all" in asked:
        return tuple(patterns)
    unknown = [p for p in asked if p not in patterns]
    if unknown:
        parser.error(f"unknown pattern(s) {', '.join(unknown)}: expected some of {', '.join(patterns)} or all")
    return tuple(p for p in patterns if p in asked)


def chosen_algorithms(parser, args, known) -> tuple:
    """The algorithms asked for (empty: the command's default); a usage error names an unknown one."""
    asked = words(args.algorithm)
    unknown = [a for a in asked if a not in known]
    if unknown:
        parser.error(f"unknown algorithm(s) {', '.join(unknown)}: expected some of {', '.join(sorted(known))}")
    return tuple(dict.fromkeys(asked))
