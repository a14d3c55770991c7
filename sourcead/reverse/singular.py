"""Adjoints that may be non-finite where every value is finite: those that received a contribution
through a singular partial (`Partials.singular`: `math.sqrt(v)` at v = 0 gives `v_bar = g * inf`),
and, from there, every adjoint such an adjoint reaches (`v = a * b`: `a_bar += v_bar * b`).

`derive/adjoints.py` guards their contributions on the partial being zero, as forward mode guards
a singular partial on the tangent being zero: `math.sqrt(a * b)` at b = 0 is flat in a, and
`a_bar` must get `0.0`, not `inf * 0.0`. Ordinary code (no singular partial) has none, and no guard.

A small dataflow over the core form, insensitive to order and paths (loops carry adjoints back to
earlier statements): more adjoints than needed cost a compare each, never a wrong number.

`suspect_adjoints`, a second one, finds where those guards and the seed's must not hold: adjoints
that may be exactly zero only because a partial on their way from the output reads a value that
moves infinitely fast (`s = math.sqrt(v); r = s * s` at v = 0: s's adjoint 2 * s * g is 0, and
the strong zero at sqrt's infinite partial gave v's adjoint 0 where r = v; unguarded it is nan).
More suspects than needed give nan where a number was right, never a wrong number.
"""

from __future__ import annotations

from ..analysis.program import Program
from ..derive.adjoints import suspect_leaves
from ..derive.linearize import UnsupportedDerivative, linearize
from ..derive.singular import moving_zeros, singular_operands
from ..ir.core import Assign, Permute, walk_statements
from ..ir.exprs import names_in
from ..ir.naming import Namer


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
    seeds = set().union(*(through for _, _, through in sources))
    return _backwards(seeds, [(target, reads) for target, reads, _ in sources], permutes)


def _backwards(marked: set[str], sources: list[tuple[str, set[str]]], permutes: list[set[str]]) -> frozenset[str]:
    """`marked` and every variable whose adjoint a marked one reaches: what `y = e` reads where y is
    marked, and both sides of a swap; to the fixed point, insensitive to order (loops)."""
    marked = set(marked)
    while True:
        before = len(marked)
        for target, reads in sources:
            if target in marked:
                marked |= reads
        for names in permutes:
            if names & marked:
                marked |= names
        if len(marked) == before:
            return frozenset(marked)


def suspect_adjoints(prog: Program) -> tuple[frozenset[str], frozenset[str]]:
    """(the variables whose adjoints are suspect, the variables that may be zero where they move
    infinitely fast: `derive/singular.py`'s `moving_zeros`, read by `derive/adjoints.py`'s
    `adjoint`). x's adjoint is suspect if a statement `y = e` sends it a contribution through a
    partial with a factor that reads such a value (as `linearize` writes the partials:
    `suspect_leaves`), or y's adjoint is suspect; swaps exchange them."""
    moving = moving_zeros(walk_statements(prog.fn.body), prog.is_active)
    if not moving:
        return frozenset(), moving
    reads_moving = lambda leaf: bool(names_in(leaf) & moving)  # noqa: E731
    scratch = Namer(())  # the trees are read here, not written: their temporaries are not the code's
    sources: list[tuple[str, set[str]]] = []  # (target, active reads)
    permutes: list[set[str]] = []
    suspect: set[str] = set()
    for s in walk_statements(prog.fn.body):
        if isinstance(s, Assign) and prog.is_active(s.var):
            reads = {n for n in names_in(s.value) if prog.is_active(n)}
            sources.append((s.var, reads))
            try:
                root = linearize(s.value, prog.is_active_leaf, scratch, prog.kinds.type_of).root
            except UnsupportedDerivative:  # refused where its adjoint is written
                suspect |= reads
                continue
            if root is not None:
                suspect |= {n for leaf in suspect_leaves(root, reads_moving) for n in names_in(leaf) if n in reads}
        elif isinstance(s, Permute):
            permutes.append(set(s.targets) | set(s.sources))
    return _backwards(suspect, sources, permutes), moving
