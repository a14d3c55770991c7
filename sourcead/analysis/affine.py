"""Affine index expressions: the one algebra the shape contract and the element-record proofs share.

An affine form is a dict from atom to int coefficient: `i + 2 * n - 1` is `{"i": 1, "n": 2, ONE: -1}`.
What an atom is belongs to its user (a loop variable's name, "s:K:A" for an argument's size in
`contract.py`; ("sym", name) or ("size", array, axis) in `reverse/elements.py`); the constant term
is always under `ONE`. A form holds no zero coefficient, the constant included, so two equal
expressions are equal dicts (`{}` is 0).

`affine_form` reads a libcst expression: integers, sums, differences, negations and products by a
constant, of what the user's `leaf` makes of every other node (None where it makes nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import libcst as cst

from ..ir.exprs import subscript_indices, unparen

ONE = 1  # the atom of the constant term
Affine = dict[Hashable, int]  # atom -> nonzero coefficient


def affine_plus(a: Affine, b: Affine) -> Affine:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return {k: v for k, v in out.items() if v}


def affine_scale(a: Affine, c: int) -> Affine:
    return {k: v * c for k, v in a.items() if v * c}


def affine_minus(a: Affine, b: Affine) -> Affine:
    return affine_plus(a, affine_scale(b, -1))


def constant(a: Affine) -> int | None:
    """The value of a form without atoms but the constant, else None."""
    return a.get(ONE, 0) if all(atom == ONE for atom in a) else None


def affine_form(node: cst.BaseExpression, leaf: Callable[[cst.BaseExpression], Affine | None]) -> Affine | None:
    """`node` as an affine form: integers, sums, differences, negations and products by a constant
    of what `leaf` makes of the other nodes (names, sizes; None where it makes nothing)."""
    node = unparen(node)
    if isinstance(node, cst.Integer):
        value = int(node.evaluated_value)  # `0x10` and `1_000` too
        return {ONE: value} if value else {}
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = affine_form(node.expression, leaf)
        return affine_scale(inner, -1) if inner is not None else None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply)):
        left, right = affine_form(node.left, leaf), affine_form(node.right, leaf)
        if left is None or right is None:
            return None
        if isinstance(node.operator, cst.Add):
            return affine_plus(left, right)
        if isinstance(node.operator, cst.Subtract):
            return affine_minus(left, right)
        for factor, other in ((left, right), (right, left)):
            times = constant(factor)
            if times is not None:
                return affine_scale(other, times)
        return None
    return leaf(node)


def size_of(node: cst.BaseExpression) -> tuple[str, int] | None:
    """(array, axis) for `a.shape[k]` (k a literal) and `len(a)`, else None."""
    if (
        isinstance(node, cst.Subscript)
        and isinstance(node.value, cst.Attribute)
        and isinstance(node.value.value, cst.Name)
        and node.value.attr.value == "shape"
    ):
        indices = subscript_indices(node)
        if len(indices) == 1 and isinstance(indices[0], cst.Integer):
            return node.value.value.value, int(indices[0].value)
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "len"
        and len(node.args) == 1
        and isinstance(node.args[0].value, cst.Name)
    ):
        return node.args[0].value.value, 0
    return None
