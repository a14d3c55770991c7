"""Ring indices: the neighbours around a periodic axis, as numba users write them.

    for i in range(n):
        ip = i + 1                 im = i - 1
        if ip == n:                if im < 0:
            ip = 0                     im = n - 1

Here ip is (i + 1) % n and im is (i - 1) % n: each in range(n) wherever the body reads it, and
each iteration's own neighbour on a ring of n elements, which the loop visits once each. Two passes
read that from the same declaration: the shape contract (`contract.py`: an access `u[ip, j]` is in
range wherever `u` has n rows, where the hull of the values assigned, 0 .. n, would not show it)
and the gathered adjoints (`gather.py`: in a parallel adjoint `u_bar[ip, j] += ...` is a
contribution at offset +1 around the ring; a sum taken into a loop of its own computes the ring
indices its value reads from that loop's index).

The other spelling, `u[(i + 1) % n]` (also `(i - 1) % n`, `(i + n - 1) % n`: the loop's
variable plus or minus one, and any multiple of n) in `for i in range(n)`, is the same index:
`modulo_rings`, run by `normalize`, writes the pair at the top of the loop's body and reads its name
where the body read the `%`, so every later pass sees one idiom and a neighbour costs a compare
where it cost an integer division.

Recognised: `ip = i + 1` (or `1 + i`) followed at once by `if ip == n: ip = 0` (also `ip >= n`,
and `ip = ip - n`, `ip -= n`), and `im = i - 1` followed at once by `if im < 0: im = n - 1` (also
`im == -1`, and `im = im + n`, `im += n`), where the loop is `for i in range(n)` from 0 by 1, `n`
reads nothing the body assigns, the name is not the loop's variable, the body assigns it nowhere
else (inner loops included) and mentions it nowhere before the pair: wherever it is read, it has
been set this iteration.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import libcst as cst

from ..ir.core import Assign, Exit, For, If, Stmt, While, assigned_names, walk_statements, written
from ..ir.exprs import code, is_number, names_in, number_value, unparen, walk
from ..ir.naming import Namer
from .parse import ParsedFunction


@dataclass(frozen=True)
class Ring:
    """`name`, the neighbour at `offset` (+1 or -1) of the loop's variable around the ring of
    range(`size`): set by `assign`, wrapped by `test` (an `if` whose body is the one reset)."""

    name: str
    offset: int
    size: cst.BaseExpression
    assign: Assign
    test: If

    @property
    def statements(self) -> tuple[Assign, Assign]:
        """The two assignments of the name: the step and the wrap."""
        return self.assign, self.test.body[0]  # type: ignore[return-value]


def ring_indices(loop: For) -> dict[str, Ring]:
    """The ring indices the body of `loop` sets (see the module docstring), by name."""
    if not (is_number(loop.start) and number_value(loop.start) == 0):
        return {}
    if not (is_number(loop.step) and number_value(loop.step) == 1) or names_in(loop.stop) & assigned_names(loop.body):
        return {}
    size = code(unparen(loop.stop))
    counts: dict[str, int] = {}
    for s in walk_statements(loop.body):
        if isinstance(s, Assign) and isinstance(s.target, cst.Name):
            counts[s.target.value] = counts.get(s.target.value, 0) + 1
    found: dict[str, Ring] = {}
    for k, (first, second) in enumerate(zip(loop.body, loop.body[1:], strict=False)):
        if not (isinstance(first, Assign) and isinstance(first.target, cst.Name) and first.accumulate is None):
            continue
        name = first.target.value
        offset = _step(first.value, loop.var)
        if name == loop.var or offset is None or counts.get(name) != 2 or name in _mentioned(loop.body[:k]):
            continue
        if not (isinstance(second, If) and not second.orelse and len(second.body) == 1):
            continue
        reset = second.body[0]
        if not (isinstance(reset, Assign) and isinstance(reset.target, cst.Name) and reset.target.value == name):
            continue
        test = code(unparen(second.test))
        if reset.accumulate is None:
            value = code(unparen(reset.value))
        else:
            value = f"{name} {reset.accumulate} {code(unparen(reset.value))}"
        if offset == 1:
            tests, values = {f"{name} == {size}", f"{name} >= {size}"}, {"0", f"{name} - {size}"}
        else:
            tests, values = {f"{name} < 0", f"{name} == -1"}, {f"{size} - 1", f"{name} + {size}", f"{size} + {name}"}
        if test in tests and value in values:
            found[name] = Ring(name, offset, loop.stop, first, second)
    return found


def _step(value: cst.BaseExpression, var: str) -> int | None:
    """+1 for `var + 1` or `1 + var`, -1 for `var - 1`, else None."""
    node = unparen(value)
    if not isinstance(node, cst.BinaryOperation):
        return None
    left, right = unparen(node.left), unparen(node.right)
    one = lambda e: isinstance(e, cst.Integer) and e.value == "1"  # noqa: E731
    is_var = lambda e: isinstance(e, cst.Name) and e.value == var  # noqa: E731
    if isinstance(node.operator, cst.Add) and (is_var(left) and one(right) or one(left) and is_var(right)):
        return 1
    if isinstance(node.operator, cst.Subtract) and is_var(left) and one(right):
        return -1
    return None


def _mentioned(body: tuple[Stmt, ...]) -> set[str]:
    """Every name the statements of `body` read or assign."""
    found: set[str] = set()
    for s in walk_statements(body):
        if isinstance(s, Assign):
            found |= names_in(s.value) | names_in(s.target)
        elif isinstance(s, For):
            found |= {s.var} | names_in(s.start) | names_in(s.stop) | names_in(s.step)
        elif isinstance(s, (If, While)):
            found |= names_in(s.test)
        else:
            found |= written(s) | set(getattr(s, "sources", ()))
            found |= set().union(*(names_in(v) for v in getattr(s, "values", ())))
    return found


def modulo_rings(body: tuple[Stmt, ...], namer: Namer, parsed: ParsedFunction) -> tuple[Stmt, ...]:
    """`body` with each `(i + 1) % n` and `(i - 1) % n` (see the module docstring) read from a ring
    index that the loop over range(n) sets first in its body: `i_next = i + 1; if i_next == n:
    i_next = 0`. For i in 0 .. n - 1 the two are the same number. A loop whose body assigns its
    variable or a name its bound reads, or that does not run from 0 by 1, is left as written."""
    return tuple(_modulo_rings(stmt, namer, parsed) for stmt in body)


def _modulo_rings(stmt: Stmt, namer: Namer, parsed: ParsedFunction) -> Stmt:
    if isinstance(stmt, For):
        return replace(stmt, body=modulo_rings(_with_rings(stmt, namer, parsed), namer, parsed))
    if isinstance(stmt, If):
        return replace(
            stmt, body=modulo_rings(stmt.body, namer, parsed), orelse=modulo_rings(stmt.orelse, namer, parsed)
        )
    if isinstance(stmt, While):
        return replace(stmt, body=modulo_rings(stmt.body, namer, parsed))
    return stmt


def _with_rings(loop: For, namer: Namer, parsed: ParsedFunction) -> tuple[Stmt, ...]:
    """The body of `loop`, its `%` neighbours read from ring indices set first."""
    if not (is_number(loop.start) and number_value(loop.start) == 0 and is_number(loop.step)):
        return loop.body
    if number_value(loop.step) != 1 or (names_in(loop.stop) | {loop.var}) & assigned_names(loop.body):
        return loop.body
    if not isinstance(unparen(loop.stop), (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
        return loop.body  # `n - 1`: the wrap's test and reset would need parentheses
    size = code(unparen(loop.stop))
    body = list(loop.body)
    for k, stmt in enumerate(body):  # `j = (i + 1) % n`: j itself becomes the ring index
        offset = _named_neighbour(stmt, loop, size)
        if offset is not None and stmt.var not in _mentioned(tuple(body[:k])):  # type: ignore[union-attr]
            body[k : k + 1] = _ring_pair(stmt.var, offset, loop.var, size, stmt.origin)  # type: ignore[union-attr]
    rewrite = _Neighbours(loop.var, size, namer, parsed)
    rewritten = tuple(_rewritten(stmt, rewrite) for stmt in body)
    pairs = [
        p
        for offset, name in sorted(rewrite.names.items(), reverse=True)
        for p in _ring_pair(name, offset, loop.var, size, loop.origin)
    ]
    return (*pairs, *rewritten)


def _named_neighbour(stmt: Stmt, loop: For, size: str) -> int | None:
    """The offset where `stmt` is `j = (i +- 1) % n`, j assigned nowhere else in the loop's body."""
    if not (isinstance(stmt, Assign) and isinstance(stmt.target, cst.Name) and stmt.accumulate is None):
        return None
    value = unparen(stmt.value)
    if not (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Modulo)):
        return None
    if code(unparen(value.right)) != size or sum(stmt.var in written(s) for s in walk_statements(loop.body)) != 1:
        return None
    return _neighbour(value.left, loop.var, size)


def _ring_pair(name: str, offset: int, var: str, size: str, origin: cst.CSTNode) -> list[Stmt]:
    """`name = var + 1; if name == size: name = 0` (or the step back, wrapped to size - 1)."""
    target = cst.Name(name)
    step = cst.parse_expression(f"{var} + 1" if offset == 1 else f"{var} - 1")
    test, reset = (f"{name} == {size}", "0") if offset == 1 else (f"{name} < 0", f"{size} - 1")
    wrap = Assign(target, cst.parse_expression(reset), None, origin)
    return [Assign(target, step, None, origin), If(cst.parse_expression(test), (wrap,), (), origin)]


class _Neighbours(cst.CSTTransformer):
    """Replaces `(var +- 1 + k * size) % size` by a ring index's name (one per offset)."""

    def __init__(self, var: str, size: str, namer: Namer, parsed: ParsedFunction):
        self.var, self.size, self.namer, self.parsed = var, size, namer, parsed
        self.names: dict[int, str] = {}

    def expression(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """`node` with its neighbours replaced (itself where it has none), positions carried."""
        if not any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Modulo) for n in walk(node)):
            return node
        rebuilt = node.visit(self)
        assert isinstance(rebuilt, cst.BaseExpression)  # an expression visited stays one
        self.parsed.carry(node, rebuilt)
        return rebuilt

    def leave_BinaryOperation(self, original: cst.BinaryOperation, updated: cst.BinaryOperation) -> cst.BaseExpression:
        if not isinstance(updated.operator, cst.Modulo) or code(unparen(updated.right)) != self.size:
            return updated
        offset = _neighbour(updated.left, self.var, self.size)
        if offset is None:
            return updated
        if offset not in self.names:
            self.names[offset] = self.namer.fresh(f"{self.var}_next" if offset == 1 else f"{self.var}_prev")
        return cst.Name(self.names[offset])


def _rewritten(stmt: Stmt, rewrite: _Neighbours) -> Stmt:
    """`stmt` (and the blocks in it) with the neighbours replaced in every expression."""
    expr = rewrite.expression
    if isinstance(stmt, Assign):
        target = expr(stmt.target)
        assert isinstance(target, (cst.Name, cst.Subscript))  # a place stays a place
        return replace(stmt, target=target, value=expr(stmt.value))
    if isinstance(stmt, For):
        body = tuple(_rewritten(s, rewrite) for s in stmt.body)
        return replace(stmt, start=expr(stmt.start), stop=expr(stmt.stop), step=expr(stmt.step), body=body)
    if isinstance(stmt, If):
        body, orelse = (tuple(_rewritten(s, rewrite) for s in block) for block in (stmt.body, stmt.orelse))
        return replace(stmt, test=expr(stmt.test), body=body, orelse=orelse)
    if isinstance(stmt, While):
        return replace(stmt, test=expr(stmt.test), body=tuple(_rewritten(s, rewrite) for s in stmt.body))
    if isinstance(stmt, Exit):
        return replace(stmt, values=tuple(expr(v) for v in stmt.values))
    return stmt


def _neighbour(expr: cst.BaseExpression, var: str, size: str) -> int | None:
    """+1 or -1 where `expr` is `var` plus that and any whole multiple of `size` (by its text)."""
    terms = _linear(expr, var, size)
    if terms is None or terms.get(var) != 1 or set(terms) - {var, size, "1"}:
        return None
    offset = terms.get("1", 0)
    return offset if offset in (1, -1) else None


def _linear(expr: cst.BaseExpression, var: str, size: str) -> dict[str, int] | None:
    """`expr` as integer coefficients of `var`, of `size` and of 1, or None."""
    node = unparen(expr)
    text = code(node)
    if text in (var, size):
        return {text: 1}
    if isinstance(node, cst.Integer):
        return {"1": int(node.evaluated_value)}
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _linear(node.expression, var, size)
        return None if inner is None else {k: -c for k, c in inner.items()}
    if not isinstance(node, cst.BinaryOperation):
        return None
    left, right = _linear(node.left, var, size), _linear(node.right, var, size)
    if left is None or right is None:
        return None
    if isinstance(node.operator, (cst.Add, cst.Subtract)):
        sign = 1 if isinstance(node.operator, cst.Add) else -1
        out = dict(left)
        for k, c in right.items():
            out[k] = out.get(k, 0) + sign * c
        return {k: c for k, c in out.items() if c}
    if isinstance(node.operator, cst.Multiply):
        for a, b in ((left, right), (right, left)):
            if set(a) <= {"1"}:
                return {k: c * a.get("1", 0) for k, c in b.items() if c * a.get("1", 0)}
    return None
