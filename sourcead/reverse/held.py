"""The plan's step `held`: the assignments `x = e` (and `x[i] = e`) whose adjoint takes e's value
from `x` (from `x[i]`) rather than compute it again (`ReversePlan.held`). It reads the adjoint lines
(`adjoint.py`), each assignment's value at the root of its linearization
(`StatementAdjoints.root_value`), and the element writes the records step chose (`records.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Set as AbstractSet

from ..ir.core import Assign, Stmt, blocks, walk_statements
from .adjoint import StatementAdjoints


def held_values(
    body: tuple[Stmt, ...], adjoints: StatementAdjoints, elements: AbstractSet[Assign] = frozenset()
) -> dict[Assign, str]:
    """The assignments `x = e` whose adjoint may take e's value (a quotient's, an exp's: what its
    partials read) from `x` rather than compute it again, and the temporary that gets it.

    At the adjoint of `x = e`, `x` holds e's value where a later statement R of the same block
    reads `x` in its adjoint, and nothing between them assigns `x`: for R's adjoint the
    to-be-recorded analysis keeps `x` as `x = e` left it (every later overwrite is recorded and
    undone first, or recomputed as a prefix, which assigns `x` only there), and between R's
    adjoint and this one the reverse sweep restores only the targets of the assignments between.
    The reading adds no record (the value is kept for R already); where `x = e` records the old
    `x`, the temporary takes the value before the restore puts the old one back.

    An element write `x[i] = e` is held where the records step says (`elements`,
    `records.held_elements`): the analyses that decide the records saw its read of `x[i]` there."""
    held: dict[Assign, str] = {s: adjoints.root_value[s] for s in elements}
    for block in _blocks_within(body):
        for k, s in enumerate(block):
            if not isinstance(s, Assign) or s.writes_element or s not in adjoints.root_value:
                continue
            if _read_later(s, block[k + 1 :], adjoints):
                held[s] = adjoints.root_value[s]
    return held


def _read_later(s: Assign, after: tuple[Stmt, ...], adjoints: StatementAdjoints) -> bool:
    """Does an assignment of `after` read `s.var` in its adjoint, with only assignments of other
    variables before it (no loop, branch, swap or break, which could skip it or move the value)?"""
    for r in after:
        if not isinstance(r, Assign) or r.var == s.var:
            return False
        if any(s.var in line.reads() for line in adjoints.lines.get(r, [])):
            return True
    return False


def _blocks_within(body: tuple[Stmt, ...]) -> Iterator[tuple[Stmt, ...]]:
    yield body
    for s in walk_statements(body):
        yield from blocks(s)
