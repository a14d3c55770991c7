"""The compiler, top to bottom: user function -> generated derivative module.

`generate` runs the declared list of named passes of a mode (`passes.py`; `sourcead passes
--mode MODE` prints it). Every mode starts with the same front end:

    parse      find the function in its file, libcst tree with positions      (parse.py)
    fence      reject anything outside the supported subset, with positions  (fence.py)
    normalize  core form: canonical calls, explicit accumulations, one exit   (normalize.py)
    ...        a helper's result named by the caller; racing prange loops serial; the wrt names
    kinds      float / int / array of every variable                          (kinds.py)
    inplace    `C += B` on an array updates it in place, as NumPy does        (inplace.py)
    activity   varied and useful variables: which carry derivatives           (activity.py)

then forward mode writes tangent code (forward/tangent.py); reverse mode freezes a plan of records
(reverse/plan.py), writes both sweeps (reverse/sweeps.py) and cleans their text (deadcode.py,
first_contributions.py, unsigned.py); hvp runs reverse mode over the forward mode's code
(second.py), vector mode gives the forward mode's tangents lanes (vector.py). `module` writes the
module text (emit.py); `compile.py` writes it to a content-addressed file and compiles it.

Every pass is pure: same function, mode and wrt -> byte-identical text.
"""

from __future__ import annotations

from collections.abc import Callable

from ..analysis.program import Program
from ..errors import SourceADError
from ..frontend.parse import ParsedFunction
from .passes import FRONT, PIPELINES, run
from .stages import Generated, Unit, resolve_wrt, written_arguments

MODES = tuple(PIPELINES)


def analyze(
    func: Callable, wrt: tuple[str | int, ...], arg_kinds: dict[str, str] | None = None, allow_empty_wrt: bool = False
) -> Program:
    """The front end: parse -> fence -> normalize -> ... -> kinds -> activity."""
    unit = run(FRONT, Unit(func, wrt, arg_kinds, mode="primal" if allow_empty_wrt else "reverse"))
    assert unit.prog is not None
    return unit.prog


def analyze_parsed(
    parsed: ParsedFunction,
    wrt: tuple[str | int, ...],
    arg_kinds: dict[str, str] | None = None,
    allow_empty_wrt: bool = False,
) -> Program:
    """The front end on a function already parsed."""
    unit = Unit(None, wrt, arg_kinds, mode="primal" if allow_empty_wrt else "reverse", parsed=parsed)
    unit = run(FRONT[1:], unit)
    assert unit.prog is not None
    return unit.prog


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
    unit = run(PIPELINES[mode], work(func, mode, wrt, arg_kinds, memory))
    assert unit.generated is not None
    return unit.generated


def work(
    func: Callable,
    mode: str,
    wrt: tuple[str | int, ...],
    arg_kinds: dict[str, str] | None = None,
    memory: int | None = None,
) -> Unit:
    """The unit a mode's passes start from. The primal mode's code has no derivatives: it is
    analysed with respect to nothing, whatever `wrt` says (with the arguments active, the front
    end's copies of written arguments and the code writing them would carry tangents)."""
    return Unit(func, () if mode == "primal" else wrt, arg_kinds, mode=mode, memory=memory)


__all__ = ["MODES", "Generated", "analyze", "analyze_parsed", "generate", "resolve_wrt", "work", "written_arguments"]
