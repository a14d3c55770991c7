"""The walk of the shape contract: every element access of the core form, in the scope it runs in.

`Walker` walks a function's statements, binding the names assigned once (static ints, arrays of
static shape), opening a `Loop` for each `for` whose range is static, and recording every value
assigned to an int local (its range, for a second walk: `ranges`). At each access it keeps the
fact (`contract_facts.Facts.fact`) to be checked at the call where the fact is exact, drops it
where it always holds, and holds it back (`Pending`) where the access may not run or the fact
is relaxed: `settle` keeps it where a checked fact implies it, else it is a *sufficient* fact:
tested at the call, which runs the variant without bounds checks where every such fact holds and
the bounds-checked one where one does not (`build/jit.py`). An access with no fact at all (an
index that is not affine) is *uncovered* and the contract incomplete. An array that swaps with
arrays of other shapes needs a fact for each (`swapped_access`).
"""

from __future__ import annotations

from collections import Counter
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
from ..ir.exprs import code, dotted, unparen, walk
from .affine import Affine, constant
from .contract_facts import Facts, Pending, implies
from .contract_probe import probe, take_probe
from .contract_terms import Loop, Scope, affine_of, dump, lesser, made_shape, row_shape, static
from .definite import possibly_undefined
from .kinds import Kinds


@dataclass
class Contract:
    facts: list[dict] = field(default_factory=list)
    complete: bool = True
    uncovered: list[str] = field(default_factory=list)
    # facts no call can be held to (an index that may not reach its bounds: `w[k % 8]`, a triangular
    # loop's, one under an `if`) and no checked fact implies: where a call meets them all, every
    # such index is in range and the variant runs without bounds checks (`build/jit.py`)
    sufficient: list[dict] = field(default_factory=list)


class Walker(Facts):
    """Walks the core form once with each int local's range (`ranged`, from a first walk that
    records every value assigned to one: `values`), adding a fact per element access to `out`;
    accesses whose facts cannot be checked at the call wait in `pending` for `settle`."""

    def __init__(
        self,
        fn: CoreFunction,
        kinds: Kinds,
        parsed: ParsedFunction,
        assigned: Counter,
        out: Contract,
        ranged: dict[str, tuple[Affine, Affine]],
    ):
        super().__init__(fn, kinds, assigned, ranged)
        self.parsed, self.out = parsed, out
        self.final_shapes: dict[str, tuple[Affine, ...]] = {}
        self.values: dict[str, list[tuple[Affine, Affine] | None]] = {}
        self.pending: list[Pending] = []
        self.swap_loops = _swap_loops(fn.body, self.swapped)
        self.swapped_here: set[frozenset[str]] = set()  # groups one of whose swaps the walk passed
        self.open: list[For | While] = []  # the loops around the statement walked
        self.walked: dict[int, Loop] = {}  # each `for` walked, by id, where its range is static
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
                low, high = lesser(low, value[0]), lesser(high, value[1], larger=True)
            if low is not None and high is not None:
                found[name] = (low, high)
        return found

    def record(self, name: str, value: Affine | None, scope: Scope, loops: tuple[Loop, ...] | None = None) -> None:
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
        its swaps (`Pending.promote`) is checked at the call where a checked fact implies it once
        that loop ran."""
        waiting = []
        for entry in self.pending:
            if entry.promote and any(implies(checked, entry.widened()) for checked in self.out.facts):
                entry.fact["where"] = self.where(entry.sub, entry.stmt)
                entry.fact["access"] = code(entry.sub)
                self.out.facts.append(entry.fact)
            else:
                waiting.append(entry)
        for entry in waiting:
            facts = (entry.fact,) if entry.promote else (entry.fact, entry.widened())
            if not any(implies(checked, fact) for checked in self.out.facts for fact in facts):
                where = {"where": self.where(entry.sub, entry.stmt), "access": code(entry.sub)}
                self.out.sufficient.append({**entry.fact, **where})  # its own guards: the stronger test

    def block(self, body: tuple[Stmt, ...], scope: Scope, top: bool = False) -> None:
        for stmt in body:
            self.statement(stmt, scope)
            if isinstance(stmt, Assign) and not stmt.writes_element and self.assigned[stmt.var] == 1:
                self.bind(stmt, scope)  # for the rest of this block (a nested block has copies)
        if top:
            self.final_shapes = dict(self.view(scope).shapes)

    def bind(self, stmt: Assign, scope: Scope) -> None:
        """A name assigned once in the function: a static int, or an array of static shape, from
        here to the end of its block (before, it is unbound; after a block it may not have run,
        it may be a placeholder)."""
        var, t = stmt.var, self.kinds[stmt.var]
        if stmt.accumulate is not None:
            return
        if t.is_scalar and t.dtype == "int":  # in the enclosing loops' variables (`wr = 2 * layer`)
            scope.exprs[var] = stmt.value  # for probes (`contract_probe.py`), whatever it is
            value = affine_of(stmt.value, self.view(scope), {loop.var: loop for loop in scope.loops})
            if value is not None:
                scope.ints[var] = value
            else:
                read = self.data_read(stmt.value, scope)
                if read is not None:
                    scope.data[var] = read
        elif t.is_array:
            if t.dtype == "int":  # indices a gather may read (`cols = indices[a:b]`: `take_probe`)
                scope.exprs[var] = stmt.value
            shape = made_shape(stmt.value, self.view(scope), t.ndim) or row_shape(stmt.value, self.view(scope), t.ndim)
            other = unparen(stmt.value)
            if shape is None and isinstance(other, cst.Name) and other.value not in self.swapped:
                # `y = z` (an inlined helper's result): the same buffer, whose shape never changes
                shape = self.view(scope).shapes.get(other.value)
            if shape is not None:
                scope.shapes[var] = shape

    def statement(self, stmt: Stmt, scope: Scope) -> None:
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
                value = None if stmt.accumulate else affine_of(stmt.value, self.view(scope), self.variables(scope))
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

    def ring_read(self, value: cst.BaseExpression, scope: Scope) -> str | None:
        """The variable of the enclosing loop whose ring index `value` reads, or None."""
        node = unparen(value)
        if not isinstance(node, cst.Name):
            return None
        around = [lp for lp in self.open if isinstance(lp, For) and node.value in self.ring_names.get(id(lp), ())]
        return around[-1].var if around and around[-1].var in {loop.var for loop in scope.loops} else None

    def inner(self, loop: For, scope: Scope) -> Scope:
        variables = self.variables(scope)
        start, stop = (affine_of(e, self.view(scope), variables) for e in (loop.start, loop.stop))
        step_form = affine_of(loop.step, self.view(scope))
        step = None if step_form is None else constant(step_form)
        conditional = scope.conditional or has_break(loop)
        if loop.var in assigned_names(loop.body) or start is None or stop is None:
            return scope.nested(conditional=True)  # its index range is not static
        if not step:  # not a constant, or 0
            return scope.nested(conditional=True)
        found = Loop(loop.var, start, stop, step, loop.range_text())
        return scope.nested((*scope.loops, found), conditional)

    def accesses(self, node: cst.CSTNode, stmt: Stmt, scope: Scope) -> None:
        for sub, maybe in _subscripts(node):
            if maybe and not scope.conditional:  # `a and x[i]`, `x[i] if c else 0.0`: may not run
                self.access(sub, stmt, Scope(scope.ints, scope.shapes, scope.loops, True, scope.data, scope.exprs))
            else:
                self.access(sub, stmt, scope)
        for call in walk(node):  # a gather `x[idx]` (transforms/gathers.py): indices that are data
            if isinstance(call, cst.Call) and dotted(call.func) == "np.take":
                self.gather(call, stmt, scope)

    def gather(self, call: cst.Call, stmt: Stmt, scope: Scope) -> None:
        """np.take(x, idx): a probe of idx's elements against x's size where idx is (a slice of) an
        int argument (`contract_probe.take_probe`); else uncovered."""
        array, indices = call.args[0].value, call.args[1].value
        shown = f"{code(array)}[{code(indices)}]"
        line = self.where(call, stmt)
        view = self.view(scope)
        name = array.value if isinstance(array, cst.Name) else None
        shape = view.shapes.get(name) if name is not None else None
        found = None if not shape or name in self.swapped else take_probe(self, indices, shape[0], view)
        if found is None or name is None or shape is None:
            self.out.complete = False
            self.out.uncovered.append(shown + (f" (line {line[0]})" if line else ""))
            return
        self.probed(found, name, 0, shape[0], line, shown)

    def access(self, sub: cst.Subscript, stmt: Stmt, scope: Scope) -> None:
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
            fact = (
                None
                if name is None or shape is None or axis >= len(shape)
                else self.fact(name, axis, shape[axis], index, scope)
            )
            if fact is None:
                dim = None if shape is None or axis >= len(shape) else shape[axis]
                self.unbounded(sub, stmt, name, axis, dim, index, scope)
            elif fact.get("always"):
                continue
            elif scope.conditional or fact.pop("relaxed", False):
                self.pending.append(Pending(fact, sub, stmt))  # not checkable at the call: `settle`
            else:
                self.check(fact, sub, stmt)

    def check(self, fact: dict, sub: cst.Subscript, stmt: Stmt) -> None:
        """Keep `fact`, an exact one, to be checked before each call."""
        fact["where"] = self.where(sub, stmt)
        fact["access"] = code(sub)
        self.out.facts.append(fact)

    def swapped_access(
        self, sub: cst.Subscript, stmt: Stmt, scope: Scope, name: str, indexed: list[tuple[int, cst.BaseExpression]]
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
        ran = [lp for lp in holding if id(lp) in self.walked and static(self.walked[id(lp)].span())]
        assumed = [dump(self.walked[id(lp)].span()) for lp in ran]
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
                    self.pending.append(Pending(fact, sub, stmt, assumed, promote=exact and past))

    def unbounded(
        self,
        sub: cst.Subscript,
        stmt: Stmt,
        name: str | None,
        axis: int,
        dim: Affine | None,
        index: cst.BaseExpression,
        scope: Scope,
    ) -> None:
        """An access whose index no fact bounds: a probe (`contract_probe.py`) where its values can be
        computed before the call, which tests them (a sufficient fact); else uncovered."""
        found = None if name is None or dim is None else probe(self, self.open, index, dim, scope)
        if found is None or name is None or dim is None:
            self.uncover(sub, stmt)
            return
        self.probed(found, name, axis, dim, self.where(sub, stmt), code(sub))

    def probed(self, found: dict, name: str, axis: int, dim: Affine, where: list[int] | None, access: str) -> None:
        """Keep a probe of an access along `axis` of `name`, `dim` long, as a sufficient fact."""
        array_param = self.fn.params.index(name) if name in self.fn.params else None
        self.out.sufficient.append(
            {
                "probe": found,
                "guards": [],
                "need": None,
                "floor": None,
                "array": self.fn.user_params[array_param] if array_param is not None else name,
                "param": array_param,
                "axis": axis,
                "dim": dump(dim),
                "index": [],
                "loops": [],
                "upper": True,
                "lower": True,
                "always": False,
                "where": where,
                "access": access,
            }
        )

    def uncover(self, sub: cst.Subscript, stmt: Stmt) -> None:
        self.out.complete = False
        line = self.where(sub, stmt)
        self.out.uncovered.append(f"{code(sub)}" + (f" (line {line[0]})" if line else ""))

    def where(self, node: cst.CSTNode, stmt: Stmt) -> list[int] | None:
        found = self.parsed.locate(node) or self.parsed.locate(stmt.origin)
        return [found.line, found.column] if found is not None else None


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
