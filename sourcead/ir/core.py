"""The core form: what `normalize` produces and every later pass reads.

Statements are a handful of frozen dataclasses; expressions stay libcst nodes, with calls
rewritten to canonical names (`math.sin`, `np.zeros`). Every statement keeps the user's
statement it came from (`origin`) for error positions and for `# adjoint of:` comments.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ..errors import Location
from .exprs import Frozen, code, names_in


@dataclass(frozen=True, eq=False)
class Assign:
    """`target = value`, or an explicit accumulation `target += value` / `target -= value`.

    `target` is a `cst.Name` (a variable) or a `cst.Subscript` of a named array at integer indices.
    An accumulation's value never reads its target (normalize rewrites those as assignments).
    Marks that only `inplace.py` reads (and clears, once kinds say which names hold arrays):
    `inplace`, an augmented assignment to a name (`C += B`: in place if C holds an array);
    `shares`, a helper's parameter (as the user named it) bound to the caller's variable or row
    (`h_C = C`: the same array); `where`, the user's line of either, in a helper's file too.
    """

    target: cst.Name | cst.Subscript
    value: cst.BaseExpression
    accumulate: str | None  # None, "+" or "-"
    origin: cst.CSTNode
    inplace: bool = False
    shares: str | None = None
    where: Location | None = None

    @property
    def var(self) -> str:
        """The variable written: the name, or the array whose element is written."""
        node = self.target.value if isinstance(self.target, cst.Subscript) else self.target
        assert isinstance(node, cst.Name), "an element's array is named (fence)"
        return node.value

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
    serial: str = ""  # why a `prange` loop runs as a `range` loop: its iterations may race (races.py)

    def range_text(self, serial: bool = False) -> str:
        """`range(...)` as written (`prange` for a parallel loop, unless `serial`)."""
        func = "prange" if self.parallel and not serial else "range"
        start, stop, step = code(self.start), code(self.stop), code(self.step)
        if step == "1":
            return f"{func}({stop})" if start == "0" else f"{func}({start}, {stop})"
        return f"{func}({start}, {stop}, {step})"


@dataclass(frozen=True, eq=False)
class If:
    test: cst.BaseExpression
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...]
    origin: cst.CSTNode


@dataclass(frozen=True, eq=False)
class While:
    test: cst.BaseExpression
    body: tuple[Stmt, ...]
    origin: cst.CSTNode


@dataclass(frozen=True, eq=False)
class Break:
    """After `exits.py`, a loop's only break: the last statement of its body, under a flag."""

    origin: cst.CSTNode


@dataclass(frozen=True, eq=False)
class Continue:
    """Only before `exits.py`, which turns it into a flag."""

    origin: cst.CSTNode


@dataclass(frozen=True, eq=False)
class Exit:
    """A `return` anywhere; `exits.py` turns every one into assignments and a flag."""

    values: tuple[cst.BaseExpression, ...]
    is_tuple: bool
    origin: cst.CSTNode


@dataclass(frozen=True, eq=False)
class Permute:
    """`a, b = b, a`: names exchange their values (or arrays); its own inverse is known."""

    targets: tuple[str, ...]
    sources: tuple[str, ...]
    origin: cst.CSTNode

    def text(self) -> str:
        return f"{', '.join(self.targets)} = {', '.join(self.sources)}"


Stmt = Assign | For | If | While | Break | Continue | Exit | Permute
Loop = For | While


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
    constants: tuple[tuple[str, Frozen], ...]  # frozen globals, (name, value)
    mutated: tuple[str, ...] = ()  # array parameters whose caller's array the function writes (`outputs.py`)
    finals: tuple[str, ...] = ()  # the variable holding each one's final state, where not the parameter
    custom: tuple[str, ...] = ()  # custom rules it calls (keys), bound in the module header
    arg_names: tuple[str, ...] | None = None  # the parameters as the user named them, where normalize renamed

    @property
    def final_states(self) -> tuple[str, ...]:
        """The variables whose values at the end are the written arguments' final states."""
        return self.finals or self.mutated

    @property
    def user_params(self) -> tuple[str, ...]:
        """The parameters as the user named them (the generated code may rename one that clashes)."""
        return self.arg_names or self.params


def walk_statements(body: tuple[Stmt, ...]) -> Iterator[Stmt]:
    """Every statement, compound statements before their blocks, in source order."""
    for stmt in body:
        yield stmt
        for block in blocks(stmt):
            yield from walk_statements(block)


def blocks(stmt: Stmt) -> tuple[tuple[Stmt, ...], ...]:
    """The statement blocks nested directly in `stmt`."""
    if isinstance(stmt, (For, While)):
        return (stmt.body,)
    if isinstance(stmt, If):
        return (stmt.body, stmt.orelse)
    return ()


def written(stmt: Stmt) -> set[str]:
    """Variables that `stmt` itself writes (not its nested blocks)."""
    if isinstance(stmt, (Assign, For)):
        return {stmt.var}
    if isinstance(stmt, Permute):
        return set(stmt.targets)
    return set()


def assigned_names(body: tuple[Stmt, ...]) -> set[str]:
    """Variables written anywhere in `body` (array names for element writes, loop variables)."""
    names: set[str] = set()
    for stmt in walk_statements(body):
        names |= written(stmt)
    return names


def mentioned_outside(body: tuple[Stmt, ...], loop: For) -> set[str]:
    """Names read or assigned by the function's statements outside `loop`'s body (its header counts)."""
    inside = set(walk_statements(loop.body))
    found: set[str] = set()
    for s in walk_statements(body):
        if s in inside:
            continue
        if isinstance(s, Assign):
            found |= {s.var} | names_in(s.value) | names_in(s.target)
        elif isinstance(s, For):
            found |= {s.var} | names_in(s.start) | names_in(s.stop) | names_in(s.step)
        elif isinstance(s, (If, While)):
            found |= names_in(s.test)
        else:
            found |= assigned_names((s,)) | {n for n in getattr(s, "sources", ())}
    return found


def has_break(loop: Loop) -> bool:
    """Does the loop exit early (a `Break` directly in its body, not in an inner loop)?"""
    return any(isinstance(s, Break) for s in _same_loop(loop.body))


def _same_loop(body: tuple[Stmt, ...]) -> Iterator[Stmt]:
    for stmt in body:
        yield stmt
        if isinstance(stmt, If):
            yield from _same_loop(stmt.body)
            yield from _same_loop(stmt.orelse)
