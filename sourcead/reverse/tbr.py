"""To-be-recorded analysis (in the spirit of Tapenade's TBR): which overwrites must be taped.

The reverse sweep runs each statement's adjoint in the state just after that statement, with
every later statement undone. A statement that overwrites a variable whose old value the reverse
sweep still reads (the adjoint of an earlier statement, or its own adjoint) records the old
value on the tape first, and the reverse sweep restores it at the mirror point. A variable is
*needed* from the point where an adjoint reads it until it is overwritten. This is a forward
data-flow problem over the statements: branches join by union, loops iterate to a fixed point.
Loop variables are never recorded (the reversed loop recomputes them), nor are branch
decisions' operands (the decision itself is recorded). Arrays are tracked as a whole: once any
element is needed, each element overwrite is recorded. `a, b = b, a` permutes the needed set.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet

from ..ir.core import Assign, For, If, Permute, Stmt, While
from ..ir.exprs import names_in, subscript_indices


def to_be_recorded(
    body: tuple[Stmt, ...],
    reads: Mapping[Assign, set[str]],
    primal: AbstractSet[str],
    opaque: Mapping[For, tuple[frozenset[str], frozenset[str]]] | None = None,
    at_entry: dict[Stmt, set[str]] | None = None,
    after: Mapping[Assign, set[str]] | None = None,
) -> tuple[set[Assign], dict[For, set[str]]]:
    """The assignments that must record the value they overwrite.

    `reads[s]` are the primal variables the adjoint of `s` reads (in the state before `s`);
    `after[s]` those the reverse sweep reads at `s` before restoring its record (in the state
    just after `s`: the element an adjoint takes its value from, `held.py`).
    `opaque` loops (parallel adjoints, which record on their own tapes) are seen as a whole:
    (what they read, what they write). An opaque loop that writes a needed variable is returned
    as a conflict, with the needed variables it writes. `at_entry`, if given, receives the
    variables needed at the entry of each loop (its own iterations' included).
    """
    sites: set[Assign] = set()
    conflicts: dict[For, set[str]] = {}
    _block(
        body, set(), reads, primal, sites, opaque or {}, conflicts, {} if at_entry is None else at_entry, after or {}
    )
    return sites, conflicts


def record_in_iteration(
    body: tuple[Stmt, ...],
    reads: Mapping[Assign, set[str]],
    primal: AbstractSet[str],
    at_entry: dict[Stmt, set[str]] | None = None,
) -> set[Assign]:
    """The records one iteration needs when it replays its own body, then reverses it."""
    sites: set[Assign] = set()
    _block(body, set(), reads, primal, sites, {}, {}, {} if at_entry is None else at_entry)
    return sites


def _block(
    body, needed: set[str], reads, primal: AbstractSet[str], sites: set[Assign], opaque, conflicts, at_entry, after=None
) -> set[str]:
    after = after or {}
    for stmt in body:
        if stmt in opaque:
            loop_reads, loop_writes = opaque[stmt]
            if loop_writes & needed:
                conflicts.setdefault(stmt, set()).update(loop_writes & needed)
            needed = needed | loop_reads
        elif isinstance(stmt, For):
            header = set().union(*(names_in(b) for b in (stmt.start, stmt.stop, stmt.step))) & primal
            entry = (needed | header) - {stmt.var}
            needed = _loop(stmt, entry, {stmt.var}, reads, primal, sites, opaque, conflicts, at_entry, after)
        elif isinstance(stmt, While):
            needed = _loop(stmt, needed, set(), reads, primal, sites, opaque, conflicts, at_entry, after)
        elif isinstance(stmt, If):
            then = _block(stmt.body, needed, reads, primal, sites, opaque, conflicts, at_entry, after)
            needed = then | _block(stmt.orelse, needed, reads, primal, sites, opaque, conflicts, at_entry, after)
        elif isinstance(stmt, Permute):
            moved = dict(zip(stmt.targets, stmt.sources, strict=True))
            needed = {n for n in needed if n not in moved} | {t for t, s in moved.items() if s in needed}
        elif isinstance(stmt, Assign):
            needed = _assign(stmt, needed, reads.get(stmt, set()), primal, sites) | after.get(stmt, set())
    return needed


def _assign(stmt: Assign, needed: set[str], read: set[str], primal: AbstractSet[str], sites: set[Assign]) -> set[str]:
    if stmt.var in needed or stmt.var in read:
        sites.add(stmt)
        if stmt.writes_element:  # the restore reads the indices
            read = read | _index_names(stmt) & primal
    needed = needed | read
    return needed if stmt.writes_element else needed - {stmt.var}


def _loop(
    loop, entry: set[str], recomputed: set[str], reads, primal, sites, opaque, conflicts, at_entry, after
) -> set[str]:
    while True:
        at_entry.setdefault(loop, set()).update(entry)
        exit_ = _block(loop.body, entry, reads, primal, sites, opaque, conflicts, at_entry, after)
        widened = entry | (exit_ - recomputed)
        if widened == entry:  # a loop variable is never read after its loop (the fence sees to it)
            return (entry | exit_) - recomputed
        entry = widened


def _index_names(stmt: Assign) -> set[str]:
    return set().union(*(names_in(i) for i in subscript_indices(stmt.target)))  # type: ignore[arg-type]
