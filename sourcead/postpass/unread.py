"""Fresh arrays nothing reads but for their shape: their element writes are dead (`deadcode.py`).

The reverse sweep often reads a forward array only for its shape: an adjoint's zero `y_bar =
zeros_like(y)`, the `like` of `unbroadcast(g, like)`, `y.shape[0]` (`analysis/reads.value_reads`
declares which reads these are). Then the values written into the array are dead, and so is all
that computes them: spmv's forward sweep ran its whole primal loop, a gather per row, for the
shape of `y`:

    y = np.empty(A_row.size - 1, dtype=A_val.dtype)      y = np.empty(A_row.size - 1, dtype=A_val.dtype)
    for i in range(A_row.size - 1):                       # reverse sweep
        cols = A_col[A_row[i] : A_row[i + 1]]      ->     y_bar = zeros_like(y)
        vals = A_val[A_row[i] : A_row[i + 1]]             ...
        y[i] = vals @ np.take(x, cols)
    # reverse sweep
    y_bar = zeros_like(y)

An array qualifies (`unread_arrays`) when every binding of its name makes a new array (an
allocation or a copy: `FRESH`), and every other mention of it writes its elements or reads only its
shape: no view or alias of it is bound (`v = y[1:]`, `z = y`), nothing returns it, passes it to a
helper (a record on the tape, a runtime call that may keep it), iterates it or reads an element of
it, in either sweep. Nothing can then see its values, so its element writes (`y[i] = v`, `y[1:-1]
+= v`, `y += v`) are dead where their values and indices are pure, and a copy that binds it only
allocates (`np.copy(A0)` -> `np.empty(A0.shape, A0.dtype)`: the shape and dtype of the copy, C
order as np.copy's). An argument never qualifies (the caller sees it), nor does an array a tuple
or a loop binds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from ..analysis.reads import value_reads
from ..ir.exprs import dotted, names_in

# Calls whose value is a new array (never a view of their arguments).
FRESH = frozenset(
    {
        "np.empty",
        "np.zeros",
        "np.ones",
        "np.full",
        "np.empty_like",
        "np.zeros_like",
        "np.ones_like",
        "np.full_like",
        "np.copy",
        "zeros_like",
    }
)


def written_array(target: cst.BaseExpression) -> str | None:
    """The array an element write writes into: `y` for `y[i]`, `y[1:-1]`, `y[i][j]`; else None."""
    while isinstance(target, cst.Subscript):
        target = target.value
    return None if not isinstance(target, cst.Name) else target.value


def unread_arrays(definition: cst.FunctionDef, pure: Callable[[cst.CSTNode], bool]) -> frozenset[str]:
    """The local arrays of a generated function that only fresh allocations bind and that nothing
    reads but for their shape (the module's docstring). A pure element write into one of them
    reads nothing (it is dead), so two such arrays may read each other (a stencil's `B[1:-1] =
    A[:-2] + A[2:]` and `A[1:-1] = B[:-2] + B[2:]`): the largest set closed that way."""
    scan = _Scan(pure)
    scan.block(_statements(definition.body))
    params = {p.name.value for p in definition.params.params}
    unread = set(scan.bound) - scan.other - scan.values - params
    while True:
        read = set().union(*(names for array, names in scan.into.items() if array not in unread))
        if not read & unread:
            return frozenset(unread)
        unread -= read


def allocation(value: cst.BaseExpression) -> cst.BaseExpression:
    """The binding of an unread array without its values: a copy is an allocation of the copied
    array's shape and dtype; an allocation stays."""
    copied = _copied(value)
    if copied is None:
        return value
    return cst.parse_expression(f"np.empty({copied}.shape, {copied}.dtype)")


def _copied(value: cst.BaseExpression) -> str | None:
    """`z` for `np.copy(z)` and `z.copy()`, z a name; else None."""
    if not isinstance(value, cst.Call):
        return None
    func, args = value.func, value.args
    if dotted(func) == "np.copy" and len(args) == 1 and isinstance(args[0].value, cst.Name) and not args[0].keyword:
        return args[0].value.value
    if isinstance(func, cst.Attribute) and func.attr.value == "copy" and not args and isinstance(func.value, cst.Name):
        return func.value.value
    return None


def _fresh(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Call) and (dotted(value.func) in FRESH or _copied(value) is not None)


class _Scan:
    """Every mention of every name in a generated function, sorted: bound to a new array, bound
    otherwise, read for values. Element writes and shape reads go in none of them."""

    def __init__(self, pure: Callable[[cst.CSTNode], bool]) -> None:
        self.pure = pure
        self.bound: set[str] = set()  # bound by a fresh allocation somewhere
        self.other: set[str] = set()  # bound otherwise somewhere (a loop, a tuple, a non-fresh value)
        self.values: set[str] = set()  # read for values somewhere, but by a pure element write
        self.into: dict[str, set[str]] = {}  # what the pure element writes into each array read

    def block(self, statements: Sequence[cst.BaseStatement]) -> None:
        for statement in statements:
            self.statement(statement)

    def statement(self, statement: cst.BaseStatement) -> None:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                self.small(small)
        elif isinstance(statement, (cst.If, cst.While)):
            self.values |= value_reads(statement.test)
            self.block(_statements(statement.body))
            self.orelse(statement.orelse)
        elif isinstance(statement, cst.For):
            self.other |= names_in(statement.target)
            self.values |= value_reads(statement.iter)
            self.block(_statements(statement.body))
            self.orelse(statement.orelse)
        else:  # anything else: everything it names is read
            self.values |= names_in(statement)

    def orelse(self, orelse: cst.If | cst.Else | None) -> None:
        if isinstance(orelse, cst.If):
            self.statement(orelse)
        elif orelse is not None:
            self.block(_statements(orelse.body))

    def small(self, small: cst.BaseSmallStatement) -> None:
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and self.write(small.targets[0].target, small):
            return
        if isinstance(small, cst.AugAssign) and self.write(small.target, small):
            return  # `y += v` on an array writes y's elements (a scalar is never bound fresh)
        if isinstance(small, cst.Assign):
            for target in small.targets:
                self.target(target.target, small.value)
            self.values |= value_reads(small.value)
        elif isinstance(small, cst.AugAssign):
            self.target(small.target, None)
            self.values |= value_reads(small.value)
        else:  # a return, a call's statement: what it reads (`return zeros_like(y)` reads no value)
            self.values |= value_reads(small)

    def write(self, target: cst.BaseExpression, small: cst.Assign | cst.AugAssign) -> bool:
        """An element write (or update in place) into a named array. What a pure one reads is read
        only where the array is (`into`); an impure one stays, and what it reads is read."""
        array = written_array(target)
        if array is None or not (isinstance(small, cst.AugAssign) or isinstance(target, cst.Subscript)):
            return False
        reads = value_reads(small.value)
        while isinstance(target, cst.Subscript):  # the indices are read, not the array
            for element in target.slice:
                reads |= value_reads(element.slice)
            target = target.value
        if self.pure(small):
            self.into.setdefault(array, set()).update(reads)
        else:
            self.values |= reads
        return True

    def target(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name) and value is not None:
            (self.bound if _fresh(value) else self.other).add(target.value)
        else:  # a tuple, an attribute, an impure element write: every name in it bound or read otherwise
            self.other |= names_in(target)
            self.values |= names_in(target)


def _statements(suite: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    assert isinstance(suite, cst.IndentedBlock)
    return suite.body
