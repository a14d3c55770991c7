"""Runtime helpers: the vector norms that numba's `np.linalg.norm` does not compute, those along an
axis (`np.linalg.norm(A, ord, axis=k)`, rows or columns of a 2-D array) and with `ord` of a 1-D
array (normalize writes it over axis 0). `norm2_along` is the 2-norm, `norm1_along` the 1-norm,
`norm_inf_along` the largest magnitude; their derivatives are declared in `rules/arrays.py`, with
the subgradient 0 at a zero vector, as for `np.linalg.norm(A)`.

Plain NumPy when the generated code runs with `jit=False`; under numba, loops over the rows or
columns (a float for a 1-D array). `sourcead.runtime` re-exports them.
"""

from __future__ import annotations

import math

import numpy as np
from numba.extending import overload, register_jitable

# the helpers generated code may import (`sourcead.runtime.HELPERS` is the union of these lists)
__all__ = ["norm2_along", "norm1_along", "norm_inf_along"]


def norm2_along(x, axis):
    """np.linalg.norm(x, axis=axis): the 2-norm of each column (axis 0) or row (axis 1) of x."""
    return np.linalg.norm(x, 2, axis)


def norm1_along(x, axis):
    """np.linalg.norm(x, 1, axis=axis): the sum of the magnitudes of each column or row of x."""
    return np.linalg.norm(x, 1, axis)


def norm_inf_along(x, axis):
    """np.linalg.norm(x, np.inf, axis=axis): the largest magnitude of each column or row of x."""
    return np.linalg.norm(x, np.inf, axis)


@register_jitable
def _vector_norm(v, kind):
    """The `kind`-norm of a 1-D v: 2, 1, or 0 for the largest magnitude (a nan propagates)."""
    total = 0.0
    for k in range(v.shape[0]):
        e = abs(v[k])
        if kind == 2:
            total += e * e
        elif kind == 1:
            total += e
        elif e > total or e != e:
            total = e
    return math.sqrt(total) if kind == 2 else total


def _along(kind: int):
    """The numba implementation of one norm along an axis: a float for a 1-D x, else one per column
    (axis 0 or -2) or row (axis 1 or -1)."""

    def typer(x, axis):
        if x.ndim == 1:
            return lambda x, axis: _vector_norm(x, kind)

        def two_d(x, axis):
            if axis == 0 or axis == -2:
                out = np.empty(x.shape[1])
                for j in range(x.shape[1]):
                    out[j] = _vector_norm(x[:, j], kind)
                return out
            out = np.empty(x.shape[0])
            for i in range(x.shape[0]):
                out[i] = _vector_norm(x[i], kind)
            return out

        return two_d

    return typer


overload(norm2_along)(_along(2))
overload(norm1_along)(_along(1))
overload(norm_inf_along)(_along(0))
