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
from ..ir.core import Assign, For, If, walk_statements
from ..ir.emit import Line
from ..ir.exprs import (
    Rename,
    children,
    code,
    is_number,
    names_in,
    negate,
    number_value,
    operand,
    paren,
    plus,
    subscript,
    subscript_indices,
    unparen,
    walk,
)


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


@dataclass(frozen=True)
class _Entry:
    """One adjoint line of the reversed loop body, in the order the reversal runs them, with the
    loops inside the gathered one that hold it."""

    context: tuple[For, ...]
    line: Line


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
    read as the sum of what the iteration added to them before (`_Values`); `sums`: whether its
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
    sequence: list[_Entry] = []
    if not _flatten(loop.body, (), lines, assigned | {var}, sequence, wraps):
        return None
    values = _Values.of(sequence, is_adjoint, var, _sums(sequence, private), set(wrapped))
    if values is None:
        return None
    groups: dict[tuple, list[tuple[int, Term]]] = {}
    for position, entry in enumerate(sequence):
        line = entry.line
        found = _contribution(line, var, set(values.temps), is_array, wrapped)
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
        if _reads(entry.line) & arrays or (base in arrays and (entry.line.op == "=" or isinstance(target, cst.Name))):
            return None  # a gathered array read, reset or accumulated whole
    inlined = set(values.temps) | set(values.sums)

    def sees(position: int, computed: frozenset[str] = frozenset()) -> bool:
        """Its value reads what the loop read there (`computed`: names the sum's loop computes)."""
        sources = values.at[position].sources
        return all(_sees_what_the_loop_saw(s, sequence, var, inlined, changing - computed) for s in sources)

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
    sequence: list[_Entry], values: _Values, is_adjoint: Callable[[str], bool], is_array: Callable[[str], bool]
) -> dict[tuple[For, ...], list[tuple[int, Term]]]:
    """The accumulations into scalar adjoints that no line of the loop reads or resets (the
    private sums, reset by every iteration, are not), whose values are cheap to compute in a loop
    of their own: sums, differences and products of reads, no call, no division (what they read
    is computed again there, and may also be in what is left of the iteration's adjoint)."""
    touched = set().union(*(_reads(e.line) for e in sequence))
    touched |= {e.line.target.value for e in sequence if e.line.op == "=" and isinstance(e.line.target, cst.Name)}  # type: ignore[attr-defined]
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


@dataclass(frozen=True)
class _Source:
    """A line's expression that a gathered value reads, where the reversal evaluates it."""

    position: int
    context: tuple[For, ...]
    node: cst.CSTNode


@dataclass(frozen=True)
class _Value:
    """An expression of the iteration, its temporaries and private sums inlined, and the lines'
    expressions it reads, each at its own place."""

    expr: cst.BaseExpression
    sources: tuple[_Source, ...]
    broken: bool = False  # reads a private sum of other loops: not inlined, so not gathered


@dataclass(frozen=True)
class _Values:
    """What each line's value is at its place in one reversed iteration: temporaries (assigned
    once, before their reads) and private sums (`_sums`) inlined."""

    temps: Mapping[str, _Value]
    sums: frozenset[str]
    at: Mapping[int, _Value]  # position -> the value of the line there

    @staticmethod
    def of(
        sequence: list[_Entry], is_adjoint, var: str, sums: Mapping[str, tuple[For, ...]], wrapped: set[str]
    ) -> _Values | None:
        temp_names = _assigned_temps(sequence, is_adjoint)
        temps: dict[str, _Value] = {}
        running: dict[str, _Value] = {}  # a private sum's value so far in the iteration
        at: dict[int, _Value] = {}
        for position, entry in enumerate(sequence):
            line = entry.line
            if any(t not in temps for t in _reads(line) & temp_names):
                return None  # a temporary read before its definition: not this iteration's value
            read: cst.BaseExpression = line.value
            if isinstance(line.target, cst.Subscript):  # its indices are read there too (a gather
                # writes a wrapped index, `ip`, as the element it gathers into: not read)
                indices = [ix for ix in subscript_indices(line.target) if not _is_name(ix, wrapped)]
                read = cst.Tuple([cst.Element(e) for e in (line.value, *indices)])  # type: ignore[arg-type]
            value = _inlined(line.value, _Source(position, entry.context, read), temps, running, sums)
            at[position] = value
            target = line.target
            if isinstance(target, cst.Name) and not is_adjoint(target.value):
                if line.op != "=" or target.value in temps or target.value == var:
                    return None
                temps[target.value] = value
            elif isinstance(target, cst.Name) and target.value in sums and line.op != "=":
                added = value.expr if line.op == "+=" else negate(value.expr)
                before = running.get(target.value)
                total = added if before is None else plus([unparen(before.expr), added])
                sources = (before.sources if before else ()) + value.sources
                running[target.value] = _Value(total, sources, value.broken or bool(before and before.broken))
        return _Values(temps, frozenset(sums), at)


def _inlined(
    node: cst.BaseExpression,
    own: _Source,
    temps: Mapping[str, _Value],
    running: Mapping[str, _Value],
    sums: Mapping[str, tuple[For, ...]],
) -> _Value:
    """`node` with the temporaries and the private sums it reads replaced by their values so far
    (a sum nothing has added to yet in this iteration is 0.0); its sources: `own` and theirs. A
    sum of other loops than `node`'s is not replaced: the value is broken."""
    mapping: dict[str, cst.BaseExpression] = {}
    sources, broken = [own], False
    for name in sorted(names_in(node)):
        if name in sums and sums[name] != own.context:
            broken = True
            continue
        found = temps.get(name) or running.get(name)
        if found is not None:
            mapping[name] = paren(found.expr)
            sources += found.sources
            broken = broken or found.broken
        elif name in sums:
            mapping[name] = cst.Float("0.0")
    expr = node.visit(Rename(mapping)) if mapping else node
    return _Value(expr, tuple(sources), broken)  # type: ignore[arg-type]


def _sums(sequence: list[_Entry], private: set[str]) -> dict[str, tuple[For, ...]]:
    """The private scalar adjoints (zero when the loop's reversal starts: nothing outside the loop
    adds to them) that each iteration adds to, in one loop, then resets last (`lap_bar = 0.0`)
    and never reads after the reset: each iteration starts with them at zero, so their value at
    a line is the sum of what the iteration added before it."""
    found: dict[str, tuple[For, ...]] = {}
    for name in sorted(private):
        writes = [(k, e) for k, e in enumerate(sequence) if _writes_name(e.line, name)]
        if not writes or len({e.context for _, e in writes}) != 1:
            continue
        *adds, (last, reset) = writes
        if not (reset.line.op == "=" and is_number(reset.line.value, 0.0)) or any(e.line.op == "=" for _, e in adds):
            continue
        if any(name in _reads(e.line) for e in sequence[last + 1 :]):
            continue
        found[name] = reset.context
    return found


def _writes_name(line: Line, name: str) -> bool:
    return isinstance(line.target, cst.Name) and line.target.value == name


def _flatten(body, context: tuple[For, ...], lines, varying: set[str], out: list[_Entry], wraps: set[If]) -> bool:
    """The adjoint lines of `body` in the order its reversal runs one iteration's, into `out`;
    False where it holds a statement other than assignments, the `if`s of ring indices
    (`wraps`, `rings.py`) and loops whose bounds read nothing the iteration changes (`varying`) but the
    variables of the loops around them."""
    for s in reversed(body):
        if isinstance(s, Assign):
            out.extend(_Entry(context, line) for line in lines.get(s, []))
        elif isinstance(s, If) and s in wraps and not any(lines.get(a) for a in s.body):
            continue
        elif isinstance(s, For) and not s.parallel:
            bounds = set().union(*(names_in(b) for b in (s.start, s.stop, s.step)))
            if bounds & (varying - {c.var for c in context}):
                return False
            if not _flatten(s.body, (*context, s), lines, varying, out, wraps):
                return False
        else:
            return False
    return True


def shifted(node: cst.BaseExpression, var: str, index: str, offset: int, base: int = 0) -> cst.BaseExpression:
    """`node` with `var` replaced by `index + base - offset` (the iteration whose contribution
    lands on element `index + base`), constant offsets folded: `v_bar[i]` at offset -1 is
    `v_bar[i_1 + 1]`."""
    return node.visit(_Shift(var, index, base - offset))  # type: ignore[return-value]


def plus_constant(node: cst.BaseExpression, k: int) -> cst.BaseExpression:
    """`node + k`, folding integer constants: `n - 1` plus 1 is `n`, `1` plus 1 is `2`."""
    inner = unparen(node)
    if k == 0:
        return node
    if isinstance(inner, cst.Integer) or _is_negative_integer(inner):
        return _integer(int(number_value(inner)) + k)
    if isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, (cst.Add, cst.Subtract)):
        constant = integer_value(inner.right)
        if constant is not None:
            total = (constant if isinstance(inner.operator, cst.Add) else -constant) + k
            return _add(inner.left, total)
    return _add(node, k)


# --- helpers --------------------------------------------------------------------------------


def _reads(line: Line) -> set[str]:
    """What `line` reads, its target's indices included (not an accumulated target itself)."""
    reads = names_in(line.value)
    if isinstance(line.target, cst.Subscript):
        reads |= set().union(*(names_in(ix) for ix in subscript_indices(line.target)))
    return reads


def _assigned_temps(sequence: list[_Entry], is_adjoint) -> set[str]:
    targets = (entry.line.target for entry in sequence)
    return {t.value for t in targets if isinstance(t, cst.Name) and not is_adjoint(t.value)}


def _contribution(
    line: Line, var: str, temps: set[str], is_array: Callable[[str], bool], wrapped: Mapping[str, int]
) -> tuple[int, int, bool] | None:
    """(axis, offset, periodic) where `line` accumulates into an adjoint array at `var + offset`
    on one axis, or at a ring index (`rings.py`: periodic), with the other indices free of
    `var`, of the ring indices and of the iteration's temporaries."""
    target = line.target
    if line.op not in ("+=", "-=") or not isinstance(target, cst.Subscript) or not isinstance(target.value, cst.Name):
        return None
    if not is_array(target.value.value):
        return None
    indices = subscript_indices(target)
    found = None
    for axis, ix in enumerate(indices):
        if isinstance(ix, cst.Slice):
            return None
        names = names_in(ix)
        if var in names or names & set(wrapped):
            periodic = _is_name(ix, set(wrapped))
            offset = wrapped[ix.value] if periodic else _offset_of(ix, var)  # type: ignore[attr-defined]
            if offset is None or found is not None:
                return None
            found = (axis, offset, periodic)
        elif names & temps:
            return None
    return found


def _is_name(node: cst.BaseExpression | cst.Slice, names: set[str]) -> bool:
    return isinstance(node, cst.Name) and node.value in names


def _offset_of(node: cst.BaseExpression, var: str) -> int | None:
    """c where `node` is `var`, `var + c`, `var - c` or `c + var` for an integer constant c."""
    inner = unparen(node)
    if isinstance(inner, cst.Name):
        return 0 if inner.value == var else None
    if not isinstance(inner, cst.BinaryOperation) or not isinstance(inner.operator, (cst.Add, cst.Subtract)):
        return None
    left, right = unparen(inner.left), unparen(inner.right)
    if isinstance(left, cst.Name) and left.value == var:
        constant = integer_value(right)
        if constant is not None:
            return constant if isinstance(inner.operator, cst.Add) else -constant
    if isinstance(right, cst.Name) and right.value == var and isinstance(inner.operator, cst.Add):
        return integer_value(left)
    return None


def _sees_what_the_loop_saw(
    source: _Source, sequence: list[_Entry], var: str, inlined: set[str], changing: set[str]
) -> bool:
    """Does `source`, computed before the rest of the reversal runs, read what it read there? No
    name it reads may be restored or computed again in the reversed iterations (`changing`), and
    every name it reads (but the temporaries and sums inlined) that a line writes must be an array
    reset only after it in the same iteration of the same loops, element by element at an index
    that differs between all their iterations, and read by it only at that element."""
    reads = names_in(source.node) - inlined
    if reads & changing:
        return False  # restored or recomputed in each reversed iteration
    for other, entry in enumerate(sequence):
        line = entry.line
        written = line.target.value.value if isinstance(line.target, cst.Subscript) else line.target.value  # type: ignore[attr-defined]
        if written not in reads or (other == source.position and line.op != "="):
            continue
        if line.op != "=" and other > source.position and _own_elements(line, entry, source, written, var):
            continue  # `U_bar[k, j] += ...` after `t = U_bar[i, j]`: no iteration adds into another's
        if not (isinstance(line.target, cst.Subscript) and line.op == "=" and other > source.position):
            return False
        if entry.context != source.context:
            return False  # reset in another loop: not the same iteration's element
        indices = subscript_indices(line.target)
        for loop_var in (var, *(c.var for c in source.context)):
            if not any(not isinstance(ix, cst.Slice) and _offset_of(ix, loop_var) is not None for ix in indices):
                return False  # the same element in several iterations: a later one would read the reset
        element = tuple(code(ix) for ix in indices)
        if not _reads_only(source.node, written, element):
            return False
    return True


def _own_elements(line: Line, entry: _Entry, source: _Source, array: str, var: str) -> bool:
    """Is `line`, an accumulation into `array` after `source` in the same iteration of the same
    loops, at an element no other iteration reads? Each loop variable (`var` and the inner loops')
    sits at one axis with one offset in its target and in every read of `array` in `source`, so
    the elements it adds into and those another iteration reads differ on that axis, whatever the
    other indices hold (`U_bar[k, j]` and `U_bar[i, j]`: another j, another element). The
    element the same iteration reads may be the one it adds into (k == i): it reads it first."""
    if entry.context != source.context or not isinstance(line.target, cst.Subscript):
        return False
    target = subscript_indices(line.target)
    reads = [n for n in walk(source.node) if isinstance(n, cst.Subscript) and _is_named(n.value, array)]
    mentions = sum(1 for n in walk(source.node) if isinstance(n, cst.Name) and n.value == array)
    if mentions != len(reads):
        return False  # the array read whole, or inside an index
    for loop_var in (var, *(c.var for c in source.context)):
        placed = [(axis, _offset_of(ix, loop_var)) for axis, ix in enumerate(target) if not isinstance(ix, cst.Slice)]
        placed = [(axis, c) for axis, c in placed if c is not None]
        if len(placed) != 1:
            return False
        axis, offset = placed[0]
        for read in reads:
            indices = subscript_indices(read)
            if len(indices) != len(target) or isinstance(indices[axis], cst.Slice):
                return False
            if _offset_of(indices[axis], loop_var) != offset:
                return False
    return True


def _is_named(node: cst.BaseExpression, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _is_axis(node, var: str) -> bool:
    return not isinstance(node, cst.Slice) and var in names_in(node)


def _reads_only(node: cst.CSTNode, array: str, element: tuple[str, ...]) -> bool:
    """Is every read of `array` in `node` a read of `array[element]`?"""
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value == array:
        if tuple(code(ix) for ix in subscript_indices(node)) != element:
            return False
        return all(_reads_only(ix, array, element) for ix in subscript_indices(node))
    if isinstance(node, cst.Name):
        return node.value != array
    if isinstance(node, cst.Attribute):
        return _reads_only(node.value, array, element)
    if isinstance(node, cst.Arg):
        return _reads_only(node.value, array, element)
    return all(_reads_only(child, array, element) for child in children(node))


def integer_value(node: cst.BaseExpression) -> int | None:
    """The value of an integer literal (`3`, `-2`, parenthesized or not), else None."""
    inner = unparen(node)
    if isinstance(inner, cst.Integer) or _is_negative_integer(inner):
        return int(number_value(inner))
    return None


def _is_negative_integer(node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(unparen(node.expression), cst.Integer)
    )


def _integer(k: int) -> cst.BaseExpression:
    return cst.Integer(str(k)) if k >= 0 else cst.UnaryOperation(cst.Minus(), cst.Integer(str(-k)))


def _add(node: cst.BaseExpression, k: int) -> cst.BaseExpression:
    """`node + k` or `node - |k|` (`node` itself for 0), parenthesized only where it must be."""
    if k == 0:
        return node
    operator = cst.Add() if k > 0 else cst.Subtract()
    return cst.BinaryOperation(operand(node, 2, False), operator, cst.Integer(str(abs(k))))


class _Shift(Rename):
    """`var` replaced by `index + delta`, folding `var + c` into `index + (c + delta)`."""

    def __init__(self, var: str, index: str, delta: int):
        super().__init__({var: paren(_add(cst.Name(index), delta))})
        self.var, self.index, self.delta = var, index, delta

    def leave_BinaryOperation(self, original: cst.BinaryOperation, updated: cst.BaseExpression) -> cst.BaseExpression:
        offset = _offset_of(original.with_changes(lpar=[], rpar=[]), self.var)
        if offset is None or not isinstance(unparen(original.left), cst.Name):
            return updated
        folded = _add(cst.Name(self.index), offset + self.delta)
        if original.lpar and isinstance(folded, cst.BinaryOperation):
            return folded.with_changes(lpar=original.lpar, rpar=original.rpar)
        return folded

    def leave_Index(self, original: cst.Index, updated: cst.Index) -> cst.Index:
        if isinstance(updated.value, cst.BinaryOperation):
            return updated.with_changes(value=unparen(updated.value))  # an index needs no parentheses
        return updated
