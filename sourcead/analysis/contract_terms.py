"""The terms of the shape contract: index expressions and sizes as affine forms of what a call knows.

A form's atoms (`affine.py` keeps the arithmetic) are the call's: "n:K" (the int argument at
position K), "s:K:A" (axis A of the argument at position K), "q:D:E" (the floor quotient of E, a
form as JSON, by the constant D > 0); and, while the walk is inside loops, their variables and
ranged int locals. This module decides what an expression is in those atoms (`affine_of`, an
array's static shape: `shape_of`, `made_shape`), which forms are never below zero
(`nonnegative`), which of two bounds is the smaller for every call (`lesser`), whether an index
range is in range for every call (`holds`), and the JSON of a form (`dump`, `load`). `Loop` and
`Scope` are what the walk (`contract_walk.py`) knows at a statement.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from dataclasses import dataclass, field

import libcst as cst

from ..ir.exprs import dotted, unparen
from ..rules import new_array_shape
from .affine import ONE, Affine, affine_form, affine_minus, affine_plus, affine_scale, constant


@dataclass
class Loop:
    """A `for` loop whose variable the body never assigns. Its bounds are affine in static atoms,
    and may be in the variables of enclosing loops and ranged ints too (a triangular loop)."""

    var: str
    start: Affine
    stop: Affine
    step: int
    text: str

    @property
    def static(self) -> bool:
        return static(self.start) and static(self.stop)

    def lowest(self) -> Affine:
        """No value of the variable is below this (the smallest where the step is 1 or -1)."""
        return self.start if self.step > 0 else affine_plus(self.stop, {ONE: 1})

    def highest(self) -> Affine:
        return affine_plus(self.stop, {ONE: -1}) if self.step > 0 else self.start

    def span(self) -> Affine:
        """Positive exactly when the loop runs."""
        return affine_minus(self.stop, self.start) if self.step > 0 else affine_minus(self.start, self.stop)


@dataclass
class Scope:
    """What the walk knows at a statement: the static ints and array shapes, and its loops."""

    ints: dict[str, Affine]
    shapes: dict[str, tuple[Affine, ...]]
    loops: tuple[Loop, ...] = ()
    conditional: bool = False  # some enclosing statement may not run it (an if, a while, a break)
    data: dict[str, tuple[int, tuple[Affine, ...]]] = field(default_factory=dict)  # `c = obs[i, 0]`
    exprs: dict[str, cst.BaseExpression] = field(default_factory=dict)  # int locals bound once: their values

    def nested(self, loops: tuple[Loop, ...] | None = None, conditional: bool | None = None) -> Scope:
        """A copy for a nested block (its bindings stay in it)."""
        return Scope(
            dict(self.ints),
            dict(self.shapes),
            self.loops if loops is None else loops,
            self.conditional if conditional is None else conditional,
            dict(self.data),
            dict(self.exprs),
        )


def affine_of(node: cst.BaseExpression, scope: Scope, loop_vars: dict | None = None) -> Affine | None:
    """`node` as an affine expression of static atoms (and of loop variables, given), or None."""

    def leaf(node: cst.BaseExpression) -> Affine | None:
        if isinstance(node, cst.Name):
            if loop_vars is not None and node.value in loop_vars:
                return {node.value: 1}
            value = scope.ints.get(node.value)  # a local bound in a loop may be in its variable
            return value if value is None or loop_vars is not None or static(value) else None
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.FloorDivide):
            left, right = affine_of(node.left, scope, loop_vars), affine_of(node.right, scope, loop_vars)
            if left is None or right is None:
                return None
            divisor, dividend = constant(right), constant(left)
            if divisor is None or divisor <= 0 or not static(left):
                return None
            if dividend is not None:
                return affine_plus({}, {ONE: dividend // divisor})
            return {f"q:{divisor}:{json.dumps(dump(left))}": 1}  # an atom, computed at the call
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            holder = unparen(node.value)
            axis = unparen(node.slice[0].slice.value)
            if isinstance(holder, cst.Attribute) and holder.attr.value == "shape" and isinstance(axis, cst.Integer):
                shape = shape_of(holder.value, scope)
                k = int(axis.evaluated_value)
                return shape[k] if shape is not None and -len(shape) <= k < len(shape) else None
            return None
        if isinstance(node, cst.Call) and dotted(node.func) == "len" and len(node.args) == 1:
            shape = shape_of(node.args[0].value, scope)
            return shape[0] if shape else None
        return None

    return affine_form(node, leaf)


def shape_of(node: cst.BaseExpression, scope: Scope) -> tuple[Affine, ...] | None:
    node = unparen(node)
    return scope.shapes.get(node.value) if isinstance(node, cst.Name) else None


def made_shape(value: cst.BaseExpression, scope: Scope, ndim: int) -> tuple[Affine, ...] | None:
    """The static shape of an array made by `np.zeros(shape)`, `np.zeros_like(x)`, `x.copy()` ..."""
    value = unparen(value)
    if isinstance(value, cst.Name):
        return None  # another name for a buffer: its own shape facts apply
    made = new_array_shape(value)
    if made is None:
        return None
    source, first = made
    if source == "a":
        return shape_of(first, scope)
    first = unparen(first)
    if isinstance(first, cst.Attribute) and first.attr.value == "shape":
        return shape_of(first.value, scope)
    items = [e.value for e in first.elements] if isinstance(first, cst.Tuple) else [first]
    dims = [affine_of(e, scope) for e in items]
    if len(dims) != ndim or any(d is None for d in dims):
        return None
    return tuple(dims)  # type: ignore[arg-type]


def row_shape(value: cst.BaseExpression, scope: Scope, ndim: int) -> tuple[Affine, ...] | None:
    """The static shape of a view `A[i]`, `A[i, j]` (integers on the leading axes of an array of
    static shape): the trailing axes of A, whichever row it is (its indices have facts of their own)."""
    value = unparen(value)
    if not isinstance(value, cst.Subscript) or not all(isinstance(e.slice, cst.Index) for e in value.slice):
        return None
    shape = shape_of(value.value, scope)
    if shape is None or len(shape) - len(value.slice) != ndim or ndim < 1:
        return None
    return shape[len(value.slice) :]


def nonnegative(a: Affine) -> bool:
    """Sizes (and their quotients) and a nonnegative constant, with nonnegative coefficients: never
    below zero."""
    return a.get(ONE, 0) >= 0 and all(c >= 0 and _sized(atom) for atom, c in a.items() if atom != ONE)


def _sized(atom: Hashable) -> bool:
    """An atom never below zero: a size, or a floor quotient of one never below zero."""
    if isinstance(atom, str) and atom.startswith("q:"):
        return nonnegative(load(json.loads(atom.split(":", 2)[2])))
    return isinstance(atom, str) and atom.startswith("s:")


def static(a: Affine) -> bool:
    """In static atoms only (no loop variable, no ranged int): known at the call."""
    return all(atom == ONE or isinstance(atom, str) and ":" in atom for atom in a)


def lesser(a: Affine, b: Affine, larger: bool = False) -> Affine | None:
    """The smaller (or `larger`) of two static bounds for every call, or None where that depends
    on the arguments."""
    gap = affine_minus(a, b)
    if (value := constant(gap)) is not None:
        below = value <= 0
    elif nonnegative(gap):
        below = False
    elif nonnegative(affine_scale(gap, -1)):
        below = True
    else:
        return None
    return a if below != larger else b


def holds(dim: Affine, high: Affine, low: Affine) -> tuple[bool, bool]:
    """Is an index between `low` and `high` in range of the size `dim` for every call, above (dim -
    high >= 1) and below (dim + low >= 0: negative indices count from the end)?"""
    upper, lower = constant(affine_minus(dim, high)), constant(affine_plus(dim, low))
    return upper is not None and upper >= 1, lower is not None and lower >= 0 or nonnegative(low)


def dump(a: Affine) -> list[list]:
    """The JSON of a form: [atom, coefficient] pairs, sorted, the constant's atom written "1"."""
    return sorted(["1" if atom == ONE else atom, coef] for atom, coef in a.items())


def load(pairs: list[list]) -> Affine:
    """A form from its JSON (`dump`)."""
    return affine_plus({}, {ONE if atom == "1" else atom: coef for atom, coef in pairs})
