"""Shape stand-ins: a cheap expression with the shape of a value, from its operands' shapes alone
(used by `linearize.py` and `reverse/shapes.py`).

`unbroadcast(g, like)`, `np.full_like(like, g)` and an adjoint's `zeros_like(like)` read only the
shape of `like` (and the last two its dtype). Where `like` is an operation, computing it again (or
keeping it from the forward sweep) only for its shape is wasted work: its primitive's declared
`shape_like` (`matmul_like({a}, {b})`, the arithmetic operators' `broadcast_like({x}, {y})`) on
its operands' own stand-ins gives the shape without a pass over the values:

    unbroadcast(t4, x - dt * g)        ->        unbroadcast(t4, broadcast_like(x, g))
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ..ir.exprs import code, is_cheap, template, unparen
from ..ir.types import Type
from ..rules import classify

TypeOf = Callable[[cst.BaseExpression], Type]
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)
_SHAPE_HELPERS = ("broadcast_like", "matmul_like")  # runtime helpers that return float arrays


def shape_like(value: cst.BaseExpression, is_array: Callable[[cst.BaseExpression], bool] | None = None):
    """A cheap expression with the shape of `value`, from its operands' shapes alone: an operation
    whose primitive declares one (`Primitive.shape_like`: `matmul_like({a}, {b})`, the arithmetic
    operators' `broadcast_like({x}, {y})`) on its operands' own stand-ins (an operand read without
    an operation is its own); None where there is none. Knowing which operands are arrays
    (`is_array`), a float operand does not shape an arithmetic result (`dt * force(x, q)` has the
    shape of `force(x, q)`), nor does a repeated one (`x * x`): never computing a value again, an
    elementwise sum or a derivative call, for its shape alone."""
    inner = unparen(value)
    if is_array is not None and isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, _ARITHMETIC):
        left, right = (_maybe_array(side, is_array) for side in (inner.left, inner.right))
        if left != right:  # one float: the array's shape
            return operand_shape(inner.left if left else inner.right, is_array)
        sides = [operand_shape(side, is_array) for side in (inner.left, inner.right)]
        if sides[0] is not None and sides[1] is not None and code(sides[0]) == code(sides[1]):
            return sides[0]
    found = classify(inner)
    if found is None or found[0].shape_like is None:
        return None
    prim, bound = found
    assert prim.shape_like is not None
    arguments: dict[str, cst.BaseExpression] = {}
    for p in prim.signature.params:
        if p.name in bound.args and "{" + p.name + "}" in prim.shape_like:
            operand = operand_shape(bound.args[p.name], is_array)
            if operand is None:
                return None
            arguments[p.name] = operand
    return template(prim.shape_like, **arguments)


def float_shaped(like: cst.BaseExpression | None, type_of: TypeOf) -> cst.BaseExpression | None:
    """`like` where an array made like it (`np.full_like`, `zeros_like`) is a float array: the
    shape helpers' results are (`broadcast_like`, `matmul_like`), and a float array; else None."""
    if like is None or isinstance(like, cst.Call) and code(like.func) in _SHAPE_HELPERS:
        return like
    try:
        t = type_of(like)
    except Exception:  # a temporary: its type is not known here
        return None
    return like if t.is_array and t.dtype == "float" and not t.single else None  # float64 (not float32 storage)


def _maybe_array(value: cst.BaseExpression, is_array: Callable[[cst.BaseExpression], bool]) -> bool:
    """False for a float; True for an array, or where the type is not known (a temporary of this
    expression: `broadcast_like` reads it at run time)."""
    if isinstance(unparen(value), (cst.Integer, cst.Float)):
        return False
    try:
        return is_array(value)
    except Exception:
        return True


def operand_shape(value: cst.BaseExpression, is_array) -> cst.BaseExpression | None:
    """An operand as a shape stand-in reads it: itself where reading it computes nothing."""
    return value if is_cheap(value, 0) else shape_like(value, is_array)
