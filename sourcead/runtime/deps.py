"""Dependency sets for the pattern sweep (`sourcead/pattern/`): tangents that are sets of input
elements instead of numbers.

The sweep runs forward mode's tangent statements as plain Python with every tangent a `Dep`: a
frozen set of the (flat, C-order) input elements the value depends on. Every arithmetic operator on
a `Dep` is the union of its operands' sets, whatever the numbers: `y * x_dot` is `x_dot`'s set even
where y is 0.0 at this point, so the pattern is structural, never a subset of it (an accidental zero
keeps its entry). Floats are the empty set. Arrays of tangents are NumPy arrays of objects, made by
`dep_zeros` / `dep_zeros_like`; NumPy's object loops apply the operators element by element.

`dep_pairs` collects, for the Hessian pattern, the pairs of sets that meet in a nonlinear operation
(the global-pairs rule of SparseConnectivityTracer): `sink` is a set of (a, b) frozenset pairs, or
None for a Jacobian sweep.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["dep_pairs", "dep_zeros", "dep_zeros_like"]

EMPTY: frozenset[int] = frozenset()


class Dep:
    """A frozen set of input elements; arithmetic is union (partials are structural: never zero)."""

    __slots__ = ("s",)
    __array_ufunc__ = None  # `array * Dep` comes to `__rmul__`, which broadcasts it over the array

    def __init__(self, s: frozenset[int]):
        self.s = s

    def _op(self, other: Any) -> Any:
        if isinstance(other, Dep):
            if other.s <= self.s:
                return self
            return other if self.s <= other.s else Dep(self.s | other.s)
        if isinstance(other, np.ndarray):
            return _UNION(_boxed(self), other)
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _op
    __truediv__ = __rtruediv__ = __matmul__ = __rmatmul__ = _op

    def __neg__(self) -> Dep:
        return self

    __pos__ = __abs__ = __neg__

    def __repr__(self) -> str:
        return f"Dep({sorted(self.s)})"


def _boxed(value: Any) -> np.ndarray:
    box = np.empty((), dtype=object)
    box[()] = value
    return box


def _union2(a: Any, b: Any) -> Any:
    if isinstance(a, Dep):
        return a._op(b)
    return b if isinstance(b, Dep) else 0.0


_UNION = np.frompyfunc(_union2, 2, 1)


def dep_zeros(shape: Any) -> np.ndarray:
    """An array of empty sets (a tangent array that starts at zero)."""
    out = np.empty(shape, dtype=object)
    out.fill(0.0)
    return out


def dep_zeros_like(a: Any) -> np.ndarray:
    return dep_zeros(np.shape(a))


def deps_of(value: Any) -> frozenset[int]:
    """The set a tangent value stands for (the union over an array)."""
    if isinstance(value, Dep):
        return value.s
    if isinstance(value, np.ndarray) and value.dtype == object:
        found: set[int] = set()
        for item in value.flat:
            if isinstance(item, Dep):
                found |= item.s
        return frozenset(found)
    return EMPTY


def dep_pairs(sink: Any, partial: Any, child: Any) -> None:
    """A nonlinear edge: every element of `partial`'s sets (what the partial derivative reads) meets
    every element of `child`'s (what it multiplies). Element by element where both are arrays of one
    shape (`np.sin(x)`: pairs (i, i)), else all of one against all of the other (a superset)."""
    if sink is None:
        return
    p_arr = isinstance(partial, np.ndarray) and partial.dtype == object and partial.ndim > 0
    c_arr = isinstance(child, np.ndarray) and child.dtype == object and child.ndim > 0
    if p_arr and c_arr and partial.shape == child.shape:
        for a, b in zip(partial.flat, child.flat, strict=True):
            if isinstance(a, Dep) and isinstance(b, Dep) and a.s and b.s:
                sink.add((a.s, b.s))
        return
    a_s, b_s = deps_of(partial), deps_of(child)
    if a_s and b_s:
        sink.add((a_s, b_s))
