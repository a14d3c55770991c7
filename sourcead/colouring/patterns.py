"""Patterns in canonical form, and the index arrays the kernels read.

A pattern is a 2-D scipy.sparse matrix (or array, or a dense array) whose stored nonzero entries
are the structure; here it becomes a `csr_array` of bool with sorted indices, no duplicates and no
stored zeros, with int64 index arrays. The CSC view of the same entries carries `to_csr`: the
position in the CSR arrays of each CSC position, so a value found column by column lands in the
CSR data without a search.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import SourceADError
from .kernels import drop_diagonal, transpose


@dataclass(frozen=True)
class Pattern:
    """The structure of an (m, n) sparse matrix, row by row (CSR) and column by column (CSC)."""

    shape: tuple[int, int]
    indptr: np.ndarray  # CSR
    indices: np.ndarray
    col_ptr: np.ndarray  # CSC
    col_rows: np.ndarray
    to_csr: np.ndarray  # CSC position -> CSR position

    @property
    def nnz(self) -> int:
        return int(self.indices.shape[0])

    def rows(self) -> np.ndarray:
        """The row of every CSR position."""
        return np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(self.indptr))

    def transpose(self) -> Pattern:
        order = np.argsort(self.to_csr, kind="stable")  # CSR position -> CSC position
        return Pattern((self.shape[1], self.shape[0]), self.col_ptr, self.col_rows, self.indptr, self.indices, order)


def canonical(P: object, what: str = "the pattern") -> sp.csr_array:
    """`P` as a csr_array of bool with sorted, unique indices and no stored False (int32 or int64
    indices as scipy chose)."""
    if not (sp.issparse(P) or isinstance(P, np.ndarray)):
        raise SourceADError(
            f"{what} must be a scipy.sparse matrix or array of bool, not {type(P).__name__}",
            hint="pass the pattern that ad.sparsity returns, or scipy.sparse.csr_array(mask)",
        )
    if len(P.shape) != 2:  # type: ignore[attr-defined]
        raise SourceADError(f"{what} must be 2-D, not of shape {P.shape}")  # type: ignore[attr-defined]
    A = sp.csr_array(P, dtype=bool)
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    A.eliminate_zeros()
    return A


def pattern(P: object, what: str = "the pattern") -> Pattern:
    """The CSR and CSC index arrays of `P`'s structure (see `canonical`)."""
    A = canonical(P, what)
    m, n = A.shape
    indptr = A.indptr.astype(np.int64)
    indices = A.indices.astype(np.int64)
    col_ptr, col_rows, to_csr = transpose(indptr, indices, n)
    return Pattern((m, n), indptr, indices, col_ptr, col_rows, to_csr)


def symmetric(P: object) -> Pattern:
    """`P`'s pattern, checked square and symmetric (the pattern of a Hessian)."""
    p = pattern(P, "the Hessian pattern")
    m, n = p.shape
    if m != n:
        raise SourceADError(
            f"a star colouring needs a square, symmetric pattern (a Hessian's), not one of shape {p.shape}",
            hint="colour a Jacobian's pattern with column_colouring, row_colouring or bicolouring",
        )
    if not (np.array_equal(p.indptr, p.col_ptr) and np.array_equal(p.indices, p.col_rows)):
        raise SourceADError(
            "a star colouring needs a symmetric pattern (a Hessian's): this one has an entry (i, j) without (j, i)",
            hint="symmetrise it first: P = P + P.T",
        )
    return p


def adjacency(p: Pattern) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The adjacency graph of a symmetric pattern: (ptr, idx) without the diagonal, and `edge`, the
    same number for positions (i, j) and (j, i) (the CSR position of the one with i < j)."""
    ptr, idx = drop_diagonal(p.indptr, p.indices)
    # position of (j, i) for each (i, j): the structure is symmetric, so the CSC position of
    # (i, j) is the CSR position of (j, i)
    mirror = np.empty(idx.shape[0], np.int64)
    mirror[transpose(ptr, idx, p.shape[0])[2]] = np.arange(idx.shape[0], dtype=np.int64)
    edge = np.minimum(np.arange(idx.shape[0], dtype=np.int64), mirror)
    return ptr, idx, edge


def bipartite(p: Pattern) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The adjacency graph of [[0, P.T], [P, 0]]: columns are vertices 0..n-1, rows n..n+m-1; with
    `edge` as in `adjacency`."""
    m, n = p.shape
    ptr = np.concatenate([p.col_ptr, p.nnz + p.indptr[1:]])
    idx = np.concatenate([p.col_rows + n, p.indices])
    edge = np.concatenate([p.to_csr, np.arange(p.nnz, dtype=np.int64)])
    return ptr.astype(np.int64), idx.astype(np.int64), edge
