"""The forward sweep of reverse mode: the primal, with the records the reverse plan decided.

Before each top-level statement whose records can be bounded at its entry, the tape is reserved
once and records are plain stores; inside one that cannot, each loop is reserved before it or at
the start of each iteration where its records can be counted there; a `while` loop whose records
per iteration are bounded reserves once per chunk of iterations (its `break` then also ends the
loop over chunks); elsewhere a record checks capacity and the tape grows by doubling.

Modes: "normal", the primal with its records; "primal", no records (a parallel loop, whose
iterations record on their own tapes later; a checkpointed loop's steps; a recomputed prefix);
"slots", a parallel loop whose iterations record only the old values of the arrays it
overwrites, each in its own slot of the tape; "replay", one parallel iteration re-running its
own body with records, without the writes other iterations or later statements see.
"""

from __future__ import annotations

from dataclasses import replace

from ...ir.core import Assign, Break, For, If, Permute, Stmt, While, assigned_names, walk_statements
from ...ir.counts import Count
from ...ir.emit import Writer
from ...ir.exprs import code
from ..plan import ReversePlan
from ..recording import Where
from .scope import Dispatch, Emission, Scope

_CHUNK = 64  # iterations of a `while` loop recorded between two capacity checks
_RECORDING = ("normal", "replay")  # the modes that record


class ForwardSweep:
    """The forward sweep in one scope; `dispatch` writes the loops another emitter writes
    (checkpointed loops: `checkpoint.py`)."""

    def __init__(self, plan: ReversePlan, emission: Emission, scope: Scope, dispatch: Dispatch):
        self.plan, self.emission, self.scope, self.dispatch = plan, emission, scope, dispatch
        self.prog = plan.prog

    def sweep(self, body: tuple[Stmt, ...], out: Writer, exact: set[str] | None, mode: str = "normal") -> None:
        """`exact`: the tapes whose room is reserved for everything `body` records; None at the top
        level, where each statement's reservation is planned (`ReversePlan.reservations`)."""
        for s in body:
            here = exact if exact is not None else self.reserve(s, out)
            self.statement(s, out, here, mode)
            if exact is None:
                self.reserve_after(s, out)

    def statement(self, s: Stmt, out: Writer, here: set[str], mode: str) -> None:
        plan = self.plan
        if isinstance(s, For):
            self.loop_for(s, out, here, mode)
        elif isinstance(s, While) and s in plan.checkpointed and mode == "normal":
            self.dispatch.forward_checkpointed(plan.checkpointed[s], self, out)
        elif isinstance(s, While):
            if s in plan.not_checkpointed and mode == "normal":
                out.comment(f"this loop keeps its records, not checkpointed: {plan.not_checkpointed[s]}")
            self.loop(s, f"while {code(s.test)}", out, here, mode)
        elif isinstance(s, If):
            self.branch(s, out, here, "if", mode)
        elif isinstance(s, Break):
            if self.scope.done is not None:  # it leaves the chunk's loop: the `while` loop ends too
                out.line(f"{self.scope.done} = True")
            out.line("break")
        elif isinstance(s, Permute):
            out.line(s.text())
        else:
            assert isinstance(s, Assign), s  # exits.py leaves no `continue` and no early `return`
            if mode == "replay" and self.shared_write(s):
                return
            records = mode in _RECORDING or mode == "slots" and plan.in_slots(s)
            if s in plan.sites and records:
                reads_itself = any(s.var in line.reads() for line in plan.adjoints.lines.get(s, []))
                why = "its own adjoint reads it" if reads_itself else "an adjoint reads it"
                target = code(s.target)
                self.record(s, target, f"record {target}: overwritten next, and {why}", out, here)
            elif s in plan.reshaped and records:
                self.record(s, s.var, f"record {s.var}'s shape: its adjoint starts again at zero with it", out, here)
            out.line(s.text())

    def record(self, s: Stmt, value: str, comment: str, out: Writer, exact: set[str]) -> None:
        where = Where(self.scope.tapes, frozenset(exact), self.emission.helpers, self.prog.namer.fresh)
        self.plan.recordings[s].save(value, comment, out, where)

    def replays_anything(self, body: tuple[Stmt, ...]) -> bool:
        plan = self.plan
        return any(
            isinstance(s, Assign) and not self.shared_write(s) or s in plan.decisions or s in plan.counters
            for s in walk_statements(body)
        )

    def shared_write(self, s: Assign) -> bool:
        """In a replayed parallel iteration: a write that only the real forward sweep makes."""
        replaying = self.scope.replaying
        return s.writes_element and s.var not in replaying.private or s.var in replaying.reductions  # type: ignore[union-attr]

    def loop_for(self, loop: For, out: Writer, exact: set[str], mode: str) -> None:
        plan = self.plan
        header = f"for {loop.var} in {loop.range_text()}"
        if loop.serial and mode == "normal":
            out.comment(f"a prange loop run serially: {loop.serial}")
        if loop in plan.checkpointed and mode == "normal":
            self.dispatch.forward_checkpointed(plan.checkpointed[loop], self, out)
            return
        if loop in plan.not_checkpointed and mode == "normal":
            out.comment(f"this loop keeps its records, not checkpointed: {plan.not_checkpointed[loop]}")
        if loop in plan.parallel and mode == "normal":
            self.parallel_loop(loop, header, out, exact)
            return
        if loop in plan.serial_reason and mode == "normal":
            out.comment(f"this prange loop gets a serial adjoint: {plan.serial_reason[loop]}")
            if plan.has_records(loop.body):
                out.comment("so it runs serially here too: its records share one tape")
                header = f"for {loop.var} in {loop.range_text(serial=True)}"
        self.loop(loop, header, out, exact, mode)

    def parallel_loop(self, loop: For, header: str, out: Writer, exact: set[str]) -> None:
        plan = self.plan
        slots = plan.slot_arrays.get(loop)
        if not slots:
            out.comment("parallel loop: its iterations record on their own tapes in the reverse sweep")
            self.loop(loop, header, out, exact, "primal")
            return
        records = plan.slot_records(loop).render(exact=True)
        (tape, top), _ = plan.main_tapes
        out.comment(f"parallel loop: each iteration records the old {', '.join(sorted(slots))} it overwrites")
        out.comment("in its own slot of the tape, at an offset computed from the loop index")
        self.emission.helpers.add("reserve")
        out.line(f"{tape} = reserve({tape}, {top} + {records})")
        with out.block(header):
            out.line(f"{plan.slot} = {plan.slot_offset(loop, plus_one=False)}")
            self.sweep(loop.body, out, exact, "slots")
        out.line(f"{top} += {records}")

    def loop(self, loop: For | While, header: str, out: Writer, exact: set[str], mode: str) -> None:
        if mode == "replay" and not self.replays_anything(loop.body):
            return  # only writes other iterations or later statements see: nothing to replay
        counter = self.plan.counters.get(loop) if mode in _RECORDING else None
        if counter:
            out.line(f"{counter} = 0")
        chunk = self.chunk_reservations(loop, exact, mode)
        if chunk:
            self.while_in_chunks(loop, counter, chunk, out, exact, mode)  # type: ignore[arg-type]
        else:
            before, each = self.nest_reservations(loop, exact, mode)
            for tape, top, size in before:
                self.emission.helpers.add("reserve")
                out.line(f"{tape} = reserve({tape}, {top} + {size.render()})  # room for this loop's records")
            inner = exact | {tape for tape, _, _ in before + each}
            with out.block(header):
                for tape, top, size in each:
                    self.emission.helpers.add("reserve")
                    out.line(f"{tape} = reserve({tape}, {top} + {size.render()})  # room for this iteration's records")
                if counter:
                    out.line(f"{counter} += 1")
                self.ending(None).sweep(loop.body, out, inner, mode)  # its `break` is a plain one
        if counter:
            self.record(loop, counter, "record the trip count", out, exact)

    def nest_reservations(self, loop: For | While, exact: set[str], mode: str) -> tuple[list, list]:
        """Inside a region whose records could not be counted at its start (a triangular nest, a
        loop after a `while`): for each tape still checking capacity, (tape, top, count) to reserve
        once before `loop` where its records can be counted there, else at the start of each of its
        iterations where one iteration's can. Returns (before, each); the records inside are then
        plain stores."""
        if mode not in _RECORDING:
            return [], []
        plan, before, each = self.plan, [], []
        for index, (tape, top) in enumerate(self.scope.tapes):
            if tape in exact or not plan.records_on(loop.body, index):
                continue
            whole = plan.bound_stmt(loop, index, assigned_names((loop,))) if isinstance(loop, For) else None
            if whole is not None and not whole.is_zero:
                before.append((tape, top, whole))
                continue
            one = plan.bound(loop.body, index, assigned_names(loop.body))
            if one is not None and not one.is_zero:
                each.append((tape, top, one))
        return before, each

    def chunk_reservations(self, loop: For | While, exact: set[str], mode: str) -> list[tuple[str, str, Count]]:
        """For a `while` loop whose records per iteration have a bound but whose trip count is unknown:
        the (tape, top, bound) to reserve once per chunk of iterations, so that the records inside
        need no capacity check (a check that may grow the tape costs several times the primal)."""
        if not isinstance(loop, While) or mode not in _RECORDING:
            return []
        inside = assigned_names(loop.body)
        chunks = []
        for index, (tape, top) in enumerate(self.scope.tapes):
            if tape in exact or not self.plan.records_on(loop.body, index):
                continue
            size = self.plan.bound(loop.body, index, inside)
            if size is None:
                return []
            chunks.append((tape, top, size))
        return chunks

    def while_in_chunks(self, loop: While, counter: str | None, chunk, out: Writer, exact: set[str], mode: str) -> None:
        fresh = self.prog.namer.fresh
        done = fresh("done")
        out.line(f"{done} = False")
        with out.block(f"while not {done}"):
            out.comment(f"room for {_CHUNK} iterations' records, then records need no capacity check")
            self.emission.helpers.add("reserve")
            for tape, top, size in chunk:
                out.line(f"{tape} = reserve({tape}, {top} + {(Count.of(_CHUNK) * size).render()})")
            with out.block(f"for {fresh('_')} in range({_CHUNK})"):
                if code(loop.test) != "True":  # `while True:` ends only at its `break`
                    with out.block(f"if not ({code(loop.test)})"):
                        out.line(f"{done} = True")
                        out.line("break")
                if counter:
                    out.line(f"{counter} += 1")
                self.ending(done).sweep(loop.body, out, exact | {tape for tape, _, _ in chunk}, mode)

    def ending(self, done: str | None) -> ForwardSweep:
        """This sweep for a loop's body, whose `break` sets `done` (a chunked `while` loop) or not."""
        if done == self.scope.done:
            return self
        return ForwardSweep(self.plan, self.emission, replace(self.scope, done=done), self.dispatch)

    def branch(self, s: If, out: Writer, exact: set[str], keyword: str, mode: str) -> None:
        decided = s in self.plan.decisions and mode in _RECORDING
        with out.block(f"{keyword} {code(s.test)}"):
            self.sweep(s.body, out, exact, mode)
            if decided:
                self.record(s, "1", "record the branch taken", out, exact)
        if not decided and len(s.orelse) == 1 and isinstance(s.orelse[0], If):
            self.branch(s.orelse[0], out, exact, "elif", mode)
        elif s.orelse or decided:
            with out.block("else"):
                self.sweep(s.orelse, out, exact, mode)
                if decided:
                    self.record(s, "0", "record the branch taken", out, exact)

    # --- reservations at the top level --------------------------------------------------------

    def reserve(self, s: Stmt, out: Writer) -> set[str]:
        """Before a top-level statement: reserve each main tape as the plan decided; the tapes
        whose records here are all covered (no capacity check needed)."""
        plan = self.plan
        entry = plan.reservations.get(s)
        exact = set()
        for index, (tape, top) in enumerate(plan.main_tapes):
            if entry is None or entry[index].before is None and entry[index].after is None:
                exact.add(tape)  # straight-line, or no records on this tape: covered already
                continue
            before = entry[index].before
            if before is not None:
                self.emission.helpers.add("reserve")
                own = plan.bound_stmt(s, index, assigned_names((s,)))
                why = "all its records" if own == before else "its records and the ones after it"
                out.line(
                    f"{tape} = reserve({tape}, {top} + {before.render()})  # room for {why}: trip counts are known here"
                )
                exact.add(tape)
        return exact

    def reserve_after(self, s: Stmt, out: Writer) -> None:
        """After a top-level statement whose records checked capacity: room for the straight-line
        records that follow it."""
        entry = self.plan.reservations.get(s)
        for index, (tape, top) in enumerate(self.plan.main_tapes):
            after = entry[index].after if entry is not None else None
            if after is not None and not after.is_zero:
                self.emission.helpers.add("reserve")
                out.line(f"{tape} = reserve({tape}, {top} + {after.render()})  # room for the records after the loop")
