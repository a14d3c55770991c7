"""What each named pass runs (`passes.py` declares them and their order).

A pass reads fields of the `Unit`, the work in progress of one `generate()` call, that earlier
passes set, and sets its own: `parsed`, `namer`, `core`, `kinds`, `prog` (the analyzed function),
`plan`, `sweeps`, `body` (the text of a generated function) and `generated` (the module).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import libcst as cst

from .. import custom, nested
from .._version import __version__
from ..analysis.activity import analyze_activity
from ..analysis.contract import derive as derive_contract
from ..analysis.kinds import Kinds, fixed_ints, infer_kinds, infer_kinds_renaming, other_guess
from ..analysis.program import Program
from ..errors import SourceADError
from ..forward.second import check_forward, hvp_source, refuse_first_order_limits, tangent_function
from ..forward.tangent import forward_function, primal_function, tangent_lines
from ..forward.vector import vectorize
from ..frontend.aliases import copy_dead_views, merge_results
from ..frontend.bound_names import local_names
from ..frontend.fence import fence
from ..frontend.normalize import normalize
from ..frontend.parse import ParsedFunction, parse_function
from ..frontend.rebound import rename_rebound
from ..ir.core import Assign, CoreFunction, Permute, walk_statements
from ..ir.emit import module_text
from ..ir.naming import Namer
from ..pattern.sweep import pattern_function
from ..postpass.strong_zero import second_order_selects, tangent_selects
from ..postpass.sweeps import (
    first_contributions,
    fused_outers,
    records_in_blocks,
    remove_dead_code,
    select_strong_zeros,
    unsigned_indices,
)
from ..reverse.plan import ReversePlan, plan_reverse
from ..reverse.sweeps import Sweeps, write_sweeps
from ..rules.nested import call_sites as nested_call_sites
from ..transforms.gathers import lower_gathers
from ..transforms.inplace import lower_inplace
from ..transforms.races import serialize_races


@dataclass(frozen=True)
class Generated:
    """A generated derivative module and what the caller needs to know to call it."""

    source: str
    entry: str  # the function's name in the module: f_jvp, f_vjp or f_grad
    mode: str
    params: tuple[str, ...]  # as the user named them
    wrt: tuple[str, ...]
    kinds: Kinds  # by the names of the generated code
    param_types: tuple[str, ...]  # the type of each parameter (`Type.spec`)
    free: tuple[str, ...]  # parameters whose type the call decides
    returns_array: bool
    n_outputs: int
    mutated: tuple[str, ...]  # array arguments the function writes: extra outputs after the result
    copied: tuple[str, ...]  # array arguments whose memory the generated code may write: passed as copies
    output_is_tuple: bool
    parsed: ParsedFunction
    contract: str = ""  # the shape facts its indexing relies on, as JSON (`contract.py`)


@dataclass
class Unit:
    """One function on its way through the passes: what the caller asked, then what each pass made."""

    func: Callable | None
    wrt: tuple[str | int, ...]
    arg_kinds: dict[str, str] | None = None
    mode: str = "reverse"
    memory: int | None = None  # reverse mode's snapshot budget in bytes (`checkpoint.py`)
    parsed: ParsedFunction | None = None
    namer: Namer | None = None
    core: CoreFunction | None = None
    usage: CoreFunction | None = None  # the core form whose usage guesses the parameters' types
    kinds: Kinds | None = None
    prog: Program | None = None
    plan: ReversePlan | None = None
    sweeps: Sweeps | None = None
    body: str = ""
    helpers: list[str] = field(default_factory=list)
    written: str = ""  # the mode of the code in `body` or `sweeps`: forward, primal, reverse or gradient
    generated: Generated | None = None
    first: Program | None = None  # hvp: the user's function, analyzed (`prog` is then its tangent's)

    @property
    def needs_wrt(self) -> bool:
        return bool(self.wrt) or self.mode != "primal"


# --- the front end: every mode's first passes


def parse(u: Unit) -> None:
    assert u.func is not None
    u.parsed = parse_function(u.func)


def check_subset(u: Unit) -> None:
    assert u.parsed is not None
    fence(u.parsed)
    u.namer = Namer(local_names(u.parsed.node) | set(u.parsed.globals))


def to_core(u: Unit) -> None:
    assert u.parsed is not None and u.namer is not None
    u.core = normalize(u.parsed, u.namer)


def merge(u: Unit) -> None:
    assert u.core is not None
    u.core = merge_results(u.core)


def races(u: Unit) -> None:
    assert u.core is not None and u.parsed is not None
    u.core = u.usage = serialize_races(u.core, u.parsed.locate)


def wrt_by_usage(u: Unit) -> None:
    assert u.core is not None and u.parsed is not None
    if u.needs_wrt:
        resolve_wrt(u.core, u.parsed, fixed_ints(u.core), u.wrt)  # names, positions, ints by usage: not a guess


def kinds(u: Unit) -> None:
    assert u.core is not None and u.parsed is not None
    assert u.namer is not None
    u.core, u.kinds = infer_kinds_renaming(u.core, u.parsed, u.arg_kinds, u.namer)


def gathers(u: Unit) -> None:
    assert u.core is not None and u.kinds is not None
    u.core = lower_gathers(u.core, u.kinds)


def inplace(u: Unit) -> None:
    assert u.core is not None and u.kinds is not None and u.namer is not None and u.parsed is not None
    lowered, u.kinds = lower_inplace(u.core, u.kinds, u.parsed, u.namer)
    if lowered.finals != u.core.finals:  # written arguments followed again: new copies keep their final states
        u.kinds = infer_kinds(lowered, u.parsed, u.arg_kinds)
    u.core = lowered


def dead_views(u: Unit) -> None:
    assert u.core is not None and u.kinds is not None and u.parsed is not None
    if (copied := copy_dead_views(u.core, u.kinds.is_array)) is not u.core:
        u.core, u.kinds = copied, infer_kinds(copied, u.parsed, u.arg_kinds)


def rebound(u: Unit) -> None:
    assert u.core is not None and u.kinds is not None and u.parsed is not None and u.namer is not None
    if (fresh := rename_rebound(u.core, u.kinds.is_array, u.namer)) is not u.core:
        u.core, u.kinds = fresh, infer_kinds(fresh, u.parsed, u.arg_kinds)


def activity(u: Unit) -> None:
    assert u.core is not None and u.kinds is not None and u.parsed is not None and u.namer is not None
    names = resolve_wrt(u.core, u.parsed, u.kinds, u.wrt) if u.needs_wrt else ()  # the dtypes may be a guess
    u.prog = Program(u.parsed, u.core, u.kinds, analyze_activity(u.core, u.kinds, names), u.namer)


@contextmanager
def guessing(u: Unit):
    """Errors found with parameter types guessed from usage (no call yet) may go away with the
    call's real types: mark them so the prepared derivative waits for its first call."""
    try:
        yield
    except SourceADError as exc:
        core = u.prog.fn if u.prog is not None else u.usage
        assert core is not None
        other = other_guess(core) if u.arg_kinds is None else {}
        exc.guessed = {core.user_params[core.params.index(p)]: t for p, t in other.items()}  # type: ignore[attr-defined]
        raise


# --- the modes


def tangent(u: Unit) -> None:
    assert u.prog is not None
    u.body, u.written = forward_function(u.prog, second_order=u.mode == "hvp"), "forward"  # see forward_function


def tangent_strong_zeros(u: Unit) -> None:
    assert u.prog is not None
    if "!= 0.0" not in u.body:  # no guard to rewrite: the text is not parsed again
        return
    module, helpers = tangent_selects(cst.parse_module(u.body), tangent_lines(u.prog))
    if helpers:
        u.body, u.helpers = module.code, sorted({*u.helpers, *helpers})


def primal(u: Unit) -> None:
    assert u.prog is not None
    u.body, u.written = primal_function(u.prog), "primal"


def pattern(u: Unit) -> None:
    assert u.prog is not None
    u.body, u.written = pattern_function(u.prog), "pattern"


def plan(u: Unit) -> None:
    assert u.prog is not None
    u.plan = plan_reverse(u.prog, u.memory)


def sweeps(u: Unit) -> None:
    assert u.plan is not None
    u.written = "gradient" if u.mode == "gradient" else "reverse"
    u.sweeps = write_sweeps(u.plan, with_value=u.written == "reverse")


def dead_code(u: Unit) -> None:
    assert u.sweeps is not None
    u.sweeps = remove_dead_code(u.sweeps)


def outers(u: Unit) -> None:
    assert u.sweeps is not None
    u.sweeps = fused_outers(u.sweeps)


def first_assigned(u: Unit) -> None:
    assert u.sweeps is not None
    u.sweeps = first_contributions(u.sweeps)


def strong_zeros(u: Unit) -> None:
    assert u.sweeps is not None
    u.sweeps = select_strong_zeros(u.sweeps)
    if u.first is not None:  # hvp: the tangent code's guards for second order, in both sweeps
        tree, helpers = second_order_selects(u.sweeps.tree)
        if helpers:
            u.sweeps = replace(u.sweeps, tree=tree, helpers=tuple(sorted({*u.sweeps.helpers, *helpers})))


def block_records(u: Unit) -> None:
    assert u.sweeps is not None
    u.sweeps = records_in_blocks(u.sweeps)


def unsigned(u: Unit) -> None:
    assert u.sweeps is not None
    u.sweeps = unsigned_indices(u.sweeps)
    u.body, u.helpers = u.sweeps.text, list(u.sweeps.helpers)


_ENTRY = {"pattern": "pattern", "forward": "jvp", "primal": "primal", "gradient": "grad", "reverse": "vjp"}


def _bindings(key: str, prog: Program) -> list[str]:
    """The header lines of a custom rule or a derivative call (`nested.py`) the function calls."""
    if key.startswith("nested."):
        sites = nested_call_sites(key, prog.fn, prog.kinds.type_of)
        if not sites:
            return []
        kinds, places, _ = sites[0]
        name = nested.by_key(key).name  # type: ignore[union-attr]
        for other, _, node in sites[1:]:
            if other != kinds:  # one compiled entry per global: its variant is chosen by the kinds
                raise prog.parsed.error(
                    f"`{name}` is called here with arguments of other kinds ({', '.join(other)}) than at its "
                    f"first call ({', '.join(kinds)})",
                    node,
                    f"Call {name} with the same kinds of arguments throughout, or prepare a second one for these.",
                )
        return nested.by_key(key).header_lines(kinds, places)  # type: ignore[union-attr]
    return custom.by_key(key).header_lines()  # type: ignore[union-attr]


def module(u: Unit) -> None:
    """The module text, and what a call needs to know about it."""
    prog = u.prog
    assert prog is not None
    mode = u.written
    where = os.path.basename(prog.parsed.filename)
    wrt = f", wrt {', '.join(prog.wrt)}" if prog.wrt else ""  # the primal has none
    header = f"Generated by sourcead {__version__} from {prog.fn.name} ({where}), {mode} mode{wrt}."
    shown = dict(zip(prog.fn.params, prog.fn.user_params, strict=True))  # generated name -> the user's
    bindings = [line for key in prog.fn.custom for line in _bindings(key, prog)]
    u.generated = Generated(
        source=module_text(header, u.body, prog.fn.constants, u.helpers, bindings),
        entry=f"{prog.fn.name}_{_ENTRY[mode]}",
        mode=mode,
        params=prog.fn.user_params,
        wrt=tuple(prog.fn.user_params[prog.fn.params.index(w)] for w in prog.wrt),
        kinds=prog.kinds,
        param_types=tuple(prog.kinds[p].spec() for p in prog.fn.params),
        free=tuple(shown[p] for p in prog.fn.params if p in prog.kinds.free),
        returns_array=any(prog.kinds.is_array(v.value) for v in prog.fn.ret.values if isinstance(v, cst.Name)),
        n_outputs=len(prog.fn.ret.values),
        mutated=tuple(shown[m] for m in prog.fn.mutated) if mode != "primal" else (),
        copied=tuple(shown[m] for m in written_arguments(prog.fn)) if mode != "primal" else (),  # the primal writes
        contract=derive_contract(prog.fn, prog.kinds, prog.parsed, mode),
        output_is_tuple=prog.fn.ret.is_tuple,
        parsed=prog.parsed,
    )


def lanes(u: Unit) -> None:
    assert u.prog is not None and u.generated is not None
    u.generated = vectorize(u.prog, u.generated)


def second_order_check(u: Unit) -> None:
    assert u.prog is not None
    refuse_first_order_limits(u.prog)


def tangent_alone(u: Unit) -> None:
    """hvp: the forward module's function, returning the tangent alone, becomes the function to
    differentiate, with respect to the user's wrt (its tangents are constants)."""
    first, forward = u.prog, u.generated
    assert first is not None and forward is not None
    check_forward(first, forward)
    primal = first.fn.params
    arg_kinds = {p: forward.kinds[p].spec() for p in primal}
    arg_kinds |= {first.dot(w): forward.kinds[w].spec() for w in first.wrt}
    u.first, u.wrt, u.arg_kinds = first, tuple(primal.index(w) for w in first.wrt), arg_kinds
    u.parsed = tangent_function(forward, first.fn.name, bool(first.fn.mutated))
    u.namer = u.core = u.usage = u.kinds = u.prog = None


def hvp_module(u: Unit) -> None:
    first, forward, second = u.first, u.generated, u.prog
    assert first is not None and forward is not None and second is not None
    shown = dict(zip(first.fn.params, first.fn.user_params, strict=True))
    # the second run's written arguments (an array the function writes, and the tangent of one in
    # wrt) each take a zero seed; Spec.mutated names the argument whose shape each seed has
    of_tangent = {first.dot(w): w for w in first.wrt}
    seeds = tuple(shown[m] if m in shown else shown[of_tangent[m]] for m in second.fn.mutated)
    u.generated = Generated(
        source=hvp_source(first, forward, second, u.body, u.helpers),
        entry=f"{first.fn.name}_hvp",
        mode="hvp",
        params=first.fn.user_params,
        wrt=forward.wrt,
        kinds=first.kinds,
        param_types=forward.param_types,
        free=forward.free,
        returns_array=False,
        n_outputs=1,
        mutated=seeds,
        copied=tuple(shown[p] for p in written_arguments(second.fn) if p in shown),
        output_is_tuple=False,
        parsed=first.parsed,
    )


# --- helpers of the passes above


def written_arguments(fn: CoreFunction) -> tuple[str, ...]:
    """Parameters whose buffer the generated code may write under some name (element writes, through
    swaps and renames, and the caller's arrays the function writes: `CoreFunction.mutated`)."""
    statements = list(walk_statements(fn.body))
    written = {s.var for s in statements if isinstance(s, Assign) and s.writes_element} | set(fn.mutated)
    links = [(s.var, s.value.value) for s in statements if isinstance(s, Assign) and isinstance(s.value, cst.Name)]
    links += [pair for s in statements if isinstance(s, Permute) for pair in zip(s.targets, s.sources, strict=True)]
    changed = True
    while changed:  # a name bound to a written buffer makes the buffer it came from written
        changed = False
        for target, source in links:
            if target in written and source not in written:
                written.add(source)
                changed = True
    return tuple(p for p in fn.params if p in written)


def resolve_wrt(
    fn: CoreFunction, parsed: ParsedFunction, kinds: Kinds | None, wrt: tuple[str | int, ...]
) -> tuple[str, ...]:
    """Argument positions or names -> the parameters (as the generated code names them); each must be
    a float or a float-array parameter (checked when `kinds` is given)."""
    users = fn.user_params
    names: list[str] = []
    for item in wrt:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise SourceADError(f"wrt must be argument positions or names, got {item!r}")
        if isinstance(item, int):
            if not -len(users) <= item < len(users):
                raise SourceADError(
                    f"wrt={item} is out of range: {fn.name} has {len(users)} arguments ({', '.join(users)})"
                )
            shown = users[item]
        else:
            shown = item
            if shown not in users:
                raise SourceADError(
                    f"wrt={shown!r} is not an argument of {fn.name}; its arguments are: {', '.join(users)}"
                )
        name = fn.params[users.index(shown)]
        if kinds is not None and not kinds.carries(name):
            t = kinds[name]
            how = "an integer (a loop bound or an index)" if t.is_scalar and t.dtype == "int" else t.describe()
            raise SourceADError(
                f"cannot differentiate with respect to `{shown}`: {fn.name} uses it as {how}; "
                "differentiate with respect to float or float-array arguments",
            )
        if name in names:
            raise SourceADError(f"wrt names `{shown}` twice")
        names.append(name)
    if not names:
        raise SourceADError("wrt is empty", hint="Name at least one argument to differentiate.")
    return tuple(names)
