"""How an inlined helper's parameters stand for the caller's arguments, as far as in-place updates
go: normalize binds a parameter the helper updates (`p += e`) to a fresh name marked `shares` where
the argument is the caller's variable or row, and `inplace.py` decides, once kinds are known,
whether that is the caller's array (renamed to it) or a value of the helper's own."""

from __future__ import annotations

import libcst as cst

from .exprs import has_slice, walk


def is_shared(arg: cst.BaseExpression) -> bool:
    """Is this argument a variable, or an element or row of a named array (where an array, the
    parameter is a second name for the caller's memory)?"""
    if isinstance(arg, cst.Name):
        return arg.value not in ("True", "False")
    return isinstance(arg, cst.Subscript) and isinstance(arg.value, cst.Name) and not has_slice(arg)


def updated_in_place(body: cst.CSTNode, params: list[str], supplied: dict[str, cst.BaseExpression]) -> set[str]:
    """The arrays (the caller's names) that `p += e` on a parameter may update in place: the
    array of each argument so updated, if it is one (kinds tell, later: `inplace.py`)."""
    updated = {n.target.value for n in walk(body) if isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name)}
    return {base for p in params if p in updated and (base := base_name(supplied.get(p))) is not None}


def base_name(arg: cst.BaseExpression | None) -> str | None:
    """The variable an argument is, or whose element or row it is."""
    if isinstance(arg, cst.Subscript):
        arg = arg.value
    return arg.value if isinstance(arg, cst.Name) else None
