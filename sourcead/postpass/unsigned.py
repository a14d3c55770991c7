"""Unsigned indices in the reverse sweep, where an index is a loop variable never below zero.

numba indexes an array with a signed integer as Python does: a negative index counts from the end,
so every access chooses between `j` and `j + size`. LLVM drops that choice where it proves the
index is not negative (a loop counting up from 0); where it cannot, the choice stays in the loop
and keeps it from vectorising. An adjoint's loops are where it cannot: reversed, they count down
(`for j in range(n - 1, (k + 1) - 1, -1)`), and a sum's own loop starts where the user's did
(`range(k + 1, n)`). LU's reversal ran 530 -> 350 us with its inner index unsigned (its two inner
loops vectorised), against 536 us with only one of them so.

This pass writes `U_bar[k, np.uint64(j)]` where `j` is the variable of the innermost enclosing
`for` loop of the reverse sweep, every value of which is at least 0, that nothing in the loop
assigns, and that does not count up from a literal (there LLVM sees it itself, and the index stays
as written): a `range` counting down to a stop, or up from a start, whose lowest value `_lowest`
finds at least 0 (literals, sizes, `len`, and the variables of enclosing loops known never
negative, through `+`, `-` of a literal, `*` and `//` of a positive literal). The outer loops'
variables are left alone: their choice does not change in the inner loop, and LLVM hoists it.
The index's value is unchanged, and so is what numba's bounds checks (where a variant has them)
check it against; an unsigned index only has no from-the-end meaning to choose. A `prange`
loop's variable keeps its type (numba's parfors read the loop's own index in its accesses). The
forward sweep is left as the user wrote it: its loops count up as theirs do.
"""

from __future__ import annotations

import libcst as cst

from ..frontend.bound_names import assigned_in
from ..ir.exprs import dotted, names_in, unparen
from .marked import rewrite_after

_RANGE = ("range",)


def unsigned_indices(module: cst.Module, marker: str) -> cst.Module:
    """`module` (holding one generated function) with the indices of its statements from the one
    after the comment `marker` on made unsigned where they are loop variables never below 0."""
    return rewrite_after(module, marker, unsigned_statements)


def unsigned_statements(statements: list[cst.CSTNode]) -> list[cst.CSTNode]:
    """`statements` (a reverse sweep) with their indices unsigned where they are loop variables
    never below 0."""
    return _block(statements, frozenset(), frozenset())


def _block(statements, known: frozenset[str], innermost: frozenset[str]) -> list:
    return [_statement(s, known, innermost) for s in statements]


def _statement(statement: cst.CSTNode, known: frozenset[str], innermost: frozenset[str]) -> cst.CSTNode:
    """`statement` with the indices in `innermost` (the innermost loop's variable, where it is
    never negative) made unsigned; `known`: every enclosing loop variable never negative."""
    rewrite = _Indices(innermost)
    if isinstance(statement, cst.For):
        var = statement.target.value if isinstance(statement.target, cst.Name) else None
        inner_known, inner = known, frozenset[str]()
        if var is not None:
            inner_known = known - {var}
            if _never_negative(statement.iter, known) and var not in assigned_in(statement.body):
                inner_known = known | {var}
                # counting up from a literal, LLVM sees the variable is never negative itself
                inner = frozenset() if _from_literal(statement.iter) else frozenset({var})
        body = statement.body.with_changes(body=_block(statement.body.body, inner_known, inner))
        return statement.with_changes(iter=_rewritten(statement.iter, rewrite), body=body)
    if isinstance(statement, (cst.If, cst.Else, cst.While)):
        body = statement.body.with_changes(body=_block(statement.body.body, known, innermost))
        if isinstance(statement, cst.Else):
            return statement.with_changes(body=body)
        changes = {"test": _rewritten(statement.test, rewrite), "body": body}
        if isinstance(statement, cst.If) and statement.orelse is not None:
            changes["orelse"] = _statement(statement.orelse, known, innermost)
        return statement.with_changes(**changes)
    if isinstance(statement, cst.SimpleStatementLine):
        return _rewritten(statement, rewrite)
    return statement


def _rewritten(node, rewrite: _Indices):
    """`node` with its indices rewritten; visited only where it reads one of the names (a libcst
    visit rebuilds every node it passes)."""
    return node.visit(rewrite) if rewrite.nonnegative & names_in(node) else node


def _never_negative(iterator: cst.BaseExpression, nonnegative: frozenset[str]) -> bool:
    """Is `iterator` a `range(...)` (not a `prange`) whose every value is at least 0?"""
    node = unparen(iterator)
    if not (isinstance(node, cst.Call) and dotted(node.func) in _RANGE and 1 <= len(node.args) <= 3):
        return False
    if any(a.keyword is not None or a.star for a in node.args):
        return False
    args = [a.value for a in node.args]
    if len(args) == 1:
        return True  # from 0
    step = _lowest(args[2], frozenset()) if len(args) == 3 else 1
    exact = step if len(args) < 3 or _literal(args[2]) is not None else None
    if exact is None or exact == 0:
        return False
    if exact > 0:
        low = _lowest(args[0], nonnegative)
        return low is not None and low >= 0
    low = _lowest(args[1], nonnegative)  # counting down: every value is above the stop
    return low is not None and low >= -1


def _from_literal(iterator: cst.BaseExpression) -> bool:
    """`range(n)`, `range(1, n)`, `range(0, n, 2)`: counting up from a literal start."""
    args = [a.value for a in unparen(iterator).args]  # type: ignore[attr-defined]
    step = _literal(args[2]) if len(args) == 3 else 1
    return len(args) == 1 or (_literal(args[0]) is not None and step is not None and step > 0)


def _literal(node: cst.BaseExpression) -> int | None:
    node = unparen(node)
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _literal(node.expression)
        return None if inner is None else -inner
    return None


def _lowest(node: cst.BaseExpression, nonnegative: frozenset[str]) -> int | None:
    """A lower bound of the int expression `node`, or None where none is found."""
    node = unparen(node)
    literal = _literal(node)
    if literal is not None:
        return literal
    if isinstance(node, cst.Name):
        return 0 if node.value in nonnegative else None
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape":
        return 0  # a size
    if isinstance(node, cst.Call) and dotted(node.func) == "len":
        return 0
    if not isinstance(node, cst.BinaryOperation):
        return None
    left, right = _lowest(node.left, nonnegative), _lowest(node.right, nonnegative)
    if isinstance(node.operator, cst.Add):
        return None if left is None or right is None else left + right
    if isinstance(node.operator, cst.Subtract):
        subtracted = _literal(node.right)
        return None if left is None or subtracted is None else left - subtracted
    if isinstance(node.operator, cst.Multiply):
        return 0 if left is not None and right is not None and left >= 0 and right >= 0 else None
    if isinstance(node.operator, cst.FloorDivide):
        divisor = _literal(node.right)
        return 0 if left is not None and left >= 0 and divisor is not None and divisor > 0 else None
    return None


class _Indices(cst.CSTTransformer):
    """`x[j]` -> `x[np.uint64(j)]` for the names never below 0."""

    def __init__(self, nonnegative: frozenset[str]):
        self.nonnegative = nonnegative

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        if not isinstance(updated.value, cst.Name):
            return updated  # `x.shape[0]`: a size, not an element
        elements = []
        for element in updated.slice:
            index = element.slice
            if (
                isinstance(index, cst.Index)
                and isinstance(index.value, cst.Name)
                and index.value.value in self.nonnegative
            ):
                index = index.with_changes(value=cst.parse_expression(f"np.uint64({index.value.value})"))
            elements.append(element.with_changes(slice=index))
        return updated.with_changes(slice=elements)
