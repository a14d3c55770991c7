"""Variables bound again at the function's top level with another type (a part of the pass
`kinds`): NPBench's lenet rebinds `x = np.reshape(x, (N, C))` after a 4-D `x`. kinds gives each
variable one type, so such a variable takes a fresh name from that statement on, as the pass
`rebound` names rebound arrays (frontend/rebound.py): a top-level statement runs once and every
later statement sees its value, so the function computes the same. A binding in a loop or a branch,
or of a variable whose array the caller sees, stays refused with both types named.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from ..frontend.loopvars import renamed
from ..ir.core import Assign, CoreFunction, Return
from ..ir.exprs import Rename, transformed
from ..ir.naming import Namer


class Rebinding(Exception):
    """A variable bound again at the function's top level with another type: statement `index`."""

    def __init__(self, index: int):
        super().__init__(index)
        self.index = index


def top_rebinding(fn: CoreFunction, stmt: object, target: str) -> int | None:
    """The top-level statement from which `target`, bound there again as a whole with a type that
    does not join its earlier one, can take a fresh name (None: a binding in a loop or a branch, or
    a variable the caller sees)."""
    if target in fn.mutated or target in fn.finals:
        return None
    bindings = [
        j
        for j, s in enumerate(fn.body)
        if isinstance(s, Assign)
        and isinstance(s.target, cst.Name)
        and s.var == target
        and s.accumulate is None
        and not s.inplace
        and s.shares is None
    ]
    at = next((j for j, s in enumerate(fn.body) if s is stmt), None)
    if at is None or at not in bindings:
        return None
    if at != bindings[0] or target in fn.params:
        return at
    later = [j for j in bindings if j > at]
    return later[0] if later else None


def rename_from(fn: CoreFunction, index: int, namer: Namer) -> CoreFunction:
    """`fn` with the variable bound by top-level statement `index` named afresh from there on."""
    s = fn.body[index]
    assert isinstance(s, Assign)
    new = namer.fresh(s.var)
    rename = Rename({s.var: cst.Name(new)})
    body = (*fn.body[:index], replace(s, target=cst.Name(new)), *renamed(fn.body[index + 1 :], s.var, new))
    ret = Return(tuple(transformed(v, rename) for v in fn.ret.values), fn.ret.is_tuple, fn.ret.origin)
    return replace(fn, body=body, ret=ret)
