"""Which operands an elementwise operation reads through a singular partial (`Partials.singular`:
infinite or nan where the value is finite, as sqrt's at 0), where the code may reach that point.

Forward mode guards those edges on the tangent being zero, and a tangent that crossed one on the
partials above it being zero (`linearize.py`, `forward/singular.py`); reverse mode, dually, on
the adjoint reaching them and on the partials below them being zero (`adjoints.py`,
`reverse/singular.py`). A partial visibly never zero (`nonzero_partial`) needs no such guard.
A partial declared `regular_above_zero` (sqrt, cbrt, powers) is not singular where the first
operand is visibly positive: `math.sqrt(d * d + 0.1)`, `np.exp(x) ** 0.5`.
"""

from __future__ import annotations

import math

import libcst as cst

from ..ir.exprs import code, is_number, number_value, unparen, walk
from ..rules import Partials, classify

# positive wherever they are defined, whatever their operand
_POSITIVE_CALLS = ("math.exp", "np.exp", "math.cosh", "np.cosh")
# never negative
_NONNEGATIVE_CALLS = ("math.sqrt", "np.sqrt", "math.fabs", "np.fabs", "np.abs", "abs", "np.square", "math.hypot")


def singular(form: Partials, operands: list[cst.BaseExpression]) -> tuple[int, ...]:
    """The positions of the operands (`operands`, in the primitive's order) whose partial is
    singular somewhere the code may reach."""
    if form.regular_above_zero and operands and positive(operands[0]):
        return ()
    return form.singular


def singular_operands(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of `expr` (at any depth) read through a singular partial (`singular`): their
    adjoints may be non-finite where the values are finite, as `linearize` marks the edges."""
    found: list[cst.BaseExpression] = []
    for node in walk(expr):
        hit = classify(node)
        if hit is None:
            continue
        prim, bound = hit
        form = (prim.special(bound) if prim.special is not None else None) or prim.derivative
        if isinstance(form, Partials) and form.singular:
            args = [bound.args[p] for p in prim.differentiable if p in bound.args]
            names = [p for p in prim.differentiable if p in bound.args]
            found += [bound.args[names[k]] for k in singular(form, args) if k < len(names)]
    return found


def positive(e: cst.BaseExpression) -> bool:
    """Is `e` visibly > 0 wherever it is a number: a positive literal, a sum of a positive and a
    nonnegative term, a product or quotient of positives, exp or cosh of anything."""
    e = unparen(e)
    if is_number(e):
        return number_value(e) > 0.0
    if isinstance(e, cst.BinaryOperation):
        if isinstance(e.operator, cst.Add):
            return positive(e.left) and nonnegative(e.right) or nonnegative(e.left) and positive(e.right)
        if isinstance(e.operator, (cst.Multiply, cst.Divide)):
            return positive(e.left) and positive(e.right)
    return _call(e) in _POSITIVE_CALLS


def nonnegative(e: cst.BaseExpression) -> bool:
    """Is `e` visibly >= 0: positive, a square (`d * d`, `d ** 2`), an absolute value, a square
    root, or a sum or product of such."""
    e = unparen(e)
    if positive(e) or is_number(e, 0.0):
        return True
    if isinstance(e, cst.BinaryOperation):
        if isinstance(e.operator, cst.Multiply) and code(e.left) == code(e.right):
            return True
        if isinstance(e.operator, cst.Power) and is_number(e.right) and number_value(e.right) in (2.0, 4.0):
            return True
        if isinstance(e.operator, (cst.Add, cst.Multiply)):
            return nonnegative(e.left) and nonnegative(e.right)
    return _call(e) in _NONNEGATIVE_CALLS


def _call(e: cst.BaseExpression) -> str:
    return code(e.func) if isinstance(e, cst.Call) else ""


def nonzero_partial(p: cst.BaseExpression) -> bool:
    """Is the partial `p` visibly never zero where it is finite: a nonzero number, or one divided by
    a value (`0.5 / t0`, sqrt's own partial)? A non-finite derivative crossing it needs no guard."""
    p = unparen(p)
    if isinstance(p, cst.UnaryOperation) and isinstance(p.operator, cst.Minus):
        return nonzero_partial(p.expression)
    if isinstance(p, cst.BinaryOperation) and isinstance(p.operator, cst.Divide):
        return finite_number(p.left)
    return finite_number(p)


def finite_number(node: cst.BaseExpression) -> bool:
    """A finite, nonzero number written in the code."""
    node = unparen(node)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = unparen(node.expression)
    if isinstance(node, (cst.Integer, cst.Float)):
        value = float(node.value)
        return math.isfinite(value) and value != 0.0
    return False
