"""Colour counts of `sourcead.colouring` on a zoo of patterns: ``python -m benchmarks.colouring``.

For each pattern: the colours of the column (forward), row (reverse), star (Hessian, on the
symmetrised pattern) colourings and of the bicolouring (forward + reverse passes), beside the
lower bound (the most nonzeros in a row for column colouring; in a column for row colouring; the
most nonzeros in a row of the symmetric pattern for star colouring) and the optimum where theory
or the literature gives one, with the time each colouring took.

Not part of `make bench` (benchmarks/run.py); the pattern builders are shared with the tests.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from sourcead.colouring import bicolouring, column_colouring, row_colouring, star_colouring


def banded(n: int, b: int) -> sp.csr_array:
    """Entries |i - j| <= b (bandwidth b: 2b + 1 diagonals)."""
    offsets = [k for k in range(-b, b + 1) if abs(k) < n]
    return sp.csr_array(
        sp.diags_array([np.ones(n - abs(k)) for k in offsets], offsets=offsets, shape=(n, n)).astype(bool)
    )


def stencil(side: int, points: int) -> sp.csr_array:
    """The Jacobian pattern of a 5- or 9-point stencil on a side x side grid (no wrap-around),
    unknowns in C order: 5 points couple (i +- 1, j) and (i, j +- 1), 9 points the 3 x 3 block."""
    t = banded(side, 1)
    eye = sp.eye_array(side, dtype=bool, format="csr")
    if points == 5:
        return sp.csr_array((sp.kron(eye, t) + sp.kron(t, eye)).astype(bool))
    return sp.csr_array(sp.kron(t, t).astype(bool))


def arrowhead(n: int) -> sp.csr_array:
    """The diagonal, a dense first row and a dense first column."""
    rows = np.concatenate([np.arange(n), np.zeros(n, np.int64), np.arange(n)])
    cols = np.concatenate([np.arange(n), np.arange(n), np.zeros(n, np.int64)])
    A = sp.csr_array((np.ones(3 * n, bool), (rows, cols)), shape=(n, n))
    A.sum_duplicates()
    return A


def block_diagonal(n: int, block: int = 4) -> sp.csr_array:
    """Dense blocks of `block` x `block` on the diagonal (n a multiple of block)."""
    return sp.csr_array(sp.kron(sp.eye_array(n // block, dtype=bool), np.ones((block, block), bool)).astype(bool))


def random_sparse(n: int, per_row: float = 5.0, seed: int = 0) -> sp.csr_array:
    """About `per_row` nonzeros a row at random places (density per_row / n), seeded."""
    rng = np.random.default_rng(seed)
    A = sp.random_array((n, n), density=min(per_row / max(n, 1), 1.0), rng=rng, format="csr")
    return sp.csr_array(A.astype(bool))


def _timed(f: Callable[[], object]) -> tuple[object, float]:
    start = time.perf_counter()
    out = f()
    return out, time.perf_counter() - start


def _count(colours: np.ndarray) -> int:
    return int(colours.max(initial=-1)) + 1


# Anchors. The stored documentation of SparseMatrixColorings.jl and ColPack (searched for star
# colouring of banded patterns and distance-2 colouring of stencils) publishes no colour counts
# for these exact patterns, so the table shows the optimum from theory instead, and no number
# from another tool. The one published figure that fits: Hill & Dalle 2025 (arXiv 2501.17737, as
# quoted in issue 41) colour a banded (tridiagonal) Hessian of n = 200 with 3 HVP colours, the
# optimum below for star colouring with b = 1.
#
# The optimum where it is known. From theory: a band |i - j| <= b has rows of 2b + 1 nonzeros,
# a lower bound that the natural order's colouring (j mod 2b + 1) attains, for columns and rows;
# a 5-point stencil has rows of 5 entries and 5 colours suffice ((i + 2j) mod 5), a 9-point one 9
# ((i mod 3) + 3 (j mod 3)); a block diagonal with blocks of 4 needs 4; an arrowhead's dense row
# forces n column colours (its dense column n row colours) and 3 passes bicoloured (2 cannot do:
# the dense row must be seeded in reverse, so the dense column's entries come from one forward
# colour that its column has alone in every row, so the diagonal below it comes from reverse
# colours, which the dense row's shares). Star colouring: a tridiagonal
# symmetric pattern needs 3 (a path), the arrowhead (a star graph) 2; banded b >= 2 and the
# stencils have no closed form we rely on: the lower bound is shown instead.
def _optimum(name: str, b: int | None, n: int) -> dict[str, object]:
    if name == "banded":
        assert b is not None
        return {"column": 2 * b + 1, "row": 2 * b + 1, "star": 3 if b == 1 else "", "bi": ""}
    if name == "stencil5":
        return {"column": 5, "row": 5, "star": "", "bi": ""}
    if name == "stencil9":
        return {"column": 9, "row": 9, "star": "", "bi": ""}
    if name == "block4":
        return {"column": 4, "row": 4, "star": 4, "bi": ""}
    if name == "arrowhead":
        return {"column": n, "row": n, "star": 2, "bi": 3}
    return {"column": "", "row": "", "star": "", "bi": ""}


def zoo(sizes: str = "small") -> list[tuple[str, int | None, sp.csr_array]]:
    """(name, parameter, pattern) for the table: sizes "small" (n <= 10^4, for tests), "full"."""
    big = sizes == "full"
    ns = [10**3, 10**4, 10**5, 10**6] if big else [10**3, 10**4]
    sides = [100, 316, 1000] if big else [100]
    out: list[tuple[str, int | None, sp.csr_array]] = []
    for b in (1, 2, 5):
        out += [("banded", b, banded(n, b)) for n in ns]
    out += [("stencil5", None, stencil(s, 5)) for s in sides]
    out += [("stencil9", None, stencil(s, 9)) for s in sides]
    out += [("arrowhead", None, arrowhead(n)) for n in (10**3, 10**4)]
    out += [("block4", None, block_diagonal(n)) for n in ns]
    out += [("random", None, random_sparse(n)) for n in ns[:3]]
    return out


def colour_table(sizes: str = "small") -> list[dict[str, object]]:
    """One row per pattern of `zoo(sizes)`: colours, lower bounds, optimum, seconds."""
    rows = []
    for name, b, P in zoo(sizes):
        m, n = P.shape
        H = sp.csr_array((P + P.T).astype(bool))
        cols, t_col = _timed(lambda P=P: column_colouring(P))
        rws, t_row = _timed(lambda P=P: row_colouring(P))
        star, t_star = _timed(lambda H=H: star_colouring(H))
        (rc, cc), t_bi = _timed(lambda P=P: bicolouring(P))
        rows.append(
            {
                "pattern": name if b is None else f"{name} b={b}",
                "n": n,
                "nnz": P.nnz,
                "column": _count(cols),
                "row": _count(rws),
                "star": _count(star),
                "bi rev+fwd": f"{int(rc.max(initial=0))}+{int(cc.max(initial=0))}",
                "bound column": int(np.diff(P.indptr).max(initial=0)),
                "bound star": int(np.diff(H.indptr).max(initial=0)),
                **{f"optimum {k}": v for k, v in _optimum(name, b, n).items()},
                "s column": round(t_col, 3),
                "s row": round(t_row, 3),
                "s star": round(t_star, 3),
                "s bi": round(t_bi, 3),
            }
        )
    return rows


def _markdown(rows: list[dict[str, object]]) -> str:
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", choices=["small", "full"], default="full")
    print(_markdown(colour_table(parser.parse_args().sizes)))
