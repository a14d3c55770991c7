"""Tangents that may be non-finite where every value is finite: those of variables assigned through
a singular partial (`Partials.singular`: `s = math.sqrt(v)` at v = 0 gives `s_dot = inf * v_dot`),
and, from there, of every variable computed from such a tangent (`r = c * s`).

`derive/linearize.py` guards their contributions on the partial above being zero, as reverse
mode guards an adjoint that crossed a singular partial on the partial below (`reverse/singular.py`):
`c * math.sqrt(v)` at c = 0 is 0 for every v, and `r_dot` must get `0.0`, not `0.0 * inf`. Ordinary
code (no singular partial) has none, and no guard.

A small dataflow over the core form, insensitive to order and paths (loops carry tangents to
earlier statements): more tangents than needed cost a compare each, never a wrong number.
"""

from __future__ import annotations

from ..analysis.program import Program
from ..derive.singular import singular_operands
from ..ir.core import Assign, Permute, walk_statements
from ..ir.exprs import names_in


def singular_tangents(prog: Program) -> frozenset[str]:
    """The variables whose tangents may be non-finite where their values are finite."""
    sources: list[tuple[str, set[str]]] = []  # (target, the active variables it reads)
    tainted: set[str] = set()
    for s in walk_statements(prog.fn.body):
        if isinstance(s, Assign) and prog.is_active(s.var):
            reads = {n for n in names_in(s.value) if prog.is_active(n)}
            sources.append((s.var, reads))
            if any(names_in(e) & reads for e in singular_operands(s.value)):
                tainted.add(s.var)
        elif isinstance(s, Permute):  # a swap exchanges the tangents too
            names = set(s.targets) | set(s.sources)
            sources += [(name, names) for name in names]
    while True:
        before = len(tainted)
        tainted |= {target for target, reads in sources if reads & tainted}
        if len(tainted) == before:
            return frozenset(tainted)
