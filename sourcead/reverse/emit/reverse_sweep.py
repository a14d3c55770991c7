"""The reverse sweep of reverse mode: the statements backwards, each restoring what it overwrote
(its `Recording`'s second half) before its adjoint lines (`adjoint.py`) run.

A `for` loop runs its range backwards (recomputing its body's prefix first where the plan says,
`recompute.py`); a `while` loop (or a `for` with a `break`) runs its recorded trip count; an `if`
takes its recorded branch. A prange loop with a parallel adjoint becomes a prange loop over fixed
chunks of its iterations: each iteration replays its own body on its own tape (the forward sweep
in mode "replay") and runs its adjoint; shared adjoints are summed per chunk and added in chunk
order, so the gradient is the same, bit for bit, on any thread count.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from ...analysis.definite import placeholder, possibly_undefined
from ...ir.core import Assign, For, If, Permute, Stmt, While, walk_statements
from ...ir.counts import Count
from ...ir.emit import Line, Writer
from ...ir.exprs import Rename, code, is_number, names_in, number_value, paren, subscript, subscript_indices
from ..parallel import ADJOINT_CHUNKS, ParallelLoop
from ..plan import ReversePlan
from ..recording import InRegister, Where
from .scope import Dispatch, Emission, Scope


class ReverseSweep:
    """The reverse sweep in one scope; `dispatch` writes what another emitter writes (the forward
    sweep of replays and recomputed prefixes, checkpointed loops, gathered contributions)."""

    def __init__(self, plan: ReversePlan, emission: Emission, scope: Scope, dispatch: Dispatch):
        self.plan, self.emission, self.scope, self.dispatch = plan, emission, scope, dispatch
        self.prog = plan.prog
        self.forward = dispatch.forward(plan, emission, scope)  # for replays and recomputed prefixes

    def within(self, scope: Scope) -> ReverseSweep:
        """This sweep in another scope."""
        return ReverseSweep(self.plan, self.emission, scope, self.dispatch)

    def sweep(self, body: tuple[Stmt, ...], out: Writer) -> None:
        plan = self.plan
        for s in reversed(body):
            if s in plan.parallel:
                if plan.has_work(s.body):  # type: ignore[union-attr]
                    self.parallel_adjoint(plan.parallel[s], out)  # type: ignore[index]
            elif isinstance(s, (For, While)) and s in plan.checkpointed:
                self.dispatch.reverse_checkpointed(plan.checkpointed[s], self, out)
            elif isinstance(s, (For, While)):
                if plan.has_work(s.body):
                    if s in plan.serial_reason:
                        out.comment(f"serial adjoint of a prange loop: {plan.serial_reason[s]}")  # type: ignore[index]
                    self.loop(s, out)
            elif isinstance(s, If):
                if s in plan.decisions:
                    self.branch(s, out)
            elif isinstance(s, Permute):
                out.line(f"{', '.join(s.sources)} = {', '.join(s.targets)}  # undo: {s.text()}")
                if any(self.prog.is_active(t) for t in s.targets):
                    bar = self.prog.bar
                    out.line(f"{', '.join(map(bar, s.sources))} = {', '.join(map(bar, s.targets))}")
            elif isinstance(s, Assign):
                self.assign(s, out)

    def prefix_views(self) -> set[Assign]:
        """The recomputed prefixes' views with a derivative (their adjoints live in one iteration)."""
        return {a for prefix in self.plan.prefixes.values() for a in _active_views(self.prog, prefix)}

    def restore(self, s: Stmt, target: str, out: Writer, comment: str = "") -> None:
        """`target = ` the value recorded for `s` (its recording's second half)."""
        where = Where(self.scope.tapes, frozenset(), self.emission.helpers, self.prog.namer.fresh)
        self.plan.recordings[s].load(target, comment, out, where)

    def assign(self, s: Assign, out: Writer) -> None:
        lines = [self.scattered(line) for line in self.scope.residual.get(s, self.plan.adjoints.lines[s])]
        if s in self.prefix_views():  # zeroed where the reversed iteration starts (`recompute`)
            reset = f"zeros_like({self.prog.bar(s.var)})"
            lines = [line for line in lines if not (line.op == "=" and code(line.value) == reset)]
        held = self.plan.held.get(s)
        if not any(code(line.target) == held for line in lines):
            held = None  # not computed in what is left of its adjoint (a gather took its use)
        restored = s in self.plan.sites
        if held is not None and restored and self.prog.kinds.is_array(s.var) and not s.writes_element:
            held = None  # an array's restore may write the elements a name for it would read
        if held is not None:  # e's value is x's here (ReversePlan.held): read, not computed again
            lines = [line for line in lines if code(line.target) != held]
            if not restored and not s.writes_element:
                rename = Rename({held: s.target})
                lines = [replace(line, value=line.value.visit(rename)) for line in lines]  # type: ignore[arg-type]
        accumulators = self.plan.accumulators.get(s)
        if accumulators:  # into an element its loop sums locally (ReversePlan.promoted)
            lines = [
                replace(line, target=cst.Name(accumulators[code(line.target)]))
                if code(line.target) in accumulators and line.op != "="
                else line
                for line in lines
            ]
        if lines:
            out.comment(f"adjoint of: {s.text()}")
        if held is not None and restored:
            out.line(f"{held} = {code(s.target)}  # its value, before the old one is restored")
        elif held is not None and s.writes_element:
            out.line(f"{held} = {code(s.target)}  # its value, read rather than computed again")
        if restored:
            target = code(s.target)
            self.restore(s, target, out, f"restore the value {target} had before")
            lines = self.reset_to_restored(s, lines)
        elif s in self.plan.reshaped:
            shape = self.prog.namer.fresh("shape")
            self.restore(s, shape, out, f"the shape {s.var} had before")
            if s.var in self.plan.shape_only:  # the reverse sweep reads no value of it
                out.line(f"{s.var} = np.empty({shape})  # {s.var} is read only for its shape")
            lines = self.reset_to_restored(s, lines, f"np.zeros({shape})")
        out.emit(lines)

    def reset_to_restored(self, s: Assign, lines: list, zero: str = "") -> list:
        """An array's adjoint starts again at zero shaped like the array restored just now (or
        `zero`, of the shape recorded), not like the adjoint it replaces: `t = np.sin(r[:k])` in a
        loop changes `t`'s shape every iteration."""
        if s.writes_element or not self.prog.kinds.is_array(s.var):
            return lines
        bar = self.prog.bar(s.var)
        reset = f"zeros_like({bar})"
        return [
            replace(line, value=cst.parse_expression(zero or f"zeros_like({s.var})"))
            if line.op == "=" and code(line.target) == bar and code(line.value) == reset
            else line
            for line in lines
        ]

    def branch(self, s: If, out: Writer) -> None:
        recording = self.plan.recordings[s]
        if isinstance(recording, InRegister):  # once per replayed parallel iteration: read it in place
            taken = recording.name
        else:
            taken = self.prog.namer.fresh("taken")
            self.restore(s, taken, out)
        then, orelse = self.plan.has_work(s.body), self.plan.has_work(s.orelse)
        with out.block(f"if {taken} == {1 if then else 0}"):
            self.sweep(s.body if then else s.orelse, out)
        if then and orelse:
            with out.block("else"):
                self.sweep(s.orelse, out)

    def loop(self, loop: For | While, out: Writer) -> None:
        counter = self.plan.counters.get(loop)
        if counter:
            self.restore(loop, counter, out)  # a register that is the counter itself writes nothing
        if isinstance(loop, While):
            with out.block(f"for {self.prog.namer.fresh('_')} in range({counter})"):
                self.sweep(loop.body, out)
            return
        guard = self.plan.zero_guard(loop)
        if not guard:
            self.reversed_for(loop, counter, out)
            return
        with out.block(f"if {' or '.join(f'{g} != 0.0' for g in guard)}"):
            out.comment("else this loop's adjoints would add only zeros: it is skipped")
            self.reversed_for(loop, counter, out)

    def reversed_for(self, loop: For, counter: str | None, out: Writer) -> None:
        gather = self.plan.gathers.get(loop)
        if gather is not None:  # its contributions at constant offsets first, then the rest
            self.dispatch.gathered(self, loop, gather, out, parallel=False)
            scope = replace(self.scope, residual={**self.scope.residual, **gather.residual})
            self.within(scope).reversed_rest(loop, counter, out)
            return
        self.reversed_rest(loop, counter, out)

    def reversed_rest(self, loop: For, counter: str | None, out: Writer) -> None:
        """The reversed loop, in its own order or backwards (what a gather left, in this scope),
        with the elements it adds into in every iteration summed locally first."""
        promoted = self.plan.promoted.get(loop, ())
        for p in promoted:
            out.line(f"{p.local} = 0.0  # what every iteration adds into {code(p.target)}")
        if loop in self.plan.forward_reversals:
            self.forward_reversal(loop, out)
        else:
            self.backward(loop, counter, out)
        for p in promoted:
            with out.block(f"if {p.local} != 0.0"):  # an empty loop indexes nothing
                out.line(f"{code(p.target)} += {p.local}")

    def backward(self, loop: For, counter: str | None, out: Writer) -> None:
        header, index, left = self.reversed_range(loop, counter)
        with out.block(header):
            if index:
                out.line(index)
            prefix = self.plan.prefixes.get(loop)
            if prefix:
                self.recompute(prefix, out)
            self.sweep(loop.body, out)
            exit_ = self.plan.early_exit(loop)
            if exit_ is not None:
                self.early_exit(left, *exit_, out)

    def recompute(self, prefix: tuple[Stmt, ...], out: Writer) -> None:
        """A reversed iteration's prefix computed again (`recompute.py`), then the adjoints of its
        views with a derivative zeroed, shaped like this iteration's views."""
        out.comment("the values this iteration computes first, again (cheaper than records)")
        self.forward.sweep(prefix, out, set(), "primal")
        for var in sorted({a.var for a in _active_views(self.prog, prefix)}):
            out.line(f"{self.prog.bar(var)} = zeros_like({var})  # this iteration's {var}")

    def early_exit(self, left: str, guard: tuple[str, ...], counts: tuple[Count, Count], out: Writer) -> None:
        """Stop reversing a loop once its body's adjoints are all zero (`ReversePlan.early_exit`),
        popping the records of the `left` iterations skipped."""
        out.comment("once these adjoints are zero, the earlier iterations would add only zeros: skipped")
        with out.block(f"if {' and '.join(f'{g} == 0.0' for g in guard)}"):
            for (_, top), count in zip(self.scope.tapes, counts, strict=True):
                if not count.is_zero:
                    per = count.render(atom=True, exact=True)
                    skipped = left if per == "1" else f"{per} * {left if left.isidentifier() else f'({left})'}"
                    out.line(f"{top} -= {skipped}  # their records")
            out.line("break")

    def forward_reversal(self, loop: For, out: Writer) -> None:
        """The reversal of a loop whose iterations' adjoints are independent
        (`ReversePlan.forward_reversals`), in the loop's own order: the tapes drop the loop's
        records first, and each iteration restores its own from its offset, last first."""
        plan, fresh = self.plan, self.prog.namer.fresh
        counts = plan.forward_reversals[loop]
        k = int(number_value(loop.step))
        position = loop.var if code(loop.start) == "0" else f"{loop.var} - {code(paren(loop.start))}"
        if k != 1:
            position = f"({position}) // {k}"
        tapes, marks = list(self.scope.tapes), []
        for index, count in enumerate(counts):
            if count:
                tape, top = tapes[index]
                out.line(f"{top} -= {(Count.trips(loop) * Count.of(count)).render(exact=True)}  # this loop's records")
                mark = fresh(f"{top}_at")
                marks.append(f"{mark} = {top} + ({position} + 1) * {count}" if count != 1 else
                             f"{mark} = {top} + {position} + 1")  # fmt: skip
                tapes[index] = (tape, mark)
        if marks:
            out.comment("its iterations' adjoints are independent: run in the loop's order, each restoring")
            out.comment("its own records from the end of its part of the tape")
        else:
            out.comment("its iterations' adjoints are independent: run in the loop's order")
        inner = self.within(replace(self.scope, tapes=tuple(tapes)))  # type: ignore[arg-type]
        with out.block(f"for {loop.var} in {loop.range_text(serial=True)}"):
            for line in marks:
                out.line(line)
            prefix = plan.prefixes.get(loop)
            if prefix:
                self.recompute(prefix, out)
            inner.sweep(loop.body, out)

    def reversed_range(self, loop: For, counter: str | None) -> tuple[str, str | None, str]:
        """The header of the reversed loop, a line that sets the loop variable if it cannot, and
        the number of iterations left to reverse after the current one."""
        start, stop, step = loop.start, loop.stop, loop.step
        if not is_number(step):
            j = self.prog.namer.fresh("k")
            trips = counter or f"len(range({code(start)}, {code(stop)}, {code(step)}))"
            index = f"{loop.var} = {code(start)} + {j} * {code(paren(step))}"
            return f"for {j} in range({trips} - 1, -1, -1)", index, j
        k = int(number_value(step))
        left = loop.var if code(start) == "0" else f"{loop.var} - {code(paren(start))}"
        if k != 1:
            left = f"({left}) // {k}"
        toward = -1 if k > 0 else 1  # one step before start, in the direction the loop went
        first = _offset(start, toward)
        if counter:
            last = f"{code(paren(start))} + ({counter} - 1) * {k}" if code(start) != "0" else f"({counter} - 1) * {k}"
            if k == 1:
                last = f"{counter} - 1" if code(start) == "0" else f"{code(paren(start))} + {counter} - 1"
        elif k in (1, -1):
            last = _offset(stop, -k)
        else:
            self.emission.helpers.add("last_index")
            last = f"last_index({code(start)}, {code(stop)}, {k})"
        tail = "" if -k == 1 else f", {-k}"
        return f"for {loop.var} in range({last}, {first}{tail})", None, left

    # --- the adjoint of a prange loop, in parallel ---------------------------------------------

    def parallel_adjoint(self, loop_plan: ParallelLoop, out: Writer) -> None:
        """The adjoint of a prange loop, as a prange loop: race-free by construction (`parallel.py`),
        and the same numbers for any thread count: the iterations are split into ADJOINT_CHUNKS
        fixed chunks, each summing its shared adjoints in its own row and partial sums, which are
        then added in chunk order."""
        plan, loop, fresh, bar = self.plan, loop_plan.loop, self.prog.namer.fresh, self.prog.bar
        rows = plan.chunk_rows[loop]
        gather = plan.gathers.get(loop)
        residual = dict(self.scope.residual)
        if gather is not None:  # its contributions at constant offsets first, each row in parallel
            self.dispatch.gathered(self, loop, gather, out, parallel=True)
            residual.update(gather.residual)
        out.comment("adjoint of a prange loop, in parallel: each iteration replays its own body on its own tape,")
        out.comment(f"adjoints at the loop index are plain stores; the iterations run in {ADJOINT_CHUNKS} fixed")
        out.comment("chunks, whose sums of shared adjoints are added in chunk order: the same for any thread count")
        if plan.slot_arrays.get(loop):
            top = plan.main_tapes[0][1]
            out.line(
                f"{top} -= {plan.slot_records(loop).render(exact=True)}  # this loop's records: one slot per iteration"
            )
        partial_sums = {v: fresh(f"{bar(v)}_i") for v in self.shared_scalar_adjoints(loop_plan)}
        chunk_sums = {v: fresh(f"{bar(v)}_chunks") for v in partial_sums}
        for sums in chunk_sums.values():
            self.emission.helpers.add("chunk_zeros")
            out.line(f"{sums} = chunk_zeros(())")
        trips, k = fresh("trips"), fresh("k")
        counted = code(loop.start) == "0" and code(loop.step) == "1"  # the loop variable counts the trips
        out.line(f"{trips} = {code(loop.stop) if counted else f'len({loop.range_text(serial=True)})'}")
        scope = Scope(plan.local_tapes, loop_plan, partial_sums, residual=residual)
        iteration = self.within(scope)
        chunk = plan.chunk
        with out.block(f"for {chunk} in prange({ADJOINT_CHUNKS})"):
            for array in rows:  # this chunk's row: a whole slab of its own, no false sharing inside
                out.line(f"{plan.views[array]} = {plan.rows[array]}[{chunk}]")
            for tape, _, dtype, size, per_chunk in plan.iteration_tapes(loop):
                if per_chunk:  # the same size for every iteration: one tape per chunk, emptied per iteration
                    shown = size.render() if size is not None else "16"
                    out.line(f"{tape} = np.empty({shown}{dtype})  # this chunk's tape, for one iteration at a time")
            first, last = (f"{trips} * {c} // {ADJOINT_CHUNKS}" for c in (chunk, f"({chunk} + 1)"))
            with out.block(f"for {loop.var if counted else k} in range({first}, {last})"):
                if not counted:
                    scaled = f"{k} * {code(paren(loop.step))}" if code(loop.step) != "1" else k
                    out.line(f"{loop.var} = {code(paren(loop.start))} + {scaled}")
                iteration.iteration(loop_plan, out)
                for var, partial in partial_sums.items():
                    out.line(f"{chunk_sums[var]}[{chunk}] += {partial}")
        if chunk_sums:
            with out.block(f"for {chunk} in range({ADJOINT_CHUNKS})"):
                out.comment("the chunks' sums of shared scalar adjoints, in order")
                for var, sums in chunk_sums.items():
                    out.line(f"{bar(var)} += {sums}[{chunk}]")
        if rows:
            self.add_chunk_rows(rows, out)

    def add_chunk_rows(self, arrays: tuple[str, ...], out: Writer) -> None:
        """Each adjoint += its chunks' rows, in chunk order (the same sum on any thread count), in
        ADJOINT_CHUNKS parts of their first axis in parallel: one prange loop for all of them (each
        prange loop is a function numba compiles on its own); the rows are zeroed for their next use."""
        part = self.prog.namer.fresh("part")
        self.emission.helpers.add("add_chunk_rows")
        totals = ", ".join(self.prog.bar(a) for a in arrays)
        out.comment(f"{totals} += the chunks' rows in chunk order, parts of the first axis in parallel")
        with out.block(f"for {part} in prange({ADJOINT_CHUNKS})"):
            for array in arrays:
                out.line(f"add_chunk_rows({self.prog.bar(array)}, {self.plan.rows[array]}, {part})")

    def iteration(self, loop_plan: ParallelLoop, out: Writer) -> None:
        """One iteration of a parallel adjoint (this sweep's scope): its body replayed with records,
        then its adjoint."""
        plan, loop, bar = self.plan, loop_plan.loop, self.prog.bar
        if plan.slot_arrays.get(loop):
            out.line(f"{plan.slot} = {plan.slot_offset(loop, plus_one=True)}  # the end of this iteration's slot")
        exact = set()
        for tape, top, dtype, size, per_chunk in plan.iteration_tapes(loop):
            exact |= {tape} if size is not None else set()
            if not per_chunk:
                out.line(f"{tape} = np.empty({size.render()}{dtype})  # this iteration's own tape")  # type: ignore[union-attr]
            out.line(f"{top} = 0")
        for line in self.iteration_placeholders(loop_plan):
            out.line(line)
        self.forward.sweep(loop.body, out, exact, "replay")
        for var in sorted(loop_plan.private & self.prog.activity.active):  # each iteration's own adjoints
            if not self.prog.kinds.is_array(var):
                out.line(f"{bar(var)} = 0.0")
            else:  # a row or scratch array of this iteration (replayed just above)
                out.line(f"{bar(var)} = zeros_like({var})")
        for partial in self.scope.partial_sums.values():
            out.line(f"{partial} = 0.0")
        self.sweep(loop.body, out)

    def iteration_placeholders(self, loop_plan: ParallelLoop) -> list[str]:
        """Typed values for the iteration's own variables that its adjoint reads where its replay
        may not have assigned them (`definite.py`), as the top of the function gives the others."""
        plan, loop = self.plan, loop_plan.loop
        local = plan.iteration_locals[loop]
        reads = {
            n
            for s in walk_statements(loop.body)
            for line in (plan.adjoints.lines.get(s, []) if isinstance(s, Assign) else [])
            for n in names_in(line.value)
        }
        reads |= plan.read_again(loop.body)
        reads -= {s.var for s in walk_statements(loop.body) if isinstance(s, For)}  # the reversed loops set them
        reads -= plan.recomputed_names()
        known = (set(self.prog.kinds.of) | set(self.prog.fn.params) | {loop.var}) - local
        missing = possibly_undefined(loop.body, known, reads & local)
        return [
            f"{var} = {placeholder(self.prog.kinds[var])}  # not assigned on every path: a typed placeholder"
            for var in sorted(missing & local)
        ]

    def shared_scalar_adjoints(self, loop_plan: ParallelLoop) -> list[str]:
        """Shared scalars whose adjoints the loop accumulates (numba reduces a variable only where
        the prange body itself updates it, so each iteration sums into its own first)."""
        found = set()
        for s in walk_statements(loop_plan.loop.body):
            for line in self.plan.adjoints.lines.get(s, []) if isinstance(s, Assign) else []:
                if isinstance(line.target, cst.Name) and line.op != "=":
                    var = self.prog.namer.shadowed(line.target.value)
                    if var is not None and var not in loop_plan.private and not self.prog.kinds.is_array(var):
                        found.add(var)
        return sorted(found)

    def scattered(self, line: Line) -> Line:
        """In a parallel adjoint: an accumulation at a shared index, or into a whole shared array,
        goes to this chunk's row, and one into a shared scalar to this iteration's partial sum."""
        replaying, target = self.scope.replaying, line.target
        if replaying is not None and isinstance(target, cst.Name) and line.op != "=":
            var = self.prog.namer.shadowed(target.value)
            partial = self.scope.partial_sums.get(var) if var is not None else None
            if partial is None and var in self.plan.chunk_rows[replaying.loop]:
                partial = self.plan.views[var]  # a whole shared array: this chunk's row of it
            return replace(line, target=cst.Name(partial)) if partial else line
        if replaying is None or not isinstance(target, cst.Subscript) or line.op == "=":
            return line
        if replaying.at_loop_index(target):
            return line
        assert isinstance(target.value, cst.Name)  # an adjoint array, by its name
        array = self.prog.namer.shadowed(target.value.value)
        if array is None or array not in self.plan.chunk_rows[replaying.loop]:
            return line
        row = subscript(self.plan.views[array], subscript_indices(target))
        return replace(line, target=row)


def _offset(node: cst.BaseExpression, delta: int) -> str:
    if isinstance(node, cst.Integer):
        return str(int(node.evaluated_value) + delta)
    sign = "+" if delta > 0 else "-"
    return f"{code(paren(node))} {sign} {abs(delta)}"


def _active_views(prog, prefix: tuple[Stmt, ...]) -> list[Assign]:
    """The assignments of arrays with a derivative in a recomputed prefix: views (`recompute.py`)."""
    return [
        a
        for a in walk_statements(prefix)
        if isinstance(a, Assign) and not a.writes_element and prog.kinds.is_array(a.var) and prog.is_active(a.var)
    ]
