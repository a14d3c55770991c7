"""Which assignments can have a nonzero adjoint: a backward pass over the core form.

Activity is flow-insensitive: `p` is active when some definition of it reaches a result. A
definition that nothing reads on the way to a result has a zero adjoint; its adjoint code would
only multiply that zero by its partials, and a partial that overflowed on the way (`p =
math.pow(1.0 + p * p, a)` in a loop whose `p` the result never reads) turns 0 * inf into nan.
Such assignments get no adjoint code. Arrays are live throughout (their elements are tracked as a
whole); `break`, `continue` and early exits are taken conservatively.
"""

from __future__ import annotations

from ..ir.core import Assign, Break, Continue, Exit, For, If, Permute, Stmt, While
from ..ir.exprs import names_in
from .activity import value_sources
from .program import Program


def needed_assignments(prog: Program) -> set[Assign]:
    """The active assignments whose target's adjoint may be nonzero where they run."""
    return _Liveness(prog).run()


def live_after_loops(prog: Program) -> dict[For | While, set[str]]:
    """For each loop, the active variables whose adjoint may be nonzero right after it: values
    something after the loop reads on the way to a result before assigning them again."""
    liveness = _Liveness(prog)
    liveness.run()
    return liveness.after


class _Liveness:
    def __init__(self, prog: Program):
        self.prog = prog
        self.active = set(prog.activity.active)
        self.arrays = {v for v in self.active if prog.kinds.is_array(v)}
        self.needed: set[Assign] = set()
        self.after: dict[For | While, set[str]] = {}  # live after each loop (over every visit)

    def run(self) -> set[Assign]:
        fn = self.prog.fn
        results = set().union(*(names_in(v) for v in fn.ret.values)) | set(fn.final_states)
        self.block(fn.body, (results | self.arrays) & self.active, self.active)
        return self.needed

    def block(self, body: tuple[Stmt, ...], live: set[str], loop: set[str]) -> set[str]:
        """The variables live before `body`, given those live after it; `loop` is what is live
        where a `break` or `continue` of the innermost loop goes (the loop's exit or next start)."""
        for s in reversed(body):
            live = self.statement(s, live, loop)
        return live

    def statement(self, s: Stmt, live: set[str], loop: set[str]) -> set[str]:
        if isinstance(s, Assign):
            if s.var not in self.active or (s.var not in live and s.var not in self.arrays):
                return live  # nothing reads this value on the way to a result: a zero adjoint
            self.needed.add(s)
            reads = value_sources(s.value) & self.active
            if s.accumulate is None and not s.writes_element and s.var not in self.arrays:
                live = live - {s.var}
            return live | reads
        if isinstance(s, Permute):
            moved = {source for target, source in zip(s.targets, s.sources, strict=True) if target in live}
            return (live - set(s.targets)) | moved
        if isinstance(s, If):
            return self.block(s.body, live, loop) | self.block(s.orelse, live, loop)
        if isinstance(s, (For, While)):
            self.after[s] = self.after.get(s, set()) | live
            around = set(live)  # live at the loop's start: after it (no more trips) or a next trip
            while True:
                start = self.block(s.body, around, around)
                grown = around | start
                if grown == around:
                    return around
                around = grown
        if isinstance(s, (Break, Continue)):
            return set(loop)
        if isinstance(s, Exit):
            return set(self.active)
        return live
