"""Forward mode, the passes `tangent` and `primal`: a tangent statement beside every active statement.

`f(x, ...)` becomes `f_jvp(x, ..., x_dot)` returning `(value, value_dot)`. The tangent of a
statement is computed before the statement runs, so `x = x * y` reads the old `x` in both.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from ..analysis.program import Program, builds_array, copied_array
from ..derive.linearize import Guards, tangent
from ..frontend.marker import MARKER, marked
from ..ir.core import Assign, Break, For, If, Permute, Stmt, While
from ..ir.emit import Line, Writer, tuple_text
from ..ir.exprs import code, names_in, number, unparen
from ..rules import primitive
from .singular import singular_tangents

# the comment on a tangent bound for a strong zero's guard: vector mode reads its number of axes
STRONG_TANGENT = "a tangent ({axes}-D), bound for the strong zero's guard"
STRONG_COMMENT = re.compile("# " + re.escape(STRONG_TANGENT).replace(re.escape("{axes}"), "([0-9]+)"))


def primal_function(prog: Program) -> str:
    """The core form itself, compiled as the primal of `@differentiable` (calls are inlined)."""
    fn = prog.fn
    out = Writer()
    with out.block(f"def {fn.name}_primal({', '.join(fn.params)})"):
        out.comment(f"{fn.name} in core form, with the functions it calls inlined")
        for line in prog.placeholders():
            out.line(line)
        _block(prog, fn.body, out)
        values = [code(v) for v in fn.ret.values]
        out.line(f"return {tuple_text(values) if fn.ret.is_tuple else values[0]}")
    return out.text()


def forward_function(prog: Program, second_order: bool = False) -> str:
    """An exactly zero tangent contributes exactly zero through a singular partial where it is
    infinite, and a tangent that may be infinite (`singular.py`) exactly zero through an exactly
    zero partial above it (`derive/linearize.py`). In the tangent code that second order
    differentiates again (`second_order`) the guard is `p * t if t != 0.0 or isfinite(p) else
    0.0`: a guard on t alone would drop the derivative of `p * t` where t vanishes at a point and p
    is finite (H v of sqrt(x * x + 1) at 0 would be 0, not 1); and there is no guard on a partial."""
    fn = prog.fn
    params = list(fn.params) + [prog.dot(w) for w in prog.wrt]
    out = Writer()
    with out.block(f"def {fn.name}_jvp({', '.join(params)})"):
        out.comment(f"forward mode (tangents) of {fn.name} with respect to {', '.join(prog.wrt)}")
        _active_comment(prog, out)
        for line in prog.placeholders(tangents=True):
            out.line(line)
        for param in fn.params:
            if prog.is_active(param) and param not in prog.wrt:
                out.line(f"{prog.dot(param)} = {code(prog.zero(param))}  # {param} is not differentiated: zero tangent")
        singular = frozenset() if second_order else singular_tangents(prog)  # guards of first order only
        _block(prog, fn.body, out, _How(second_order, singular))
        values = [code(v) for v in fn.ret.values]
        tangents = _returned_tangents(prog, fn.ret.values)
        value, tangent = (tuple_text(values), tuple_text(tangents)) if fn.ret.is_tuple else (values[0], tangents[0])
        if fn.mutated:  # written arguments are outputs too
            value = tuple_text([value, *fn.final_states])
            tangent = tuple_text([tangent, *_returned_tangents(prog, tuple(cst.Name(m) for m in fn.final_states))])
        out.line(f"return {value}, {tangent}")
    return out.text()


@dataclass(frozen=True)
class _How:
    """How the tangent statements are written: for second order (`forward_function`), and which
    variables' tangents may be non-finite where their values are finite (`singular.py`)."""

    second_order: bool = False
    singular: frozenset[str] = frozenset()


def _active_comment(prog: Program, out: Writer) -> None:
    for line in prog.activity_comments():
        out.comment(line)


def _block(prog: Program, body: tuple[Stmt, ...], out: Writer, how: _How = _How()) -> None:
    for stmt in body:
        _statement(prog, stmt, out, how)


def _statement(prog: Program, stmt: Stmt, out: Writer, how: _How) -> None:
    if isinstance(stmt, (For, While)) and marked(stmt):
        out.comment(f"{MARKER} (marked in the source: the reverse sweep of hvp checkpoints it too)")
    if isinstance(stmt, For):
        if stmt.serial:
            out.comment(f"a prange loop run serially: {stmt.serial}")
        with out.block(f"for {stmt.var} in {stmt.range_text()}"):
            _block(prog, stmt.body, out, how)
        return
    if isinstance(stmt, While):
        with out.block(f"while {code(stmt.test)}"):
            _block(prog, stmt.body, out, how)
        return
    if isinstance(stmt, If):
        _branch(prog, stmt, out, "if", how)
        return
    if isinstance(stmt, Break):
        out.line("break")
        return
    if isinstance(stmt, Permute):
        out.line(stmt.text())
        if any(prog.is_active(t) for t in stmt.targets):
            out.line(f"{', '.join(map(prog.dot, stmt.targets))} = {', '.join(map(prog.dot, stmt.sources))}")
        return
    assert isinstance(stmt, Assign), "continue and exits are flags by now (exits.py)"
    if not prog.is_active(stmt.var):
        out.line(stmt.text())
        return
    if prog.kinds.is_array(stmt.var) and not stmt.writes_element and builds_array(stmt):
        out.line(stmt.text())
        out.line(f"{prog.dot(stmt.var)} = {_array_tangent(prog, stmt)}")
        return
    lin = prog.linearize(stmt.value, stmt.origin)
    out.emit([Line(cst.Name(temp), "=", value) for temp, value in lin.bindings])
    shadow = prog.shadow(stmt.target, "_dot")
    if lin.root is None:
        if stmt.accumulate is None and (stmt.writes_element or not prog.kinds.is_array(stmt.var)):
            out.emit([Line(shadow, "=", number(0.0))])
        elif stmt.accumulate is None:  # a constant array: its zero tangent takes its shape
            out.emit([Line(stmt.target, "=", lin.value), Line(shadow, "=", prog.zero(stmt.var))])
            return
    else:
        op = {None: "=", "+": "+=", "-": "-="}[stmt.accumulate]
        bound: list[Line] = []  # tangents read twice by a strong zero's guard (`derive/linearize.py`)

        def bind(value: cst.BaseExpression, axes: int | None) -> cst.BaseExpression:
            temp = cst.Name(prog.namer.temp())
            bound.append(Line(temp, "=", value, STRONG_TANGENT.format(axes=axes) if axes is not None else ""))
            return temp

        guards = Guards(bind, how.second_order, lambda leaf: bool(names_in(leaf) & how.singular))
        value_dot = tangent(lin.root, lambda leaf: prog.shadow(leaf, "_dot"), guards)
        if bound and isinstance(value_dot, cst.Name) and code(bound[-1].target) == value_dot.value:
            value_dot = bound.pop().value  # the whole tangent: assigned as it is, not bound first
        out.emit(bound)
        whole = stmt.accumulate is None and not stmt.writes_element and prog.kinds.is_array(stmt.var)
        if whole and not aliases(stmt.value) and aliases(value_dot):
            # `r = x * 1.0` is a new array, its tangent x_dot is not: a later write to x_dot must
            # not change r_dot (a finding of the fuzzer)
            value_dot = cst.parse_expression(f"np.copy({code(value_dot)})")
        out.emit([Line(shadow, op, value_dot)])
    out.emit([Line(stmt.target, {None: "=", "+": "+=", "-": "-="}[stmt.accumulate], lin.value)])


def tangent_lines(prog: Program) -> Callable[[cst.SimpleStatementLine], bool]:
    """Is a line of the generated function a tangent statement: does it assign a tangent or an
    element of one, or bind a tangent for a strong zero's guard (its comment says)?"""
    names = {prog.dot(v) for v in prog.activity.active} | {prog.dot(w) for w in prog.wrt}

    def is_tangent(line: cst.SimpleStatementLine) -> bool:
        comment = line.trailing_whitespace.comment
        if comment is not None and STRONG_COMMENT.fullmatch(comment.value):
            return True
        stmt = line.body[0] if len(line.body) == 1 else None
        target = None
        if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0].target
        elif isinstance(stmt, cst.AugAssign):
            target = stmt.target
        base = target.value if isinstance(target, cst.Subscript) else target
        return isinstance(base, cst.Name) and base.value in names

    return is_tangent


def aliases(value: cst.BaseExpression) -> bool:
    """Is `value` an existing array's memory (a name, an element or slice, a declared view)?"""
    value = unparen(value)
    if isinstance(value, (cst.Name, cst.Subscript)):
        return True
    if isinstance(value, cst.Call):
        declared = primitive(code(value.func))
        return declared is not None and declared.view and bool(value.args) and aliases(value.args[0].value)
    return False


def _branch(prog: Program, stmt: If, out: Writer, keyword: str, how: _How) -> None:
    with out.block(f"{keyword} {code(stmt.test)}"):
        _block(prog, stmt.body, out, how)
    if len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], If):
        _branch(prog, stmt.orelse[0], out, "elif", how)
    elif stmt.orelse:
        with out.block("else"):
            _block(prog, stmt.orelse, out, how)


def _array_tangent(prog: Program, stmt: Assign) -> str:
    """Tangent of a whole-array assignment: a copy of an active array, or a fresh constant."""
    value, source = stmt.value, copied_array(stmt)
    if isinstance(source, cst.Name) and prog.is_active(source.value):
        return f"np.copy({prog.dot(source.value)})"
    if isinstance(value, cst.Name) and prog.is_active(value.value):
        return prog.dot(value.value)  # the same array under two names: the same tangent
    return code(prog.zero(stmt.var))  # np.zeros_like, or float64 zeros for float32 storage


def _returned_tangents(prog: Program, values: tuple[cst.BaseExpression, ...]) -> list[str]:
    """Tangents of the results; an array returned twice gets a copy, so no two results share memory."""
    tangents, seen = [], set()
    for value in values:
        if isinstance(value, cst.Name) and prog.is_active(value.value):
            text = prog.dot(value.value)
            repeated = text in seen and prog.kinds.is_array(value.value)
            seen.add(text)
            tangents.append(f"{text}.copy()" if repeated else text)
        elif isinstance(value, cst.Name):
            tangents.append(code(prog.zero(value.value)))
        else:
            tangents.append("0.0")
    return tangents
