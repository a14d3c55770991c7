"""The plan's steps that decide how each loop is reversed, in the order the plan runs them:

- `checkpoints`: the time loops reversed from snapshots of their state instead of their records
  (`checkpoint.py`), and their snapshot buffers;
- `forward_reversals`: the serial loops whose reversed iterations run in the loop's own order;
- `gathers`: the loops whose contributions at constant offsets of the loop variable are gathered
  (`gather.py`), outer loops first;
- `chunk_rows`: the shared arrays each parallel adjoint's chunks scatter into (what a gather
  leaves), with the names of their rows;
- `promotions`: the elements a reversed loop sums into a local first (`promote.py`).

They read the adjoint lines, the records and recomputed prefixes (`records.py`), the recordings
(`keeping.py`) and the parallel plans of prange loops (`parallel.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import libcst as cst

from ..analysis.liveness import live_after_loops
from ..analysis.program import Program
from ..ir.core import Assign, For, Loop, Stmt, While, assigned_names, mentioned_outside, walk_statements
from ..ir.emit import Line
from ..ir.exprs import is_number, number_value
from .adjoint import StatementAdjoints
from .checkpoint import Checkpointed, plan_checkpoints
from .gather import Gather, plan_gather
from .parallel import ParallelLoop, plan_parallel
from .promote import Promoted, plan_promotions
from .recording import OnTape, Recording
from .records import Records

Lines = Mapping[Assign, Sequence[Line]]
_CHECKPOINT_KEYS = ("steps", "slots", "stores", "schedule", "next", "j", "do", "a", "b", "slot", "table", "once")


def checkpoints(
    prog: Program, recordings: Mapping[Stmt, Recording], memory: int | None
) -> tuple[dict[Loop, Checkpointed], dict[Loop, str], dict[Loop, dict[str, str]]]:
    """The checkpointed loops (those marked, or with a `memory` budget every top-level time loop,
    where it records something its adjoint needs), the loops kept with their records and why,
    and each checkpointed loop's snapshot buffer per variable of its state."""
    fn, fresh = prog.fn, prog.namer.fresh

    def worth_it(loop: Loop) -> bool:
        return bool(set(walk_statements(loop.body)) & set(recordings))

    checkpointed, not_checkpointed = plan_checkpoints(fn.body, fn.params, lambda v: prog.kinds[v], memory, worth_it)
    snapshots = {loop: {st.var: fresh(f"{st.var}_snaps") for st in ck.state} for loop, ck in checkpointed.items()}
    return checkpointed, not_checkpointed, snapshots


def forward_reversals(
    prog: Program,
    statements: list[Stmt],
    records: Records,
    recordings: Mapping[Stmt, Recording],
    prefixes: Mapping[For, tuple[Stmt, ...]],
) -> dict[For, tuple[int, int]]:
    """The serial `for` loops whose reversed iterations may run in the loop's own order (ascending
    loops vectorise better than descending ones, and numba keeps their bounds): after a prefix
    the loop recomputes, the body is element writes at the loop index and accumulations into
    scalars, race-free as a parallel adjoint would be (`plan_parallel`: no array both written and
    read, no scalar accumulated and read) with no other scalar of its own; so no iteration's
    adjoint reads what another's writes or restores, and each iteration's records (plain tape
    records of element writes only, one per recorded statement) lie at an offset computed from
    the loop index. A prefix name something after the loop reads (`carried_out`: `best = a[i // 2]`
    then `return best`) takes its adjoint from after the loop, which belongs to the last iteration
    alone: such a loop runs backwards (fuzz 92:100).
    The value: (records per iteration on the float tape, on the int tape)."""
    live_after = live_after_loops(prog)
    reads, parallel = records.reads, records.parallel

    def carried_out(loop: For) -> set[str]:
        """Names the loop's prefix assigns whose adjoint enters the loop from after it."""
        return (assigned_names(prefixes.get(loop, ())) - {loop.var}) & live_after.get(loop, set())

    found = {}
    for loop in statements:
        if not isinstance(loop, For) or loop in parallel or not is_number(loop.step):
            continue
        if number_value(loop.step) == 0 or carried_out(loop):
            continue
        prefix = prefixes.get(loop, ())
        rest = loop.body[len(prefix) :]
        if not rest or not all(isinstance(t, Assign) for t in rest):
            continue
        plan, _ = plan_parallel(loop, lambda a: reads.get(a, set()), index_anywhere=True)
        if plan is None or plan.private - {loop.var} - assigned_names(prefix):
            continue
        records_of = [recordings.get(t) for t in rest]
        # each record restores an element of its own iteration; a recorded scalar (an accumulation
        # into a name something later reads) must end at its value before the first iteration
        if any(
            r is not None and not (isinstance(r, OnTape) and isinstance(t, Assign) and t.writes_element)
            for t, r in zip(rest, records_of, strict=True)
        ):
            continue
        floats, ints = (sum(1 for r in records_of if isinstance(r, OnTape) and r.index == k) for k in (0, 1))
        found[loop] = (floats, ints)
    return found


def gathers(
    prog: Program,
    adjoints: StatementAdjoints,
    statements: list[Stmt],
    prefixes: Mapping[For, tuple[Stmt, ...]],
    sites: set[Assign],
    checkpointed: Mapping[Loop, Checkpointed],
    parallel: Mapping[For, ParallelLoop],
    returned: set[str],
) -> dict[For, Gather]:
    """The loops whose contributions at constant offsets of the loop variable are gathered
    (`gather.py`), outer loops first: a loop inside a gathered one is planned on the lines the
    outer gather leaves. The reversed iterations restore what they recorded and compute their
    prefixes again (a parallel adjoint's iterations replay their whole body): the gathered
    lines, which run before, must read none of these. Not a checkpointed loop: its steps are
    reversed one at a time, each with all its lines."""
    shadowed, kinds = prog.namer.shadowed, prog.kinds

    def is_adjoint(name: str) -> bool:
        return shadowed(name) is not None

    def is_array(name: str) -> bool:
        var = shadowed(name)
        return var is not None and kinds.is_array(var)

    lines: dict[Assign, list[Line]] = dict(adjoints.lines)
    found: dict[For, Gather] = {}
    for loop in statements:
        if not isinstance(loop, For) or loop in checkpointed or (loop.parallel and loop not in parallel):
            continue
        inside = list(walk_statements(loop.body))
        changing = {s.var for s in inside if isinstance(s, Assign) and s in sites}
        changing |= set().union(*(assigned_names(prefixes.get(t, ())) for t in (loop, *inside) if isinstance(t, For)))
        if loop in parallel:
            changing |= {s.var for s in inside if isinstance(s, Assign)}
        gather = plan_gather(
            loop,
            lines,
            is_adjoint,
            is_array,
            changing,
            assigned_names(loop.body),
            _private_adjoints(prog, loop, returned),
            sums=loop not in parallel,  # its iterations' shared sums go to the chunks' sums
            rings=loop in parallel,  # where a ring's gather replaces the chunks' rows
        )
        if gather is not None:
            found[loop] = gather
            lines.update({s: list(kept) for s, kept in gather.residual.items()})  # the same lines
    return found


def _private_adjoints(prog: Program, loop: For, returned: set[str]) -> set[str]:
    """The adjoints of the scalars only `loop`'s body mentions (not parameters, not returned):
    nothing outside the loop adds to them, so they are zero when its reversal starts."""
    outside = mentioned_outside(prog.fn.body, loop) | set(prog.fn.params) | returned
    found = set()
    for var in assigned_names(loop.body) - outside:
        kind = prog.kinds.of.get(var)
        bar = prog.namer.shadows.get((var, "_bar"))
        if bar is not None and kind is not None and not kind.is_array and not getattr(kind, "is_tuple", False):
            found.add(bar)
    return found


def chunk_rows(
    prog: Program, adjoints: StatementAdjoints, parallel: Mapping[For, ParallelLoop], gathers: Mapping[For, Gather]
) -> tuple[dict[For, tuple[str, ...]], dict[str, str], dict[str, str]]:
    """The shared arrays each parallel adjoint scatters into (in the lines a gather leaves to its
    iterations), and per such array the names of its rows (one per chunk) and of a chunk's row."""
    fresh = prog.namer.fresh
    left = {loop: {**adjoints.lines, **(gathers[loop].residual if loop in gathers else {})} for loop in parallel}
    found = {loop: _scattered_arrays(prog, left[loop], p) for loop, p in parallel.items()}
    scattered = sorted({a for arrays in found.values() for a in arrays})
    rows = {a: fresh(f"{prog.bar(a)}_rows") for a in scattered}
    views = {a: fresh(f"{prog.bar(a)}_mine") for a in scattered}  # this chunk's row
    return found, rows, views


def _scattered_arrays(prog: Program, lines: Lines, plan: ParallelLoop) -> tuple[str, ...]:
    """Shared arrays whose adjoint the loop accumulates at indices other than the loop index, or
    whole (`w_bar += g`: numba would make it a reduction of its own, summed in the threads' order
    and refused where the body reads `w_bar` for its shape), in `lines`: those a gather leaves to
    the loop's iterations."""
    found = set()
    for s in walk_statements(plan.loop.body):
        for line in lines.get(s, []) if isinstance(s, Assign) else []:
            target = line.target
            if isinstance(target, cst.Name) and line.op != "=":  # a whole shared array's adjoint
                array = prog.namer.shadowed(target.value)
                if array is not None and array not in plan.private and prog.kinds.is_array(array):
                    found.add(array)
            elif isinstance(target, cst.Subscript) and line.op != "=" and not plan.at_loop_index(target):
                assert isinstance(target.value, cst.Name)  # an adjoint array, by its name
                array = prog.namer.shadowed(target.value.value)
                assert array is not None
                if array not in plan.private:
                    found.add(array)
    return tuple(sorted(found))


def promotions(
    prog: Program,
    statements: list[Stmt],
    adjoints: StatementAdjoints,
    gathers: Mapping[For, Gather],
    parallel: Mapping[For, ParallelLoop],
    checkpointed: Mapping[Loop, Checkpointed],
    in_parallel: frozenset[Stmt],
) -> tuple[dict[For, tuple[Promoted, ...]], dict[Assign, dict[str, str]]]:
    """The elements each reversed loop sums into a local first, and per assignment its lines'
    targets that go to that local; not in a loop whose lines another strategy sends elsewhere
    (a parallel adjoint, a gather of elements, a checkpointed loop)."""

    def not_promoted(loop: For) -> bool:  # its lines go where another strategy sends them
        inside = [loop, *walk_statements(loop.body)]
        # sums alone take no element's lines
        gathered = any(isinstance(t, For) and t in gathers and gathers[t].groups for t in inside)
        return loop in in_parallel or gathered or any(t in parallel or t in checkpointed for t in inside)

    loops = (s for s in statements if isinstance(s, For))
    return plan_promotions(loops, adjoints.lines, not_promoted, prog.element_is_float, prog.namer.fresh)


def iteration_locals(
    prog: Program, parallel: Mapping[For, ParallelLoop], returned: set[str]
) -> dict[For, frozenset[str]]:
    """The variables of a parallel adjoint's iterations that nothing outside the loop mentions."""
    return {
        loop: frozenset(set(p.private) - mentioned_outside(prog.fn.body, loop) - returned - {loop.var})
        for loop, p in parallel.items()
    }


def in_parallel(parallel: Mapping[For, ParallelLoop]) -> frozenset[Stmt]:
    """The statements inside the loops with a parallel adjoint."""
    return frozenset(s for loop in parallel for s in walk_statements(loop.body))


def inner_loops(statements: list[Stmt]) -> frozenset[Stmt]:
    """The `for` loops inside another loop."""
    return frozenset(
        t for s in statements if isinstance(s, (For, While)) for t in walk_statements(s.body) if isinstance(t, For)
    )


def checkpoint_names(fresh: Callable[[str], str], loops: Iterable[Loop]) -> dict[Loop, dict[str, str]]:
    """Per checkpointed loop, the variables of its code (`emit/checkpoint.py`): `ck_steps`, ..."""
    return {loop: {key: fresh(f"ck_{key}") for key in _CHECKPOINT_KEYS} for loop in loops}
