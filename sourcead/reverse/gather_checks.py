"""Which adjoint lines of a reversed loop the gather (`gather.py`) may take: the contributions into
an adjoint array at the loop variable plus a constant on one axis (`contribution`), and whether a
gathered value, computed before the rest of the reversal runs, reads what the loop read there
(`sees_what_the_loop_saw`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import libcst as cst

from ..ir.emit import Line
from ..ir.exprs import children, code, names_in, subscript_indices, walk
from .gather_values import Entry, Source, is_name
from .offsets import offset_of


def contribution(
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
            periodic = is_name(ix, set(wrapped))
            offset = wrapped[ix.value] if periodic else offset_of(ix, var)  # type: ignore[attr-defined]
            if offset is None or found is not None:
                return None
            found = (axis, offset, periodic)
        elif names & temps:
            return None
    return found


def sees_what_the_loop_saw(
    source: Source, sequence: list[Entry], var: str, inlined: set[str], changing: set[str]
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
            if not any(not isinstance(ix, cst.Slice) and offset_of(ix, loop_var) is not None for ix in indices):
                return False  # the same element in several iterations: a later one would read the reset
        element = tuple(code(ix) for ix in indices)
        if not _reads_only(source.node, written, element):
            return False
    return True


def _own_elements(line: Line, entry: Entry, source: Source, array: str, var: str) -> bool:
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
        placed = [(axis, offset_of(ix, loop_var)) for axis, ix in enumerate(target) if not isinstance(ix, cst.Slice)]
        placed = [(axis, c) for axis, c in placed if c is not None]
        if len(placed) != 1:
            return False
        axis, offset = placed[0]
        for read in reads:
            indices = subscript_indices(read)
            if len(indices) != len(target) or isinstance(indices[axis], cst.Slice):
                return False
            if offset_of(indices[axis], loop_var) != offset:
                return False
    return True


def _is_named(node: cst.BaseExpression, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


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
