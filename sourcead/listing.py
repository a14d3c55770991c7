"""The core form as text, after normalize, kinds or activity: `sourcead emit --after PASS`.

A debugging aid: what the later passes see, statement by statement, in Python syntax (loops
over `range`, one exit, calls inlined, evaluation order explicit), with the types that kinds
gave every variable and the activity of each.
"""

from __future__ import annotations

from .core import Assign, Break, Continue, Exit, For, If, Permute, Stmt, While
from .exprs import code
from .program import Program

PASSES = ("normalize", "kinds", "activity")


def core_listing(prog: Program, after: str) -> str:
    """The core function of `prog` as text; `after` says how much of the analysis to show."""
    fn = prog.fn
    lines = [f"# core form of {fn.name} after {after}"]
    if after in ("kinds", "activity"):
        names = sorted(set(fn.params) | set(prog.kinds.of))
        lines += [f"# {name}: {prog.kinds[name].describe()}" for name in names]
    if after == "activity":
        active = sorted(prog.activity.active)
        lines.append(f"# active (varied and useful): {', '.join(active) or 'nothing'}")
    lines.append(f"def {fn.name}({', '.join(fn.params)}):")
    lines += _block(fn.body, 1)
    values = ", ".join(code(v) for v in fn.ret.values)
    lines.append(f"    return {values}")
    return "\n".join(lines) + "\n"


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
