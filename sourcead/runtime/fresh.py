"""An array adjoint's first contribution as a new array (`postpass/first_contributions.py`).

`x_bar = zeros_like(y); x_bar += e` writes zeros, then reads them and e and writes the sum: three
passes over memory where one (a copy of e) or none (e itself, when e is a new array nothing else
holds) gives the same values. `first_of(e, y)` is that move, `first_copy_of(e, y)` the copy, each
a float64 array of y's shape as `zeros_like(y)` gives it (e broadcast, cast to float64).

The pass writes `first_of` only where e is certainly a new array that no live name reaches (an
arithmetic result, a ufunc, an adjoint dead after the statement): it returns e itself when e is a
C-ordered float64 array of y's dimensions and shape (the shape checked at run time, the rest when
numba types the call), so the branches unify. A same-shaped C-ordered float64 e is copied
(`e.copy()`); anything else (a float, a broadcast or strided e, another dtype, a Fortran-ordered y)
gets the zeros and the add as before, with `zeros_like`'s type. numba inlines each implementation
into its caller: compiled apart, each helper added 0.2-0.3 s to a cold compile, and a fill loop,
`np.full` or `np.empty` more than the add they would save.
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.extending import overload

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


def _scalar(e) -> bool:
    return isinstance(e, (types.Float, types.Integer, types.Boolean))


def _contiguous(e, like) -> bool:
    """A C-ordered float64 array of like's dimensions: its copy is `zeros_like`'s type."""
    return isinstance(e, types.Array) and e.ndim == like.ndim and e.layout == "C" and e.dtype == types.float64


# Each implementation is inlined into the caller (`inline="always"`) and calls nothing compiled on
# its own: a helper function compiled apart cost 0.2-0.3 s of every cold compile that used it.
def _filled(e, like):
    out = zeros_like(like)  # a fill loop, np.full or np.empty each cost more compile than this add
    out += np.float64(e)
    return out


def _added(e, like):
    out = zeros_like(like)  # zeros_like's own type (a Fortran-ordered like keeps its order)
    out += e
    return out


def _copied(e, like):
    if e.shape == like.shape:
        return e.copy()
    out = zeros_like(like)
    out += e
    return out


def _moved(e, like):
    if e.shape == like.shape:
        return e
    out = zeros_like(like)
    out += e
    return out


def _fortran(like) -> bool:
    return like.layout == "F" and like.ndim > 1


@overload(first_copy_of, inline="always")
def _first_copy_of(e, like):
    if not isinstance(like, types.Array) or not (_scalar(e) or isinstance(e, types.Array)):
        return None
    if _fortran(like):
        return _added
    if _scalar(e):
        return _filled
    return _copied if _contiguous(e, like) else _added  # broadcast or strided: the zeros and the add


@overload(first_of, inline="always")
def _first_of(e, like):
    if not isinstance(like, types.Array) or not (_scalar(e) or isinstance(e, types.Array)):
        return None
    if _fortran(like):
        return _added
    if _scalar(e):
        return _filled
    if _contiguous(e, like):
        return _moved if e.mutable else _copied
    return _added
