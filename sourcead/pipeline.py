"""The compiler, top to bottom: user function -> generated derivative module.

    parse      find the function in its file, libcst tree with positions      (parse.py)
    fence      reject anything outside the supported subset, with positions  (fence.py)
    normalize  core form: canonical calls, explicit accumulations, one exit   (normalize.py)
               a helper's result named by the caller; then dead views copied  (aliases.py)
    races      prange loops that may race become range loops, with a warning (races.py)
    kinds      float / int / array of every variable                          (kinds.py)
    inplace    `C += B` on an array updates it in place, as NumPy does        (inplace.py)
    activity   varied and useful variables: which carry derivatives           (activity.py)
    forward    tangent code (forward mode)                                    (forward.py)
    reverse    a frozen plan of records, then both sweeps (reverse mode)      (reverse_plan.py, reverse.py)
               and without what nothing reads (the value, for grad)           (deadcode.py)
    emit       the module text, deterministic                                 (emit.py)
    compile    content-addressed file, import, numba.njit(cache=True)         (compile.py)

Every pass but `compile` is pure: same function, mode and wrt -> byte-identical text.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import libcst as cst

from . import custom
from ._version import __version__
from .activity import analyze_activity
from .aliases import copy_dead_views, merge_results
from .contract import derive as derive_contract
from .core import Assign, CoreFunction, Permute, walk_statements
from .emit import module_text
from .errors import SourceADError
from .fence import fence, local_names
from .forward import forward_function, primal_function
from .inplace import lower_inplace
from .kinds import Kinds, fixed_ints, infer_kinds, other_guess
from .naming import Namer
from .normalize import normalize
from .parse import ParsedFunction, parse_function
from .program import Program
from .races import serialize_races
from .reverse import reverse_function

MODES = ("forward", "reverse", "gradient", "primal", "hvp", "vector")


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


def analyze(
    func: Callable, wrt: tuple[str | int, ...], arg_kinds: dict[str, str] | None = None, allow_empty_wrt: bool = False
) -> Program:
    """parse -> fence -> normalize -> races -> kinds -> activity."""
    return analyze_parsed(parse_function(func), wrt, arg_kinds, allow_empty_wrt)


def analyze_parsed(
    parsed: ParsedFunction,
    wrt: tuple[str | int, ...],
    arg_kinds: dict[str, str] | None = None,
    allow_empty_wrt: bool = False,
) -> Program:
    """fence -> normalize -> races -> kinds -> activity, on a function already parsed (second order feeds
    the generated tangent function back in here: `second.py`)."""
    fence(parsed)
    namer = Namer(local_names(parsed.node) | set(parsed.globals))
    core = serialize_races(merge_results(normalize(parsed, namer)), parsed.locate)
    if wrt or not allow_empty_wrt:
        resolve_wrt(core, parsed, fixed_ints(core), wrt)  # names, positions, ints by usage: not a guess
    with _guessing(core, arg_kinds):
        kinds = infer_kinds(core, parsed, arg_kinds)
        lowered, kinds = lower_inplace(core, kinds, parsed, namer)  # `C += B` on an array writes C's elements
        # (first: a view updated in place is refused there, before a copy of a view that looks dead stands for it)
        if lowered.finals != core.finals:  # written arguments followed again: new copies keep their final states
            kinds = infer_kinds(lowered, parsed, arg_kinds)
        core = lowered
        if (copied := copy_dead_views(core, kinds.is_array)) is not core:
            core, kinds = copied, infer_kinds(copied, parsed, arg_kinds)
        names = resolve_wrt(core, parsed, kinds, wrt) if wrt or not allow_empty_wrt else ()  # the dtypes may be a guess
        return Program(parsed, core, kinds, analyze_activity(core, kinds, names), namer)


@contextmanager
def _guessing(core: CoreFunction, arg_kinds: dict[str, str] | None):
    """Errors found with parameter types guessed from usage (no call yet) may go away with the
    call's real types: mark them so the prepared derivative waits for its first call."""
    try:
        yield
    except SourceADError as exc:
        other = other_guess(core) if arg_kinds is None else {}
        exc.guessed = {core.user_params[core.params.index(p)]: t for p, t in other.items()}  # type: ignore[attr-defined]
        raise


def generate(
    func: Callable,
    mode: str,
    wrt: tuple[str | int, ...],
    arg_kinds: dict[str, str] | None = None,
    memory: int | None = None,
) -> Generated:
    """The whole pipeline up to the module text. `arg_kinds` fixes the kinds of parameters
    that the code leaves open (see `Kinds.free`); by default they are floats. `memory`: a budget
    in bytes for reverse mode's snapshots, which checkpoints its time loops (`checkpoint.py`)."""
    if mode not in MODES:
        raise SourceADError(f"unknown mode {mode!r}", hint="Use mode='forward', 'reverse', 'gradient' or 'hvp'.")
    if mode == "hvp":  # second order: reverse mode over the generated forward mode (second.py)
        from .second import hvp_generated

        return hvp_generated(func, wrt, arg_kinds, memory)
    if mode == "vector":  # forward mode carrying several tangents at once (vector.py)
        from .vector import vector_generated

        return vector_generated(func, wrt, arg_kinds)
    prog = analyze(func, wrt, arg_kinds, allow_empty_wrt=mode == "primal")
    with _guessing(prog.fn, arg_kinds):
        if mode == "forward":
            body, helpers, entry = forward_function(prog), [], f"{prog.fn.name}_jvp"
        elif mode == "primal":
            body, helpers, entry = primal_function(prog), [], f"{prog.fn.name}_primal"
        elif mode == "gradient":  # reverse mode without the value: what `grad` runs
            (body, helpers), entry = reverse_function(prog, memory, with_value=False), f"{prog.fn.name}_grad"
        else:
            (body, helpers), entry = reverse_function(prog, memory), f"{prog.fn.name}_vjp"
    where = os.path.basename(prog.parsed.filename)
    header = (
        f"Generated by sourcead {__version__} from {prog.fn.name} ({where}), {mode} mode, wrt {', '.join(prog.wrt)}."
    )
    shown = dict(zip(prog.fn.params, prog.fn.user_params, strict=True))  # generated name -> the user's
    bindings = [line for key in prog.fn.custom for line in custom.by_key(key).header_lines()]  # type: ignore[union-attr]
    source = module_text(header, body, prog.fn.constants, helpers, bindings)
    return Generated(
        source=source,
        entry=entry,
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


__all__ = ["MODES", "Generated", "analyze", "analyze_parsed", "generate", "resolve_wrt"]
