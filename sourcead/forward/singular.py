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
from ..derive.singular import singular_values
from ..ir.core import walk_statements


def singular_tangents(prog: Program) -> frozenset[str]:
    """The variables whose tangents may be non-finite where their values are finite."""
    return singular_values(walk_statements(prog.fn.body), prog.is_active)
