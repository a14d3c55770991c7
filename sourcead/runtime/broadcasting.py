"""Runtime helpers for the shapes of whole-array adjoints and tangents: `unbroadcast` sums an
adjoint back to the shape of an operand NumPy broadcast, `broadcast_tangent` is forward mode's twin,
`expand_axis` repeats the adjoint of a reduction along its axis, `chosen` keeps an array adjoint
below a `max`/`min` only where its operand was chosen, `as_vector` marks a 1-D norm operand.

Each is a Python function (run with `jit=False`) with a numba `overload`, or `register_jitable`.
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.extending import overload, register_jitable

# the helpers generated code may import (`sourcead.runtime.HELPERS` is the union of these lists)
__all__ = [
    "unbroadcast",
    "add_into",
    "subtract_into",
    "chosen",
    "broadcast_tangent",
    "broadcast_like",
    "expand_axis",
    "as_vector",
    "as_matrix",
    "mask_of",
]


def unbroadcast(g, like):
    """The adjoint contribution `g` made into the shape of `like` (a float or an array), as NumPy
    broadcast `like` against the other operands: summed over the axes along which `like` was
    broadcast, and spread over the axes that `g` lacks (a float adjoint stands for every element)."""
    if not isinstance(like, np.ndarray):
        return float(np.sum(g))
    g = np.asarray(g, dtype=np.float64)
    while g.ndim > like.ndim:
        g = g.sum(axis=0)
    for k in range(g.ndim):
        if like.shape[like.ndim - g.ndim + k] == 1 and g.shape[k] != 1:
            g = g.sum(axis=k, keepdims=True)
    return np.broadcast_to(g, like.shape).copy() if g.shape != like.shape else g


@overload(unbroadcast)
def _unbroadcast(g, like):
    if isinstance(like, (types.Float, types.Integer)):
        return lambda g, like: np.sum(g)
    if not isinstance(like, types.Array):
        return None
    if isinstance(g, (types.Float, types.Integer)):  # the same adjoint for every element

        def spread(g, like):
            return np.full(like.shape, g)

        return spread
    if not isinstance(g, types.Array) or not 1 <= like.ndim <= 5 or not 1 <= g.ndim <= 5:
        return None
    gn, ln = g.ndim, like.ndim
    if gn == ln:

        def same(g, like):
            if g.shape == like.shape:
                return np.ascontiguousarray(g)  # nothing was broadcast
            out = np.zeros(like.shape)
            _accumulate(out, g)
            return out

        return same
    pad = _PADS[(min(gn, ln), max(gn, ln))]
    if gn > ln:  # like was broadcast along leading axes: sum them

        def leading(g, like):
            out = np.zeros(like.shape)
            _accumulate(pad(out), g)
            return out

        return leading

    def spread(g, like):  # g lacks leading axes of like: it stands for every row
        out = np.zeros(like.shape)
        _accumulate(out, pad(np.ascontiguousarray(g)))
        return out

    return spread


def add_into(x, g):
    """`x += unbroadcast(g, x)` for an array `x` (a slice or row of an adjoint, a view), in place:
    the adjoint contribution `g` summed over the axes along which `x` was broadcast and added into
    `x`, with no array made for the sum nor for `x`'s new value. The generated code wrote it as
    `x_bar[s] += unbroadcast(g, x_bar[s])`, which numba lowers inline as three loop nests (the add,
    then the slice assigned from itself: a copy for the overlap, and the copy back), each one more
    function body for LLVM's passes (hdiff's gradient: 14 of them were a third of its 76,000
    instructions). A `g` that overlaps `x` is read before any of `x` is written, as NumPy reads it."""
    x += unbroadcast(g, x)


@register_jitable
def _overlap(x, g):
    """Do the memory extents of arrays x and g overlap?"""
    if x.size == 0 or g.size == 0:
        return False
    xs, gs = x.ctypes.data, g.ctypes.data
    return xs < gs + g.nbytes and gs < xs + x.nbytes


@register_jitable
def _check_broadcast(xs, gs):
    for k in range(len(xs)):
        if xs[k] != gs[k] and xs[k] != 1 and gs[k] != 1:
            raise ValueError("operands could not be broadcast together")


@overload(add_into)
def _add_into(x, g):
    if not isinstance(x, types.Array):
        return None
    if isinstance(g, (types.Float, types.Integer)):

        def number(x, g):
            x += g

        return number
    if not isinstance(g, types.Array):
        return None
    if g.ndim != x.ndim or not 1 <= x.ndim <= 5:

        def other(x, g):  # g has axes x lacks, or lacks some of x's: as the line was
            x += unbroadcast(g, x)

        return other

    def same(x, g):
        _check_broadcast(x.shape, g.shape)
        if _overlap(x, g):
            _accumulate(x, g.copy())
        elif x.shape == g.shape:
            x += g
        else:
            _accumulate(x, g)

    return same


def subtract_into(x, g):
    """`x -= unbroadcast(g, x)` in place, as `add_into` adds (the line was `x += unbroadcast(-g, x)`,
    whose `-g` is one more array and one more loop nest)."""
    x -= unbroadcast(g, x)


@overload(subtract_into)
def _subtract_into(x, g):
    if not isinstance(x, types.Array):
        return None
    if isinstance(g, (types.Float, types.Integer)):

        def number(x, g):
            x -= g

        return number
    if not isinstance(g, types.Array):
        return None
    if g.ndim != x.ndim or not 1 <= x.ndim <= 5:

        def other(x, g):
            x -= unbroadcast(g, x)

        return other

    def same(x, g):
        _check_broadcast(x.shape, g.shape)
        if x.shape == g.shape and not _overlap(x, g):
            x -= g
        else:
            _accumulate(x, -g)

    return same


def chosen(m, g):
    """`g` where the selection condition `m` holds, else zeros: an array leaf's contribution below a
    float `max`/`min` (a float `g` is wrapped in place, `(g if m else 0.0)`; numba cannot join an
    array and a float in one conditional expression)."""
    return g if m else np.zeros_like(g)


@overload(chosen)
def _chosen(m, g):
    if isinstance(g, types.Array):
        return lambda m, g: g if m else np.zeros_like(g)
    if isinstance(g, (types.Float, types.Integer)):
        return lambda m, g: g if m else 0.0
    return None


def broadcast_like(a, b):
    """A float array of the shape NumPy broadcasts `a` and `b` to (floats or arrays), its contents
    undefined (0.0 for two floats): what `unbroadcast`, `np.full_like` and `zeros_like` read of a
    sum or product of operands, from their shapes alone, without computing it (`linearize.py`,
    `reverse/shapes.py`). A float array of that shape itself where there is one, else an empty one."""
    if not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray):
        return 0.0
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    for x in (a, b):
        if isinstance(x, np.ndarray) and x.dtype == np.float64 and x.shape == shape:
            return x
    return np.empty(shape)


@overload(broadcast_like)
def _broadcast_like(a, b):
    arrays = isinstance(a, types.Array), isinstance(b, types.Array)
    if arrays == (False, False):
        return lambda a, b: 0.0
    if arrays == (False, True):
        return lambda a, b: broadcast_like(b, a)
    if arrays == (True, False):
        if a.dtype == types.float64:
            return lambda a, b: a
        return lambda a, b: np.empty(a.shape)
    if a.ndim == b.ndim and a.dtype == types.float64:

        def same(a, b):
            if a.shape == b.shape:
                return a  # nothing to allocate (a view's layout joins np.empty's as "A")
            return np.empty(np.broadcast_shapes(a.shape, b.shape))

        return same
    return lambda a, b: np.empty(np.broadcast_shapes(a.shape, b.shape))


@register_jitable
def _pad_1_2(a):
    return a.reshape((1, a.shape[0]))


@register_jitable
def _pad_1_3(a):
    return a.reshape((1, 1, a.shape[0]))


@register_jitable
def _pad_2_3(a):
    return a.reshape((1, a.shape[0], a.shape[1]))


@register_jitable
def _pad_1_4(a):
    return a.reshape((1, 1, 1, a.shape[0]))


@register_jitable
def _pad_2_4(a):
    return a.reshape((1, 1, a.shape[0], a.shape[1]))


@register_jitable
def _pad_3_4(a):
    return a.reshape((1, a.shape[0], a.shape[1], a.shape[2]))


@register_jitable
def _pad_1_5(a):
    return a.reshape((1, 1, 1, 1, a.shape[0]))


@register_jitable
def _pad_2_5(a):
    return a.reshape((1, 1, 1, a.shape[0], a.shape[1]))


@register_jitable
def _pad_3_5(a):
    return a.reshape((1, 1, a.shape[0], a.shape[1], a.shape[2]))


@register_jitable
def _pad_4_5(a):
    return a.reshape((1, a.shape[0], a.shape[1], a.shape[2], a.shape[3]))


_PADS = {
    (1, 2): _pad_1_2,
    (1, 3): _pad_1_3,
    (2, 3): _pad_2_3,
    (1, 4): _pad_1_4,
    (2, 4): _pad_2_4,
    (3, 4): _pad_3_4,
    (1, 5): _pad_1_5,
    (2, 5): _pad_2_5,
    (3, 5): _pad_3_5,
    (4, 5): _pad_4_5,
}  # a shape with leading 1s, as NumPy aligns (up to 5-D: NPBench's convolutions broadcast 5-D products)


def _accumulate(out, g):
    """out[broadcast index] += g for every index of the broadcast shape of out and g (same ndim)."""
    raise NotImplementedError


@overload(_accumulate)
def _accumulate_impl(out, g):
    if out.ndim == 1:

        def one(out, g):
            n = max(out.shape[0], g.shape[0])
            for i in range(n):
                out[i if out.shape[0] > 1 else 0] += g[i if g.shape[0] > 1 else 0]

        return one
    if out.ndim == 2:

        def two(out, g):
            n, m = max(out.shape[0], g.shape[0]), max(out.shape[1], g.shape[1])
            for i in range(n):
                oi, gi = (i if out.shape[0] > 1 else 0), (i if g.shape[0] > 1 else 0)
                for j in range(m):
                    out[oi, j if out.shape[1] > 1 else 0] += g[gi, j if g.shape[1] > 1 else 0]

        return two

    if out.ndim >= 4:

        def four(out, g):  # over the leading axis, each block one dimension fewer (down to `three`)
            n = max(out.shape[0], g.shape[0])
            for i in range(n):
                _accumulate(out[i if out.shape[0] > 1 else 0], g[i if g.shape[0] > 1 else 0])

        return four

    def three(out, g):
        n, m, p = max(out.shape[0], g.shape[0]), max(out.shape[1], g.shape[1]), max(out.shape[2], g.shape[2])
        for i in range(n):
            oi, gi = (i if out.shape[0] > 1 else 0), (i if g.shape[0] > 1 else 0)
            for j in range(m):
                oj, gj = (j if out.shape[1] > 1 else 0), (j if g.shape[1] > 1 else 0)
                for k in range(p):
                    out[oi, oj, k if out.shape[2] > 1 else 0] += g[gi, gj, k if g.shape[2] > 1 else 0]

    return three


@register_jitable
def broadcast_tangent(t, x):
    """The tangent `t` of `x op v` (x constant) in the shape NumPy broadcasts x and t to: where
    only the smaller operand varies, its tangent stands for every element of the result (forward
    mode's twin of `unbroadcast`)."""
    return np.broadcast_to(t, np.broadcast_shapes(np.shape(t), np.shape(x))).copy()


def as_vector(x):
    """x itself: the vector norms (`np.linalg.norm(x, 1)`) are sums only for a 1-D x."""
    return x


@overload(as_vector)
def _as_vector(x):
    return lambda x: x


def as_matrix(x):
    """x itself: np.cov's lowering takes a 2-D x only (`rules.results.matrix` says so)."""
    return x


@overload(as_matrix)
def _as_matrix(x):
    return lambda x: x


def mask_of(m, x, v):
    """m itself, the mask of `x[m] = v` (frontend/masks.py), after NumPy's check of its shape."""
    if np.ndim(m) != 0 and np.shape(m) != np.shape(x):
        raise IndexError("boolean index did not match the indexed array's shape")
    return m


@overload(mask_of)
def _mask_of(m, x, v):
    if isinstance(m, types.Array):

        def checked(m, x, v):
            if m.shape != x.shape:
                raise IndexError("boolean index did not match the indexed array's shape")
            return m

        return checked
    return lambda m, x, v: m


def expand_axis(g, x, axis):
    """The adjoint of a reduction of x over `axis`, in x's shape: g repeated along the axis (a view,
    not a copy; a float g, the same adjoint for every element of the reduction, is left as it is)."""
    if np.ndim(x) == 1 or np.ndim(g) == 0:
        return g
    return np.broadcast_to(np.expand_dims(g, axis), np.shape(x))


@overload(expand_axis)
def _expand_axis(g, x, axis):
    if x.ndim == 1 or isinstance(g, (types.Float, types.Integer)):
        return lambda g, x, axis: g
    if x.ndim > 2:

        def any_axis(g, x, axis):  # g gets a 1 where the axis was, then is repeated along it
            shape = tuple_setitem(x.shape, axis % x.ndim, 1)
            return np.broadcast_to(np.ascontiguousarray(g).reshape(shape), x.shape)

        return any_axis

    def row_or_column(g, x, axis):  # x is 2-D: axis 0 (or -2) keeps a row, axis 1 (or -1) a column
        c = np.ascontiguousarray(g)
        if axis == 0 or axis == -2:
            return np.broadcast_to(c.reshape((1, c.shape[0])), x.shape)
        return np.broadcast_to(c.reshape((c.shape[0], 1)), x.shape)

    return row_or_column
