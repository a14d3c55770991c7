"""An array adjoint's first contribution as a new array (`postpass/first_contributions.py`).

`x_bar = zeros_like(y); x_bar += e` writes zeros, then reads them and e and writes the sum: three
passes over memory where one (a copy of e) or none (e itself, when e is a new array nothing else
holds) gives the same values. `first_of(e, y)` is that move, `first_copy_of(e, y)` the copy, each
a float64 array of y's shape as `zeros_like(y)` gives it: e broadcast (a float stands for every
element; `np.full`), cast to float64.

The pass writes `first_of` only where e is certainly a new array that no live name reaches (an
arithmetic result, a ufunc, an adjoint dead after the statement): it returns e itself when e is a
C-contiguous float64 array of y's shape (shape checked at run time, the rest when numba types the
call), so the two branches unify. Anything else is copied. A Fortran-ordered y (`zeros_like`
keeps its layout) gets the zeros and the add as before, so the adjoint's type is unchanged.
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.extending import overload, register_jitable

from .lowered import zeros_like

# the helpers generated code may import (`sourcead.runtime.HELPERS` is the union of these lists)
__all__ = ["first_of", "first_copy_of"]


def first_of(e, like):
    """`zeros_like(like) + e`, as e itself where e is a float64 C-ordered array of like's shape
    (the caller guarantees that no other name holds e), else a new array (`first_copy_of`)."""
    if (
        isinstance(e, np.ndarray)
        and e.dtype == np.float64
        and e.flags.c_contiguous
        and e.flags.writeable
        and e.shape == np.shape(like)
    ):
        return e
    return first_copy_of(e, like)


def first_copy_of(e, like):
    """A new float64 array of like's shape holding e broadcast: `zeros_like(like) + e` in one pass."""
    out = np.empty(np.shape(like))
    out[...] = e
    return out


@register_jitable
def _copied(e, like):
    out = np.empty(like.shape)
    out[...] = e
    return out


@register_jitable
def _added(e, like):
    out = zeros_like(like)
    out += e
    return out


def _scalar(e) -> bool:
    return isinstance(e, (types.Float, types.Integer, types.Boolean))


@overload(first_copy_of)
def _first_copy_of(e, like):
    if not isinstance(like, types.Array) or not (_scalar(e) or isinstance(e, types.Array)):
        return None
    if like.layout == "F" and like.ndim > 1:
        return lambda e, like: _added(e, like)  # zeros_like's Fortran order, as before
    if _scalar(e):
        return lambda e, like: np.full(like.shape, np.float64(e))
    return lambda e, like: _copied(e, like)


@overload(first_of)
def _first_of(e, like):
    if not isinstance(like, types.Array) or not (_scalar(e) or isinstance(e, types.Array)):
        return None
    returned = (
        isinstance(e, types.Array)
        and e.ndim == like.ndim
        and e.dtype == types.float64
        and e.layout == "C"
        and e.mutable
        and not (like.layout == "F" and like.ndim > 1)
    )
    if not returned:
        return lambda e, like: first_copy_of(e, like)

    def move(e, like):
        if e.shape == like.shape:
            return e
        return _copied(e, like)

    return move
