"""Colourings of sparsity patterns: which columns (or rows) one compressed pass may share.

* `column_colouring`: a distance-2 colouring of the column vertices of the bipartite graph of P
  (two columns with a nonzero in a common row differ), so J is read off J @ S (forward mode).
* `row_colouring`: the same for rows (S.T @ J, reverse mode).
* `star_colouring`: a star colouring of the adjacency graph of a symmetric P (distance-1 proper,
  every path on four vertices has three colours), so every Hessian entry is read directly off
  H @ S (Coleman & More 1984; GTMP07 Algorithm 4.1).
* `bicolouring`: rows and columns together (star bicolouring, Coleman & Verma 1998, GMP05
  section 5; see its docstring for the candidates it compares).

All are greedy (GMP05 Algorithm 3.2, as ColPack and SparseMatrixColorings.jl do) in a vertex
order, `order=`: "natural"; "largest_first" (by distance-2 degree); "smallest_last"
(Matula-Beck); "saturation" (DSATUR, Brelaz 1979: the order is made while colouring, next the
vertex whose neighbours show the most colours); "best" (all four, the fewest colours kept); or
"auto", the default, chosen on the zoo of benchmarks/colouring.py: "saturation" for column and
row colourings (the fewest colours on every pattern there: 5 on a 5-point stencil where the
static orders give 7), and the fewest of largest-first, smallest-last and saturation for star
colourings (no one of them wins on every pattern there).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import SourceADError
from . import kernels
from .patterns import Pattern, adjacency, bipartite, canonical, pattern, symmetric

ORDERS = ("natural", "largest_first", "smallest_last", "saturation")
_STAR_WORK = 10**8  # star colouring sweeps at most (sum of squared degrees) before hubs are set apart
_HUB = 1000  # a hub: a vertex of more neighbours
_BITSET_WORDS = 1 << 23  # DSATUR's bitsets (64 MiB) at most; past that "saturation" is largest-first


def _names(order: str, auto: tuple[str, ...] = ("saturation",)) -> tuple[str, ...]:
    if order == "best":
        return ORDERS
    if order == "auto":
        return auto
    if order not in ORDERS:
        raise SourceADError(f"unknown vertex order {order!r}", hint=f"use one of {ORDERS + ('auto', 'best')}")
    return (order,)


def _static_orders(ptr1, idx1, ptr2, idx2, names: tuple[str, ...], degree: np.ndarray) -> list[np.ndarray]:
    """The vertex orders `names` (of the static ones) of the distance-2 graph given by two hops."""
    found = []
    for name in names:
        if name == "natural":
            found.append(np.arange(ptr1.shape[0] - 1, dtype=np.int64))
        elif name == "largest_first":
            found.append(np.argsort(-degree, kind="stable").astype(np.int64))
        elif name == "smallest_last":
            found.append(kernels.smallest_last(ptr1, idx1, ptr2, idx2, degree))
    return found


def _fewest(colourings: list[np.ndarray]) -> np.ndarray:
    return min(colourings, key=lambda c: int(c.max(initial=-1)))


def _distance2(ptr1, idx1, ptr2, idx2, order: str) -> np.ndarray:
    """A distance-2 colouring through two hops (vertex -> lines -> vertices), the fewest colours
    among the orders `order` names."""
    names = _names(order)
    nonempty = np.diff(ptr1) > 0
    if int(np.diff(ptr2).max(initial=0)) == int(nonempty.sum()) > 0:
        # a line holds every vertex that has a line (an arrowhead's dense row): each needs a colour
        # of its own, the lower bound; found without the O(line^2) greedy sweep
        return np.where(nonempty, np.cumsum(nonempty) - 1, 0).astype(np.int64)
    degree = kernels.distance2_degrees(ptr1, idx1, ptr2, idx2)
    found = []
    if "saturation" in names:
        n, words = ptr1.shape[0] - 1, (int(degree.max(initial=0)) + 64) // 64
        if n * words <= _BITSET_WORDS:
            found.append(kernels.saturation_distance2(ptr1, idx1, ptr2, idx2, degree))
        elif names == ("saturation",):
            names = ("largest_first",)
    orders = _static_orders(ptr1, idx1, ptr2, idx2, names, degree)
    found += [kernels.greedy_distance2(ptr1, idx1, ptr2, idx2, o) for o in orders]
    return _fewest(found)


def column_colouring(P: object, order: str = "auto") -> np.ndarray:
    """Colours 0..k-1 of the n columns of the (m, n) pattern P, two columns with a nonzero in the
    same row always differing: J is recovered from J @ seed_matrix(colours) (k forward passes)."""
    p = pattern(P)
    return _distance2(p.col_ptr, p.col_rows, p.indptr, p.indices, order)


def row_colouring(P: object, order: str = "auto") -> np.ndarray:
    """Colours 0..k-1 of the m rows of P, two rows with a nonzero in the same column always
    differing: J is recovered from seed_matrix(colours).T @ J (k reverse passes)."""
    p = pattern(P)
    return _distance2(p.indptr, p.indices, p.col_ptr, p.col_rows, order)


def _star(p: Pattern, order: str) -> np.ndarray:
    """The fewest colours among the greedy star colourings in the static orders of `order` and,
    for "saturation", a DSATUR distance-2 colouring of the graph (every path on four vertices
    then has three colours, so it is a star colouring too; on a 9-point stencil it is the better)."""
    names = _names(order, ("largest_first", "smallest_last", "saturation"))
    ptr, idx, edge = adjacency(p)
    one, first = kernels.identity_hop(p.shape[0])
    degree = kernels.distance2_degrees(one, first, ptr, idx)
    found = [kernels.greedy_star(ptr, idx, edge, o) for o in _static_orders(one, first, ptr, idx, names, degree)]
    if "saturation" in names:
        h = p
        if int(np.count_nonzero(p.rows() == p.indices)) < p.shape[0]:  # add the diagonal
            loops = sp.csr_array((np.ones(p.nnz, bool), p.indices, p.indptr), shape=p.shape)
            h = pattern(loops + sp.eye_array(p.shape[0], dtype=bool, format="csr"))
        found.append(_distance2(h.col_ptr, h.col_rows, h.indptr, h.indices, "saturation"))
    return _fewest(found)


def star_colouring(P: object, order: str = "auto") -> np.ndarray:
    """Colours 0..k-1 of the n vertices of the symmetric (n, n) pattern P (a Hessian's; its
    diagonal may be present): a star colouring of its adjacency graph, so H is recovered directly
    from H @ seed_matrix(colours) (k Hessian-vector products)."""
    return _star_with_hubs(symmetric(P), order)


def _star_with_hubs(p: Pattern, order: str) -> np.ndarray:
    """`_star`, but when the sweeps over neighbours of neighbours would cost more than _STAR_WORK
    visits, the hubs (more than _HUB neighbours: a global parameter coupled to every variable)
    get colours of their own: a colour used once is in no two-coloured path, so the rest is star
    coloured without them, at the cost of the rest's squared degrees. An arrowhead keeps its 2."""
    degree = np.diff(p.indptr)
    if int(degree @ degree) <= _STAR_WORK:
        return _star(p, order)
    hubs = int(np.count_nonzero(degree > _HUB))
    if hubs == 0:
        return _star(p, order)
    order_by_degree = np.argsort(-degree, kind="stable")
    keep = np.ones(p.shape[0], bool)
    keep[order_by_degree[:hubs]] = False
    A = sp.csr_array((np.ones(p.nnz, bool), p.indices, p.indptr), shape=p.shape)
    rest = _star(pattern(A[keep][:, keep]), order)
    colours = np.empty(p.shape[0], np.int64)
    colours[keep] = rest
    colours[order_by_degree[:hubs]] = int(rest.max(initial=-1)) + 1 + np.arange(hubs)
    return colours


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
    if not (rc.any() and cc.any()):  # one side only: each class is the only source of its entries
        return rc, cc
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


def _split(A: sp.csr_array, dense_rows: np.ndarray, order: str) -> tuple[np.ndarray, np.ndarray]:
    """Rows `dense_rows` by reverse passes (a row colouring of them alone), the other rows by
    forward passes (a column colouring of the pattern without the dense rows)."""
    kept = pattern(A[~dense_rows])
    columns = _distance2(kept.col_ptr, kept.col_rows, kept.indptr, kept.indices, order) + 1
    cc = np.where(np.diff(kept.col_ptr) > 0, columns, 0)
    dense = pattern(A[dense_rows])
    rows = _distance2(dense.indptr, dense.indices, dense.col_ptr, dense.col_rows, order) + 1
    rc = np.zeros(A.shape[0], np.int64)
    rc[dense_rows] = np.where(np.diff(dense.indptr) > 0, rows, 0)
    return _renumber(rc), _renumber(cc)


def _splits(A: sp.csr_array, best: int, order: str, most: int = 6) -> list[tuple[np.ndarray, np.ndarray]]:
    """`_split` for "rows longer than t", t among the `most` largest row lengths but the longest,
    for each t whose lower bound (the longest row kept + the most dense-row entries in a column)
    is below `best` passes."""
    row_nnz = np.diff(A.indptr)
    indptr, indices = A.indptr.astype(np.int64), A.indices.astype(np.int64)
    found = []
    for t in np.unique(row_nnz)[::-1][1 : most + 1]:
        if t + 1 < best and kernels.split_bound(indptr, indices, t, A.shape[1]) < best:
            found.append(_split(A, row_nnz > t, order))
    return found


def _passes(rc_cc: tuple[np.ndarray, np.ndarray]) -> int:
    return int(rc_cc[0].max(initial=0) + rc_cc[1].max(initial=0))


def bicolouring(P: object, order: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Row colours (m,) and column colours (n,), 0 meaning "not seeded", 1..k otherwise: every
    nonzero of P is its column's only one of that colour in its row (read off J @ Scol), or its
    row's only one of that colour in its column (read off Srow.T @ J).

    The fewest passes (kr + kc) among: the two one-sided colourings; splits that send the longest
    rows (columns) to reverse (forward) passes and colour the rest on the other side (Coleman &
    Verma's bi-directional partitioning, 1998), which is what beats both one-sided colourings on
    an arrowhead (3 passes instead of n); and a star colouring of the bipartite graph in natural
    order (GMP05 section 5; SparseMatrixColorings.jl colours the same augmented graph). The winner
    then loses every colour class whose entries the other side already determines.
    """
    A = canonical(P)
    p = pattern(A)
    m, n = p.shape
    T = sp.csr_array(A.T)
    candidates = [_split(A, np.zeros(m, bool), order), _split(T, np.zeros(n, bool), order)[::-1]]
    best = min(map(_passes, candidates))
    candidates += _splits(A, best, order)
    candidates += [cr[::-1] for cr in _splits(T, best, order)]
    ptr, idx, edge = bipartite(p)
    degree = np.diff(ptr)
    if int(degree @ degree) <= _STAR_WORK:  # the star colouring sweeps neighbours of neighbours
        both = kernels.greedy_star(ptr, idx, edge, np.arange(m + n, dtype=np.int64)) + 1
        cc = np.where(np.diff(p.col_ptr) > 0, both[:n], 0)  # an empty line needs no seed
        rc = np.where(np.diff(p.indptr) > 0, both[n:], 0)
        candidates.append((rc, cc))
    rc, cc = min(candidates, key=_passes)
    rc, cc = _drop_classes(p, rc, cc)
    return _renumber(rc), _renumber(cc)
