"""Runtime helpers of the Cholesky factor L = np.linalg.cholesky(A): its tangent and its adjoint.

NumPy (and numba) read only the lower triangle and the diagonal of A: an entry above the diagonal
has no effect, so its derivative is zero, and an entry below stands for both of the symmetric
matrix's. With Φ(X) the lower triangle of X with its diagonal halved (Murray, "Differentiation of
the Cholesky decomposition", 2016):

    tangent   L' = L Φ(L⁻¹ S L⁻ᵀ),   S = tril(A') + tril(A', -1)ᵀ  (the symmetric matrix A' stands for)
    adjoint   M = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹,   Ā = tril(M + Mᵀ) with the diagonal of M

Both are plain NumPy that numba compiles (`register_jitable`); the solves are general solves of
the triangular factor, O(n³) as the factorisation itself.
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


@register_jitable
def cholesky_tangent(z, t):
    """The tangent of L = cholesky(A) (z is L) along A's tangent t, of which the lower triangle counts."""
    s = np.tril(t) + np.tril(t, -1).T
    y = np.linalg.solve(z, s)  # L⁻¹ S
    x = np.linalg.solve(z, np.ascontiguousarray(y.T)).T  # L⁻¹ S L⁻ᵀ
    return z @ _phi(x)


@register_jitable
def cholesky_bar(g, z):
    """The adjoint of A in L = cholesky(A) (z is L) from L's adjoint g: on the lower triangle only."""
    p = _phi(z.T @ g)
    zt = np.ascontiguousarray(z.T)
    x = np.linalg.solve(zt, p)  # L⁻ᵀ P
    m = np.linalg.solve(zt, np.ascontiguousarray(x.T)).T  # L⁻ᵀ P L⁻¹
    out = np.tril(m + m.T)
    for i in range(out.shape[0]):
        out[i, i] = m[i, i]
    return out
