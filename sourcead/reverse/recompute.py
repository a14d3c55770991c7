"""Values recomputed in the reverse sweep instead of recorded: indices and re-reads.

A loop body that starts by computing integer indices from its loop counters (`ip = i + 1;
if ip == n: ip = 0`, a periodic neighbour), or by reading arrays (`t = points[i, j] -
centroids[c, j]`, `dx = p[j, 0] - p[i, 0]`), would record every overwritten value on a tape, and
every branch taken, in every iteration, so that the reverse sweep can restore them. They are
cheaper to compute again: each reversed iteration first runs that *prefix* of its body forward,
and the prefix records nothing. (Each iteration of a parallel adjoint, and each step of a
checkpointed loop, replays its body before its adjoint anyway, so there the prefix is simply not
recorded.)

A loop's prefix is its longest run of leading statements, each an assignment to an int or float
scalar, or an `if` whose branches hold only int assignments, in which every expression is
arithmetic (names, number literals, `+ - * / // %`, comparisons, `and`/`or`/`not`, `x.shape[k]`,
`len(x)`, calls of primitives declared `recomputed`, and elements `a[...]` of arrays at such
indices) of: the counters of this loop and of the loops around it (never assigned in their
bodies); parameters the function never assigns (nor writes an element of); names the function
assigns exactly once, in a top-level statement before the one holding this loop; the prefix's own
variables once assigned; and, in assignments, any other name the loop does not assign (an array
no array assignment reads: that could make a view). Those others (`Prefix.changed`) hold their
loop-time values in the reverse sweep only if the to-be-recorded analysis sees the prefix read
them: the reverse plan sees to it. Each prefix variable is first assigned unconditionally, is
assigned nowhere else in the loop, is not reassigned after a read of its value (`t = t * t`: the
adjoint reads the value before), and is not returned; where statements outside the loop mention
it (`Prefix.outside`), the reverse plan checks that nothing needs its value at the loop's entry.
So every read after the prefix sees the value the prefix leaves, in the forward and in the
reverse sweep alike; the same operands give the same bits (no fast-math), so the recomputed value
is the recorded one exactly. Calls other than the cheap ones (and `**`) are not recomputed
(`math.exp` costs more than a record).

An array that carries no derivative may be in a prefix too, where recording it would cost as much
as computing it: a view of an array at such bounds (`cols = A_col[A_row[i] : A_row[i + 1]]`, free),
and a bool mask or a selection (`m = np.logical_and(r1 <= radius, radius < r2)`, `np.extract(m,
data)`, calls declared `recomputed`) of such names, rather than n records per iteration. Its
elements are never written (it is a prefix variable), and it reads only arrays that nothing writes,
through any name: `aliased` holds every array an array-valued assignment reads whose result is
written, or reads another such (a view of a view), so an array written through a view is never
taken as unchanged.

A view with a derivative (spmv's `vals = A_val[A_row[i] : A_row[i + 1]]`) is in a prefix on the
same terms, where no statement outside its loop mentions it: each reversed iteration computes it
again and zeroes its adjoint shaped like it, after the prefix (the adjoint's reset after its
restore would otherwise take the shape of the view it replaces: a row of another length, or of
length 1, which would broadcast). Its adjoint's lines add into its array's at the same bounds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import libcst as cst

from ..ir.core import Assign, For, If, Permute, Stmt, While, assigned_names, mentioned_outside, walk_statements
from ..ir.exprs import dotted, names_in
from ..rules import primitive

_INTEGER_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)
_FLOAT_OPERATORS = (*_INTEGER_OPERATORS, cst.Divide)  # not `**`: a call of pow


@dataclass(frozen=True)
class Prefix:
    """A loop body's leading statements, computed again at the start of each reversed iteration."""

    statements: tuple[Stmt, ...]
    # names its assignments read that the function changes outside the loop: the reverse sweep
    # reads them again, so the to-be-recorded analysis must see these reads (`Prefix.reads`)
    changed: frozenset[str] = frozenset()
    # its variables that statements outside the loop mention too: the reverse sweep leaves them
    # as the loop's first iteration computes them, so none may be needed at the loop's entry
    outside: frozenset[str] = frozenset()
    # where `changed` or `outside` is not empty: its longest leading part that needs neither
    fallback: Prefix | None = None

    def assignments(self) -> list[Assign]:
        return [s for s in walk_statements(self.statements) if isinstance(s, Assign)]


def recomputed_prefixes(
    body: tuple[Stmt, ...],
    params: tuple[str, ...],
    returned: set[str],
    scalar_dtype: Callable[[str], str | None],
    constant_array: Callable[[str], bool] = lambda var: False,
    active_array: Callable[[str], bool] = lambda var: False,
) -> dict[For, Prefix]:
    """For each `for` loop whose body starts with a recomputable prefix: that prefix. `returned`:
    the names the function returns; `scalar_dtype(var)`: "int", "float" or "bool" for a scalar,
    None for anything else; `constant_array(var)` (`active_array(var)`): whether var is an array
    without (with) a derivative."""
    counts: dict[str, int] = {}
    for s in walk_statements(body):
        for var in _assigned_by(s):
            counts[var] = counts.get(var, 0) + 1
    stable = {p for p in params if p not in counts}
    aliased = _written_through_views(body, scalar_dtype)
    names = set(params) | assigned_names(body)
    found: dict[For, Prefix] = {}
    for top in body:
        cx = _Context(body, returned, names, aliased, scalar_dtype, constant_array, active_array)
        _visit(top, cx, frozenset(), set(stable), found)
        if isinstance(top, Assign) and not top.writes_element and counts.get(top.var) == 1:
            stable.add(top.var)  # assigned once, here: the same value for every later statement
    return found


def _written_through_views(body: tuple[Stmt, ...], scalar_dtype) -> set[str]:
    """The arrays a view (or a value that may be one) reads whose result may be written, directly
    or through further views (`v = A[1:]; w = v[2:]; w[0] = 1.0` writes A): they may change under
    another name. A view exchanged with a written array (`v, u = u, v`) counts as written (an
    exchange itself is no alias: the names' changes are assignments, which the prefixes see)."""
    arrays = [
        s
        for s in walk_statements(body)
        if isinstance(s, Assign) and not s.writes_element and scalar_dtype(s.var) is None and _may_view(s.value)
    ]
    written = {s.var for s in walk_statements(body) if isinstance(s, Assign) and s.writes_element}
    permutes = [s for s in walk_statements(body) if isinstance(s, Permute)]
    aliased: set[str] = set()
    while True:
        tainted = written | aliased
        for s in permutes:
            if set(s.targets) & tainted:
                tainted = tainted | set(s.targets)
        more = {n for s in arrays if s.var in tainted for n in names_in(s.value)}
        if more <= aliased:
            return aliased
        aliased |= more


def _may_view(value: cst.BaseExpression) -> bool:
    """Whether an array value may share memory with the arrays it reads: anything but arithmetic
    and the calls of primitives that make a new array (np.empty, np.take; not np.transpose)."""
    if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)):
        return False
    if isinstance(value, cst.Call):
        prim = primitive(dotted(value.func))
        return prim is None or prim.view
    return True


@dataclass(frozen=True)
class _Context:
    body: tuple[Stmt, ...]
    returned: set[str]
    names: set[str]  # every name the function has
    aliased: set[str]
    scalar_dtype: Callable[[str], str | None]
    constant_array: Callable[[str], bool]
    active_array: Callable[[str], bool]


def _visit(s: Stmt, cx: _Context, counters: frozenset[str], stable: set[str], found) -> None:
    if isinstance(s, For):
        inner = counters | ({s.var} if s.var not in assigned_names(s.body) else set())
        prefix = _prefix(s, cx, stable | inner, stable - cx.aliased, loose=True)
        if prefix is not None and (prefix.changed or prefix.outside):
            prefix = replace(prefix, fallback=_prefix(s, cx, stable | inner, stable - cx.aliased, loose=False))
        if prefix is not None:
            found[s] = prefix
        for t in s.body:
            _visit(t, cx, inner, stable, found)
    elif isinstance(s, While):
        for t in s.body:
            _visit(t, cx, counters, stable, found)
    elif isinstance(s, If):
        for t in s.body + s.orelse:
            _visit(t, cx, counters, stable, found)


def _prefix(loop: For, cx: _Context, allowed: set[str], arrays: set[str], loose: bool) -> Prefix | None:
    """`allowed` names and elements of `arrays` have one value wherever they are read; an
    assignment may also read the names the loop leaves alone (`unchanged`), whose reads the
    to-be-recorded analysis then sees."""
    scalar_dtype = cx.scalar_dtype
    unchanged = cx.names - assigned_names(loop.body) - {loop.var} - allowed if loose else set()
    unchanged_scalars = {n for n in unchanged if scalar_dtype(n) is not None}
    unchanged_arrays = {n for n in unchanged if scalar_dtype(n) is None} - cx.aliased
    defined: set[str] = set()
    read: set[str] = set()  # prefix variables read since their last assignment
    taken: list[Stmt] = []
    changed: set[str] = set()
    for s in loop.body:
        names = allowed | defined
        if isinstance(s, Assign) and (
            _computes(s, names | unchanged_scalars, arrays | unchanged_arrays, scalar_dtype)
            or _constant_array(s, names | unchanged_scalars, arrays | unchanged_arrays, cx)
            or _active_view(s, names | unchanged_scalars, arrays | unchanged_arrays, cx, loop)
        ):
            if s.var in allowed or s.accumulate is not None and s.var not in defined:
                break  # an update of a counter or a stable name, or of a value from before: not a prefix
            reads = names_in(s.value) | ({s.var} if s.accumulate is not None else set())
            if s.var in defined and (s.var in read or s.var in reads and not _assigns(s, scalar_dtype, "int")):
                # an adjoint reads the value this overwrites (`t = t * t`): recomputed, the
                # reverse sweep would see only the last one
                break
            read = (read | reads & defined) - {s.var}
            defined.add(s.var)
            taken.append(s)
            changed |= names_in(s.value) & unchanged
        elif (
            isinstance(s, If)
            and _arithmetic(s.test, allowed | defined, arrays)
            and _only_updates(s, defined, allowed, arrays, scalar_dtype)
            and not assigned_names(s.body + s.orelse) & read
        ):
            branches = [t for t in walk_statements(s.body + s.orelse) if isinstance(t, Assign)]
            read = (read | set().union(*(names_in(t.value) for t in branches)) & defined) - assigned_names((s,))
            taken.append(s)
        else:
            break
    if not taken:
        return None
    rest = loop.body[len(taken) :]
    if defined & (assigned_names(rest) | cx.returned):
        return None  # a prefix variable lives beyond the iteration: keep its records
    outside = defined & mentioned_outside(cx.body, loop)
    if outside and not loose:
        return None
    return Prefix(tuple(taken), frozenset(changed), frozenset(outside))


def _assigned_by(s: Stmt) -> list[str]:
    """The names one statement assigns itself (not in the blocks it holds)."""
    if isinstance(s, Assign):
        return [s.var]
    if isinstance(s, For):
        return [s.var]
    if isinstance(s, Permute):
        return list(s.targets)
    return []


def _computes(s: Assign, names: set[str], arrays: set[str], scalar_dtype) -> bool:
    """An int scalar assigned integer arithmetic, or a float scalar assigned arithmetic, of `names`
    and elements of `arrays`."""
    if _assigns(s, scalar_dtype, "int"):
        return _arithmetic(s.value, names, arrays)
    return _assigns(s, scalar_dtype, "float") and _arithmetic(s.value, names, arrays, _FLOAT_OPERATORS)


def _constant_array(s: Assign, names: set[str], arrays: set[str], cx: _Context) -> bool:
    """An array without a derivative assigned a view of one of `arrays` at integer-arithmetic
    bounds, or a call of cheap primitives (masks, selections) of `names` and `arrays`."""
    if s.writes_element or s.accumulate is not None or not cx.constant_array(s.var):
        return False
    value = s.value
    if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and value.value.value in arrays:
        return all(_bound(e.slice, names, arrays) for e in value.slice)
    return isinstance(value, (cst.Call, cst.Comparison)) and _arithmetic(
        value, names | arrays, arrays, _FLOAT_OPERATORS
    )


def _active_view(s: Assign, names: set[str], arrays: set[str], cx: _Context, loop: For) -> bool:
    """An array with a derivative assigned a view of one of `arrays` at integer-arithmetic bounds
    (spmv's `vals = A_val[A_row[i] : A_row[i + 1]]`), mentioned nowhere outside the loop: its
    adjoint then lives in one iteration, and the reverse sweep zeroes it at the start of each
    reversed iteration, shaped like the view computed again there (`reverse_sweep.backward`)."""
    if s.writes_element or s.accumulate is not None or not cx.active_array(s.var):
        return False
    value = s.value
    if not (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and value.value.value in arrays):
        return False
    if not all(_bound(e.slice, names, arrays) for e in value.slice):
        return False
    return s.var not in mentioned_outside(cx.body, loop)


def _bound(part: cst.BaseSlice, names: set[str], arrays: set[str]) -> bool:
    """An index or slice of integer arithmetic (a view's bounds)."""
    if isinstance(part, cst.Index):
        return _arithmetic(part.value, names, arrays)
    assert isinstance(part, cst.Slice)
    return all(e is None or _arithmetic(e, names, arrays) for e in (part.lower, part.upper, part.step))


def _assigns(s: Assign, scalar_dtype, dtype: str) -> bool:
    return not s.writes_element and isinstance(s.target, cst.Name) and scalar_dtype(s.var) == dtype


def _only_updates(s: If, defined: set[str], allowed: set[str], arrays: set[str], scalar_dtype) -> bool:
    """Branches holding only int assignments of integer arithmetic, to prefix variables assigned
    unconditionally before."""
    names = allowed | defined
    for t in s.body + s.orelse:
        if isinstance(t, If):
            if not (_arithmetic(t.test, names, arrays) and _only_updates(t, defined, allowed, arrays, scalar_dtype)):
                return False
        elif not (isinstance(t, Assign) and _assigns(t, scalar_dtype, "int") and t.var in defined):
            return False
        elif not _arithmetic(t.value, names, arrays):
            return False
    return True


def _arithmetic(
    node: cst.BaseExpression, allowed: set[str], arrays: set[str], operators: tuple = _INTEGER_OPERATORS
) -> bool:
    """Arithmetic (with `operators`) of `allowed` names, number literals (integers only for
    integer arithmetic), sizes of allowed arrays, and elements of `arrays` (never written, nor
    aliased) at integer-arithmetic indices."""

    def ok(e: cst.BaseExpression) -> bool:
        return _arithmetic(e, allowed, arrays, operators)

    if isinstance(node, cst.Name):
        return node.value in allowed
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.Float):
        return operators is not _INTEGER_OPERATORS
    if isinstance(node, cst.BinaryOperation):
        return isinstance(node.operator, operators) and ok(node.left) and ok(node.right)
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.operator, (cst.Minus, cst.Not)) and ok(node.expression)
    if isinstance(node, cst.Comparison):
        return ok(node.left) and all(ok(c.comparator) for c in node.comparisons)
    if isinstance(node, cst.BooleanOperation):
        return ok(node.left) and ok(node.right)
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value in arrays:
        return all(isinstance(e.slice, cst.Index) and _arithmetic(e.slice.value, allowed, arrays) for e in node.slice)
    if _size_of_stable(node, allowed):
        return True
    if isinstance(node, cst.Call):  # a call the primitive table declares cheap to compute again
        prim = primitive(dotted(node.func))
        return (
            prim is not None
            and prim.recomputed
            and all(a.keyword is None and not a.star and ok(a.value) for a in node.args)
        )
    return False


def _size_of_stable(node: cst.BaseExpression, allowed: set[str]) -> bool:
    """`x.shape[k]` or `len(x)` of an array whose name is allowed (so never rebound)."""
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        value, index = node.value, node.slice[0].slice
        return (
            isinstance(value, cst.Attribute)
            and value.attr.value == "shape"
            and isinstance(value.value, cst.Name)
            and value.value.value in allowed
            and isinstance(index, cst.Index)
            and isinstance(index.value, cst.Integer)
        )
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len":
        return len(node.args) == 1 and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value in allowed
    return False
