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

Recognised: `ip = i + 1` (or `1 + i`) followed at once by `if ip == n: ip = 0` (also `ip >= n`,
and `ip = ip - n`, `ip -= n`), and `im = i - 1` followed at once by `if im < 0: im = n - 1` (also
`im == -1`, and `im = im + n`, `im += n`), where the loop is `for i in range(n)` from 0 by 1, `n`
reads nothing the body assigns, the name is not the loop's variable, the body assigns it nowhere
else (inner loops included) and mentions it nowhere before the pair: wherever it is read, it has
been set this iteration.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from .core import Assign, For, If, Stmt, While, assigned_names, walk_statements, written
from .exprs import code, is_number, names_in, number_value, unparen


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
