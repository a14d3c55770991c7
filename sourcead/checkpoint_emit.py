"""The code of checkpointed loops, in both sweeps (`checkpoint.py` decides which loops and their
state; `checkpoint_runtime.py` holds the schedules the code steps through).

Forward sweep: the loop as the user wrote it, without records, keeping snapshots of its state:
offline (a `for` loop whose step count is known at its entry) where revolve's first pass puts
them; online (a `while` loop, a `for` loop with a `break`) where `checkpoint_place` puts them as
the loop runs. Reverse sweep: a driver loop over the schedule's actions (restore a snapshot,
store one, advance steps without records, or run one step with its records followed at once by
its adjoint), then the state at the loop's entry, which the adjoints before the loop read.

`CheckpointedLoops` is a part of `reverse.Reverser`: it calls the sweeps of the loop's body.
"""

from __future__ import annotations

from .checkpoint import Checkpointed
from .core import For, While, assigned_names, has_break
from .emit import Writer
from .exprs import code, paren

_DTYPES = {"float": "", "int": ", np.int64", "bool": ", np.bool_"}


class CheckpointedLoops:
    def forward_checkpointed(self, plan: Checkpointed, out: Writer) -> None:
        """The loop as the user wrote it, without records, taking the schedule's snapshots."""
        names = self.checkpoint_names(plan.loop)
        state = ", ".join(st.var for st in plan.state)
        if plan.online:
            out.comment("checkpointed loop (online: its step count is known only when it ends): no records here,")
            out.comment(f"only snapshots of {state}, placed as it runs (Wang, Moin and Iaccarino's levels);")
            out.comment("its reverse sweep runs each step again from the nearest one, with its records")
        else:
            out.comment("checkpointed loop (binomial checkpointing, as revolve): no records here, only snapshots")
            out.comment(f"of {state}; its reverse sweep runs each step again from the nearest one, with its records")
        for st in plan.state:
            if not st.array and st.var not in plan.defined | self.placed:
                out.line(f"{st.var} = {self.typed_zero(st.var)}  # part of the state before its first step")
        sizes = [f"{st.var}.nbytes" for st in plan.state if st.array]
        scalars = sum(1 for st in plan.state if not st.array)
        sizes += [str(8 * scalars)] if scalars else []
        budget = -1 if self.memory is None else self.memory
        if plan.online:
            self.forward_online(plan, names, " + ".join(sizes), budget, out)
        else:
            self.forward_offline(plan, names, " + ".join(sizes), budget, out)

    def forward_offline(self, plan: Checkpointed, names: dict[str, str], size: str, budget: int, out: Writer) -> None:
        loop = plan.loop
        self.helpers |= {"checkpoint_slots", "checkpoint_schedule"}
        out.line(f"{names['steps']} = len({loop.range_text()})")  # type: ignore[union-attr]
        why = "about sqrt(steps) snapshots" if budget < 0 else f"as many snapshots as {budget} bytes hold"
        out.line(f"{names['slots']} = checkpoint_slots({names['steps']}, {size}, {budget})  # {why}")
        out.line(f"{names['stores']}, {names['schedule']} = checkpoint_schedule({names['steps']}, {names['slots']})")
        self.allocate_snapshots(plan, names["slots"], out)
        out.line(f"{names['next']} = 0")
        out.line(f"{names['j']} = 0")
        with out.block(f"for {loop.var} in {loop.range_text()}"):  # type: ignore[union-attr]
            stores = names["stores"]
            test = f"{names['next']} < {stores}.shape[0] and {stores}[{names['next']}, 0] == {names['j']}"
            with out.block(f"if {test}"):
                self.store_state(plan, f"{stores}[{names['next']}, 1]", out)
                out.line(f"{names['next']} += 1")
            out.line(f"{names['j']} += 1")
            self.forward_sweep(loop.body, out, set(), "primal")

    def forward_online(self, plan: Checkpointed, names: dict[str, str], size: str, budget: int, out: Writer) -> None:
        loop, table, slot = plan.loop, names["table"], names["slot"]
        self.helpers |= {"checkpoint_online", "checkpoint_capacity", "checkpoint_place", "checkpoint_online_plan"}
        growing = budget < 0
        why = "about sqrt(steps so far) snapshots" if growing else f"as many snapshots as {budget} bytes hold"
        out.line(f"{table} = checkpoint_online({size}, {budget})  # {why}")
        self.allocate_snapshots(plan, f"checkpoint_capacity({table})", out)
        out.line(f"{names['j']} = 0")
        header = f"while {code(loop.test)}" if isinstance(loop, While) else f"for {loop.var} in {loop.range_text()}"
        with out.block(header):
            out.line(f"{table}, {slot} = checkpoint_place({table}, {names['j']})")
            with out.block(f"if {slot} >= 0"):
                if growing:
                    self.grow_snapshots(plan, f"{slot} + 1", out)
                self.store_state(plan, slot, out)
            out.line(f"{names['j']} += 1")
            self.forward_sweep(loop.body, out, set(), "primal")
        out.line(f"{names['steps']} = {names['j']}")
        out.line(f"{names['slots']}, {names['schedule']} = checkpoint_online_plan({table}, {names['steps']})")
        if growing:
            self.grow_snapshots(plan, names["slots"], out)

    def allocate_snapshots(self, plan: Checkpointed, rows: str, out: Writer) -> None:
        snaps = self.snapshots[plan.loop]
        for st in plan.state:
            shape = f"({rows},) + {st.var}.shape" if st.array else rows
            out.line(f"{snaps[st.var]} = np.empty({shape}{_DTYPES[st.dtype]})")

    def grow_snapshots(self, plan: Checkpointed, rows: str, out: Writer) -> None:
        self.helpers.add("checkpoint_grow")
        snaps = self.snapshots[plan.loop]
        for st in plan.state:
            out.line(f"{snaps[st.var]} = checkpoint_grow({snaps[st.var]}, {rows})")

    def reverse_checkpointed(self, plan: Checkpointed, out: Writer) -> None:
        """The schedule's actions in order: restore, store, advance without records, and for each
        step (last first) the step with its records followed by its adjoint."""
        loop, names = plan.loop, self.checkpoint_names(plan.loop)
        self.helpers.add("checkpoint_next")
        which = f"loop over {loop.var}" if isinstance(loop, For) else "while loop"
        out.comment(f"adjoint of the checkpointed {which}: its steps again from snapshots, as scheduled")
        with out.block("while True"):
            what, a, b, slot = names["do"], names["a"], names["b"], names["slot"]
            schedule = names["schedule"]
            out.line(f"{schedule}, {what}, {a}, {b}, {slot} = checkpoint_next({schedule}, {names['slots']})")
            with out.block(f"if {what} < 0"):
                out.line("break  # every step reversed")
            with out.block(f"if {what} == 0"):
                out.comment(f"restore the state before step {a}")
                self.restore_state(plan, slot, out)
            with out.block(f"elif {what} == 1"):
                out.comment(f"snapshot the state before step {a}")
                self.store_state(plan, slot, out)
            with out.block(f"elif {what} == 2"):
                out.comment(f"steps {a} .. {b} - 1 again, without records")
                with out.block(f"for {names['j']} in range({a}, {b})"):
                    self.set_step(loop, names["j"], out)
                    self.forward_sweep(loop.body, out, set(), "primal")
            with out.block("else"):
                out.comment(f"step {a} with its records, then its adjoint")
                self.set_step(loop, a, out)
                exact = set()
                inside = assigned_names(loop.body)
                for index, (tape, top) in enumerate(self.main_tapes):
                    size = self.bound(loop.body, index, inside) if self.records_on(loop.body, index) else None
                    if size is not None and not size.is_zero:
                        self.helpers.add("reserve")
                        out.line(f"{tape} = reserve({tape}, {top} + {size.render()})  # room for this step's records")
                        exact.add(tape)
                if has_break(loop):  # the last step ends in the loop's `break`: it ends this block only
                    with out.block(f"for {names['once']} in range(1)"):
                        self.forward_sweep(loop.body, out, exact, "normal")
                else:
                    self.forward_sweep(loop.body, out, exact, "normal")
                self.reverse_sweep(loop.body, out)
        with out.block(f"if {names['steps']} > 0"):
            out.comment("the state at the loop's entry, which the adjoints before it read")
            self.restore_state(plan, "0", out)

    def checkpoint_names(self, loop: For | While) -> dict[str, str]:
        if loop not in self._checkpoint_names:
            fresh = self.prog.namer.fresh
            keys = ("steps", "slots", "stores", "schedule", "next", "j", "do", "a", "b", "slot", "table", "once")
            self._checkpoint_names[loop] = {key: fresh(f"ck_{key}") for key in keys}
        return self._checkpoint_names[loop]

    def store_state(self, plan: Checkpointed, slot: str, out: Writer) -> None:
        snaps = self.snapshots[plan.loop]
        for st in plan.state:
            out.line(f"{snaps[st.var]}[{slot}] = {st.var}")

    def restore_state(self, plan: Checkpointed, slot: str, out: Writer) -> None:
        snaps = self.snapshots[plan.loop]
        for st in plan.state:
            if not st.array:
                out.line(f"{st.var} = {snaps[st.var]}[{slot}]")
            elif st.rebound:
                out.line(f"{st.var} = {snaps[st.var]}[{slot}].copy()")
            else:
                out.line(f"{st.var}[{', '.join([':'] * st.ndim)}] = {snaps[st.var]}[{slot}]")

    def set_step(self, loop: For | While, j: str, out: Writer) -> None:
        """The loop variable at step `j` (counted from 0); a `while` loop has none."""
        if isinstance(loop, While):
            return
        start, step = code(loop.start), code(paren(loop.step))
        scaled = j if step == "1" else f"{j} * {step}"
        value = scaled if start == "0" else f"{code(paren(loop.start))} + {scaled}"
        out.line(f"{loop.var} = {value}")
