"""How an inlined helper's parameters stand for the caller's arguments: the argument itself (a
variable, or an element or row that keeps its value through the call: `is_place`), or a fresh
name bound at the call. A parameter the helper updates (`p += e`) is bound to a fresh name marked
`shares` where the argument is the caller's variable or row, and `inplace.py` decides, once kinds
are known, whether that is the caller's array (renamed to it) or a value of the helper's own."""

from __future__ import annotations

import libcst as cst

from ..ir.exprs import has_slice, names_in, subscript_indices, walk


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


def is_place(arg: cst.BaseExpression, written_inside: set[str], writes_arrays: bool) -> bool:
    """Can a parameter stand for this argument expression itself? A variable, a tuple of them, or
    an element or row of a named array passed to a function that writes no array (so the element
    keeps the value it had at the call) and cannot change its indices."""
    if isinstance(arg, cst.Name):
        return arg.value not in ("True", "False")
    if isinstance(arg, cst.Tuple):
        return all(isinstance(e.value, cst.Name) for e in arg.elements)
    if isinstance(arg, cst.Subscript) and isinstance(arg.value, cst.Name) and not has_slice(arg):
        indices = set().union(*(names_in(i) for i in subscript_indices(arg)))
        return not writes_arrays and not indices & written_inside
    return False


def writes_elements(body: cst.CSTNode) -> bool:
    """Does a function body store into an element or slice of any array?"""
    for node in walk(body):
        targets: list[cst.BaseExpression] = []
        if isinstance(node, cst.AssignTarget):
            targets = [e.value for e in node.target.elements] if isinstance(node.target, cst.Tuple) else [node.target]
        elif isinstance(node, cst.AugAssign):
            targets = [node.target]
        if any(isinstance(t, cst.Subscript) for t in targets):
            return True
    return False
