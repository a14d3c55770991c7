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

Any other first contribution into a zero array, `x_bar += e` (`-= e`), is `x_bar = first_of(e, y)`
where e is a new array no live name reaches, else `x_bar = first_copy_of(e, y)` (`runtime/fresh.py`:
a float64 array of y's shape, e broadcast; a float e fills it): the zeros are not written, and a
move costs no pass at all (mlp's renamings `out = mlp_kernel_x_2`, whose adjoints each took a
zeroed array and a copy). Which values are new is one table, `_RESULTS`: arithmetic, ufuncs and the
runtime helpers that allocate their result (`np.where`, `matmul_bar_left`) give one; `unbroadcast`
and `chosen` may return their argument; anything else (a view, `expand_axis`, `np.reshape`, an
attribute) may share memory. An adjoint z_bar is *owned* (state `=z_bar`) where every path bound
it to a new value and no statement since may have kept a second name for it (bound a value that
may reach it, handed it to a call outside the in-place helpers). e reaches only owned adjoints that
are dead after the statement (no later mention in the sweep, nor anywhere else in the top-level
statement around it: a loop reads it again next iteration), or nothing at all: then e is moved.
A seed (`result_bar = out_bar`) or an argument is never owned, so it is copied.

Only the function's adjoints are rewritten (the names `Namer.bar` gave): their values flow
linearly, so the sign of a zero never changes a number of the result. A primal value (a replayed
step's `s = 0.0; s += x[i]`) keeps its add, where the sign of a zero could reach `atan2` or a
division. The adjoint of one statement gets the same rewrite earlier, on its own lines
(`peephole.assign_first_contribution`); this pass sees across statements and iterations.
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from ..ir.exprs import all_names, code, dotted, names_in, parts, unparen

Zero = frozenset[str] | None  # the adjoints zero on every path here; None: no path reaches here
# an entry is `x_bar` (a zero float), `x_bar:key` (a zero array of the shape of `key`, the text of
# zeros_like's argument) or `=z_bar` (z_bar owned: a new array no other name reaches)


def assign_first_contributions(statements: list[cst.CSTNode], adjoints: frozenset[str]) -> list[cst.CSTNode]:
    """`statements` (the reverse sweep, zero adjoints unknown at its start) with each accumulation
    into one of the `adjoints` that is zero on every path written as an assignment."""
    flow = _Flow(adjoints, statements)
    out = []
    zero: Zero = frozenset()
    for k, statement in enumerate(statements):
        flow.top = k
        statement, zero = flow.statement(statement, zero)
        out.append(statement)
    return out


def _join(states: Iterable[Zero]) -> Zero:
    reached = [s for s in states if s is not None]
    return frozenset.intersection(*reached) if reached else None


class _Flow:
    def __init__(self, adjoints: frozenset[str], statements: list[cst.CSTNode]):
        self.adjoints = adjoints
        self.statements = statements
        self.top = 0  # the top-level statement being rewritten
        self.shapes: dict[str, cst.BaseExpression] = {}  # a zero array's key: zeros_like's argument
        self.breaks: list[Zero] = []
        self.continues: list[Zero] = []
        self._later: list[set[str]] | None = None

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
        small = _shapes_read(small, zero, self.shapes)
        zero = _disowned(small, zero)
        arrays = _touched(small, zero, self.shapes)
        outer = _outer_into(small, arrays, self.shapes)
        if outer is not None:
            target = cst.ensure_type(small, cst.Expr).value.args[0].value  # type: ignore[attr-defined]
            return cst.Assign([cst.AssignTarget(target)], outer), zero - arrays | {f"={target.value}"}
        if isinstance(small, cst.AugAssign) and arrays and _fresh_of(small, arrays):
            target = cst.ensure_type(small.target, cst.Name).value
            return cst.Assign([cst.AssignTarget(small.target)], small.value), zero - arrays - {target} | {f"={target}"}
        if isinstance(small, cst.AugAssign) and arrays:
            first = self.first_array(small, arrays, zero)
            if first is not None:
                return first
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
            zero = _without(zero, bound, self.shapes)
            names = [t.target.value for t in small.targets if isinstance(t.target, cst.Name)]
            if _is_zero(small.value):
                zero = zero | set(names) & self.adjoints
            if len(small.targets) == 1 and len(names) == 1 and _reaches(small.value) == set():
                zero = zero | {f"={names[0]}"}  # a new value: owned
            shaped = _zeros_like(small.value)
            if shaped is not None and len(names) == 1 and names[0] in self.adjoints:
                key = code(shaped)
                if names[0] not in names_in(shaped):
                    self.shapes[key] = shaped
                    zero = zero | {f"{names[0]}:{key}"}  # zero, of shaped's shape
            return small, zero
        if isinstance(small, (cst.Expr, cst.Pass)):
            return small, zero
        return small, frozenset()  # `del`, `global`, an annotated assignment: not modelled

    def first_array(
        self, small: cst.AugAssign, arrays: frozenset[str], zero: frozenset[str]
    ) -> tuple[cst.Assign, frozenset[str]] | None:
        """`x_bar = first_of(e, y)` (or `first_copy_of`) for `x_bar += e` (`-= e`) with `x_bar:y`
        among the zero arrays, and what is zero and owned after it; None where it stays an add."""
        if not isinstance(small.target, cst.Name) or type(small.operator) not in (cst.AddAssign, cst.SubtractAssign):
            return None
        target = small.target.value
        key = next((z.split(":", 1)[1] for z in arrays if z.split(":", 1)[0] == target), None)
        if key is None:
            return None
        shape = self.shapes[key]
        value = small.value
        if isinstance(small.operator, cst.SubtractAssign):
            value = cst.UnaryOperation(cst.Minus(), _parenthesized(value))
        reached = _reaches(value)
        moved = reached is not None and target not in names_in(value)
        moved = moved and all(f"={r}" in zero and self.dead(r, small) for r in reached or ())
        helper = "first_of" if moved else "first_copy_of"
        assign = cst.Assign(
            [cst.AssignTarget(small.target)], cst.Call(cst.Name(helper), [cst.Arg(value), cst.Arg(shape)])
        )
        after = _without(zero - arrays, {target}, self.shapes)
        if moved:
            after = after - {f"={r}" for r in reached or ()}  # moved: x_bar holds it now
        return assign, after | {f"={target}"}

    def dead(self, name: str, small: cst.BaseSmallStatement) -> bool:
        """No mention of `name` after `small` in the sweep, nor elsewhere in the top-level
        statement that holds it (a loop around it reads it again in its next iteration)."""
        if self._later is None:
            later: list[set[str]] = [set()]
            for statement in reversed(self.statements[1:]):
                later.append(later[-1] | all_names(statement))
            self._later = later[::-1]
        if name in self._later[self.top]:
            return False
        return _count(name, self.statements[self.top]) == _count(name, small)

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
        if isinstance(statement, cst.For) and not _is_range(statement.iter):
            zero = zero - {f"={n}" for n in names_in(statement.iter)}  # `for row in z_bar`: views of it
        outer = self.breaks, self.continues
        header: frozenset[str] = zero
        while True:
            self.breaks, self.continues = [], []
            body, end = self.block(statement.body.body, _without(header, bound, self.shapes))
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

# What a call returns, by the function's name: NEW, a new value (an array no other name holds, or a
# number), or the position of the argument it may return itself (or a new value). A function not
# here may return a view of its arguments or the argument itself (`expand_axis`, `np.reshape`,
# `broadcast_like`): its value is not moved.
NEW = -1
_RESULTS: dict[str, int] = {
    **{f"np.{f}": NEW for f in (
        "where", "exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh",
        "arcsin", "arccos", "arctan", "arctan2", "abs", "absolute", "sign", "maximum", "minimum", "power",
        "square", "negative", "multiply", "add", "subtract", "divide", "outer", "dot", "sum", "zeros",
        "ones", "full", "zeros_like", "ones_like", "full_like",
    )},
    **{f: NEW for f in (
        "zeros_like", "strong_zero", "strong_zero_each", "matmul_bar_left", "matmul_bar_right", "outer_of",
        "outers_of", "first_of", "first_copy_of",
    )},
    "unbroadcast": 0,  # g itself where nothing was broadcast
    "chosen": 1,  # g itself where the condition holds
}  # fmt: skip

# Calls made as statements that write into their arguments and keep no reference to them
_IN_PLACE = frozenset(
    {
        "add_outer",
        "add_outers",
        "add_products",
        "add_chunk_rows",
        "record_flat",
        "checkpoint_store",
        "checkpoint_restore",
    }
)


def _reaches(value: cst.BaseExpression) -> set[str] | None:
    """The names whose arrays `value` may be (or be a view of); None where it is not known. A
    number, arithmetic and the calls `_RESULTS` marks NEW reach none."""
    value = unparen(value)
    if isinstance(value, cst.Name):
        return {value.value}
    if isinstance(value, (cst.Float, cst.Integer, cst.BinaryOperation, cst.Comparison)):
        return set()
    if isinstance(value, cst.UnaryOperation):
        return set() if isinstance(value.operator, cst.Minus) else None
    if isinstance(value, cst.IfExp):
        body, orelse = _reaches(value.body), _reaches(value.orelse)
        return None if body is None or orelse is None else body | orelse
    if isinstance(value, cst.Call) and dotted(value.func) in _RESULTS:
        if any(a.keyword is not None or a.star for a in value.args):
            return set() if _RESULTS[dotted(value.func)] == NEW else None
        k = _RESULTS[dotted(value.func)]
        if k == NEW:
            return set()
        return _reaches(value.args[k].value) if k < len(value.args) else None
    return None


def _disowned(small: cst.BaseSmallStatement, zero: frozenset[str]) -> frozenset[str]:
    """`zero` without the owned names `small` may give a second name (or hand to a call that could
    keep it) or binds again."""
    owned = {z[1:] for z in zero if z.startswith("=")}
    if not owned:
        return zero
    lost: set[str] = set()
    if isinstance(small, cst.Assign):
        reached = _reaches(small.value)
        lost = (names_in(small.value) if reached is None else reached) & owned
        lost |= {n for t in small.targets for n in _target_names(t.target)} & owned
    elif isinstance(small, cst.AugAssign):
        lost = set()  # in place: no second name for either side
    elif isinstance(small, cst.Expr):
        call = small.value
        if not (isinstance(call, cst.Call) and dotted(call.func) in _IN_PLACE):
            lost = names_in(small) & owned
    else:
        lost = names_in(small) & owned
    return zero - {f"={n}" for n in lost}


def _count(name: str, node: cst.CSTNode) -> int:
    """How many times `name` occurs in `node` (variables, attributes, keywords alike)."""
    found, stack = 0, [node]
    while stack:
        item = stack.pop()
        if isinstance(item, cst.Name):
            found += item.value == name
        else:
            stack.extend(parts(item))
    return found


class _LikeFor(cst.CSTTransformer):
    """`unbroadcast(g, x_bar)` as `unbroadcast(g, y)` for the zero arrays `x_bar:y`: it reads only
    the shape of x_bar, which y has too, so the zeros need not be written (nor stop being zero)."""

    def __init__(self, shapes: dict[str, cst.BaseExpression]):
        self.shapes = shapes

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if dotted(updated.func) != "unbroadcast" or len(updated.args) != 2:
            return updated
        like = updated.args[1]
        if like.keyword is not None or like.star or not isinstance(like.value, cst.Name):
            return updated
        shape = self.shapes.get(like.value.value)
        if shape is None:
            return updated
        return updated.with_changes(args=[updated.args[0], like.with_changes(value=shape)])


def _shapes_read(
    small: cst.BaseSmallStatement, zero: frozenset[str], shapes: dict[str, cst.BaseExpression]
) -> cst.BaseSmallStatement:
    """`small` with the zero arrays it reads only for their shape (`_LikeFor`) replaced."""
    found = {}
    for z in zero:
        x, _, key = z.partition(":")
        if key:
            found[x] = shapes[key]
    if not found or not (names_in(small) & found.keys()) or "unbroadcast" not in all_names(small):
        return small
    rewritten = small.visit(_LikeFor(found))
    assert isinstance(rewritten, cst.BaseSmallStatement)  # a call rewritten in place
    return rewritten


def _touched(small: cst.BaseSmallStatement, zero: frozenset[str], shapes: dict) -> frozenset[str]:
    """The zero arrays (`x_bar:key`) that `small` may change: it mentions x_bar (a write, a view, an
    in-place helper), or binds a name of the key (another shape)."""
    mentioned = names_in(small)
    bound: set[str] = set()
    if isinstance(small, cst.Assign):
        bound = {n for t in small.targets for n in _target_names(t.target)}
    elif isinstance(small, cst.AugAssign):
        bound = _target_names(small.target)
    touched = set()
    for z in zero:
        x, _, key = z.partition(":")
        if key and (x in mentioned or names_in(shapes[key]) & bound):
            touched.add(z)
    return frozenset(touched)


def _without(zero: frozenset[str], names: set[str], shapes: dict) -> frozenset[str]:
    """`zero` less `names`, the owned ones and the zero arrays (`x_bar:key`) that mention one."""
    kept = set()
    for z in zero:
        x, _, key = z.partition(":")
        if x.lstrip("=") in names or (key and names_in(shapes[key]) & names):
            continue
        kept.add(z)
    return frozenset(kept)


def _zeros_like(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """y of `zeros_like(y)` (the runtime's or NumPy's, one argument: a name, or a shape helper of
    names, `_SHAPES`), else None."""
    value = unparen(value)
    if not isinstance(value, cst.Call) or dotted(value.func) not in ("zeros_like", "np.zeros_like"):
        return None
    if len(value.args) != 1 or value.args[0].keyword is not None:
        return None
    shaped = value.args[0].value
    return shaped if _is_shape(shaped) else None


_SHAPES = frozenset({"broadcast_like", "matmul_like"})  # arrays of the shape of an operation's result


def _is_shape(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Name):
        return True
    return (
        isinstance(node, cst.Call)
        and dotted(node.func) in _SHAPES
        and all(a.keyword is None and not a.star and _is_shape(a.value) for a in node.args)
    )


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


def _outer_into(small: cst.BaseSmallStatement, arrays: frozenset[str], shapes: dict) -> cst.Call | None:
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
    key = next((z.split(":", 1)[1] for z in arrays if z.split(":", 1)[0] == target.value), None)
    if key is None:
        return None
    return cst.Call(cst.Name(_OUTER_OF[name]), [cst.Arg(shapes[key]), *call.args[1:]])


def _is_zero(value: cst.BaseExpression) -> bool:
    value = unparen(value)
    return isinstance(value, (cst.Float, cst.Integer)) and value.evaluated_value == 0


def _is_range(iterator: cst.BaseExpression) -> bool:
    call = unparen(iterator)
    return isinstance(call, cst.Call) and dotted(call.func) == "range"


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
