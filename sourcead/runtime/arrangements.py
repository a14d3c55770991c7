"""Runtime helpers that rearrange arrays along one axis, where numba's NumPy takes no `axis`:
`flip_along` (np.flip(x, axis), a view as NumPy's), `roll_along` (np.roll(x, shift, axis), a new
array), `join_along` (np.concatenate((a, b), axis) of 1-D or 2-D arrays) and the adjoints of a
join, `first_part` and `second_part` (the slices of g that a and b became, as new arrays), and
`take_bar`, the adjoint of a gather np.take(x, idx) (`x[idx]`): g added back at each index, and
`extract_bar`, the adjoint of a selection np.extract(m, x) (`x[m]`): g put back where m holds.

Each is a Python function (run with `jit=False`) with a numba `overload` by number of dimensions
(1-D to 3-D); the axis may be negative, as NumPy's.
"""

from __future__ import annotations

import numpy as np
from numba.extending import overload, register_jitable

# the helpers generated code may import (`sourcead.runtime.HELPERS` is the union of these lists)
__all__ = [
    "flip_along",
    "roll_along",
    "join_along",
    "first_part",
    "second_part",
    "take_bar",
    "add_taken",
    "extract_bar",
]


def flip_along(x, axis):
    """np.flip(x, axis): a view of x with the axis reversed."""
    return np.flip(x, axis)


@overload(flip_along)
def _flip_along(x, axis):
    if x.ndim == 1:
        return lambda x, axis: x[::-1]
    if x.ndim == 2:

        def two(x, axis):
            return x[::-1, :] if axis % 2 == 0 else x[:, ::-1]

        return two
    if x.ndim == 3:

        def three(x, axis):
            k = axis % 3
            if k == 0:
                return x[::-1, :, :]
            return x[:, ::-1, :] if k == 1 else x[:, :, ::-1]

        return three
    return None


def roll_along(x, shift, axis):
    """np.roll(x, shift, axis): a new array, x's elements moved `shift` places along the axis."""
    return np.roll(x, shift, axis)


@overload(roll_along)
def _roll_along(x, shift, axis):
    if x.ndim == 1:
        return lambda x, shift, axis: np.roll(x, shift)
    if x.ndim == 2:

        def two(x, shift, axis):
            out = np.empty_like(x)
            k = axis % 2
            n = x.shape[k]
            s = shift % n if n > 0 else 0
            if k == 0:
                out[s:, :] = x[: n - s, :]
                out[:s, :] = x[n - s :, :]
            else:
                out[:, s:] = x[:, : n - s]
                out[:, :s] = x[:, n - s :]
            return out

        return two
    if x.ndim == 3:

        def three(x, shift, axis):
            out = np.empty_like(x)
            k = axis % 3
            n = x.shape[k]
            s = shift % n if n > 0 else 0
            if k == 0:
                out[s:, :, :] = x[: n - s, :, :]
                out[:s, :, :] = x[n - s :, :, :]
            elif k == 1:
                out[:, s:, :] = x[:, : n - s, :]
                out[:, :s, :] = x[:, n - s :, :]
            else:
                out[:, :, s:] = x[:, :, : n - s]
                out[:, :, :s] = x[:, :, n - s :]
            return out

        return three
    return None


def join_along(a, b, axis):
    """np.concatenate((a, b), axis): a new array."""
    return np.concatenate((a, b), axis)


@overload(join_along)
def _join_along(a, b, axis):
    if a.ndim == 1:
        return lambda a, b, axis: np.concatenate((a, b))

    def two(a, b, axis):
        if axis % 2 == 0:
            return np.concatenate((a, b), axis=0)
        return np.concatenate((a, b), axis=1)

    return two


def first_part(g, a, axis):
    """The adjoint of a in join_along(a, b, axis): the first a.shape[axis] slices of g (a copy)."""
    n = np.shape(a)[axis]
    return np.ascontiguousarray(np.take(g, np.arange(n), axis))


def second_part(g, a, axis):
    """The adjoint of b in join_along(a, b, axis): g past the first a.shape[axis] slices (a copy)."""
    n = np.shape(a)[axis]
    return np.ascontiguousarray(np.take(g, np.arange(n, np.shape(g)[axis]), axis))


def _part(first: bool):
    def overloaded(g, a, axis):
        if g.ndim == 1:
            if first:
                return lambda g, a, axis: g[: a.shape[0]].copy()
            return lambda g, a, axis: g[a.shape[0] :].copy()

        def two(g, a, axis):
            k = axis % 2
            n = a.shape[k]
            if k == 0:
                return (g[:n, :] if first else g[n:, :]).copy()
            return (g[:, :n] if first else g[:, n:]).copy()

        return two

    return overloaded


overload(first_part)(_part(True))
overload(second_part)(_part(False))


@register_jitable
def add_taken(out, m, g, indices):
    """`out += take_bar(g, x, indices)` in place where m holds (out of x's shape): a gather's adjoint
    without the array of x's size take_bar makes; g is an array of the indices' length or a float."""
    if not m:
        return
    n = out.shape[0]
    gs = np.broadcast_to(np.asarray(g, dtype=np.float64), indices.shape)
    for k in range(indices.shape[0]):
        i = indices[k]
        if i < 0:
            i += n
        if i < 0 or i >= n:
            raise IndexError("index out of bounds in a gather x[idx]")
        out[i] += gs[k]


@register_jitable
def take_bar(g, x, indices):
    """The adjoint of x in np.take(x, indices) from the result's adjoint g: each g[k] added at
    indices[k] (a repeated index adds up; a negative one counts from the end, as NumPy's)."""
    out = np.zeros_like(x)
    add_taken(out, True, g, indices)
    return out


@register_jitable
def extract_bar(g, m, x):
    """The adjoint of x in np.extract(m, x) (`x[m]` through a bool mask) from the result's adjoint
    g: g[k] at the k-th element of x, in C order, where m holds, zero elsewhere. g is an array of
    the selection's length or a float (the same adjoint for each selected element)."""
    out = np.zeros(x.size)
    flat = m.ravel()
    count = 0
    for i in range(min(flat.size, out.size)):
        if flat[i]:
            count += 1
    gs = np.broadcast_to(np.asarray(g, dtype=np.float64), (count,))
    k = 0
    for i in range(min(flat.size, out.size)):
        if flat[i]:
            out[i] = gs[k]
            k += 1
    return out.reshape(x.shape)
