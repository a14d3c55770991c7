"""The core form: what `normalize` produces and every later pass reads.

Statements are a handful of frozen dataclasses; expressions stay libcst nodes, with calls
rewritten to canonical names (`math.sin`, `np.zeros`). Every statement keeps the user's
statement it came from (`origin`) for error positions and for `# adjoint of:` comments.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from .exprs import code


@dataclass(frozen=True, eq=False)
class Assign:
    """`target = value`, or an explicit accumulation `target += value` / `target -= value`.

    `target` is a `cst.Name` (a variable) or a `cst.Subscript` of a named array at integer indices.
    An accumulation's value never reads its target (normalize rewrites those as assignments).
    """

    target: cst.Name | cst.Subscript
    value: cst.BaseExpression
    accumulate: str | None  # None, "+" or "-"
    origin: cst.CSTNode

    @property
    def var(self) -> str:
        """The variable written: the name, or the array whose element is written."""
        node = self.target.value if isinstance(self.target, cst.Subscript) else self.target
        return node.value  # type: ignore[union-attr]

    @property
    def writes_element(self) -> bool:
        return isinstance(self.target, cst.Subscript)

    def text(self) -> str:
        op = {None: "=", "+": "+=", "-": "-="}[self.accumulate]
        return f"{code(self.target)} {op} {code(self.value)}"


@dataclass(frozen=True, eq=False)
class For:
    """`for var in range(start, stop, step)`; `parallel` for `numba.prange`."""

    var: str
    start: cst.BaseExpression
    stop: cst.BaseExpression
    step: cst.BaseExpression
    body: tuple[Stmt, ...]
    parallel: bool
    origin: cst.CSTNode

    def range_text(self) -> str:
        func = "prange" if self.parallel else "range"
        start, stop, step = code(self.start), code(self.stop), code(self.step)
        if step == "1":
            return f"{func}({stop})" if start == "0" else f"{func}({start}, {stop})"
        return f"{func}({start}, {stop}, {step})"


Stmt = Assign | For


@dataclass(frozen=True, eq=False)
class Return:
    """The single exit: returned variables or constants (normalize binds anything else)."""

    values: tuple[cst.BaseExpression, ...]
    is_tuple: bool
    origin: cst.CSTNode


@dataclass(frozen=True, eq=False)
class CoreFunction:
    name: str
    params: tuple[str, ...]
    body: tuple[Stmt, ...]
    ret: Return
    constants: tuple[tuple[str, object], ...]  # frozen globals, (name, value)


def walk_statements(body: tuple[Stmt, ...]) -> Iterator[Stmt]:
    """Every statement, loops before their bodies, in source order."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, For):
            yield from walk_statements(stmt.body)


def assigned_names(body: tuple[Stmt, ...]) -> set[str]:
    """Variables written anywhere in `body` (array names for element writes, loop variables)."""
    names: set[str] = set()
    for stmt in walk_statements(body):
        names.add(stmt.var)
    return names
