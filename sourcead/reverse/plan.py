"""The reverse plan: what the reverse mode records, where, and how, decided before any code is written.

`plan_reverse` runs the analyses the two sweeps consult, in order, and freezes their results:

1. each assignment's adjoint (`adjoint.py`) and the primal names it reads;
2. which prange loops get a parallel adjoint (`parallel.py`), iterated with the to-be-recorded
   analysis (`tbr.py`) until no parallel loop overwrites a value an earlier adjoint still needs
   (such a loop records those elements in its iterations' own slots of the tape, or turns serial);
   then the element writes whose old value no later-reversed read can see (`elements.py`) drop
   their records;
3. the records: the assignments TBR chose (`sites`), less the recomputed prefixes of loop bodies
   (`recompute.py`); the `if`s whose branch and the loops whose trip count the reversal needs;
4. how each is recorded: a `Recording` (`recording.py`) per statement;
5. which time loops are checkpointed instead (`checkpoint.py`), and their snapshot buffers;
6. the loops whose reversal runs in the loop's own order, and the loops whose contributions at
   constant offsets of the loop variable are gathered (`gather.py`), the rows a parallel
   adjoint's chunks scatter into (where a gather leaves some);
7. the reservations of the main tapes before top-level statements (`counts.py` algebra).

The plan also answers the counting questions of the sweeps (`bound`: records a region can make,
computable at its entry), so that both sweeps reserve the same room the records then fill.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

import libcst as cst

from ..analysis.liveness import live_after_loops
from ..analysis.program import Program
from ..ir.core import (
    Assign,
    For,
    If,
    Permute,
    Stmt,
    While,
    assigned_names,
    blocks,
    has_break,
    mentioned_outside,
    walk_statements,
    written,
)
from ..ir.counts import Count, maximum
from ..ir.emit import Line
from ..ir.exprs import code, is_number, names_in, number_value, paren
from .adjoint import StatementAdjoints
from .checkpoint import Checkpointed, plan_checkpoints
from .elements import unneeded_element_records
from .gather import Gather, plan_gather
from .parallel import ParallelLoop, plan_parallel
from .promote import Promoted, plan_promotions
from .recompute import Prefix, recomputed_prefixes
from .recording import ArrayInRegister, ArrayOnTape, InRegister, InSlot, OnTape, Recording, Tapes
from .tbr import record_in_iteration, to_be_recorded

_CHECKPOINT_KEYS = ("steps", "slots", "stores", "schedule", "next", "j", "do", "a", "b", "slot", "table", "once")


@dataclass(frozen=True)
class Reservation:
    """Room reserved on one main tape around a top-level statement: `before` it (its records and
    the straight-line ones up to the next such statement), or `after` it (the straight-line records
    that follow a statement whose own records check capacity). None where there is none."""

    before: Count | None = None
    after: Count | None = None


@dataclass(frozen=True)
class ReversePlan:
    prog: Program
    adjoints: StatementAdjoints
    primal: frozenset[str]
    parallel: Mapping[For, ParallelLoop]  # prange loops with a parallel adjoint
    serial_reason: Mapping[For, str]  # prange loops with a serial one, and why
    slot_arrays: Mapping[For, frozenset[str]]  # arrays a parallel loop records in its iterations' slots
    sites: frozenset[Assign]  # the assignments whose old values are recorded
    in_parallel: frozenset[Stmt]  # the statements inside parallel loops
    chunk_rows: Mapping[For, tuple[str, ...]]  # the shared arrays a parallel adjoint scatters into
    iteration_locals: Mapping[For, frozenset[str]]  # a parallel loop's variables nothing outside mentions
    prefixes: Mapping[For, tuple[Stmt, ...]]  # loop-body prefixes recomputed in the reverse sweep
    decisions: frozenset[If]  # the `if`s whose taken branch is recorded
    counters: Mapping[Stmt, str]  # loops whose trip count is recorded, and their counters
    recordings: Mapping[Stmt, Recording]  # how each record is kept
    checkpointed: Mapping[Stmt, Checkpointed]
    not_checkpointed: Mapping[Stmt, str]  # loops kept with their records, and why
    snapshots: Mapping[Stmt, Mapping[str, str]]  # a checkpointed loop's state -> its snapshot buffer
    checkpoint_names: Mapping[Stmt, Mapping[str, str]]  # the variables of a checkpointed loop's code
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
    held: Mapping[Assign, str]  # `x = e` whose adjoint reads e's value from x: the temporary it sets
    promoted: Mapping[For, tuple[Promoted, ...]]  # elements a reversed loop sums into a local first
    accumulators: Mapping[Assign, Mapping[str, str]]  # its lines' targets (as code) -> that local
    reservations: Mapping[Stmt, tuple[Reservation, Reservation]]  # per main tape
    first_allocation: tuple[Count, Count]  # the straight-line records before any reservation

    # --- questions the sweeps ask ------------------------------------------------------------

    def has_work(self, body: tuple[Stmt, ...]) -> bool:
        return self.adjoints.has_work(body, self.sites)

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
        if s in self.parallel:
            if tape != 0 or not self.slot_arrays.get(s):  # type: ignore[call-overload]
                return Count()  # its iterations record on their own tapes
            if any(names_in(b) & inside for b in (s.start, s.stop, s.step)):  # type: ignore[union-attr]
                return None
            return self.slot_records(s)  # type: ignore[arg-type]
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
            held = s.body + s.orelse if isinstance(s, If) else s.body if s in self.counters else ()  # type: ignore[union-attr]
            if held and self.has_records(held):
                return None  # records as many as its branch or its trip count says
        if not any(self._resets(s.body + s.orelse) for s in _outside_loops(loop.body) if s in self.decisions):  # type: ignore[union-attr]
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
                if line.op == "=" and shadowed(line.target.value) is not None:  # type: ignore[union-attr]
                    if kinds.is_array(shadowed(line.target.value)):  # type: ignore[arg-type, union-attr]
                        return None
                    guard.add(line.target.value)  # type: ignore[union-attr]
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
        sites = self.sites - self.in_parallel
        for s in self.prog.fn.body:
            if isinstance(s, (For, While, If)):
                inside = set(walk_statements((s,)))
                missing |= {t.var for t in sites if t in inside and not t.writes_element} - defined
            defined |= written(s)
        return missing

    def permutes(self) -> list[Permute]:
        return [s for s in walk_statements(self.prog.fn.body) if isinstance(s, Permute)]


# --- the analyses, in the order plan_reverse runs them ---------------------------------------


def plan_reverse(prog: Program, memory: int | None = None) -> ReversePlan:
    fn, fresh = prog.fn, prog.namer.fresh
    adjoints = StatementAdjoints(prog)
    primal = frozenset(set(fn.params) | assigned_names(fn.body))
    statements = list(walk_statements(fn.body))
    returned = {v.value for v in fn.ret.values if isinstance(v, cst.Name)}
    candidates = recomputed_prefixes(fn.body, fn.params, returned, lambda v: _scalar_dtype(prog, v))
    chosen, records = _choose_prefixes(prog, statements, adjoints, primal, candidates)
    parallel, slot_arrays = records.parallel, records.slot_arrays
    prefixes = {loop: p.statements for loop, p in chosen.items()}
    sites = records.sites - {t for prefix in prefixes.values() for t in walk_statements(prefix)}  # type: ignore[misc]
    main_tapes = ((fresh("tape"), fresh("top")), (fresh("itape"), fresh("itop")))
    slot, chunk = fresh("slot"), fresh("chunk")

    def work(body: tuple[Stmt, ...]) -> bool:
        return adjoints.has_work(body, sites)

    decisions = frozenset(s for s in statements if isinstance(s, If) and (work(s.body) or work(s.orelse)))
    counters = {
        s: fresh("trips")
        for s in statements
        if isinstance(s, (For, While)) and (isinstance(s, While) or has_break(s)) and work(s.body)
    }
    recordings = _recordings(prog, parallel, sites, records.slots, decisions, counters, main_tapes[0][0], slot)

    def worth_it(loop: For | While) -> bool:
        return bool(set(walk_statements(loop.body)) & set(recordings))

    checkpointed, not_checkpointed = plan_checkpoints(fn.body, fn.params, lambda v: prog.kinds[v], memory, worth_it)
    snapshots = {loop: {st.var: fresh(f"{st.var}_snaps") for st in ck.state} for loop, ck in checkpointed.items()}

    live_after = live_after_loops(prog)

    def carried_out(loop: For) -> set[str]:
        """Names the loop's prefix assigns whose adjoint enters the loop from after it."""
        return (assigned_names(prefixes.get(loop, ())) - {loop.var}) & live_after.get(loop, set())

    forward_reversals = _forward_reversals(statements, records.reads, parallel, recordings, prefixes, carried_out)
    gathers = _gathers(prog, adjoints, statements, prefixes, sites, checkpointed, parallel, returned)
    left = {loop: {**adjoints.lines, **(gathers[loop].residual if loop in gathers else {})} for loop in parallel}
    chunk_rows = {loop: _scattered_arrays(prog, left[loop], p) for loop, p in parallel.items()}
    scattered = sorted({a for arrays in chunk_rows.values() for a in arrays})
    rows = {a: fresh(f"{prog.bar(a)}_rows") for a in scattered}
    views = {a: fresh(f"{prog.bar(a)}_mine") for a in scattered}  # this chunk's row
    checkpoint_names = {loop: {key: fresh(f"ck_{key}") for key in _CHECKPOINT_KEYS} for loop in checkpointed}
    local_tapes = ((fresh("ltape"), fresh("ltop")), (fresh("litape"), fresh("litop")))
    in_parallel = frozenset(s for loop in parallel for s in walk_statements(loop.body))

    def not_promoted(loop: For) -> bool:  # its lines go where another strategy sends them
        inside = [loop, *walk_statements(loop.body)]
        gathered = any(t in gathers and gathers[t].groups for t in inside)  # sums alone take no element's lines
        return loop in in_parallel or gathered or any(t in parallel or t in checkpointed for t in inside)

    promoted, accumulators = plan_promotions(
        (s for s in statements if isinstance(s, For)), adjoints.lines, not_promoted, prog.element_is_float, fresh
    )
    plan = ReversePlan(
        prog=prog,
        adjoints=adjoints,
        primal=primal,
        parallel=parallel,
        serial_reason=records.serial_reason,
        slot_arrays={loop: frozenset(names) for loop, names in slot_arrays.items()},
        sites=frozenset(sites),
        in_parallel=in_parallel,
        chunk_rows=chunk_rows,
        iteration_locals=_iteration_locals(prog, parallel, returned),
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
        inner_loops=frozenset(
            t for s in statements if isinstance(s, (For, While)) for t in walk_statements(s.body) if isinstance(t, For)
        ),
        forward_reversals=forward_reversals,
        gathers=gathers,
        held=_held_values(fn.body, adjoints),
        promoted=promoted,
        accumulators=accumulators,
        reservations={},
        first_allocation=(Count(), Count()),
    )
    first, reservations = _reservations(plan, fn.body)
    return replace(plan, reservations=reservations, first_allocation=first)  # they count with the plan


@dataclass(frozen=True)
class _Records:
    """What the reverse sweep reads (per assignment), and what the forward sweep records for it."""

    reads: dict[Assign, set[str]]
    parallel: dict[For, ParallelLoop]
    serial_reason: dict[For, str]
    slot_arrays: dict[For, set[str]]
    slots: dict[Assign, For]  # the element writes recorded in their iteration's slot
    sites: set[Assign]  # the assignments TBR chose, slots included
    at_entry: dict[Stmt, set[str]]  # the variables needed at each loop's entry


def _records(
    prog: Program, statements: list[Stmt], adjoints: StatementAdjoints, primal, prefixes: Mapping[For, Prefix]
) -> _Records:
    """The records, where the reverse sweep computes `prefixes` again: it reads what their
    assignments read, and their variables' values inside their loops are its own."""
    lines = _with_prefix_reads(adjoints.lines, prefixes.values())
    reads = {s: set().union(*(line.reads() for line in ls)) & primal for s, ls in lines.items()}
    for loop, prefix in prefixes.items():
        own = assigned_names(prefix.statements)
        for t in walk_statements(loop.body):
            if t in reads:
                reads[t] = reads[t] - own  # type: ignore[index]
    parallel, serial_reason, slot_arrays, sites, at_entry = _parallel_loops(prog, statements, reads, primal)
    sites -= unneeded_element_records(prog.fn.body, sites, lines, prog.fn.params, set())
    slots = {
        t: loop
        for loop, names in slot_arrays.items()
        for t in walk_statements(loop.body)
        if isinstance(t, Assign) and t.writes_element and t.var in names
    }
    return _Records(reads, parallel, serial_reason, slot_arrays, slots, sites | set(slots), at_entry)


def _choose_prefixes(
    prog: Program, statements: list[Stmt], adjoints: StatementAdjoints, primal, candidates: Mapping[For, Prefix]
) -> tuple[dict[For, Prefix], _Records]:
    """The prefixes recomputed, and the records with them. A prefix is recomputed where it saves a
    record (and then whole: its statements build on each other). Where it reads names the
    function changes outside its loop (the reverse sweep reads them again, in the state of the
    loop: their overwrites after the loop are now recorded), or its variables are mentioned
    outside the loop (the reversed loop leaves them as its first iteration computed them), the
    records are analysed again with it: it is taken where none of its variables is needed at
    the loop's entry, every parallel adjoint stays as it was, and every record it adds sits in fewer
    loops than each it saves (`_fewer_records`; n-body: three records per body per step, not five
    per pair); else its part that reads only names that never change, if any (`Prefix.fallback`)."""
    records = _records(prog, statements, adjoints, primal, {})
    loops = _enclosing_loops(prog.fn.body)
    chosen: dict[For, Prefix] = {}
    for loop, candidate in candidates.items():
        prefix: Prefix | None = candidate
        while prefix is not None:
            saved = records.sites & set(walk_statements(prefix.statements))
            if not saved:
                break
            if not (prefix.changed or prefix.outside):
                chosen[loop] = prefix  # it drops only its own records
                break
            trial_prefixes = {**chosen, loop: prefix}
            trial = _records(prog, statements, adjoints, primal, trial_prefixes)
            recomputed = {t for p in trial_prefixes.values() for t in walk_statements(p.statements)}
            added = trial.sites - records.sites - recomputed
            if (
                not any(p.outside & trial.at_entry.get(q, set()) for q, p in trial_prefixes.items())
                and (trial.parallel.keys(), trial.slot_arrays) == (records.parallel.keys(), records.slot_arrays)
                and _fewer_records(added, saved, loops)
            ):
                chosen[loop], records = prefix, trial
                break
            prefix = prefix.fallback  # its part that reads only names that never change
    return chosen, records


def _with_prefix_reads(lines: Mapping[Assign, list[Line]], prefixes) -> dict[Assign, list[Line]]:
    """The adjoint lines, with each recomputed assignment as a line of its own: the reverse sweep
    runs it again."""
    extended = dict(lines)
    for prefix in prefixes:
        for a in prefix.assignments():
            extended[a] = [*lines.get(a, []), Line(a.target, "=", a.value)]
    return extended


def _outside_loops(body: tuple[Stmt, ...]) -> Iterator[Stmt]:
    """The statements of `body` and of its branches, not those of the loops inside it."""
    for s in body:
        yield s
        if isinstance(s, If):
            yield from _outside_loops(s.body + s.orelse)


def _enclosing_loops(body: tuple[Stmt, ...], around: tuple = (), out: dict | None = None) -> dict[Stmt, tuple]:
    """The loops that hold each statement, outermost first."""
    out = {} if out is None else out
    for s in body:
        out[s] = around
        if isinstance(s, (For, While)):
            _enclosing_loops(s.body, (*around, s), out)
        elif isinstance(s, If):
            _enclosing_loops(s.body, around, out)
            _enclosing_loops(s.orelse, around, out)
    return out


def _fewer_records(added: set[Assign], saved: set[Assign], loops: Mapping[Stmt, tuple]) -> bool:
    """Does every record in `added` sit in fewer loops than each in `saved` (so runs less often,
    whatever the trip counts)? As many records in the same loops is no gain: gray_scott's re-read
    `uc = u[i, j]` would record the step's writes into `un` instead, an element's load and store in
    each sweep for a scalar's (measured 22% slower)."""
    return all(len(loops[a]) < min(len(loops[t]) for t in saved) for a in added)


def _parallel_loops(prog: Program, statements: list[Stmt], reads: dict[Assign, set[str]], primal: frozenset[str]):
    """Which prange loops get a parallel adjoint, which a serial one (and why), the arrays each
    records in its iterations' slots, and the to-be-recorded assignments."""
    parallel: dict[For, ParallelLoop] = {}
    serial_reason: dict[For, str] = {}
    nested = {t for s in statements if isinstance(s, For) and s.parallel for t in walk_statements(s.body)}
    for loop in statements:
        if isinstance(loop, For) and loop.parallel and loop not in nested:
            loop_plan, why = plan_parallel(loop, lambda a: reads.get(a, set()))
            if loop_plan is None:
                serial_reason[loop] = why
            else:
                parallel[loop] = loop_plan
    slot_arrays: dict[For, set[str]] = {}
    while True:
        opaque = {
            loop: (loop_plan.reads, loop_plan.writes - slot_arrays.get(loop, set()))
            for loop, loop_plan in parallel.items()
        }
        at_entry: dict[Stmt, set[str]] = {}
        sites, conflicts = to_be_recorded(prog.fn.body, reads, primal, opaque, at_entry)
        if not conflicts:
            break
        for loop, names in conflicts.items():
            if names <= parallel[loop].written_arrays and slot_count(prog, loop, names) is not None:
                slot_arrays.setdefault(loop, set()).update(names)
                continue
            del parallel[loop]
            slot_arrays.pop(loop, None)
            serial_reason[loop] = "a value it overwrites is still needed by the adjoint of an earlier statement"
    for loop in parallel:
        sites |= record_in_iteration(loop.body, reads, primal, at_entry)
    return parallel, serial_reason, slot_arrays, set(sites), at_entry


def slot_count(prog: Program, loop: For, names: set[str] | frozenset[str]) -> Count | None:
    """Records per iteration of writes into `names`, the same for every iteration (so each
    iteration owns a slot of the tape at a computable offset), or None."""
    if not is_number(loop.step):
        return None
    inside = assigned_names(loop.body) | {loop.var}

    def count(body: tuple[Stmt, ...]) -> Count | None:
        total = Count()
        for t in body:
            writes = {a.var for a in walk_statements((t,)) if isinstance(a, Assign) and a.writes_element} & names
            if isinstance(t, Assign) and t.writes_element and t.var in names and _records_array(prog, t):
                return None  # a row or slice: its record's size is known only when it runs
            if isinstance(t, Assign):
                total = total + Count.of(1 if t.writes_element and t.var in names else 0)
            elif isinstance(t, (If, While)) and writes:
                return None  # how many depends on the data
            elif isinstance(t, For) and writes:
                inner = count(t.body)
                if inner is None or any(names_in(b) & inside for b in (t.start, t.stop, t.step)):
                    return None
                total = total + Count.trips(t) * inner
        return total

    return count(loop.body)


def _forward_reversals(statements, reads, parallel, recordings, prefixes, carried_out) -> dict[For, tuple[int, int]]:
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
        records = [recordings.get(t) for t in rest]
        # each record restores an element of its own iteration; a recorded scalar (an accumulation
        # into a name something later reads) must end at its value before the first iteration
        if any(
            r is not None and not (isinstance(r, OnTape) and t.writes_element)
            for t, r in zip(rest, records, strict=True)
        ):
            continue
        counts = tuple(sum(1 for r in records if isinstance(r, OnTape) and r.index == k) for k in (0, 1))
        found[loop] = counts
    return found


def _held_values(body: tuple[Stmt, ...], adjoints: StatementAdjoints) -> dict[Assign, str]:
    """The assignments `x = e` whose adjoint may take e's value (a quotient's, an exp's: what its
    partials read) from `x` rather than compute it again, and the temporary that gets it.

    At the adjoint of `x = e`, `x` holds e's value where a later statement R of the same block
    reads `x` in its adjoint, and nothing between them assigns `x`: for R's adjoint the
    to-be-recorded analysis keeps `x` as `x = e` left it (every later overwrite is recorded and
    undone first, or recomputed as a prefix, which assigns `x` only there), and between R's
    adjoint and this one the reverse sweep restores only the targets of the assignments between.
    The reading adds no record (the value is kept for R already); where `x = e` records the old
    `x`, the temporary takes the value before the restore puts the old one back."""
    held: dict[Assign, str] = {}
    for block in _blocks_within(body):
        for k, s in enumerate(block):
            if s in adjoints.root_value and _read_later(s, block[k + 1 :], adjoints):
                held[s] = adjoints.root_value[s]  # type: ignore[index]
    return held


def _read_later(s: Assign, after: tuple[Stmt, ...], adjoints: StatementAdjoints) -> bool:
    """Does an assignment of `after` read `s.var` in its adjoint, with only assignments of other
    variables before it (no loop, branch, swap or break, which could skip it or move the value)?"""
    for r in after:
        if not isinstance(r, Assign) or r.var == s.var:
            return False
        if any(s.var in line.reads() for line in adjoints.lines.get(r, [])):
            return True
    return False


def _blocks_within(body: tuple[Stmt, ...]) -> Iterator[tuple[Stmt, ...]]:
    yield body
    for s in walk_statements(body):
        yield from blocks(s)


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


def _gathers(prog: Program, adjoints: StatementAdjoints, statements, prefixes, sites, checkpointed, parallel, returned):
    """The loops whose contributions at constant offsets of the loop variable are gathered
    (`gather.py`), outer loops first: a loop inside a gathered one is planned on the lines the
    outer gather leaves. The reversed iterations restore what they recorded and compute their
    prefixes again (a parallel adjoint's iterations replay their whole body): the gathered
    lines, which run before, must read none of these. Not a checkpointed loop: its steps are
    reversed one at a time, each with all its lines."""
    shadowed, kinds = prog.namer.shadowed, prog.kinds
    lines = dict(adjoints.lines)
    found: dict[For, Gather] = {}
    for loop in statements:
        if not isinstance(loop, For) or loop in checkpointed or (loop.parallel and loop not in parallel):
            continue
        inside = list(walk_statements(loop.body))
        changing = {s.var for s in inside if s in sites}
        changing |= set().union(*(assigned_names(prefixes.get(t, ())) for t in (loop, *inside)))
        if loop in parallel:
            changing |= {s.var for s in inside if isinstance(s, Assign)}
        gather = plan_gather(
            loop,
            lines,
            lambda name: shadowed(name) is not None,
            lambda name: shadowed(name) is not None and kinds.is_array(shadowed(name)),  # type: ignore[arg-type]
            changing,
            assigned_names(loop.body),
            _private_adjoints(prog, loop, returned),
            sums=loop not in parallel,  # its iterations' shared sums go to the chunks' sums
            rings=loop in parallel,  # where a ring's gather replaces the chunks' rows
        )
        if gather is not None:
            found[loop] = gather
            lines.update(gather.residual)  # type: ignore[arg-type]
    return found


def _recordings(prog, parallel, sites, slots, decisions, counters, tape: str, slot: str) -> dict[Stmt, Recording]:
    """How each record is kept: in a register where a replayed parallel iteration makes it once,
    in the iteration's slot for the elements a parallel loop overwrites, else on a tape."""
    once = {s for loop in parallel for s in _once_per_iteration(loop.body)}
    found: dict[Stmt, Recording] = {}
    for s in walk_statements(prog.fn.body):
        if s in slots:
            found[s] = InSlot(tape, slot)
        elif s in sites:
            registered = s in once
            if _records_array(prog, s):
                t = prog.kinds.type_of(s.target)
                found[s] = (
                    ArrayInRegister(prog.namer.fresh(f"{s.var}_old"))
                    if registered
                    else ArrayOnTape(_tape_index(prog, s), t.ndim, t.dtype, not s.writes_element)
                )
            else:
                found[s] = InRegister(prog.namer.fresh(f"{s.var}_old")) if registered else OnTape(_tape_index(prog, s))
        elif s in decisions:
            found[s] = InRegister(prog.namer.fresh("branch")) if s in once else OnTape(1)
        elif s in counters:
            found[s] = InRegister(counters[s]) if s in once else OnTape(1)  # the counter survives the replay
    return found


def _reservations(plan: ReversePlan, body: tuple[Stmt, ...]):
    """Where each main tape is reserved, so that every record at the top level is covered: the
    first allocation holds the straight-line records before the first statement that records
    more; before each such statement whose records can be counted at its entry, the tape is
    reserved for them and for the straight-line records that follow it, up to the next one;
    after one whose records cannot be counted (they check capacity themselves), for the
    straight-line records that follow it."""
    first = [Count(), Count()]
    entries: dict[Stmt, list[list]] = {}
    for index in (0, 1):
        pending: tuple[str, Stmt | None] = ("first", None)
        for s in body:
            records = plan.bound_stmt(s, index, assigned_names((s,)))
            if isinstance(s, Assign) and records is not None:
                where, at = pending
                if where == "first":
                    first[index] = first[index] + records
                else:
                    slot = 0 if where == "before" else 1
                    entries[at][index][slot] = entries[at][index][slot] + records  # type: ignore[index]
                continue
            if records is not None and records.is_zero:
                continue  # records nothing on this tape
            entry = entries.setdefault(s, [[None, None], [None, None]])
            if records is not None:
                entry[index][0] = records
                pending = ("before", s)
            else:
                entry[index][1] = Count()
                pending = ("after", s)
    reservations = {s: tuple(Reservation(*pair) for pair in entry) for s, entry in entries.items()}
    return (first[0], first[1]), reservations


def _iteration_locals(prog: Program, parallel: Mapping[For, ParallelLoop], returned: set[str]):
    """The variables of a parallel adjoint's iterations that nothing outside the loop mentions."""
    return {
        loop: frozenset(set(p.private) - mentioned_outside(prog.fn.body, loop) - returned - {loop.var})
        for loop, p in parallel.items()
    }


def _scattered_arrays(prog: Program, lines: Mapping, plan: ParallelLoop) -> tuple[str, ...]:
    """Shared arrays whose adjoint the loop accumulates at indices other than the loop index (in
    `lines`: those a gather leaves to the loop's iterations)."""
    found = set()
    for s in walk_statements(plan.loop.body):
        for line in lines.get(s, []) if isinstance(s, Assign) else []:
            target = line.target
            if isinstance(target, cst.Subscript) and line.op != "=" and not plan.at_loop_index(target):
                array = prog.namer.shadowed(target.value.value)  # type: ignore[union-attr]
                if array not in plan.private:
                    found.add(array)
    return tuple(sorted(found))


def _records_array(prog: Program, s: Assign) -> bool:
    """Does recording `s` save an array (a whole array rebound, a slice or a row overwritten)?"""
    return prog.kinds.type_of(s.target).is_array


def _tape_index(prog: Program, s: Assign) -> int:
    """0: the float tape; 1: the int tape (ints and bools, also elements of integer and bool arrays)."""
    return 1 if prog.kinds[s.var].dtype in ("int", "bool") else 0


def _scalar_dtype(prog: Program, var: str) -> str | None:
    """ "int", "float" or "bool" for a scalar variable, None for an array or a tuple."""
    kind = prog.kinds.of.get(var)
    if kind is None or kind.is_array or getattr(kind, "is_tuple", False):
        return None
    return kind.dtype


def _once_per_iteration(body: tuple[Stmt, ...]):
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
