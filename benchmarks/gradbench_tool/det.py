"""GradBench's ``det`` (cmpad's det_by_minor): the determinant of an ell x ell matrix (given flat,
row-major) by expansion by minors along the rows, and its gradient (row-major, like A).

sourcead refuses recursion, so the expansion is walked depth first with an explicit stack: row
``depth`` takes each column not taken by the rows above, in increasing order, with the sign
alternating along the columns still free (as in the cofactor expansion), and ``partial[depth]``
holds the signed product of the entries chosen so far. The last three rows' 3 x 3 minors are
expanded written out (the recursion's own products at that depth), so the walk stops three rows
short of the bottom: the same arithmetic as the recursive algorithm, and a tape about ten times
shorter than a walk to the leaves (which took 11.5 GB at ell = 11)."""

from __future__ import annotations

import numpy as np

import sourcead
from benchmarks.gradbench_tool.common import Function, as_list, number, primal, vector

TINY = {"A": [0.5, 0.1, 0.3, 0.2, 0.7, 0.4, 0.9, 0.6, 0.8], "ell": 3, "min_runs": 1, "min_seconds": 0.0}


def det_by_minors(A, ell):
    taken = np.zeros(ell)  # 1.0 where a row above has the column (float: sourcead's arrays are float)
    column = np.zeros(ell)  # the column row `depth` has now, -1 before its first
    place = np.zeros(ell)  # how many free columns come before it (its sign)
    partial = np.ones(ell + 1)
    total = 0.0
    if ell == 1:
        total = A[0]
    elif ell == 2:
        total = A[0] * A[3] - A[1] * A[2]
    else:
        depth = 0
        column[0] = -1
        place[0] = -1
        while depth >= 0:
            if depth == ell - 3:
                # the last three rows' minor on the three free columns, expanded by minors written out
                f0 = -1
                f1 = -1
                f2 = -1
                for c in range(ell):
                    if taken[c] == 0.0:
                        if f0 < 0:
                            f0 = c
                        elif f1 < 0:
                            f1 = c
                        else:
                            f2 = c
                r0 = depth * ell
                r1 = r0 + ell
                r2 = r1 + ell
                minor = A[r0 + f0] * (A[r1 + f1] * A[r2 + f2] - A[r1 + f2] * A[r2 + f1])
                minor -= A[r0 + f1] * (A[r1 + f0] * A[r2 + f2] - A[r1 + f2] * A[r2 + f0])
                minor += A[r0 + f2] * (A[r1 + f0] * A[r2 + f1] - A[r1 + f1] * A[r2 + f0])
                total += partial[depth] * minor
                depth -= 1
            else:
                c = int(column[depth])
                if c >= 0:
                    taken[c] = 0
                c += 1
                while c < ell and taken[c] == 1.0:
                    c += 1
                if c == ell:
                    depth -= 1
                else:
                    column[depth] = c
                    place[depth] += 1
                    taken[c] = 1
                    if int(place[depth]) % 2 == 0:
                        partial[depth + 1] = partial[depth] * A[depth * ell + c]
                    else:
                        partial[depth + 1] = -(partial[depth] * A[depth * ell + c])
                    depth += 1
                    column[depth] = -1
                    place[depth] = -1
    return total


def decode(raw):
    return vector(raw["A"]), int(raw["ell"])


def define(jit: bool) -> dict[str, Function]:
    return {
        "primal": Function(decode, primal(det_by_minors, jit), number),
        "gradient": Function(decode, sourcead.grad(det_by_minors, wrt="A", jit=jit), as_list),
    }
