"""Pass 5b, reverse mode: a forward sweep that records what is overwritten, then the adjoints.

`f(x, ...)` becomes `f_vjp(x, ..., out_bar)` returning `(value, x_bar, ...)`. Each active
assignment's adjoint is built first (`adjoint.py`); the to-be-recorded analysis (`tbr.py`)
then reads what those adjoints need and decides which overwrites the forward sweep records on
a typed tape (`tape` for floats, `itape` for ints). The forward sweep also records which branch
each `if` took and how many times each `while` loop (or `for` loop with a `break`) ran, when
their reversal has work to do. The reverse sweep runs the statements backwards, restoring each
recorded value at its mirror point, so every adjoint sees the values its statement saw.

Before each top-level statement whose records can be bounded at its entry (trip counts known),
the tape is reserved once and records are plain stores; inside one that cannot, each loop is
reserved before it or at the start of each iteration where its records can be counted there;
elsewhere a record checks capacity and the tape grows by doubling.

Under a memory budget, or where the user marks it, a time loop is checkpointed instead
(`checkpoint.py`): the forward sweep keeps snapshots of its state, and its reverse sweep runs
each step again from the nearest snapshot, with its records, right before that step's adjoint.
"""

from __future__ import annotations

import re
from dataclasses import replace

import libcst as cst

from .activity import value_sources
from .adjoint import StatementAdjoints
from .checkpoint import plan_checkpoints
from .checkpoint_emit import CheckpointedLoops
from .core import (
    Assign,
    Break,
    For,
    If,
    Permute,
    Stmt,
    While,
    assigned_names,
    has_break,
    mentioned_outside,
    walk_statements,
    written,
)
from .counts import Count, maximum
from .definite import placeholder, possibly_undefined
from .emit import Line, Writer, tuple_text
from .exprs import code, is_number, names_in, number_value, paren, subscript, subscript_indices
from .parallel import ADJOINT_CHUNKS, ParallelLoop, plan_parallel
from .program import Program
from .recompute import recomputed_prefixes
from .tbr import record_in_iteration, to_be_recorded

_CHUNK = 64  # iterations of a `while` loop recorded between two capacity checks
_RECORDING = ("normal", "replay")  # the forward-sweep modes that record (see forward_sweep)


def reverse_function(prog: Program, memory: int | None = None) -> tuple[str, list[str]]:
    """The text of `f_vjp` and the runtime helpers it calls. `memory`: the budget in bytes for the
    snapshots of checkpointed loops (None: only marked loops)."""
    return Reverser(prog, memory).function()


class Reverser(CheckpointedLoops):
    def __init__(self, prog: Program, memory: int | None = None):
        self.prog = prog
        fn = prog.fn
        self.adjoints = StatementAdjoints(prog)
        self.primal = set(fn.params) | assigned_names(fn.body)
        lines = self.adjoints.lines
        reads = {s: set().union(*(line.reads() for line in ls)) & self.primal for s, ls in lines.items()}
        statements = list(walk_statements(fn.body))
        self.plan_parallel_loops(statements, reads)
        self.prefixes = recomputed_prefixes(fn.body, fn.params, self.returned_names(), self.scalar_dtype)
        # a prefix is recomputed where it saves a record (and then whole: its statements build on each other)
        self.prefixes = {loop: p for loop, p in self.prefixes.items() if self.sites & set(walk_statements(p))}
        self.sites -= {t for prefix in self.prefixes.values() for t in walk_statements(prefix)}  # type: ignore[misc]
        fresh = prog.namer.fresh
        self.main_tapes = ((fresh("tape"), fresh("top")), (fresh("itape"), fresh("itop")))
        self.tapes = self.main_tapes
        self.slot, self.chunk = fresh("slot"), fresh("chunk")
        work = self.has_work
        self.decisions = {s for s in statements if isinstance(s, If) and (work(s.body) or work(s.orelse))}
        self.counters = {
            s: prog.namer.fresh("trips")
            for s in statements
            if isinstance(s, (For, While)) and (isinstance(s, While) or has_break(s)) and work(s.body)
        }
        self.plan_registers()
        self.memory = memory
        self.checkpointed, self.not_checkpointed = plan_checkpoints(
            fn.body, fn.params, lambda v: prog.kinds[v], memory, lambda loop: self.has_records(loop.body)
        )
        self._checkpoint_names: dict[For | While, dict[str, str]] = {}
        self.snapshots = {
            loop: {st.var: prog.namer.fresh(f"{st.var}_snaps") for st in plan.state}
            for loop, plan in self.checkpointed.items()
        }
        self.partial_sums: dict[str, str] = {}
        self.replaying: ParallelLoop | None = None
        self.replaying_loops: set[For] = set()
        self.helpers: set[str] = set()
        scattered = sorted({a for arrays in self.chunk_rows.values() for a in arrays})
        self.rows = {a: prog.namer.fresh(f"{prog.bar(a)}_rows") for a in scattered}
        self.views = {a: prog.namer.fresh(f"{prog.bar(a)}_mine") for a in scattered}  # this chunk's row

    def plan_parallel_loops(self, statements: list[Stmt], reads: dict[Assign, set[str]]) -> None:
        """Decide which prange loops get a parallel adjoint (`parallel.py`), then the records."""
        self.parallel: dict[For, ParallelLoop] = {}
        self.serial_reason: dict[For, str] = {}
        nested = {t for s in statements if isinstance(s, For) and s.parallel for t in walk_statements(s.body)}
        for loop in statements:
            if isinstance(loop, For) and loop.parallel and loop not in nested:
                plan, why = plan_parallel(loop, lambda a: reads.get(a, set()))
                if plan is None:
                    self.serial_reason[loop] = why
                else:
                    self.parallel[loop] = plan
        self.slot_arrays: dict[For, set[str]] = {}  # arrays a parallel loop records in its own tape slots
        while True:
            opaque = {
                loop: (plan.reads, plan.writes - self.slot_arrays.get(loop, set()))
                for loop, plan in self.parallel.items()
            }
            sites, conflicts = to_be_recorded(self.prog.fn.body, reads, self.primal, opaque)
            if not conflicts:
                break
            for loop, names in conflicts.items():
                plan = self.parallel[loop]
                if names <= plan.written_arrays and self.slot_count(loop, names) is not None:
                    self.slot_arrays.setdefault(loop, set()).update(names)
                    continue
                del self.parallel[loop]
                self.slot_arrays.pop(loop, None)
                self.serial_reason[loop] = (
                    "a value it overwrites is still needed by the adjoint of an earlier statement"
                )
        self.slots: dict[Assign, For] = {}  # element writes recorded in their iteration's slot of the tape
        for loop, names in self.slot_arrays.items():
            for t in walk_statements(loop.body):
                if isinstance(t, Assign) and t.writes_element and t.var in names:
                    self.slots[t] = loop
        for loop in self.parallel:
            sites |= record_in_iteration(loop.body, reads, self.primal)
        self.sites = sites | set(self.slots)
        self.in_parallel = {s for loop in self.parallel for s in walk_statements(loop.body)}
        self.chunk_rows = {loop: self.scattered_arrays(plan) for loop, plan in self.parallel.items()}
        # the variables of a parallel adjoint's iterations that nothing outside the loop mentions
        outside = {v.value for v in self.prog.fn.ret.values if isinstance(v, cst.Name)}
        self.iteration_locals = {
            loop: set(plan.private) - mentioned_outside(self.prog.fn.body, loop) - outside - {loop.var}
            for loop, plan in self.parallel.items()
        }

    def slot_count(self, loop: For, names: set[str]) -> Count | None:
        """Records per iteration of writes into `names`, the same for every iteration (so each
        iteration owns a slot of the tape at a computable offset), or None."""
        if not is_number(loop.step):
            return None
        inside = assigned_names(loop.body) | {loop.var}

        def count(body: tuple[Stmt, ...]) -> Count | None:
            total = Count()
            for t in body:
                writes = {a.var for a in walk_statements((t,)) if isinstance(a, Assign) and a.writes_element} & names
                if isinstance(t, Assign) and t.writes_element and t.var in names and self.records_array(t):
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

    def slot_offset(self, loop: For, plus_one: bool) -> str:
        """`top` + this iteration's position times its records: the start (or end) of its slot."""
        k = int(number_value(loop.step))
        position = loop.var if code(loop.start) == "0" else f"{loop.var} - {code(paren(loop.start))}"
        if k != 1:
            position = f"({position}) // {k}"
        if plus_one:
            position = f"{position} + 1" if k == 1 and code(loop.start) == "0" else f"({position}) + 1"
        count = self.slot_count(loop, self.slot_arrays[loop]).render(atom=True)  # type: ignore[union-attr]
        top = self.main_tapes[0][1]
        return f"{top} + ({position}) * {count}" if count != "1" else f"{top} + {position}"

    def plan_registers(self) -> None:
        """Records made once per replayed parallel iteration live in local variables, not on a tape."""
        self.registers: dict[Stmt, str] = {}
        for loop in self.parallel:
            for s in _once_per_iteration(loop.body):
                if s in self.slots:
                    continue
                if s in self.sites:
                    self.registers[s] = self.prog.namer.fresh(f"{s.var}_old")  # type: ignore[union-attr]
                elif s in self.decisions:
                    self.registers[s] = self.prog.namer.fresh("branch")
                elif s in self.counters:
                    self.registers[s] = self.counters[s]  # the counter itself survives the replay

    def scattered_arrays(self, plan: ParallelLoop) -> list[str]:
        """Shared arrays whose adjoint the loop accumulates at indices other than the loop index."""
        found = set()
        for s in walk_statements(plan.loop.body):
            for line in self.adjoints.lines.get(s, []) if isinstance(s, Assign) else []:
                target = line.target
                if isinstance(target, cst.Subscript) and line.op != "=" and not plan.at_loop_index(target):
                    array = self.prog.namer.shadowed(target.value.value)  # type: ignore[union-attr]
                    if array not in plan.private:
                        found.add(array)
        return sorted(found)

    def has_work(self, body: tuple[Stmt, ...]) -> bool:
        return self.adjoints.has_work(body, self.sites)

    def tape_index(self, s: Assign) -> int:
        """0: the float tape; 1: the int tape (ints and bools, also elements of integer and bool arrays)."""
        return 1 if self.prog.kinds[s.var].dtype in ("int", "bool") else 0

    def tape_of(self, s: Assign) -> tuple[str, str]:
        return self.tapes[self.tape_index(s)]

    # --- the whole function -----------------------------------------------------------------

    def function(self) -> tuple[str, list[str]]:
        prog, fn = self.prog, self.prog.fn
        namer = prog.namer
        seeds = [namer.fresh(f"out{k}_bar" if fn.ret.is_tuple else "out_bar") for k in range(len(fn.ret.values))]
        written_seeds = [namer.fresh(f"{m}_out_bar") for m in fn.mutated]
        value = namer.fresh("value")
        out = Writer()
        with out.block(f"def {fn.name}_vjp({', '.join(list(fn.params) + seeds + written_seeds)})"):
            out.comment(f"reverse mode (adjoints) of {fn.name} with respect to {', '.join(prog.wrt)}")
            for line in prog.activity_comments():
                out.comment(line)
            self.reservations = self.plan_reservations(fn.body)
            arrays = tuple(v for v in sorted(prog.activity.active) if prog.kinds.is_array(v))
            # what the adjoints read runs after the forward sweep: numba must find a typed assignment
            # of each even where it prunes every branch that assigns one (`if t > 0.25` with t = 0.0)
            reads = {n for lines in self.adjoints.lines.values() for line in lines for n in names_in(line.value)}
            reads -= {s.var for s in walk_statements(fn.body) if isinstance(s, For)}  # the reversed loops set them
            # a parallel adjoint's iteration replays its own variables before its adjoint reads them,
            # and gives them placeholders of its own (`reverse_iteration`): at the top, they would be
            # shared variables of both prange loops, each copied whole by numba's reduction analysis
            reads -= set().union(*self.iteration_locals.values())
            reads -= self.recomputed_names()  # each reversed iteration computes them first
            self.placed = set()
            for line in prog.placeholders(arrays + tuple(sorted(reads & set(prog.kinds.of)))):
                out.line(line)
                self.placed.add(line.split(" = ", 1)[0].strip())
            self.allocate_tapes(out)
            recorded = bool(self.sites or self.decisions or self.counters)
            out.comment("forward sweep" + ("" if recorded else ": nothing the reverse sweep reads is overwritten"))
            self.forward_sweep(fn.body, out, None)
            out.line(f"{value} = {self.captured_value()}")
            out.comment("reverse sweep")
            self.initialize_adjoints(seeds, written_seeds, out)
            for array, rows in self.rows.items():
                buffer = self.chunk_buffer(array)
                out.line(f"{rows} = {buffer}  # a row per chunk for scattered adjoints, kept zero between uses")
            self.reverse_sweep(fn.body, out)
            out.line(f"return {', '.join([value] + [prog.bar(w) for w in prog.wrt])}")
        return out.text(), sorted(self.helpers)

    def allocate_tapes(self, out: Writer) -> None:
        sites = self.sites - self.in_parallel | set(self.slots)
        uses_int = bool((set(self.decisions) | set(self.counters)) - self.in_parallel)
        for index, ((tape, top), dtype) in enumerate(zip(self.main_tapes, ("", ", np.int64"), strict=True)):
            shapes = index == 1 and any(self.saves_shape(s) for s in sites)
            if any(self.tape_index(s) == index for s in sites) or (index == 1 and uses_int) or shapes:
                first = self.reservations[None][index]
                out.line(f"{tape} = np.empty({first.render()}{dtype})")  # type: ignore[union-attr]
                out.line(f"{top} = 0")
        for var in sorted(self.undefined_at_first_record() - self.placed):
            out.line(f"{var} = {self.typed_zero(var)}  # recorded before it is first assigned: give it a typed value")
            self.placed.add(var)

    def typed_zero(self, var: str) -> str:
        return placeholder(self.prog.kinds[var])

    def plan_reservations(self, body: tuple[Stmt, ...]) -> dict:
        """Where each main tape is reserved, so that every record at the top level is covered: the
        first allocation holds the straight-line records before the first statement that records
        more; before each such statement whose records can be counted at its entry, the tape is
        reserved for them and for the straight-line records that follow it, up to the next one;
        after one whose records cannot be counted (they check capacity themselves), for the
        straight-line records that follow it. Key None: the first allocation; else the statement ->
        per tape, (reserve before, reserve after), None where there is none."""
        plan: dict = {None: [Count(), Count()]}
        for index in (0, 1):
            pending = ("first", None)
            for s in body:
                records = self.bound_stmt(s, index, assigned_names((s,)))
                if isinstance(s, Assign) and records is not None:
                    self.add_following(plan, pending, index, records)
                    continue
                if records is not None and records.is_zero:
                    continue  # records nothing on this tape
                entry = plan.setdefault(s, [[None, None], [None, None]])
                if records is not None:
                    entry[index][0] = records
                    pending = ("before", s)
                else:
                    entry[index][1] = Count()
                    pending = ("after", s)
        return plan

    @staticmethod
    def add_following(plan: dict, pending: tuple, index: int, records: Count) -> None:
        where, s = pending
        if where == "first":
            plan[None][index] = plan[None][index] + records
        else:
            slot = 0 if where == "before" else 1
            plan[s][index][slot] = plan[s][index][slot] + records

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

    # --- forward sweep ----------------------------------------------------------------------
    # mode "normal": the primal with its records; "primal": no records (a parallel loop, whose
    # iterations record on their own tapes later; a checkpointed loop's steps); "slots": a parallel
    # loop whose iterations record only the old values of the arrays it overwrites, each in its own
    # slot of the tape; "replay": one parallel iteration re-running its own body with records,
    # without the writes other iterations or later statements see.

    def forward_sweep(self, body: tuple[Stmt, ...], out: Writer, exact: set[str] | None, mode: str = "normal") -> None:
        for s in body:
            here = exact if exact is not None else self.reserve(s, out)
            self.forward_statement(s, out, here, mode)
            if exact is None:
                self.reserve_after(s, out)

    def forward_statement(self, s: Stmt, out: Writer, here: set[str], mode: str) -> None:
        if isinstance(s, For):
            self.forward_for(s, out, here, mode)
        elif isinstance(s, While) and s in self.checkpointed and mode == "normal":
            self.forward_checkpointed(self.checkpointed[s], out)
        elif isinstance(s, While):
            if s in self.not_checkpointed and mode == "normal":
                out.comment(f"this loop keeps its records, not checkpointed: {self.not_checkpointed[s]}")
            self.forward_loop(s, f"while {code(s.test)}", out, here, mode)
        elif isinstance(s, If):
            self.forward_branch(s, out, here, "if", mode)
        elif isinstance(s, Break):
            out.line("break")
        elif isinstance(s, Permute):
            out.line(s.text())
        elif mode == "replay" and self.shared_write(s):  # type: ignore[arg-type]
            return
        else:
            if s in self.sites and (mode in _RECORDING or mode == "slots" and s in self.slots):
                target = code(s.target)
                reads_itself = s.var in value_sources(s.value)
                why = "its own adjoint reads it" if reads_itself else "an adjoint reads it"
                comment = f"record {target}: overwritten next, and {why}"
                if self.records_array(s):
                    self.record_array(s, comment, out)
                else:
                    self.record(self.tape_of(s), target, comment, out, here, s)
            out.line(s.text())

    def replays_anything(self, body: tuple[Stmt, ...]) -> bool:
        return any(
            isinstance(s, Assign) and not self.shared_write(s) or s in self.decisions or s in self.counters
            for s in walk_statements(body)
        )

    def shared_write(self, s: Assign) -> bool:
        """In a replayed parallel iteration: a write that only the real forward sweep makes."""
        plan = self.replaying
        return s.writes_element and s.var not in plan.private or s.var in plan.reductions  # type: ignore[union-attr]

    def forward_for(self, loop: For, out: Writer, exact: set[str], mode: str) -> None:
        header = f"for {loop.var} in {loop.range_text()}"
        if loop in self.checkpointed and mode == "normal":
            self.forward_checkpointed(self.checkpointed[loop], out)
            return
        if loop in self.not_checkpointed and mode == "normal":
            out.comment(f"this loop keeps its records, not checkpointed: {self.not_checkpointed[loop]}")
        if loop in self.parallel and mode == "normal":
            slots = self.slot_arrays.get(loop)
            if not slots:
                out.comment("parallel loop: its iterations record on their own tapes in the reverse sweep")
                self.forward_loop(loop, header, out, exact, "primal")
                return
            records = (Count.trips(loop) * self.slot_count(loop, slots)).render()  # type: ignore[operator]
            (tape, top), _ = self.main_tapes
            out.comment(f"parallel loop: each iteration records the old {', '.join(sorted(slots))} it overwrites")
            out.comment("in its own slot of the tape, at an offset computed from the loop index")
            self.helpers.add("reserve")
            out.line(f"{tape} = reserve({tape}, {top} + {records})")
            with out.block(header):
                out.line(f"{self.slot} = {self.slot_offset(loop, plus_one=False)}")
                self.forward_sweep(loop.body, out, exact, "slots")
            out.line(f"{top} += {records}")
            return
        if loop in self.serial_reason and mode == "normal":
            out.comment(f"this prange loop gets a serial adjoint: {self.serial_reason[loop]}")
            if self.has_records(loop.body):
                out.comment("so it runs serially here too: its records share one tape")
                header = f"for {loop.var} in {loop.range_text(serial=True)}"
        self.forward_loop(loop, header, out, exact, mode)

    def has_records(self, body: tuple[Stmt, ...]) -> bool:
        inside = set(walk_statements(body))
        return bool(inside & (self.sites | set(self.decisions) | set(self.counters)))

    def forward_loop(self, loop: For | While, header: str, out: Writer, exact: set[str], mode: str) -> None:
        if mode == "replay" and not self.replays_anything(loop.body):
            return  # only writes other iterations or later statements see: nothing to replay
        counter = self.counters.get(loop) if mode in _RECORDING else None
        if counter:
            out.line(f"{counter} = 0")
        chunk = self.chunk_reservations(loop, exact, mode)
        if chunk:
            self.forward_while_in_chunks(loop, counter, chunk, out, exact, mode)
        else:
            before, each = self.nest_reservations(loop, exact, mode)
            for tape, top, size in before:
                self.helpers.add("reserve")
                out.line(f"{tape} = reserve({tape}, {top} + {size.render()})  # room for this loop's records")
            inner = exact | {tape for tape, _, _ in before + each}
            with out.block(header):
                for tape, top, size in each:
                    self.helpers.add("reserve")
                    out.line(f"{tape} = reserve({tape}, {top} + {size.render()})  # room for this iteration's records")
                if counter:
                    out.line(f"{counter} += 1")
                self.forward_sweep(loop.body, out, inner, mode)
        if counter:
            self.record(self.tapes[1], counter, "record the trip count", out, exact, loop)

    def nest_reservations(self, loop: For | While, exact: set[str], mode: str) -> tuple[list, list]:
        """Inside a region whose records could not be counted at its start (a triangular nest, a
        loop after a `while`): for each tape still checking capacity, (tape, top, count) to reserve
        once before `loop` where its records can be counted there, else at the start of each of its
        iterations where one iteration's can. Returns (before, each); the records inside are then
        plain stores."""
        if mode not in _RECORDING:
            return [], []
        before, each = [], []
        for index, (tape, top) in enumerate(self.tapes):
            if tape in exact or not self.records_on(loop.body, index):
                continue
            whole = self.bound_stmt(loop, index, assigned_names((loop,))) if isinstance(loop, For) else None
            if whole is not None and not whole.is_zero:
                before.append((tape, top, whole))
                continue
            one = self.bound(loop.body, index, assigned_names(loop.body))
            if one is not None and not one.is_zero:
                each.append((tape, top, one))
        return before, each

    def chunk_reservations(self, loop: For | While, exact: set[str], mode: str) -> list[tuple[str, str, str]]:
        """For a `while` loop whose records per iteration have a bound but whose trip count is unknown:
        the (tape, top, bound) to reserve once per chunk of iterations, so that the records inside
        need no capacity check (a check that may grow the tape costs several times the primal)."""
        if not isinstance(loop, While) or mode not in _RECORDING or has_break(loop):
            return []
        inside = assigned_names(loop.body)
        chunks = []
        for index, (tape, top) in enumerate(self.tapes):
            if tape in exact or not self.records_on(loop.body, index):
                continue
            size = self.bound(loop.body, index, inside)
            if size is None:
                return []
            chunks.append((tape, top, size))
        return chunks

    def forward_while_in_chunks(self, loop: While, counter, chunk, out: Writer, exact: set[str], mode: str) -> None:
        done = self.prog.namer.fresh("done")
        out.line(f"{done} = False")
        with out.block(f"while not {done}"):
            out.comment(f"room for {_CHUNK} iterations' records, then records need no capacity check")
            self.helpers.add("reserve")
            for tape, top, size in chunk:
                out.line(f"{tape} = reserve({tape}, {top} + {(Count.of(_CHUNK) * size).render()})")
            with out.block(f"for {self.prog.namer.fresh('_')} in range({_CHUNK})"):
                with out.block(f"if not ({code(loop.test)})"):
                    out.line(f"{done} = True")
                    out.line("break")
                if counter:
                    out.line(f"{counter} += 1")
                self.forward_sweep(loop.body, out, exact | {tape for tape, _, _ in chunk}, mode)

    def forward_branch(self, s: If, out: Writer, exact: set[str], keyword: str, mode: str) -> None:
        decided = s in self.decisions and mode in _RECORDING
        with out.block(f"{keyword} {code(s.test)}"):
            self.forward_sweep(s.body, out, exact, mode)
            if decided:
                self.record(self.tapes[1], "1", "record the branch taken", out, exact, s)
        if not decided and len(s.orelse) == 1 and isinstance(s.orelse[0], If):
            self.forward_branch(s.orelse[0], out, exact, "elif", mode)
        elif s.orelse or decided:
            with out.block("else"):
                self.forward_sweep(s.orelse, out, exact, mode)
                if decided:
                    self.record(self.tapes[1], "0", "record the branch taken", out, exact, s)

    def record(
        self, which: tuple[str, str], value: str, comment: str, out: Writer, exact: set[str], stmt: Stmt
    ) -> None:
        if stmt in self.slots:  # this iteration's own slot of the shared tape
            out.line(f"{self.main_tapes[0][0]}[{self.slot}] = {value}  # {comment}")
            out.line(f"{self.slot} += 1")
            return
        register = self.registers.get(stmt)
        if register is not None:  # runs once per replayed iteration: a local variable is its tape
            out.line(f"{register} = {value}  # {comment}")
            return
        tape, top = which
        if tape not in exact:  # no bound known at the entry of this statement: grow by doubling
            self.helpers.add("reserve")
            with out.block(f"if {top} == {tape}.shape[0]"):
                out.line(f"{tape} = reserve({tape}, 2 * {top} + 16)")
        out.line(f"{tape}[{top}] = {value}  # {comment}")
        out.line(f"{top} += 1")

    def records_array(self, s: Assign) -> bool:
        """Does recording `s` save an array (a whole array rebound, a slice or a row overwritten)?"""
        return self.prog.kinds.type_of(s.target).is_array

    def record_array(self, s: Assign, comment: str, out: Writer) -> None:
        """Save the values an array assignment overwrites: flattened onto the tape of their dtype
        (a whole array also saves its shape on the int tape, for the restore). Such a record
        reserves its own room: its size is known only when it runs."""
        target, t = code(s.target), self.prog.kinds.type_of(s.target)
        register = self.registers.get(s)
        if register is not None:  # once per replayed parallel iteration: a local copy
            out.line(f"{register} = np.copy({target})  # {comment}")
            return
        (tape, top), (itape, itop) = self.tapes[self.tape_index(s)], self.tapes[1]
        self.helpers.add("reserve")
        if not s.writes_element:
            out.line(f"{itape} = reserve({itape}, {itop} + {t.ndim})")
            for k in range(t.ndim):
                out.line(f"{itape}[{itop}] = {target}.shape[{k}]")
                out.line(f"{itop} += 1")
        out.line(f"{tape} = reserve({tape}, {top} + {target}.size)  # {comment}")
        out.line(f"{tape}[{top} : {top} + {target}.size] = {target}.ravel()")
        out.line(f"{top} += {target}.size")

    def restore_array(self, s: Assign, out: Writer) -> None:
        """Put back the values `record_array` saved: into the slice or row, or as the whole array."""
        target, t = code(s.target), self.prog.kinds.type_of(s.target)
        register = self.registers.get(s)
        if register is not None:
            out.line(f"{target} = {register}  # restore the values {target} had before")
            return
        (tape, top), (itape, itop) = self.tapes[self.tape_index(s)], self.tapes[1]
        cast = "" if t.dtype == "float" else f".astype(np.{'bool_' if t.dtype == 'bool' else 'int64'})"
        if s.writes_element:
            out.line(f"{top} -= {target}.size")
            out.line(f"{target} = {tape}[{top} : {top} + {target}.size].reshape({target}.shape){cast}"
                     f"  # restore the values {target} had before")  # fmt: skip
            return
        shape = self.prog.namer.fresh("shape")
        out.line(f"{itop} -= {t.ndim}")
        dims = ", ".join(f"{itape}[{itop} + {k}]" for k in range(t.ndim))
        out.line(f"{shape} = ({dims},)" if t.ndim == 1 else f"{shape} = ({dims})")
        size = " * ".join(f"{shape}[{k}]" for k in range(t.ndim))
        out.line(f"{top} -= {size}")
        out.line(f"{target} = {tape}[{top} : {top} + {size}].reshape({shape}).copy(){cast}"
                 f"  # restore the array {target} was before")  # fmt: skip

    def reserve(self, s: Stmt, out: Writer) -> set[str]:
        """Before a top-level statement: reserve each main tape as `plan_reservations` decided; the
        tapes whose records here are all covered (no capacity check needed)."""
        entry = self.reservations.get(s)
        exact = set()
        for index, (tape, top) in enumerate(self.main_tapes):
            before = entry[index][0] if entry is not None else None
            if entry is None or (before is None and entry[index][1] is None):
                exact.add(tape)  # straight-line, or no records on this tape: covered already
            elif before is not None:
                self.helpers.add("reserve")
                own = self.bound_stmt(s, index, assigned_names((s,)))
                why = "all its records" if own == before else "its records and the ones after it"
                out.line(
                    f"{tape} = reserve({tape}, {top} + {before.render()})  # room for {why}: trip counts are known here"
                )
                exact.add(tape)
        return exact

    def reserve_after(self, s: Stmt, out: Writer) -> None:
        """After a top-level statement whose records checked capacity: room for the straight-line
        records that follow it."""
        entry = self.reservations.get(s)
        for index, (tape, top) in enumerate(self.main_tapes):
            after = entry[index][1] if entry is not None else None
            if after is not None and not after.is_zero:
                self.helpers.add("reserve")
                out.line(f"{tape} = reserve({tape}, {top} + {after.render()})  # room for the records after the loop")

    def bound(self, body: tuple[Stmt, ...], tape: int, inside: set[str]) -> Count | None:
        """An upper bound of the records `body` makes on tape 0 (floats) or 1 (ints), computable
        before it runs, or None."""
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
        if s in self.parallel and s not in self.replaying_loops:
            slots = self.slot_arrays.get(s)  # type: ignore[call-overload]
            if tape != 0 or not slots:
                return Count()  # its iterations record on their own tapes
            if any(names_in(b) & inside for b in (s.start, s.stop, s.step)):  # type: ignore[union-attr]
                return None
            return Count.trips(s) * self.slot_count(s, slots)  # type: ignore[operator]
        on_tape = s not in self.registers and s not in self.slots
        counts = Count.of(1 if tape == 1 and s in self.counters and on_tape else 0)
        if isinstance(s, Assign):
            if s in self.sites and self.records_array(s) and on_tape:
                return None  # an array's size is known when the record runs: it reserves its own room
            return Count.of(1 if s in self.sites and self.tape_index(s) == tape and on_tape else 0)
        if isinstance(s, If):
            then, orelse = self.bound(s.body, tape, inside), self.bound(s.orelse, tape, inside)
            if then is None or orelse is None:
                return None
            decision = Count.of(1 if tape == 1 and s in self.decisions and on_tape else 0)
            return decision + maximum(then, orelse)
        if isinstance(s, While):
            body = self.bound(s.body, tape, inside)
            return counts if body is not None and body.is_zero else None
        if isinstance(s, For):
            body = self.bound(s.body, tape, inside)
            if body is None or body.is_zero:
                return counts if body is not None else None
            if any(names_in(b) & inside for b in (s.start, s.stop, s.step)):
                return None
            return counts + Count.trips(s) * body
        return Count()

    def captured_value(self) -> str:
        """The primal result, copied where the reverse sweep will restore older elements."""
        fn = self.prog.fn
        restored = {s.var for s in self.sites if s.writes_element} | {n for p in self.permutes() for n in p.targets}
        # a checkpointed loop's reverse sweep restores its state arrays into their buffers
        restored |= {st.var for plan in self.checkpointed.values() for st in plan.state if st.array and not st.rebound}
        links = [(s.var, s.value.value) for s in walk_statements(fn.body)
                 if isinstance(s, Assign) and not s.writes_element and isinstance(s.value, cst.Name)]  # fmt: skip
        links += [pair for p in self.permutes() for pair in zip(p.targets, p.sources, strict=True)]
        changed = True
        while changed:  # `result = w`: result is w's buffer, restored with it
            changed = False
            for a, b in links:
                if (a in restored) != (b in restored):
                    restored |= {a, b}
                    changed = True
        items = []
        for v in fn.ret.values:
            array = isinstance(v, cst.Name) and self.prog.kinds.is_array(v.value) and v.value in restored
            items.append(f"{code(v)}.copy()" if array else code(v))
        value = tuple_text(items) if fn.ret.is_tuple else items[0]
        if fn.mutated:
            value = tuple_text([value, *(f"{m}.copy()" for m in fn.mutated)])
        return value

    def permutes(self) -> list[Permute]:
        return [s for s in walk_statements(self.prog.fn.body) if isinstance(s, Permute)]

    # --- reverse sweep ----------------------------------------------------------------------

    def initialize_adjoints(self, seeds: list[str], written_seeds: list[str], out: Writer) -> None:
        prog = self.prog
        seeded: dict[str, list[str]] = {}
        names = [v.value if isinstance(v, cst.Name) else None for v in prog.fn.ret.values] + list(prog.fn.mutated)
        for name, seed in zip(names, seeds + written_seeds, strict=True):
            if name is not None and prog.is_active(name):
                seeded.setdefault(name, []).append(seed)
        # rows and scratch arrays of a parallel loop, and the variables of its iterations nothing
        # else mentions, get their adjoints inside each iteration
        iteration_own = {v for plan in self.parallel.values() for v in plan.private if prog.kinds.is_array(v)}
        iteration_own |= set().union(*self.iteration_locals.values())
        for var in sorted(prog.activity.active | set(prog.wrt)):
            if var in iteration_own and var not in seeded and var not in prog.wrt:
                continue
            if var in seeded:
                first, *rest = seeded[var]
                copy = ".copy()" if prog.kinds.is_array(var) else ""
                bar = prog.bar
                out.line(f"{bar(var)} = {first}{copy}")
                for seed in rest:
                    out.line(f"{bar(var)} += {seed}")
            else:
                out.line(f"{prog.bar(var)} = {code(prog.zero(var))}")

    def reverse_sweep(self, body: tuple[Stmt, ...], out: Writer) -> None:
        for s in reversed(body):
            if s in self.parallel and s not in self.replaying_loops:
                if self.has_work(s.body):
                    self.reverse_parallel(self.parallel[s], out)  # type: ignore[index]
            elif s in self.checkpointed:
                self.reverse_checkpointed(self.checkpointed[s], out)  # type: ignore[index]
            elif isinstance(s, (For, While)):
                if self.has_work(s.body):
                    if s in self.serial_reason:
                        out.comment(f"serial adjoint of a prange loop: {self.serial_reason[s]}")  # type: ignore[index]
                    self.reverse_loop(s, out)
            elif isinstance(s, If):
                if s in self.decisions:
                    self.reverse_branch(s, out)
            elif isinstance(s, Permute):
                out.line(f"{', '.join(s.sources)} = {', '.join(s.targets)}  # undo: {s.text()}")
                if any(self.prog.is_active(t) for t in s.targets):
                    bar = self.prog.bar
                    out.line(f"{', '.join(map(bar, s.sources))} = {', '.join(map(bar, s.targets))}")
            elif isinstance(s, Assign):
                self.reverse_assign(s, out)

    def reverse_parallel(self, plan: ParallelLoop, out: Writer) -> None:
        """The adjoint of a prange loop, as a prange loop: race-free by construction (`parallel.py`),
        and the same numbers for any thread count: the iterations are split into ADJOINT_CHUNKS
        fixed chunks, each summing its shared adjoints in its own row and partial sums, which are
        then added in chunk order."""
        loop = plan.loop
        rows = self.chunk_rows[loop]
        out.comment("adjoint of a prange loop, in parallel: each iteration replays its own body on its own tape,")
        out.comment(f"adjoints at the loop index are plain stores; the iterations run in {ADJOINT_CHUNKS} fixed")
        out.comment("chunks, whose sums of shared adjoints are added in chunk order: the same for any thread count")
        slots = self.slot_arrays.get(loop)
        if slots:
            records = (Count.trips(loop) * self.slot_count(loop, slots)).render()  # type: ignore[operator]
            out.line(f"{self.main_tapes[0][1]} -= {records}  # this loop's records: one slot per iteration")
        self.replaying, self.replaying_loops = plan, {loop}
        fresh = self.prog.namer.fresh
        self.tapes = self.local_tapes = getattr(self, "local_tapes", None) or (
            (fresh("ltape"), fresh("ltop")),
            (fresh("litape"), fresh("litop")),
        )
        bar = self.prog.bar
        self.partial_sums = {v: fresh(f"{bar(v)}_i") for v in self.shared_scalar_adjoints(plan)}
        chunk_sums = {v: fresh(f"{bar(v)}_chunks") for v in self.partial_sums}
        for sums in chunk_sums.values():
            self.helpers.add("chunk_zeros")
            out.line(f"{sums} = chunk_zeros(())")
        trips, k = fresh("trips"), fresh("k")
        counted = code(loop.start) == "0" and code(loop.step) == "1"  # the loop variable counts the trips
        out.line(f"{trips} = {code(loop.stop) if counted else f'len({loop.range_text(serial=True)})'}")
        with out.block(f"for {self.chunk} in prange({ADJOINT_CHUNKS})"):
            for array in rows:  # this chunk's row: a whole slab of its own, no false sharing inside
                out.line(f"{self.views[array]} = {self.rows[array]}[{self.chunk}]")
            for tape, _, dtype, size, per_chunk in self.iteration_tapes(loop):
                if per_chunk:  # the same size for every iteration: one tape per chunk, emptied per iteration
                    shown = size.render() if size is not None else "16"
                    out.line(f"{tape} = np.empty({shown}{dtype})  # this chunk's tape, for one iteration at a time")
            first, last = (f"{trips} * {c} // {ADJOINT_CHUNKS}" for c in (self.chunk, f"({self.chunk} + 1)"))
            with out.block(f"for {loop.var if counted else k} in range({first}, {last})"):
                if not counted:
                    scaled = f"{k} * {code(paren(loop.step))}" if code(loop.step) != "1" else k
                    out.line(f"{loop.var} = {code(paren(loop.start))} + {scaled}")
                self.reverse_iteration(plan, slots, out)
                for var, partial in self.partial_sums.items():
                    out.line(f"{chunk_sums[var]}[{self.chunk}] += {partial}")
        self.replaying, self.replaying_loops, self.partial_sums = None, set(), {}
        self.tapes = self.main_tapes
        if chunk_sums:
            with out.block(f"for {self.chunk} in range({ADJOINT_CHUNKS})"):
                out.comment("the chunks' sums of shared scalar adjoints, in order")
                for var, sums in chunk_sums.items():
                    out.line(f"{bar(var)} += {sums}[{self.chunk}]")
        if rows:
            self.add_chunk_rows(rows, out)

    def add_chunk_rows(self, arrays: list[str], out: Writer) -> None:
        """Each adjoint += its chunks' rows, in chunk order (the same sum on any thread count), in
        ADJOINT_CHUNKS parts of their first axis in parallel: one prange loop for all of them (each
        prange loop is a function numba compiles on its own); the rows are zeroed for their next use."""
        part = self.prog.namer.fresh("part")
        self.helpers.add("add_chunk_rows")
        totals = ", ".join(self.prog.bar(a) for a in arrays)
        out.comment(f"{totals} += the chunks' rows in chunk order, parts of the first axis in parallel")
        with out.block(f"for {part} in prange({ADJOINT_CHUNKS})"):
            for array in arrays:
                out.line(f"add_chunk_rows({self.prog.bar(array)}, {self.rows[array]}, {part})")

    def iteration_tapes(self, loop: For) -> list[tuple[str, str, str, Count | None, bool]]:
        """The local tapes of a parallel adjoint's iterations: (tape, top, dtype, size or None if
        it grows, whether one allocation per chunk serves all its iterations: the size does not
        depend on the iteration)."""
        inside = assigned_names(loop.body) | {loop.var}
        found = []
        for index, ((tape, top), dtype) in enumerate(zip(self.tapes, ("", ", np.int64"), strict=True)):
            if self.records_on(loop.body, index):
                size = self.bound(loop.body, index, assigned_names(loop.body))
                names = set(re.findall(r"[A-Za-z_]\w*", size.render())) if size is not None else set()
                found.append((tape, top, dtype, size, not names & inside))
        return found

    def reverse_iteration(self, plan: ParallelLoop, slots: set[str] | None, out: Writer) -> None:
        """One iteration of a parallel adjoint: its body replayed with records, then its adjoint."""
        loop, bar = plan.loop, self.prog.bar
        if slots:
            out.line(f"{self.slot} = {self.slot_offset(loop, plus_one=True)}  # the end of this iteration's slot")
        exact = set()
        for tape, top, dtype, size, per_chunk in self.iteration_tapes(loop):
            exact |= {tape} if size is not None else set()
            if not per_chunk:
                out.line(f"{tape} = np.empty({size.render()}{dtype})  # this iteration's own tape")  # type: ignore[union-attr]
            out.line(f"{top} = 0")
        for line in self.iteration_placeholders(plan):
            out.line(line)
        self.forward_sweep(loop.body, out, exact, "replay")
        for var in sorted(plan.private & self.prog.activity.active):  # each iteration's own adjoints
            if not self.prog.kinds.is_array(var):
                out.line(f"{bar(var)} = 0.0")
            else:  # a row or scratch array of this iteration (replayed just above)
                out.line(f"{bar(var)} = np.zeros_like({var})")
        for partial in self.partial_sums.values():
            out.line(f"{partial} = 0.0")
        self.reverse_sweep(loop.body, out)

    def iteration_placeholders(self, plan: ParallelLoop) -> list[str]:
        """Typed values for the iteration's own variables that its adjoint reads where its replay
        may not have assigned them (`definite.py`), as the top of the function gives the others."""
        loop, local = plan.loop, self.iteration_locals[plan.loop]
        reads = {
            n
            for s in walk_statements(loop.body)
            for line in (self.adjoints.lines.get(s, []) if isinstance(s, Assign) else [])
            for n in names_in(line.value)
        }
        reads -= {s.var for s in walk_statements(loop.body) if isinstance(s, For)}  # the reversed loops set them
        reads -= self.recomputed_names()
        known = (set(self.prog.kinds.of) | set(self.prog.fn.params) | {loop.var}) - local
        missing = possibly_undefined(loop.body, known, reads & local)
        return [
            f"{var} = {placeholder(self.prog.kinds[var])}  # not assigned on every path: a typed placeholder"
            for var in sorted(missing & local)
        ]

    def shared_scalar_adjoints(self, plan: ParallelLoop) -> list[str]:
        """Shared scalars whose adjoints the loop accumulates (numba reduces a variable only where
        the prange body itself updates it, so each iteration sums into its own first)."""
        found = set()
        for s in walk_statements(plan.loop.body):
            for line in self.adjoints.lines.get(s, []) if isinstance(s, Assign) else []:
                if isinstance(line.target, cst.Name) and line.op != "=":
                    var = self.prog.namer.shadowed(line.target.value)
                    if var is not None and var not in plan.private and not self.prog.kinds.is_array(var):
                        found.add(var)
        return sorted(found)

    def records_on(self, body: tuple[Stmt, ...], index: int) -> bool:
        inside = set(walk_statements(body)) - set(self.registers) - set(self.slots)
        if index == 1 and inside & (set(self.decisions) | set(self.counters)):
            return True
        return any(self.tape_index(s) == index or index == 1 and self.saves_shape(s) for s in self.sites & inside)

    def saves_shape(self, s: Assign) -> bool:
        """A whole array's record saves its shape on the int tape."""
        return not s.writes_element and self.records_array(s)

    def chunk_buffer(self, array: str) -> str:
        """Zeros of shape (chunks, *shape of array): a contiguous slab per chunk."""
        self.helpers.add("chunk_zeros")
        return f"chunk_zeros({array}.shape)"

    def scattered(self, line: Line) -> Line:
        """In a parallel adjoint: an accumulation at a shared index goes to this chunk's row, and
        one into a shared scalar to this iteration's partial sum."""
        plan, target = self.replaying, line.target
        if plan is not None and isinstance(target, cst.Name) and line.op != "=":
            partial = self.partial_sums.get(self.prog.namer.shadowed(target.value))  # type: ignore[arg-type]
            return replace(line, target=cst.Name(partial)) if partial else line
        if plan is None or not isinstance(target, cst.Subscript) or line.op == "=" or plan.at_loop_index(target):
            return line
        array = self.prog.namer.shadowed(target.value.value)  # type: ignore[union-attr]
        if array not in self.chunk_rows[plan.loop]:
            return line
        row = subscript(self.views[array], subscript_indices(target))  # type: ignore[arg-type]
        return replace(line, target=row)

    def reverse_assign(self, s: Assign, out: Writer) -> None:
        lines = [self.scattered(line) for line in self.adjoints.lines[s]]
        if lines:
            out.comment(f"adjoint of: {s.text()}")
        if s in self.sites and self.records_array(s):
            self.restore_array(s, out)
        elif s in self.sites:
            self.restore(self.tape_of(s), code(s.target), s, out, f"restore the value {code(s.target)} had before")
        out.emit(lines)

    def restore(self, which: tuple[str, str], target: str, stmt: Stmt, out: Writer, comment: str = "") -> None:
        """`target = ` the value recorded for `stmt` (popped from its tape, or its register)."""
        suffix = f"  # {comment}" if comment else ""
        if stmt in self.slots:
            out.line(f"{self.slot} -= 1")
            out.line(f"{target} = {self.main_tapes[0][0]}[{self.slot}]{suffix}")
            return
        register = self.registers.get(stmt)
        if register is not None:
            out.line(f"{target} = {register}{suffix}")
            return
        tape, top = which
        out.line(f"{top} -= 1")
        out.line(f"{target} = {tape}[{top}]{suffix}")

    def reverse_branch(self, s: If, out: Writer) -> None:
        taken = self.registers.get(s)
        if taken is None:
            taken = self.prog.namer.fresh("taken")
            self.restore(self.tapes[1], taken, s, out)
        then, orelse = self.has_work(s.body), self.has_work(s.orelse)
        with out.block(f"if {taken} == {1 if then else 0}"):
            self.reverse_sweep(s.body if then else s.orelse, out)
        if then and orelse:
            with out.block("else"):
                self.reverse_sweep(s.orelse, out)

    def reverse_loop(self, loop: For | While, out: Writer) -> None:
        counter = self.counters.get(loop)
        if counter and loop not in self.registers:
            self.restore(self.tapes[1], counter, loop, out)
        if isinstance(loop, While):
            with out.block(f"for {self.prog.namer.fresh('_')} in range({counter})"):
                self.reverse_sweep(loop.body, out)
            return
        header, index = self.reversed_range(loop, counter)
        with out.block(header):
            if index:
                out.line(index)
            prefix = self.prefixes.get(loop)
            if prefix:
                out.comment("the values this iteration computes first, again (cheaper than records)")
                self.forward_sweep(prefix, out, set(), "primal")
            self.reverse_sweep(loop.body, out)

    def recomputed_names(self) -> set[str]:
        """The variables of recomputed prefixes: each reversed iteration assigns them before its
        adjoints read them (and nothing outside the loop mentions them)."""
        return set().union(*(assigned_names(prefix) for prefix in self.prefixes.values()))

    def returned_names(self) -> set[str]:
        return {v.value for v in self.prog.fn.ret.values if isinstance(v, cst.Name)}

    def scalar_dtype(self, var: str) -> str | None:
        """ "int", "float" or "bool" for a scalar variable, None for an array or a tuple."""
        kind = self.prog.kinds.of.get(var)
        if kind is None or kind.is_array or getattr(kind, "is_tuple", False):
            return None
        return kind.dtype

    def reversed_range(self, loop: For, counter: str | None) -> tuple[str, str | None]:
        """The header of the reversed loop, and a line that sets the loop variable if it cannot."""
        start, stop, step = loop.start, loop.stop, loop.step
        if not is_number(step):
            k = self.prog.namer.fresh("k")
            trips = counter or f"len(range({code(start)}, {code(stop)}, {code(step)}))"
            return f"for {k} in range({trips} - 1, -1, -1)", f"{loop.var} = {code(start)} + {k} * {code(paren(step))}"
        k = int(number_value(step))
        toward = -1 if k > 0 else 1  # one step before start, in the direction the loop went
        first = _offset(start, toward)
        if counter:
            last = f"{code(paren(start))} + ({counter} - 1) * {k}" if code(start) != "0" else f"({counter} - 1) * {k}"
            if k == 1:
                last = f"{counter} - 1" if code(start) == "0" else f"{code(paren(start))} + {counter} - 1"
        elif k in (1, -1):
            last = _offset(stop, -k)
        else:
            self.helpers.add("last_index")
            last = f"last_index({code(start)}, {code(stop)}, {k})"
        tail = "" if -k == 1 else f", {-k}"
        return f"for {loop.var} in range({last}, {first}{tail})", None


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


def _offset(node: cst.BaseExpression, delta: int) -> str:
    if isinstance(node, cst.Integer):
        return str(int(node.value) + delta)
    sign = "+" if delta > 0 else "-"
    return f"{code(paren(node))} {sign} {abs(delta)}"
