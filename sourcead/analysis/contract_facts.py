"""The facts of the shape contract: what one element access asks of the argument shapes.

`Facts.fact` turns an access `x[e]` along one axis into a fact (a JSON-ready dict): the size it
needs, the loops whose runs it assumes (`guards`), and which side needs a check at the call (none
where it holds for every call: `always`). An index in a triangular loop or at a ranged int, or `e %
n` in a loop over range(n), gives a *relaxed* fact (`relaxed`: it may ask more than the code
indexes); an index read from an int argument gives a *data* fact over the slice read
(`data_fact`). `implies` decides whether a checked fact covers another; `Pending` holds a fact
that waits for one (`contract_walk.Walker.settle`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import libcst as cst

from ..ir.core import Assign, CoreFunction, Permute, Stmt, walk_statements
from ..ir.exprs import unparen
from .affine import ONE, Affine, affine_minus, affine_plus, affine_scale, constant
from .contract_terms import Loop, Scope, affine_of, dump, holds, load, nonnegative, static
from .kinds import Kinds


class Facts:
    """The facts of one function's accesses, given each name's count of whole assignments
    (`assigned`), each int local's range (`ranged`) and the arrays that swap (`swapped`)."""

    def __init__(self, fn: CoreFunction, kinds: Kinds, assigned: Counter, ranged: dict[str, tuple[Affine, Affine]]):
        self.fn, self.kinds, self.assigned, self.ranged = fn, kinds, assigned, ranged
        self.swapped = swapped_groups(fn, kinds)
        self.written = {st.var for st in walk_statements(fn.body) if isinstance(st, Assign) and st.writes_element}

    def variables(self, scope: Scope) -> dict[str, Loop | tuple[Affine, Affine]]:
        """What an index may be affine in besides static atoms: the enclosing loops' variables,
        and int locals with a range (where no binding of the block gives their value)."""
        found: dict[str, Loop | tuple[Affine, Affine]] = {n: r for n, r in self.ranged.items() if n not in scope.ints}
        found.update((loop.var, loop) for loop in scope.loops)
        return found

    def extreme(self, value: Affine, loops: tuple[Loop, ...], upward: bool) -> Affine | None:
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
        return out if static(out) else None

    def view(self, scope: Scope) -> Scope:
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
        return Scope(scope.ints, kept, scope.loops, scope.conditional, scope.data, scope.exprs)

    def data_read(self, value: cst.BaseExpression, scope: Scope) -> tuple[int, tuple[Affine, ...]] | None:
        """`obs[i, 0]`: an element of an int array argument the function never writes or rebinds,
        at indices that are static or the variable of an enclosing loop (each at most once), all of
        whose loops are static with step 1: the values such a local takes are exactly those of a
        slice of the argument, which the call can check (`data` facts)."""
        node = unparen(value)
        if not isinstance(node, cst.Subscript) or not isinstance(node.value, cst.Name):
            return None
        name = node.value.value
        if name not in self.fn.params or self.assigned[name] or name in self.written or name in self.swapped:
            return None  # (after a swap, the name may hold another array)
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
            index = affine_of(element.slice.value, scope, loop_vars)
            if index is None:
                return None
            moving = [v for v in index if v in loop_vars]
            if moving and (index != {moving[0]: 1} or moving[0] in seen or not nonnegative(loop_vars[moving[0]].start)):
                return None  # `start:stop` is the slice read where start is not negative
            seen.update(moving)
            at.append(index)
        return self.fn.params.index(name), tuple(at)

    def fact(self, name: str, axis: int, dim: Affine, index: cst.BaseExpression, scope: Scope) -> dict | None:
        bare = unparen(index)
        ring = self.modulo_loop(bare, scope)
        if ring is not None:  # `x[(i + 1) % n]` in a loop over range(n): a value in 0 .. n - 1
            return self.relaxed({ring.var: 1}, dim, scope)
        divisor = self.constant_modulo(bare, scope)
        if divisor is not None:  # `w[k % 8]`: a value in 0 .. 7, whatever k is
            return self.within({ONE: divisor - 1}, {}, dim, scope)
        if isinstance(bare, cst.Name) and bare.value in scope.data and bare.value not in scope.ints:
            return self.data_fact(name, axis, dim, scope.data[bare.value], scope)
        read = self.data_read(bare, scope) if isinstance(bare, cst.Subscript) else None
        if read is not None:  # `x[idx[k]]`
            return self.data_fact(name, axis, dim, read, scope)
        variables = self.variables(scope)
        value = affine_of(index, scope, variables)
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
        upper_holds, lower_holds = holds(dim, high, low)
        array_param = self.fn.params.index(name) if name in self.fn.params else None
        exact = all(abs(loop.step) == 1 for loop in loops)  # then the bounds above are the index's extremes
        return {
            "guards": [dump(lp.span()) for lp in scope.loops],  # every enclosing loop runs, not only the index's
            "need": dump(affine_plus(high, {ONE: 1})) if exact else None,  # dim >= need: in range above
            "floor": dump(affine_scale(low, -1)) if exact else None,  # dim >= floor: in range below
            "array": self.fn.user_params[array_param] if array_param is not None else name,
            "param": array_param,
            "axis": axis,
            "dim": dump(dim),
            "index": dump(value),
            "loops": [[lp.var, dump(lp.start), dump(lp.stop), lp.step, lp.text] for lp in loops],
            "upper": not upper_holds,  # which side needs a check at the call
            "lower": not lower_holds,
            "always": upper_holds and lower_holds,
        }

    def modulo_loop(self, index: cst.BaseExpression, scope: Scope) -> Loop | None:
        """For an index `e % n` inside a loop over range(n) (from 0, upwards: it runs only where n
        > 0, so the index, by Python's rule for a positive divisor, is one of 0 .. n - 1, as the
        loop's variable), that loop; else None. Its fact is relaxed: `e` may not reach every value."""
        if not (isinstance(index, cst.BinaryOperation) and isinstance(index.operator, cst.Modulo)):
            return None
        size = affine_of(index.right, self.view(scope))
        if size is None or not static(size):
            return None
        for loop in scope.loops:
            if loop.step > 0 and constant(loop.start) == 0 and not affine_minus(loop.stop, size):
                return loop
        return None

    def constant_modulo(self, index: cst.BaseExpression, scope: Scope) -> int | None:
        """The constant c > 0 of an index `e % c` (any int `e`: by Python's rule for a positive
        divisor, which numba follows, the index is one of 0 .. c - 1), else None."""
        if not (isinstance(index, cst.BinaryOperation) and isinstance(index.operator, cst.Modulo)):
            return None
        size = affine_of(index.right, self.view(scope))
        c = None if size is None else constant(size)
        return c if c is not None and c > 0 else None

    def within(self, high: Affine, low: Affine, dim: Affine, scope: Scope) -> dict:
        """The fact of an index known only to lie in low .. high (static bounds): relaxed, as the
        index may not reach them; a condition that suffices where it holds (`Contract.sufficient`)."""
        guards = [self.extreme(loop.span(), scope.loops[:k], True) for k, loop in enumerate(scope.loops)]
        upper_holds, lower_holds = holds(dim, high, low)
        return {
            "relaxed": True,
            "guards": [dump(g) for g in guards if g is not None],
            "need": dump(affine_plus(high, {ONE: 1})),
            "floor": dump(affine_scale(low, -1)),
            "dim": dump(dim),
            "upper": not upper_holds,
            "lower": not lower_holds,
            "always": upper_holds and lower_holds,
        }

    def data_fact(self, name: str, axis: int, dim: Affine, read: tuple[int, tuple[Affine, ...]], scope: Scope) -> dict:
        """An index read from an int argument (`cams[c, 0]` after `c = obs[i, 0]`): every value of
        the slice the loops read (`obs[0:obs.shape[0], 0]`) must index the axis; exact, since each
        iteration of those loops reads its element and then indexes (checked at the call)."""
        param, at = read
        loops = [loop for loop in scope.loops if any(loop.var in a for a in at)]
        array_param = self.fn.params.index(name) if name in self.fn.params else None
        return {
            "guards": [dump(lp.span()) for lp in scope.loops],
            "need": None,
            "floor": None,
            "data": param,
            "at": [dump(a) for a in at],
            "array": self.fn.user_params[array_param] if array_param is not None else name,
            "param": array_param,
            "axis": axis,
            "dim": dump(dim),
            "index": [],
            "loops": [[lp.var, dump(lp.start), dump(lp.stop), lp.step, lp.text] for lp in loops],
            "upper": True,
            "lower": True,
            "always": False,
        }

    def relaxed(self, value: Affine, dim: Affine, scope: Scope) -> dict | None:
        """The fact of an index in a triangular loop or at a ranged int: its bounds over the hull
        of the values reached, so it may ask more than the code indexes: never checked at the call
        (`relaxed`), kept where it always holds or a checked fact implies it (`settle`)."""
        high, low = self.extreme(value, scope.loops, True), self.extreme(value, scope.loops, False)
        if high is None or low is None:
            return None
        guards = [self.extreme(loop.span(), scope.loops[:k], True) for k, loop in enumerate(scope.loops)]
        upper_holds, lower_holds = holds(dim, high, low)
        return {
            "relaxed": True,
            "guards": [dump(g) for g in guards if g is not None],  # each at least the loop's trip count
            "need": dump(affine_plus(high, {ONE: 1})),
            "floor": dump(affine_scale(low, -1)),
            "dim": dump(dim),
            "upper": not upper_holds,
            "lower": not lower_holds,
            "always": upper_holds and lower_holds,
        }


@dataclass
class Pending:
    """An access's fact not checked at the call: covered by a checked one (`Walker.settle`), with
    guards it may add (`assumed`: spans of loops that ran whenever the fact matters)."""

    fact: dict
    sub: cst.Subscript
    stmt: Stmt
    assumed: list = field(default_factory=list)
    promote: bool = False

    def widened(self) -> dict:
        return {**self.fact, "guards": [*self.fact["guards"], *self.assumed]}


def swapped_groups(fn: CoreFunction, kinds: Kinds) -> dict[str, frozenset[str]]:
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


def implies(checked: dict, fact: dict) -> bool:
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
        gap = constant(affine_minus(load(checked[side]), load(fact[side])))
        if fact[used] and (gap is None or gap < 0):
            return False
    return True
