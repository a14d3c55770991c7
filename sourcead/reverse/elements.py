"""Element writes whose old value nothing in the reverse sweep reads (a refinement of TBR).

TBR (`tbr.py`) tracks an array as a whole: once an adjoint reads any element of `U`, every write
into `U` records the value it overwrites. In an LU factorisation the adjoint of step k reads row
k and column k of U, and step k's eliminations write only rows and columns after k: no element
they overwrite is read by an adjoint that runs after their mirror point in the reverse sweep.

A write `S: A[e(w)] = ...` needs no record if, for every read `R: A[r(v)]` that the reverse sweep
makes (the adjoint lines of every statement, as they index A; the indices a restore reads; an
element read just after its statement, `held.py`) at an instance v that runs before the instance w
of S in the forward sweep (or is the same instance: S's own adjoint), some index differs:
e_d(w) - r_d(v) is provably positive or provably negative, or e_d(w) lies provably outside a slice
`lo:hi` that R reads (`e_d(w) >= hi` or `e_d(w) < lo`, the bound provably not negative: trisolv's
`x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]` reads only `x[:i]`); or a *cover* runs between them: a
write of the same element in the iteration of the loops S shares with it, before S and
unconditional there (`Cover`: a scratch vector reset per step, `qx[r] = ...`, then accumulated,
`qx[r] += ...`: the increments' old values are read by no adjoint, whatever read qx in earlier
steps read the values the reset overwrites). Indices must be affine in the loop variables and in
names that never change (parameters never assigned, names assigned once at the top level); each
loop variable ranges over its loop's bounds, affine in the outer ones.
"Runs before" is split by the first common loop where the instances differ: there the read's
variable is the write's minus delta (delta >= the step), the common loops outside are equal, and
the loops inside are free; or every common loop is equal and R is S or comes before it in the
body. A lower bound of an affine expression is found by replacing each variable, innermost first,
by its lower or upper bound (by the sign of its coefficient); the bound proves the claim if what
remains is a constant. Every index of both must also be provably non-negative (a negative index
wraps around). Anything else keeps its record: a non-affine index (`U[p, j]`, `x[idx[i]]`), an
array read whole by an adjoint, read or written in a parallel loop, renamed or swapped, or whose
elements a loop's bounds read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import libcst as cst

from ..analysis.affine import ONE, Affine, affine_form, affine_minus, affine_plus, affine_scale, constant, size_of
from ..ir.core import Assign, Break, For, If, Permute, Stmt, While, walk_statements
from ..ir.emit import Line
from ..ir.exprs import children, code, is_number, names_in, number_value, subscript_indices


@dataclass(frozen=True)
class _Access:
    stmt: Assign  # the statement whose adjoint reads (or which writes)
    indices: tuple[cst.BaseExpression, ...] | None  # None: the whole array (a read only)
    loops: tuple[For | While, ...]  # the enclosing loops, outermost first
    position: float  # textual order (a read just after a statement: its position + 0.5)
    path: tuple[Stmt, ...] = ()  # the compound statements around it, outermost first


def unneeded_element_records(
    body: tuple[Stmt, ...],
    sites: Iterable[Assign],
    lines: Mapping[Assign, list[Line]],
    params: tuple[str, ...],
    excluded: set[str],
    ndim: Callable[[str], int],
    after: Mapping[Assign, cst.BaseExpression] | None = None,
) -> set[Assign]:
    """The element writes among `sites` that need no record. `excluded`: arrays not analysed;
    `ndim`: an array's number of dimensions; `after`: elements read just after an assignment runs,
    before its record is restored (`held.py`: the value an adjoint takes from its element)."""
    context: dict[Stmt, tuple[tuple, int, tuple]] = {}
    _contexts(body, (), (), context)
    fixed = fixed_names(body, params)
    sites = set(sites)
    reads = _accesses(body, lines, context, excluded, sites, after or {})
    positions = {t: position for t, (_, position, _) in context.items()}
    writes = _writes(context, ndim)
    found = set()
    for s in sites:
        if s not in context or not s.writes_element or s.var in excluded:
            continue
        loops, position, path = context[s]
        indices = tuple(subscript_indices(s.target))  # type: ignore[arg-type]
        if len(indices) > ndim(s.var) or any(isinstance(e, cst.Slice) for e in indices):
            continue  # a slice: its elements are not one index apart (a row is: `h[t + 1]`)
        write = _Access(s, indices, loops, position, path)
        found_covers = covers(write, writes.get(s.var, []), fixed, positions)
        if all(_disjoint(write, read, fixed, found_covers, positions) for read in reads.get(s.var, [])):
            found.add(s)
    return found


def _contexts(body: tuple[Stmt, ...], loops: tuple, path: tuple, out: dict) -> None:
    for s in body:
        out[s] = (loops, len(out), path)
        if isinstance(s, (For, While)):
            _contexts(s.body, (*loops, s), (*path, s), out)
        elif isinstance(s, If):
            _contexts(s.body, loops, (*path, s), out)
            _contexts(s.orelse, loops, (*path, s), out)


def _writes(context: Mapping[Stmt, tuple], ndim: Callable[[str], int]) -> dict[str, list[_Access]]:
    """The writes of one element or row each, per array: the candidates to cover another (`Cover`)."""
    found: dict[str, list[_Access]] = {}
    for s, (loops, position, path) in context.items():
        if isinstance(s, Assign) and s.writes_element:
            indices = tuple(subscript_indices(s.target))  # type: ignore[arg-type]
            if len(indices) <= ndim(s.var) and not any(isinstance(e, cst.Slice) for e in indices):
                found.setdefault(s.var, []).append(_Access(s, indices, loops, position, path))
    return found


def fixed_names(body: tuple[Stmt, ...], params: tuple[str, ...]) -> set[str]:
    """Names with one value wherever they are read: parameters never assigned, names assigned once
    at the top level (that assignment runs once), and names assigned once anywhere to an integer
    expression of fixed names and sizes (normalize hoists `stop = U.shape[0]` into loops)."""
    assigned: dict[str, list[Assign]] = {}
    unfixed: set[str] = set()

    def visit(stmts: tuple[Stmt, ...]) -> None:
        for s in stmts:
            if isinstance(s, Assign) and not s.writes_element:
                assigned.setdefault(s.var, []).append(s)
                if s.accumulate is not None:
                    unfixed.add(s.var)
            elif isinstance(s, For):
                unfixed.add(s.var)  # a loop variable is not fixed outside its loop
                visit(s.body)
            elif isinstance(s, While):
                visit(s.body)
            elif isinstance(s, If):
                visit(s.body)
                visit(s.orelse)
            elif isinstance(s, Permute):
                unfixed.update(s.targets)

    visit(body)
    top_level = {s for s in body if isinstance(s, Assign)}
    fixed = {p for p in params if p not in assigned and p not in unfixed}
    # (a parameter assigned has two values: the one passed, then the one assigned)
    once = {n: ss[0] for n, ss in assigned.items() if len(ss) == 1 and n not in unfixed and n not in params}
    fixed |= {n for n, s in once.items() if s in top_level}
    # assigned the same expression everywhere (normalize hoists `stop = A.shape[0]` before each
    # loop that reads it): one value too, where that expression is fixed
    same = {
        n: ss[0]
        for n, ss in assigned.items()
        if n not in unfixed and n not in params and len({code(s.value) for s in ss}) == 1
    }
    changed = True
    while changed:  # an integer expression of fixed names is fixed, wherever it is assigned
        changed = False
        for n, s in same.items():
            if n not in fixed and _fixed_value(s.value, fixed):
                fixed.add(n)
                changed = True
    return fixed


def _fixed_value(node: cst.BaseExpression, fixed: set[str]) -> bool:
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.Name):
        return node.value in fixed
    size = size_of(node)
    if size is not None:
        return size[0] in fixed
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _fixed_value(node.expression, fixed)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply)):
        return _fixed_value(node.left, fixed) and _fixed_value(node.right, fixed)
    return False


def _accesses(body, lines, context, excluded: set[str], sites: set[Assign], after):
    """The reads of the reverse sweep per array (elements, or the whole array): the adjoint lines,
    the indices a restore reads, the elements read just after an assignment (`after`); adds to
    `excluded` the arrays that loop bounds read, parallel loops mention, or two names share."""
    reads: dict[str, list[_Access]] = {}
    for s, (loops, position, path) in context.items():
        if isinstance(s, For):
            for bound in (s.start, s.stop, s.step):  # the reversed loop reads its bounds again
                in_bound: dict[str, list[_Access]] = {}
                _collect(bound, s, (loops, position, path), in_bound)  # type: ignore[arg-type]
                excluded |= set(in_bound)  # (a size, `a.shape[0]`, reads no element)
            if s.parallel:  # its adjoint replays the body: reads beyond the adjoint lines
                excluded |= _names_in_body(s.body)
        elif isinstance(s, Permute):
            excluded |= set(s.targets) | set(s.sources)
        elif isinstance(s, Assign):
            if not s.writes_element and isinstance(s.value, cst.Name):
                excluded |= {s.var, s.value.value}  # two names for one array
            for line in lines.get(s, []):
                _reads_in(line, s, (loops, position, path), reads)
            if s in sites and s.writes_element:  # its restore reads the indices
                for index in subscript_indices(s.target):  # type: ignore[arg-type]
                    _collect(index, s, (loops, position, path), reads)
            if s in after:  # read before its restore, in the state just after it
                _collect(after[s], s, (loops, position + 0.5, path), reads)
    return reads


def _names_in_body(body: tuple[Stmt, ...]) -> set[str]:
    found: set[str] = set()
    for s in body:
        if isinstance(s, Assign):
            found |= names_in(s.target) | names_in(s.value)
        elif isinstance(s, (For, While, If)):
            for part in ("start", "stop", "step", "test"):
                node = getattr(s, part, None)
                if node is not None:
                    found |= names_in(node)
            found |= _names_in_body(s.body)
            found |= _names_in_body(getattr(s, "orelse", ()))
        elif isinstance(s, Permute):
            found |= set(s.targets) | set(s.sources)
    return found


def _reads_in(line: Line, s: Assign, where: tuple, reads) -> None:
    roots: list[cst.BaseExpression] = [line.value]
    if isinstance(line.target, cst.Subscript):
        roots += list(subscript_indices(line.target))
    for root in roots:
        _collect(root, s, where, reads)


def _collect(node: cst.CSTNode, s: Assign, where: tuple, reads) -> None:
    """The reads in `node`, made by `s`'s adjoint at `where` (its loops, position and path)."""
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
        indices = tuple(subscript_indices(node))
        reads.setdefault(node.value.value, []).append(_Access(s, indices, *where))
        for index in indices:
            if isinstance(index, cst.Slice):
                for part in (index.lower, index.upper, index.step):
                    if part is not None:
                        _collect(part, s, where, reads)
            else:
                _collect(index, s, where, reads)
        return
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        if node.attr.value in ("shape", "size", "ndim"):
            return  # a size: the same for every value of the array
    if isinstance(node, cst.Name):
        reads.setdefault(node.value, []).append(_Access(s, None, *where))
        return
    for child in children(node):
        _collect(child, s, where, reads)


# --- the proof -----------------------------------------------------------------------------------


def _disjoint(
    write: _Access, read: _Access, fixed: set[str], found_covers: Sequence[Cover] = (), positions=None
) -> bool:
    """Does every instance of `read` that runs before (or is) an instance of `write` index another
    element, or run before a write of that element that comes before `write` (a cover)? (False
    where it cannot be shown.)"""
    common = 0
    while common < min(len(write.loops), len(read.loops)) and write.loops[common] is read.loops[common]:
        common += 1
    assert write.indices is not None  # a write is of one element (`unneeded_element_records`)
    cases = list(range(common))  # the first common loop where the read's iteration is earlier
    if read.position <= write.position:
        cases.append(common)  # every common loop in the same iteration, R first in the body (or R is S)
    for differ in cases:
        if any(cover.covers(read, differ, common, positions) for cover in found_covers):
            continue
        if read.indices is None:  # the whole array
            return False
        space = _Space(write, read, differ, common, fixed)
        w = [space.affine(e, "w") for e in write.indices]
        if any(x is None for x in w):
            return False
        if any(low is None or low < 0 for low in (space.minimum(x) for x in w)):  # type: ignore[arg-type]
            return False  # an index that may be negative wraps around
        # the write's leading indices (an element's all, a row's first): a read's further ones
        # pick within them, fewer take all of the rest
        padded = (*read.indices, *[cst.Slice(None, None)] * max(0, len(w) - len(read.indices)))[: len(w)]
        if not any(space.outside(x, e) for x, e in zip(w, padded, strict=True)):  # type: ignore[arg-type]
            return False
    return True


# --- covers: a write of the element between the read and the write --------------------------------


@dataclass(frozen=True)
class Cover:
    """A write P of the element a write W overwrites, in every iteration of the loops they share
    (`level` of them) before W: P's statement in that loop body (`top`, at `position`) comes
    before W's and runs unconditionally (only `for` loops between, whose ranges hold W's index).
    A read that runs before P's instance in W's iteration reads a value P overwrites, not W's
    old value: its element needs no proof of disjointness."""

    level: int
    position: int
    loops: tuple[For | While, ...]

    def covers(self, read: _Access, differ: int, common: int, positions: Mapping[Stmt, int]) -> bool:
        """Does every instance of `read` in case `differ` of `_disjoint` run before this cover's
        instance in the write's iteration (`common`: the loops the read shares with the write)?"""
        if differ < self.level or common < self.level:
            return True  # an earlier iteration of a loop around P, or before the loop that holds P
        chain = (*read.path, read.stmt)
        ancestor = chain[_after(chain, self.loops, self.level)]
        return positions[ancestor] < self.position


def _after(chain: tuple[Stmt, ...], loops: tuple[For | While, ...], level: int) -> int:
    """The index in `chain` (a statement's path and itself) of its statement in the body of
    `loops[level - 1]` (at the top level for level 0)."""
    if level == 0:
        return 0
    return next(k for k, t in enumerate(chain) if t is loops[level - 1]) + 1


def covers(write: _Access, candidates: list[_Access], fixed: set[str], positions: Mapping[Stmt, int]) -> list[Cover]:
    """The covers of `write` among the one-element writes of its array (`Cover`)."""
    found = []
    for p in candidates:
        if p.stmt is write.stmt or len(p.indices or ()) != len(write.indices or ()):
            continue  # (a row covers a row, an element an element)
        level = 0
        while level < min(len(p.loops), len(write.loops)) and p.loops[level] is write.loops[level]:
            level += 1
        chain, own_chain = (*p.path, p.stmt), (*write.path, write.stmt)
        top, own_top = chain[_after(chain, p.loops, level)], own_chain[_after(own_chain, write.loops, level)]
        between = chain[_after(chain, p.loops, level) : -1]
        if not all(isinstance(t, For) for t in between) or positions[top] >= positions[own_top]:
            continue  # a branch or a while between (it may not run), or not before the write
        if any(isinstance(t, Break) for t in walk_statements((top,))):
            continue  # a loop of its own may stop early
        if _reaches(write, p, level, fixed):
            found.append(Cover(level, positions[top], write.loops))
    return found


def _reaches(write: _Access, cover: _Access, level: int, fixed: set[str]) -> bool:
    """Does `cover`, in the iteration of the `level` loops it shares with `write`, write the
    element `write` writes? Each index of the cover is the write's (the same affine form), or one
    of its own loop variables plus an affine form of the shared ones, its loop (step 1 or -1)
    ranging over the write's index less that form, every own loop variable in one index."""
    assert write.indices is not None and cover.indices is not None
    space = _Space(write, cover, level, level, fixed)
    own = [loop for loop in cover.loops[level:] if isinstance(loop, For)]
    if any(_step(loop) not in (1, -1) for loop in own):
        return False
    w = [space.affine(e, "w") for e in write.indices]
    c = [space.affine(e, "r") for e in cover.indices]
    used: set = set()
    for wd, cd in zip(w, c, strict=True):
        if wd is None or cd is None:
            return False
        mine = [atom for atom in cd if _own(atom)]
        if not mine:
            if affine_minus(cd, wd):
                return False  # not the same index
            continue
        var = mine[0]
        bounds = space.bounds.get(var)
        if len(mine) != 1 or cd[var] != 1 or var in used or bounds is None or None in bounds:
            return False
        used.add(var)
        lower, upper = bounds
        if any(_own(atom) for atom in (*lower, *upper)):
            return False  # a bound of another loop of its own: not a rectangle
        value = affine_minus(wd, {k: v for k, v in cd.items() if k != var})  # what var must be
        lows = space.minimum(affine_minus(value, lower)), space.minimum(affine_minus(upper, value))
        if any(low is None or low < 0 for low in lows):
            return False
    return len(used) == len(own)


def _own(atom) -> bool:
    return isinstance(atom, tuple) and atom[0] == "r"


_DELTA = ("delta",)


class _Space:
    """The instances of a write (side "w") and of a read (side "r"): the loops outside level
    `differ` run the same iteration for both (variables ("c", loop)); at level `differ`, if it is
    a common `for` loop with a constant step, the read's variable is the write's minus
    sign(step) * delta, delta >= |step|; every other loop variable is free within its bounds."""

    def __init__(self, write: _Access, read: _Access, differ: int, common: int, fixed: set[str]):
        self.fixed = fixed
        self.names: dict[str, dict] = {"w": {}, "r": {}}  # side -> loop variable -> variable or affine
        self.bounds: dict = {}  # variable -> (lower, upper), each affine or None
        self.order: list = []  # the variables, innermost first
        shared = [loop for loop in write.loops[:differ] if isinstance(loop, For)]
        for loop in shared:
            self.names["w"][loop.var] = self.names["r"][loop.var] = ("c", id(loop))
        pivot = write.loops[differ] if differ < common else None
        if not (isinstance(pivot, For) and _step(pivot) is not None):
            pivot = None
        if pivot is not None:
            step = _step(pivot)
            sign = 1 if step > 0 else -1  # type: ignore[operator]
            w_var = ("w", id(pivot))
            self.names["w"][pivot.var] = w_var
            self.names["r"][pivot.var] = {w_var: 1, _DELTA: -sign}
        own = {
            side: [loop for loop in loops[differ:] if isinstance(loop, For) and loop is not pivot]
            for side, loops in (("w", write.loops), ("r", read.loops))
        }
        for side, loops in own.items():
            for loop in loops:
                self.names[side][loop.var] = (side, id(loop))
        for side, loops in own.items():
            for loop in loops:
                self.bounds[(side, id(loop))] = self._range(loop, side)
        for loop in shared:
            self.bounds[("c", id(loop))] = self._range(loop, "w")
        self.order = [(side, id(loop)) for side in ("r", "w") for loop in reversed(own[side])]
        if pivot is not None:
            w_range = self._range(pivot, "w")
            self.bounds[w_var] = w_range
            # the read's iteration is in range too: r = w - sign * delta stays within the loop's start
            start = self.affine(pivot.start, "w")
            upper = (
                None
                if start is None
                else affine_minus({w_var: 1}, start)
                if sign > 0
                else affine_minus(start, {w_var: 1})
            )
            self.bounds[_DELTA] = ({ONE: abs(step)}, upper)  # type: ignore[arg-type]
            self.order += [_DELTA, w_var]
        self.order += [("c", id(loop)) for loop in reversed(shared)]

    def _range(self, loop: For, side: str):
        step = _step(loop)
        start, stop = self.affine(loop.start, side), self.affine(loop.stop, side)
        if step is None or start is None or stop is None:
            return None
        if step > 0:
            return start, affine_plus(stop, {ONE: -1})
        return affine_plus(stop, {ONE: 1}), start

    def affine(self, node: cst.BaseExpression, side: str) -> Affine | None:
        """`node` as an affine form in this space's variables and fixed names, or None."""

        def leaf(node: cst.BaseExpression) -> Affine | None:
            if isinstance(node, cst.Name):
                var = self.names[side].get(node.value)
                if var is not None:
                    return dict(var) if isinstance(var, dict) else {var: 1}
                return {("sym", node.value): 1} if node.value in self.fixed else None
            size = size_of(node)
            if size is not None:  # the size of an array that is never rebound: fixed
                return {("size", *size): 1} if size[0] in self.fixed else None
            return None

        return affine_form(node, leaf)

    def minimum(self, expr: Affine) -> int | None:
        """A lower bound over the instances, where it is a constant: each variable, innermost
        first, replaced by its lower or upper bound by the sign of its coefficient."""
        expr = dict(expr)
        for var in self.order:
            c = expr.get(var, 0)
            if not c:
                continue
            bounds = self.bounds.get(var)
            bound = None if bounds is None else bounds[0] if c > 0 else bounds[1]
            if bound is None:
                return None
            del expr[var]
            expr = affine_plus(expr, affine_scale(bound, c))
        return constant(expr)  # None where it depends on a size or another fixed name

    def outside(self, written: Affine, read: cst.BaseExpression) -> bool:
        """Is the index `written` never the index `read`, or never within the slice `read` (a
        `lower:upper` slice, step 1, whose bound that proves it is never negative)?"""
        if not isinstance(read, cst.Slice):
            r = self.affine(read, "r")
            if r is None:
                return False
            low = self.minimum(r)
            return low is not None and low >= 0 and self.apart(affine_minus(written, r))
        if read.step is not None and not (is_number(read.step) and number_value(read.step) == 1):
            return False
        for bound, past in ((read.upper, True), (read.lower, False)):
            b = None if bound is None else self.affine(bound, "r")
            least = None if b is None else self.minimum(b)
            if b is None or least is None or least < 0:
                continue  # absent (0 or the size), or not known to be a position from the start
            beyond = affine_minus(written, b) if past else affine_minus(b, affine_plus(written, {ONE: 1}))
            low = self.minimum(beyond)
            if low is not None and low >= 0:
                return True
        return False

    def apart(self, difference: Affine) -> bool:
        """Is `difference` never zero: provably positive or provably negative?"""
        low = self.minimum(difference)
        if low is not None and low > 0:
            return True
        high = self.minimum(affine_scale(difference, -1))
        return high is not None and high > 0


def _step(loop: For) -> int | None:
    return int(number_value(loop.step)) if is_number(loop.step) and number_value(loop.step) != 0 else None
