"""The compiler as lists of named passes: the front end every mode shares, then each mode's own.

`generate()` (`pipeline/driver.py`) runs `PIPELINES[mode]` in order over a `Unit` (`stages.py`); `sourcead
passes` prints the lists, and `sourcead emit --after NAME` stops after any entry and prints what it
made (`show`). `needs` and `produces` name the fields of the unit a pass reads and sets. As in
numba's `add_pass(Cls, "description")`, the list is the order: nothing else calls the passes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

from ..errors import SourceADError
from ..forward.second import second_order_errors
from . import stages
from .listing import core_listing, plan_listing
from .stages import Unit


@dataclass(frozen=True)
class Pass:
    name: str
    description: str
    needs: tuple[str, ...]
    produces: str
    run: Callable[[Unit], None]
    guessed: bool = False  # its errors may come from parameter types guessed from usage (no call yet)


CORE = (
    Pass("parse", "find the function in its file: a libcst tree with positions (frontend/parse.py)",
         (), "parsed", stages.parse),
    Pass("fence", "refuse anything outside the supported subset, at the user's line (frontend/fence.py)",
         ("parsed",), "namer", stages.check_subset),
    Pass("normalize", "core form: calls inlined, canonical calls, explicit accumulations, one exit "
         "(frontend/normalize.py)",
         ("parsed", "namer"), "core", stages.to_core),
    Pass("merge_results", "a helper's result assigned to the caller's name for it (frontend/aliases.py)",
         ("core",), "core", stages.merge),
    Pass("races", "prange loops that may race become range loops, with a warning (transforms/races.py)",
         ("core",), "core", stages.races),
    Pass("wrt", "the arguments to differentiate, by name or position: none an int by its usage",
         ("core",), "", stages.wrt_by_usage),
    Pass("kinds", "float / int / array of every variable; a variable bound again at the top level with another "
         "type is renamed from there (analysis/kinds.py, rebinding.py)", ("core",), "kinds", stages.kinds, True),
    Pass("gathers", "`x[idx]` at an int array is np.take(x, idx), `x[m]` at a mask np.extract (transforms/gathers.py)",
         ("core", "kinds"), "core", stages.gathers, True),
    Pass("inplace", "`C += B` on an array writes C's elements, as NumPy does (transforms/inplace.py)",
         ("core", "kinds"), "core", stages.inplace, True),
    Pass("copy_dead_views", "a view dead wherever its array is written becomes a copy (frontend/aliases.py)",
         ("core", "kinds"), "core", stages.dead_views, True),
)  # fmt: skip
ACTIVITY = Pass("activity", "varied and useful: the variables that carry derivatives (analysis/activity.py)",
                ("core", "kinds"), "prog", stages.activity, True)  # fmt: skip
FRONT = CORE + (ACTIVITY,)
# reverse modes: each value of an array bound again keeps an adjoint of its own shape (forward modes
# have no adjoint to reset, and keep the user's names: numba's parfors take a loop over a name
# bound once that they then fail to lower, conv2d_bias_loops' jvp)
ADJOINT_FRONT = CORE + (
    Pass("rebound", "an array bound again at the top level takes a fresh name from there on (frontend/rebound.py)",
         ("core", "kinds"), "core", stages.rebound, True),
    ACTIVITY,
)  # fmt: skip

MODULE = Pass("module", "the module text (ir/emit.py) and what a call needs to know about it",
              ("prog", "body"), "generated", stages.module)  # fmt: skip
TANGENT = Pass("tangent", "tangent code: each statement's derivative beside it (forward/tangent.py)",
               ("prog",), "body", stages.tangent, True)  # fmt: skip
FORWARD = (
    TANGENT,
    Pass("strong_zeros", "an array tangent's guard np.where(t != 0.0, p * t, 0.0) is the fused ufunc "
         "strong_zero_each(p * t, t), a loop's `c * t if c != 0.0 else 0.0` the select strong_zero(c * t, c) "
         "(postpass/strong_zero.py)", ("prog", "body"), "body", stages.tangent_strong_zeros),
    MODULE,
)  # fmt: skip
REVERSE = (
    Pass("plan", "what the forward sweep records and how; parallel adjoints, checkpoints (memory=), tapes "
         "(reverse/plan.py)", ("prog",), "plan", stages.plan, True),
    Pass("sweeps", "the forward sweep with its records, then the adjoints backwards (reverse/sweeps.py)",
         ("plan",), "sweeps", stages.sweeps, True),
    Pass("dead_code", "remove what nothing reads; for grad, what only the value needs; element writes into an "
         "array read only for its shape (postpass/deadcode.py, unread.py)", ("sweeps",), "sweeps", stages.dead_code),
    Pass("outers", "two rank-1 updates of one adjoint matrix, or a dot product's two contributions, made one "
         "pass (postpass/outers.py)", ("sweeps",), "sweeps", stages.outers),
    Pass("first_contributions", "an adjoint's first contribution assigns instead of adding to zero: a "
         "scalar's as itself, an array's as first_of (a new array moved) or first_copy_of "
         "(postpass/first_contributions.py)", ("sweeps",), "sweeps", stages.first_assigned),
    Pass("dead_stores", "dead-code removal again: the `x_bar = 0.0` a first contribution now overwrites "
         "(postpass/deadcode.py)", ("sweeps",), "sweeps", stages.dead_code),
    Pass("strong_zeros", "a reversed loop's guard `p if g != 0.0 else 0.0` is the select strong_zero(p, g), an "
         "array's np.where(g != 0.0, p, 0.0) the fused ufunc strong_zero_each(p, g); in hvp, the tangent code's "
         "np.where(m, p * t, 0.0) for second order strong_zero_each(p * t, m) (postpass/strong_zero.py)",
         ("sweeps",), "sweeps", stages.strong_zeros),
    Pass("block_records", "a loop's records of one element per iteration, one contiguous block, copied as a "
         "block, and restored as one (postpass/block_records.py)", ("sweeps",), "sweeps", stages.block_records),
    Pass("unsigned", "indices that never go below zero in the reverse sweep made unsigned (postpass/unsigned.py)",
         ("sweeps",), "body", stages.unsigned),
)  # fmt: skip


def _reanalyze(u: Unit) -> None:
    for p in ADJOINT_FRONT[1:]:
        _run_one(p, u)


HVP = (
    Pass("second_order", "refuse what second order lacks: primitives without second derivatives (forward/second.py)",
         ("prog",), "", stages.second_order_check),
    TANGENT,  # its guards stay selections reverse mode differentiates (`linearize.tangent`)
    MODULE,
    Pass("tangent_alone", "the forward module returning the tangent alone: the function to differentiate "
         "(forward/second.py)", ("generated",), "parsed", stages.tangent_alone),
    Pass("reanalyze", "the front end again, fence to activity, on that function", ("parsed",), "prog", _reanalyze),
    *REVERSE,
    Pass("hvp_module", "the module text of f_hvp (forward/second.py)",
         ("first", "body"), "generated", stages.hvp_module),
)  # fmt: skip

PIPELINES: dict[str, tuple[Pass, ...]] = {
    "forward": FRONT + FORWARD,
    "reverse": ADJOINT_FRONT + REVERSE + (MODULE,),
    "gradient": ADJOINT_FRONT + REVERSE + (MODULE,),
    "primal": FRONT + (Pass("primal", "the function's own code, without derivatives (forward/tangent.py)",
                            ("prog",), "body", stages.primal, True), MODULE),
    "hvp": ADJOINT_FRONT + HVP,
    "sparsity": FRONT + (Pass("pattern", "the pattern sweep: forward mode whose tangents are sets of inputs, "
                              "and the pairs that meet nonlinearly (pattern/sweep.py)",
                              ("prog",), "body", stages.pattern, True), MODULE),
    "vector": FRONT + FORWARD + (Pass("lanes", "every tangent gets a leading axis of lanes (forward/vector.py)",
                                      ("generated",), "generated", stages.lanes),),
}  # fmt: skip


def run(passes: Sequence[Pass], unit: Unit, after: str | None = None) -> Unit:
    """Run `passes` in order over `unit`; stop after the one named `after`."""
    for p in passes:
        if unit.first is not None:  # hvp's second run: a limitation is said at the user's function
            with second_order_errors(unit.first):
                _run_one(p, unit)
        else:
            _run_one(p, unit)
        if p.name == after:
            break
    return unit


def _run_one(p: Pass, unit: Unit) -> None:
    if p.guessed:
        with stages.guessing(unit):
            p.run(unit)
    else:
        p.run(unit)


def names(mode: str) -> tuple[str, ...]:
    return tuple(p.name for p in PIPELINES[mode])


def until(mode: str, after: str) -> tuple[Pass, ...]:
    """The passes of `mode` up to and including `after`, which must be one of them."""
    passes = PIPELINES[mode]
    if after not in names(mode):
        raise SourceADError(f"{mode} mode has no pass named {after!r}; its passes: {', '.join(names(mode))}")
    return passes[: names(mode).index(after) + 1]


def show(unit: Unit, p: Pass) -> str:
    """What pass `p` made, as text: the module, a function's code, or the core form with its analyses."""
    if p.produces == "generated":
        assert unit.generated is not None
        return unit.generated.source
    if p.produces == "sweeps":
        assert unit.sweeps is not None
        return unit.sweeps.text
    if p.produces == "body":
        return unit.body
    if unit.prog is not None and p.produces == "plan":
        assert unit.plan is not None
        return core_listing(unit.prog.fn, "plan", unit.prog.kinds, unit.prog.activity.active) + plan_listing(unit.plan)
    if unit.prog is not None:
        return core_listing(unit.prog.fn, p.name, unit.prog.kinds, unit.prog.activity.active)
    if unit.core is not None and p.produces != "parsed":
        return core_listing(unit.core, p.name, unit.kinds)
    assert unit.parsed is not None
    source = cst.Module([]).code_for_node(unit.parsed.node).lstrip("\n")
    return f"# {os.path.basename(unit.parsed.filename)}: {unit.parsed.node.name.value} after {p.name}\n{source}"
