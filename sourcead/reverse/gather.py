"""Gather-form adjoints of stencils at constant offsets (`ReversePlan.gathers`).

A loop whose iterations' adjoints are independent is reversed in its own order
(`ReversePlan.forward_reversals`). Where its body reads neighbours, as in
`v[i] = u[i - 1] - 2.0 * u[i] + u[i + 1]`, each iteration's adjoint scatters into them:

    u_bar[i - 1] += v_bar[i]
    u_bar[i] += -2.0 * v_bar[i]
    u_bar[i + 1] += v_bar[i]

three read-modify-writes of `u_bar` per iteration, each element touched by three iterations: a
dependence from one iteration to the next that keeps the loop from vectorising. Where each such
index is the loop variable plus a constant on one axis, the same contributions are gathered
instead, as Halide's autodiff does: each element of `u_bar` takes its own in one place,

    for i_1 in range(a + 1, b - 1):  # every contribution exists here
        u_bar[i_1] += v_bar[i_1 + 1] + -2.0 * v_bar[i_1] + v_bar[i_1 - 1]

with the few elements at the ends of the range, where some contributions do not exist, in guarded
loops of their own. The rest of the iteration's adjoint (scalar sums, resets, contributions at the
loop index alone or at indices that are not such offsets, the records it restores, a prefix it
computes again) then runs as the forward reversal ran it, in the loop's order.

Exact where this module says so, else the loop keeps its scatter:
- the gathered lines are accumulations into adjoint arrays that no line of the loop reads or
  resets (other lines may only add to them too), so running them before the rest changes
  nothing another line sees;
- what they read (their temporaries inlined) neither a line of the loop writes, but for a reset
  of the very element they read, later in the same iteration, at an index that differs between
  iterations (`v_bar[i] = 0.0` after its reads), nor the reversed iterations restore or compute
  again: the gather, running before all of these, reads what the loop read.
Each contribution is computed once, as in the scatter; only the order of the additions into an
element changes (the same sum up to rounding, the same on every run).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import libcst as cst

from ..frontend.rings import ring_indices
from ..ir.core import Assign, For, walk_statements
from ..ir.emit import Line
from ..ir.exprs import code, is_number, names_in, negate, number_value, subscript, subscript_indices, unparen, walk
from .gather_checks import contribution, sees_what_the_loop_saw
from .gather_values import Entry, Values, flatten, private_sums, reads_of


@dataclass(frozen=True)
class Term:
    """One contribution, `line`, into the loop variable plus `offset` on its group's axis; `value`
    is its value with the iteration's temporaries inlined."""

    line: Line
    offset: int
    value: cst.BaseExpression

    @property
    def added(self) -> cst.BaseExpression:
        """What it adds: `value`, negated for a `-=`."""
        return negate(self.value) if self.line.op == "-=" else unparen(self.value)


@dataclass(frozen=True)
class Group:
    """The contributions into one adjoint array whose indices differ only by the offset on `axis`,
    made in the same loops inside the gathered one (`context`, outermost first)."""

    array: str
    axis: int
    indices: tuple[cst.BaseExpression, ...]  # the first term's, as written
    terms: tuple[Term, ...]
    context: tuple[For, ...] = ()
    period: cst.BaseExpression | None = None  # S for ring indices over range(S) (`rings.py`)

    @property
    def lowest(self) -> int:
        return min(t.offset for t in self.terms)

    @property
    def highest(self) -> int:
        return max(t.offset for t in self.terms)

    def target(self, index: cst.BaseExpression) -> cst.Subscript:
        """The element `index` names, on the group's axis."""
        indices = list(self.indices)
        indices[self.axis] = index
        return subscript(self.array, indices)


@dataclass(frozen=True)
class Sums:
    """The contributions every iteration adds into scalar adjoints that no line of the loop reads
    or resets (`kappa_bar += t0 * v_bar[i]`), made in the same loops inside the gathered one
    (`context`): summed in a loop of their own, their order free (`add_unordered`)."""

    terms: tuple[Term, ...]  # offset 0, each into its line's target
    context: tuple[For, ...] = ()
    # the ring indices of the loop (`rings.py`) their values read, by offset, and the ring's size:
    # the sums' loop computes them from its own index
    rings: Mapping[str, int] = field(default_factory=dict)
    size: cst.BaseExpression | None = None

    @property
    def targets(self) -> list[str]:
        return sorted({t.line.target.value for t in self.terms})  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Gather:
    groups: tuple[Group, ...]
    residual: Mapping[Assign, tuple[Line, ...]]  # each statement's lines left to the loop's reversal
    sums: tuple[Sums, ...] = ()


def plan_gather(
    loop: For,
    lines: Mapping[Assign, list[Line]] | Mapping[Assign, tuple[Line, ...]],
    is_adjoint: Callable[[str], bool],
    is_array: Callable[[str], bool],
    changing: set[str],
    assigned: set[str],
    private: set[str] = frozenset(),  # type: ignore[assignment]
    sums: bool = True,
    rings: bool = True,
) -> Gather | None:
    """The gather form of the contributions of the reversal of `loop`, or None where none is at
    a constant nonzero offset of its variable or where gathering could change what a line reads.
    The body may hold loops whose bounds do not change with the iteration (their contributions
    are gathered inside the same loops); any other compound statement keeps the scatter.
    `is_adjoint(name)`: a generated adjoint variable; `is_array(name)`: an adjoint array;
    `changing`: what the reversed iterations assign besides their adjoint lines (restored
    records, recomputed prefixes, a replayed parallel body), which gathered lines must not read;
    `assigned`: the names the loop body assigns; `private`: the adjoints of scalars that only the
    loop body mentions (`lap_bar` of `lap = ...; v[i, j] = ... * lap`), which a contribution may
    read as the sum of what the iteration added to them before (`Values`); `sums`: whether its
    sums into scalar adjoints may be taken too (not for a prange loop's own iterations, whose
    shared sums go to the chunks' sums); `rings`: whether contributions at ring indices
    (`rings.py`) are gathered (in a parallel adjoint, where the gather replaces the chunks' rows;
    in a serial loop the gather's passes measured slower than the scatter they replace)."""
    if not is_number(loop.step) or number_value(loop.step) != 1:
        return None
    var = loop.var
    around = {name: ring.offset for name, ring in ring_indices(loop).items()}
    wrapped = around if rings else {}
    loops = [inner for inner in (loop, *walk_statements(loop.body)) if isinstance(inner, For)]
    wraps = {ring.test for inner in loops for ring in ring_indices(inner).values()}
    sequence: list[Entry] = []
    if not flatten(loop.body, (), lines, assigned | {var}, sequence, wraps):
        return None
    values = Values.of(sequence, is_adjoint, var, private_sums(sequence, private), set(wrapped))
    if values is None:
        return None
    groups: dict[tuple, list[tuple[int, Term]]] = {}
    for position, entry in enumerate(sequence):
        line = entry.line
        found = contribution(line, var, set(values.temps), is_array, wrapped)
        if found is not None:
            axis, offset, periodic = found
            indices = subscript_indices(line.target)  # type: ignore[arg-type]
            others = tuple(code(ix) for k, ix in enumerate(indices) if k != axis)
            key = (entry.context, line.target.value.value, axis, others, periodic)  # type: ignore[attr-defined]
            if values.at[position].broken:
                return None
            groups.setdefault(key, []).append((position, Term(line, offset, values.at[position].expr)))
    gathered = {key: terms for key, terms in groups.items() if any(t.offset for _, t in terms)}
    summed = _free_sums(sequence, values, is_adjoint, is_array) if sums else {}
    if not gathered and not summed:
        return None
    arrays = {key[1] for key in gathered}
    for entry in sequence:
        target = entry.line.target
        base = target.value.value if isinstance(target, cst.Subscript) else target.value  # type: ignore[attr-defined]
        if reads_of(entry.line) & arrays or (base in arrays and (entry.line.op == "=" or isinstance(target, cst.Name))):
            return None  # a gathered array read, reset or accumulated whole
    inlined = set(values.temps) | set(values.sums)

    def sees(position: int, computed: frozenset[str] = frozenset()) -> bool:
        """Its value reads what the loop read there (`computed`: names the sum's loop computes)."""
        sources = values.at[position].sources
        return all(sees_what_the_loop_saw(s, sequence, var, inlined, changing - computed) for s in sources)

    if not all(sees(position) for terms in gathered.values() for position, _ in terms):
        return None
    # a sum's own loop computes the ring indices it reads from its index (`Sums.rings`)
    rings_read = frozenset(around)
    summed = {c: kept for c, terms in summed.items() if (kept := [(p, t) for p, t in terms if sees(p, rings_read)])}
    if not gathered and not summed:
        return None
    chosen = {id(t.line) for terms in (*gathered.values(), *summed.values()) for _, t in terms}
    residual = {
        s: tuple(line for line in lines.get(s, []) if id(line) not in chosen)
        for s in walk_statements(loop.body)
        if isinstance(s, Assign)
    }
    return Gather(
        groups=tuple(
            Group(
                key[1],
                key[2],
                tuple(subscript_indices(terms[0][1].line.target)),  # type: ignore[arg-type]
                tuple(t for _, t in terms),
                key[0],
                loop.stop if key[4] else None,
            )
            for key, terms in gathered.items()
        ),
        residual=residual,
        sums=tuple(_summed(tuple(t for _, t in terms), c, around, loop.stop) for c, terms in summed.items()),
    )


def _summed(terms: tuple[Term, ...], context: tuple[For, ...], around: Mapping[str, int], size) -> Sums:
    """The sums, with the ring indices of the loop that their values read."""
    read = set().union(*(names_in(t.value) for t in terms)) & set(around)
    return Sums(terms, context, {name: around[name] for name in sorted(read)}, size if read else None)


def _free_sums(
    sequence: list[Entry], values: Values, is_adjoint: Callable[[str], bool], is_array: Callable[[str], bool]
) -> dict[tuple[For, ...], list[tuple[int, Term]]]:
    """The accumulations into scalar adjoints that no line of the loop reads or resets (the
    private sums, reset by every iteration, are not), whose values are cheap to compute in a loop
    of their own: sums, differences and products of reads, no call, no division (what they read
    is computed again there, and may also be in what is left of the iteration's adjoint)."""
    touched = set().union(*(reads_of(e.line) for e in sequence))
    touched |= {e.line.target.value for e in sequence if e.line.op == "=" and isinstance(e.line.target, cst.Name)}
    found: dict[tuple[For, ...], list[tuple[int, Term]]] = {}
    for position, entry in enumerate(sequence):
        line, value = entry.line, values.at[position]
        if line.op not in ("+=", "-=") or not isinstance(line.target, cst.Name):
            continue
        name = line.target.value
        if not is_adjoint(name) or is_array(name) or name in values.sums or name in touched:
            continue
        if value.broken or not _cheap(value.expr):
            continue
        found.setdefault(entry.context, []).append((position, Term(line, 0, value.expr)))
    return found


def _cheap(node: cst.CSTNode) -> bool:
    """No call, division or power in `node`."""
    expensive = (cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power, cst.MatrixMultiply)
    return not any(isinstance(n, (cst.Call, *expensive)) for n in walk(node))
