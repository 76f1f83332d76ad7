"""Known Life patterns for the CPU and GPU tests: the Gosper glider gun and the period-3 pulsar."""

import numpy as np

GOSPER_GUN = ["........................O...........",
              "......................O.O...........",
              "............OO......OO............OO",
              "...........O...O....OO............OO",
              "OO........O.....O...OO..............",
              "OO........O...O.OO....O.O...........",
              "..........O.....O.......O...........",
              "...........O...O....................",
              "............OO......................"]


def pattern(rows):
    width = max(len(r) for r in rows)
    return np.array([[c == "O" for c in r.ljust(width, ".")] for r in rows], dtype=np.uint8)


def pulsar():
    """The period-3 pulsar (13x13), built from its quadrant by reflection."""
    p = np.zeros((13, 13), np.uint8)
    for y, x in [(0, 2), (0, 3), (0, 4), (2, 0), (3, 0), (4, 0), (5, 2), (5, 3), (5, 4), (2, 5), (3, 5), (4, 5)]:
        for yy, xx in [(y, x), (y, 12 - x), (12 - y, x), (12 - y, 12 - x)]:
            p[yy, xx] = 1
    return p
