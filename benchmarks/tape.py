"""Tape accounting: how many bytes the forward sweep of a reverse-mode gradient records.

The generated module is cut where its reverse sweep starts: the line ``    # reverse sweep`` becomes
``    return top, itop, value`` (``0`` for a tape the module does not have), so the compiled function
runs exactly the forward sweep and reports its tape counters; returning ``value`` keeps the compiler
from deleting a forward sweep whose only other result is an empty tape. Tape bytes =
8 * (top + itop): float64 records on ``tape``, int64 records (trip counts, branches taken) on ``itape``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numba

from sourcead.pipeline.driver import generate

REVERSE_MARK = "    # reverse sweep"
WORD = 8  # bytes per record: float64 and int64 alike


@dataclass(frozen=True)
class TapeUse:
    """Records of one call's forward sweep, and the workload's analytic counts for that call."""

    floats: int  # `top` at the end of the forward sweep
    ints: int  # `itop` at the end of the forward sweep
    overwritten: int  # values the primal overwrites (workloads.py states how they are counted)
    needed: int  # of those, the ones the adjoint reads

    @property
    def bytes(self) -> int:
        return WORD * (self.floats + self.ints)


def forward_sweep(func: Callable, wrt: tuple[str, ...]) -> Callable:
    """The njit-compiled forward sweep of `func`'s gradient: `(*args, out_bar) -> (top, itop, value)`."""
    gen = generate(func, "reverse", wrt)
    lines = gen.source.splitlines()
    if REVERSE_MARK not in lines:
        raise ValueError(f"no {REVERSE_MARK.strip()!r} line in the generated module of {func.__name__}")
    top, itop = (name if re.search(rf"^    {name} = 0$", gen.source, re.M) else "0" for name in ("top", "itop"))
    lines[lines.index(REVERSE_MARK)] = f"    return {top}, {itop}, value"
    namespace: dict = {}
    exec(compile("\n".join(lines) + "\n", f"<forward sweep of {gen.entry}>", "exec"), namespace)
    return numba.njit(namespace[gen.entry])


def tape_use(workload, sweep: Callable, args: tuple) -> TapeUse:
    """Run the forward sweep once on `args` (cotangent 1.0) and pair it with the analytic counts."""
    top, itop, _ = sweep(*args, 1.0)
    return TapeUse(int(top), int(itop), workload.overwritten(*args), workload.needed(*args))
