"""The plan's steps `control` and `recordings`: the records of control flow (the `if`s whose branch
and the loops whose trip count the reversal needs), then how each record is kept, a `Recording`
(`recording.py`) per statement: in a register, in a parallel iteration's slot, or on a tape.

They read the records (`records.py`: the assignments that record their old value, the parallel
loops and their slots) and whether the reversal of a block has work (`StatementAdjoints.has_work`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet

from ..analysis.program import Program
from ..ir.core import Assign, For, If, Stmt, While, has_break, walk_statements
from .adjoint import StatementAdjoints
from .elements import fixed_names
from .recording import ArrayInRegister, ArrayOnTape, InRegister, InSlot, OnTape, Recording, ShapeOnTape, Undone
from .records import records_array, undone_by_inverse


def control_records(
    statements: list[Stmt], adjoints: StatementAdjoints, sites: set[Assign], fresh: Callable[[str], str]
) -> tuple[frozenset[If], dict[Stmt, str]]:
    """The `if`s whose taken branch is recorded (a branch whose reversal has work), and the loops
    whose trip count is recorded (a `while`, or a `for` with a `break`, whose body's reversal
    has work), each with the counter it counts in."""

    def work(body: tuple[Stmt, ...]) -> bool:
        return adjoints.has_work(body, sites)

    decisions = frozenset(s for s in statements if isinstance(s, If) and (work(s.body) or work(s.orelse)))
    counters: dict[Stmt, str] = {
        s: fresh("trips")
        for s in statements
        if isinstance(s, (For, While)) and (isinstance(s, While) or has_break(s)) and work(s.body)
    }
    return decisions, counters


def recordings_of(
    prog: Program,
    parallel: Iterable[For],
    sites: set[Assign],
    slots: Mapping[Assign, For],
    decisions: AbstractSet[If],
    counters: dict[Stmt, str],
    tape: str,
    slot: str,
    reshaped: AbstractSet[Assign] = frozenset(),
    undone: AbstractSet[Assign] = frozenset(),
) -> dict[Stmt, Recording]:
    """How each record is kept: in a register where a replayed parallel iteration makes it once,
    in the iteration's slot for the elements a parallel loop overwrites, by the inverse for the
    integer increments the records step chose (`undone`), else on a tape."""
    once = {s for loop in parallel for s in _once_per_iteration(loop.body)}
    fixed = fixed_names(prog.fn.body, prog.fn.params)
    found: dict[Stmt, Recording] = {}
    for s in walk_statements(prog.fn.body):
        if s in slots:
            found[s] = InSlot(tape, slot)
        elif isinstance(s, Assign) and s in sites:
            registered = s in once
            if records_array(prog, s):
                t = prog.kinds.type_of(s.target)
                found[s] = (
                    ArrayInRegister(prog.namer.fresh(f"{s.var}_old"))
                    if registered
                    else ArrayOnTape(_tape_index(prog, s), t.ndim, t.dtype, not s.writes_element)
                )
            elif registered:
                found[s] = InRegister(prog.namer.fresh(f"{s.var}_old"))
            else:
                inverse = undone_by_inverse(prog, s, fixed) if s in undone else None
                found[s] = Undone(inverse) if inverse is not None else OnTape(_tape_index(prog, s))
        elif isinstance(s, Assign) and s in reshaped:
            found[s] = ShapeOnTape(prog.kinds.type_of(s.target).ndim)
        elif s in decisions:
            found[s] = InRegister(prog.namer.fresh("branch")) if s in once else OnTape(1)
        elif s in counters:
            found[s] = InRegister(counters[s]) if s in once else OnTape(1)  # the counter survives the replay
    return found


def _tape_index(prog: Program, s: Assign) -> int:
    """0: the float tape; 1: the int tape (ints and bools, also elements of integer and bool arrays)."""
    return 1 if prog.kinds[s.var].dtype in ("int", "bool") else 0


def _once_per_iteration(body: tuple[Stmt, ...]) -> Iterator[Stmt]:
    """Statements of a loop body that run at most once per iteration (not inside an inner loop)."""
    for s in body:
        if isinstance(s, (For, While)):
            yield s  # the loop itself runs once; its body does not
        elif isinstance(s, If):
            yield s
            yield from _once_per_iteration(s.body)
            yield from _once_per_iteration(s.orelse)
        else:
            yield s
