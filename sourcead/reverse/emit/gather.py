"""The gathered contributions of a reversed loop (`gather.py`), written before the rest of its
reversal: each group's middle range, where every contribution exists, as one `+=` of their sum
(a `prange` for a parallel loop's adjoint: each element is one iteration's, so the rows are
written race-free, in a fixed order), and the two ends, where each contribution is guarded by
whether its iteration ran; then the sums into scalar adjoints, each in a loop of its own whose
additions may be reordered (`add_unordered`)."""

from __future__ import annotations

from contextlib import AbstractContextManager, ExitStack
from typing import TYPE_CHECKING

import libcst as cst

from ...ir.core import For
from ...ir.emit import Line, Writer
from ...ir.exprs import Rename, code, is_atom, paren, plus, transformed, unparen
from ..gather import Gather, Group, Sums
from ..offsets import integer_value, plus_constant, shifted

if TYPE_CHECKING:  # the reverse sweep as this emitter calls it back, without importing it
    from .scope import ReverseWriter as ReverseSweep


def write_gathered(sweep: ReverseSweep, loop: For, gather: Gather, out: Writer, parallel: bool) -> None:
    index = sweep.prog.namer.fresh(loop.var)
    if gather.groups:
        ring = any(g.period is not None for g in gather.groups)
        around = f" (around the ring of {code(loop.stop)})" if ring else ""
        offsets = f"the contributions at constant offsets from {loop.var}{around}"
        out.comment(f"{offsets}, gathered: each element takes its own")
        out.comment("in one place (no iteration adds into another's element: a loop that vectorises)")
    for group in gather.groups:
        _group(sweep, loop, group, index, out, parallel and sweep.scope.replaying is None)
    for sums in gather.sums:
        _sums(sweep, loop, sums, index, out)
    out.comment("the rest of its adjoint:")


def _sums(sweep: ReverseSweep, loop: For, sums: Sums, index: str, out: Writer) -> None:
    """What every iteration adds into scalar adjoints, in a loop of its own over the same range,
    each addition free to be reordered: LLVM keeps a partial sum per vector lane. In a parallel
    adjoint's iteration a shared adjoint's sum goes to the iteration's own partial sum, which it
    assigns first (`ReverseSweep.scattered`): private to the iteration, as numba's parallel
    lowering needs (it takes an adjoint that comes into the loop for a reduction of its own)."""
    targets = sorted({code(sweep.scattered(Line(t.line.target, "+=", t.added)).target) for t in sums.terms})
    out.comment(f"what every iteration adds into {', '.join(targets)}, summed first in a loop of its own,")
    out.comment("in any order (add_unordered: the order of an adjoint's contributions is free), so it vectorises")
    if sums.size is None:
        ranges = [(f"{code(loop.start)}, {code(loop.stop)}", False, "")]
    else:  # ring indices read: index +- 1 where none wraps, around the ring at the ends
        size = code(sums.size)
        first, last = -min(0, *sums.rings.values()), max(0, *sums.rings.values())
        ranges = [
            (f"0, min({first}, {size})", True, "the first elements: ring indices around the ring"),
            (f"{first}, {code(plus_constant(sums.size, -last))}", False, "no ring index wraps here"),
            (f"max({code(plus_constant(sums.size, -last))}, {first}), {size}", True,
             "the last elements: ring indices around the ring"),
        ]  # fmt: skip
        ranges = [r for r, width in zip(ranges, (first, 1, last), strict=True) if width]
    for bounds, wraps, comment in ranges:
        with out.block(f"for {index} in range({bounds})", comment), _inside(sums.context, out):
            for term in sums.terms:
                value = shifted(term.added, loop.var, index, 0)
                if sums.rings:
                    assert sums.size is not None  # ring indices wrap around a size
                    value = transformed(value, _RingIndices(sums.rings, index, sums.size, wraps))
                line = sweep.scattered(Line(term.line.target, "+=", value))
                target = code(line.target)
                out.line(f"{target} = add_unordered({target}, {code(line.value)})")


class _RingIndices(Rename):
    """Each ring index as its value at iteration `index`: `index + offset`, or around the ring
    `(index + offset) % size` (`wraps`)."""

    def __init__(self, rings, index: str, size: cst.BaseExpression, wraps: bool):
        mapping: dict[str, cst.BaseExpression] = {}
        for name, offset in rings.items():
            step = plus_constant(cst.Name(index), offset)
            if wraps:
                modulus = size if is_atom(unparen(size)) else paren(size)
                step = cst.BinaryOperation(paren(step), cst.Modulo(), modulus)
            mapping[name] = paren(step)
        super().__init__(mapping)

    def leave_Index(self, original: cst.Index, updated: cst.Index) -> cst.Index:
        return updated.with_changes(value=unparen(updated.value))  # an index needs no parentheses


def _group(sweep: ReverseSweep, loop: For, group: Group, index: str, out: Writer, parallel: bool) -> None:
    """`group`'s contributions: element `index` takes that of iteration `index - offset` for each
    offset; all exist in the middle of the range, only some at its ends."""
    if group.period is not None:
        _ring(sweep, loop, group, index, out, parallel)
        return
    start, stop, var = loop.start, loop.stop, loop.var
    lowest, highest = group.lowest, group.highest
    target = group.target(cst.Name(index))
    first = integer_value(plus_constant(start, highest))
    with _middle(index, plus_constant(start, highest), plus_constant(stop, lowest), first, parallel, out):
        with _inside(group.context, out):
            base = first or 0
            total = plus([shifted(t.added, var, index, t.offset, base) for t in group.terms])
            out.emit([sweep.scattered(Line(group.target(plus_constant(cst.Name(index), base)), "+=", total))])
    if lowest == highest:
        return  # one offset: the middle is the whole range
    ends = (
        (f"{code(plus_constant(start, lowest))}, min({code(plus_constant(start, highest))}, "
         f"{code(plus_constant(stop, highest))})", highest, "the first elements: the contributions that exist"),
        (f"max({code(plus_constant(stop, lowest))}, {code(plus_constant(start, highest))}), "
         f"{code(plus_constant(stop, highest))}", lowest, "the last elements: the contributions that exist"),
    )  # fmt: skip
    for bounds, missing, comment in ends:
        with out.block(f"for {index} in range({bounds})", comment):
            for term in group.terms:
                if term.offset == missing:
                    continue  # from an iteration before the range (after it): none
                iteration = code(plus_constant(cst.Name(index), -term.offset))
                with out.block(f"if {_bound(start)} <= {iteration} < {_bound(stop)}"), _inside(group.context, out):
                    value = shifted(unparen(term.value), var, index, term.offset)
                    out.emit([sweep.scattered(Line(target, term.line.op, value))])


def _ring(sweep: ReverseSweep, loop: For, group: Group, index: str, out: Writer, parallel: bool) -> None:
    """A group at wrapped offsets (`Group.period` S, the loop `range(S)`): every element takes one
    contribution of each term, that of iteration `(index - offset) % S`; in the middle, where
    no index wraps, that of `index - offset`, and at the ends (at most one element each for the
    offsets +1 and -1) the others, around the ring."""
    size, var = group.period, loop.var
    assert size is not None  # a ring group has a period
    lowest, highest = min(group.lowest, 0), max(group.highest, 0)
    with _middle(index, cst.Integer(str(highest)), plus_constant(size, lowest), highest, parallel, out):
        with _inside(group.context, out):
            total = plus([shifted(t.added, var, index, t.offset, highest) for t in group.terms])
            out.emit([sweep.scattered(Line(group.target(plus_constant(cst.Name(index), highest)), "+=", total))])
    ends = (
        (highest, f"0, min({highest}, {code(size)})", "the first elements: contributions from around the ring"),
        (-lowest, f"max({code(plus_constant(size, lowest))}, {highest}), {code(size)}",
         "the last elements: contributions from around the ring"),
    )  # fmt: skip
    for width, bounds, comment in ends:
        if not width:
            continue
        with out.block(f"for {index} in range({bounds})", comment), _inside(group.context, out):
            total = plus([transformed(t.added, _Around(var, index, t.offset, size)) for t in group.terms])
            out.emit([sweep.scattered(Line(group.target(cst.Name(index)), "+=", total))])


class _Around(Rename):
    """`var` replaced by `(index - offset) % size`, the iteration around the ring whose
    contribution lands on element `index` (just `index` for offset 0)."""

    def __init__(self, var: str, index: str, offset: int, size: cst.BaseExpression):
        source: cst.BaseExpression = cst.Name(index)
        if offset:
            modulus = size if is_atom(unparen(size)) else paren(size)
            source = paren(cst.BinaryOperation(paren(plus_constant(source, -offset)), cst.Modulo(), modulus))
        super().__init__({var: source})

    def leave_Index(self, original: cst.Index, updated: cst.Index) -> cst.Index:
        return updated.with_changes(value=unparen(updated.value))  # an index needs no parentheses


def _middle(
    index: str, start: cst.BaseExpression, stop: cst.BaseExpression, first: int | None, parallel: bool, out: Writer
) -> AbstractContextManager[None]:
    """The loop over the middle elements. From a constant first element it counts from 0, its
    indices `index + first`: LLVM vectorises numba's loop from 0 where one from 2 stays scalar
    (the gathered target may alias the adjoint it reads, and the run-time alias check it needs is
    formed only so; heat_swap's gather measured 6x faster)."""
    loop = "prange" if parallel else "range"
    if not first:
        return out.block(f"for {index} in {loop}({code(start)}, {code(stop)})", "every contribution exists here")
    count = code(plus_constant(stop, -first))
    return out.block(f"for {index} in {loop}(0, {count})", f"every contribution exists here: element {index} + {first}")


def _inside(context: tuple[For, ...], out: Writer) -> ExitStack:
    """The loops inside the gathered one that hold a group's contributions, as they were written."""
    stack = ExitStack()
    for inner in context:
        stack.enter_context(out.block(f"for {inner.var} in {inner.range_text(serial=True)}"))
    return stack


def _bound(node: cst.BaseExpression) -> str:
    """A loop bound as an operand of a comparison."""
    inner = unparen(node)
    return code(paren(node)) if isinstance(inner, (cst.IfExp, cst.BooleanOperation, cst.Comparison)) else code(node)
