"""Adjoints that may be non-finite where every value is finite: those that received a contribution
through a singular partial (`Partials.singular`: `math.sqrt(v)` at v = 0 gives `v_bar = g * inf`),
and, from there, every adjoint such an adjoint reaches (`v = a * b`: `a_bar += v_bar * b`).

`derive/adjoints.py` guards their contributions on the partial being zero, as forward mode guards
a singular partial on the tangent being zero: `math.sqrt(a * b)` at b = 0 is flat in a, and
`a_bar` must get `0.0`, not `inf * 0.0`. Ordinary code (no singular partial) has none, and no guard.

A small dataflow over the core form, insensitive to order and paths (loops carry adjoints back to
earlier statements): more adjoints than needed cost a compare each, never a wrong number.
"""

from __future__ import annotations

from ..analysis.program import Program
from ..derive.singular import singular_operands
from ..ir.core import Assign, Permute, walk_statements
from ..ir.exprs import names_in


def singular_adjoints(prog: Program) -> frozenset[str]:
    """The variables whose adjoints may be non-finite where their values are finite."""
    sources: list[tuple[str, set[str], set[str]]] = []  # (target, active reads, those read through a singular partial)
    permutes: list[set[str]] = []
    for s in walk_statements(prog.fn.body):
        if isinstance(s, Assign) and prog.is_active(s.var):
            reads = {n for n in names_in(s.value) if prog.is_active(n)}
            through = {n for e in singular_operands(s.value) for n in names_in(e) if n in reads}
            sources.append((s.var, reads, through))
        elif isinstance(s, Permute):
            permutes.append(set(s.targets) | set(s.sources))
    tainted = set().union(*(through for _, _, through in sources))
    while True:
        before = len(tainted)
        for target, reads, _ in sources:
            if target in tainted:
                tainted |= reads
        for names in permutes:
            if names & tainted:
                tainted |= names
        if len(tainted) == before:
            return frozenset(tainted)
