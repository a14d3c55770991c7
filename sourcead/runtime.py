"""Helpers that generated code calls: typed tapes that grow by doubling, reversed ranges.

They are `register_jitable`: plain Python when the generated code runs with `jit=False`,
compiled into the caller when it runs under numba.
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.extending import overload, register_jitable


@register_jitable
def reserve(tape, capacity):
    """`tape` with room for at least `capacity` entries (copied into a larger array if needed)."""
    if capacity <= tape.shape[0]:
        return tape
    bigger = np.empty(max(capacity, 2 * tape.shape[0]), tape.dtype)
    for k in range(tape.shape[0]):  # a loop: numba compiles a slice copy here 20x slower (2 s)
        bigger[k] = tape[k]
    return bigger


@register_jitable
def last_index(start, stop, step):
    """The last value of range(start, stop, step) (step > 0), or start - 1 for an empty range."""
    count = len(range(start, stop, step))
    return start + (count - 1) * step


@register_jitable
def add_rows_1d(total, rows):
    """total += the sum over threads of rows[t, :n] (padded beyond n); the rows are zeroed."""
    for t in range(rows.shape[0]):
        for j in range(total.shape[0]):
            total[j] += rows[t, j]
            rows[t, j] = 0.0


@register_jitable
def add_rows_2d(total, rows):
    """total += the sum over threads of rows[t, :, :m] (padded beyond m); the rows are zeroed."""
    for t in range(rows.shape[0]):
        for i in range(total.shape[0]):
            for j in range(total.shape[1]):
                total[i, j] += rows[t, i, j]
                rows[t, i, j] = 0.0


# --- whole arrays: the adjoint of broadcasting, and of max/min ------------------------------


def unbroadcast(g, like):
    """`g` summed over the axes along which `like` (a float or an array) was broadcast to g's
    shape: the adjoint of broadcasting."""
    if not isinstance(like, np.ndarray):
        return float(np.sum(g))
    if np.ndim(g) == 0:  # a float adjoint, the same for every element: it broadcasts as it is
        return g
    g = np.asarray(g)
    while g.ndim > like.ndim:
        g = g.sum(axis=0)
    for k in range(like.ndim):
        if like.shape[k] == 1 and g.shape[k] != 1:
            g = g.sum(axis=k, keepdims=True)
    return g


@overload(unbroadcast)
def _unbroadcast(g, like):
    if isinstance(like, (types.Float, types.Integer)):
        return lambda g, like: np.sum(g)
    if isinstance(g, (types.Float, types.Integer)):  # the same adjoint for every element
        return lambda g, like: g
    if not (isinstance(like, types.Array) and isinstance(g, types.Array)):
        return None
    if g.ndim == like.ndim == 1:

        def same_1d(g, like):
            if g.shape[0] == like.shape[0]:
                return g
            out = np.zeros(1)
            out[0] = np.sum(g)
            return out

        return same_1d
    if g.ndim == 2 and like.ndim == 1:

        def rows_1d(g, like):
            out = np.zeros(like.shape[0])
            for i in range(g.shape[0]):
                for j in range(g.shape[1]):
                    out[j if like.shape[0] != 1 else 0] += g[i, j]
            return out

        return rows_1d
    if g.ndim == like.ndim == 2:

        def same_2d(g, like):
            if g.shape[0] == like.shape[0] and g.shape[1] == like.shape[1]:
                return g
            out = np.zeros(like.shape)
            for i in range(g.shape[0]):
                for j in range(g.shape[1]):
                    out[i if like.shape[0] != 1 else 0, j if like.shape[1] != 1 else 0] += g[i, j]
            return out

        return same_2d
    return None


@register_jitable
def argmax_mask(x):
    """1.0 at the (first) largest element of x, 0.0 elsewhere: the adjoint of np.max."""
    mask = np.zeros(x.size)
    mask[np.argmax(x)] = 1.0
    return mask.reshape(x.shape)


@register_jitable
def argmin_mask(x):
    """1.0 at the (first) smallest element of x, 0.0 elsewhere: the adjoint of np.min."""
    mask = np.zeros(x.size)
    mask[np.argmin(x)] = 1.0
    return mask.reshape(x.shape)


# --- matrix products: the adjoints of z = a @ b (np.dot), for 1-D and 2-D operands ---------------


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


def expand_axis(g, x, axis):
    """The adjoint of a reduction of x over `axis`, shaped to broadcast over x (a float g, the same
    adjoint for every element of the reduction, broadcasts as it is)."""
    if np.ndim(x) == 1 or np.ndim(g) == 0:
        return g
    return np.expand_dims(g, axis)


@overload(expand_axis)
def _expand_axis(g, x, axis):
    if x.ndim == 1 or isinstance(g, (types.Float, types.Integer)):
        return lambda g, x, axis: g

    def row_or_column(g, x, axis):
        c = np.ascontiguousarray(g)
        if axis == 0:
            return c.reshape((1, c.shape[0]))
        return c.reshape((c.shape[0], 1))

    return row_or_column
