"""The shape contract: the argument shapes that keep every index of the generated code in range.

The generated code indexes the user's arrays where the user's code does, and their derivatives
(`x_bar`, `x_dot`: the shape of `x`) at the same indices, so one fact per element access of the
core form covers both. A fact is derived where the access is reached whenever its loops run:

    for i in range(x.shape[0]):        reads y[i + 1] for i in 0 .. x.shape[0] - 1, so
        s += x[i] * y[i + 1]           y.shape[0] >= x.shape[0] + 1 whenever x.shape[0] > 0

Index expressions are affine in loop variables, int arguments and argument sizes (`x.shape[k]`,
`len(x)`, their floor quotients by a constant, and locals assigned once from them, at the top level
or in a loop from its variables); the indexed array is an argument or a local made once with such a
shape (`np.zeros(n)`, `np.zeros_like(x)`). A fact that holds for every call (`x[i]` for i in
range(x.shape[0])) is dropped; the others are checked before each call (`callplan.py`).

A fact checked at the call must be exact: the call fails only where the user's code would index out
of range. Some accesses cannot give one: one under an `if` or a `while`, or in a loop with a
`break`, may never run; one in a triangular loop (`range(k + 1, n)`) or at an int local assigned
several values (`p = k`, later `p = i`: its *range*, the hull of every value assigned, 0 included
for a read before any; a ring index, `ip = i + 1; if ip == n: ip = 0` (`rings.py`), takes the
range of its loop's variable, which it stays in wherever it is read, and so does `e % n` in a loop
over range(n), as an index or a value assigned) reaches only some of its bound's values. Such an access is covered where
its fact always holds, or where a checked fact implies it (the same size, a bound at least as
large, guards among its own: whenever it runs, that fact was checked). An array that swaps with
arrays of other shapes may hold any of them: a read needs a fact for each (`swapped_access`). An access nothing covers
(`x[idx[k]]`, an index computed in the loop) makes the contract *incomplete*, and that variant is
compiled with numba's bounds checks (`compile.jit_module`), so no input reads or writes out of range.

The contract is JSON (stored in the key file with the module's spec) so a warm process has it
without running the pipeline. Affine expressions are lists of `[atom, coefficient]`, an atom being
"1", "n:K" (the int argument at position K), "s:K:A" (axis A of the argument at position K) or
"q:D:E" (the floor quotient of E, an affine expression as JSON, by the constant D > 0).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass, field, fields
from typing import Any

import libcst as cst

from ..frontend.parse import ParsedFunction
from ..frontend.rings import ring_indices
from ..ir.core import (
    Assign,
    CoreFunction,
    For,
    If,
    Permute,
    Stmt,
    While,
    assigned_names,
    blocks,
    has_break,
    walk_statements,
)
from ..ir.exprs import code, dotted, unparen
from ..rules import new_array_shape
from .affine import ONE, Affine, affine_form, affine_minus, affine_plus, affine_scale, constant
from .definite import possibly_undefined
from .kinds import Kinds


@dataclass
class _Loop:
    """A `for` loop whose variable the body never assigns. Its bounds are affine in static atoms,
    and may be in the variables of enclosing loops and ranged ints too (a triangular loop)."""

    var: str
    start: Affine
    stop: Affine
    step: int
    text: str

    @property
    def static(self) -> bool:
        return _static(self.start) and _static(self.stop)

    def lowest(self) -> Affine:
        """No value of the variable is below this (the smallest where the step is 1 or -1)."""
        return self.start if self.step > 0 else affine_plus(self.stop, {ONE: 1})

    def highest(self) -> Affine:
        return affine_plus(self.stop, {ONE: -1}) if self.step > 0 else self.start

    def span(self) -> Affine:
        """Positive exactly when the loop runs."""
        return affine_minus(self.stop, self.start) if self.step > 0 else affine_minus(self.start, self.stop)


@dataclass
class _Scope:
    """What the walk knows at a statement: the static ints and array shapes, and its loops."""

    ints: dict[str, Affine]
    shapes: dict[str, tuple[Affine, ...]]
    loops: tuple[_Loop, ...] = ()
    conditional: bool = False  # some enclosing statement may not run it (an if, a while, a break)
    data: dict[str, tuple[int, tuple[Affine, ...]]] = field(default_factory=dict)  # `c = obs[i, 0]`

    def nested(self, loops: tuple[_Loop, ...] | None = None, conditional: bool | None = None) -> _Scope:
        """A copy for a nested block (its bindings stay in it)."""
        return _Scope(
            dict(self.ints),
            dict(self.shapes),
            self.loops if loops is None else loops,
            self.conditional if conditional is None else conditional,
            dict(self.data),
        )


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
    first = _Walker(fn, kinds, parsed, assigned, _Contract(), {})
    first.block(fn.body, _Scope(dict(ints), dict(shapes)), top=True)
    out = _Contract()
    walker = _Walker(fn, kinds, parsed, assigned, out, first.ranges())
    walker.block(fn.body, _Scope(ints, shapes), top=True)
    walker.settle()
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
    of arrays is not counted: `_swapped` groups its names, each read needing a fact per shape the group has)."""
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
    """Walks the core form once with each int local's range (`ranged`, from a first walk that
    records every value assigned to one: `values`), adding a fact per element access to `out`;
    accesses whose facts cannot be checked at the call wait in `pending` for `settle`."""

    def __init__(
        self,
        fn: CoreFunction,
        kinds: Kinds,
        parsed: ParsedFunction,
        assigned: Counter,
        out: _Contract,
        ranged: dict[str, tuple[Affine, Affine]],
    ):
        self.fn, self.kinds, self.parsed, self.assigned, self.out = fn, kinds, parsed, assigned, out
        self.final_shapes: dict[str, tuple[Affine, ...]] = {}
        self.swapped = _swapped(fn, kinds)
        self.ranged = ranged
        self.written = {st.var for st in walk_statements(fn.body) if isinstance(st, Assign) and st.writes_element}
        self.values: dict[str, list[tuple[Affine, Affine] | None]] = {}
        self.pending: list[_Pending] = []
        self.swap_loops = _swap_loops(fn.body, self.swapped)
        self.swapped_here: set[frozenset[str]] = set()  # groups one of whose swaps the walk passed
        self.open: list[Stmt] = []  # the loops around the statement walked
        self.walked: dict[int, _Loop] = {}  # each `for` walked, by id, where its range is static
        # the two assignments of each ring index (`rings.py`), by the variable of its loop: the
        # index takes that variable's values wherever it is read
        rings = {loop: ring_indices(loop) for loop in walk_statements(fn.body) if isinstance(loop, For)}
        self.rings = {a: loop.var for loop, found in rings.items() for ring in found.values() for a in ring.statements}
        self.ring_names = {id(loop): set(found) for loop, found in rings.items()}

    def ranges(self) -> dict[str, tuple[Affine, Affine]]:
        """Each int local's lowest and highest value as static bounds: the hull of every value a
        statement assigns it (a loop's range for its variable), and of 0, the placeholder, where a
        path may read it before any (`definite.py`); none where one value is not affine (`+=`, a
        swap, data)."""
        found = {}
        unassigned = possibly_undefined(self.fn.body, self.fn.params)
        for name, values in self.values.items():
            low, high = ({}, {}) if name in unassigned else (values[0] or (None, None))
            for value in values:
                if value is None or low is None or high is None:
                    low = None
                    break
                low, high = _lesser(low, value[0]), _lesser(high, value[1], larger=True)
            if low is not None and high is not None:
                found[name] = (low, high)
        return found

    def variables(self, scope: _Scope) -> dict[str, _Loop | tuple[Affine, Affine]]:
        """What an index may be affine in besides static atoms: the enclosing loops' variables,
        and int locals with a range (where no binding of the block gives their value)."""
        found: dict[str, _Loop | tuple[Affine, Affine]] = {n: r for n, r in self.ranged.items() if n not in scope.ints}
        found.update((loop.var, loop) for loop in scope.loops)
        return found

    def extreme(self, value: Affine, loops: tuple[_Loop, ...], upward: bool) -> Affine | None:
        """The largest (`upward`) or smallest value of `value` over `loops` and the ranged ints, as
        static atoms: each variable replaced by its bound, innermost loop first (a loop's bounds
        are in outer ones' variables), ranged ints last. None where something is left over."""
        out = dict(value)
        for loop in reversed(loops):
            coef = out.pop(loop.var, 0)
            if coef:
                out = affine_plus(out, affine_scale(loop.highest() if (coef > 0) == upward else loop.lowest(), coef))
        for name, (low, high) in self.ranged.items():
            coef = out.pop(name, 0)
            if coef:
                out = affine_plus(out, affine_scale(high if (coef > 0) == upward else low, coef))
        return out if _static(out) else None

    def record(self, name: str, value: Affine | None, scope: _Scope, loops: tuple[_Loop, ...] | None = None) -> None:
        """Note a value assigned to the int local `name` (for `ranges`), as bounds over `loops`."""
        if name in self.fn.params or not (self.kinds[name].is_scalar and self.kinds[name].dtype == "int"):
            return
        loops = scope.loops if loops is None else loops
        bounds = None
        if value is not None:
            low, high = self.extreme(value, loops, False), self.extreme(value, loops, True)
            bounds = None if low is None or high is None else (low, high)
        self.values.setdefault(name, []).append(bounds)

    def settle(self) -> None:
        """Each access whose fact cannot be checked at the call is covered where a checked fact
        implies it (its guards widened by the loops it may assume ran), and left uncovered
        (bounds-checked) where none does. A swapped array's first binding read after the loop of
        its swaps (`_Pending.promote`) is checked at the call where a checked fact implies it once
        that loop ran."""
        waiting = []
        for entry in self.pending:
            if entry.promote and any(_implies(checked, entry.widened()) for checked in self.out.facts):
                entry.fact["where"] = self.where(entry.sub, entry.stmt)
                entry.fact["access"] = code(entry.sub)
                self.out.facts.append(entry.fact)
            else:
                waiting.append(entry)
        for entry in waiting:
            facts = (entry.fact,) if entry.promote else (entry.fact, entry.widened())
            if not any(_implies(checked, fact) for checked in self.out.facts for fact in facts):
                self.uncover(entry.sub, entry.stmt)

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
        return _Scope(scope.ints, kept, scope.loops, scope.conditional, scope.data)

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
        if t.is_scalar and t.dtype == "int":  # in the enclosing loops' variables (`wr = 2 * layer`)
            value = _affine(stmt.value, self.view(scope), {loop.var: loop for loop in scope.loops})
            if value is not None:
                scope.ints[var] = value
            else:
                read = self.data_read(stmt.value, scope)
                if read is not None:
                    scope.data[var] = read
        elif t.is_array:
            shape = _made_shape(stmt.value, self.view(scope), t.ndim)
            if shape is not None:
                scope.shapes[var] = shape

    def data_read(self, value: cst.BaseExpression, scope: _Scope) -> tuple[int, tuple[Affine, ...]] | None:
        """`obs[i, 0]`: an element of an int array argument the function never writes or rebinds,
        at indices that are static or the variable of an enclosing loop (each at most once), all of
        whose loops are static with step 1: the values such a local takes are exactly those of a
        slice of the argument, which the call can check (`data` facts)."""
        node = unparen(value)
        if not isinstance(node, cst.Subscript) or not isinstance(node.value, cst.Name):
            return None
        name = node.value.value
        if name not in self.fn.params or self.assigned[name] or name in self.written:
            return None
        t = self.kinds[name]
        if not t.is_array or t.dtype != "int" or len(node.slice) != t.ndim:
            return None
        if any(not loop.static or loop.step != 1 for loop in scope.loops):
            return None
        loop_vars = {loop.var: loop for loop in scope.loops}
        at, seen = [], set()
        for element in node.slice:
            if not isinstance(element.slice, cst.Index):
                return None
            index = _affine(element.slice.value, scope, loop_vars)
            if index is None:
                return None
            moving = [v for v in index if v in loop_vars]
            if moving and (
                index != {moving[0]: 1} or moving[0] in seen or not _nonnegative(loop_vars[moving[0]].start)
            ):
                return None  # `start:stop` is the slice read where start is not negative
            seen.update(moving)
            at.append(index)
        return self.fn.params.index(name), tuple(at)

    def statement(self, stmt: Stmt, scope: _Scope) -> None:
        if isinstance(stmt, Assign):
            for node in (stmt.target, stmt.value):
                self.accesses(node, stmt, scope)
            modulo = None if stmt.writes_element or stmt.accumulate else self.modulo_loop(unparen(stmt.value), scope)
            if stmt in self.rings:  # ip = i + 1, then 0 where it reaches n: in i's range where read
                self.record(stmt.var, {self.rings[stmt]: 1}, scope)
            elif modulo is not None:  # j = (i + 1) % n in a loop over range(n): in i's range
                self.record(stmt.var, {modulo.var: 1}, scope)
            elif self.ring_read(stmt.value, scope) is not None:  # j = ip: in i's range too
                self.record(stmt.var, {self.ring_read(stmt.value, scope): 1}, scope)
            elif not stmt.writes_element:
                value = None if stmt.accumulate else _affine(stmt.value, self.view(scope), self.variables(scope))
                self.record(stmt.var, value, scope)
        elif isinstance(stmt, For):
            for node in (stmt.start, stmt.stop, stmt.step):
                self.accesses(node, stmt, scope)
            inner = self.inner(stmt, scope)
            loop = inner.loops[-1] if inner.loops and inner.loops[-1].var == stmt.var else None
            self.record(stmt.var, None if loop is None else {loop.var: 1}, inner)
            if loop is not None:
                self.walked[id(stmt)] = loop
            self.open.append(stmt)
            self.block(stmt.body, inner)
            self.open.pop()
        elif isinstance(stmt, Permute):
            for name in stmt.targets:
                self.record(name, None, scope)
                if name in self.swapped:
                    self.swapped_here.add(self.swapped[name])
        elif isinstance(stmt, If):
            self.accesses(stmt.test, stmt, scope)
            for branch in (stmt.body, stmt.orelse):
                self.block(branch, scope.nested(conditional=True))
        elif isinstance(stmt, While):
            inner = scope.nested(conditional=True)
            self.accesses(stmt.test, stmt, inner)
            self.open.append(stmt)
            self.block(stmt.body, inner)
            self.open.pop()

    def ring_read(self, value: cst.BaseExpression, scope: _Scope) -> str | None:
        """The variable of the enclosing loop whose ring index `value` reads, or None."""
        node = unparen(value)
        if not isinstance(node, cst.Name):
            return None
        around = [loop for loop in self.open if node.value in self.ring_names.get(id(loop), ())]
        return around[-1].var if around and around[-1].var in {loop.var for loop in scope.loops} else None

    def inner(self, loop: For, scope: _Scope) -> _Scope:
        variables = self.variables(scope)
        start, stop = (_affine(e, self.view(scope), variables) for e in (loop.start, loop.stop))
        step_form = _affine(loop.step, self.view(scope))
        step = None if step_form is None else constant(step_form)
        conditional = scope.conditional or has_break(loop)
        if loop.var in assigned_names(loop.body) or start is None or stop is None:
            return scope.nested(conditional=True)  # its index range is not static
        if not step:  # not a constant, or 0
            return scope.nested(conditional=True)
        found = _Loop(loop.var, start, stop, step, loop.range_text())
        return scope.nested((*scope.loops, found), conditional)

    def accesses(self, node: cst.CSTNode, stmt: Stmt, scope: _Scope) -> None:
        for sub, maybe in _subscripts(node):
            if maybe and not scope.conditional:  # `a and x[i]`, `x[i] if c else 0.0`: may not run
                self.access(sub, stmt, _Scope(scope.ints, scope.shapes, scope.loops, True, scope.data))
            else:
                self.access(sub, stmt, scope)

    def access(self, sub: cst.Subscript, stmt: Stmt, scope: _Scope) -> None:
        raw, scope = scope, self.view(scope)
        array = unparen(sub.value)
        if isinstance(array, cst.Attribute) and array.attr.value == "shape":
            return  # a size: its index is a literal numba checks when it compiles
        indexed = [(axis, e.slice.value) for axis, e in enumerate(sub.slice) if isinstance(e.slice, cst.Index)]
        if not indexed:
            return  # slices only: NumPy and numba clip them
        name = array.value if isinstance(array, cst.Name) else None
        if name in self.swapped and name not in scope.shapes:
            self.swapped_access(sub, stmt, raw, name, indexed)
            return
        shape = scope.shapes.get(name) if name is not None else None
        for axis, index in indexed:
            fact = None if shape is None or axis >= len(shape) else self.fact(name, axis, shape[axis], index, scope)
            if fact is None:
                self.uncover(sub, stmt)
            elif fact.get("always"):
                continue
            elif scope.conditional or fact.pop("relaxed", False):
                self.pending.append(_Pending(fact, sub, stmt))  # not checkable at the call: `settle`
            else:
                self.check(fact, sub, stmt)

    def check(self, fact: dict, sub: cst.Subscript, stmt: Stmt) -> None:
        """Keep `fact`, an exact one, to be checked before each call."""
        fact["where"] = self.where(sub, stmt)
        fact["access"] = code(sub)
        self.out.facts.append(fact)

    def swapped_access(
        self, sub: cst.Subscript, stmt: Stmt, scope: _Scope, name: str, indexed: list[tuple[int, cst.BaseExpression]]
    ) -> None:
        """An element of `name`, which swaps with arrays of other shapes (`v = v0.copy()`, `vn =
        np.empty((n, m))`, `v, vn = vn, v` in a time loop): it may hold the array first bound to any
        name of its swaps, so the index must be in range for each of their shapes (all static here,
        else it is not covered). The fact for `name`'s own first array is exact, checked at the call,
        where the walk has passed no swap of the group yet and the index does not move with a loop
        that also holds a swap: in the first iteration of every enclosing loop the access reads that
        array, at every value of its index. Past a loop holding every swap (static range), that
        fact is exact too where a checked fact implies it once that loop ran (`settle`): if the loop
        did not run, no swap did and the access reads `name`'s own array. Every other fact is
        relaxed; it may assume those loops ran, since an array reaches another name only by a swap."""
        group = self.swapped[name]
        own, view = scope.shapes.get(name), self.view(scope)
        shapes = [scope.shapes.get(g) for g in sorted(group - {name})]
        if own is None or any(shape is None for shape in shapes):
            self.uncover(sub, stmt)
            return
        chains = self.swap_loops[group]
        holding = [loop for loop in chains[0] if all(loop in chain for chain in chains[1:])]
        ran = [lp for lp in holding if id(lp) in self.walked and _static(self.walked[id(lp)].span())]
        assumed = [_dump(self.walked[id(lp)].span()) for lp in ran]
        moving = {lp.var for lp in self.open if isinstance(lp, For) and any(lp in chain for chain in chains)}
        first = group not in self.swapped_here
        past = not first and any(lp not in self.open for lp in ran)
        candidates: list[tuple[tuple[Affine, ...], bool]] = [(own, True)]
        candidates += [(shape, False) for shape in shapes if shape is not None and shape != own]
        for axis, index in indexed:
            for shape, is_own in candidates:
                fact = self.fact(name, axis, shape[axis], index, view) if axis < len(shape) else None
                if fact is None:
                    self.uncover(sub, stmt)
                    return
                if fact.get("always"):
                    continue
                relaxed = fact.pop("relaxed", False)
                exact = is_own and not scope.conditional and not relaxed
                if exact and first and not moving & {lp[0] for lp in fact.get("loops", [])}:
                    self.check(fact, sub, stmt)
                else:
                    self.pending.append(_Pending(fact, sub, stmt, assumed, promote=exact and past))

    def fact(self, name: str, axis: int, dim: Affine, index: cst.BaseExpression, scope: _Scope) -> dict | None:
        bare = unparen(index)
        ring = self.modulo_loop(bare, scope)
        if ring is not None:  # `x[(i + 1) % n]` in a loop over range(n): a value in 0 .. n - 1
            return self.relaxed({ring.var: 1}, dim, scope)
        if isinstance(bare, cst.Name) and bare.value in scope.data and bare.value not in scope.ints:
            return self.data_fact(name, axis, dim, scope.data[bare.value], scope)
        read = self.data_read(bare, scope) if isinstance(bare, cst.Subscript) else None
        if read is not None:  # `x[idx[k]]`
            return self.data_fact(name, axis, dim, read, scope)
        variables = self.variables(scope)
        value = _affine(index, scope, variables)
        if value is None:
            return None
        loop_vars = {loop.var: loop for loop in scope.loops}
        if any(not loop.static for loop in scope.loops) or any(v in variables and v not in loop_vars for v in value):
            return self.relaxed(value, dim, scope)
        loops = [loop_vars[v] for v in value if v in loop_vars]
        fixed = {a: c for a, c in value.items() if a not in loop_vars}
        high, low = dict(fixed), dict(fixed)  # the index at its largest and smallest, as a bound
        for loop in loops:
            coef = value[loop.var]
            high = affine_plus(high, affine_scale(loop.highest() if coef > 0 else loop.lowest(), coef))
            low = affine_plus(low, affine_scale(loop.lowest() if coef > 0 else loop.highest(), coef))
        upper_holds, lower_holds = _holds(dim, high, low)
        array_param = self.fn.params.index(name) if name in self.fn.params else None
        exact = all(abs(loop.step) == 1 for loop in loops)  # then the bounds above are the index's extremes
        return {
            "guards": [_dump(lp.span()) for lp in scope.loops],  # every enclosing loop runs, not only the index's
            "need": _dump(affine_plus(high, {ONE: 1})) if exact else None,  # dim >= need: in range above
            "floor": _dump(affine_scale(low, -1)) if exact else None,  # dim >= floor: in range below
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

    def modulo_loop(self, index: cst.BaseExpression, scope: _Scope) -> _Loop | None:
        """For an index `e % n` inside a loop over range(n) (from 0, upwards: it runs only where n
        > 0, so the index, by Python's rule for a positive divisor, is one of 0 .. n - 1, as the
        loop's variable), that loop; else None. Its fact is relaxed: `e` may not reach every value."""
        if not (isinstance(index, cst.BinaryOperation) and isinstance(index.operator, cst.Modulo)):
            return None
        size = _affine(index.right, self.view(scope))
        if size is None or not _static(size):
            return None
        for loop in scope.loops:
            if loop.step > 0 and constant(loop.start) == 0 and not affine_minus(loop.stop, size):
                return loop
        return None

    def data_fact(self, name: str, axis: int, dim: Affine, read: tuple[int, tuple[Affine, ...]], scope: _Scope) -> dict:
        """An index read from an int argument (`cams[c, 0]` after `c = obs[i, 0]`): every value of
        the slice the loops read (`obs[0:obs.shape[0], 0]`) must index the axis; exact, since each
        iteration of those loops reads its element and then indexes (checked at the call)."""
        param, at = read
        loops = [loop for loop in scope.loops if any(loop.var in a for a in at)]
        array_param = self.fn.params.index(name) if name in self.fn.params else None
        return {
            "guards": [_dump(lp.span()) for lp in scope.loops],
            "need": None,
            "floor": None,
            "data": param,
            "at": [_dump(a) for a in at],
            "array": self.fn.user_params[array_param] if array_param is not None else name,
            "param": array_param,
            "axis": axis,
            "dim": _dump(dim),
            "index": [],
            "loops": [[lp.var, _dump(lp.start), _dump(lp.stop), lp.step, lp.text] for lp in loops],
            "upper": True,
            "lower": True,
            "always": False,
        }

    def relaxed(self, value: Affine, dim: Affine, scope: _Scope) -> dict | None:
        """The fact of an index in a triangular loop or at a ranged int: its bounds over the hull
        of the values reached, so it may ask more than the code indexes: never checked at the call
        (`relaxed`), kept where it always holds or a checked fact implies it (`settle`)."""
        high, low = self.extreme(value, scope.loops, True), self.extreme(value, scope.loops, False)
        if high is None or low is None:
            return None
        guards = [self.extreme(loop.span(), scope.loops[:k], True) for k, loop in enumerate(scope.loops)]
        upper_holds, lower_holds = _holds(dim, high, low)
        return {
            "relaxed": True,
            "guards": [_dump(g) for g in guards if g is not None],  # each at least the loop's trip count
            "need": _dump(affine_plus(high, {ONE: 1})),
            "floor": _dump(affine_scale(low, -1)),
            "dim": _dump(dim),
            "upper": not upper_holds,
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


@dataclass
class _Pending:
    """An access's fact not checked at the call: covered by a checked one (`_Walker.settle`), with
    guards it may add (`assumed`: spans of loops that ran whenever the fact matters)."""

    fact: dict
    sub: cst.Subscript
    stmt: Stmt
    assumed: list = field(default_factory=list)
    promote: bool = False

    def widened(self) -> dict:
        return {**self.fact, "guards": [*self.fact["guards"], *self.assumed]}


def _swap_loops(body: tuple[Stmt, ...], swapped: dict[str, frozenset[str]]) -> dict[frozenset[str], list[tuple]]:
    """Each group of swapped names -> for each of its swaps, the loops around it, outermost first."""
    found: dict[frozenset[str], list[tuple]] = {}

    def walk(block: tuple[Stmt, ...], around: tuple) -> None:
        for stmt in block:
            if isinstance(stmt, Permute):
                groups = {swapped[t] for t in stmt.targets if t in swapped}
                for group in groups:
                    found.setdefault(group, []).append(around)
            inner = (*around, stmt) if isinstance(stmt, (For, While)) else around
            for nested in blocks(stmt):
                walk(nested, inner)

    walk(body, ())
    return found


def _subscripts(node: cst.CSTNode) -> list[tuple[cst.Subscript, bool]]:
    """Every subscript in `node`, outer before inner, each with whether it may not be evaluated: the
    right operand of `and`/`or`, the branches of `a if c else b` and the comparators after the first
    of a chained comparison run only on some values. A walk
    over the dataclass fields: libcst's visitors rebuild each node they pass, which made this the
    pass's whole cost."""
    found: list[tuple[cst.Subscript, bool]] = []
    stack: list[tuple[Any, bool]] = [(node, False)]
    while stack:
        item, maybe = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend((x, maybe) for x in reversed(item))
        elif isinstance(item, cst.CSTNode):
            if isinstance(item, cst.Subscript):
                found.append((item, maybe))
            if isinstance(item, cst.BooleanOperation):
                stack.extend([(item.right, True), (item.left, maybe)])
            elif isinstance(item, cst.IfExp):
                stack.extend([(item.orelse, True), (item.body, True), (item.test, maybe)])
            elif isinstance(item, cst.Comparison) and len(item.comparisons) > 1:  # `a < x[i] < b`
                later = [(c.comparator, True) for c in item.comparisons[1:]]
                stack.extend([*reversed(later), (item.comparisons[0].comparator, maybe), (item.left, maybe)])
            else:
                stack.extend((getattr(item, f.name), maybe) for f in reversed(fields(item)) if f.name not in _LAYOUT)
    return found


_LAYOUT = frozenset(
    ("lpar", "rpar", "whitespace_before", "whitespace_after", "whitespace_after_star", "comma", "equal", "dot")
)


def _affine(node: cst.BaseExpression, scope: _Scope, loop_vars: dict | None = None) -> Affine | None:
    """`node` as an affine expression of static atoms (and of loop variables, given), or None."""

    def leaf(node: cst.BaseExpression) -> Affine | None:
        if isinstance(node, cst.Name):
            if loop_vars is not None and node.value in loop_vars:
                return {node.value: 1}
            value = scope.ints.get(node.value)  # a local bound in a loop may be in its variable
            return value if value is None or loop_vars is not None or _static(value) else None
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.FloorDivide):
            left, right = _affine(node.left, scope, loop_vars), _affine(node.right, scope, loop_vars)
            if left is None or right is None:
                return None
            divisor, dividend = constant(right), constant(left)
            if divisor is None or divisor <= 0 or not _static(left):
                return None
            if dividend is not None:
                return affine_plus({}, {ONE: dividend // divisor})
            return {f"q:{divisor}:{json.dumps(_dump(left))}": 1}  # an atom, computed at the call
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

    return affine_form(node, leaf)


def _shape_of(node: cst.BaseExpression, scope: _Scope) -> tuple[Affine, ...] | None:
    node = unparen(node)
    return scope.shapes.get(node.value) if isinstance(node, cst.Name) else None


def _made_shape(value: cst.BaseExpression, scope: _Scope, ndim: int) -> tuple[Affine, ...] | None:
    """The static shape of an array made by `np.zeros(shape)`, `np.zeros_like(x)`, `x.copy()` ..."""
    value = unparen(value)
    if isinstance(value, cst.Name):
        return None  # another name for a buffer: its own shape facts apply
    made = new_array_shape(value)
    if made is None:
        return None
    source, first = made
    if source == "a":
        return _shape_of(first, scope)
    first = unparen(first)
    if isinstance(first, cst.Attribute) and first.attr.value == "shape":
        return _shape_of(first.value, scope)
    items = [e.value for e in first.elements] if isinstance(first, cst.Tuple) else [first]
    dims = [_affine(e, scope) for e in items]
    if len(dims) != ndim or any(d is None for d in dims):
        return None
    return tuple(dims)  # type: ignore[arg-type]


def _nonnegative(a: Affine) -> bool:
    """Sizes (and their quotients) and a nonnegative constant, with nonnegative coefficients: never
    below zero."""
    return a.get(ONE, 0) >= 0 and all(c >= 0 and _sized(atom) for atom, c in a.items() if atom != ONE)


def _sized(atom: Hashable) -> bool:
    """An atom never below zero: a size, or a floor quotient of one never below zero."""
    if isinstance(atom, str) and atom.startswith("q:"):
        return _nonnegative(_load(json.loads(atom.split(":", 2)[2])))
    return isinstance(atom, str) and atom.startswith("s:")


def _static(a: Affine) -> bool:
    """In static atoms only (no loop variable, no ranged int): known at the call."""
    return all(atom == ONE or isinstance(atom, str) and ":" in atom for atom in a)


def _lesser(a: Affine, b: Affine, larger: bool = False) -> Affine | None:
    """The smaller (or `larger`) of two static bounds for every call, or None where that depends
    on the arguments."""
    gap = affine_minus(a, b)
    if (value := constant(gap)) is not None:
        below = value <= 0
    elif _nonnegative(gap):
        below = False
    elif _nonnegative(affine_scale(gap, -1)):
        below = True
    else:
        return None
    return a if below != larger else b


def _implies(checked: dict, fact: dict) -> bool:
    """Does the checked fact `checked` cover `fact`'s access? The same size, bounds at least as
    far on each side `fact` needs, and guards among `fact`'s (so whenever the access runs, every
    guard of `checked` is positive: the call checked it and it held)."""
    if checked["dim"] != fact["dim"] or any(guard not in fact["guards"] for guard in checked["guards"]):
        return False
    if "data" in fact or "data" in checked:  # the same slice of the same argument
        same = ("data", "at", "loops")
        return all(checked.get(key) == fact.get(key) for key in same)
    if checked.get("need") is None or fact.get("need") is None:
        return False
    for side, used in (("need", "upper"), ("floor", "lower")):
        gap = constant(affine_minus(_load(checked[side]), _load(fact[side])))
        if fact[used] and (gap is None or gap < 0):
            return False
    return True


def _holds(dim: Affine, high: Affine, low: Affine) -> tuple[bool, bool]:
    """Is an index between `low` and `high` in range of the size `dim` for every call, above (dim -
    high >= 1) and below (dim + low >= 0: negative indices count from the end)?"""
    upper, lower = constant(affine_minus(dim, high)), constant(affine_plus(dim, low))
    return upper is not None and upper >= 1, lower is not None and lower >= 0 or _nonnegative(low)


def _dump(a: Affine) -> list[list]:
    """The JSON of a form: [atom, coefficient] pairs, sorted, the constant's atom written "1"."""
    return sorted(["1" if atom == ONE else atom, coef] for atom, coef in a.items())


def _load(pairs: list[list]) -> Affine:
    """A form from its JSON (`_dump`)."""
    return affine_plus({}, {ONE if atom == "1" else atom: coef for atom, coef in pairs})
