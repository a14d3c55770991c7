"""Index expressions at integer offsets of a loop variable, as the gather (`gather.py`) reads and
writes them: the offset of `i + 1` from `i` (`offset_of`), an expression with the loop variable
shifted (`shifted`), and `node + k` with integer constants folded (`plus_constant`).
"""

from __future__ import annotations

import libcst as cst

from ..ir.exprs import Rename, number_value, operand, paren, unparen


def shifted(node: cst.BaseExpression, var: str, index: str, offset: int, base: int = 0) -> cst.BaseExpression:
    """`node` with `var` replaced by `index + base - offset` (the iteration whose contribution
    lands on element `index + base`), constant offsets folded: `v_bar[i]` at offset -1 is
    `v_bar[i_1 + 1]`."""
    return node.visit(_Shift(var, index, base - offset))  # type: ignore[return-value]


def plus_constant(node: cst.BaseExpression, k: int) -> cst.BaseExpression:
    """`node + k`, folding integer constants: `n - 1` plus 1 is `n`, `1` plus 1 is `2`."""
    inner = unparen(node)
    if k == 0:
        return node
    if isinstance(inner, cst.Integer) or _is_negative_integer(inner):
        return _integer(int(number_value(inner)) + k)
    if isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, (cst.Add, cst.Subtract)):
        constant = integer_value(inner.right)
        if constant is not None:
            total = (constant if isinstance(inner.operator, cst.Add) else -constant) + k
            return _add(inner.left, total)
    return _add(node, k)


def integer_value(node: cst.BaseExpression) -> int | None:
    """The value of an integer literal (`3`, `-2`, parenthesized or not), else None."""
    inner = unparen(node)
    if isinstance(inner, cst.Integer) or _is_negative_integer(inner):
        return int(number_value(inner))
    return None


def offset_of(node: cst.BaseExpression, var: str) -> int | None:
    """c where `node` is `var`, `var + c`, `var - c` or `c + var` for an integer constant c."""
    inner = unparen(node)
    if isinstance(inner, cst.Name):
        return 0 if inner.value == var else None
    if not isinstance(inner, cst.BinaryOperation) or not isinstance(inner.operator, (cst.Add, cst.Subtract)):
        return None
    left, right = unparen(inner.left), unparen(inner.right)
    if isinstance(left, cst.Name) and left.value == var:
        constant = integer_value(right)
        if constant is not None:
            return constant if isinstance(inner.operator, cst.Add) else -constant
    if isinstance(right, cst.Name) and right.value == var and isinstance(inner.operator, cst.Add):
        return integer_value(left)
    return None


def _is_negative_integer(node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(unparen(node.expression), cst.Integer)
    )


def _integer(k: int) -> cst.BaseExpression:
    return cst.Integer(str(k)) if k >= 0 else cst.UnaryOperation(cst.Minus(), cst.Integer(str(-k)))


def _add(node: cst.BaseExpression, k: int) -> cst.BaseExpression:
    """`node + k` or `node - |k|` (`node` itself for 0), parenthesized only where it must be."""
    if k == 0:
        return node
    operator = cst.Add() if k > 0 else cst.Subtract()
    return cst.BinaryOperation(operand(node, 2, False), operator, cst.Integer(str(abs(k))))


class _Shift(Rename):
    """`var` replaced by `index + delta`, folding `var + c` into `index + (c + delta)`."""

    def __init__(self, var: str, index: str, delta: int):
        super().__init__({var: paren(_add(cst.Name(index), delta))})
        self.var, self.index, self.delta = var, index, delta

    def leave_BinaryOperation(self, original: cst.BinaryOperation, updated: cst.BaseExpression) -> cst.BaseExpression:
        offset = offset_of(original.with_changes(lpar=[], rpar=[]), self.var)
        if offset is None or not isinstance(unparen(original.left), cst.Name):
            return updated
        folded = _add(cst.Name(self.index), offset + self.delta)
        if original.lpar and isinstance(folded, cst.BinaryOperation):
            return folded.with_changes(lpar=original.lpar, rpar=original.rpar)
        return folded

    def leave_Index(self, original: cst.Index, updated: cst.Index) -> cst.Index:
        if isinstance(updated.value, cst.BinaryOperation):
            return updated.with_changes(value=unparen(updated.value))  # an index needs no parentheses
        return updated
