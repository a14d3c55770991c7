"""Fused resets: a reversed loop that only zeroes adjoint elements joins the loop before it that
last reads them.

The reverse sweep zeroes an overwritten array's adjoint in a loop of its own, after the loops that
read it (heat: kappa's sum reads `v_bar[i]`, then `v_bar[i] = 0.0` in another pass over n):

    for i_1 in range(1, n - 1):                   for i_1 in range(1, n - 1):
        kappa_bar = add_unordered(..., v_bar[i_1])     kappa_bar = add_unordered(..., v_bar[i_1])
    for i in range(1, n - 1):                  ->       v_bar[i_1] = 0.0
        v_bar[i] = 0.0

One loop over the elements instead of two. The rewrite applies where the reset loop runs over the
same range (the same text), its body is only `Y[j, ..., i] = 0.0` of adjoints (leading indices
names or numbers), and the earlier loop touches adjoint arrays only as elements of those same `Y`
at its own index (`Y[j, ..., i_1]`; scalar adjoints it assigns, such as a sum, are free), calls
only the runtime's pure helpers, does not leave the loop and assigns neither the leading names
nor its index: iteration i_1 then reads and writes element i_1 of each `Y` and no other, so zeroing
it at the end of iteration i_1 gives what zeroing after the loop gave. The statements between
the two loops may be anything that names no adjoint and does not leave the loop around them (a
block restore of a primal array).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..ir.exprs import unparen
from .block_records import _CALLS, _assigned, _code, _names

_PURE_ATTRIBUTES = ("np.uint64", "math.")


def fuse_resets(text: str, adjoints: frozenset[str]) -> tuple[str, bool]:
    """`text` (one generated function) with each reset loop of the shape above fused into the
    loop before it; and whether any was."""
    module = cst.parse_module(text)
    rewriter = _Rewriter(adjoints)
    new = module.visit(rewriter)
    return (new.code, True) if rewriter.count else (text, False)


def _resets(loop: cst.For, adjoints: frozenset[str]) -> list[tuple[str, list[str]]] | None:
    """[(Y, leading indices)] of a loop whose body is only `Y[..., i] = 0.0` of adjoints."""
    if not isinstance(loop.target, cst.Name) or loop.orelse is not None or not isinstance(loop.body, cst.IndentedBlock):
        return None
    var, found = loop.target.value, []
    for line in loop.body.body:
        if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
            return None
        stmt = line.body[0]
        if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1):
            return None
        value, target = unparen(stmt.value), unparen(stmt.targets[0].target)
        if not (isinstance(value, cst.Float) and value.value == "0.0"):
            return None
        element = _at(target, var)
        if element is None or element[0] not in adjoints:
            return None
        found.append(element)
    return found or None


def _at(node: cst.BaseExpression, var: str) -> tuple[str, list[str]] | None:
    """(array, leading indices) of `X[j, ..., var]` with names or numbers leading."""
    if not (isinstance(node, cst.Subscript) and isinstance(unparen(node.value), cst.Name)):
        return None
    indices = []
    for element in node.slice:
        if not isinstance(element.slice, cst.Index):
            return None
        indices.append(unparen(element.slice.value))
    *lead, last = indices
    if not (isinstance(last, cst.Name) and last.value == var):
        return None
    if not all(isinstance(k, cst.Integer) or (isinstance(k, cst.Name) and k.value != var) for k in lead):
        return None
    return unparen(node.value).value, [_code(k) for k in lead]  # type: ignore[attr-defined]


class _OwnElements(cst.CSTVisitor):
    """Whether a loop body touches adjoint arrays only as the reset elements at its own index."""

    def __init__(self, adjoints: frozenset[str], resets: dict[str, list[str]], var: str, scalars: set[str]):
        self.adjoints, self.resets, self.var, self.scalars, self.ok = adjoints, resets, var, scalars, True

    def visit_Subscript(self, node: cst.Subscript) -> bool:
        value = unparen(node.value)
        if isinstance(value, cst.Name) and value.value in self.adjoints:
            element = _at(node, self.var)
            if element is None or self.resets.get(element[0]) != element[1]:
                self.ok = False
            for part in node.slice:  # the indices (names of the loop, not adjoints) are checked too
                part.visit(self)
            return False
        return True

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.adjoints and node.value not in self.scalars:
            self.ok = False

    def visit_Call(self, node: cst.Call) -> bool:
        func = _code(node.func)
        if func not in _CALLS and not func.startswith(_PURE_ATTRIBUTES):
            self.ok = False
        return True

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if not _code(node).startswith(_PURE_ATTRIBUTES):
            self.ok = False
        return False

    def visit_Break(self, node: cst.Break) -> None:
        self.ok = False

    def visit_Continue(self, node: cst.Continue) -> None:
        self.ok = False

    def visit_Return(self, node: cst.Return) -> None:
        self.ok = False


def _resets_may_join_after(line: Any, adjoints: frozenset[str]) -> bool:
    """Whether `line` is a candidate to take the resets: a loop that names an adjoint."""
    return isinstance(line, cst.For) and bool(_names(line) & adjoints)


def _exits(line: Any) -> bool:
    """Whether `line` contains a `break`, `continue` or `return` (it may skip what follows)."""
    found: list[cst.CSTNode] = []

    class _Find(cst.CSTVisitor):
        def visit_Break(self, node: cst.Break) -> None:
            found.append(node)

        def visit_Continue(self, node: cst.Continue) -> None:
            found.append(node)

        def visit_Return(self, node: cst.Return) -> None:
            found.append(node)

    line.visit(_Find())
    return bool(found)


def _scalar_targets(lines: list[Any]) -> set[str]:
    """Names bound by plain `name = ...` or `name += ...` in `lines` (scalar accumulators)."""
    found: set[str] = set()
    for line in lines:
        if isinstance(line, cst.SimpleStatementLine):
            for stmt in line.body:
                if isinstance(stmt, cst.Assign):
                    found.update(_code(t.target) for t in stmt.targets if isinstance(unparen(t.target), cst.Name))
                elif isinstance(stmt, cst.AugAssign) and isinstance(unparen(stmt.target), cst.Name):
                    found.add(_code(stmt.target))
    return found


class _Rewriter(cst.CSTTransformer):
    def __init__(self, adjoints: frozenset[str]):
        self.adjoints, self.count = adjoints, 0

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated.with_changes(body=self._block(list(updated.body)))

    def _block(self, lines: list[Any]) -> list[Any]:
        k = 0
        while k < len(lines):
            line = lines[k]
            resets = _resets(line, self.adjoints) if isinstance(line, cst.For) else None
            target = self._reader(lines, k, resets) if resets else None
            if target is not None:
                lines[target] = self._fused(lines[target], line, resets)  # type: ignore[arg-type]
                self.count += 1
                del lines[k]
                continue
            k += 1
        return lines

    def _reader(self, lines: list[Any], k: int, resets: list[tuple[str, list[str]]]) -> int | None:
        """The position of the loop before `lines[k]` the resets can join, or None."""
        names = {y for y, _ in resets}
        j = k - 1
        while j >= 0 and not _resets_may_join_after(lines[j], self.adjoints):
            if _names(lines[j]) & (self.adjoints | names) or _exits(lines[j]):
                return None
            j -= 1
        if j < 0:
            return None
        reader, reset = lines[j], lines[k]
        if reader.orelse is not None or not isinstance(reader.target, cst.Name):
            return None
        if _code(unparen(reader.iter)) != _code(unparen(reset.iter)):
            return None
        var = reader.target.value
        body = list(reader.body.body) if isinstance(reader.body, cst.IndentedBlock) else []
        leads = {y: lead for y, lead in resets}
        if len(leads) != len(resets):
            return None
        lead_names = {name for lead in leads.values() for name in lead}
        if (lead_names | {var}) & _assigned(body):
            return None
        check = _OwnElements(self.adjoints, leads, var, _scalar_targets(body) - names)
        for line in body:
            line.visit(check)
        return j if check.ok and body else None

    def _fused(self, reader: cst.For, reset: cst.For, resets: list[tuple[str, list[str]]]) -> cst.For:
        var = reader.target.value  # type: ignore[attr-defined]
        zeros = []
        for y, lead in resets:
            statement = cst.parse_statement(f"{y}[{', '.join([*lead, var])}] = 0.0")
            zeros.append(statement)
        comment = cst.EmptyLine(comment=cst.Comment("# and its adjoints' elements zeroed here, in the same pass"))
        zeros[0] = zeros[0].with_changes(leading_lines=[comment])
        return reader.with_changes(body=reader.body.with_changes(body=[*reader.body.body, *zeros]))
