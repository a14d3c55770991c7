"""First contributions assigned: `x_bar += e` where `x_bar` is zero on every path, as `x_bar = e`.

A scalar adjoint is zeroed where its variable is defined (`x = ...` resets `x_bar` after taking
it) and initialised to 0.0 before the reverse sweep; its next contribution is then added to a
zero. `0.0 + e` is `e` but for the sign of a zero, which LLVM must keep, so the add stays, and in a
loop the adjoint carries a dependence from one iteration to the next that is not there: nbody's
pair loop starts each iteration with `dx_bar += inv * ax_bar` on the `dx_bar` the previous
iteration reset (written as assignments, its module ran 1439 -> 1366 us).

This pass finds, over the statements of the reverse sweep, the scalar adjoints that are zero on
every path to a statement (a must-analysis: the last assignment on each path was `x_bar = 0.0`),
and writes an accumulation into one of them, `x_bar += e` (`x_bar -= e`), where `e` does not read
`x_bar`, as `x_bar = e` (`x_bar = -(e)`). The flow is structured: an `if` joins its branches, a
loop's header holds what its entry and the end of every iteration (and each `continue`) hold,
found by iterating from the entry to a fixed point; after a loop, what the header and each
`break` hold. A `return` ends a path. A `prange` loop's body is left as written (an accumulation
there is numba's reduction across threads) and everything it assigns is unknown after it; so is
everything after a compound statement the flow does not model. Names are bound by assignments and
loops alone (the fence admits no `:=`, and no emitter writes one).

An array adjoint is zero after `x_bar = zeros_like(y)`; its first contribution is written as an
assignment where the value is a new array of y's shape: `x_bar += matmul_bar_left(g, y, b)`
(`matmul_bar_right(g, a, y)`), the adjoint of a matrix product, which the runtime computes into a
new array of that operand's shape (mlp's weights: a zeroed matrix of 60 M entries, then the product
added to it, took three passes over memory where one writes it). Such a zero holds only while no
statement mentions x_bar or y (an element write, a view, an in-place helper such as `add_outer`).
An in-place rank-1 update of a zero matrix, `add_outer(x_bar, m, u, v)` (`add_outers`, two of
them: `outers.py`), is the new array `x_bar = outer_of(y, m, u, v)` (`outers_of`), written in one
pass (atax's A_bar: no zeros written, then read and written again).

Only the function's adjoints are rewritten (the names `Namer.bar` gave): their values flow
linearly, so the sign of a zero never changes a number of the result. A primal value (a replayed
step's `s = 0.0; s += x[i]`) keeps its add, where the sign of a zero could reach `atan2` or a
division. The adjoint of one statement gets the same rewrite earlier, on its own lines
(`peephole.assign_first_contribution`); this pass sees across statements and iterations.
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from ..ir.exprs import dotted, names_in, unparen

Zero = frozenset[str] | None  # the adjoints zero on every path here; None: no path reaches here


def assign_first_contributions(statements: list[cst.CSTNode], adjoints: frozenset[str]) -> list[cst.CSTNode]:
    """`statements` (the reverse sweep, zero adjoints unknown at its start) with each accumulation
    into one of the scalar `adjoints` that is zero on every path written as an assignment."""
    flow = _Flow(adjoints)
    out, _ = flow.block(statements, frozenset())
    return out


def _join(states: Iterable[Zero]) -> Zero:
    reached = [s for s in states if s is not None]
    return frozenset.intersection(*reached) if reached else None


class _Flow:
    def __init__(self, adjoints: frozenset[str]):
        self.adjoints = adjoints
        self.breaks: list[Zero] = []
        self.continues: list[Zero] = []

    def block(self, statements, zero: Zero) -> tuple[list, Zero]:
        out = []
        for statement in statements:
            statement, zero = self.statement(statement, zero)
            out.append(statement)
        return out, zero

    def statement(self, statement: cst.CSTNode, zero: Zero) -> tuple[cst.CSTNode, Zero]:
        if isinstance(statement, cst.SimpleStatementLine):
            body = []
            for small in statement.body:
                small, zero = self.small(small, zero)
                body.append(small)
            return statement.with_changes(body=body), zero
        if isinstance(statement, cst.If):
            return self.branch(statement, zero)
        if isinstance(statement, (cst.For, cst.While)) and statement.orelse is None:
            if isinstance(statement, cst.For) and _is_prange(statement.iter):
                return statement, None if zero is None else frozenset()
            return self.loop(statement, zero)
        return statement, None if zero is None else frozenset()  # not modelled: nothing known after it

    def small(self, small: cst.BaseSmallStatement, zero: Zero) -> tuple[cst.BaseSmallStatement, Zero]:
        if zero is None:
            return small, None
        if isinstance(small, (cst.Return, cst.Raise)):
            return small, None
        if isinstance(small, cst.Break):
            self.breaks.append(zero)
            return small, None
        if isinstance(small, cst.Continue):
            self.continues.append(zero)
            return small, None
        arrays = _touched(small, zero)
        outer = _outer_into(small, arrays)
        if outer is not None:
            target = cst.ensure_type(small, cst.Expr).value.args[0].value  # type: ignore[attr-defined]
            return cst.Assign([cst.AssignTarget(target)], outer), zero - arrays
        if isinstance(small, cst.AugAssign) and arrays and _fresh_of(small, arrays):
            target = cst.ensure_type(small.target, cst.Name).value
            return cst.Assign([cst.AssignTarget(small.target)], small.value), zero - arrays - {target}
        zero = zero - arrays  # an array adjoint mentioned otherwise: it may not be zero any more
        if isinstance(small, cst.AugAssign):
            if not isinstance(small.target, cst.Name):
                return small, zero  # into an element: no name is bound
            name = small.target.value
            op = type(small.operator)
            if name in zero and op in (cst.AddAssign, cst.SubtractAssign) and name not in names_in(small.value):
                value = small.value
                if op is cst.SubtractAssign:
                    value = cst.UnaryOperation(cst.Minus(), _parenthesized(value))
                return cst.Assign([cst.AssignTarget(small.target)], value), zero - {name}
            return small, zero - {name}
        if isinstance(small, cst.Assign):
            bound = {n for t in small.targets for n in _target_names(t.target)}
            zero = zero - bound
            if _is_zero(small.value):
                zero = zero | {t.target.value for t in small.targets if isinstance(t.target, cst.Name)} & self.adjoints
            shaped = _zeros_like(small.value)
            if shaped is not None and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                name = small.targets[0].target.value
                if name in self.adjoints and name != shaped:
                    zero = zero | {f"{name}:{shaped}"}  # zero, of shaped's shape
            return small, zero
        if isinstance(small, (cst.Expr, cst.Pass)):
            return small, zero
        return small, frozenset()  # `del`, `global`, an annotated assignment: not modelled

    def branch(self, statement: cst.If, zero: Zero) -> tuple[cst.If, Zero]:
        body, after_body = self.block(statement.body.body, zero)
        changes: dict[str, cst.CSTNode] = {"body": statement.body.with_changes(body=body)}
        after_else = zero
        orelse = statement.orelse
        if isinstance(orelse, cst.If):
            orelse, after_else = self.branch(orelse, zero)
            changes["orelse"] = orelse
        elif isinstance(orelse, cst.Else):
            rest, after_else = self.block(orelse.body.body, zero)
            changes["orelse"] = orelse.with_changes(body=orelse.body.with_changes(body=rest))
        return statement.with_changes(**changes), _join((after_body, after_else))

    def loop(self, statement: cst.For | cst.While, zero: Zero) -> tuple[cst.CSTNode, Zero]:
        if zero is None:
            return statement, None
        bound = _target_names(statement.target) if isinstance(statement, cst.For) else set()
        outer = self.breaks, self.continues
        header: frozenset[str] = zero
        while True:
            self.breaks, self.continues = [], []
            body, end = self.block(statement.body.body, _without(header, bound))
            new = _join((zero, end, *self.continues))
            assert new is not None  # the loop is entered with `zero`
            if new == header:
                break
            header = new
        breaks = self.breaks
        self.breaks, self.continues = outer
        after = _join((header, *breaks))
        return statement.with_changes(body=statement.body.with_changes(body=body)), after


_FRESH = {"matmul_bar_left": 1, "matmul_bar_right": 2}  # a new array of the shape of this argument


def _touched(small: cst.BaseSmallStatement, zero: frozenset[str]) -> frozenset[str]:
    """The zero arrays (`x_bar:y`) that `small` may change: it mentions x_bar (a write, a view, an
    in-place helper), or binds y (another shape)."""
    mentioned = names_in(small)
    bound: set[str] = set()
    if isinstance(small, cst.Assign):
        bound = {n for t in small.targets for n in _target_names(t.target)}
    elif isinstance(small, cst.AugAssign):
        bound = _target_names(small.target)
    found = (z.split(":") for z in zero if ":" in z)
    return frozenset(f"{x}:{y}" for x, y in found if x in mentioned or y in bound)


def _without(zero: frozenset[str], names: set[str]) -> frozenset[str]:
    """`zero` less `names` and the zero arrays (`x_bar:y`) that mention one."""
    return frozenset(z for z in zero if z not in names and not set(z.split(":")) & names)


def _zeros_like(value: cst.BaseExpression) -> str | None:
    """y of `zeros_like(y)` (the runtime's or NumPy's, one named argument), else None."""
    value = unparen(value)
    if not isinstance(value, cst.Call) or dotted(value.func) not in ("zeros_like", "np.zeros_like"):
        return None
    if len(value.args) != 1 or value.args[0].keyword is not None or not isinstance(value.args[0].value, cst.Name):
        return None
    return value.args[0].value.value


def _fresh_of(small: cst.AugAssign, arrays: frozenset[str]) -> bool:
    """`x_bar += f(...)` with `x_bar:y` among the zero arrays and f a runtime helper that returns a new
    array of y's shape (`_FRESH`), not reading x_bar."""
    if not isinstance(small.target, cst.Name) or not isinstance(small.operator, cst.AddAssign):
        return False
    value = unparen(small.value)
    if not isinstance(value, cst.Call) or dotted(value.func) not in _FRESH or len(value.args) != 3:
        return False
    if small.target.value in names_in(value) or any(a.keyword is not None or a.star for a in value.args):
        return False
    shaped = value.args[_FRESH[dotted(value.func)]].value
    return isinstance(shaped, cst.Name) and f"{small.target.value}:{shaped.value}" in arrays


_OUTER_OF = {"add_outer": "outer_of", "add_outers": "outers_of"}  # into a zero matrix: a new one


def _outer_into(small: cst.BaseSmallStatement, arrays: frozenset[str]) -> cst.Call | None:
    """`outer_of(y, m, u, v)` for a statement `add_outer(x_bar, m, u, v)` (`outers_of` for
    `add_outers`) with `x_bar:y` among the zero arrays and no operand reading x_bar, else None."""
    if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
        return None
    call = small.value
    name = dotted(call.func)
    if name not in _OUTER_OF or not call.args or any(a.keyword is not None or a.star for a in call.args):
        return None
    target = call.args[0].value
    if not isinstance(target, cst.Name) or any(target.value in names_in(a.value) for a in call.args[1:]):
        return None
    shaped = next((z.split(":")[1] for z in arrays if z.split(":")[0] == target.value), None)
    if shaped is None:
        return None
    return cst.Call(cst.Name(_OUTER_OF[name]), [cst.Arg(cst.Name(shaped)), *call.args[1:]])


def _is_zero(value: cst.BaseExpression) -> bool:
    value = unparen(value)
    return isinstance(value, (cst.Float, cst.Integer)) and value.evaluated_value == 0


def _is_prange(iterator: cst.BaseExpression) -> bool:
    call = unparen(iterator)
    return isinstance(call, cst.Call) and dotted(call.func).split(".")[-1] == "prange"


def _parenthesized(value: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(value, (cst.Name, cst.Float, cst.Integer, cst.Call, cst.Subscript, cst.Attribute)):
        return value
    return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _target_names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_target_names(e.value) for e in target.elements))
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return set()  # an element or an attribute: no name is bound
