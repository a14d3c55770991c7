"""The pass `rebound`: an array bound again as a whole at the function's top level takes a fresh
name from there on (a core-form pass, after kinds).

    res = a[1:, :] - a[:-1, :]            res = a[1:, :] - a[:-1, :]
    f = 2.0 * res                  ->     f = 2.0 * res
    res = a[:, 1:] - a[:, :-1]            res_1 = a[:, 1:] - a[:, :-1]
    g = 3.0 * res                         g = 3.0 * res_1

Reverse mode keeps one adjoint per name and starts it again at zero, shaped like the array, after
the adjoint of a whole assignment: with one name for both values, the zero took the second value's
shape and the first value's adjoint no longer fitted it (NPBench's hdiff rebinds `res` with another
shape; where nothing recorded the first `res`, the generated code failed on a broadcast). A
statement at the top level runs once and every later statement sees its value, so naming it
afresh there changes nothing the function computes, and each value keeps its own adjoint. Inside
a loop or a branch a name may hold either value at a later read; those stay one name. An argument
bound again is named afresh too (its adjoint keeps the argument's shape), but not one whose
caller's array the function writes (`CoreFunction.mutated`). Forward modes have no adjoint to
reset and skip the pass (`pipeline/stages.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeGuard

import libcst as cst

from ..ir.core import Assign, CoreFunction, For, Permute, Return, Stmt, walk_statements
from ..ir.exprs import Rename, transformed
from ..ir.naming import Namer
from .loopvars import renamed


def rename_rebound(fn: CoreFunction, is_array: Callable[[str], bool], namer: Namer) -> CoreFunction:
    """`fn` with each array bound again as a whole at the top level named afresh from there on."""
    kept = {*fn.mutated, *fn.finals}  # the caller sees these names' arrays
    body = fn.body
    ret = fn.ret
    first: dict[str, str] = {}  # a fresh name -> the name kinds know it by
    for j in range(len(body)):
        s = body[j]
        if not (_rebinds(s) and is_array(first.get(s.var, s.var)) and s.var not in kept and s.shares is None):
            continue
        if s.var not in fn.params and not any(s.var in _bound(t) for t in walk_statements(body[:j])):
            continue  # the first binding: nothing to tell apart
        new = namer.fresh(first.get(s.var, s.var))
        first[new] = first.get(s.var, s.var)
        body = (*body[:j], replace(s, target=cst.Name(new)), *renamed(body[j + 1 :], s.var, new))
        rename = Rename({s.var: cst.Name(new)})
        ret = Return(tuple(transformed(v, rename) for v in ret.values), ret.is_tuple, ret.origin)
    return fn if body is fn.body else replace(fn, body=body, ret=ret)


def _rebinds(s: Stmt) -> TypeGuard[Assign]:
    return isinstance(s, Assign) and isinstance(s.target, cst.Name) and s.accumulate is None and not s.inplace


def _bound(t: Stmt) -> set[str]:
    if isinstance(t, Assign) and isinstance(t.target, cst.Name):
        return {t.var}
    if isinstance(t, Permute):
        return set(t.targets)
    if isinstance(t, For):
        return {t.var}
    return set()
