"""The core form as text, after any pass that works on it: `sourcead emit --after PASS` (`passes.py`).

A debugging aid: what the later passes see, statement by statement, in Python syntax (loops
over `range`, one exit, calls inlined, evaluation order explicit), with the types that kinds
gave every variable and the activity of each.
"""

from __future__ import annotations

from ..analysis.kinds import Kinds
from ..ir.core import Assign, Break, Continue, CoreFunction, Exit, For, If, Permute, Stmt, While
from ..ir.exprs import code
from ..reverse.plan import ReversePlan


def core_listing(fn: CoreFunction, after: str, kinds: Kinds | None = None, active: frozenset[str] | None = None) -> str:
    """The core function `fn` as text, with the types of its variables where `kinds` is given and
    what carries derivatives where `active` is."""
    lines = [f"# core form of {fn.name} after {after}"]
    if kinds is not None:
        names = sorted(set(fn.params) | set(kinds.of))
        lines += [f"# {name}: {kinds[name].describe()}" for name in names]
    if active is not None:
        lines.append(f"# active (varied and useful): {', '.join(sorted(active)) or 'nothing'}")
    lines.append(f"def {fn.name}({', '.join(fn.params)}):")
    lines += _block(fn.body, 1)
    values = ", ".join(code(v) for v in fn.ret.values)
    lines.append(f"    return {values}")
    return "\n".join(lines) + "\n"


def plan_listing(plan: ReversePlan) -> str:
    """What the reverse plan records and how, one line a recorded statement, as comments."""
    lines = ["# the reverse plan: what the forward sweep records, and how"]
    for stmt, recording in plan.recordings.items():
        what = stmt.text() if isinstance(stmt, (Assign, Permute)) else _header(stmt)
        lines.append(f"#   {what}  <- {type(recording).__name__}")
    lines += [f"#   {_header(loop)}  a parallel adjoint" for loop in plan.parallel]
    lines += [f"#   {_header(loop)}  a serial adjoint: {why}" for loop, why in plan.serial_reason.items()]
    lines += [f"#   {_header(loop)}  checkpointed" for loop in plan.checkpointed]
    return "\n".join(lines) + "\n"


def _header(s: Stmt) -> str:
    if isinstance(s, For):
        return f"for {s.var} in {s.range_text()}:"
    if isinstance(s, While):
        return f"while {code(s.test)}:"
    if isinstance(s, If):
        return f"if {code(s.test)}:"
    return type(s).__name__.lower()


def _block(body: tuple[Stmt, ...], depth: int) -> list[str]:
    pad = "    " * depth
    if not body:
        return [f"{pad}pass"]
    lines: list[str] = []
    for s in body:
        if isinstance(s, (Assign, Permute)):
            lines.append(pad + s.text())
        elif isinstance(s, For):
            lines.append(f"{pad}for {s.var} in {s.range_text()}:")
            lines += _block(s.body, depth + 1)
        elif isinstance(s, While):
            lines.append(f"{pad}while {code(s.test)}:")
            lines += _block(s.body, depth + 1)
        elif isinstance(s, If):
            lines.append(f"{pad}if {code(s.test)}:")
            lines += _block(s.body, depth + 1)
            if s.orelse:
                lines.append(f"{pad}else:")
                lines += _block(s.orelse, depth + 1)
        elif isinstance(s, Break):
            lines.append(f"{pad}break")
        elif isinstance(s, Continue):
            lines.append(f"{pad}continue")
        elif isinstance(s, Exit):
            lines.append(f"{pad}exit {', '.join(code(v) for v in s.values)}")
    return lines
