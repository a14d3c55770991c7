"""The pass `activity`: which variables carry derivatives.

A variable is *varied* when its value depends differentiably on a `wrt` input and *useful* when
it influences a returned value; it is *active* when both, and it is a float or a float array.
Ints (indices, sizes, loop counters) are never active. The analysis is flow-insensitive per
variable and iterated to a fixed point, so it is exact for loops of any depth. Only statements
that write an active variable get derivative code.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ..frontend.aliases import live_after, statements_after, view_base, writes_in_place
from ..ir.core import Assign, CoreFunction, Permute, walk_statements
from ..rules import classify
from .kinds import Kinds


@dataclass(frozen=True)
class Activity:
    """The side table of activity facts (never stored on the tree)."""

    wrt: tuple[str, ...]
    varied: frozenset[str]
    useful: frozenset[str]
    active: frozenset[str]
    because: dict[str, tuple[frozenset[str], frozenset[str]]]  # var -> (varied from, useful for)

    def __contains__(self, var: str) -> bool:
        return var in self.active


def analyze_activity(fn: CoreFunction, kinds: Kinds, wrt: tuple[str, ...]) -> Activity:
    edges = _edges(fn) + _shared_memory(fn, kinds)
    outputs = [(v.value, _output_label(fn, k)) for k, v in enumerate(fn.ret.values) if isinstance(v, cst.Name)]
    outputs += [(v, f"the written argument {m}") for m, v in zip(fn.mutated, fn.final_states, strict=True)]

    # varied: forward closure from the wrt inputs, remembering which inputs reach each variable
    varied_from: dict[str, set[str]] = {w: {w} for w in wrt}
    changed = True
    while changed:
        changed = False
        for target, sources in edges:
            if not kinds.carries(target):
                continue
            origins = set().union(*(varied_from.get(n, set()) for n in sources))
            if not origins <= varied_from.setdefault(target, set()):
                varied_from[target] |= origins
                changed = True
    varied = {v for v, origins in varied_from.items() if origins}

    # useful: backward closure from the returned variables
    useful_for: dict[str, set[str]] = {}
    for out, label in outputs:
        useful_for.setdefault(out, set()).add(label)
    changed = True
    while changed:
        changed = False
        for target, sources in edges:
            targets = useful_for.get(target)
            if not targets:
                continue
            for source in sources:
                if kinds.carries(source) and not targets <= useful_for.setdefault(source, set()):
                    useful_for[source] |= targets
                    changed = True
    useful = set(useful_for)

    active = {v for v in varied & useful if kinds.carries(v)}
    because = {
        v: (frozenset(varied_from.get(v, ())), frozenset(useful_for.get(v, ())))
        for v in sorted(set(varied_from) | set(useful_for))
    }
    return Activity(tuple(wrt), frozenset(varied), frozenset(useful), frozenset(active), because)


def _edges(fn: CoreFunction) -> list[tuple[str, set[str]]]:
    """Every flow of a value into a variable: (target, the variables it is computed from)."""
    edges: list[tuple[str, set[str]]] = []
    for stmt in walk_statements(fn.body):
        if isinstance(stmt, Assign):
            edges.append((stmt.var, value_sources(stmt.value)))
        elif isinstance(stmt, Permute):
            edges += [(t, {s}) for t, s in zip(stmt.targets, stmt.sources, strict=True)]
    return edges


def _shared_memory(fn: CoreFunction, kinds: Kinds) -> list[tuple[str, set[str]]]:
    """`D = C` or a view `r = A[i]` of an array that either name writes in place later: the write through
    one name changes the other, so a value flows both ways (`C` from `D` too). Without this edge a
    write through `D` that only `C` reads later would carry no derivative (D itself is not useful):
    the two names are one for activity, and reverse mode then refuses or follows them
    (`adjoint.array_assignment`, `check_view`)."""
    edges = []
    for s in walk_statements(fn.body):
        if not (
            isinstance(s, Assign) and isinstance(s.target, cst.Name) and s.accumulate is None and kinds.is_array(s.var)
        ):
            continue
        if isinstance(s.value, cst.Name):
            base = s.value.value
        else:
            found = view_base(s.value)
            if found is None:
                continue
            base = found[0]
        if kinds.is_array(base) and _written_while_read(fn, s, s.var, base):
            edges.append((base, {s.var}))
    return edges


def _written_while_read(fn: CoreFunction, s: Assign, name: str, base: str) -> bool:
    """Once `s` binds `name` to `base`'s memory, is one of them written in place while the other
    may still be read (later in the body, or as a result or a written argument's final state)?"""
    writes = [
        t
        for t in statements_after(fn.body, s)
        if isinstance(t, Assign) and writes_in_place(t) and t.var in (name, base)
    ]
    at_end = set(fn.final_states) | set(fn.mutated)
    for writer in {t.var for t in writes}:
        other = base if writer == name else name
        live = live_after(fn, other)
        if other in at_end or any(live.get(t, True) for t in writes if t.var == writer):
            return True
    return False


def _output_label(fn: CoreFunction, k: int) -> str:
    return f"output {k}" if fn.ret.is_tuple else "the result"


def value_sources(node: cst.BaseExpression) -> set[str]:
    """Names whose values flow into `node` through a derivative (not indices, sizes or shapes).

    A primitive's differentiable operands count; so do all operands of one that has no derivative
    rule (so a value that carries a derivative reaching it is found, and refused by linearize);
    a piecewise-constant primitive's operands (floor, comparisons, sizes) never do.
    """
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, cst.Subscript):
        return value_sources(node.value)  # the indices carry no derivative
    if isinstance(node, cst.Tuple):
        return set().union(*(value_sources(e.value) for e in node.elements))
    found = classify(node)
    if found is None:
        return set()
    prim, bound = found
    if prim.constant:
        return set()
    if prim.variadic:
        return set().union(*(value_sources(v) for v in bound.operands))
    operands = prim.differentiable if prim.derivative is not None else tuple(bound.args)
    return set().union(*(value_sources(bound.args[p]) for p in operands if p in bound.args))
