"""Is a pattern static (the same for every argument of these shapes) or local to the point?

The pattern sweep follows the arguments given: a branch taken, a data index read, a `max` choosing
one operand. Where none of these reads data, every argument of the same shapes (and the same int
arguments) gives the same pattern: it is static, and the API caches it by shapes alone. Data is a
float, or anything computed from an array's element; shapes, sizes and int arguments are not data.
`local_reasons` lists, with their lines, the places that make a pattern local; none: static.
"""

from __future__ import annotations

import libcst as cst

from ..analysis.program import Program
from ..ir.core import Assign, For, If, Permute, While, walk_statements
from ..ir.exprs import code, names_in
from ..rules import Selection, classify


def local_reasons(prog: Program) -> list[str]:
    """Where the pattern depends on the arguments' values, one line each (empty: static)."""
    data = _data_variables(prog)
    reasons: list[str] = []

    def where(node: cst.CSTNode) -> str:
        loc = prog.parsed.locate(node)
        return f"line {loc.line}" if loc is not None else "generated code"

    for stmt in walk_statements(prog.fn.body):
        if isinstance(stmt, (If, While)) and _reads_data(stmt.test, data):
            reasons.append(f"{where(stmt.origin)}: a branch on data (`{code(stmt.test)}`)")
        if isinstance(stmt, For) and any(_reads_data(e, data) for e in (stmt.start, stmt.stop, stmt.step)):
            reasons.append(f"{where(stmt.origin)}: a loop bound computed from data")
        if isinstance(stmt, Assign):
            for node in (stmt.target, stmt.value):
                for index in _indices(node):
                    if _reads_data(index, data):
                        reasons.append(f"{where(stmt.origin)}: an index read from data (`{code(index)}`)")
                        break
            if any(_reads_data(e.test, data) for e in _conditionals(stmt.value)):
                reasons.append(f"{where(stmt.origin)}: a conditional expression on data")
            if prog.is_active(stmt.var) and _selects(stmt.value, prog):
                reasons.append(f"{where(stmt.origin)}: a selection (max, min, where, clip) of active values")
    return list(dict.fromkeys(reasons))


def _data_variables(prog: Program) -> set[str]:
    """Floats, and every variable computed from a float or an array element (a fixed point)."""
    kinds = prog.kinds
    data = {p for p in prog.fn.params if not kinds.is_array(p) and kinds[p].dtype == "float"}
    statements = list(walk_statements(prog.fn.body))
    changed = True
    while changed:
        changed = False
        for stmt in statements:
            new: set[str] = set()
            if isinstance(stmt, Assign) and not kinds.is_array(stmt.var):
                if kinds[stmt.var].dtype == "float" or _reads_data(stmt.value, data):
                    new.add(stmt.var)
            elif isinstance(stmt, For) and any(_reads_data(e, data) for e in (stmt.start, stmt.stop, stmt.step)):
                new.add(stmt.var)
            elif isinstance(stmt, Permute):
                new = {t for t, s in zip(stmt.targets, stmt.sources, strict=True) if s in data}
            if not new <= data:
                data |= new
                changed = True
    return data


def _reads_data(node: cst.CSTNode, data: set[str]) -> bool:
    """Does `node` read a data variable or an array's element (`idx[k]`; not `x.shape[0]`)?"""
    if names_in(node) & data:
        return True
    return any(True for _ in _element_reads(node))


def _element_reads(node: cst.CSTNode):
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
        yield node
    for child in node.children:
        yield from _element_reads(child)


def _indices(node: cst.CSTNode):
    """The index expressions of every subscript in `node`."""
    if isinstance(node, cst.Subscript):
        for element in node.slice:
            inner = element.slice
            if isinstance(inner, cst.Index):
                yield inner.value
            elif isinstance(inner, cst.Slice):
                yield from (part for part in (inner.lower, inner.upper, inner.step) if part is not None)
    for child in node.children:
        yield from _indices(child)


def _conditionals(node: cst.CSTNode):
    if isinstance(node, cst.IfExp):
        yield node
    for child in node.children:
        yield from _conditionals(child)


def _selects(node: cst.CSTNode, prog: Program) -> bool:
    if isinstance(node, cst.Call):
        found = classify(node)
        if found is not None and isinstance(found[0].derivative, Selection):
            if any(prog.is_active(n) for n in names_in(node)):
                return True
    return any(_selects(child, prog) for child in node.children)
