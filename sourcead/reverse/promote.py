"""Accumulations that every iteration of a reversed loop makes into one element, summed in a
local variable and added to the element once, after the loop.

In the pair loop of an n-body step the adjoint of `dx = p[j, 0] - p[i, 0]` ends in
`p_bar[i, 0] -= dx_bar`: every iteration of the loop over j adds into the same element. Through
memory, each iteration waits for the previous one's store (p_bar[j, 0] may be that element when
j == i, so the compiler cannot keep it in a register). Summed in a register instead:

    p_bar_i_0 = 0.0                               # before the reversed loop
    for j in ...:
        ...
        p_bar_i_0 -= dx_bar                      # was: p_bar[i, 0] -= dx_bar
    if p_bar_i_0 != 0.0:
        p_bar[i, 0] += p_bar_i_0                 # after it

That sums the same contributions in another order: equal up to rounding, and the same bits
whatever the thread count. It is exact in what it leaves everywhere else only if nothing in the
loop reads the array's adjoint (it would miss what the local holds) or resets an element of it
(the promoted one, maybe: the add after the loop would bring back what it cleared): every line of the
loop's reversal that mentions the array must be an accumulation (`+=`, `-=`) into it. The
element's indices must not change during the loop (no name of them is assigned in the loop,
its inner loops' counters included), and the line must sit in the loop itself (inside an `if`
of it too), not in an inner loop, which promotes its own. The add after the loop is skipped
where nothing was summed, so an empty loop indexes nothing (its indices may be out of range
then); a sum that is exactly 0.0 adds nothing either way.

Loops of a parallel adjoint (their lines go to per-chunk rows), checkpointed loops, gathered
loops and loops with a swap in them are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import libcst as cst

from ..ir.core import Assign, For, If, Permute, Stmt, assigned_names, walk_statements
from ..ir.emit import Line
from ..ir.exprs import code, names_in, subscript_indices


@dataclass(frozen=True)
class Promoted:
    """One element a loop accumulates into, and the local variable that sums it."""

    target: cst.Subscript  # the element, as the adjoint lines write it
    local: str


def plan_promotions(
    loops: Iterable[For],
    lines: Mapping[Assign, list[Line]],
    excluded: Callable[[For], bool],
    is_float: Callable[[cst.BaseExpression], bool],
    fresh: Callable[[str], str],
) -> tuple[dict[For, tuple[Promoted, ...]], dict[Assign, dict[str, str]]]:
    """Per loop, the elements summed locally; per assignment, its lines' targets (as code) that
    go to a local variable instead. `is_float`: is this element a float (not a row, not a slice)?"""
    promoted: dict[For, tuple[Promoted, ...]] = {}
    renamed: dict[Assign, dict[str, str]] = {}
    for loop in loops:
        if excluded(loop) or any(isinstance(s, Permute) for s in walk_statements(loop.body)):
            continue
        found = [(s, target) for s, target in _promotable(loop, lines) if is_float(target)]
        if not found:
            continue
        locals_: dict[str, Promoted] = {}
        for s, target in found:
            key = code(target)
            if key not in locals_:
                locals_[key] = Promoted(target, fresh(_local_name(target)))
            renamed.setdefault(s, {})[key] = locals_[key].local
        promoted[loop] = tuple(locals_.values())
    return promoted, renamed


def _promotable(loop: For, lines: Mapping[Assign, list[Line]]) -> list[tuple[Assign, cst.Subscript]]:
    """The accumulations directly in `loop` (or in its `if`s) into an element it does not move."""
    inside = list(walk_statements(loop.body))
    changing = assigned_names(loop.body) | {loop.var}  # inner loop counters included
    all_lines = [line for s in inside if isinstance(s, Assign) for line in lines.get(s, [])]
    candidates = [
        (s, line.target)
        for s in _own_statements(loop.body)
        for line in lines.get(s, [])
        if line.op in ("+=", "-=")
        and isinstance(line.target, cst.Subscript)
        and isinstance(line.target.value, cst.Name)
        and not set().union(*(names_in(ix) for ix in subscript_indices(line.target))) & changing
    ]
    return [(s, target) for s, target in candidates if _only_accumulated(target.value.value, all_lines)]  # type: ignore[attr-defined]


def _own_statements(body: tuple[Stmt, ...]) -> Iterable[Assign]:
    """The assignments of `body` and of its `if`s, not of its inner loops."""
    for s in body:
        if isinstance(s, Assign):
            yield s
        elif isinstance(s, If):
            yield from _own_statements(s.body)
            yield from _own_statements(s.orelse)


def _only_accumulated(array: str, lines: list[Line]) -> bool:
    """Does every line that mentions `array` only add into it (never read it, never reset it)?"""
    for line in lines:
        target = line.target
        base = target.value if isinstance(target, cst.Subscript) else target
        indices = subscript_indices(target) if isinstance(target, cst.Subscript) else ()
        if array in names_in(line.value) or any(array in names_in(ix) for ix in indices):
            return False
        if isinstance(base, cst.Name) and base.value == array and line.op not in ("+=", "-="):
            return False
    return True


def _local_name(target: cst.Subscript) -> str:
    """`p_bar[i, 0]` -> `p_bar_i_0`, `u_bar[n - 1]` -> `u_bar_nm1`: the element's local sum."""
    parts = [target.value.value]  # type: ignore[attr-defined]
    for ix in subscript_indices(target):
        text = code(ix).replace(" - ", "m").replace(" + ", "p")
        parts.append(re.sub(r"[^0-9A-Za-z_]+", "_", text).strip("_"))
    return "_".join(parts)
