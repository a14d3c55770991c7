"""The reverse plan: what the reverse mode records, where, and how, decided before any code is written.

`plan_reverse` runs the analyses the two sweeps consult, one step after another, and freezes their
results in a `ReversePlan`. The steps, in order (each a function with a docstring saying what it
decides and what it reads):

1. `adjoints`: each assignment's adjoint lines (`adjoint.py`) and the primal names they read;
2. `records` (`records.py`): which prange loops get a parallel adjoint (`parallel.py`), iterated
   with the to-be-recorded analysis (`tbr.py`) until no parallel loop overwrites a value an
   earlier adjoint still needs; the element writes whose old value no later-reversed read can see
   (`elements.py`) drop their records; the loop-body prefixes computed again instead of recorded
   (`recompute.py`), each taken where it saves records; the element writes whose adjoint reads the
   value from the element (`held_elements`) and the integer increments undone by their inverse
   (`undone_increments`), each taken where the analyses, seeing those reads, keep no worse records;
3. `control` (`keeping.py`): the `if`s whose branch and the loops whose trip count the reversal needs;
4. `recordings` (`keeping.py`): how each record is kept, a `Recording` (`recording.py`) per statement;
   an array bound again whose old value is not recorded records its old shape (`reshaped`), and
   one the reverse sweep reads only for its shape is restored as an empty array of it (`shape_only`);
5. `checkpoints` (`reversals.py`): the time loops checkpointed instead (`checkpoint.py`), and their
   snapshot buffers;
6. `forward_reversals` (`reversals.py`): the loops whose reversal runs in the loop's own order;
7. `gathers` (`reversals.py`): the loops whose contributions at constant offsets of the loop variable
   are gathered (`gather.py`);
8. `chunk_rows` (`reversals.py`): the rows a parallel adjoint's chunks scatter into (what a gather
   leaves); with them the sets the sweeps ask about (the statements inside parallel loops, their
   iterations' own variables, the loops inside loops: `reversals.py`);
9. `promotions` (`reversals.py`): the elements a reversed loop sums into a local first (`promote.py`);
10. `held` (`held.py`): the values an adjoint reads from the variable its statement assigned;
11. `reservations` (`reservations.py`): the reservations of the main tapes before top-level
    statements (`counts.py` algebra), counted with the plan itself.

The plan also answers the counting questions of the sweeps (`bound`: records a region can make,
computable at its entry), so that both sweeps reserve the same room the records then fill.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

import libcst as cst

from ..analysis.program import Program
from ..ir.core import (
    Assign,
    For,
    If,
    Loop,
    Permute,
    Stmt,
    While,
    assigned_names,
    walk_statements,
    written,
)
from ..ir.counts import Count, maximum
from ..ir.exprs import code, names_in, number_value, paren
from . import reversals
from .adjoint import StatementAdjoints
from .checkpoint import Checkpointed
from .gather import Gather
from .held import held_values
from .keeping import control_records, recordings_of
from .parallel import ParallelLoop
from .promote import Promoted
from .recording import InSlot, Recording, Tapes
from .records import plan_records, resets_adjoint, shape_only_arrays, slot_count
from .reservations import Reservation, reservations


@dataclass(frozen=True)
class ReversePlan:
    prog: Program
    adjoints: StatementAdjoints
    primal: frozenset[str]
    parallel: Mapping[For, ParallelLoop]  # prange loops with a parallel adjoint
    serial_reason: Mapping[For, str]  # prange loops with a serial one, and why
    slot_arrays: Mapping[For, frozenset[str]]  # arrays a parallel loop records in its iterations' slots
    sites: frozenset[Assign]  # the assignments whose old values are recorded
    reshaped: frozenset[Assign]  # whole arrays bound again, not in sites: their old shape is recorded
    shape_only: frozenset[str]  # arrays the reverse sweep reads only for their shape: restored as np.empty
    in_parallel: frozenset[Stmt]  # the statements inside parallel loops
    chunk_rows: Mapping[For, tuple[str, ...]]  # the shared arrays a parallel adjoint scatters into
    iteration_locals: Mapping[For, frozenset[str]]  # a parallel loop's variables nothing outside mentions
    prefixes: Mapping[For, tuple[Stmt, ...]]  # loop-body prefixes recomputed in the reverse sweep
    decisions: frozenset[If]  # the `if`s whose taken branch is recorded
    counters: Mapping[Stmt, str]  # loops whose trip count is recorded, and their counters
    recordings: Mapping[Stmt, Recording]  # how each record is kept
    checkpointed: Mapping[Loop, Checkpointed]
    not_checkpointed: Mapping[Loop, str]  # loops kept with their records, and why
    snapshots: Mapping[Loop, Mapping[str, str]]  # a checkpointed loop's state -> its snapshot buffer
    checkpoint_names: Mapping[Loop, Mapping[str, str]]  # the variables of a checkpointed loop's code
    memory: int | None  # the snapshot budget in bytes (None: only marked loops)
    main_tapes: Tapes
    local_tapes: Tapes  # a parallel iteration's own
    slot: str  # the position in an iteration's slot of the main tape
    chunk: str  # the chunk index of a parallel adjoint
    rows: Mapping[str, str]  # scattered array -> its per-chunk rows of adjoints
    views: Mapping[str, str]  # scattered array -> this chunk's row
    inner_loops: frozenset[Stmt]  # the loops inside another loop
    forward_reversals: Mapping[
        For, tuple[int, int]
    ]  # loops reversed in their own order: records per iteration per tape
    gathers: Mapping[For, Gather]  # loops whose contributions at constant offsets are gathered
    held: Mapping[Assign, str]  # `x = e`, `x[i] = e` whose adjoint reads e's value from x: the temporary it sets
    promoted: Mapping[For, tuple[Promoted, ...]]  # elements a reversed loop sums into a local first
    accumulators: Mapping[Assign, Mapping[str, str]]  # its lines' targets (as code) -> that local
    reservations: Mapping[Stmt, tuple[Reservation, Reservation]]  # per main tape
    first_allocation: tuple[Count, Count]  # the straight-line records before any reservation

    # --- questions the sweeps ask ------------------------------------------------------------

    def has_work(self, body: tuple[Stmt, ...]) -> bool:
        return self.adjoints.has_work(body, set(self.sites))

    def has_records(self, body: tuple[Stmt, ...]) -> bool:
        inside = set(walk_statements(body))
        return bool(inside & set(self.recordings))

    def records_on(self, body: tuple[Stmt, ...], index: int) -> bool:
        """Does `body` write to tape `index` (registers and slots are not tapes)?"""
        return any(self.recordings[s].uses(index) for s in walk_statements(body) if s in self.recordings)

    def in_slots(self, s: Stmt) -> bool:
        return isinstance(self.recordings.get(s), InSlot)

    def slot_records(self, loop: For) -> Count:
        """The records a parallel loop makes in its iterations' slots, all iterations together."""
        return Count.trips(loop) * slot_count(self.prog, loop, self.slot_arrays[loop])  # type: ignore[operator]

    def slot_offset(self, loop: For, plus_one: bool) -> str:
        """`top` + this iteration's position times its records: the start (or end) of its slot."""
        k = int(number_value(loop.step))
        position = loop.var if code(loop.start) == "0" else f"{loop.var} - {code(paren(loop.start))}"
        if k != 1:
            position = f"({position}) // {k}"
        if plus_one:
            position = f"{position} + 1" if k == 1 and code(loop.start) == "0" else f"({position}) + 1"
        count = slot_count(self.prog, loop, self.slot_arrays[loop]).render(atom=True)  # type: ignore[union-attr]
        top = self.main_tapes[0][1]
        return f"{top} + ({position}) * {count}" if count != "1" else f"{top} + {position}"

    def bound(self, body: tuple[Stmt, ...], tape: int, inside: set[str]) -> Count | None:
        """An upper bound of the records `body` makes on tape 0 (floats) or 1 (ints), computable
        before it runs (from names not in `inside`), or None."""
        total = Count()
        for s in body:
            term = self.bound_stmt(s, tape, inside)
            if term is None:
                return None
            total = total + term
        return total

    def bound_stmt(self, s: Stmt, tape: int, inside: set[str]) -> Count | None:
        if s in self.checkpointed:
            return Count()  # its steps record in the reverse sweep, one step at a time
        if isinstance(s, For) and s in self.parallel:
            if tape != 0 or not self.slot_arrays.get(s):
                return Count()  # its iterations record on their own tapes
            if any(names_in(b) & inside for b in (s.start, s.stop, s.step)):
                return None
            return self.slot_records(s)
        recording = self.recordings.get(s)
        own = recording.counts(tape) if recording is not None else Count()
        if isinstance(s, Assign):
            return own
        if isinstance(s, If):
            then, orelse = self.bound(s.body, tape, inside), self.bound(s.orelse, tape, inside)
            if then is None or orelse is None:
                return None
            return own + maximum(then, orelse)  # type: ignore[operator]
        if isinstance(s, While):
            body = self.bound(s.body, tape, inside)
            return own if body is not None and body.is_zero else None
        if isinstance(s, For):
            body = self.bound(s.body, tape, inside)
            if body is None or body.is_zero:
                return own if body is not None else None
            if any(names_in(b) & inside for b in (s.start, s.stop, s.step)):
                return None
            return own + Count.trips(s) * body  # type: ignore[operator]
        return Count()

    def zero_guard(self, loop: For) -> tuple[str, ...]:
        """The scalar adjoints the reversal of `loop` reads or resets, where they are all it reads
        (`_adjoint_scalars`) and it restores nothing. Adjoint lines are linear in the adjoints they
        read, so where all of these are zero the reversed loop would only add zeros (and no 0 * inf
        of a dead value) and leave them zero: the sweep skips it then (k-means: only the nearest
        centroid's distance has a nonzero adjoint). Only for a loop inside another, where a skip can
        repeat; empty where there is no such guard."""
        if loop not in self.inner_loops or self.has_records(loop.body):
            return ()
        return tuple(sorted(self._adjoint_scalars(loop.body) or ()))

    def early_exit(self, loop: For) -> tuple[tuple[str, ...], tuple[Count, Count]] | None:
        """Where a backward reversal of `loop` may stop once the scalar adjoints its body reads or
        resets are all zero (`_adjoint_scalars`): the iterations still to reverse would only add
        zeros and leave them zero (the argmin of k-means, the running maximum of gmm: once the
        adjoint has reached the iteration that took the branch last, the earlier ones have
        nothing to do). Only where a recorded branch of its own (not of a loop inside) overwrites
        a scalar (its adjoint reset):
        elsewhere nothing makes the adjoints zero midway, and a loop that may exit does not
        vectorise. Their only other effect is popping their records, so these must be
        records of control alone (branches taken, trip counts: nothing restores a value), and as
        many in every iteration, computable at the exit (no branch holds a record, no loop that
        may break records in its body, no inner bound changes in the loop): the guard, and the
        records of one iteration per tape, to pop for each iteration skipped. None elsewhere."""
        if loop in self.forward_reversals or loop in self.gathers or loop in self.promoted:
            return None
        inside = assigned_names(loop.body) | {loop.var}
        if names_in(loop.start) & inside or names_in(loop.step) & inside:
            return None
        body = list(walk_statements(loop.body))
        for s in body:
            if s in self.recordings and not (isinstance(s, If) or s in self.counters):
                return None  # it restores a value
            held: tuple[Stmt, ...] = ()
            if isinstance(s, If):
                held = s.body + s.orelse
            elif isinstance(s, (For, While)) and s in self.counters:
                held = s.body
            if held and self.has_records(held):
                return None  # records as many as its branch or its trip count says
        own_branches = [s for s in _outside_loops(loop.body) if isinstance(s, If) and s in self.decisions]
        if not any(self._resets(s.body + s.orelse) for s in own_branches):
            return None  # no branch of its own resets an adjoint midway: it stays nonzero (and the check costs)
        guard = self._adjoint_scalars(loop.body)
        counts = tuple(self.bound(loop.body, tape, inside) for tape in (0, 1))
        if not guard or counts[0] is None or counts[1] is None:
            return None
        return tuple(sorted(guard)), counts  # type: ignore[return-value]

    def _resets(self, body: tuple[Stmt, ...]) -> bool:
        """Does the reversal of `body` reset a scalar adjoint (the adjoint of an overwrite)?"""
        return any(
            line.op == "=" and isinstance(line.target, cst.Name) and self.prog.namer.shadowed(line.target.value)
            for s in walk_statements(body)
            if isinstance(s, Assign)
            for line in self.adjoints.lines.get(s, [])
        )

    def _adjoint_scalars(self, body: tuple[Stmt, ...]) -> set[str] | None:
        """The scalar adjoints the reversal of `body` reads or resets, where those are all the
        adjoints it reads: no array adjoint read or element reset, no un-permuting, no parallel or
        checkpointed loop inside. None elsewhere."""
        statements = list(walk_statements(body))
        if any(isinstance(s, Permute) or s in self.parallel or s in self.checkpointed for s in statements):
            return None
        shadowed, kinds = self.prog.namer.shadowed, self.prog.kinds
        guard: set[str] = set()
        for s in statements:
            for line in self.adjoints.lines.get(s, []) if isinstance(s, Assign) else []:
                for name in names_in(line.value):
                    var = shadowed(name)
                    if var is not None and kinds.is_array(var):
                        return None  # an array adjoint's values: not known to be zero
                    if var is not None:
                        guard.add(name)
                if line.op == "=" and isinstance(line.target, cst.Subscript):
                    return None  # an element of an adjoint reset: skipping would keep its value
                target = line.target
                if line.op == "=" and isinstance(target, cst.Name) and (reset := shadowed(target.value)) is not None:
                    if kinds.is_array(reset):
                        return None
                    guard.add(target.value)
        return guard

    def iteration_tapes(self, loop: For) -> list[tuple[str, str, str, Count | None, bool]]:
        """The local tapes of a parallel adjoint's iterations: (tape, top, dtype, size or None if
        it grows, whether one allocation per chunk serves all its iterations: the size does not
        depend on the iteration)."""
        inside = assigned_names(loop.body) | {loop.var}
        found = []
        for index, ((tape, top), dtype) in enumerate(zip(self.local_tapes, ("", ", np.int64"), strict=True)):
            if self.records_on(loop.body, index):
                size = self.bound(loop.body, index, assigned_names(loop.body))
                names = size.names() if size is not None else set()
                found.append((tape, top, dtype, size, not names & inside))
        return found

    def read_again(self, body: tuple[Stmt, ...]) -> set[str]:
        """Names the reverse sweep reads in `body` beyond the adjoint lines: the bounds of the
        reversed loops, and what the recomputed prefixes read from outside themselves (a name
        assigned only in a branch numba prunes needs a typed placeholder for these reads too)."""
        found: set[str] = set()
        for loop in walk_statements(body):
            if isinstance(loop, For):
                found |= set().union(*(names_in(b) for b in (loop.start, loop.stop, loop.step)))
                prefix = self.prefixes.get(loop, ())
                parts = [t.value if isinstance(t, Assign) else t.test for t in walk_statements(prefix)]  # type: ignore[union-attr]
                found |= set().union(*(names_in(e) for e in parts)) - assigned_names(prefix)
        return found

    def recomputed_names(self) -> set[str]:
        """The variables of recomputed prefixes: each reversed iteration assigns them before its
        adjoints read them (and nothing outside the loop mentions them)."""
        return set().union(*(assigned_names(prefix) for prefix in self.prefixes.values()))

    def undefined_at_first_record(self) -> set[str]:
        """Scalars recorded inside a compound statement before any top-level assignment defines them."""
        defined = set(self.prog.fn.params)
        missing: set[str] = set()
        sites = (self.sites | self.reshaped) - self.in_parallel
        for s in self.prog.fn.body:
            if isinstance(s, (For, While, If)):
                inside = set(walk_statements((s,)))
                missing |= {t.var for t in sites if t in inside and not t.writes_element} - defined
            defined |= written(s)
        return missing

    def permutes(self) -> list[Permute]:
        return [s for s in walk_statements(self.prog.fn.body) if isinstance(s, Permute)]


def plan_reverse(prog: Program, memory: int | None = None) -> ReversePlan:
    """The plan's steps in order (the module's docstring lists them); the fresh names are taken in
    this order too, so that the generated code's names stay the same."""
    fn, fresh = prog.fn, prog.namer.fresh
    adjoints = StatementAdjoints(prog)  # 1
    primal = frozenset(set(fn.params) | assigned_names(fn.body))
    statements = list(walk_statements(fn.body))
    returned = {v.value for v in fn.ret.values if isinstance(v, cst.Name)}
    prefixes, records, sites = plan_records(prog, statements, adjoints, primal, returned)  # 2
    parallel = records.parallel
    main_tapes = ((fresh("tape"), fresh("top")), (fresh("itape"), fresh("itop")))
    slot, chunk = fresh("slot"), fresh("chunk")
    decisions, counters = control_records(statements, adjoints, sites, fresh)  # 3
    recomputed = frozenset(t for prefix in prefixes.values() for t in walk_statements(prefix))
    reshaped = _reshaped(prog, adjoints, sites | recomputed, reversals.in_parallel(parallel))  # type: ignore[operator]
    recordings = recordings_of(
        prog, parallel, sites, records.slots, decisions, counters, main_tapes[0][0], slot, reshaped, records.undone
    )  # 4
    checkpointed, not_checkpointed, snapshots = reversals.checkpoints(prog, recordings, memory)  # 5
    forward_reversals = reversals.forward_reversals(prog, statements, records, recordings, prefixes)  # 6
    gathers = reversals.gathers(prog, adjoints, statements, prefixes, sites, checkpointed, parallel, returned)  # 7
    chunk_rows, rows, views = reversals.chunk_rows(prog, adjoints, parallel, gathers)  # 8
    checkpoint_names = reversals.checkpoint_names(fresh, checkpointed)
    local_tapes = ((fresh("ltape"), fresh("ltop")), (fresh("litape"), fresh("litop")))
    in_parallel = reversals.in_parallel(parallel)
    promoted, accumulators = reversals.promotions(  # 9
        prog, statements, adjoints, gathers, parallel, checkpointed, in_parallel
    )
    plan = ReversePlan(
        prog=prog,
        adjoints=adjoints,
        primal=primal,
        parallel=parallel,
        serial_reason=records.serial_reason,
        slot_arrays={loop: frozenset(names) for loop, names in records.slot_arrays.items()},
        sites=frozenset(sites),
        reshaped=reshaped,
        shape_only=shape_only_arrays(prog, adjoints),
        in_parallel=in_parallel,
        chunk_rows=chunk_rows,
        iteration_locals=reversals.iteration_locals(prog, parallel, returned),
        prefixes=prefixes,
        decisions=decisions,
        counters=counters,
        recordings=recordings,
        checkpointed=checkpointed,
        not_checkpointed=not_checkpointed,
        snapshots=snapshots,
        checkpoint_names=checkpoint_names,
        memory=memory,
        main_tapes=main_tapes,
        local_tapes=local_tapes,
        slot=slot,
        chunk=chunk,
        rows=rows,
        views=views,
        inner_loops=reversals.inner_loops(statements),
        forward_reversals=forward_reversals,
        gathers=gathers,
        held=held_values(fn.body, adjoints, records.held),  # 10
        promoted=promoted,
        accumulators=accumulators,
        reservations={},
        first_allocation=(Count(), Count()),
    )
    first, reserved = reservations(plan.bound_stmt, fn.body)  # 11
    return replace(plan, reservations=reserved, first_allocation=first)  # they count with the plan


def _reshaped(
    prog: Program, adjoints: StatementAdjoints, sites: set[Assign], in_parallel: frozenset[Stmt]
) -> frozenset[Assign]:
    """The whole arrays bound again whose adjoint then starts at zero, where nothing restores the old
    value: that zero takes the old value's shape, recorded (`t = x[:k] * 2.0` in a loop: `t_bar`
    of the last `t`'s shape took the earlier `t`'s adjoints, summed by `unbroadcast`). Not those
    in `sites` (restored) nor recomputed prefixes (zeroed where each reversed iteration starts)."""
    return frozenset(
        s
        for s in walk_statements(prog.fn.body)
        if isinstance(s, Assign)
        and s not in sites
        and s not in in_parallel
        and resets_adjoint(prog, s, adjoints.lines[s])
        and not _keeps_shape(prog, s)
    )


def _keeps_shape(prog: Program, s: Assign) -> bool:
    """Is the new value of `s` shaped like the old one: arithmetic of the array itself and scalars
    (`u = u * 0.95`)?"""
    leaves: list[cst.BaseExpression] = []
    todo = [s.value]
    while todo:
        e = todo.pop()
        if isinstance(e, cst.BinaryOperation):
            todo += [e.left, e.right]
        elif isinstance(e, cst.UnaryOperation):
            todo.append(e.expression)
        else:
            leaves.append(e)
    names = [e.value for e in leaves if isinstance(e, cst.Name)]
    numbers = all(isinstance(e, (cst.Name, cst.Integer, cst.Float)) for e in leaves)
    return numbers and s.var in names and all(n == s.var or not prog.kinds.is_array(n) for n in names)


def _outside_loops(body: tuple[Stmt, ...]) -> Iterator[Stmt]:
    """The statements of `body` and of its branches, not those of the loops inside it."""
    for s in body:
        yield s
        if isinstance(s, If):
            yield from _outside_loops(s.body + s.orelse)
