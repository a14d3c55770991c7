"""Arrays that each step of a time loop writes before it reads them: no part of its checkpoint state.

A checkpointed loop's snapshot holds the state a step needs from the steps before it. A scratch
array that every step fills before reading it (an RK4 step's stages `k1 .. k4` and `yt`) carries
nothing from one step to the next: its value at a step's entry is never read, so a replayed step
computes the same values without it, and the snapshot holds only the real state (RK4's `y`: a
sixth of the bytes, and six times as many snapshots in a memory budget).

The proof is conservative. The array `a` is one-dimensional, bound once in the function, at its
top level, by an assignment that does not read it (`np.empty(n)`, `np.zeros_like(x)`, `x.copy()`),
and no other statement before the loop mentions it: no adjoint that runs after the loop's reads the
values `a` held before it (after the loop's reverse sweep `a` holds whatever the last replay left).
The loop's test or bounds do not read it. Then the top-level statements of the step, in order:
a statement that reads `a` anywhere (an element, the whole array, an index, an accumulation
`a[i] += ...`, a swap) must come after the writes before it cover `[0, size)`, or after none
(a step that never reads `a` needs nothing of it). Writes that cover are `a[e] = ...` at the step's
top level and `a[i + e] = ...` at the top level of a `for i in range(lo, hi)` loop with step 1 and
no `break` (covering `[lo + e, hi + e)`), `e` affine in fixed names (`fixed_names`: parameters and
names with one value) and sizes, a fixed name replaced by its value (`n = x.shape[0]`). Intervals
chain: `[p, q)` and `[q, r)` together hold `[p, r)` whatever the order of p, q and r (an empty
range covers nothing, and needs nothing), so the writes cover the array when they chain from 0 to
its size.
"""

from __future__ import annotations

import libcst as cst

from .core import Assign, Break, Continue, Exit, For, If, Permute, Stmt, While, has_break, walk_statements
from .elements import Affine, affine_minus, affine_plus, affine_scale, fixed_names, size_of
from .exprs import names_in, subscript_indices, unparen
from .rules import new_array_shape


class Sizes:
    """Affine forms of index expressions over fixed names and array sizes in one function."""

    def __init__(self, body: tuple[Stmt, ...], params: tuple[str, ...]):
        self.body = body
        self.fixed = fixed_names(body, params)
        bound: dict[str, list[Assign]] = {}
        for s in walk_statements(body):
            if isinstance(s, Assign) and not s.writes_element:
                bound.setdefault(s.var, []).append(s)
        self.bound = bound
        self.values = {n: ss[0].value for n, ss in bound.items() if len(ss) == 1 and n in self.fixed}

    def affine(self, node: cst.BaseExpression, loop_var: str | None = None, depth: int = 0) -> Affine | None:
        """`node` as an affine form of fixed names, sizes and `loop_var`, or None."""
        node = unparen(node)
        if isinstance(node, cst.Integer):
            return {1: int(node.evaluated_value)} if int(node.evaluated_value) else {}
        if isinstance(node, cst.Name):
            if node.value == loop_var:
                return {("var", node.value): 1}
            if node.value not in self.fixed:
                return None
            value = self.values.get(node.value)
            if value is not None and depth < 8:
                known = self.affine(value, None, depth + 1)
                if known is not None:
                    return known
            return {("sym", node.value): 1}
        size = size_of(node)
        if size is not None:
            return {("size", *size): 1} if size[0] in self.fixed else None
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            inner = self.affine(node.expression, loop_var, depth)
            return None if inner is None else affine_scale(inner, -1)
        if isinstance(node, cst.BinaryOperation):
            left, right = self.affine(node.left, loop_var, depth), self.affine(node.right, loop_var, depth)
            if left is None or right is None:
                return None
            if isinstance(node.operator, cst.Add):
                return affine_plus(left, right)
            if isinstance(node.operator, cst.Subtract):
                return affine_minus(left, right)
            if isinstance(node.operator, cst.Multiply) and (set(left) <= {1} or set(right) <= {1}):
                constant, other = (left, right) if set(left) <= {1} else (right, left)
                return affine_scale(other, constant.get(1, 0))
        return None

    def size(self, array: str, depth: int = 0) -> Affine | None:
        """The length of a one-dimensional array bound once, by a call that makes a new array
        (`Primitive.shaped_as`: `np.empty(n)`, `np.zeros_like(x)`, `np.copy(x)`), else None."""
        made = self.bound.get(array, [])
        if len(made) != 1 or array not in self.fixed:
            return None
        value = unparen(made[0].value)
        shaped = new_array_shape(value)
        if shaped is None or array in names_in(value):
            return None
        source, argument = shaped
        argument = unparen(argument)
        if source == "a":
            return self._length_of(argument, depth)
        if isinstance(argument, cst.Tuple):
            if len(argument.elements) != 1:
                return None
            argument = argument.elements[0].value
        return self.affine(argument)

    def _length_of(self, node: cst.BaseExpression, depth: int) -> Affine | None:
        """The length of a fixed array: its own size where it is made here, else its first axis."""
        if not isinstance(node, cst.Name) or node.value not in self.fixed:
            return None
        made = self.size(node.value, depth + 1) if depth < 8 else None
        return made or {("size", node.value, 0): 1}


def written_before_read(sizes: Sizes, loop: For | While, array: str) -> bool:
    """Does each step of `loop` (a top-level loop of the function) write every element of `array`
    (one-dimensional: the caller knows its kind) it reads before reading it, with nothing before the
    loop reading it?"""
    size = sizes.size(array)
    if size is None or not _made_before(sizes.body, loop, array):
        return False
    heads = [loop.test] if isinstance(loop, While) else [loop.start, loop.stop, loop.step]
    if any(array in names_in(h) for h in heads):
        return False
    covered: list[tuple[Affine, Affine]] = []
    for s in loop.body:
        if _covers(covered, size):
            return True
        if _reads(s, array):
            return False
        interval = _written(sizes, s, array)
        if interval is not None:
            covered.append(interval)
    return True  # never read before the step covers it (or never read at all)


def _made_before(body: tuple[Stmt, ...], loop: For | While, array: str) -> bool:
    """Is the binding of `array` the only statement before `loop` (at the top level) to mention it?"""
    bound = False
    for s in body:
        if s is loop:
            return bound
        for inner in walk_statements((s,)):
            if _reads(inner, array) or (isinstance(inner, Assign) and inner.var == array and inner.writes_element):
                return False
            bound = bound or (isinstance(inner, Assign) and inner.var == array)
    return False


def _reads(s: Stmt, array: str) -> bool:
    """Does `s` (or a statement inside it) read `array`, or anything but write its elements?"""
    for inner in walk_statements((s,)):
        if isinstance(inner, Assign):
            found = names_in(inner.value)
            if inner.writes_element:
                found |= {n for e in subscript_indices(inner.target) for n in names_in(e)}  # type: ignore[arg-type]
                if inner.var == array and inner.accumulate is not None:
                    return True  # a[i] += v reads a[i]
            if array in found:
                return True
        elif isinstance(inner, For):
            if array in names_in(inner.start) | names_in(inner.stop) | names_in(inner.step):
                return True
        elif isinstance(inner, (If, While)):
            if array in names_in(inner.test):
                return True
        elif isinstance(inner, Permute):
            if array in (*inner.targets, *inner.sources):
                return True
        elif isinstance(inner, Exit):
            if any(array in names_in(v) for v in inner.values):
                return True
    return False


def _written(sizes: Sizes, s: Stmt, array: str) -> tuple[Affine, Affine] | None:
    """The interval of `array` that `s` writes whenever it runs: `a[e] = ...`, or a `for` loop over
    a range with step 1 and no break whose body writes `a[i + e] = ...` at its top level."""
    if isinstance(s, Assign):
        index = _element_index(s, array)
        at = None if index is None else sizes.affine(index)
        return None if at is None else (at, affine_plus(at, {1: 1}))
    if (
        not isinstance(s, For)
        or has_break(s)
        or any(isinstance(t, (Break, Continue, Exit)) for t in walk_statements(s.body))
    ):
        return None
    step = sizes.affine(s.step)
    lo, hi = sizes.affine(s.start), sizes.affine(s.stop)
    if step != {1: 1} or lo is None or hi is None:
        return None
    for t in s.body:
        index = _element_index(t, array) if isinstance(t, Assign) else None
        form = None if index is None else sizes.affine(index, s.var)
        if form is not None and form.get(("var", s.var)) == 1:
            offset = {k: v for k, v in form.items() if k != ("var", s.var)}
            return affine_plus(lo, offset), affine_plus(hi, offset)
    return None


def _element_index(s: Assign, array: str) -> cst.BaseExpression | None:
    """The index of `array[index] = value` (one integer index, not an accumulation), else None."""
    if not s.writes_element or s.var != array or s.accumulate is not None:
        return None
    indices = subscript_indices(s.target)  # type: ignore[arg-type]
    if len(indices) != 1 or isinstance(indices[0], cst.Slice):
        return None
    return indices[0]


def _covers(covered: list[tuple[Affine, Affine]], size: Affine) -> bool:
    """Do the intervals chain from 0 to `size` (each starting where the chain so far ends)?"""
    end: Affine = {}
    progress = True
    used: set[int] = set()
    while progress:
        if end == size:
            return True
        progress = False
        for k, (lo, hi) in enumerate(covered):
            if k not in used and lo == end:
                end, progress = hi, True
                used.add(k)
                break
    return end == size
