"""The shape contract: the argument shapes that keep every index of the generated code in range.

The generated code indexes the user's arrays where the user's code does, and their derivatives
(`x_bar`, `x_dot`: the shape of `x`) at the same indices, so one fact per element access of the
core form covers both. A fact is derived where the access is reached whenever its loops run:

    for i in range(x.shape[0]):        reads y[i + 1] for i in 0 .. x.shape[0] - 1, so
        s += x[i] * y[i + 1]           y.shape[0] >= x.shape[0] + 1 whenever x.shape[0] > 0

Index expressions are affine in loop variables, int arguments and argument sizes (`x.shape[k]`,
`len(x)`, and locals assigned once from them at the top level); the indexed array is an argument
or a local made once with such a shape (`np.zeros(n)`, `np.zeros_like(x)`). A fact that holds for
every call (`x[i]` for i in range(x.shape[0])) is dropped; the others are checked before each call
(`callplan.py`). An access under an `if` or a `while`, or in a loop with a `break`, may never run,
so a fact about it is only kept where it always holds; an access no fact covers (`x[idx[k]]`, an
index computed in the loop) makes the contract *incomplete*, and that variant is compiled with
numba's bounds checks (`compile.jit_module`), so no input reads or writes out of range.

The contract is JSON (stored in the key file with the module's spec) so a warm process has it
without running the pipeline. Affine expressions are lists of `[atom, coefficient]`, an atom being
"1", "n:K" (the int argument at position K) or "s:K:A" (axis A of the argument at position K).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field, fields
from typing import Any

import libcst as cst

from .core import Assign, CoreFunction, For, If, Permute, Stmt, While, assigned_names, has_break, walk_statements
from .exprs import code, dotted, unparen
from .kinds import Kinds
from .parse import ParsedFunction

Affine = dict[str, int]  # atom -> coefficient; the atom "1" is the constant term
_MADE = ("np.zeros", "np.ones", "np.empty", "np.full")
_MADE_LIKE = ("np.zeros_like", "np.ones_like", "np.empty_like", "np.full_like", "np.copy")


@dataclass
class _Loop:
    var: str
    start: Affine
    stop: Affine
    step: int
    text: str


@dataclass
class _Scope:
    """What the walk knows at a statement: the static ints and array shapes, and its loops."""

    ints: dict[str, Affine]
    shapes: dict[str, tuple[Affine, ...]]
    loops: tuple[_Loop, ...] = ()
    conditional: bool = False  # some enclosing statement may not run it (an if, a while, a break)


@dataclass
class _Contract:
    facts: list[dict] = field(default_factory=list)
    complete: bool = True
    uncovered: list[str] = field(default_factory=list)


def derive(fn: CoreFunction, kinds: Kinds, parsed: ParsedFunction, mode: str) -> str:
    """The contract of one generated variant, as JSON text (see the module docstring). In reverse
    mode an array result's cotangent is indexed like the result, so its shape belongs to it."""
    assigned = _assignment_counts(fn, kinds)
    params = {p: k for k, p in enumerate(fn.params)}
    ints = {p: {f"n:{k}": 1} for p, k in params.items() if kinds[p].is_scalar and kinds[p].dtype == "int"}
    shapes = {p: tuple({f"s:{k}:{a}": 1} for a in range(kinds[p].ndim)) for p, k in params.items() if kinds[p].is_array}
    for p in params:
        if assigned[p]:  # rebound in the body: its value (or shape) is not the argument's
            ints.pop(p, None)
            shapes.pop(p, None)
    out = _Contract()
    walker = _Walker(fn, kinds, parsed, assigned, out)
    walker.block(fn.body, _Scope(ints, shapes), top=True)
    outputs = []
    for value in fn.ret.values:
        node = unparen(value)
        if isinstance(node, cst.Name) and kinds.is_array(node.value):
            shape = walker.final_shapes.get(node.value)
            outputs.append(
                {"ndim": kinds.ndim(node.value), "shape": None if shape is None else [_dump(a) for a in shape]}
            )
            if shape is None and mode == "reverse":
                out.complete = False  # a cotangent too short for it is caught by the bounds checks
                out.uncovered.append(f"the shape of the result `{node.value}`")
        else:
            outputs.append({"ndim": 0, "shape": None})
    unique = {json.dumps(f, sort_keys=True): f for f in out.facts}
    return json.dumps(
        {
            "facts": list(unique.values()),
            "complete": out.complete,
            "uncovered": sorted(set(out.uncovered)),
            "outputs": outputs,
            "file": parsed.filename,
        },
        sort_keys=True,
    )


def _assignment_counts(fn: CoreFunction, kinds: Kinds) -> Counter:
    """How many statements bind each name as a whole (element writes keep an array's shape; a swap
    of arrays is not counted: `_swapped` groups its names, whose shapes hold only where equal)."""
    counts: Counter = Counter()
    for stmt in walk_statements(fn.body):
        if isinstance(stmt, Assign) and not stmt.writes_element:
            counts[stmt.var] += 1
        elif isinstance(stmt, For):
            counts[stmt.var] += 1
        elif isinstance(stmt, Permute):
            counts.update(t for t in stmt.targets if not kinds.is_array(t))
    return counts


def _swapped(fn: CoreFunction, kinds: Kinds) -> dict[str, frozenset[str]]:
    """Each array name that swaps (`u, v = v, u`) -> every name it may exchange its array with,
    itself included (the names of one swap, joined through any other swap they are in)."""
    groups: dict[str, frozenset[str]] = {}
    for stmt in walk_statements(fn.body):
        if isinstance(stmt, Permute):
            names = frozenset(t for t in (*stmt.targets, *stmt.sources) if kinds.is_array(t))
            joined = names.union(*(groups.get(n, frozenset()) for n in names))
            for n in joined:
                groups[n] = joined
    return groups


class _Walker:
    def __init__(self, fn: CoreFunction, kinds: Kinds, parsed: ParsedFunction, assigned: Counter, out: _Contract):
        self.fn, self.kinds, self.parsed, self.assigned, self.out = fn, kinds, parsed, assigned, out
        self.final_shapes: dict[str, tuple[Affine, ...]] = {}
        self.swapped = _swapped(fn, kinds)

    def view(self, scope: _Scope) -> _Scope:
        """`scope` as its readers see it: an array that swaps has its static shape only where every
        name it may have exchanged with has one too, the same (they are bound once, each to an
        array of that shape, so whichever array a name holds after any swaps has it); where one is
        not bound yet here, a swap in an earlier iteration may have handed it another shape."""
        if not self.swapped:
            return scope
        shapes = scope.shapes
        kept = {
            n: shape
            for n, shape in shapes.items()
            if all(shapes.get(m) == shape for m in self.swapped.get(n, frozenset()))
        }
        return _Scope(scope.ints, kept, scope.loops, scope.conditional)

    def block(self, body: tuple[Stmt, ...], scope: _Scope, top: bool = False) -> None:
        for stmt in body:
            self.statement(stmt, scope)
            if isinstance(stmt, Assign) and not stmt.writes_element and self.assigned[stmt.var] == 1:
                self.bind(stmt, scope)  # for the rest of this block (a nested block has copies)
        if top:
            self.final_shapes = dict(self.view(scope).shapes)

    def bind(self, stmt: Assign, scope: _Scope) -> None:
        """A name assigned once in the function: a static int, or an array of static shape, from
        here to the end of its block (before, it is unbound; after a block it may not have run,
        it may be a placeholder)."""
        var, t = stmt.var, self.kinds[stmt.var]
        if stmt.accumulate is not None:
            return
        if t.is_scalar and t.dtype == "int":
            value = _affine(stmt.value, self.view(scope))
            if value is not None:
                scope.ints[var] = value
        elif t.is_array:
            shape = _made_shape(stmt.value, self.view(scope), t.ndim)
            if shape is not None:
                scope.shapes[var] = shape

    def statement(self, stmt: Stmt, scope: _Scope) -> None:
        if isinstance(stmt, Assign):
            for node in (stmt.target, stmt.value):
                self.accesses(node, stmt, scope)
        elif isinstance(stmt, For):
            for node in (stmt.start, stmt.stop, stmt.step):
                self.accesses(node, stmt, scope)
            self.block(stmt.body, self.inner(stmt, scope))
        elif isinstance(stmt, If):
            self.accesses(stmt.test, stmt, scope)
            for branch in (stmt.body, stmt.orelse):
                self.block(branch, _Scope(dict(scope.ints), dict(scope.shapes), scope.loops, True))
        elif isinstance(stmt, While):
            inner = _Scope(dict(scope.ints), dict(scope.shapes), scope.loops, True)
            self.accesses(stmt.test, stmt, inner)
            self.block(stmt.body, inner)

    def inner(self, loop: For, scope: _Scope) -> _Scope:
        start, stop, step = (_affine(e, self.view(scope)) for e in (loop.start, loop.stop, loop.step))
        conditional = scope.conditional or has_break(loop)
        if loop.var in assigned_names(loop.body) or start is None or stop is None:
            return _Scope(dict(scope.ints), dict(scope.shapes), scope.loops, True)  # its index range is not static
        if step is None or set(step) != {"1"} or step["1"] == 0:
            return _Scope(dict(scope.ints), dict(scope.shapes), scope.loops, True)
        found = _Loop(loop.var, start, stop, step["1"], loop.range_text())
        return _Scope(dict(scope.ints), dict(scope.shapes), (*scope.loops, found), conditional)

    def accesses(self, node: cst.CSTNode, stmt: Stmt, scope: _Scope) -> None:
        for sub in _subscripts(node):
            self.access(sub, stmt, scope)

    def access(self, sub: cst.Subscript, stmt: Stmt, scope: _Scope) -> None:
        scope = self.view(scope)
        array = unparen(sub.value)
        if isinstance(array, cst.Attribute) and array.attr.value == "shape":
            return  # a size: its index is a literal numba checks when it compiles
        indexed = [(axis, e.slice.value) for axis, e in enumerate(sub.slice) if isinstance(e.slice, cst.Index)]
        if not indexed:
            return  # slices only: NumPy and numba clip them
        name = array.value if isinstance(array, cst.Name) else None
        shape = scope.shapes.get(name) if name is not None else None
        for axis, index in indexed:
            fact = None if shape is None or axis >= len(shape) else self.fact(name, axis, shape[axis], index, scope)
            if fact is None or (scope.conditional and not fact.get("always")):
                self.uncover(sub, stmt)
            elif not fact.get("always"):
                fact["where"] = self.where(sub, stmt)
                fact["access"] = code(sub)
                self.out.facts.append(fact)

    def fact(self, name: str, axis: int, dim: Affine, index: cst.BaseExpression, scope: _Scope) -> dict | None:
        loop_vars = {loop.var: loop for loop in scope.loops}
        value = _affine(index, scope, loop_vars)
        if value is None:
            return None
        loops = [loop_vars[v] for v in value if v in loop_vars]
        fixed = {a: c for a, c in value.items() if a not in loop_vars}
        high, low = dict(fixed), dict(fixed)  # the index at its largest and smallest, as a bound
        for loop in loops:
            coef = value[loop.var]
            last = _add(loop.stop, {"1": -1}) if loop.step > 0 else loop.start
            first = loop.start if loop.step > 0 else _add(loop.stop, {"1": 1})
            high = _add(high, _scale(last if coef > 0 else first, coef))
            low = _add(low, _scale(first if coef > 0 else last, coef))
        upper = _add(dim, _scale(high, -1))  # dim - high >= 1: in range above
        lower = _add(dim, low)  # dim + low >= 0: in range below (negative indices count from the end)
        upper_holds = _constant(upper) is not None and _constant(upper) >= 1  # type: ignore[operator]
        lower_holds = _constant(lower) is not None and _constant(lower) >= 0 or _nonnegative(low)  # type: ignore[operator]
        array_param = self.fn.params.index(name) if name in self.fn.params else None
        exact = all(abs(loop.step) == 1 for loop in loops)  # then the bounds above are the index's extremes
        return {
            "guards": [  # the access runs when every enclosing loop does, not only those of its index
                _dump(_add(lp.stop, _scale(lp.start, -1)) if lp.step > 0 else _add(lp.start, _scale(lp.stop, -1)))
                for lp in scope.loops
            ],
            "need": _dump(_add(high, {"1": 1})) if exact else None,  # dim >= need: in range above
            "floor": _dump(_scale(low, -1)) if exact else None,  # dim >= floor: in range below
            "array": self.fn.user_params[array_param] if array_param is not None else name,
            "param": array_param,
            "axis": axis,
            "dim": _dump(dim),
            "index": _dump(value),
            "loops": [[lp.var, _dump(lp.start), _dump(lp.stop), lp.step, lp.text] for lp in loops],
            "upper": not upper_holds,  # which side needs a check at the call
            "lower": not lower_holds,
            "always": upper_holds and lower_holds,
        }

    def uncover(self, sub: cst.Subscript, stmt: Stmt) -> None:
        self.out.complete = False
        line = self.where(sub, stmt)
        self.out.uncovered.append(f"{code(sub)}" + (f" (line {line[0]})" if line else ""))

    def where(self, node: cst.CSTNode, stmt: Stmt) -> list[int] | None:
        found = self.parsed.locate(node) or self.parsed.locate(stmt.origin)
        return [found.line, found.column] if found is not None else None


def _subscripts(node: cst.CSTNode) -> list[cst.Subscript]:
    """Every subscript in `node`, outer before inner. A walk over the dataclass fields: libcst's
    visitors rebuild each node they pass, which made this the pass's whole cost."""
    found: list[cst.Subscript] = []
    stack: list[Any] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        elif isinstance(item, cst.CSTNode):
            if isinstance(item, cst.Subscript):
                found.append(item)
            stack.extend(getattr(item, f.name) for f in reversed(fields(item)) if f.name not in _LAYOUT)
    return found


_LAYOUT = frozenset(
    ("lpar", "rpar", "whitespace_before", "whitespace_after", "whitespace_after_star", "comma", "equal", "dot")
)


def _affine(node: cst.BaseExpression, scope: _Scope, loop_vars: dict | None = None) -> Affine | None:
    """`node` as an affine expression of static atoms (and of loop variables, given), or None."""
    node = unparen(node)
    if isinstance(node, cst.Integer):
        return {"1": int(node.evaluated_value)}
    if isinstance(node, cst.Name):
        if loop_vars is not None and node.value in loop_vars:
            return {node.value: 1}
        return scope.ints.get(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _affine(node.expression, scope, loop_vars)
        return None if inner is None else _scale(inner, -1)
    if isinstance(node, cst.BinaryOperation):
        left, right = _affine(node.left, scope, loop_vars), _affine(node.right, scope, loop_vars)
        if left is None or right is None:
            return None
        if isinstance(node.operator, cst.Add):
            return _add(left, right)
        if isinstance(node.operator, cst.Subtract):
            return _add(left, _scale(right, -1))
        if isinstance(node.operator, cst.Multiply):
            for a, b in ((left, right), (right, left)):
                if _constant(a) is not None:
                    return _scale(b, _constant(a))  # type: ignore[arg-type]
        return None
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        holder = unparen(node.value)
        axis = unparen(node.slice[0].slice.value)
        if isinstance(holder, cst.Attribute) and holder.attr.value == "shape" and isinstance(axis, cst.Integer):
            shape = _shape_of(holder.value, scope)
            k = int(axis.evaluated_value)
            return shape[k] if shape is not None and -len(shape) <= k < len(shape) else None
        return None
    if isinstance(node, cst.Call) and dotted(node.func) == "len" and len(node.args) == 1:
        shape = _shape_of(node.args[0].value, scope)
        return shape[0] if shape else None
    return None


def _shape_of(node: cst.BaseExpression, scope: _Scope) -> tuple[Affine, ...] | None:
    node = unparen(node)
    return scope.shapes.get(node.value) if isinstance(node, cst.Name) else None


def _made_shape(value: cst.BaseExpression, scope: _Scope, ndim: int) -> tuple[Affine, ...] | None:
    """The static shape of an array made by `np.zeros(shape)`, `np.zeros_like(x)`, `x.copy()` ..."""
    value = unparen(value)
    if isinstance(value, cst.Name):
        return None  # another name for a buffer: its own shape facts apply
    if not isinstance(value, cst.Call) or not value.args:
        return None
    func, first = dotted(value.func), value.args[0].value
    if func in _MADE_LIKE:
        return _shape_of(first, scope)
    if func not in _MADE:
        return None
    first = unparen(first)
    if isinstance(first, cst.Attribute) and first.attr.value == "shape":
        return _shape_of(first.value, scope)
    items = [e.value for e in first.elements] if isinstance(first, cst.Tuple) else [first]
    dims = [_affine(e, scope) for e in items]
    if len(dims) != ndim or any(d is None for d in dims):
        return None
    return tuple(dims)  # type: ignore[arg-type]


def _add(a: Affine, b: Affine) -> Affine:
    out = dict(a)
    for atom, coef in b.items():
        out[atom] = out.get(atom, 0) + coef
    return {atom: coef for atom, coef in out.items() if coef != 0 or atom == "1"}


def _scale(a: Affine, factor: int) -> Affine:
    return {atom: coef * factor for atom, coef in a.items()} if factor else {"1": 0}


def _constant(a: Affine) -> int | None:
    """The value of an expression without atoms, else None."""
    return a.get("1", 0) if all(atom == "1" for atom in a) else None


def _nonnegative(a: Affine) -> bool:
    """Sizes and a nonnegative constant, with nonnegative coefficients: never below zero."""
    return a.get("1", 0) >= 0 and all(c >= 0 and atom.startswith("s:") for atom, c in a.items() if atom != "1")


def _dump(a: Affine) -> list[list]:
    return sorted([atom, coef] for atom, coef in a.items())
