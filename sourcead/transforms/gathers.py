"""The pass `gathers`: reads at an array index are the declared primitives np.take and np.extract.

NumPy's `x[idx]` at a 1-D integer array gathers x's elements at idx (repeats and negative indices
included); its derivative scatters back (`runtime.take_bar`, where a repeated index adds up).
NumPy's `x[m]` through a bool mask of x's shape selects the elements where m holds, in C order;
its derivative puts g back there (`runtime.extract_bar`), and `mask_of` raises NumPy's IndexError
for a mask of another shape (np.extract itself would read one of the same size). Kinds type the
subscript (`kinds.is_gather`, `kinds.is_selection`: a 1-D array of x's dtype) and this pass, right
after them, writes it as the declared primitive, the one spelling every later pass knows:

    y[i] = vals @ x[cols]      ->  y[i] = vals @ np.take(x, cols)
    v = data[mask]             ->  v = np.extract(mask_of(mask, data, False), data)

No later pass sees a subscript indexed by an array. Kinds refuse a write at an array of indices
(`x[idx] += v`: NumPy adds once at a repeated index) and through a mask held in a name (a mask
spelled in the index is `np.where`, frontend/masks.py). The indices are data, so the shape
contract cannot bound them: where they are (a slice of) an int argument, the call probes all its
elements against x's size first (`analysis/contract_probe.py`: in range, the variant without
bounds checks runs, its prange loops parallel); else the function runs with numba's bounds checks.
np.take and take_bar raise IndexError out of range.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from ..analysis.kinds import Kinds, is_gather, is_selection
from ..ir.core import Assign, CoreFunction, Exit, For, If, Return, Stmt, While
from ..ir.exprs import transformed

_TAKE = cst.Attribute(cst.Name("np"), cst.Name("take"))
_EXTRACT = cst.Attribute(cst.Name("np"), cst.Name("extract"))


class _Gathers(cst.CSTTransformer):
    def __init__(self, kinds: Kinds):
        self.kinds = kinds
        self.found = False

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        if len(original.slice) != 1 or not isinstance(original.slice[0].slice, cst.Index):
            return updated
        index = original.slice[0].slice.value
        base, at = self.kinds.type_of(original.value), self.kinds.type_of(index)
        chosen = cst.ensure_type(updated.slice[0].slice, cst.Index).value
        if is_gather(base, at, 1):
            self.found = True
            return cst.Call(_TAKE, [cst.Arg(updated.value), cst.Arg(chosen)])
        if is_selection(base, at, 1):
            self.found = True
            checked = cst.Call(
                cst.Name("mask_of"), [cst.Arg(chosen), cst.Arg(updated.value), cst.Arg(cst.Name("False"))]
            )
            return cst.Call(_EXTRACT, [cst.Arg(checked), cst.Arg(updated.value)])
        return updated


def lower_gathers(fn: CoreFunction, kinds: Kinds) -> CoreFunction:
    """`fn` with every gather `x[idx]` written `np.take(x, idx)` (itself where there is none)."""
    gathers = _Gathers(kinds)
    body = _mapped(fn.body, gathers)
    ret = replace(fn.ret, values=tuple(transformed(v, gathers) for v in fn.ret.values))
    return replace(fn, body=body, ret=ret) if gathers.found else fn


def _mapped(body: tuple[Stmt, ...], gathers: _Gathers) -> tuple[Stmt, ...]:
    def expr(e: cst.BaseExpression) -> cst.BaseExpression:
        return transformed(e, gathers)

    out: list[Stmt] = []
    for s in body:
        if isinstance(s, Assign):
            target = s.target if isinstance(s.target, cst.Name) else cst.ensure_type(expr(s.target), cst.Subscript)
            s = replace(s, target=target, value=expr(s.value))
        elif isinstance(s, For):
            s = replace(s, start=expr(s.start), stop=expr(s.stop), step=expr(s.step), body=_mapped(s.body, gathers))
        elif isinstance(s, While):
            s = replace(s, test=expr(s.test), body=_mapped(s.body, gathers))
        elif isinstance(s, If):
            s = replace(s, test=expr(s.test), body=_mapped(s.body, gathers), orelse=_mapped(s.orelse, gathers))
        elif isinstance(s, (Exit, Return)):
            s = replace(s, values=tuple(expr(v) for v in s.values))
        out.append(s)
    return tuple(out)
