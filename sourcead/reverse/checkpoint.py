"""Which time loops the reverse sweep checkpoints, and the state their snapshots hold.

A checkpointed loop records nothing in the forward sweep: it keeps snapshots of the state its
body overwrites, and its reverse sweep runs each step again from the nearest snapshot, with its
records, just before that step's adjoint. The tape then holds one step's records at a time, and
memory is bounded by the snapshots. `reverse/emit/checkpoint.py` writes the code, `runtime/checkpoint.py`
places the snapshots; this module decides where, and what a snapshot holds.

A loop is checkpointed when the function has a memory budget (`memory=`: its top-level loops) or
the loop is marked with a `# sourcead: checkpoint` comment (on the line above it or at the end of
its `for`/`while` line), and its body records something and has adjoint work. A `for` loop over a
range fixed at its entry is checkpointed offline (binomial, revolve); a `while` loop, or a `for`
loop with a `break`, online (its step count is known only when it ends). A marked loop nested in
another loop is checkpointed when every loop around it is (each replay of the outer step then
runs the inner loop with its own snapshots). Its state: every variable the body assigns that
exists before the loop, every array it writes, and what it reads that later statements
overwrite; not, in a top-level loop, a scratch array that each step writes before reading it
(`coverage.py`: RK4's stages, the buffer a stencil step fills before a swap). A loop that cannot
be checkpointed keeps its records, and the generated code says why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import libcst as cst

from ..analysis.reads import names_read
from ..frontend.marker import marked
from ..ir.core import Assign, Break, Continue, Exit, For, If, Permute, Stmt, While, assigned_names, walk_statements
from ..ir.exprs import names_in
from .coverage import Sizes, written_before_read


@dataclass(frozen=True)
class State:
    """One variable a snapshot holds."""

    var: str
    array: bool
    rebound: bool  # an array the body assigns as a whole (restored as a copy, not into its buffer)
    dtype: str  # "float", "int" or "bool"
    ndim: int = 0


@dataclass(frozen=True)
class Checkpointed:
    loop: For | While
    state: tuple[State, ...]
    defined: frozenset[str]  # the names that exist at the loop's entry
    online: bool  # its step count is known only when it ends (a `while` loop, a `for` with `break`)
    scratch: tuple[str, ...] = ()  # arrays each step writes before it reads them: not in the state


def plan_checkpoints(
    body: tuple[Stmt, ...],
    params: tuple[str, ...],
    kind_of: Callable[[str], object],
    budget: int | None,
    worth_it: Callable[[For | While], bool],
) -> tuple[dict[For | While, Checkpointed], dict[For | While, str]]:
    """The loops of the function `body` to checkpoint, and for each loop that was asked for but
    cannot be, why. `kind_of(var)` is the variable's `Type`; `worth_it(loop)`: does the loop
    record something its adjoint needs."""
    chosen: dict[For | While, Checkpointed] = {}
    refused: dict[For | While, str] = {}
    everything = assigned_names(body)
    sizes = Sizes(body, params)

    def visit(block: tuple[Stmt, ...], defined: set[str], top: bool, around_ok: bool, after: set[str]) -> None:
        """`after`: the names assigned after `block` ends (after the branches around it)."""
        for k, s in enumerate(block):
            if isinstance(s, If):
                rest = assigned_names(block[k + 1 :]) | after
                visit(s.body, set(defined), top, around_ok, rest)
                visit(s.orelse, set(defined), top, around_ok, rest)
            elif isinstance(s, (For, While)):
                inner = defined | ({s.var} if isinstance(s, For) else set())
                parallel = isinstance(s, For) and s.parallel
                asked = marked(s) or (budget is not None and top and not parallel)
                if asked and worth_it(s):
                    if parallel:
                        refused[s] = "it is a prange loop (its iterations are not steps in time)"
                    elif not around_ok:
                        refused[s] = "it is inside a loop that is not checkpointed (mark that loop too)"
                    else:
                        later = assigned_names(block[k + 1 :]) | after if top else everything
                        state, why = _state(s, defined, later, kind_of, body)
                        if state is None:
                            refused[s] = why
                        else:
                            online = isinstance(s, While) or any(isinstance(t, Break) for t in _same_loop(s.body))
                            scratch = tuple(st.var for st in state if top and _scratch(sizes, s, st))
                            state = tuple(_in_place(sizes, st) if top else st for st in state if st.var not in scratch)
                            chosen[s] = Checkpointed(s, state, frozenset(defined), online, scratch)
                visit(s.body, inner, False, s in chosen, everything)
            defined |= assigned_names((s,))

    visit(body, set(params), True, True, set())
    return chosen, refused


def _same_loop(body: tuple[Stmt, ...]):
    """The statements of a loop body outside its inner loops."""
    for s in body:
        yield s
        if isinstance(s, If):
            yield from _same_loop(s.body)
            yield from _same_loop(s.orelse)


def _state(
    loop: For | While, defined: set[str], later: set[str], kind_of: Callable[[str], object], body: tuple[Stmt, ...]
) -> tuple[tuple[State, ...] | None, str]:
    inside = list(walk_statements(loop.body))
    if any(isinstance(s, (Continue, Exit)) for s in inside):
        return None, "it exits early (continue or return)"  # not after exits.py: a guard
    assigned = assigned_names(loop.body)
    if isinstance(loop, For) and any(names_in(b) & (assigned | {loop.var}) for b in (loop.start, loop.stop, loop.step)):
        return None, "its range changes while it runs"
    inner_vars = {s.var for s in inside if isinstance(s, For)}
    reads = set().union(*(names_read(s) for s in inside))
    rebound = {s.var for s in inside if isinstance(s, Assign) and not s.writes_element}
    rebound |= {n for s in inside if isinstance(s, Permute) for n in s.targets}
    candidates = (assigned - inner_vars) | (reads & later & defined)
    renames = {
        n
        for s in walk_statements(body)
        if isinstance(s, Assign) and not s.writes_element and isinstance(s.value, cst.Name)
        for n in (s.var, s.value.value)
    }
    state = []
    for var in sorted(candidates):
        t = kind_of(var)
        if t is None:
            return None, f"the type of `{var}` is not known"
        if getattr(t, "is_tuple", False) or t.dtype not in ("float", "int", "bool"):  # type: ignore[attr-defined]
            return None, f"`{var}` is not a number or an array of numbers"
        array = bool(t.is_array)  # type: ignore[attr-defined]
        if not array:
            state.append(State(var, False, False, t.dtype))  # type: ignore[attr-defined]
            continue
        if var in renames:
            return None, f"the array `{var}` has another name (a plain assignment `a = b`)"
        if var not in defined:
            if _first_written_whole(loop.body, var):
                continue  # made afresh in each step before any read: not part of the state
            return None, f"the array `{var}` is read in a step before that step makes it"
        state.append(State(var, True, var in rebound, t.dtype, t.ndim))  # type: ignore[attr-defined]
    return tuple(state), ""


def _scratch(sizes: Sizes, loop: For | While, st: State) -> bool:
    """Is the array `st` written by each step before it is read (`coverage.py`), so that no snapshot
    needs it? An array the step assigns whole keeps its place; one it swaps may be scratch."""
    return st.array and written_before_read(sizes, loop, st.var, st.ndim)


def _in_place(sizes: Sizes, st: State) -> State:
    """A swapped array whose swap group's buffers are all made with one shape (`coverage.Sizes`)
    is restored into the buffer it names, not as a new copy: whichever buffer that is, it has the
    snapshot's shape, and no other name holds it."""
    if st.array and st.rebound and sizes.shape(st.var, st.ndim) is not None:
        return replace(st, rebound=False)
    return st


def _first_written_whole(body: tuple[Stmt, ...], var: str) -> bool:
    """Is the first top-level statement of `body` that mentions `var` an assignment of the whole
    array that does not read it (so each step makes its own before reading it)?"""
    for s in body:
        mentions = var in assigned_names((s,)) or any(var in names_read(t) for t in walk_statements((s,)))
        if not mentions:
            continue
        return isinstance(s, Assign) and not s.writes_element and s.var == var and var not in names_in(s.value)
    return True
