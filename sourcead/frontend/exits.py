"""Part of normalize: `break`, `continue` and early `return` become flags; one exit remains.

    for i in range(n):                    broke = False
        a = f(i)                          for i in range(n):
        if a > 1.0:              ->           a = f(i)
            break                             if a > 1.0:
        s += a                                    broke = True
                                              if not broke:
                                                  s += a
                                              if broke:
                                                  break

Afterwards a loop's only `break` is the last statement of its body, so the loop runs whole
iterations, and reverse mode only needs to record how many (see `reverse/sweeps.py`). A `return`
inside loops or branches assigns the result variables and sets `returned`, which ends every
enclosing loop; the statements after it run under `if not returned`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import libcst as cst

from ..ir.core import Assign, Break, Continue, Exit, For, If, Return, Stmt, While, walk_statements
from ..ir.exprs import is_number
from ..ir.naming import Namer
from .parse import ParsedFunction


def eliminate_exits(body: list[Stmt], namer: Namer, parsed: ParsedFunction) -> tuple[tuple[Stmt, ...], Return]:
    origin = parsed.node
    exits = [s for s in walk_statements(tuple(body)) if isinstance(s, Exit)]
    if not exits:  # an inlined callee that only writes into arrays
        loops_only, _ = _Eliminator(namer, []).block(body, None)
        return tuple(loops_only), Return((), False, origin)
    last = exits[-1]
    for other in exits:
        if other.is_tuple != last.is_tuple or len(other.values) != len(last.values):
            shown = f"{len(other.values)} values" if other.is_tuple else "one value"
            expected = f"{len(last.values)} values" if last.is_tuple else "one value"
            raise parsed.error(
                f"this return gives {shown}, the last one gives {expected}",
                other.origin,
                "Every return statement must return the same number of values.",
            )
    if len(exits) == 1 and body[-1] is last:
        loops_only, _ = _Eliminator(namer, []).block(body[:-1], None)
        return _single_exit(loops_only, last, namer)
    results = [namer.fresh(f"result{k}" if last.is_tuple else "result") for k in range(len(last.values))]
    eliminator = _Eliminator(namer, results)
    new_body, _ = eliminator.block(body, None)
    if eliminator.returned:
        new_body = [_set(eliminator.returned, False, origin)] + new_body
    return tuple(new_body), Return(tuple(cst.Name(r) for r in results), last.is_tuple, last.origin)


def _single_exit(body: list[Stmt], exit_: Exit, namer: Namer) -> tuple[tuple[Stmt, ...], Return]:
    """The common case, one `return` at the end: names and numbers are returned as they are."""
    bindings: list[Stmt] = []
    values: list[cst.BaseExpression] = []
    for k, item in enumerate(exit_.values):
        if isinstance(item, cst.Name) or is_number(item):
            values.append(item)
            continue
        fresh = namer.fresh(f"result{k}" if exit_.is_tuple else "result")
        bindings.append(Assign(cst.Name(fresh), item, None, exit_.origin))
        values.append(cst.Name(fresh))
    return tuple(body + bindings), Return(tuple(values), exit_.is_tuple, exit_.origin)


@dataclass
class _LoopFlags:
    broke: str | None = None
    skip: str | None = None


class _Eliminator:
    def __init__(self, namer: Namer, results: list[str]):
        self.namer = namer
        self.results = results
        self.returned: str | None = None

    def block(self, stmts: list[Stmt] | tuple[Stmt, ...], loop: _LoopFlags | None) -> tuple[list[Stmt], set[str]]:
        """The rewritten block, and the flags it may set (which skip what follows it)."""
        out: list[Stmt] = []
        flags: set[str] = set()
        for k, stmt in enumerate(stmts):
            new, set_here = self.stmt(stmt, loop)
            out += new
            if set_here:
                flags |= set_here
                rest, rest_flags = self.block(stmts[k + 1 :], loop)
                flags |= rest_flags
                if rest:
                    out.append(If(_none_of(sorted(set_here)), tuple(rest), (), stmt.origin))
                break
        return out, flags

    def stmt(self, stmt: Stmt, loop: _LoopFlags | None) -> tuple[list[Stmt], set[str]]:
        if isinstance(stmt, Break):
            loop.broke = loop.broke or self.namer.fresh("broke")  # type: ignore[union-attr]
            return [_set(loop.broke, True, stmt.origin)], {loop.broke}  # type: ignore[union-attr]
        if isinstance(stmt, Continue):
            loop.skip = loop.skip or self.namer.fresh("skip")  # type: ignore[union-attr]
            return [_set(loop.skip, True, stmt.origin)], {loop.skip}  # type: ignore[union-attr]
        if isinstance(stmt, Exit):
            self.returned = self.returned or self.namer.fresh("returned")
            sets: list[Stmt] = [
                Assign(cst.Name(r), v, None, stmt.origin) for r, v in zip(self.results, stmt.values, strict=True)
            ]
            return sets + [_set(self.returned, True, stmt.origin)], {self.returned}
        if isinstance(stmt, If):
            body, body_flags = self.block(stmt.body, loop)
            orelse, else_flags = self.block(stmt.orelse, loop)
            return [replace(stmt, body=tuple(body), orelse=tuple(orelse))], body_flags | else_flags
        if isinstance(stmt, (For, While)):
            return self.loop(stmt)
        return [stmt], set()

    def loop(self, stmt: For | While) -> tuple[list[Stmt], set[str]]:
        flags = _LoopFlags()
        body, set_inside = self.block(stmt.body, flags)
        escaping = {self.returned} & set_inside if self.returned else set()
        if flags.skip:
            body = [_set(flags.skip, False, stmt.origin)] + body
        ends = sorted(f for f in (flags.broke, *escaping) if f)
        if ends:
            body.append(If(_any_of(ends), (Break(stmt.origin),), (), stmt.origin))
        before: list[Stmt] = [_set(flags.broke, False, stmt.origin)] if flags.broke else []
        return before + [replace(stmt, body=tuple(body))], escaping


def _set(flag: str, value: bool, origin: cst.CSTNode) -> Assign:
    return Assign(cst.Name(flag), cst.Name(str(value)), None, origin)


def _any_of(flags: list[str]) -> cst.BaseExpression:
    return cst.parse_expression(" or ".join(flags))


def _none_of(flags: list[str]) -> cst.BaseExpression:
    inner = " or ".join(flags)
    return cst.parse_expression(f"not ({inner})" if len(flags) > 1 else f"not {inner}")
