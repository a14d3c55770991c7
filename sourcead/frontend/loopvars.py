"""Loop variables read after their loop become ordinary variables (a step of normalize).

Python leaves a `for` loop's variable at its last value, and code after the loop may read it,
also in the next iteration of an outer loop:

    for i in range(3):
        s += x[j] * x[j]      # j: the last value of the loop below, from the iteration before
        for j in range(4):
            ...

The reverse sweep runs a loop's range backwards, so after a reversed loop its variable holds the
first value, not the one the adjoints of earlier statements read. Where a loop's variable is live
at the loop's exit (read on some path before it is written again: a backward liveness analysis
over the core form), the loop counts with a fresh variable and assigns the user's at the start
of each iteration:

    for j_loop in range(4):
        j = j_loop
        ...

so `j` is an ordinary int variable that TBR records where an adjoint needs its old value (and
a loop that runs no iteration leaves it as it was, as Python does). A prange loop's variable read
after the loop is refused: each iteration has its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import libcst as cst

from ..ir.core import Assign, Break, Exit, For, If, Permute, Return, Stmt, While
from ..ir.exprs import Rename, names_in
from ..ir.naming import Namer


def carry_loop_variables(
    body: tuple[Stmt, ...], ret: Return, namer: Namer, fail: Callable[..., Exception]
) -> tuple[Stmt, ...]:
    """`body` with every loop whose variable is live at its exit rewritten as above."""
    returned = set().union(*(names_in(v) for v in ret.values))
    carried: set[For] = set()
    _live_in(body, returned, None, carried)
    for loop in carried:
        if loop.parallel:
            raise fail(
                f"the variable `{loop.var}` of a prange loop is read after the loop",
                loop.origin,
                "Each iteration of a prange loop has its own; after the loop, compute the value you need"
                " (for example the last index, `n - 1`) in a variable of your own.",
            )
    elsewhere = _read_unbound(body, frozenset())
    private: set[For] = set()
    for loop in _loops(body):
        if loop.var in elsewhere and loop not in carried:
            (private if loop.parallel else carried).add(loop)
    return _rewrite(body, carried, private, namer) if carried or private else body


def _read_unbound(body: tuple[Stmt, ...], bound: frozenset[str]) -> set[str]:
    """The names read where no enclosing loop binds them as its variable. A statement before a
    loop that reads the loop's variable (`s = x[i + 1] * w`, then `for i in range(n)`) has an
    adjoint that reads it again after the loop is reversed, which leaves it at the loop's first or
    last value: such a loop counts with a fresh variable too, and TBR records what the loop's
    assignments overwrite."""
    found: set[str] = set()
    for s in body:
        if isinstance(s, Assign):
            found |= names_in(s.value) | (names_in(s.target) if s.writes_element else set())
            if s.accumulate is not None:
                found.add(s.var)
        elif isinstance(s, Permute):
            found |= set(s.sources)
        elif isinstance(s, If):
            found |= names_in(s.test) | _read_unbound(s.body, bound) | _read_unbound(s.orelse, bound)
        elif isinstance(s, While):
            found |= names_in(s.test) | _read_unbound(s.body, bound)
        elif isinstance(s, For):
            found |= names_in(s.start) | names_in(s.stop) | names_in(s.step)
            found |= _read_unbound(s.body, bound | {s.var})
        elif isinstance(s, Return):
            found |= set().union(*(names_in(v) for v in s.values))
    return found - bound


def _loops(body: tuple[Stmt, ...]) -> Iterator[For]:
    for s in body:
        if isinstance(s, For):
            yield s
        if isinstance(s, (For, While)):
            yield from _loops(s.body)
        elif isinstance(s, If):
            yield from _loops(s.body + s.orelse)


def _live_in(body: tuple[Stmt, ...], live: set[str], exit_live: set[str] | None, carried: set[For]) -> set[str]:
    """The variables live before `body`, given those live after it; `exit_live`: those live after
    the innermost enclosing loop (where a `break` goes). Marks the loops whose variable is live
    at their exit in `carried`."""
    for s in reversed(body):
        live = _live_before(s, live, exit_live, carried)
    return live


def _live_before(s: Stmt, live: set[str], exit_live: set[str] | None, carried: set[For]) -> set[str]:
    if isinstance(s, Assign):
        reads = names_in(s.value)
        if s.writes_element:
            reads |= names_in(s.target)  # the array (written in part) and its indices
            return live | reads
        if s.accumulate is not None:
            return live | reads | {s.var}
        return (live - {s.var}) | reads
    if isinstance(s, Permute):
        return (live - set(s.targets)) | set(s.sources)
    if isinstance(s, If):
        then = _live_in(s.body, live, exit_live, carried)
        orelse = _live_in(s.orelse, live, exit_live, carried)
        return then | orelse | names_in(s.test)
    if isinstance(s, Break):
        return set(exit_live) if exit_live is not None else set(live)
    if isinstance(s, While):
        head = set(live) | names_in(s.test)
        while True:  # the head is reached from before the loop and from the end of each iteration
            new = head | _live_in(s.body, head, live, carried)
            if new == head:
                return head
            head = new
    if isinstance(s, For):
        if s.var in live:
            carried.add(s)
        head = set(live)  # before the header decides: the exit, or the next iteration (which sets var)
        while True:
            new = head | (_live_in(s.body, head, live, carried) - {s.var})
            if new == head:
                break
            head = new
        return head | names_in(s.start) | names_in(s.stop) | names_in(s.step)
    return set(live)


def _rewrite(body: tuple[Stmt, ...], carried: set[For], private: set[For], namer: Namer) -> tuple[Stmt, ...]:
    """`body` with the carried loops rewritten, and the private ones' variable renamed inside them
    (statements without one inside stay the same objects)."""
    out: list[Stmt] = []
    for s in body:
        if isinstance(s, For):
            inner = _rewrite(s.body, carried, private, namer)
            if s in carried:
                counter = namer.fresh(f"{s.var}_loop")
                first = Assign(cst.Name(s.var), cst.Name(counter), None, s.origin)
                s = For(counter, s.start, s.stop, s.step, (first, *inner), s.parallel, s.origin)
            elif s in private:  # each iteration has its own: a name of its own changes nothing outside
                own = namer.fresh(f"{s.var}_loop")
                s = For(own, s.start, s.stop, s.step, renamed(inner, s.var, own), s.parallel, s.origin)
            elif inner != s.body:
                s = For(s.var, s.start, s.stop, s.step, inner, s.parallel, s.origin)
        elif isinstance(s, While):
            inner = _rewrite(s.body, carried, private, namer)
            s = While(s.test, inner, s.origin) if inner != s.body else s
        elif isinstance(s, If):
            then, orelse = _rewrite(s.body, carried, private, namer), _rewrite(s.orelse, carried, private, namer)
            s = If(s.test, then, orelse, s.origin) if (then, orelse) != (s.body, s.orelse) else s
        out.append(s)
    return tuple(out)


def renamed(body: tuple[Stmt, ...], old: str, new: str) -> tuple[Stmt, ...]:
    """`body` with the variable `old` called `new` everywhere."""
    rename = Rename({old: cst.Name(new)})

    def expr(e):
        return e.visit(rename)

    out: list[Stmt] = []
    for s in body:
        if isinstance(s, Assign):
            s = replace(s, target=expr(s.target), value=expr(s.value))
        elif isinstance(s, For):
            var = new if s.var == old else s.var
            s = replace(
                s, var=var, start=expr(s.start), stop=expr(s.stop), step=expr(s.step), body=renamed(s.body, old, new)
            )
        elif isinstance(s, While):
            s = While(expr(s.test), renamed(s.body, old, new), s.origin)
        elif isinstance(s, If):
            s = If(expr(s.test), renamed(s.body, old, new), renamed(s.orelse, old, new), s.origin)
        elif isinstance(s, Permute):
            targets, sources = (tuple(new if n == old else n for n in ns) for ns in (s.targets, s.sources))
            s = Permute(targets, sources, s.origin)
        elif isinstance(s, Exit):
            s = Exit(tuple(expr(v) for v in s.values), s.is_tuple, s.origin)
        out.append(s)
    return tuple(out)
