"""Values recomputed in the reverse sweep instead of recorded: indices and re-reads.

A loop body that starts by computing integer indices from its loop counters (`ip = i + 1;
if ip == n: ip = 0`, a periodic neighbour), or by reading arrays nothing writes (`t = points[i, j]
- centroids[c, j]`), would record every overwritten value on a tape, and every branch taken, in
every iteration, so that the reverse sweep can restore them. They are cheaper to compute again:
each reversed iteration first runs that *prefix* of its body forward, and the prefix records
nothing. (Each iteration of a parallel adjoint, and each step of a checkpointed loop, replays its
body before its adjoint anyway, so there the prefix is simply not recorded.)

A loop's prefix is its longest run of leading statements, each an assignment to an int or float
scalar, or an `if` whose branches hold only int assignments, in which every expression is
arithmetic (names, number literals, `+ - * / // %`, comparisons, `and`/`or`/`not`, `x.shape[k]`,
`len(x)`, and elements `a[...]` of arrays at such indices) of: the counters of this loop and of the
loops around it (never assigned in their bodies); parameters the function never assigns (nor
writes an element of); names the function assigns exactly once, in a top-level statement before
the one holding this loop; and the prefix's own variables once assigned. Each prefix variable is
first assigned unconditionally, is assigned nowhere else, and is mentioned nowhere outside the
loop's body, so every read after the prefix sees the value the prefix leaves, in the forward and
in the reverse sweep alike; the same operands give the same bits (no fast-math), so the
recomputed value is the recorded one exactly. A prefix is recomputed only where one of its
statements would record. Calls (and `**`) are not recomputed (`math.exp` costs more than a
record), nor are elements of arrays the function writes anywhere or an array assignment reads
(`v = a[1:]` makes a view of `a`).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from .core import Assign, For, If, Permute, Stmt, While, assigned_names, mentioned_outside, walk_statements
from .exprs import names_in

_INTEGER_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)
_FLOAT_OPERATORS = (*_INTEGER_OPERATORS, cst.Divide)  # not `**`: a call of pow


def recomputed_prefixes(
    body: tuple[Stmt, ...], params: tuple[str, ...], returned: set[str], scalar_dtype: Callable[[str], str | None]
) -> dict[For, tuple[Stmt, ...]]:
    """For each `for` loop whose body starts with a recomputable prefix: that prefix. `returned`:
    the names the function returns; `scalar_dtype(var)`: "int", "float" or "bool" for a scalar,
    None for anything else."""
    counts: dict[str, int] = {}
    for s in walk_statements(body):
        for var in _assigned_by(s):
            counts[var] = counts.get(var, 0) + 1
    stable = {p for p in params if p not in counts}
    # an array an array-valued assignment reads may have a view or alias written under another name
    aliased = {
        n
        for s in walk_statements(body)
        if isinstance(s, Assign) and not s.writes_element and scalar_dtype(s.var) is None
        for n in names_in(s.value)
    }
    found: dict[For, tuple[Stmt, ...]] = {}
    for top in body:
        _visit(top, body, returned, frozenset(), set(stable), aliased, scalar_dtype, found)
        if isinstance(top, Assign) and not top.writes_element and counts.get(top.var) == 1:
            stable.add(top.var)  # assigned once, here: the same value for every later statement
    return found


def _visit(s: Stmt, body, returned, counters: frozenset[str], stable: set[str], aliased, scalar_dtype, found) -> None:
    if isinstance(s, For):
        inner = counters | ({s.var} if s.var not in assigned_names(s.body) else set())
        prefix = _prefix(s, body, returned, inner | stable, stable - aliased, scalar_dtype)
        if prefix:
            found[s] = prefix
        for t in s.body:
            _visit(t, body, returned, inner, stable, aliased, scalar_dtype, found)
    elif isinstance(s, While):
        for t in s.body:
            _visit(t, body, returned, counters, stable, aliased, scalar_dtype, found)
    elif isinstance(s, If):
        for t in s.body + s.orelse:
            _visit(t, body, returned, counters, stable, aliased, scalar_dtype, found)


def _prefix(loop: For, body, returned: set[str], allowed: set[str], arrays: set[str], scalar_dtype) -> tuple[Stmt, ...]:
    defined: set[str] = set()
    taken: list[Stmt] = []
    for s in loop.body:
        names = allowed | defined
        if isinstance(s, Assign) and _computes(s, names, arrays, scalar_dtype):
            if s.var in allowed or s.accumulate is not None and s.var not in defined:
                break  # an update of a counter or a stable name, or of a value from before: not a prefix
            defined.add(s.var)
            taken.append(s)
        elif (
            isinstance(s, If)
            and _arithmetic(s.test, allowed | defined, arrays)
            and _only_updates(s, defined, allowed, arrays, scalar_dtype)
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


def _computes(s: Assign, names: set[str], arrays: set[str], scalar_dtype) -> bool:
    """An int scalar assigned integer arithmetic, or a float scalar assigned arithmetic, of `names`
    and elements of `arrays`."""
    if _assigns(s, scalar_dtype, "int"):
        return _arithmetic(s.value, names, arrays)
    return _assigns(s, scalar_dtype, "float") and _arithmetic(s.value, names, arrays, _FLOAT_OPERATORS)


def _assigns(s: Assign, scalar_dtype, dtype: str) -> bool:
    return not s.writes_element and isinstance(s.target, cst.Name) and scalar_dtype(s.var) == dtype


def _only_updates(s: If, defined: set[str], allowed: set[str], arrays: set[str], scalar_dtype) -> bool:
    """Branches holding only int assignments of integer arithmetic, to prefix variables assigned
    unconditionally before."""
    names = allowed | defined
    for t in s.body + s.orelse:
        if isinstance(t, If):
            if not (_arithmetic(t.test, names, arrays) and _only_updates(t, defined, allowed, arrays, scalar_dtype)):
                return False
        elif not (isinstance(t, Assign) and _assigns(t, scalar_dtype, "int") and t.var in defined):
            return False
        elif not _arithmetic(t.value, names, arrays):
            return False
    return True


def _arithmetic(
    node: cst.BaseExpression, allowed: set[str], arrays: set[str], operators: tuple = _INTEGER_OPERATORS
) -> bool:
    """Arithmetic (with `operators`) of `allowed` names, number literals (integers only for
    integer arithmetic), sizes of allowed arrays, and elements of `arrays` (never written, nor
    aliased) at integer-arithmetic indices."""

    def ok(e: cst.BaseExpression) -> bool:
        return _arithmetic(e, allowed, arrays, operators)

    if isinstance(node, cst.Name):
        return node.value in allowed
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.Float):
        return operators is not _INTEGER_OPERATORS
    if isinstance(node, cst.BinaryOperation):
        return isinstance(node.operator, operators) and ok(node.left) and ok(node.right)
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.operator, (cst.Minus, cst.Not)) and ok(node.expression)
    if isinstance(node, cst.Comparison):
        return ok(node.left) and all(ok(c.comparator) for c in node.comparisons)
    if isinstance(node, cst.BooleanOperation):
        return ok(node.left) and ok(node.right)
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value in arrays:
        return all(isinstance(e.slice, cst.Index) and _arithmetic(e.slice.value, allowed, arrays) for e in node.slice)
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
