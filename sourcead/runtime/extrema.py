"""Runtime helpers of order statistics: `max_along` / `min_along` (np.max / np.min over an axis,
which numba lacks), the tangent and adjoint of those (`select_along`, `select_along_bar`: the value
at the first extremum of each row or column), the adjoints of np.max / np.min of a whole array
(`at_argmax`, `at_argmin`) and of np.sort (`unsort`). 1-D and 2-D arrays, and the last axis of a
3-D or 4-D array (NPBench's softmax: its rows, as a 2-D array of them).
"""

from __future__ import annotations

import numpy as np
from numba.extending import overload, register_jitable

# the helpers generated code may import (`sourcead.runtime.HELPERS` is the union of these lists)
__all__ = ["max_along", "min_along", "select_along", "select_along_bar", "at_argmax", "at_argmin", "unsort"]


@register_jitable
def _extremum(values, largest):
    return np.argmax(values) if largest else np.argmin(values)


@register_jitable
def _select_columns(t, x, largest):  # axis 0 of a 2-D x
    tt = np.broadcast_to(t, x.shape)
    out = np.empty(x.shape[1])
    for j in range(x.shape[1]):
        out[j] = tt[_extremum(x[:, j], largest), j]
    return out


@register_jitable
def _select_rows(t, x, largest):  # axis 1 of a 2-D x
    tt = np.broadcast_to(t, x.shape)
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = tt[i, _extremum(x[i], largest)]
    return out


@register_jitable
def _select_columns_bar(g, x, largest):
    out = np.zeros(x.shape)
    gg = np.broadcast_to(g, (x.shape[1],))
    for j in range(x.shape[1]):
        out[_extremum(x[:, j], largest), j] = gg[j]
    return out


@register_jitable
def _select_rows_bar(g, x, largest):
    out = np.zeros(x.shape)
    gg = np.broadcast_to(g, (x.shape[0],))
    for i in range(x.shape[0]):
        out[i, _extremum(x[i], largest)] = gg[i]
    return out


@register_jitable
def unsort(g, x):
    """The adjoint of np.sort(x) (1-D): g[k] goes back to the place the k-th smallest came from."""
    order = np.argsort(x)
    out = np.zeros(x.shape[0])
    for k in range(order.shape[0]):
        out[order[k]] = g[k]
    return out


def max_along(x, axis):
    """np.max(x, axis=axis), which numba does not have (1-D or 2-D x)."""
    return np.max(x, axis=axis)


def min_along(x, axis):
    """np.min(x, axis=axis), which numba does not have (1-D or 2-D x)."""
    return np.min(x, axis=axis)


@register_jitable
def _extrema_2d(x, axis, largest):
    if axis == 0 or axis == -2:
        out = np.empty(x.shape[1], dtype=x.dtype)
        for j in range(x.shape[1]):
            out[j] = x[_extremum(x[:, j], largest), j]
        return out
    out = np.empty(x.shape[0], dtype=x.dtype)
    for i in range(x.shape[0]):
        out[i] = x[i, _extremum(x[i], largest)]
    return out


@register_jitable
def _rows(x):
    """A 3-D or 4-D x as the 2-D array of its rows along the last axis (contiguous)."""
    n = x.shape[-1]
    return np.ascontiguousarray(x).reshape((x.size // n if n else 0, n))


def _extrema_along(largest: bool):
    def overloaded(x, axis):
        if x.ndim == 1:
            return lambda x, axis: np.max(x) if largest else np.min(x)
        if x.ndim == 2:
            return lambda x, axis: _extrema_2d(x, axis, largest)
        return lambda x, axis: _extrema_2d(_rows(x), 1, largest).reshape(x.shape[:-1])  # the last axis

    return overloaded


overload(max_along)(_extrema_along(True))
overload(min_along)(_extrema_along(False))


def select_along(t, x, axis, largest):
    """The tangent of np.max(x, axis=axis) (np.min where not `largest`): t at the first extremum of
    each column (axis 0) or row (axis 1) of x; of a 1-D x, at its first extremum."""
    if np.ndim(x) == 1:
        return np.ravel(np.broadcast_to(t, np.shape(x)))[_extremum(x, largest)]
    if np.ndim(x) > 2:  # the last axis
        return _select_rows(_rows(np.broadcast_to(t, np.shape(x))), _rows(x), largest).reshape(np.shape(x)[:-1])
    return _select_columns(t, x, largest) if axis in (0, -2) else _select_rows(t, x, largest)


def select_along_bar(g, x, axis, largest):
    """The adjoint of np.max(x, axis=axis) (np.min): g at the first extremum of each column or row
    of x, 0.0 elsewhere."""
    if np.ndim(x) == 1:
        out = np.zeros(np.shape(x))
        out[_extremum(x, largest)] = np.sum(g)
        return out
    if np.ndim(x) > 2:  # the last axis
        rows = np.ravel(np.broadcast_to(g, np.shape(x)[:-1]))
        return _select_rows_bar(rows, _rows(x), largest).reshape(np.shape(x))
    return _select_columns_bar(g, x, largest) if axis in (0, -2) else _select_rows_bar(g, x, largest)


@overload(select_along)
def _select_along(t, x, axis, largest):
    if x.ndim == 1:
        return lambda t, x, axis, largest: np.ravel(np.broadcast_to(t, x.shape))[_extremum(x, largest)]

    if x.ndim > 2:  # the last axis

        def rows(t, x, axis, largest):
            return _select_rows(_rows(np.broadcast_to(t, x.shape)), _rows(x), largest).reshape(x.shape[:-1])

        return rows

    def two_d(t, x, axis, largest):
        if axis == 0 or axis == -2:
            return _select_columns(t, x, largest)
        return _select_rows(t, x, largest)

    return two_d


@overload(select_along_bar)
def _select_along_bar(g, x, axis, largest):
    if x.ndim == 1:

        def one_d(g, x, axis, largest):
            out = np.zeros(x.shape)
            out[_extremum(x, largest)] = np.sum(g)
            return out

        return one_d

    if x.ndim > 2:  # the last axis

        def rows_bar(g, x, axis, largest):
            rows = np.ascontiguousarray(np.broadcast_to(g, x.shape[:-1])).ravel()
            return _select_rows_bar(rows, _rows(x), largest).reshape(x.shape)

        return rows_bar

    def two_d(g, x, axis, largest):
        if axis == 0 or axis == -2:
            return _select_columns_bar(g, x, largest)
        return _select_rows_bar(g, x, largest)

    return two_d


@register_jitable
def at_argmax(g, x):
    """An array shaped like x holding g at the (first) largest element and 0.0 elsewhere: the
    adjoint of np.max (never 0 * g, which is nan for an infinite g)."""
    out = np.zeros(x.size)
    out[np.argmax(x)] = g
    return out.reshape(x.shape)


@register_jitable
def at_argmin(g, x):
    """The adjoint of np.min: g at the (first) smallest element of x, 0.0 elsewhere."""
    out = np.zeros(x.size)
    out[np.argmin(x)] = g
    return out.reshape(x.shape)
