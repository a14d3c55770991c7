"""Runtime helpers of matrix products z = a @ b (np.dot), 1-D and 2-D operands: the adjoints of
each operand (`matmul_bar_left`, `matmul_bar_right`) and `matmul_like`, an array of the product's
shape without computing it (what `unbroadcast` reads); `add_product`, the adjoint of a dot product
of two vectors added in place into an operand's adjoint (no array allocated: `np.dot(A[i, :i], x[:i])`
in a loop, as trisolv, cholesky and lu write it; `add_products`, two of them, one into each
operand's adjoint), and `add_outer`, the adjoint of a matrix-vector product added into the
matrix's (atax, bicg); `add_outers`, two such updates in one pass over
the matrix, and `outer_of` / `outers_of`, the same into a new matrix where the adjoint was zero
(`postpass/outers.py`, `postpass/first_contributions.py`).
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.extending import overload, register_jitable

from .lowered import advise_huge_pages

# the helpers generated code may import (`sourcead.runtime.HELPERS` is the union of these lists)
__all__ = [
    "add_outer",
    "add_outers",
    "add_product",
    "add_products",
    "matmul_bar_left",
    "matmul_bar_right",
    "matmul_like",
    "outer_of",
    "outers_of",
]


def matmul_bar_left(g, a, b):
    """The adjoint of `a` in z = a @ b, from z's adjoint g."""
    if a.ndim == 1 and b.ndim == 1:
        return g * b
    if a.ndim == 2 and b.ndim == 1:
        return np.outer(g, b)
    if a.ndim == 1:
        return np.dot(b, g)
    return np.dot(g, b.T)


def matmul_bar_right(g, a, b):
    """The adjoint of `b` in z = a @ b, from z's adjoint g."""
    if a.ndim == 1 and b.ndim == 1:
        return g * a
    if a.ndim == 1:
        return np.outer(a, g)
    return np.dot(a.T, g)


@overload(matmul_bar_left)
def _matmul_bar_left(g, a, b):
    if (a.ndim, b.ndim) == (1, 1):
        return lambda g, a, b: g * b
    if (a.ndim, b.ndim) == (2, 1):
        return lambda g, a, b: np.outer(g, b)
    if (a.ndim, b.ndim) == (1, 2):
        return lambda g, a, b: np.dot(b, g)
    return lambda g, a, b: np.dot(g, b.T)


@overload(matmul_bar_right)
def _matmul_bar_right(g, a, b):
    if (a.ndim, b.ndim) == (1, 1):
        return lambda g, a, b: g * a
    if (a.ndim, b.ndim) == (1, 2):
        return lambda g, a, b: np.outer(a, g)
    return lambda g, a, b: np.dot(a.T, g)


def matmul_like(a, b):
    """An array of the shape `a @ b` has (1-D and 2-D operands), its contents undefined: what
    `unbroadcast` reads of a matrix product it sums an adjoint back to, without computing the
    product. Sizes that do not meet raise as `a @ b` does."""
    if a.shape[-1] != b.shape[0]:
        raise ValueError("matmul: the operands' inner sizes differ")
    if a.ndim == 1 and b.ndim == 1:
        return 0.0
    return np.empty(a.shape[:-1] + b.shape[1:])


@overload(matmul_like)
def _matmul_like(a, b):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array) and a.ndim <= 2 and b.ndim <= 2):
        return None
    if (a.ndim, b.ndim) == (1, 1):

        def scalar(a, b):
            if a.shape[-1] != b.shape[0]:
                raise ValueError("matmul: the operands' inner sizes differ")
            return 0.0

        return scalar

    def like(a, b):
        if a.shape[-1] != b.shape[0]:
            raise ValueError("matmul: the operands' inner sizes differ")
        return np.empty(a.shape[:-1] + b.shape[1:])

    return like


@register_jitable
def add_product(out, m, g, v):
    """`out += g * v` in place where `m` holds, for vectors `out` and `v` of one length (a row or
    slice of an adjoint, and the other operand of `a @ b`): the contribution of a dot product's
    adjoint `g` to one operand, `out += chosen(m, matmul_bar_left(g, a, b))` without the two
    arrays that line allocates. `m` false (the product's adjoint exactly zero) adds nothing, as
    `chosen` does; sizes that differ raise as the product did."""
    if out.shape[0] != v.shape[0]:
        raise ValueError("matmul: the operands' inner sizes differ")
    if m:
        for k in range(out.shape[0]):
            out[k] += g * v[k]


def add_products(out, m, g, v, out2, n, h, w):
    """`add_product(out, m, g, v)` and `add_product(out2, n, h, w)`: a dot product's
    contributions to its two operands' adjoints (trisolv's `L_bar[i, :i]` and `x_bar[:i]`), in one
    loop over their common length where all four vectors are contiguous, else as two loops.

    The layouts decide when numba compiles the call (`_add_products`). Measured on lu's pattern,
    a contiguous row `A_bar[i, :j]` with a strided column `A_bar[:j, j]`, one loop took about 3x
    the time of two; the pass `outers` no longer fuses two slices of one adjoint, and a strided
    vector from another caller gets two loops. Sizes that differ raise as the products did,
    before anything is added.

    `out` and `out2` may be views of one array, even overlapping ones: nothing either add reads
    is written by the other (`v` and `w` are not adjoints), so every element gets the same terms
    as from the two calls one after the other; where one element is in both views, the fused
    loop may add them in the other order: the same value up to rounding."""
    if all(a.flags.c_contiguous for a in (out, v, out2, w)):
        _products_fused(out, m, g, v, out2, n, h, w)
    else:
        _products_apart(out, m, g, v, out2, n, h, w)


def _products_fused(out, m, g, v, out2, n, h, w):
    if out.shape[0] != v.shape[0] or out2.shape[0] != w.shape[0]:
        raise ValueError("matmul: the operands' inner sizes differ")
    if m and n and out.shape[0] == out2.shape[0]:
        for k in range(out.shape[0]):
            out[k] += g * v[k]
            out2[k] += h * w[k]
        return
    if m:
        for k in range(out.shape[0]):
            out[k] += g * v[k]
    if n:
        for k in range(out2.shape[0]):
            out2[k] += h * w[k]


def _products_apart(out, m, g, v, out2, n, h, w):
    if out.shape[0] != v.shape[0] or out2.shape[0] != w.shape[0]:
        raise ValueError("matmul: the operands' inner sizes differ")
    if m:
        for k in range(out.shape[0]):
            out[k] += g * v[k]
    if n:
        for k in range(out2.shape[0]):
            out2[k] += h * w[k]


@overload(add_products)
def _add_products(out, m, g, v, out2, n, h, w):
    """One body, no call inside (each call passes four views: more than a short loop costs)."""
    if all(isinstance(a, types.Array) and a.layout == "C" for a in (out, v, out2, w)):
        return _products_fused
    return _products_apart


@register_jitable
def _check_outer(shape, u, v):
    if shape[0] != u.shape[0] or shape[1] != v.shape[0]:
        raise ValueError("matmul: the operands' sizes do not match the matrix")


@register_jitable
def add_outer(out, m, u, v):
    """`out += np.outer(u, v)` in place where `m` holds (`out` of shape (len(u), len(v))): the
    contribution of a matrix-vector product's adjoint to its matrix, `A_bar += chosen(m,
    matmul_bar_left(g, A, x))`, without the outer product and `chosen`'s copy of it."""
    _check_outer(out.shape, u, v)
    if m:
        for i in range(out.shape[0]):
            ui = u[i]
            for j in range(out.shape[1]):
                out[i, j] += ui * v[j]


@register_jitable
def add_outers(out, m, u, v, n, w, z):
    """`add_outer(out, m, u, v)` then `add_outer(out, n, w, z)` in one pass over `out`, each
    element's two adds in that order (the same sums): atax's and bicg's two rank-1 updates of
    A_bar read and write the matrix once, not twice."""
    _check_outer(out.shape, u, v)
    _check_outer(out.shape, w, z)
    if m and n:
        for i in range(out.shape[0]):
            ui, wi = u[i], w[i]
            for j in range(out.shape[1]):
                out[i, j] = out[i, j] + ui * v[j] + wi * z[j]
    elif m:
        add_outer(out, True, u, v)
    elif n:
        add_outer(out, True, w, z)


@register_jitable
def outer_of(like, m, u, v):
    """A new array of `like`'s shape holding `np.outer(u, v)` where `m` holds, else zeros:
    `X = zeros_like(like); add_outer(X, m, u, v)` in one pass that writes X (0.0 + e is e but for
    the sign of a zero, which an adjoint's linear flow never reads)."""
    _check_outer(like.shape, u, v)
    if not m:
        return np.zeros((u.shape[0], v.shape[0]))
    out = np.empty((u.shape[0], v.shape[0]))
    advise_huge_pages(out)  # a new gradient as large as a matrix argument: `lowered.py`
    for i in range(out.shape[0]):
        ui = u[i]
        for j in range(out.shape[1]):
            out[i, j] = ui * v[j]
    return out


@register_jitable
def outers_of(like, m, u, v, n, w, z):
    """`outer_of(like, m, u, v)` then `add_outer` of (n, w, z) into it, in one pass that writes
    the new array: `X = zeros_like(like); add_outers(X, m, u, v, n, w, z)`."""
    _check_outer(like.shape, u, v)
    _check_outer(like.shape, w, z)
    if not m:
        return outer_of(like, n, w, z)
    if not n:
        return outer_of(like, True, u, v)
    out = np.empty((u.shape[0], v.shape[0]))
    advise_huge_pages(out)
    for i in range(out.shape[0]):
        ui, wi = u[i], w[i]
        for j in range(out.shape[1]):
            out[i, j] = ui * v[j] + wi * z[j]
    return out
