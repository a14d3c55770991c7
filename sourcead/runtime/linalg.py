"""Runtime helpers of the Cholesky factor L = np.linalg.cholesky(A): its tangent and its adjoint.

NumPy (and numba) read only the lower triangle and the diagonal of A: an entry above the diagonal
has no effect, so its derivative is zero, and an entry below stands for both of the symmetric
matrix's. With Φ(X) the lower triangle of X with its diagonal halved (Murray, "Differentiation of
the Cholesky decomposition", 2016):

    tangent   L' = L Φ(L⁻¹ S L⁻ᵀ),   S = tril(A') + tril(A', -1)ᵀ  (the symmetric matrix A' stands for)
    adjoint   M = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹,   Ā = tril(M + Mᵀ) with the diagonal of M

Both are plain NumPy that numba compiles (`register_jitable`). The solves with the factor are
triangular, by substitution (numba has no `trsm`), blocked: the rows of a block take what the rows
already solved contribute in one matrix product, then are solved row by row, each row less a
vector-matrix product of the rows solved before it in the block (all products BLAS's, as np.dot,
on contiguous rows). Before, `np.linalg.solve` with the factor: an LU factorisation and a general
solve, about 2.7 n³ operations each against n³.
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

# the helpers generated code may import (`sourcead.runtime.HELPERS` is the union of these lists)
__all__ = ["cholesky_bar", "cholesky_tangent"]


@register_jitable
def _phi(x):
    """The lower triangle of x with its diagonal halved."""
    out = np.tril(x)
    for i in range(out.shape[0]):
        out[i, i] *= 0.5
    return out


# rows per block of the substitutions: the products between blocks are BLAS's
_BLOCK = 64


@register_jitable
def _solve_lower(z, b, block):
    """X with z @ X = b, z lower triangular (forward substitution), b a matrix."""
    n = z.shape[0]
    x = np.ascontiguousarray(b).copy()
    for lo in range(0, n, block):
        hi = min(lo + block, n)
        if lo > 0:  # what the rows above the block contribute
            x[lo:hi] -= np.dot(np.ascontiguousarray(z[lo:hi, :lo]), x[:lo])
        for i in range(lo, hi):
            if i > lo:
                x[i] -= np.dot(np.ascontiguousarray(z[i, lo:i]), x[lo:i])
            x[i] /= z[i, i]
    return x


@register_jitable
def _solve_lower_t(z, b, block):
    """X with z.T @ X = b, z lower triangular (back substitution with its transpose), b a matrix."""
    n = z.shape[0]
    x = np.ascontiguousarray(b).copy()
    for hi in range(n, 0, -block):
        lo = max(hi - block, 0)
        zt = np.ascontiguousarray(z[lo:, lo:hi].T)  # the block's columns of z, as rows
        if hi < n:  # what the rows below the block contribute
            x[lo:hi] -= np.dot(np.ascontiguousarray(zt[:, hi - lo :]), x[hi:])
        for i in range(hi - 1, lo - 1, -1):
            if i + 1 < hi:
                x[i] -= np.dot(zt[i - lo, i + 1 - lo : hi - lo], x[i + 1 : hi])
            x[i] /= z[i, i]
    return x


@register_jitable
def _phi_lower_t_product(z, g, block):
    """Φ(z.T @ g) for z lower triangular, computing only the lower triangle: row i of z.T @ g
    sums over rows k >= i of z, and Φ keeps columns j <= i (a block of rows: one product of
    z's and g's rows from the block's first on, g's columns to the block's last; n³/6 products
    against n³)."""
    n = z.shape[0]
    p = np.zeros((n, n))
    for lo in range(0, n, block):
        hi = min(lo + block, n)
        rows = np.dot(np.ascontiguousarray(z[lo:, lo:hi].T), np.ascontiguousarray(g[lo:, :hi]))
        for i in range(lo, hi):
            for j in range(i):
                p[i, j] = rows[i - lo, j]
            p[i, i] = 0.5 * rows[i - lo, i]
    return p


@register_jitable
def cholesky_tangent(z, t):
    """The tangent of L = cholesky(A) (z is L) along A's tangent t, of which the lower triangle counts."""
    s = np.tril(t) + np.tril(t, -1).T
    y = _solve_lower(z, s, _BLOCK)  # L⁻¹ S
    x = _solve_lower(z, np.ascontiguousarray(y.T), _BLOCK).T  # L⁻¹ S L⁻ᵀ (symmetric)
    return z @ _phi(x)


@register_jitable
def cholesky_bar(g, z):
    """The adjoint of A in L = cholesky(A) (z is L) from L's adjoint g: on the lower triangle only."""
    p = _phi_lower_t_product(z, g, _BLOCK)
    x = _solve_lower_t(z, p, _BLOCK)  # L⁻ᵀ P
    y = _solve_lower_t(z, np.ascontiguousarray(x.T), _BLOCK)  # Mᵀ, M = L⁻ᵀ P L⁻¹
    out = np.zeros_like(y)
    for i in range(out.shape[0]):
        for j in range(i):
            out[i, j] = y[j, i] + y[i, j]  # M + Mᵀ below the diagonal
        out[i, i] = y[i, i]
    return out
