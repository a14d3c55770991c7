"""Vector forward mode: one sweep carrying k tangent directions ("lanes").

The generated tangent code (`forward/tangent.py`) is rewritten so that every tangent gets one more axis,
last, of length `lanes`: a float tangent becomes an array of k floats, an array tangent of shape S
an array of shape (*S, k), so the k lanes of one element are contiguous and the loop over them
compiles to vector instructions. The primal statements run once; each tangent statement becomes a
loop over the lanes, reading lane `lane` of every tangent:

    v_dot[i] = u_dot[i] + kappa * t0        ->  for lane in range(lanes):
                                                    v_dot[i, lane] = u_dot[i, lane] + kappa * t0
    e_dot += u[i] * u_dot[i]                ->  for lane in range(lanes):
                                                    e_dot[lane] += u[i] * u_dot[i, lane]

The API takes and returns batches with the lanes first, (k, *S), as the user passes them.

A float tangent gets its array of k lanes once, at the top, and every statement then updates it
in place, lane by lane: lane k of the right-hand side reads only lane k of every tangent (so
`x_dot = c * x_dot` reads each lane's old value before writing it), and no two names ever share
such an array (a copy `a_dot = b_dot` copies the lanes; a swap exchanges two arrays). An array
tangent assigned whole gets a fresh array (`lanes0`, `lanes1`, ...) shaped by its first lane.
Tangent code is linear in the tangents and each lane reads only its own lane, so lane k computes
exactly what one sweep along direction k computes.

Not vectorized (the per-direction loop of `batch.py` is used instead): code with `prange`, whose
shared tangent accumulations would race as in-place lane updates.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from ..analysis.program import Program
from ..errors import SourceADError
from ..ir.exprs import all_names, code
from .tangent import STRONG_COMMENT


class NotVectorized(SourceADError):
    """The tangent code has a construct the lane rewrite does not cover: use one sweep per direction."""


def vectorize(first: Program, forward):
    """The `Generated` module of `f_jvp(*args, *lane_tangents) -> (value, lane_tangent)`, from the
    forward mode's `Generated` module of the analyzed function `first`."""
    if "prange(" in forward.source:
        raise NotVectorized("vector mode does not cover prange loops yet")
    tangents = {first.dot(v): first.kinds[v].ndim for v in first.activity.active}  # 0: a float tangent
    tangents |= {first.dot(w): first.kinds[w].ndim for w in first.wrt}
    module = cst.parse_module(forward.source)
    taken = all_names(module)
    lanes = _fresh("lanes", taken)
    lane = _fresh("lane", taken)
    first_dot = first.dot(first.wrt[0])
    rewrite = _Lanes(f"{first.fn.name}_jvp", tangents, lanes, lane, first_dot, taken)
    text = module.visit(rewrite).code
    text = text.replace(", forward mode, wrt", ", vector forward mode (tangents with a leading axis of lanes), wrt", 1)
    if "import numpy as np\n" not in text:  # the lanes are NumPy arrays even where the tangents were floats
        note = "# Do not edit: regenerate with `sourcead emit`.\n"
        text = text.replace(note, note + "\nimport numpy as np\n", 1)
    return replace(forward, source=text, mode="vector")


class _Lanes(cst.CSTTransformer):
    def __init__(self, entry: str, tangents: dict[str, int], lanes: str, lane: str, first_dot: str, taken: set[str]):
        self.entry, self.tangents, self.lanes, self.lane = entry, tangents, lanes, lane
        self.first_dot, self.taken = first_dot, taken
        self.count = 0
        self.float_tangents: set[str] = set()  # assigned somewhere: their lanes are made at the top

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        if original.name.value != self.entry:
            return updated
        body = list(updated.body.body)
        params = {p.name.value for p in updated.params.params}
        head = [
            cst.parse_statement(
                f"{self.lanes} = {self.first_dot}.shape[-1]  # directions carried at once: the last axis"
            )
        ]
        made = sorted(self.float_tangents - params)
        for k, name in enumerate(made):
            note = "  # the lanes of each float tangent, updated in place below" if k == 0 else ""
            head.append(cst.parse_statement(f"{name} = np.zeros({self.lanes}){note}"))
        first = body[0]
        assert isinstance(first, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
        head[0] = head[0].with_changes(leading_lines=first.leading_lines)
        body[0] = first.with_changes(leading_lines=())
        return updated.with_changes(body=updated.body.with_changes(body=[*head, *body]))

    def leave_SimpleStatementLine(self, original, updated):
        if len(updated.body) != 1:
            return updated
        stmt = updated.body[0]
        if isinstance(stmt, cst.Return):
            return updated.with_changes(body=[stmt.with_changes(value=self._returned(stmt.value))])
        if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1:
            target, op = stmt.targets[0].target, "="
        elif isinstance(stmt, cst.AugAssign):
            target, op = stmt.target, code(stmt.operator).strip()
        else:
            return updated
        base = target.value if isinstance(target, cst.Subscript) else target
        if isinstance(base, cst.Name) and base.value not in self.tangents and _reads(stmt.value, self.tangents):
            # a tangent bound to a temporary for a strong zero's guard (`derive/linearize.py`): a
            # tangent from here on, its number of axes said by its comment
            comment = updated.trailing_whitespace.comment
            found = STRONG_COMMENT.fullmatch(comment.value) if comment is not None else None
            if found is None:
                raise NotVectorized(f"a tangent bound to a temporary: {base.value}")
            self.tangents[base.value] = int(found.group(1))
        if not isinstance(base, cst.Name) or base.value not in self.tangents:
            return updated  # primal statements and tangent swaps (a tuple target) stay as they are
        lines = self._statement(target, op, stmt.value)
        statements = [cst.parse_statement(line) for line in lines]
        statements[0] = statements[0].with_changes(leading_lines=updated.leading_lines)
        comment = updated.trailing_whitespace.comment
        if comment is not None and isinstance(statements[-1], cst.SimpleStatementLine):
            statements[-1] = statements[-1].with_changes(trailing_whitespace=updated.trailing_whitespace)
        return cst.FlattenSentinel(statements)

    # --- one tangent statement -----------------------------------------------------------------

    def _statement(self, target: cst.BaseExpression, op: str, value: cst.BaseExpression) -> list[str]:
        lanes, lane = self.lanes, self.lane
        if isinstance(target, cst.Subscript):  # an element, a row or a slice: every lane's
            name = target.value.value  # type: ignore[attr-defined]
            indices = [code(e.slice) for e in target.slice]
            indices += [":"] * (self.tangents[name] - len(indices))  # a row written (`h[t] = ...`): its other axes
            element = f"{name}[{', '.join(indices)}, {lane}]"
            return [f"for {lane} in range({lanes}):\n    {element} {op} {self._lane(value)}\n"]
        name = target.value  # type: ignore[attr-defined]
        ndim = self.tangents[name]
        if not ndim:  # a float tangent: in place, lane by lane (see the module doc)
            self.float_tangents.add(name)
            return [f"for {lane} in range({lanes}):\n    {name}[{lane}] {op} {self._lane(value)}\n"]
        whole = _lane_of(name, ndim, lane)
        if op != "=":
            return [f"for {lane} in range({lanes}):\n    {whole} {op} {self._lane(value)}\n"]
        made = self._made(value, True)
        if made is not None:
            return [f"{name} = {made}"]
        fresh, first = self._fresh_temp(), self._fresh_temp()
        return [
            f"{lane} = 0",
            f"{first} = {self._lane(value)}",
            f"{fresh} = np.empty({first}.shape + ({lanes},))",
            f"{_lane_of(fresh, ndim, '0')} = {first}",
            f"for {lane} in range(1, {lanes}):\n    {_lane_of(fresh, ndim, lane)} = {self._lane(value)}\n",
            f"{name} = {fresh}",
        ]

    def _made(self, value: cst.BaseExpression, is_array: bool) -> str | None:
        """A tangent made whole (zeros, a placeholder, a copy or another name), in lanes; None for
        a computed value."""
        if isinstance(value, (cst.Float, cst.Integer)) or _is_negative_number(value):
            if is_array:
                raise NotVectorized(f"a number assigned to an array tangent: {code(value)}")
            return f"np.zeros({self.lanes})"
        if isinstance(value, cst.Name) and value.value in self.tangents:
            return value.value if is_array else f"{value.value}.copy()"  # arrays alias as the primal does
        if isinstance(value, cst.Call):
            func = code(value.func)
            args = value.args
            if func == "np.copy" and _is_tangent_name(args[0].value, self.tangents):
                return code(value)
            if func == "np.zeros_like" and len(args) == 1:
                return f"np.zeros({code(args[0].value)}.shape + ({self.lanes},))"
            if func in ("np.zeros", "np.empty") and args and all(a.keyword is None for a in args[:1]):
                shape = args[0].value
                rest = "".join(f", {code(a)}" for a in args[1:])
                return f"{func}({self._lane_shape(shape)}{rest})"
        return None

    def _lane_shape(self, shape: cst.BaseExpression) -> str:
        if isinstance(shape, cst.Tuple):
            return f"({', '.join(code(e.value) for e in shape.elements)}, {self.lanes})"
        if isinstance(shape, cst.Attribute) and shape.attr.value == "shape":
            return f"{code(shape)} + ({self.lanes},)"
        return f"({code(shape)}, {self.lanes})"

    def _returned(self, value: cst.BaseExpression | None) -> cst.BaseExpression | None:
        """`return value, tangent`: the value as it is; constant tangents (`0.0`, zeros) in lanes."""
        if not isinstance(value, cst.Tuple) or len(value.elements) != 2:
            raise NotVectorized("forward mode returns (value, tangent)")
        tangent = self._returned_tangent(value.elements[1].value)
        return value.with_changes(elements=[value.elements[0], value.elements[1].with_changes(value=tangent)])

    def _returned_tangent(self, node: cst.BaseExpression) -> cst.BaseExpression:
        if isinstance(node, cst.Tuple):
            items = [e.with_changes(value=self._returned_tangent(e.value)) for e in node.elements]
            return node.with_changes(elements=items)
        if isinstance(node, (cst.Float, cst.Integer)):
            return cst.parse_expression(f"np.zeros({self.lanes})")
        made = self._made(node, True) if isinstance(node, cst.Call) else None
        if made is not None:
            return cst.parse_expression(made)
        return node  # a tangent, or its copy (`x_dot.copy()`): already in lanes

    # --- lane `lane` of an expression ------------------------------------------------------------

    def _lane(self, value: cst.BaseExpression) -> str:
        indexed = value.visit(_LaneIndex(self.tangents, self.lane))
        assert isinstance(indexed, cst.BaseExpression)  # an expression visited stays one
        return code(indexed)

    def _fresh_temp(self) -> str:
        while f"{self.lanes}{self.count}" in self.taken:
            self.count += 1
        name = f"{self.lanes}{self.count}"
        self.taken.add(name)
        self.count += 1
        return name


class _LaneIndex(cst.CSTTransformer):
    """Every tangent read at lane `lane`: `t` -> `t[lane]` (a float's) or `t[:, lane]` (a vector's),
    `t[i, j]` -> `t[i, j, lane]`."""

    def __init__(self, tangents: dict[str, int], lane: str):
        self.tangents, self.lane = tangents, lane

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        if _is_tangent_name(original.value, self.tangents):
            lane = cst.SubscriptElement(cst.Index(cst.Name(self.lane)))
            ndim = self.tangents[original.value.value]  # type: ignore[attr-defined]
            indices = [*updated.slice]
            if len(indices) < ndim:  # a row read (`h[t]`): the rest of its axes, whole
                indices += [cst.SubscriptElement(cst.Slice(None, None))] * (ndim - len(indices))
            return updated.with_changes(value=original.value, slice=[*indices, lane])
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        if original.value in self.tangents:
            return cst.parse_expression(_lane_of(original.value, self.tangents[original.value], self.lane))
        return updated


def _lane_of(name: str, ndim: int, lane: str) -> str:
    """Lane `lane` of a tangent with `ndim` axes before its lanes: `t[lane]`, `t[:, :, lane]`."""
    return f"{name}[{', '.join([':'] * ndim + [lane])}]"


def _is_tangent_name(node: cst.BaseExpression, tangents: dict[str, int]) -> bool:
    return isinstance(node, cst.Name) and node.value in tangents


def _reads(node: cst.BaseExpression | None, tangents: dict[str, int]) -> bool:
    return node is not None and bool(all_names(node) & tangents.keys())


def _is_negative_number(node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, (cst.Float, cst.Integer))
    )


def _fresh(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name


__all__ = ["NotVectorized", "vectorize"]
