"""Colourings of sparsity patterns: which columns (or rows) one compressed pass may share.

* `column_colouring`: a distance-2 colouring of the column vertices of the bipartite graph of P
  (two columns with a nonzero in a common row differ), so J is read off J @ S (forward mode).
* `row_colouring`: the same for rows (S.T @ J, reverse mode).
* `star_colouring`: a star colouring of the adjacency graph of a symmetric P (distance-1 proper,
  every path on four vertices has three colours), so every Hessian entry is read directly off
  H @ S (Coleman & More 1984; GTMP07 Algorithm 4.1).
* `bicolouring`: rows and columns together (star bicolouring: Coleman & Verma 1998, GMP05
  section 5): a star colouring of the bipartite graph, after which a colour class every entry of
  which the other side already determines is dropped (colour 0, not seeded), then the best of
  that and the one-sided colourings is kept.

All are greedy (GMP05 Algorithm 3.2; ColPack and SparseMatrixColorings.jl do the same) in a
vertex order: "natural", "largest_first" (by distance-2 degree), "smallest_last" (Matula-Beck),
or "best" (each of the three, the fewest colours kept; the default, since no single order wins
on every pattern of the zoo; see benchmarks/colouring.py).
"""

from __future__ import annotations

import numpy as np

from ..errors import SourceADError
from . import kernels
from .patterns import Pattern, adjacency, bipartite, canonical, pattern, symmetric

ORDERS = ("natural", "largest_first", "smallest_last")


def _orders(ptr1, idx1, ptr2, idx2, order: str) -> list[np.ndarray]:
    n = ptr1.shape[0] - 1
    names = ORDERS if order == "best" else (order,)
    if any(name not in ORDERS for name in names):
        raise SourceADError(f"unknown vertex order {order!r}", hint=f"use one of {ORDERS + ('best',)}")
    found = []
    degree = kernels.distance2_degrees(ptr1, idx1, ptr2, idx2) if names != ("natural",) else np.zeros(0)
    for name in names:
        if name == "natural":
            found.append(np.arange(n, dtype=np.int64))
        elif name == "largest_first":
            found.append(np.argsort(-degree, kind="stable").astype(np.int64))
        else:
            found.append(kernels.smallest_last(ptr1, idx1, ptr2, idx2, degree))
    return found


def _fewest(colourings: list[np.ndarray]) -> np.ndarray:
    return min(colourings, key=lambda c: int(c.max(initial=-1)))


def _distance2(ptr1, idx1, ptr2, idx2, order: str) -> np.ndarray:
    return _fewest(
        [kernels.greedy_distance2(ptr1, idx1, ptr2, idx2, o) for o in _orders(ptr1, idx1, ptr2, idx2, order)]
    )


def column_colouring(P: object, order: str = "best") -> np.ndarray:
    """Colours 0..k-1 of the n columns of the (m, n) pattern P, two columns with a nonzero in the
    same row always differing: J is recovered from J @ seed_matrix(colours) (k forward passes)."""
    p = pattern(P)
    return _distance2(p.col_ptr, p.col_rows, p.indptr, p.indices, order)


def row_colouring(P: object, order: str = "best") -> np.ndarray:
    """Colours 0..k-1 of the m rows of P, two rows with a nonzero in the same column always
    differing: J is recovered from seed_matrix(colours).T @ J (k reverse passes)."""
    p = pattern(P)
    return _distance2(p.indptr, p.indices, p.col_ptr, p.col_rows, order)


def _star(ptr: np.ndarray, idx: np.ndarray, edge: np.ndarray, order: str) -> np.ndarray:
    one, first = kernels.identity_hop(ptr.shape[0] - 1)
    return _fewest([kernels.greedy_star(ptr, idx, edge, o) for o in _orders(one, first, ptr, idx, order)])


def star_colouring(P: object, order: str = "best") -> np.ndarray:
    """Colours 0..k-1 of the n vertices of the symmetric (n, n) pattern P (a Hessian's; its
    diagonal may be present): a star colouring of its adjacency graph, so H is recovered directly
    from H @ seed_matrix(colours) (k Hessian-vector products)."""
    p = symmetric(P)
    return _star(*adjacency(p), order)


def _determined(p: Pattern, t: Pattern, rc: np.ndarray, cc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per CSR position: read directly off the forward passes (its column's colour is its row's
    only one of that colour), and off the reverse passes (likewise for its row in its column)."""
    forward = kernels.unique_in_line(p.indptr, p.indices, cc)
    reverse = np.empty(p.nnz, np.bool_)
    reverse[p.to_csr] = kernels.unique_in_line(t.indptr, t.indices, rc)
    return forward, reverse


def _drop_classes(p: Pattern, rc: np.ndarray, cc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Set to 0 (not seeded) every colour class whose entries all come from the other side:
    the largest such class first, until none is left. Dropping a forward class never spoils
    another forward entry (fewer columns per colour) and leaves the reverse ones as they were."""
    t = p.transpose()
    rows, cols = p.rows(), p.indices
    while True:
        forward, reverse = _determined(p, t, rc, cc)
        # a class is needed when one of its entries has no other source
        need_c = np.zeros(cc.max(initial=0) + 1, bool)
        need_c[cc[cols[~reverse]]] = True
        need_r = np.zeros(rc.max(initial=0) + 1, bool)
        need_r[rc[rows[~forward]]] = True
        size_c = np.bincount(cc, minlength=need_c.shape[0])
        size_r = np.bincount(rc, minlength=need_r.shape[0])
        size_c[need_c] = 0
        size_r[need_r] = 0
        size_c[0] = size_r[0] = 0
        if size_c.max() == 0 and size_r.max() == 0:
            return rc, cc
        if size_c.max() >= size_r.max():
            cc = np.where(cc == size_c.argmax(), 0, cc)
        else:
            rc = np.where(rc == size_r.argmax(), 0, rc)


def _renumber(colours: np.ndarray) -> np.ndarray:
    """Colours 1..k without gaps, 0 kept."""
    used = np.unique(colours[colours > 0])
    table = np.zeros(colours.max(initial=0) + 1, np.int64)
    table[used] = np.arange(1, used.shape[0] + 1)
    return table[colours]


def _split(P: object, dense_rows: np.ndarray, order: str) -> tuple[np.ndarray, np.ndarray]:
    """Rows `dense_rows` by reverse passes (a row colouring of them alone), the other rows by
    forward passes (a column colouring of the pattern without the dense rows)."""
    A = canonical(P)
    kept = pattern(A[~dense_rows])
    columns = _distance2(kept.col_ptr, kept.col_rows, kept.indptr, kept.indices, order) + 1
    cc = np.where(np.diff(kept.col_ptr) > 0, columns, 0)
    dense = pattern(A[dense_rows])
    rows = _distance2(dense.indptr, dense.indices, dense.col_ptr, dense.col_rows, order) + 1
    rc = np.zeros(A.shape[0], np.int64)
    rc[dense_rows] = np.where(np.diff(dense.indptr) > 0, rows, 0)
    return _renumber(rc), _renumber(cc)


def _thresholds(counts: np.ndarray, most: int = 6) -> np.ndarray:
    """Line lengths t for which "lines longer than t go to the other side" is worth trying: the
    largest distinct lengths, and not t = max (nothing would move)."""
    return np.unique(counts)[::-1][1 : most + 1]


def bicolouring(P: object, order: str = "best") -> tuple[np.ndarray, np.ndarray]:
    """Row colours (m,) and column colours (n,), 0 meaning "not seeded", 1..k otherwise: every
    nonzero of P is its column's only one of that colour in its row (read off J @ Scol), or its
    row's only one of that colour in its column (read off Srow.T @ J). The fewest passes (kr + kc)
    among: a star colouring of the bipartite graph with redundant classes dropped (GMP05 section
    5, as SparseMatrixColorings.jl does it), the two one-sided colourings, and splits that send
    the longest rows (columns) to reverse (forward) passes and colour the rest on the other side
    (Coleman & Verma's bi-directional partitioning, 1998): the split is what beats both one-sided
    colourings on an arrowhead (3 passes instead of n)."""
    A = canonical(P)
    p = pattern(A)
    m, n = p.shape
    ptr, idx, edge = bipartite(p)
    one, first = kernels.identity_hop(m + n)
    row_nnz, col_nnz = np.diff(p.indptr), np.diff(p.col_ptr)
    candidates = []
    for o in _orders(one, first, ptr, idx, order):
        both = kernels.greedy_star(ptr, idx, edge, o) + 1
        cc = np.where(col_nnz > 0, both[:n], 0)  # an empty line needs no seed
        rc = np.where(row_nnz > 0, both[n:], 0)
        rc, cc = _drop_classes(p, rc, cc)
        candidates.append((_renumber(rc), _renumber(cc)))
    candidates.append(_split(A, np.zeros(m, bool), order))  # forward only
    candidates.append(_split(A.T, np.zeros(n, bool), order)[::-1])  # reverse only
    for t in _thresholds(row_nnz):
        candidates.append(_split(A, row_nnz > t, order))
    for t in _thresholds(col_nnz):
        candidates.append(_split(A.T, col_nnz > t, order)[::-1])
    return min(candidates, key=lambda rc_cc: int(rc_cc[0].max(initial=0) + rc_cc[1].max(initial=0)))
