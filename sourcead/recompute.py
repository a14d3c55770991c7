"""Integer indices recomputed in the reverse sweep instead of recorded.

A loop body that starts by computing integer indices from its loop counters (`ip = i + 1;
if ip == n: ip = 0`, a periodic neighbour) would record every overwritten index on the int tape,
and every branch taken, in every iteration, so that the reverse sweep can restore them. They are
cheaper to compute again: each reversed iteration first runs that *prefix* of its body forward,
and the prefix records nothing. (Each iteration of a parallel adjoint, and each step of a
checkpointed loop, replays its body before its adjoint anyway, so there the prefix is simply not
recorded.)

A loop's prefix is its longest run of leading statements, each an assignment to an int scalar or
an `if` whose branches hold only such assignments, in which every expression is integer
arithmetic (names, integer literals, `+ - * // %`, comparisons, `and`/`or`/`not`, `x.shape[k]`
and `len(x)`) of: the counters of this loop and of the loops around it (never assigned in their
bodies); parameters the function never assigns; names the function assigns exactly once, in a
top-level statement before the one holding this loop; and the prefix's own variables once
assigned. Each prefix variable is first assigned unconditionally, is assigned nowhere else, and is
mentioned nowhere outside the loop's body, so every read after the prefix sees the value the
prefix leaves, in the forward and in the reverse sweep alike.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from .core import Assign, For, If, Permute, Stmt, While, assigned_names, mentioned_outside, walk_statements

_INTEGER_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)


def recomputed_prefixes(
    body: tuple[Stmt, ...], params: tuple[str, ...], returned: set[str], is_int_scalar: Callable[[str], bool]
) -> dict[For, tuple[Stmt, ...]]:
    """For each `for` loop whose body starts with a recomputable prefix: that prefix. `returned`:
    the names the function returns."""
    counts: dict[str, int] = {}
    for s in walk_statements(body):
        for var in _assigned_by(s):
            counts[var] = counts.get(var, 0) + 1
    stable = {p for p in params if p not in counts}
    found: dict[For, tuple[Stmt, ...]] = {}
    for top in body:
        _visit(top, body, returned, frozenset(), set(stable), is_int_scalar, found)
        if isinstance(top, Assign) and not top.writes_element and counts.get(top.var) == 1:
            stable.add(top.var)  # assigned once, here: the same value for every later statement
    return found


def _visit(s: Stmt, body, returned, counters: frozenset[str], stable: set[str], is_int_scalar, found) -> None:
    if isinstance(s, For):
        inner = counters | ({s.var} if s.var not in assigned_names(s.body) else set())
        prefix = _prefix(s, body, returned, inner | stable, is_int_scalar)
        if prefix:
            found[s] = prefix
        for t in s.body:
            _visit(t, body, returned, inner, stable, is_int_scalar, found)
    elif isinstance(s, While):
        for t in s.body:
            _visit(t, body, returned, counters, stable, is_int_scalar, found)
    elif isinstance(s, If):
        for t in s.body + s.orelse:
            _visit(t, body, returned, counters, stable, is_int_scalar, found)


def _prefix(loop: For, body, returned: set[str], allowed: set[str], is_int_scalar) -> tuple[Stmt, ...]:
    defined: set[str] = set()
    taken: list[Stmt] = []
    for s in loop.body:
        if isinstance(s, Assign) and _assigns_int(s, is_int_scalar) and _arithmetic(s.value, allowed | defined):
            if s.var in allowed:
                break  # an update of a counter or a stable name: not a prefix variable
            defined.add(s.var)
            taken.append(s)
        elif (
            isinstance(s, If)
            and _arithmetic(s.test, allowed | defined)
            and _only_updates(s, defined, allowed, is_int_scalar)
        ):
            taken.append(s)
        else:
            break
    if not taken:
        return ()
    rest = loop.body[len(taken) :]
    if defined & (assigned_names(rest) | mentioned_outside(body, loop) | returned):
        return ()  # a prefix variable lives beyond the iteration: keep its records
    return tuple(taken)


def _assigned_by(s: Stmt) -> list[str]:
    """The names one statement assigns itself (not in the blocks it holds)."""
    if isinstance(s, Assign):
        return [s.var]
    if isinstance(s, For):
        return [s.var]
    if isinstance(s, Permute):
        return list(s.targets)
    return []


def _assigns_int(s: Assign, is_int_scalar) -> bool:
    return not s.writes_element and isinstance(s.target, cst.Name) and is_int_scalar(s.var)


def _only_updates(s: If, defined: set[str], allowed: set[str], is_int_scalar) -> bool:
    """Branches holding only int assignments of integer arithmetic, to prefix variables assigned
    unconditionally before."""
    names = allowed | defined
    for t in s.body + s.orelse:
        if isinstance(t, If):
            if not (_arithmetic(t.test, names) and _only_updates(t, defined, allowed, is_int_scalar)):
                return False
        elif not (isinstance(t, Assign) and _assigns_int(t, is_int_scalar) and t.var in defined):
            return False
        elif not _arithmetic(t.value, names):
            return False
    return True


def _arithmetic(node: cst.BaseExpression, allowed: set[str]) -> bool:
    """Integer arithmetic of `allowed` names and integer literals."""
    if isinstance(node, cst.Name):
        return node.value in allowed
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.BinaryOperation):
        return isinstance(node.operator, _INTEGER_OPERATORS) and all(
            _arithmetic(side, allowed) for side in (node.left, node.right)
        )
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.operator, (cst.Minus, cst.Not)) and _arithmetic(node.expression, allowed)
    if isinstance(node, cst.Comparison):
        return _arithmetic(node.left, allowed) and all(_arithmetic(c.comparator, allowed) for c in node.comparisons)
    if isinstance(node, cst.BooleanOperation):
        return _arithmetic(node.left, allowed) and _arithmetic(node.right, allowed)
    return _size_of_stable(node, allowed)


def _size_of_stable(node: cst.BaseExpression, allowed: set[str]) -> bool:
    """`x.shape[k]` or `len(x)` of an array whose name is allowed (so never rebound)."""
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        value, index = node.value, node.slice[0].slice
        return (
            isinstance(value, cst.Attribute)
            and value.attr.value == "shape"
            and isinstance(value.value, cst.Name)
            and value.value.value in allowed
            and isinstance(index, cst.Index)
            and isinstance(index.value, cst.Integer)
        )
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len":
        return len(node.args) == 1 and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value in allowed
    return False
