"""Seed matrices, and reading a sparse matrix back from its compressed products.

Each decompression writes the CSR data of the result straight from the compressed block, one
gather over P's entries (no dense (m, n) intermediate): with a column colouring, J[i, j] is
B[i, colour[j]]; with a row colouring, C[colour[i], j]; with a star colouring, B[i, colour[j]]
when j is the only neighbour of i of its colour and B[j, colour[i]] otherwise (direct recovery,
GMP05 section 4.3); with a bicolouring, whichever side determines the entry. Before reading, each
checks that the colouring determines every entry (O(nnz)), so a wrong colouring is an error, never
a wrong matrix.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import SourceADError
from . import kernels
from .patterns import Pattern, canonical, pattern, symmetric


def seed_matrix(colours: object, k: int | None = None) -> np.ndarray:
    """The (len(colours), k) float64 matrix with S[j, colours[j]] = 1; a negative colour leaves
    row j zero (so `seed_matrix(cc - 1)` seeds one side of a bicolouring). k defaults to the
    number of colours, max(colours) + 1."""
    c = _colours(colours, None, "colours")
    top = int(c.max(initial=-1)) + 1
    k = top if k is None else int(k)
    if k < top:
        raise SourceADError(f"seed_matrix: k = {k} is fewer than the {top} colours given")
    S = np.zeros((c.shape[0], k))
    seeded = c >= 0
    S[np.flatnonzero(seeded), c[seeded]] = 1.0
    return S


def _colours(colours: object, size: int | None, what: str) -> np.ndarray:
    c = np.asarray(colours)
    if c.ndim != 1 or not (c.dtype.kind in "iu" or c.size == 0):
        raise SourceADError(f"{what} must be a 1-D int array, not {c.dtype} of shape {c.shape}")
    if size is not None and c.shape[0] != size:
        raise SourceADError(f"{what} has {c.shape[0]} entries but the pattern has {size}")
    if size is not None and c.size and c.min() < 0:
        raise SourceADError(f"{what} must be >= 0, not {int(c.min())}")
    return c.astype(np.int64)


def _block(B: object, lines: int, k: int, what: str, formula: str, transposed: bool = False) -> np.ndarray:
    """B as float64 of shape (lines, >= k), or (>= k, lines) given `transposed`, returned as the former."""
    b = np.asarray(B, dtype=np.float64)
    shape = b.shape[::-1] if transposed else b.shape
    if b.ndim != 2 or shape[0] != lines or shape[1] < k:
        want = f"({k}, {lines})" if transposed else f"({lines}, {k})"
        raise SourceADError(
            f"{what} must have shape {want} ({formula}), not {b.shape}",
            hint="compress with the seed matrix of the same colouring: seed_matrix(colours)",
        )
    return b.T if transposed else b


def _csr(p: Pattern, data: np.ndarray) -> sp.csr_array:
    return sp.csr_array((data, p.indices.copy(), p.indptr.copy()), shape=p.shape)


def _undetermined(p: Pattern, ok: np.ndarray, how: str) -> SourceADError:
    bad = int(np.flatnonzero(~ok)[0])
    i, j = int(p.rows()[bad]), int(p.indices[bad])
    return SourceADError(
        f"these colours do not determine entry ({i}, {j}) of the pattern: {how}",
        hint="colour this pattern with the matching colouring function of sourcead.colouring",
    )


def _structure(P: object) -> tuple[tuple[int, int], np.ndarray, np.ndarray]:
    """Shape and int64 CSR index arrays of P's structure, without the CSC view (see `pattern`)."""
    A = canonical(P)
    return A.shape, A.indptr.astype(np.int64), A.indices.astype(np.int64)


def _undetermined_at(indptr: np.ndarray, indices: np.ndarray, bad: int, how: str) -> SourceADError:
    i = int(np.searchsorted(indptr, bad, side="right")) - 1
    return SourceADError(
        f"these colours do not determine entry ({i}, {int(indices[bad])}) of the pattern: {how}",
        hint="colour this pattern with the matching colouring function of sourcead.colouring",
    )


def decompress_columns(P: object, colours: object, B: object) -> sp.csr_array:
    """J with P's structure from B = J @ seed_matrix(colours), shape (m, k), colours from
    `column_colouring(P)`: J[i, j] = B[i, colours[j]]."""
    shape, indptr, indices = _structure(P)
    c = _colours(colours, shape[1], "colours")
    b = _block(B, shape[0], int(c.max(initial=-1)) + 1, "B", "J @ S")
    data, bad = kernels.gather_columns(indptr, indices, c, np.ascontiguousarray(b))
    if bad >= 0:
        raise _undetermined_at(indptr, indices, bad, "two columns of one colour share its row")
    return sp.csr_array((data, indices, indptr), shape=shape)


def decompress_rows(P: object, colours: object, C: object) -> sp.csr_array:
    """J with P's structure from C = seed_matrix(colours).T @ J, shape (k, n), colours from
    `row_colouring(P)`: J[i, j] = C[colours[i], j]."""
    shape, indptr, indices = _structure(P)
    c = _colours(colours, shape[0], "colours")
    b = _block(C, shape[1], int(c.max(initial=-1)) + 1, "C", "S.T @ J", transposed=True)
    data, bad = kernels.gather_rows(indptr, indices, c, np.ascontiguousarray(b.T), shape[1])
    if bad >= 0:
        raise _undetermined_at(indptr, indices, bad, "two rows of one colour share its column")
    return sp.csr_array((data, indices, indptr), shape=shape)


def decompress_star(P: object, colours: object, B: object) -> sp.csr_array:
    """The symmetric H with P's structure from B = H @ seed_matrix(colours), shape (n, k), colours
    from `star_colouring(P)`. Entry (i, j) and (j, i) are read from the same place, the row of
    min(i, j) if that row has no other neighbour of the other's colour, else the other row."""
    p = symmetric(P)
    c = _colours(colours, p.shape[0], "colours")
    k = int(c.max(initial=-1)) + 1
    b = _block(B, p.shape[0], k, "B", "H @ S")
    rows, cols = p.rows(), p.indices
    unique = kernels.unique_in_line(p.indptr, p.indices, c + 1)  # at (i, j): j alone of its colour in row i
    diagonal = rows == cols
    if np.any(c[rows[~diagonal]] == c[cols[~diagonal]]):
        raise _undetermined(p, ~(c[rows] == c[cols]) | diagonal, "two neighbours have one colour")
    # the value of (i, j) and of (j, i) comes from the row `lo` = min(i, j) when `unique` holds at
    # (lo, hi), else from row hi; `unique` at (j, i) is found at the mirror position
    mirror = np.empty(p.nnz, np.int64)  # CSR position of (j, i): the CSC position of (i, j)
    mirror[p.to_csr] = np.arange(p.nnz, dtype=np.int64)
    lower = rows > cols
    unique_lo = np.where(lower, unique[mirror], unique)  # unique at (min, max)
    unique_hi = np.where(lower, unique, unique[mirror])  # unique at (max, min)
    ok = unique_lo | unique_hi | diagonal
    if not ok.all():
        raise _undetermined(p, ok, "no row has it alone in its colour (not a star colouring)")
    lo, hi = np.minimum(rows, cols), np.maximum(rows, cols)
    from_lo = unique_lo | diagonal
    data = np.where(from_lo, b[lo, c[hi]], b[hi, c[lo]])
    return _csr(p, data)


def decompress_bicolouring(P: object, rc: object, cc: object, Bcol: object, Brow: object) -> sp.csr_array:
    """J with P's structure from Bcol = J @ Scol, shape (m, kc), and Brow = Srow.T @ J, shape
    (kr, n), where Scol = seed_matrix(cc - 1) and Srow = seed_matrix(rc - 1), (rc, cc) from
    `bicolouring(P)`; each entry from the forward passes when they determine it, else the reverse."""
    p = pattern(P)
    r = _colours(rc, p.shape[0], "row colours")
    c = _colours(cc, p.shape[1], "column colours")
    kc, kr = int(c.max(initial=0)), int(r.max(initial=0))
    fwd = _block(Bcol, p.shape[0], kc, "Bcol", "J @ Scol")
    rev = _block(Brow, p.shape[1], kr, "Brow", "Srow.T @ J", transposed=True)
    t = p.transpose()
    forward = kernels.unique_in_line(p.indptr, p.indices, c)
    reverse = np.empty(p.nnz, np.bool_)
    reverse[p.to_csr] = kernels.unique_in_line(t.indptr, t.indices, r)
    if not (forward | reverse).all():
        raise _undetermined(p, forward | reverse, "neither its row's nor its column's passes single it out")
    rows, cols = p.rows(), p.indices
    data = np.where(forward, fwd[rows, np.maximum(c[cols] - 1, 0)] if kc else 0.0, 0.0)
    if kr:
        data = np.where(forward, data, rev[cols, np.maximum(r[rows] - 1, 0)])
    return _csr(p, data)
