"""What each adjoint line of one reversed iteration computes, for the gather (`gather.py`): the
lines in the order the reversal runs them (`flatten`), and each line's value with the iteration's
temporaries and private sums inlined (`Values`), with the expressions it reads, each at its place
(`Source`), which `gather_checks.py` then checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import libcst as cst

from ..ir.core import Assign, For, If
from ..ir.emit import Line
from ..ir.exprs import Rename, is_number, names_in, negate, paren, plus, subscript_indices, unparen


@dataclass(frozen=True)
class Entry:
    """One adjoint line of the reversed loop body, in the order the reversal runs them, with the
    loops inside the gathered one that hold it."""

    context: tuple[For, ...]
    line: Line


@dataclass(frozen=True)
class Source:
    """A line's expression that a gathered value reads, where the reversal evaluates it."""

    position: int
    context: tuple[For, ...]
    node: cst.CSTNode


@dataclass(frozen=True)
class _Value:
    """An expression of the iteration, its temporaries and private sums inlined, and the lines'
    expressions it reads, each at its own place."""

    expr: cst.BaseExpression
    sources: tuple[Source, ...]
    broken: bool = False  # reads a private sum of other loops: not inlined, so not gathered


@dataclass(frozen=True)
class Values:
    """What each line's value is at its place in one reversed iteration: temporaries (assigned
    once, before their reads) and private sums (`private_sums`) inlined."""

    temps: Mapping[str, _Value]
    sums: frozenset[str]
    at: Mapping[int, _Value]  # position -> the value of the line there

    @staticmethod
    def of(
        sequence: list[Entry], is_adjoint, var: str, sums: Mapping[str, tuple[For, ...]], wrapped: set[str]
    ) -> Values | None:
        temp_names = _assigned_temps(sequence, is_adjoint)
        temps: dict[str, _Value] = {}
        running: dict[str, _Value] = {}  # a private sum's value so far in the iteration
        at: dict[int, _Value] = {}
        for position, entry in enumerate(sequence):
            line = entry.line
            if any(t not in temps for t in reads_of(line) & temp_names):
                return None  # a temporary read before its definition: not this iteration's value
            read: cst.BaseExpression = line.value
            if isinstance(line.target, cst.Subscript):  # its indices are read there too (a gather
                # writes a wrapped index, `ip`, as the element it gathers into: not read)
                indices = [ix for ix in subscript_indices(line.target) if not is_name(ix, wrapped)]
                read = cst.Tuple([cst.Element(e) for e in (line.value, *indices)])
            value = _inlined(line.value, Source(position, entry.context, read), temps, running, sums)
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
        return Values(temps, frozenset(sums), at)


def _inlined(
    node: cst.BaseExpression,
    own: Source,
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


def private_sums(sequence: list[Entry], private: set[str]) -> dict[str, tuple[For, ...]]:
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
        if any(name in reads_of(e.line) for e in sequence[last + 1 :]):
            continue
        found[name] = reset.context
    return found


def _writes_name(line: Line, name: str) -> bool:
    return isinstance(line.target, cst.Name) and line.target.value == name


def flatten(body, context: tuple[For, ...], lines, varying: set[str], out: list[Entry], wraps: set[If]) -> bool:
    """The adjoint lines of `body` in the order its reversal runs one iteration's, into `out`;
    False where it holds a statement other than assignments, the `if`s of ring indices
    (`wraps`, `rings.py`) and loops whose bounds read nothing the iteration changes (`varying`) but the
    variables of the loops around them."""
    for s in reversed(body):
        if isinstance(s, Assign):
            out.extend(Entry(context, line) for line in lines.get(s, []))
        elif isinstance(s, If) and s in wraps and not any(lines.get(a) for a in s.body):
            continue
        elif isinstance(s, For) and not s.parallel:
            bounds = set().union(*(names_in(b) for b in (s.start, s.stop, s.step)))
            if bounds & (varying - {c.var for c in context}):
                return False
            if not flatten(s.body, (*context, s), lines, varying, out, wraps):
                return False
        else:
            return False
    return True


def reads_of(line: Line) -> set[str]:
    """What `line` reads, its target's indices included (not an accumulated target itself)."""
    reads = names_in(line.value)
    if isinstance(line.target, cst.Subscript):
        reads |= set().union(*(names_in(ix) for ix in subscript_indices(line.target)))
    return reads


def _assigned_temps(sequence: list[Entry], is_adjoint) -> set[str]:
    targets = (entry.line.target for entry in sequence)
    return {t.value for t in targets if isinstance(t, cst.Name) and not is_adjoint(t.value)}


def is_name(node: cst.BaseExpression | cst.Slice, names: set[str]) -> bool:
    return isinstance(node, cst.Name) and node.value in names
