"""Helpers that generated code calls: typed tapes that grow by doubling, reversed ranges, the
adjoints of broadcasting, reductions and products.

They are `register_jitable` (or a Python function with a numba `overload`): plain Python when the
generated code runs with `jit=False`, compiled into the caller when it runs under numba.
"""

from __future__ import annotations

import math

import numpy as np
from numba.core import types
from numba.extending import overload, register_jitable

from .checkpoint import (  # noqa: F401  (generated code imports every helper from here)
    checkpoint_capacity,
    checkpoint_grow,
    checkpoint_next,
    checkpoint_online,
    checkpoint_online_plan,
    checkpoint_place,
    checkpoint_restore,
    checkpoint_schedule,
    checkpoint_slots,
    checkpoint_store,
)
from .flat_records import record_flat  # noqa: F401  (generated code imports it)
from .lowered import (  # noqa: F401  (generated code imports them)
    ADJOINT_CHUNKS,
    add_chunk_rows,
    add_unordered,
    chunk_zeros,
    empty_tape,
    zeros_like,
)
from .norms import NORM_HELPERS, norm1_along, norm2_along, norm_inf_along  # noqa: F401


@register_jitable
def reserve(tape, capacity):
    """`tape` with room for at least `capacity` entries (copied into a larger array if needed)."""
    if capacity <= tape.shape[0]:
        return tape
    doubled = 2 * tape.shape[0]
    # not max(): numba would compile its overload for the pair, 0.06-0.08 s of a cold first call
    bigger = empty_tape(tape, capacity if capacity > doubled else doubled)
    for k in range(tape.shape[0]):  # a loop: numba compiles a slice copy here 20x slower (2 s)
        bigger[k] = tape[k]
    return bigger


@register_jitable
def last_index(start, stop, step):
    """The last value of range(start, stop, step) (step > 0), or start - 1 for an empty range."""
    count = len(range(start, stop, step))
    return start + (count - 1) * step


# parallel adjoints' per-chunk sums, added in chunk order: `chunk_zeros`, `add_chunk_rows` (lowered.py)


# --- whole arrays: the adjoint of broadcasting, and of max/min ------------------------------


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
    if not isinstance(g, types.Array) or not 1 <= like.ndim <= 3 or not 1 <= g.ndim <= 3:
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


@register_jitable
def _pad_1_2(a):
    return a.reshape((1, a.shape[0]))


@register_jitable
def _pad_1_3(a):
    return a.reshape((1, 1, a.shape[0]))


@register_jitable
def _pad_2_3(a):
    return a.reshape((1, a.shape[0], a.shape[1]))


_PADS = {(1, 2): _pad_1_2, (1, 3): _pad_1_3, (2, 3): _pad_2_3}  # a shape with leading 1s, as NumPy aligns


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


@register_jitable
def digamma(x):
    """psi(x), the derivative of log |Gamma(x)| (math.lgamma), so Gamma'(x) = Gamma(x) psi(x):
    reflection for x < 0, the recurrence psi(x) = psi(x + 1) - 1 / x up to x >= 6, then the
    asymptotic series (relative error below 1e-11). nan at the poles 0, -1, -2, ..."""
    if x <= 0.0 and x == math.floor(x):
        return math.nan
    result = 0.0
    if x < 0.0:  # psi(x) = psi(1 - x) - pi / tan(pi x)
        result = -math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 6.0:
        result -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (1.0 / 12.0 - f * (1.0 / 120.0 - f * (1.0 / 252.0 - f * (1.0 / 240.0 - f / 132.0))))
    return result + math.log(x) - 0.5 / x - series


def as_vector(x):
    """x itself: the vector norms (`np.linalg.norm(x, 1)`) are sums only for a 1-D x."""
    return x


@overload(as_vector)
def _as_vector(x):
    return lambda x: x


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


@overload(max_along)
def _max_along(x, axis):
    if x.ndim == 1:
        return lambda x, axis: np.max(x)
    return lambda x, axis: _extrema_2d(x, axis, True)


@overload(min_along)
def _min_along(x, axis):
    if x.ndim == 1:
        return lambda x, axis: np.min(x)
    return lambda x, axis: _extrema_2d(x, axis, False)


def select_along(t, x, axis, largest):
    """The tangent of np.max(x, axis=axis) (np.min where not `largest`): t at the first extremum of
    each column (axis 0) or row (axis 1) of x; of a 1-D x, at its first extremum."""
    if np.ndim(x) == 1:
        return np.ravel(np.broadcast_to(t, np.shape(x)))[_extremum(x, largest)]
    return _select_columns(t, x, largest) if axis in (0, -2) else _select_rows(t, x, largest)


def select_along_bar(g, x, axis, largest):
    """The adjoint of np.max(x, axis=axis) (np.min): g at the first extremum of each column or row
    of x, 0.0 elsewhere."""
    if np.ndim(x) == 1:
        out = np.zeros(np.shape(x))
        out[_extremum(x, largest)] = np.sum(g)
        return out
    return _select_columns_bar(g, x, largest) if axis in (0, -2) else _select_rows_bar(g, x, largest)


@overload(select_along)
def _select_along(t, x, axis, largest):
    if x.ndim == 1:
        return lambda t, x, axis, largest: np.ravel(np.broadcast_to(t, x.shape))[_extremum(x, largest)]

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

    def two_d(g, x, axis, largest):
        if axis == 0 or axis == -2:
            return _select_columns_bar(g, x, largest)
        return _select_rows_bar(g, x, largest)

    return two_d


# --- cumulative sums and products over an axis (numba's np.cumsum and np.prod take none) -------


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


def snapshot(x):
    """The value of x now: a copy of an array (a later call may write into it), a number as it is."""
    return x.copy() if isinstance(x, np.ndarray) else x


@overload(snapshot)
def _snapshot(x):
    if isinstance(x, types.Array):
        return lambda x: x.copy()
    return lambda x: x


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
    """The adjoint of a reduction of x over `axis`, in x's shape: g repeated along the axis (a view,
    not a copy; a float g, the same adjoint for every element of the reduction, is left as it is)."""
    if np.ndim(x) == 1 or np.ndim(g) == 0:
        return g
    return np.broadcast_to(np.expand_dims(g, axis), np.shape(x))


@overload(expand_axis)
def _expand_axis(g, x, axis):
    if x.ndim == 1 or isinstance(g, (types.Float, types.Integer)):
        return lambda g, x, axis: g

    def row_or_column(g, x, axis):  # x is 2-D: axis 0 (or -2) keeps a row, axis 1 (or -1) a column
        c = np.ascontiguousarray(g)
        if axis == 0 or axis == -2:
            return np.broadcast_to(c.reshape((1, c.shape[0])), x.shape)
        return np.broadcast_to(c.reshape((c.shape[0], 1)), x.shape)

    return row_or_column


# every helper generated code may import (the namer keeps user variables off these names)
HELPERS = (
    "reserve",
    "record_flat",
    "zeros_like",
    "add_unordered",
    "last_index",
    "unbroadcast",
    "chosen",
    "broadcast_tangent",
    "digamma",
    "at_argmax",
    "at_argmin",
    "as_vector",
    "unsort",
    "max_along",
    "min_along",
    "select_along",
    "select_along_bar",
    "matmul_bar_left",
    "matmul_bar_right",
    "matmul_like",
    "prod_others",
    "cumsum_along",
    "cumsum_along_bar",
    "prod_along",
    "prod_others_along",
    "expand_axis",
    "snapshot",
    "checkpoint_slots",
    "checkpoint_schedule",
    "checkpoint_next",
    "checkpoint_online",
    "checkpoint_capacity",
    "checkpoint_grow",
    "checkpoint_place",
    "checkpoint_online_plan",
    "checkpoint_store",
    "checkpoint_restore",
    *NORM_HELPERS,
)
