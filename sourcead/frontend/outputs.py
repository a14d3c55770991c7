"""Which of the caller's arrays a function writes, and which variable holds each one's final state.

A parameter names the caller's array (its memory) at entry. The name may then be rebound
(`x = x * 2.0`), swapped (`x, v = v, x`) or joined by a second name or a view (`y = x`,
`y = x[1:]`). The caller's array is written when an element write reaches it under any name; its
final state is then an extra output, held by a name that holds it at the end or, where every name
holding it is rebound, by a copy taken just before that rebinding (the array keeps that state: no
name reaches it any more; where one branch of an `if` rebinds it, the other branch ends with the
same copy). Which arrays are outputs follows memory, never names:

    def f(x):                     def f(x):
        x[0] = 1.0                    x[0] = 1.0
        x = x * 2.0      ->           x_final = np.copy(x)
        return np.sum(x)              x = x * 2.0
                                      result = np.sum(x)      outputs: (result, x_final)

A name rebound before any write (`x = x * 2.0; x[0] = 1.0`) leaves the caller's array unwritten:
no extra output. Where which name holds the caller's array depends on the run (a swap in a loop or
in one branch, a rebinding in a loop) and the array is written, the function is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import libcst as cst

from ..ir.core import Assign, For, If, Permute, Stmt, While
from ..ir.exprs import code
from ..ir.naming import Namer
from ..rules import primitive

Holder = tuple[str, str]  # (the parameter whose caller's array a name reaches, "full" | "view" | "maybe")
State = dict[str, Holder]


@dataclass
class _Follow:
    written: set[str] = field(default_factory=set)  # parameters whose caller's array is written
    drops: dict[Stmt, list[tuple[str, str]]] = field(default_factory=dict)  # stmt -> (param, name) copied before it
    tails: dict[tuple[If, str], list[tuple[str, str]]] = field(default_factory=dict)  # (if, block) -> copied after it
    unsure: dict[str, cst.CSTNode | None] = field(default_factory=dict)  # param -> where its holder depends on the run


def written_outputs(
    body: tuple[Stmt, ...], params: tuple[str, ...], namer: Namer, fail: Callable[..., Exception]
) -> tuple[tuple[Stmt, ...], tuple[str, ...], tuple[str, ...]]:
    """(the body with the copies that keep final states, the written parameters, the variable
    holding each one's final state). `fail(message, node, hint)` makes a positioned error."""
    follow = _Follow()
    end = _block(body, {p: (p, "full") for p in params}, follow)
    mutated = tuple(p for p in params if p in follow.written)
    dropped = {p for d in [*follow.drops.values(), *follow.tails.values()] for p, _ in d}
    for p in mutated:
        if p not in dropped and not _full_holders(end, p):
            follow.unsure.setdefault(p, None)
        if p in follow.unsure:
            raise fail(
                f"which name holds the array passed as `{p}` depends on the run here (a swap, or a "
                "rebinding in a loop), and that array is written: its final state, an extra output, "
                "cannot be followed",
                follow.unsure[p],
                f"Copy back instead of swapping (`{p}[:] = ...`), or write into a copy: `{p} = {p}.copy()` first.",
            )
    finals = {p: namer.fresh(f"{p}_final") for p in mutated if p in dropped}
    holders = {}
    for p in mutated:
        full = _full_holders(end, p)
        holders[p] = finals.get(p) or (p if p in full else full[0])
    body = _with_copies(body, follow, finals)
    return body, mutated, tuple(holders[p] for p in mutated)


def _block(body: tuple[Stmt, ...], state: State, follow: _Follow) -> State:
    for s in body:
        state = _statement(s, state, follow)
    return state


def _statement(s: Stmt, state: State, follow: _Follow) -> State:
    if isinstance(s, Assign) and (s.accumulate is not None or s.inplace) and not s.writes_element:
        # `a += e`, `a *= e`, `a[m] = v` on a name: a float's new value, or an array's elements
        # updated in place (as NumPy does), which only kinds tell apart: the pass `inplace` writes
        # an array's update element by element and follows the written arguments again
        return state
    if isinstance(s, Assign) and s.writes_element:
        if s.var in state:
            p, kind = state[s.var]
            follow.written.add(p)
            if kind != "full" and not _full_holders(state, p):
                follow.unsure.setdefault(p, s.origin)  # written through a view once its names are rebound
        return state
    if isinstance(s, Assign):
        after = dict(state)
        after.pop(s.var, None)
        reached = _reached(s.value, state)
        if reached is not None:
            after[s.var] = reached
        return _moved(s, state, after, follow)
    if isinstance(s, Permute):
        after = {k: v for k, v in state.items() if k not in s.targets}
        after.update({t: state[src] for t, src in zip(s.targets, s.sources, strict=True) if src in state})
        return _moved(s, state, after, follow)
    if isinstance(s, If):
        body, orelse = _block(s.body, dict(state), follow), _block(s.orelse, dict(state), follow)
        return _merge(_kept(s, "body", body, orelse, follow), _kept(s, "orelse", orelse, body, follow), s, follow)
    if isinstance(s, (For, While)):
        if isinstance(s, For) and s.var in state:
            state = _moved(s, state, {k: v for k, v in state.items() if k != s.var}, follow)
        while True:  # the state at the loop's head: its entry, or after any number of iterations
            again = _merge(state, _block(s.body, dict(state), follow), s, follow)
            if again == state:
                return state
            state = again
    return state


def _kept(s: If, block: str, kept: State, other: State, follow: _Follow) -> State:
    """A caller's array that the other branch leaves without a name (taking a copy of its state)
    keeps its state in a copy at the end of this one too; after the `if` no name surely holds it."""
    for p in {q for q, kind in kept.values() if kind == "full"}:
        if not _full_holders(other, p):
            _note(follow.tails.setdefault((s, block), []), (p, _full_holders(kept, p)[0]))
            kept = {name: (q, "maybe" if q == p else kind) for name, (q, kind) in kept.items()}
    return kept


def _note(found: list[tuple[str, str]], item: tuple[str, str]) -> None:
    if item not in found:  # a loop's body is followed more than once
        found.append(item)


def _reached(value: cst.BaseExpression, state: State) -> Holder | None:
    """The caller's array that the name bound to `value` reaches: a second name, or a view."""
    if isinstance(value, cst.Name):
        return state.get(value.value)
    base = None
    if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name):
        base = value.value.value  # an element (no array reached) or a row or slice (a view)
    elif isinstance(value, cst.Call) and value.args and isinstance(value.args[0].value, cst.Name):
        declared = primitive(code(value.func))
        if declared is not None and declared.view:
            base = value.args[0].value.value
    if base is None or base not in state:
        return None
    p, kind = state[base]
    return (p, "maybe" if kind == "maybe" else "view")


def _moved(s: Stmt, before: State, after: State, follow: _Follow) -> State:
    """Where `s` leaves a caller's array without a name holding all of it, keep its state first."""
    for p in {q for q, kind in before.values() if kind == "full"}:
        if not _full_holders(after, p):
            _note(follow.drops.setdefault(s, []), (p, _full_holders(before, p)[0]))
            if any(q == p for q, _ in after.values()):
                follow.unsure.setdefault(p, s.origin)  # still reached by a view, or maybe by a name
    return after


def _full_holders(state: State, p: str) -> list[str]:
    return sorted(name for name, (q, kind) in state.items() if q == p and kind == "full")


def _merge(a: State, b: State, where: Stmt, follow: _Follow) -> State:
    """Two paths meet (the branches of an `if`, a loop's entry and its next iteration). A name that
    reaches an array on one path only maybe reaches it after; where no name holds all of a caller's
    array on both paths, which one holds it (if any does) depends on the run."""
    for p in {q for q, _ in [*a.values(), *b.values()]}:
        both = set(_full_holders(a, p)) & set(_full_holders(b, p))
        if not both and (_full_holders(a, p) or _full_holders(b, p)):
            follow.unsure.setdefault(p, where.origin)
    merged: State = {}
    for name in a.keys() | b.keys():
        here, there = a.get(name), b.get(name)
        if here == there:
            merged[name] = here  # type: ignore[assignment]
        else:
            merged[name] = ((here or there)[0], "maybe")  # type: ignore[index]
    return merged


def _with_copies(body: tuple[Stmt, ...], follow: _Follow, finals: dict[str, str]) -> tuple[Stmt, ...]:
    out: list[Stmt] = []
    for s in body:
        out += _copies(follow.drops.get(s, []), finals, s.origin)
        if isinstance(s, (For, While)):
            s = replace(s, body=_with_copies(s.body, follow, finals))
        elif isinstance(s, If):
            tails = [_copies(follow.tails.get((s, block), []), finals, s.origin) for block in ("body", "orelse")]
            body_, orelse = _with_copies(s.body, follow, finals), _with_copies(s.orelse, follow, finals)
            s = replace(s, body=body_ + tuple(tails[0]), orelse=orelse + tuple(tails[1]))
        out.append(s)
    return tuple(out)


def _copies(found: list[tuple[str, str]], finals: dict[str, str], origin: cst.CSTNode) -> list[Stmt]:
    """`x_final = np.copy(x)`: the state of the caller's array `x` reaches, kept."""
    copy = cst.Attribute(cst.Name("np"), cst.Name("copy"))
    return [
        Assign(cst.Name(finals[p]), cst.Call(copy, [cst.Arg(cst.Name(name))]), None, origin)
        for p, name in found
        if p in finals
    ]
