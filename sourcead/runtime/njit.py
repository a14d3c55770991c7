"""Helpers that the generated `.njit` entries call inside compiled code (see `njit.py`).

Each one does, in compiled code, what a check or conversion of the Python wrapper (`api/`)
does: arguments are checked against the kinds of the prepared variant at *typing* time, so a
float32 array, or an array where the variant takes a float, is a compile error whose message
says what to pass (numba prints it under "Rejected as the implementation raised a specific
error"); what only the values tell (shapes, overlap) is a `SourceADError` at run time.

Names and flags are passed as literals, so each check knows which argument it is about. The
module is hashed into the name of every entry module that imports it: numba does not notice
when an overload in another module changes.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from ..errors import AliasingError, ShapeError, SourceADError


def _literal(value: types.Type) -> object:
    return getattr(value, "literal_value", None)


def _describe(ty: types.Type) -> str:
    if isinstance(ty, types.Array):
        return f"a {ty.ndim}-D {ty.dtype} array"
    if isinstance(ty, types.Float):
        return "a float"
    if isinstance(ty, types.Boolean):
        return "a bool"
    if isinstance(ty, types.Integer):
        return "an int"
    if isinstance(ty, types.BaseTuple):
        return f"a tuple of {len(ty)}"
    return str(ty)


# --- arguments ------------------------------------------------------------------------------


def array_arg(x, name, ndim, wrt):  # noqa: ARG001 - typed by the overload below
    """`x` itself: a NumPy array (float64 when `wrt`; of `ndim` dimensions when ndim > 0)."""


@overload(array_arg, prefer_literal=True)
def _array_arg(x, name, ndim, wrt):
    label, dims, is_wrt = _literal(name), _literal(ndim), _literal(wrt)
    if label is None or dims is None or is_wrt is None:
        return None
    if not isinstance(x, types.Array):
        hint = " (this .njit variant takes it as an array: use g.njit_for(*example_args) for floats)" if dims else ""
        raise TypingError(f"sourcead .njit: argument `{label}` must be a NumPy array, got {_describe(x)}{hint}")
    if is_wrt and x.dtype != types.float64:
        raise TypingError(
            f"sourcead .njit: cannot differentiate with respect to `{label}`: it is a {x.dtype} array; "
            f"pass a float64 array, e.g. {label}.astype(np.float64)"
        )
    if dims and x.ndim != dims:
        raise TypingError(
            f"sourcead .njit: argument `{label}` is a {dims}-D array in this variant, got {_describe(x)}; "
            "use g.njit_for(*example_args) for the variant of other arguments"
        )
    return lambda x, name, ndim, wrt: x


def float_arg(x, name, free):  # noqa: ARG001
    """`x` as a float64 (ints are accepted, as the Python wrapper accepts them)."""


@overload(float_arg, prefer_literal=True)
def _float_arg(x, name, free):
    label, is_free = _literal(name), _literal(free)
    if label is None or is_free is None:
        return None
    if isinstance(x, (types.Float, types.Integer)) and not isinstance(x, types.Boolean):
        return lambda x, name, free: float(x)
    hint = (
        "; this .njit variant takes it as a float: use g.njit_for(*example_args) for the array variant"
        if is_free
        else ""
    )
    raise TypingError(f"sourcead .njit: argument `{label}` is used as a scalar, got {_describe(x)}{hint}")


def int_arg(x, name):  # noqa: ARG001
    """`x` as an int64."""


@overload(int_arg, prefer_literal=True)
def _int_arg(x, name):
    label = _literal(name)
    if label is None:
        return None
    if isinstance(x, types.Integer) and not isinstance(x, types.Boolean):
        return lambda x, name: np.int64(x)
    raise TypingError(
        f"sourcead .njit: argument `{label}` is used as an integer (a loop bound or an index), got {_describe(x)}"
    )


def bool_arg(x, name):  # noqa: ARG001
    """`x` as a bool."""


@overload(bool_arg, prefer_literal=True)
def _bool_arg(x, name):
    label = _literal(name)
    if label is None:
        return None
    if isinstance(x, types.Boolean):
        return lambda x, name: x
    raise TypingError(f"sourcead .njit: argument `{label}` is used as a bool, got {_describe(x)}")


# --- cotangents and tangents ----------------------------------------------------------------


def seed_arg(c, what):  # noqa: ARG001
    """A cotangent entry: a float, or a float64 array (passed as it is: the adjoint reads it)."""


@overload(seed_arg, prefer_literal=True)
def _seed_arg(c, what):
    label = _literal(what)
    if label is None:
        return None
    if isinstance(c, types.Array):
        if c.dtype != types.float64:
            raise TypingError(f"sourcead .njit: the {label} must be a float64 array, got {_describe(c)}")
        return lambda c, what: c
    if isinstance(c, (types.Float, types.Integer)) and not isinstance(c, types.Boolean):
        return lambda c, what: float(c)
    raise TypingError(f"sourcead .njit: the {label} must be a float or a float64 array, got {_describe(c)}")


def tuple_arg(t, n, what):  # noqa: ARG001
    """`t` itself, when it is a tuple of `n` entries."""


@overload(tuple_arg, prefer_literal=True)
def _tuple_arg(t, n, what):
    count, label = _literal(n), _literal(what)
    if count is None or label is None:
        return None
    if isinstance(t, types.BaseTuple) and len(t) == count:
        return lambda t, n, what: t
    raise TypingError(f"sourcead .njit: {label} must be a tuple of {count} entries, got {_describe(t)}")


def tangent_arg(t, x, name):  # noqa: ARG001
    """The tangent of argument `x`: a fresh float64 copy of `x`'s shape, or a float."""


@overload(tangent_arg, prefer_literal=True)
def _tangent_arg(t, x, name):
    label = _literal(name)
    if label is None:
        return None
    if isinstance(x, types.Array):
        if not isinstance(t, types.Array) or t.ndim != x.ndim:
            raise TypingError(
                f"sourcead .njit: the tangent of `{label}` must be a {x.ndim}-D float64 array, got {_describe(t)}"
            )
        message = f"the tangent of `{label}` does not have the shape of `{label}`"

        def impl(t, x, name):
            if t.shape != x.shape:
                raise SourceADError(message)
            return t.astype(np.float64)  # a copy, always: the generated code may write into it

        return impl
    if isinstance(t, (types.Float, types.Integer)) and not isinstance(t, types.Boolean):
        return lambda t, x, name: float(t)
    raise TypingError(f"sourcead .njit: the tangent of the float `{label}` must be a float, got {_describe(t)}")


# --- written arguments ------------------------------------------------------------------------


def check_disjoint(a, b, names):  # noqa: ARG001
    """Refuse arrays `a` (written by the function) and `b` whose memory ranges intersect."""


@overload(check_disjoint, prefer_literal=True)
def _check_disjoint(a, b, names):
    label = _literal(names)
    if label is None:
        return None
    written, other, fname = label.split(",")
    message = (
        f"arguments `{written}` and `{other}` of {fname} share memory, and {fname} writes into `{written}`; "
        f"pass a copy, e.g. {other}.copy()"
    )

    def impl(a, b, names):
        if _extent_overlap(a, b):
            raise AliasingError(message)

    return impl


def _bounds(x):  # noqa: ARG001
    """First and one-past-last byte address of the memory an array spans."""


@overload(_bounds)
def _bounds_impl(x):
    def impl(x):
        low = x.ctypes.data
        high = low + x.itemsize
        if x.size == 0:
            return low, low
        for k in range(x.ndim):
            step = x.strides[k] * (x.shape[k] - 1)
            if step < 0:
                low += step
            else:
                high += step
        return low, high

    return impl


def _extent_overlap(a, b):  # noqa: ARG001
    """np.may_share_memory's test, in compiled code: do the spans intersect?"""


@overload(_extent_overlap)
def _extent_overlap_impl(a, b):
    def impl(a, b):
        a_low, a_high = _bounds(a)
        b_low, b_high = _bounds(b)
        return a_low < b_high and b_low < a_high

    return impl


def check_distinct(a, names):  # noqa: ARG001
    """Refuse a written array `a` whose elements overlap (a zero stride, overlapping strides)."""


@overload(check_distinct, prefer_literal=True)
def _check_distinct(a, names):
    label = _literal(names)
    if label is None:
        return None
    written, fname = label.split(",")
    message = (
        f"argument `{written}` of {fname} overlaps itself (several elements share memory), and {fname} "
        f"writes into it element by element; pass np.ascontiguousarray({written})"
    )

    def impl(a, names):
        if a.size > 1 and _overlaps_itself(a):
            raise AliasingError(message)

    return impl


def _overlaps_itself(a):  # noqa: ARG001
    """The sorted-strides test of `callplan.overlaps_itself`: each axis steps past the smaller ones
    (a layout it cannot clear counts as overlapping here)."""


@overload(_overlaps_itself)
def _overlaps_itself_impl(a):
    def impl(a):
        n = a.ndim
        strides = np.empty(n, dtype=np.int64)
        sizes = np.empty(n, dtype=np.int64)
        for k in range(n):
            strides[k] = abs(a.strides[k])
            sizes[k] = a.shape[k]
        order = np.argsort(strides)
        extent = a.itemsize
        for k in order:
            if sizes[k] > 1:
                if strides[k] < extent:
                    return True
                extent = strides[k] * (sizes[k] - 1) + extent
        return False

    return impl


def seed_shape(c, shape, what):  # noqa: ARG001
    """Refuse a cotangent array whose shape is not `shape` (that of its result or argument)."""


@overload(seed_shape, prefer_literal=True)
def _seed_shape(c, shape, what):
    label = _literal(what)
    if label is None:
        return None
    if not isinstance(c, types.Array):
        return lambda c, shape, what: None  # a float: seed_arg has checked it
    message = f"sourcead .njit: {label} does not have the shape of the value it stands for"

    def impl(c, shape, what):
        if c.shape != shape:
            raise ShapeError(message)

    return impl
