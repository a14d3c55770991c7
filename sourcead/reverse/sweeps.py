"""Reverse mode, the pass `sweeps`: a forward sweep that records what is overwritten, then the adjoints.

`f(x, ...)` becomes `f_vjp(x, ..., out_bar)` returning `(value, x_bar, ...)`, or for `grad`,
`f_grad(x, ..., out_bar)` returning `(x_bar, ...)` without the statements that only the value
needs (`postpass/deadcode.py`). The reverse plan
(`plan.py`) decides everything first, by pure analyses: each assignment's adjoint, the
records (which overwritten values, branches and trip counts the reversal needs, and how each is
kept: `recording.py`), the parallel adjoints of prange loops, the checkpointed loops and where
the tapes are reserved. Two emitters then write the code from the frozen plan: the forward sweep
(`emit/forward_sweep.py`, the primal with its records) and the reverse sweep (`emit/reverse_sweep.py`,
the statements backwards, each restoring what it overwrote before its adjoint runs), handing the
loops other emitters write to them through one dispatcher (`emit/dispatch.py`). The post-passes on
this text are `postpass/`'s (`postpass/sweeps.py`). This module
writes the function around them: the placeholders numba needs, the tapes, the primal result and
the seeds of the adjoints.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import libcst as cst

from ..analysis.definite import placeholder
from ..ir.core import Assign, For, walk_statements
from ..ir.emit import Writer, tuple_text
from ..ir.exprs import code, names_in
from .emit.dispatch import Emitters
from .emit.scope import Emission, Scope
from .plan import ReversePlan
from .recording import InSlot
from .shapes import zeros_from_operands

FORWARD_SWEEP = "# forward sweep"
GRADIENT_SWEEP = "# forward sweep: only what the reverse sweep reads (grad does not return the value)"
REVERSE_SWEEP = "# reverse sweep"  # these comments, and the function's header, stay where dead code goes


@dataclass(frozen=True)
class Sweeps:
    """`f_vjp` (or `f_grad`) as the sweeps wrote it, parsed once: the text-level post-passes
    rewrite the tree, each handing the next its result without printing and parsing it again."""

    tree: cst.Module  # the module holding the one function
    helpers: tuple[str, ...]  # the runtime helpers it calls
    sections: frozenset[str]  # comments that stay where their line goes (`eliminate_dead_code`)
    adjoints: frozenset[str]  # the names of adjoints (`assign_first_contributions`)

    @cached_property
    def text(self) -> str:
        return self.tree.code


def write_sweeps(plan: ReversePlan, with_value: bool = True) -> Sweeps:
    """The text of `f_vjp` (or, without the value, `f_grad`) from the frozen plan: the forward sweep
    with its records, the primal result, the seeds of the adjoints and the reverse sweep."""
    prog = plan.prog
    fn, namer = prog.fn, prog.namer
    seeds = [namer.fresh(f"out{k}_bar" if fn.ret.is_tuple else "out_bar") for k in range(len(fn.ret.values))]
    written_seeds = [namer.fresh(f"{m}_out_bar") for m in fn.mutated]
    emission, emitters = Emission(), Emitters()
    main = Scope(plan.main_tapes)
    out = Writer()
    entry = f"{fn.name}_vjp" if with_value else f"{fn.name}_grad"
    with out.block(f"def {entry}({', '.join(list(fn.params) + seeds + written_seeds)})"):
        header = [f"# reverse mode (adjoints) of {fn.name} with respect to {', '.join(prog.wrt)}"]
        header += [f"# {line}" for line in prog.activity_comments()]
        for line in header:
            out.line(line)
        for line in _placeholders(plan):
            out.line(line)
            emission.placed.add(line.split(" = ", 1)[0].strip())
        _allocate_tapes(plan, emission, out)
        if not with_value:
            sweep = GRADIENT_SWEEP
        else:
            sweep = FORWARD_SWEEP + ("" if plan.recordings else ": nothing the reverse sweep reads is overwritten")
        out.line(sweep)
        emitters.forward(plan, emission, main).sweep(fn.body, out, None)
        if with_value:
            value = namer.fresh("value")
            out.line(f"{value} = {_captured_value(plan)}")
        out.line(REVERSE_SWEEP)
        _initialize_adjoints(plan, seeds, written_seeds, out, with_value)
        for array, rows in plan.rows.items():
            emission.helpers.add("chunk_zeros")  # zeros of shape (chunks, *shape): a contiguous slab per chunk
            out.line(
                f"{rows} = chunk_zeros({array}.shape)  # a row per chunk for scattered adjoints, kept zero between uses"
            )
        emitters.reverse(plan, emission, main).sweep(fn.body, out)
        grads = [prog.bar(w) for w in prog.wrt]
        out.line(f"return {', '.join([value, *grads])}" if with_value else f"return {tuple_text(grads)}")
    sections = frozenset({*header, sweep, REVERSE_SWEEP})  # comments kept where their line goes
    adjoints = frozenset(name for (_, suffix), name in namer.shadows.items() if suffix == "_bar")
    return Sweeps(cst.parse_module(out.text()), tuple(sorted(emission.helpers)), sections, adjoints)


def _placeholders(plan: ReversePlan) -> list[str]:
    """Typed values, before the forward sweep, for the active arrays and for what the adjoints read:
    they run after the forward sweep, and numba must find a typed assignment of each even where it
    prunes every branch that assigns one (`if t > 0.25` with t = 0.0)."""
    prog, fn = plan.prog, plan.prog.fn
    arrays = tuple(v for v in sorted(prog.activity.active) if prog.kinds.is_array(v))
    reads = {n for lines in plan.adjoints.lines.values() for line in lines for n in names_in(line.value)}
    reads |= {n for p in plan.permutes() for n in p.targets + p.sources}  # read by their undo
    reads |= plan.read_again(fn.body)
    reads -= {s.var for s in walk_statements(fn.body) if isinstance(s, For)}  # the reversed loops set them
    # a parallel adjoint's iteration replays its own variables before its adjoint reads them, and
    # gives them placeholders of its own (`ReverseSweep.iteration`): at the top, they would be
    # shared variables of both prange loops, each copied whole by numba's reduction analysis
    reads -= set().union(*plan.iteration_locals.values())
    reads -= plan.recomputed_names()  # each reversed iteration computes them first
    return prog.placeholders(arrays + tuple(sorted(reads & set(prog.kinds.of))))


def _allocate_tapes(plan: ReversePlan, emission: Emission, out: Writer) -> None:
    """The main tapes that anything outside the parallel adjoints records on (an iteration's slot
    is on the float tape), sized for the straight-line records before the first reservation."""
    outside = [r for s, r in plan.recordings.items() if s not in plan.in_parallel]
    slots = any(isinstance(r, InSlot) for r in plan.recordings.values())
    for index, ((tape, top), dtype) in enumerate(zip(plan.main_tapes, ("", ", np.int64"), strict=True)):
        if any(r.uses(index) for r in outside) or index == 0 and slots:
            out.line(f"{tape} = np.empty({plan.first_allocation[index].render()}{dtype})")
            out.line(f"{top} = 0")
    for var in sorted(plan.undefined_at_first_record() - emission.placed):
        zero = placeholder(plan.prog.kinds[var])
        out.line(f"{var} = {zero}  # recorded before it is first assigned: give it a typed value")
        emission.placed.add(var)


def _captured_value(plan: ReversePlan) -> str:
    """The primal result, copied where the reverse sweep will restore older elements."""
    fn = plan.prog.fn
    permutes = plan.permutes()
    restored = {s.var for s in plan.sites if s.writes_element} | {n for p in permutes for n in p.targets}
    # a checkpointed loop's reverse sweep restores its state arrays into their buffers, and its
    # replays write its scratch arrays with the values of earlier steps
    restored |= {st.var for ck in plan.checkpointed.values() for st in ck.state if st.array and not st.rebound}
    restored |= {var for ck in plan.checkpointed.values() for var in ck.scratch}
    links = [(s.var, s.value.value) for s in walk_statements(fn.body)
             if isinstance(s, Assign) and not s.writes_element and isinstance(s.value, cst.Name)]  # fmt: skip
    links += [pair for p in permutes for pair in zip(p.targets, p.sources, strict=True)]
    changed = True
    while changed:  # `result = w`: result is w's buffer, restored with it
        changed = False
        for a, b in links:
            if (a in restored) != (b in restored):
                restored |= {a, b}
                changed = True
    items = []
    for v in fn.ret.values:
        array = isinstance(v, cst.Name) and plan.prog.kinds.is_array(v.value) and v.value in restored
        items.append(f"{code(v)}.copy()" if array else code(v))
    value = tuple_text(items) if fn.ret.is_tuple else items[0]
    if fn.mutated:
        value = tuple_text([value, *(f"{m}.copy()" for m in fn.final_states)])
    return value


def _initialize_adjoints(
    plan: ReversePlan, seeds: list[str], written_seeds: list[str], out: Writer, with_value: bool
) -> None:
    prog = plan.prog
    seeded: dict[str, list[str]] = {}
    names = [v.value if isinstance(v, cst.Name) else None for v in prog.fn.ret.values] + list(prog.fn.final_states)
    for name, seed in zip(names, seeds + written_seeds, strict=True):
        if name is not None and prog.is_active(name):
            seeded.setdefault(name, []).append(seed)
    # rows and scratch arrays of a parallel loop, and the variables of its iterations nothing
    # else mentions, get their adjoints inside each iteration
    iteration_own = {v for p in plan.parallel.values() for v in p.private if prog.kinds.is_array(v)}
    iteration_own |= set().union(*plan.iteration_locals.values())
    bar = prog.bar
    # grad: an array nothing else in the reverse sweep reads gets its adjoint's zero from its
    # operands' shapes, and the forward sweep need not compute it (`postpass/deadcode.py`)
    zeros = {} if with_value else zeros_from_operands(prog)
    zeros = {v: z for v, z in zeros.items() if v not in _reverse_reads(plan)}
    for var in sorted(prog.activity.active | set(prog.wrt)):
        if var in iteration_own and var not in seeded and var not in prog.wrt:
            continue
        if var in seeded:
            first, *rest = seeded[var]
            copy = ".copy()" if prog.kinds.is_array(var) else ""
            out.line(f"{bar(var)} = {first}{copy}")
            for seed in rest:
                out.line(f"{bar(var)} += {seed}")
        else:
            out.line(f"{bar(var)} = {code(zeros.get(var) or prog.adjoint_zero(var))}")


def _reverse_reads(plan: ReversePlan) -> set[str]:
    """The primal names the reverse sweep's adjoints, undos, restores and reversed loops read."""
    reads = {n for lines in plan.adjoints.lines.values() for line in lines for n in line.reads()}
    reads |= {n for p in plan.permutes() for n in p.targets + p.sources}
    reads |= {s.var for s in plan.sites | plan.reshaped}  # restored: its records and restores read it
    return reads | plan.read_again(plan.prog.fn.body)
