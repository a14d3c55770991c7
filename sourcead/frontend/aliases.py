"""Second names for one array that only one name uses: made separate arrays (core-form passes).

Reverse mode keeps one adjoint and one record per name, so it refuses an array known by two
names where one of them is written (`adjoint.py`). Two spellings make such names where the user
did not mean two live names, and the passes `merge_results` (after normalize) and `copy_dead_views` (after kinds)
make them separate arrays:

- a helper's result, named by the caller: `y = h(x)` is `result = x * 2.0; y = result` once `h`
  is inlined. Where the helper's name is read nowhere else, the helper assigns `y` itself
  (`y = x * 2.0`): a fresh array stays one name, and a helper that returns its argument or a
  view of it leaves `y = x` or `y = x[1:]`, which `adjoint.py` refuses at the user's line.
  A helper's local built in place and then returned (`b = np.zeros_like(u); b[1:-1] = ...;
  return b`, NPBench's channel_flow) is read by nothing else: it is called `y` throughout.
- a view that nothing reads once its array is written: `for row in B:` reading `row`, then
  `B[0, 0] = 1.0` after the loop. The view becomes a copy (`row = np.copy(B[k])`): no read of
  `row` can see the difference, and reverse mode then follows both arrays.

Only where one of the names is written in place (elsewhere a second name is harmless
and the generated code stays as it was). `view_conflict` says, for a view this pass leaves, which
write makes it one, for the error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeGuard

import libcst as cst

from ..ir.core import Assign, Break, Continue, CoreFunction, For, If, Permute, Stmt, While, walk_statements
from ..ir.exprs import code, names_in
from ..rules import primitive
from .loopvars import renamed


def merge_results(fn: CoreFunction) -> CoreFunction:
    """`fn` with each helper's result that only the caller's name reads assigned to that name."""
    body = fn.body
    written = {t.var for t in walk_statements(body) if writes_in_place(t)}
    renames = [t for t in walk_statements(body) if _is_whole(t) and isinstance(t.value, cst.Name)]
    if not any({t.var, code(t.value)} & written for t in renames):
        return fn  # no second name written in place: nothing to merge
    while (merged := _merge_results(body, replace(fn, body=body))) is not body:
        body = merged
    return fn if body is fn.body else replace(fn, body=body)


def copy_dead_views(fn: CoreFunction, is_array: IsArray) -> CoreFunction:
    """`fn` with each view that is dead wherever its array is written made a copy (kinds first:
    `x[i]` of a 1-D array is an element, not a view)."""
    body = _copy_dead_views(fn.body, fn, is_array)
    return fn if body is fn.body else replace(fn, body=body)


IsArray = Callable[[str], bool]


def view_base(value: cst.BaseExpression) -> tuple[str, str] | None:
    """The array that `value` is a view of, and how: `a[i]` (a row or slice), `a.T` and the other
    primitives declared `view`."""
    if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name):
        return value.value.value, "a row or slice"
    if isinstance(value, cst.Call) and value.args and isinstance(value.args[0].value, cst.Name):
        declared = primitive(code(value.func))
        if declared is not None and declared.view:
            return value.args[0].value.value, f"`{declared.name}` returns a view"
    return None


@dataclass(frozen=True)
class Conflict:
    """Why a view stays a second name: the write to point at, and what it writes."""

    where: Assign
    view_written: bool  # the view itself is written (else its array, while the view is read later)


def view_conflict(fn: CoreFunction, s: Assign, is_array: IsArray) -> Conflict | None:
    """For `v = a[i]` (or another view): the first write once `s` has run that makes `v` and `a`
    two live names of one array, or None where none does (each write while `v` is dead)."""
    found = view_base(s.value)
    if found is None or not isinstance(s.target, cst.Name):
        return None
    view, base = s.var, found[0]
    writes = [t for t in statements_after(fn.body, s) if writes_in_place(t)]
    for t in writes:
        if t.var == view:
            return Conflict(t, True)
    base_writes = [t for t in writes if t.var == base]
    if base_writes and not _only_read(fn, view, is_array):  # itself viewed, renamed or permuted: followed no further
        return Conflict(base_writes[0], False)
    live = live_after(fn, view) if base_writes else {}
    return next((Conflict(t, False) for t in base_writes if live.get(t, True)), None)


def statements_after(body: tuple[Stmt, ...], s: Stmt) -> list[Stmt]:
    """The statements that may run once `s` has: the later ones, and every statement of a loop
    around `s` (the next iteration comes after it), in source order."""
    statements = list(walk_statements(body))
    later = set(statements[statements.index(s) + 1 :])
    for loop in statements:
        if isinstance(loop, (For, While)) and s in set(walk_statements(loop.body)):
            later |= set(walk_statements(loop.body))
    return [t for t in statements if t in later]


# --- helpers' results -----------------------------------------------------------------------


def _merge_results(body: tuple[Stmt, ...], fn: CoreFunction) -> tuple[Stmt, ...]:
    """One merge of `v = e; ...; y = v` into `y = e` (see the module docstring), or `body` itself."""
    counts = _mentions(fn)
    written = {t.var for t in walk_statements(fn.body) if writes_in_place(t)}
    returned = set().union(*(names_in(v) for v in fn.ret.values)) if fn.ret.values else set()
    for j, rename in enumerate(body):
        if not (_is_whole(rename) and isinstance(rename.value, cst.Name)):
            continue
        y, v = rename.var, rename.value.value
        if v == y or v in fn.params or v in returned:
            continue
        if y in written and counts.get(v) == 2:
            for i in range(j - 1, -1, -1):
                d = body[i]
                if _is_whole(d) and d.var == v:
                    if not (isinstance(d.value, cst.Name) and d.value.value == y):
                        merged = Assign(cst.Name(y), d.value, None, rename.origin)
                        return (*body[:i], merged, *body[i + 1 : j], *body[j + 1 :])
                    break
                if y in _mentioned((d,)):
                    break
        # an element or slice written once the rename has run (an array: kinds are not known yet)
        after = {t.var for t in statements_after(fn.body, rename) if isinstance(t, Assign) and t.writes_element}
        if {y, v} & after and y not in fn.params and rename.shares is None:  # else two names are harmless
            local = _local_renamed(body, j, y, v, counts)
            if local is not None:
                return local
    for k, stmt in enumerate(body):
        inner = _rebuilt(stmt, lambda block: _merge_results(block, fn))
        if inner is not stmt:
            return (*body[:k], inner, *body[k + 1 :])
    return body


def _local_renamed(body: tuple[Stmt, ...], j: int, y: str, v: str, counts: dict[str, int]) -> tuple[Stmt, ...] | None:
    """`v = e; ...; y = v` where `v` lives only there (a helper's fresh result, built in place
    before it is returned: `b = np.zeros_like(u); b[1:-1] = ...; return b`) and `y` is not
    mentioned in between: `y = e; ...` with `v` called `y` (one name, where a loop around would
    otherwise see `v`'s writes in the next iteration as writes to `y`'s array). A helper that
    returns its argument or a view of it stays a second name (`v` is a parameter, or `e` is a
    view and the views' checks see it)."""
    first = next((i for i in range(j) if v in _mentioned(body[i : i + 1])), None)
    if first is None:
        return None
    d = body[first]
    if not (_is_whole(d) and d.var == v and v not in names_in(d.value)) or y in _mentioned(body[first + 1 : j]):
        return None
    if sum(_names_of(t).count(v) for t in walk_statements(body[first : j + 1])) != counts.get(v):
        return None  # `v` is read elsewhere too
    return (*body[:first], *renamed(body[first:j], v, y), *body[j + 1 :])


def writes_in_place(t: Stmt) -> TypeGuard[Assign]:
    """Does `t` write into an array's memory: an element or slice, or `x += e` (in place in Python)?"""
    return isinstance(t, Assign) and (t.writes_element or t.accumulate is not None)


def _is_whole(s: Stmt) -> TypeGuard[Assign]:
    return isinstance(s, Assign) and isinstance(s.target, cst.Name) and s.accumulate is None


# --- views nothing reads once their array is written --------------------------------------------


def _copy_dead_views(body: tuple[Stmt, ...], fn: CoreFunction, is_array: IsArray) -> tuple[Stmt, ...]:
    out = []
    for s in body:
        found = view_base(s.value) if _is_whole(s) and is_array(s.var) else None
        if found and isinstance(s, Assign) and s.var not in fn.params and not _returned(s):
            after = statements_after(fn.body, s)
            if any(writes_in_place(t) and t.var == found[0] for t in after):
                if view_conflict(fn, s, is_array) is None:
                    copied = cst.Call(cst.Attribute(cst.Name("np"), cst.Name("copy")), [cst.Arg(s.value)])
                    s = Assign(s.target, copied, None, s.origin)
        out.append(_rebuilt(s, lambda block: _copy_dead_views(block, fn, is_array)))
    return tuple(out) if any(a is not b for a, b in zip(out, body, strict=True)) else body


def _returned(s: Assign) -> bool:
    """Made by a `return` (nothing after it reads either name)."""
    return isinstance(s.origin, cst.Return)


def _only_read(fn: CoreFunction, view: str, is_array: IsArray) -> bool:
    """Is `view` only read into computed values (never the array of another view, a rename, a
    permutation or a loop bound's name)?"""
    for t in walk_statements(fn.body):
        if isinstance(t, Permute) and view in (*t.targets, *t.sources):
            return False
        if _is_whole(t) and is_array(t.var) and (view_base(t.value) or ("",))[0] == view:
            return False
        if _is_whole(t) and isinstance(t.value, cst.Name) and t.value.value == view:
            return False
    return view not in {n for v in fn.ret.values for n in names_in(v)}


def live_after(fn: CoreFunction, var: str) -> dict[Stmt, bool]:
    """For each statement, may `var` be read after it before being assigned again? A backward
    pass; loops are run twice (one variable, so the second pass is the fixed point)."""
    after: dict[Stmt, bool] = {}
    at_end = var in {n for v in fn.ret.values for n in names_in(v)}

    def block(stmts: tuple[Stmt, ...], live: bool, exit_: bool, head: bool) -> bool:
        for s in reversed(stmts):
            after[s] = after.get(s, False) or live
            live = statement(s, live, exit_, head)
        return live

    def statement(s: Stmt, live: bool, exit_: bool, head: bool) -> bool:
        if isinstance(s, Assign):
            reads = (
                var in names_in(s.value) or var in names_in(s.target) and (s.writes_element or s.accumulate is not None)
            )
            return reads or live and not (_is_whole(s) and s.var == var)
        if isinstance(s, If):
            return var in names_in(s.test) or block(s.body, live, exit_, head) or block(s.orelse, live, exit_, head)
        if isinstance(s, (For, While)):
            header = names_in(s.test) if isinstance(s, While) else names_in(s.start) | names_in(s.stop)
            loop_head = live
            for _ in range(2):
                loop_head = live or block(s.body, loop_head, live, loop_head)
            return var in header or loop_head
        if isinstance(s, Break):
            return live or exit_
        if isinstance(s, Continue):
            return live or head
        if isinstance(s, Permute):  # its sources are read, then its targets assigned
            return var in s.sources or live and var not in s.targets
        return True  # an exit: taken as a read

    block(fn.body, at_end, False, False)
    return after


def from_loop(stmts: list[Stmt], made: set[cst.CSTNode], loop: cst.For) -> list[Stmt]:
    """`for row in B:` is normalized as `for k in range(len(B)): row = B[k]`: the assignments made
    for it (their origins in `made`) take the user's loop as origin, so an error about `row` points
    at the loop and can quote it."""

    def fix(s: Stmt) -> Stmt:
        if isinstance(s, Assign) and s.origin in made:
            return replace(s, origin=loop)
        return replace(s, body=tuple(fix(t) for t in s.body)) if isinstance(s, For) else s

    return [fix(s) for s in stmts]


# --- walking ------------------------------------------------------------------------------------


def _rebuilt(stmt: Stmt, change) -> Stmt:
    """`stmt` with `change` applied to its blocks (itself where nothing changed)."""
    if isinstance(stmt, (For, While)):
        body = change(stmt.body)
        return stmt if body is stmt.body else replace(stmt, body=body)
    if isinstance(stmt, If):
        body, orelse = change(stmt.body), change(stmt.orelse)
        return stmt if (body, orelse) == (stmt.body, stmt.orelse) else replace(stmt, body=body, orelse=orelse)
    return stmt


def _mentioned(body: tuple[Stmt, ...]) -> set[str]:
    found: set[str] = set()
    for s in walk_statements(body):
        found |= set(_names_of(s))
    return found


def _names_of(s: Stmt) -> list[str]:
    if isinstance(s, Assign):
        return [s.var, *names_in(s.value), *(names_in(s.target) if s.writes_element else ())]
    if isinstance(s, For):
        return [s.var, *names_in(s.start), *names_in(s.stop), *names_in(s.step)]
    if isinstance(s, (If, While)):
        return list(names_in(s.test))
    if isinstance(s, Permute):
        return [*s.targets, *s.sources]
    return [n for v in getattr(s, "values", ()) for n in names_in(v)]


def _mentions(fn: CoreFunction) -> dict[str, int]:
    """How many times each name is read or assigned in `fn` (its return included)."""
    counts: dict[str, int] = {}
    names = [n for s in walk_statements(fn.body) for n in _names_of(s)]
    for n in names + [n for v in fn.ret.values for n in names_in(v)]:
        counts[n] = counts.get(n, 0) + 1
    return counts
