"""The names a function binds: its parameters and every name it assigns (targets, also inside
tuples, and loop variables), kept per node because the later passes ask again and again.

The fence, normalize and the post-passes read them: a name the function binds is a local, any
other name a global (or a module) to look up.
"""

from __future__ import annotations

import libcst as cst

from ..ir.exprs import children


def local_names(node: cst.FunctionDef) -> set[str]:
    names = {p.name.value for p in [*node.params.params, *node.params.posonly_params]}
    return names | assigned_in(node.body)


def assigned_in(body: cst.CSTNode) -> set[str]:
    """Names bound anywhere in `body`: assignment targets (also inside tuples), loop variables.

    A walk over statements alone (an expression binds no name the fence lets through), kept per
    node as `exprs.names_in` keeps names: libcst's visitors rebuild every node they pass, and the
    last passes ask this of each loop of the generated function, nested ones again."""
    names = _ASSIGNED.get(body)
    if names is None:
        found: set[str] = set()
        _collect_assigned(body, found)
        if len(_ASSIGNED) >= _ASSIGNED_KEPT:
            _ASSIGNED.clear()
        names = _ASSIGNED[body] = frozenset(found)
    return set(names)


_ASSIGNED: dict[cst.CSTNode, frozenset[str]] = {}  # by node; holding it keeps its id from reuse
_ASSIGNED_KEPT = 100_000


def _collect_assigned(node: cst.CSTNode, found: set[str]) -> None:
    if isinstance(node, cst.BaseExpression):
        return
    if isinstance(node, cst.Assign):
        for target in node.targets:
            found.update(_target_names(target.target))
        return
    if isinstance(node, cst.AugAssign):
        found.update(_target_names(node.target))
        return
    if isinstance(node, cst.For):
        found.update(_target_names(node.target))
    for child in children(node):
        _collect_assigned(child, found)


def _target_names(target: cst.BaseExpression) -> set[str]:
    """The names a loop binds: `i`, or `i, (a, b)` for a loop over enumerate(zip(...))."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_target_names(e.value) for e in target.elements))
    return set()
