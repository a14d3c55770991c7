"""The code of checkpointed loops, in both sweeps (`checkpoint.py` decides which loops and their
state; `runtime/checkpoint.py` holds the schedules the code steps through).

Forward sweep: the loop as the user wrote it, without records, keeping snapshots of its state:
offline (a `for` loop whose step count is known at its entry) where revolve's first pass puts
them; online (a `while` loop, a `for` loop with a `break`) where `checkpoint_place` puts them as
the loop runs. Reverse sweep: a driver loop over the schedule's actions (restore a snapshot,
store one, advance steps without records, or run one step with its records followed at once by
its adjoint), then the state at the loop's entry, which the adjoints before the loop read.

The forward sweep calls `forward_checkpointed`, the reverse sweep `reverse_checkpointed` (through
the dispatcher, `dispatch.py`); each calls the sweeps back for the loop's body (without records,
or one step with its records), through what `scope.py` says of them.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...analysis.definite import placeholder
from ...ir.core import For, While, assigned_names, has_break
from ...ir.emit import Writer
from ...ir.exprs import code, paren
from ..checkpoint import Checkpointed
from .scope import ForwardWriter, ReverseWriter

_DTYPES = {"float": "", "int": ", np.int64", "bool": ", np.bool_"}


def forward_checkpointed(plan: Checkpointed, sweep: ForwardWriter, out: Writer) -> None:
    """The loop as the user wrote it, without records, taking the schedule's snapshots."""
    reverse = sweep.plan
    names = reverse.checkpoint_names[plan.loop]
    state = ", ".join(st.var for st in plan.state) or "nothing"
    if plan.online:
        out.comment("checkpointed loop (online: its step count is known only when it ends): no records here,")
        out.comment(f"only snapshots of {state}, placed as it runs (Wang, Moin and Iaccarino's levels);")
        out.comment("its reverse sweep runs each step again from the nearest one, with its records")
    else:
        out.comment("checkpointed loop (binomial checkpointing, as revolve): no records here, only snapshots")
        out.comment(f"of {state}; its reverse sweep runs each step again from the nearest one, with its records")
    if plan.scratch:
        scratch = ", ".join(plan.scratch)
        out.comment(f"(not of {scratch}: each step writes {'them' if len(plan.scratch) > 1 else 'it'} before reading)")
    for st in plan.state:
        if not st.array and st.var not in plan.defined | sweep.emission.placed:
            zero = placeholder(reverse.prog.kinds[st.var])
            out.line(f"{st.var} = {zero}  # part of the state before its first step")
    sizes = [f"{st.var}.nbytes" for st in plan.state if st.array]
    scalars = sum(1 for st in plan.state if not st.array)
    sizes += [str(8 * scalars)] if scalars or not sizes else []
    budget = -1 if reverse.memory is None else reverse.memory
    if plan.online:
        _forward_online(plan, sweep, names, " + ".join(sizes), budget, out)
    else:
        _forward_offline(plan, sweep, names, " + ".join(sizes), budget, out)


def _forward_offline(
    plan: Checkpointed, sweep: ForwardWriter, names: Mapping[str, str], size: str, budget: int, out: Writer
) -> None:
    loop, snaps = plan.loop, sweep.plan.snapshots[plan.loop]
    sweep.emission.helpers.update({"checkpoint_slots", "checkpoint_schedule"})
    out.line(f"{names['steps']} = len({loop.range_text()})")  # type: ignore[union-attr]
    why = "about sqrt(steps) snapshots" if budget < 0 else f"as many snapshots as {budget} bytes hold"
    out.line(f"{names['slots']} = checkpoint_slots({names['steps']}, {size}, {budget})  # {why}")
    out.line(f"{names['stores']}, {names['schedule']} = checkpoint_schedule({names['steps']}, {names['slots']})")
    _allocate_snapshots(plan, snaps, names["slots"], out)
    out.line(f"{names['next']} = 0")
    out.line(f"{names['j']} = 0")
    with out.block(f"for {loop.var} in {loop.range_text()}"):  # type: ignore[union-attr]
        stores = names["stores"]
        test = f"{names['next']} < {stores}.shape[0] and {stores}[{names['next']}, 0] == {names['j']}"
        with out.block(f"if {test}"):
            _store_state(plan, snaps, f"{stores}[{names['next']}, 1]", sweep.emission.helpers, out)
            out.line(f"{names['next']} += 1")
        out.line(f"{names['j']} += 1")
        sweep.sweep(loop.body, out, set(), "primal")


def _forward_online(
    plan: Checkpointed, sweep: ForwardWriter, names: Mapping[str, str], size: str, budget: int, out: Writer
) -> None:
    loop, table, slot, snaps = plan.loop, names["table"], names["slot"], sweep.plan.snapshots[plan.loop]
    helpers = sweep.emission.helpers
    helpers.update({"checkpoint_online", "checkpoint_capacity", "checkpoint_place", "checkpoint_online_plan"})
    growing = budget < 0
    why = "about sqrt(steps so far) snapshots" if growing else f"as many snapshots as {budget} bytes hold"
    out.line(f"{table} = checkpoint_online({size}, {budget})  # {why}")
    _allocate_snapshots(plan, snaps, f"checkpoint_capacity({table})", out)
    out.line(f"{names['j']} = 0")
    header = f"while {code(loop.test)}" if isinstance(loop, While) else f"for {loop.var} in {loop.range_text()}"
    with out.block(header):
        out.line(f"{table}, {slot} = checkpoint_place({table}, {names['j']})")
        with out.block(f"if {slot} >= 0"):
            if growing:
                _grow_snapshots(plan, snaps, f"{slot} + 1", helpers, out)
            _store_state(plan, snaps, slot, helpers, out)
        out.line(f"{names['j']} += 1")
        sweep.sweep(loop.body, out, set(), "primal")
    out.line(f"{names['steps']} = {names['j']}")
    out.line(f"{names['slots']}, {names['schedule']} = checkpoint_online_plan({table}, {names['steps']})")
    if growing:
        _grow_snapshots(plan, snaps, names["slots"], helpers, out)


def _allocate_snapshots(plan: Checkpointed, snaps: Mapping[str, str], rows: str, out: Writer) -> None:
    for st in plan.state:
        shape = f"({rows},) + {st.var}.shape" if st.array else rows
        out.line(f"{snaps[st.var]} = np.empty({shape}{_DTYPES[st.dtype]})")


def _grow_snapshots(plan: Checkpointed, snaps: Mapping[str, str], rows: str, helpers: set[str], out: Writer) -> None:
    helpers.add("checkpoint_grow")
    for st in plan.state:
        out.line(f"{snaps[st.var]} = checkpoint_grow({snaps[st.var]}, {rows})")


def reverse_checkpointed(plan: Checkpointed, sweep: ReverseWriter, out: Writer) -> None:
    """The schedule's actions in order: restore, store, advance without records, and for each
    step (last first) the step with its records followed by its adjoint."""
    reverse, loop = sweep.plan, plan.loop
    names, snaps = reverse.checkpoint_names[loop], reverse.snapshots[loop]
    sweep.emission.helpers.add("checkpoint_next")
    which = f"loop over {loop.var}" if isinstance(loop, For) else "while loop"
    out.comment(f"adjoint of the checkpointed {which}: its steps again from snapshots, as scheduled")
    with out.block("while True"):
        what, a, b, slot = names["do"], names["a"], names["b"], names["slot"]
        schedule = names["schedule"]
        out.line(f"{schedule}, {what}, {a}, {b}, {slot} = checkpoint_next({schedule}, {names['slots']})")
        with out.block(f"if {what} < 0"):
            out.line("break  # every step reversed")
        helpers = sweep.emission.helpers
        with out.block(f"if {what} == 0", f"restore the state before step {a}"):
            _restore_state(plan, snaps, slot, helpers, out)
        with out.block(f"elif {what} == 1", f"snapshot the state before step {a}"):
            _store_state(plan, snaps, slot, helpers, out)
        with out.block(f"elif {what} == 2", f"steps {a} .. {b} - 1 again, without records"):
            with out.block(f"for {names['j']} in range({a}, {b})"):
                _set_step(loop, names["j"], out)
                sweep.forward.sweep(loop.body, out, set(), "primal")
        with out.block("else", f"step {a} with its records, then its adjoint"):
            _set_step(loop, a, out)
            exact = _reserve_step(plan, sweep, out)
            if has_break(loop):  # the last step ends in the loop's `break`: it ends this block only
                with out.block(f"for {names['once']} in range(1)"):
                    sweep.forward.sweep(loop.body, out, exact, "normal")
            else:
                sweep.forward.sweep(loop.body, out, exact, "normal")
            sweep.sweep(loop.body, out)
    with out.block(f"if {names['steps']} > 0"):
        out.comment("the state at the loop's entry, which the adjoints before it read")
        _restore_state(plan, snaps, "0", sweep.emission.helpers, out)


def _reserve_step(plan: Checkpointed, sweep: ReverseWriter, out: Writer) -> set[str]:
    """Room on the main tapes for one step's records, where it can be counted: the tapes reserved."""
    reverse, body = sweep.plan, plan.loop.body
    exact = set()
    inside = assigned_names(body)
    for index, (tape, top) in enumerate(reverse.main_tapes):
        size = reverse.bound(body, index, inside) if reverse.records_on(body, index) else None
        if size is not None and not size.is_zero:
            sweep.emission.helpers.add("reserve")
            out.line(f"{tape} = reserve({tape}, {top} + {size.render()})  # room for this step's records")
            exact.add(tape)
    return exact


def _store_state(plan: Checkpointed, snaps: Mapping[str, str], slot: str, helpers: set[str], out: Writer) -> None:
    """The state into row `slot` of the snapshots; arrays by `checkpoint_store`, element by element
    (numba's row assignment `snaps[k] = u` took 2.3 us for 400 floats on 3,000 rows, 0.16 us so)."""
    for st in plan.state:
        if st.array:
            helpers.add("checkpoint_store")
            out.line(f"checkpoint_store({snaps[st.var]}, {slot}, {st.var})")
        else:
            out.line(f"{snaps[st.var]}[{slot}] = {st.var}")


def _restore_state(plan: Checkpointed, snaps: Mapping[str, str], slot: str, helpers: set[str], out: Writer) -> None:
    for st in plan.state:
        if not st.array:
            out.line(f"{st.var} = {snaps[st.var]}[{slot}]")
        elif st.rebound:
            out.line(f"{st.var} = {snaps[st.var]}[{slot}].copy()")
        else:
            helpers.add("checkpoint_restore")
            out.line(f"checkpoint_restore({st.var}, {snaps[st.var]}, {slot})")


def _set_step(loop: For | While, j: str, out: Writer) -> None:
    """The loop variable at step `j` (counted from 0); a `while` loop has none."""
    if isinstance(loop, While):
        return
    start, step = code(loop.start), code(paren(loop.step))
    scaled = j if step == "1" else f"{j} * {step}"
    value = scaled if start == "0" else f"{code(paren(loop.start))} + {scaled}"
    out.line(f"{loop.var} = {value}")
