"""Two rank-1 updates of one adjoint matrix in one pass: `add_outer(X, m, u, v)` and a later
`add_outer(X, n, w, z)` of the same block as `add_outers(X, m, u, v, n, w, z)`.

A matrix read by two matrix-vector products (atax's `(A @ x) @ A`, bicg's `r @ A` and `A @ p`,
mvt's `A @ y_1` and `y_2 @ A`) gets two outer products added into its adjoint
(`reverse/adjoint.py` writes each as the runtime's in-place `add_outer`). Each is a pass that reads
and writes the whole matrix, where the primal reads it once per product; one pass doing both adds
per element (in the same order: the same sums) halves that traffic. `first_contributions.py` then
writes the pair into a zero adjoint as one new array (`outers_of`).

The first update moves down to the second's place. That keeps what they compute where every
statement between them is an assignment to a name, or an accumulation into another adjoint
(`x_bar += e`, or `add_into(x_bar, e)`: the function's adjoints are arrays of their own, never
views of another array),
that mentions neither X nor binds or writes a name the first update reads; no element write, no
call whose result is dropped (an in-place helper). So X and the vectors u, v and the condition m
hold the same values there. Only within one block of statements: a loop or a branch between
them ends the search.

The same for a dot product's two contributions, one to each operand (`reverse/adjoint.py`'s
`add_product`): trisolv's `L_bar[i, :i] += g * x[:i]` and `x_bar[:i] += g * L[i, :i]`, two loops
over one range, are one call `add_products(X, m, g, v, Y, n, h, w)`, one loop where all four
vectors are contiguous (the runtime decides, by their layouts). Only for two adjacent statements
into two different adjoints (arrays of their own), where neither adjoint is read by the other's
operands nor its own: each element's sum then gets the same terms. Not into two slices of one
adjoint (cholesky's rows `A_bar[i, :j]` and `A_bar[j, :j]`, lu's row and column): at NPBench's
S sizes one loop there was slower than two (cholesky's reverse sweep 1.3x, lu's row and strided
column about 3x), and fusing them had taken the gradients of cholesky, lu and ludcmp from 1.8,
1.6 and 1.6 times their primals to 2.5, 2.1 and 2.1.
"""

from __future__ import annotations

import libcst as cst

from ..ir.exprs import dotted, names_in

ONE, TWO = "add_outer", "add_outers"
PRODUCT, PRODUCTS = "add_product", "add_products"


def fuse_outers(statements: list[cst.CSTNode], adjoints: frozenset[str]) -> list[cst.CSTNode]:
    """`statements` (and the blocks inside them) with each pair of updates of one matrix fused
    as the module docstring says. `adjoints`: the function's adjoints."""
    out: list[cst.CSTNode] = []
    pending = [_inside(s, adjoints) for s in statements]
    while pending:
        statement = pending.pop(0)
        if pending and _products_apart(statement, pending[0], adjoints) is not None:
            pending[0] = _products_fused(statement, pending[0])
            continue
        parts = _update(statement)
        partner = _partner(pending, parts, adjoints) if parts is not None else None
        if parts is None or partner is None:
            out.append(statement)
            continue
        k, later = partner
        assert isinstance(statement, cst.SimpleStatementLine)  # an update is one
        pending[k] = pending[k].with_changes(body=[cst.Expr(_fused_call(parts, later))])
        leading = [*statement.leading_lines, *getattr(pending[0], "leading_lines", ())]
        pending[0] = pending[0].with_changes(leading_lines=leading)  # the first one's comments stay in place
    return out


def _inside(statement: cst.CSTNode, adjoints: frozenset[str]) -> cst.CSTNode:
    """A compound statement with its blocks fused (loops and branches: each block on its own)."""

    def block(suite: cst.BaseSuite) -> cst.BaseSuite:
        if not isinstance(suite, cst.IndentedBlock):
            return suite
        return suite.with_changes(body=fuse_outers(list(suite.body), adjoints))

    if isinstance(statement, (cst.For, cst.While)) and statement.orelse is None:
        return statement.with_changes(body=block(statement.body))
    if isinstance(statement, cst.If):
        orelse = statement.orelse
        if isinstance(orelse, cst.If):
            orelse = cst.ensure_type(_inside(orelse, adjoints), cst.If)
        elif isinstance(orelse, cst.Else):
            orelse = orelse.with_changes(body=block(orelse.body))
        return statement.with_changes(body=block(statement.body), orelse=orelse)
    return statement


def _update(statement: cst.CSTNode) -> tuple[str, list[cst.Arg]] | None:
    """(X, the arguments) of a statement `add_outer(X, m, u, v)` whose operands do not mention X."""
    args = _call_of(statement, ONE, 4)
    if args is None:
        return None
    target = args[0].value
    if not isinstance(target, cst.Name) or any(target.value in names_in(a.value) for a in args[1:]):
        return None
    return target.value, args


def _partner(
    pending: list[cst.CSTNode], parts: tuple[str, list[cst.Arg]], adjoints: frozenset[str]
) -> tuple[int, list[cst.Arg]] | None:
    """The position and arguments of the next update of the same matrix, where every statement
    before it leaves the first update's operands and the matrix alone; else None."""
    target, args = parts
    operands = set().union(*(names_in(a.value) for a in args[1:]))
    for k, statement in enumerate(pending):
        later = _update(statement)
        if later is not None and later[0] == target:
            return k, later[1]
        if not _leaves_alone(statement, target, operands, adjoints):
            return None
    return None


def _leaves_alone(statement: cst.CSTNode, target: str, operands: set[str], adjoints: frozenset[str]) -> bool:
    """Assignments to names, or accumulations into adjoints, none of them an operand, none
    mentioning the matrix."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Assign):
            targets = [t.target for t in small.targets]
        elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
            if small.target.value not in adjoints:
                return False  # a primal array may be a view of an operand
            targets = [small.target]
        elif (into := _added_into(small)) is not None:  # `add_into(x_bar, e)`: `x_bar += e`, in place
            if into.value not in adjoints:
                return False
            targets = [into]
        else:
            return False
        if target in names_in(small):
            return False
        if any(not isinstance(t, cst.Name) or t.value in operands for t in targets):
            return False
    return True


def _added_into(small: cst.BaseSmallStatement) -> cst.Name | None:
    """X of a statement `add_into(X, e)` or `subtract_into(X, e)` into a name X."""
    if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
        return None
    call = small.value
    if dotted(call.func) not in ("add_into", "subtract_into") or len(call.args) != 2:
        return None
    target = call.args[0].value
    return target if isinstance(target, cst.Name) and not any(a.keyword or a.star for a in call.args) else None


def _fused_call(first: tuple[str, list[cst.Arg]], later: list[cst.Arg]) -> cst.Call:
    _, args = first
    return cst.Call(cst.Name(TWO), [*args, *later[1:]])


def _call_of(statement: cst.CSTNode, name: str, nargs: int) -> list[cst.Arg] | None:
    """The arguments of a statement that is one call `name(...)` of `nargs` positional arguments."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
        return None
    call = small.value
    if dotted(call.func) != name or len(call.args) != nargs or any(a.keyword or a.star for a in call.args):
        return None
    return list(call.args)


def _products_apart(first: cst.CSTNode, second: cst.CSTNode, adjoints: frozenset[str]) -> tuple | None:
    """The arguments of two `add_product` statements that one loop may run: each into an adjoint
    (a name or an element or slice of one) that no operand of either reads, the two into
    different adjoints; else None."""
    a, b = _call_of(first, PRODUCT, 4), _call_of(second, PRODUCT, 4)
    if a is None or b is None:
        return None
    operands = set().union(*(names_in(arg.value) for arg in a[1:] + b[1:]))
    bases = []
    for args in (a, b):
        base = args[0].value
        while isinstance(base, cst.Subscript):
            base = base.value
        if not isinstance(base, cst.Name) or base.value not in adjoints or base.value in operands:
            return None
        bases.append(base.value)
    if bases[0] == bases[1]:
        return None  # two slices of one adjoint: two loops are faster (module docstring)
    return a, b


def _products_fused(first: cst.CSTNode, second: cst.CSTNode) -> cst.CSTNode:
    a, b = _call_of(first, PRODUCT, 4), _call_of(second, PRODUCT, 4)
    assert a is not None and b is not None
    call = cst.Call(cst.Name(PRODUCTS), [*a, *b])
    leading = [*getattr(first, "leading_lines", ()), *getattr(second, "leading_lines", ())]
    return second.with_changes(body=[cst.Expr(call)], leading_lines=leading)
