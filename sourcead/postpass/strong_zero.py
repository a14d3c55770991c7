"""Strong zeros as selects: `(p if g != 0.0 else 0.0)` becomes `strong_zero(p, g)` in the reverse
sweep's loops, and an array's `np.where(g != 0.0, p, 0.0)` becomes `strong_zero_each(p, g)`; the
same in forward mode's tangent statements (`tangent_selects`: a tangent's guard on itself,
`np.where(t != 0.0, p * t, 0.0)`, or on a partial, `(c * t if c != 0.0 else 0.0)`).

The array form is a ufunc (`runtime/lowered.py`): numba fuses it with the arithmetic of `p` into one
loop writing one array, where its `np.where` wrote a mask, `p` and the result, and took 11x the time
of `p` alone (2 million elements; syrk's gradient spends most of its time in these guards). Both
evaluate `p` and `g` at every element and broadcast them alike, so the value is the same.

An adjoint's contribution is guarded by its seed (`derive/linearize.py`: an exactly zero seed
contributes exactly zero, also where the partial is infinite). Written as a conditional
expression, numba lowers the guard to a branch around the evaluation of `p`; the loads of `p`
then happen only under the branch, and LLVM, which may not read an array element the program
might not read, cannot turn the branch into a select: the loop does not vectorise. ode's gradient
(reversed RK4 stages) ran 7.3x its primal, 4.9x with the select.

`strong_zero(p, g)` (`runtime/lowered.py`) evaluates `p` whether or not `g` is zero, and lowers
to a compare and a select. That is the same value, and nothing else changes, wherever evaluating
`p` cannot raise or fail: `p` is built from names, numbers, elements read at index arithmetic of
names and integers, `+`, `-` and `*` only (a float product overflows to inf, never raises, in
plain Python too; a division, a power or a call could raise, and stays guarded by a branch). The
elements `p` reads are the operands of a primal statement at the iteration that read them, in
range wherever the guard would have let them be read.
In plain Python (`jit=False`) an eager product of NumPy scalars may raise NumPy's RuntimeWarning
(`inf * 0.0`) where the branch skipped it, as the array seeds' `np.where` always did; the value is
the same.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ..ir.exprs import contains, dotted, unparen
from .marked import rewrite_after

HELPER = "strong_zero"
EACH = "strong_zero_each"


def eager_selects(module: cst.Module, marker: str) -> tuple[cst.Module, frozenset[str]]:
    """`module` (holding one generated function) with the strong-zero guards after its `marker`
    comment (the reverse sweep) written as calls: in loops, `(p if g != 0.0 else 0.0)` as
    `strong_zero(p, g)`; anywhere, an array's `np.where(g != 0.0, p, 0.0)` as `strong_zero_each(p,
    g)`. And the helpers it called."""
    select, where = _Select(), _Where()

    def rewrite(statements: list[cst.CSTNode]) -> list[cst.CSTNode]:
        return [_rewritten(s, select, where) for s in statements]

    return _used(module, rewrite_after(module, marker, rewrite), select, where)


def tangent_selects(
    module: cst.Module, is_tangent: Callable[[cst.SimpleStatementLine], bool]
) -> tuple[cst.Module, frozenset[str]]:
    """Forward mode: `module` (holding one generated function) with the strong-zero guards of its
    tangent statements (`is_tangent`) written as `eager_selects` writes the reverse sweep's: an
    array tangent's `np.where(t != 0.0, p * t, 0.0)` as `strong_zero_each(p * t, t)`, a loop's
    `(c * t if c != 0.0 else 0.0)` as `strong_zero(c * t, c)`. Not the primal statements, which
    are the user's own code (an int `p`, float32 arrays: their dtypes stay NumPy's)."""
    select, where = _Select(), _Where()
    return _used(module, module.visit(_Tangents(select, where, is_tangent)), select, where)


def _used(module: cst.Module, new: cst.Module, select: _Select, where: _Where) -> tuple[cst.Module, frozenset[str]]:
    """The rewritten module and the helpers it calls; `module` itself where nothing changed."""
    used = frozenset({HELPER} if select.count else ()) | frozenset({EACH} if where.count else ())
    return (new, used) if used else (module, used)


def _rewritten(statement: cst.CSTNode, select: _Select, where: _Where) -> cst.CSTNode:
    statement = _visited(statement, select) if contains(statement, cst.IfExp) else statement
    return _visited(statement, where) if contains(statement, cst.Call) else statement


class _InLoops(cst.CSTTransformer):
    """A transformer that counts the loops around the node it is at (`self.loops`)."""

    loops = 0

    def visit_For(self, node: cst.For) -> None:
        self.loops += 1

    def leave_For(self, original: cst.For, updated: cst.For) -> cst.For:
        self.loops -= 1
        return updated

    def visit_While(self, node: cst.While) -> None:
        self.loops += 1

    def leave_While(self, original: cst.While, updated: cst.While) -> cst.While:
        self.loops -= 1
        return updated


class _Tangents(_InLoops):
    """The tangent statements rewritten by `_Select` (which knows the loops around them) and `_Where`."""

    def __init__(self, select: _Select, where: _Where, is_tangent: Callable[[cst.SimpleStatementLine], bool]):
        self.select, self.where, self.is_tangent, self.loops = select, where, is_tangent, 0

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        return False  # its expressions are rewritten whole on leaving

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        if not self.is_tangent(original):
            return updated
        self.select.loops = self.loops
        new = _rewritten(updated, self.select, self.where)
        assert isinstance(new, cst.SimpleStatementLine)
        return new


def _visited(statement: cst.CSTNode, transformer: cst.CSTTransformer) -> cst.CSTNode:
    """`statement` rewritten by `transformer`, which rewrites expressions only (never removes it)."""
    new = statement.visit(transformer)
    assert isinstance(new, cst.CSTNode)
    return new


def second_order_selects(module: cst.Module) -> tuple[cst.Module, frozenset[str]]:
    """hvp: `module` (its reverse mode over the tangent code) with the tangent code's array guards
    for second order, `np.where(np.logical_or(t != 0.0, np.isfinite(p)), p * t, 0.0)`
    (`derive/linearize.py`), written as `strong_zero_each(p * t, np.logical_or(t != 0.0,
    np.isfinite(p)))`: the same value (a true mask element is nonzero), one fused loop. Only that
    form, which only forward mode writes: the reverse sweep over it is written already."""
    where = _Where(second_order=True)
    (definition,) = module.body
    assert isinstance(definition, cst.FunctionDef)
    statements = [_visited(s, where) if contains(s, cst.Call) else s for s in definition.body.body]
    new = module.with_changes(body=[definition.with_changes(body=definition.body.with_changes(body=statements))])
    return _used(module, new, _Select(), where)


class _Where(cst.CSTTransformer):
    """`np.where(g != 0.0, p, 0.0)` as `strong_zero_each(p, g)`: the same value (both evaluate `p`
    and `g` everywhere; a ufunc broadcasts them as `np.where` does), in one fused loop. With
    `second_order`, instead `np.where(m, p, 0.0)` for the mask `m = np.logical_or(t != 0.0,
    np.isfinite(q))` as `strong_zero_each(p, m)`."""

    def __init__(self, second_order: bool = False) -> None:
        self.count, self.second_order = 0, second_order

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if dotted(updated.func) != "np.where" or len(updated.args) != 3:
            return updated
        if any(a.keyword is not None or a.star for a in updated.args):
            return updated
        test, part, other = (unparen(a.value) for a in updated.args)
        if not (isinstance(other, cst.Float) and other.value == "0.0"):
            return updated
        seed = _second_order_mask(test) if self.second_order else _nonzero_test(test)
        if seed is None:
            return updated
        self.count += 1
        return cst.Call(cst.Name(EACH), [cst.Arg(part), cst.Arg(seed)])


def _nonzero_test(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """`g` of `g != 0.0`, else None."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    target = test.comparisons[0]
    zero = unparen(target.comparator)
    if not (isinstance(target.operator, cst.NotEqual) and isinstance(zero, cst.Float) and zero.value == "0.0"):
        return None
    return unparen(test.left)


def _second_order_mask(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """`test` itself if it is `np.logical_or(t != 0.0, np.isfinite(q))`, else None."""
    if not (isinstance(test, cst.Call) and dotted(test.func) == "np.logical_or" and len(test.args) == 2):
        return None
    first, second = (unparen(a.value) for a in test.args)
    finite = isinstance(second, cst.Call) and dotted(second.func) == "np.isfinite" and len(second.args) == 1
    return test if finite and _nonzero_test(first) is not None else None


class _Select(_InLoops):
    """Inside loops only: where LLVM would vectorise; straight-line code keeps its branches."""

    def __init__(self) -> None:
        self.count, self.loops = 0, 0

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
        if not self.loops:
            return updated
        seed = _seed_test(updated.test)
        orelse = unparen(updated.orelse)
        if seed is None or not (isinstance(orelse, cst.Float) and orelse.value == "0.0"):
            return updated
        if not _eager_safe(updated.body):
            return updated
        self.count += 1
        args = [cst.Arg(unparen(updated.body)), cst.Arg(seed)]
        return cst.Call(cst.Name(HELPER), args)  # a call needs no parentheses of its own


def _seed_test(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """`g` of a test `g != 0.0` whose `g` is a name or an element: the strong zero's seed."""
    test = unparen(test)
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    target = test.comparisons[0]
    zero = unparen(target.comparator)
    if not (isinstance(target.operator, cst.NotEqual) and isinstance(zero, cst.Float) and zero.value == "0.0"):
        return None
    seed = unparen(test.left)
    return seed if isinstance(seed, cst.Name) or _safe_element(seed) else None


def _eager_safe(node: cst.BaseExpression) -> bool:
    """Evaluating `node` cannot raise: names, numbers, elements at index arithmetic, + - * of them,
    and a select already made of such (a singular partial's zero guard inside the seed's)."""
    node = unparen(node)
    if isinstance(node, (cst.Name, cst.Float, cst.Integer)):
        return True
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == HELPER:
        return all(_eager_safe(arg.value) for arg in node.args)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return _eager_safe(node.expression)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply)):
        return _eager_safe(node.left) and _eager_safe(node.right)
    return _safe_element(node)


def _safe_element(node: cst.BaseExpression) -> bool:
    """`a[i + 1, j]`: an element of a named array at index arithmetic of names and integers."""
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name)):
        return False
    return all(isinstance(e.slice, cst.Index) and _index_arithmetic(e.slice.value) for e in node.slice)


def _index_arithmetic(node: cst.BaseExpression) -> bool:
    node = unparen(node)
    if isinstance(node, (cst.Name, cst.Integer)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _index_arithmetic(node.expression)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply)):
        return _index_arithmetic(node.left) and _index_arithmetic(node.right)
    return False
