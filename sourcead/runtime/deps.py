"""Dependency sets for the pattern sweep (`sourcead/pattern/`): tangents that are sets of input
elements instead of numbers.

The sweep runs forward mode's tangent statements as plain Python with every tangent a `Dep`: a
frozen set of the (flat, C-order) input elements the value depends on. Every arithmetic operator on
a `Dep` is the union of its operands' sets, whatever the numbers: `y * x_dot` is `x_dot`'s set even
where y is 0.0 at this point, so the pattern is structural, never a subset of it (an accidental zero
keeps its entry). Floats are the empty set. Arrays of tangents are NumPy arrays of objects, made by
`dep_zeros_like`; NumPy's object loops apply the operators element by element.

`dep_pairs` collects, for the Hessian pattern, the pairs of sets that meet in a nonlinear operation
(the global-pairs rule of SparseConnectivityTracer): `sink` is a list of (a, b) `Dep` pairs, or
None for a Jacobian sweep.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["dep_helper", "dep_pairs", "dep_zeros_like"]

EMPTY: frozenset[int] = frozenset()
_EAGER = 32  # sets up to this size are joined when met; larger unions stay lazy until read


class Dep:
    """A set of input elements; arithmetic is union (partials are structural: never zero).

    A union is kept lazy, as the pair of its operands, and made a set once, when read (`s`): a
    running sum `s += x[i]` is then linear in the loop's length, not quadratic."""

    __slots__ = ("_s", "_parts")

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """A NumPy ufunc meeting a Dep (`row += s_dot`): the same ufunc over object arrays, whose
        loops apply the operators (union) element by element."""
        boxed = tuple(_boxed(a) if isinstance(a, Dep) else a for a in inputs)
        return getattr(ufunc, method)(*boxed, **kwargs)

    def __init__(self, s: frozenset[int] | None, parts: tuple[Dep, ...] = ()):
        self._s, self._parts = s, parts

    @property
    def s(self) -> frozenset[int]:
        if self._s is None:
            self._s = _materialize(self)
            self._parts = ()
        return self._s

    def _op(self, other: Any) -> Any:
        if type(other) is Dep:
            if other is self:
                return self
            a, b = self._s, other._s
            if a is not None and b is not None:  # both sets already: small ones are joined at once
                if not b or b <= a:
                    return self
                if not a or a <= b:
                    return other
                if len(a) + len(b) <= _EAGER:
                    return Dep(a | b)
            return Dep(None, (self, other))
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


def _materialize(root: Dep) -> frozenset[int]:
    """The union below a lazy node, visiting each shared node once (no recursion: chains are long)."""
    found: set[int] = set()
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node._s is not None:
            found |= node._s
            continue
        for part in node._parts:
            if id(part) not in seen:
                seen.add(id(part))
                stack.append(part)
    return frozenset(found)


def dep_helper(name: str, *args: Any) -> Any:
    """A runtime helper of the tangent code (`select_along`, ...) met by sets: every element of
    its result depends on everything its arguments depend on (a superset), in the shape the helper
    gives on numbers."""
    import importlib

    helper = getattr(importlib.import_module("sourcead.runtime"), name)
    numbers = [np.zeros(np.shape(a)) if _holds_deps(a) else a for a in args]
    with np.errstate(all="ignore"):
        shape = np.shape(helper(*numbers))
    found = Dep(None, tuple(_whole(a) for a in args if _holds_deps(a)))
    if not shape:
        return found
    out = np.empty(shape, dtype=object)
    out.fill(found)
    return out


def _holds_deps(value: Any) -> bool:
    return isinstance(value, Dep) or isinstance(value, np.ndarray) and value.dtype == object


def _boxed(value: Any) -> np.ndarray:
    box = np.empty((), dtype=object)
    box[()] = value
    return box


def _union2(a: Any, b: Any) -> Any:
    if isinstance(a, Dep):
        return a._op(b)
    return b if isinstance(b, Dep) else 0.0


_UNION = np.frompyfunc(_union2, 2, 1)


def dep_zeros_like(a: Any) -> np.ndarray:
    """An array of empty sets shaped like `a` (a tangent array that starts at zero)."""
    out = np.empty(np.shape(a), dtype=object)
    out.fill(0.0)
    return out


def dep_pairs(sink: Any, partial: Any, child: Any) -> None:
    """A nonlinear edge: every element of `partial`'s sets (what the partial derivative reads) meets
    every element of `child`'s (what it multiplies). Element by element where both are arrays of one
    shape (`np.sin(x)`: pairs (i, i)), else all of one against all of the other (a superset)."""
    if sink is None:
        return
    p_arr = isinstance(partial, np.ndarray) and partial.dtype == object and partial.ndim > 0
    c_arr = isinstance(child, np.ndarray) and child.dtype == object and child.ndim > 0
    if p_arr and c_arr and partial.shape == child.shape:
        sink.extend((a, b) for a, b in zip(partial.flat, child.flat, strict=True) if type(a) is Dep and type(b) is Dep)
        return
    if isinstance(partial, tuple):
        partial = Dep(None, tuple(_whole(p) for p in partial))
    sink.append((_whole(partial), _whole(child)))


def _whole(value: Any) -> Dep:
    """A tangent as one set (the union over an array)."""
    if isinstance(value, Dep):
        return value
    if isinstance(value, np.ndarray) and value.dtype == object:
        return Dep(None, tuple(item for item in value.flat if isinstance(item, Dep)))
    return Dep(EMPTY)
