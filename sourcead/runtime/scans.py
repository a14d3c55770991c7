"""Runtime helpers of cumulative sums and products over an axis, which numba's np.cumsum and
np.prod do not take: `cumsum_along` and its adjoint `cumsum_along_bar`, `prod_along`, and
`prod_others` / `prod_others_along` (the product of the other elements, the partial of a product,
exact when some are zero). 1-D and 2-D arrays.
"""

from __future__ import annotations

import numpy as np
from numba.extending import overload, register_jitable

# the helpers generated code may import (`sourcead.runtime.HELPERS` is the union of these lists)
__all__ = ["cumsum_along", "cumsum_along_bar", "prod_along", "prod_others_along", "prod_others"]


def cumsum_along(x, axis):
    """np.cumsum(x, axis=axis) of a 1-D or 2-D x."""
    return np.cumsum(x, axis=axis)


def cumsum_along_bar(g, axis):
    """The adjoint of cumsum_along: cumulative sums of g from the end of the axis."""
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)


@register_jitable
def _cumsum_2d(x, axis, backwards):
    out = np.empty(x.shape)
    rows, cols = x.shape
    if axis == 0 or axis == -2:
        for j in range(cols):
            total = 0.0
            for k in range(rows):
                i = rows - 1 - k if backwards else k
                total += x[i, j]
                out[i, j] = total
        return out
    for i in range(rows):
        total = 0.0
        for k in range(cols):
            j = cols - 1 - k if backwards else k
            total += x[i, j]
            out[i, j] = total
    return out


@overload(cumsum_along)
def _cumsum_along(x, axis):
    if x.ndim == 1:
        return lambda x, axis: np.cumsum(x)
    return lambda x, axis: _cumsum_2d(x, axis, False)


@overload(cumsum_along_bar)
def _cumsum_along_bar(g, axis):
    if g.ndim == 1:
        return lambda g, axis: np.cumsum(g[::-1])[::-1]
    return lambda g, axis: _cumsum_2d(g, axis, True)


def prod_along(x, axis):
    """np.prod(x, axis=axis) of a 1-D or 2-D x."""
    return np.prod(x, axis=axis)


def prod_others_along(x, axis):
    """For each element, the product of the others on its line along `axis` (prod_others per line)."""
    if np.ndim(x) == 1:
        return prod_others(x)
    lines = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    out = np.empty(lines.shape)
    for i in range(lines.shape[0]):
        out[i] = prod_others(lines[i])
    return np.moveaxis(out, -1, axis)


@register_jitable
def _prod_2d(x, axis):
    rows, cols = x.shape
    if axis == 0 or axis == -2:
        out = np.ones(cols)
        for i in range(rows):
            for j in range(cols):
                out[j] *= x[i, j]
        return out
    out = np.ones(rows)
    for i in range(rows):
        for j in range(cols):
            out[i] *= x[i, j]
    return out


@register_jitable
def _prod_others_2d(x, axis):
    out = np.empty(x.shape)
    rows, cols = x.shape
    if axis == 0 or axis == -2:
        for j in range(cols):
            out[:, j] = prod_others(np.ascontiguousarray(x[:, j]))
        return out
    for i in range(rows):
        out[i] = prod_others(np.ascontiguousarray(x[i]))
    return out


@overload(prod_along)
def _prod_along(x, axis):
    if x.ndim == 1:
        return lambda x, axis: np.prod(x)
    return lambda x, axis: _prod_2d(x, axis)


@overload(prod_others_along)
def _prod_others_along(x, axis):
    if x.ndim == 1:
        return lambda x, axis: prod_others(x)
    return lambda x, axis: _prod_others_2d(x, axis)


@register_jitable
def prod_others(x):
    """For each element, the product of all the others (no division: exact when some are zero)."""
    flat = np.ravel(x)
    out = np.empty(flat.size)
    prefix = 1.0
    for k in range(flat.size):
        out[k] = prefix
        prefix *= flat[k]
    suffix = 1.0
    for k in range(flat.size - 1, -1, -1):
        out[k] *= suffix
        suffix *= flat[k]
    return out.reshape(x.shape)
