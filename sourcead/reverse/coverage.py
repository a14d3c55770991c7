"""Arrays that each step of a time loop writes before it reads them: no part of its checkpoint state.

A checkpointed loop's snapshot holds the state a step needs from the steps before it. A scratch
array that every step fills before reading it (an RK4 step's stages `k1 .. k4` and `yt`, the buffer
a stencil step writes before the swap `u, un = un, u`) carries nothing from one step to the next:
its value at a step's entry is never read, so a replayed step computes the same values without it,
and the snapshot holds only the real state (RK4's `y`: a sixth of the bytes; a stencil's `u`: half).

The proof is conservative. The array is made once in the function, at its top level, by a call
that makes a new array (`Primitive.shaped_as`: `np.empty(n)`, `np.zeros((n, m))`,
`np.zeros_like(x)`, `np.copy(x)`) not reading it, and no other statement before the loop mentions
it: no adjoint that runs after the loop's reads the values it held before (after the loop's reverse
sweep it holds whatever the last replay left). A name the loop swaps (`u, un = un, u`) names one of
its swap group's buffers at each step; it qualifies when every buffer of the group is made so, with
the same shape. The loop's test or bounds do not read it. Then the top-level statements of the step,
in order: a statement that reads it anywhere (an element, the whole array, an index, an
accumulation `a[i] += ...`, a swap) must come after the writes before it cover the array, or after
none (a step that never reads it needs nothing of it). A write covers a box, an interval per axis:
`a[e] = ...` at the step's top level covers `[e, e + 1)`; a nest of `for` loops over ranges with
step 1 and no exit, each at the top level of the one around it, whose innermost body writes
`a[i + e, j + f]` at its top level, covers `[lo_i + e, hi_i + e) x [lo_j + f, hi_j + f)`, each index
one loop variable plus an offset, or an offset alone. Offsets and bounds are affine in fixed names
(`fixed_names`: parameters and names with one value, a name replaced by its value:
`n = x.shape[0]`) and sizes. The boxes cover the array when those spanning every axis but the first
whole chain from 0 to its length along the first: `[p, q)` and `[q, r)` together hold `[p, r)`
whatever the order of p, q and r (an empty range covers nothing, and needs nothing).
"""

from __future__ import annotations

import libcst as cst

from ..analysis.affine import Affine, affine_form, affine_plus, size_of
from ..analysis.reads import reads_array
from ..ir.core import Assign, Break, Continue, Exit, For, Permute, Stmt, While, has_break, walk_statements
from ..ir.exprs import dotted, names_in, subscript_indices, unparen
from ..rules import new_array_shape, primitive
from .elements import fixed_names

Shape = tuple[Affine, ...]
Box = tuple[tuple[Affine, Affine], ...]  # an interval [lo, hi) per axis


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
        self.swapped: dict[str, set[str]] = {}  # name -> the names it exchanges buffers with, itself included
        for s in walk_statements(body):
            if isinstance(s, Permute):
                group = set(s.targets) | set(s.sources)
                for name in list(group):
                    group |= self.swapped.get(name, set())
                for name in group:
                    self.swapped[name] = group

    def affine(
        self, node: cst.BaseExpression, loop_vars: frozenset[str] = frozenset(), depth: int = 0
    ) -> Affine | None:
        """`node` as an affine form of fixed names, sizes and `loop_vars`, or None."""

        def leaf(node: cst.BaseExpression) -> Affine | None:
            if isinstance(node, cst.Name):
                if node.value in loop_vars:
                    return {("var", node.value): 1}
                if node.value not in self.fixed:
                    return None
                value = self.values.get(node.value)
                if value is not None and depth < 8:
                    known = self.affine(value, frozenset(), depth + 1)
                    if known is not None:
                        return known
                return {("sym", node.value): 1}
            size = size_of(node)
            if size is None:
                return None
            if size[0] in self.fixed:
                return self._made_size(*size, depth) or {("size", *size): 1}
            return self._swapped_size(*size, depth) if size[0] in self.swapped else None

        return affine_form(node, leaf)

    def _made_size(self, array: str, axis: int, depth: int) -> Affine | None:
        """`array.shape[axis]` for an array made here: the size it is made with (`k1.shape[0]` is
        `n` for `k1 = np.empty(n)`), so that both spellings compare equal."""
        if depth >= 8:
            return None
        for ndim in range(axis + 1, 4):
            shape = self._made(array, ndim, depth + 1)
            if shape is not None:
                return shape[axis]
        return None

    def _swapped_size(self, array: str, axis: int, depth: int) -> Affine | None:
        """`array.shape[axis]` for a name the function swaps: the size its group's buffers share."""
        if depth >= 8:
            return None
        for ndim in range(axis + 1, 4):
            shape = self.shape(array, ndim, depth + 1)
            if shape is not None:
                return shape[axis]
        return None

    def shape(self, array: str, ndim: int, depth: int = 0) -> Shape | None:
        """The shape of every buffer `array` may name: the one it is made with (bound once by a call
        that makes a new array), or, for a name the function swaps, the shape all the buffers of its
        swap group share. None where not known."""
        group = self.swapped.get(array, {array})
        shapes = []
        for name in sorted(group):
            if self._like_another(name, group):
                continue  # `un = np.empty_like(u)`: the shape of a buffer of the group
            shapes.append(self._made(name, ndim, depth) if name in self.fixed or name in self.swapped else None)
        if not shapes or shapes[0] is None or any(other != shapes[0] for other in shapes[1:]):
            return None
        return shapes[0]

    def _like_another(self, name: str, group: set[str]) -> bool:
        """Is `name` bound once, at the top level, to a new array shaped like another of `group`?"""
        made = self.bound.get(name, [])
        if len(made) != 1 or made[0] not in self.body:
            return False
        shaped = new_array_shape(unparen(made[0].value))
        if shaped is None or shaped[0] != "a":
            return False
        argument = unparen(shaped[1])
        return isinstance(argument, cst.Name) and argument.value in group and argument.value != name

    def _made(self, array: str, ndim: int, depth: int) -> Shape | None:
        """The shape `array`'s single binding makes it with (a call that makes a new array, not
        reading `array`), else None."""
        made = self.bound.get(array, [])
        if len(made) != 1 or made[0] not in self.body:
            return None  # bound more than once, or inside a block (it may not run)
        value = unparen(made[0].value)
        shaped = new_array_shape(value)
        if shaped is None or array in names_in(value):
            return None
        source, argument = shaped
        argument = unparen(argument)
        if source == "a":
            return self._shape_of(argument, ndim, depth)
        if isinstance(argument, cst.Attribute) and argument.attr.value == "shape":
            return self._shape_of(argument.value, ndim, depth)
        items = [e.value for e in argument.elements] if isinstance(argument, cst.Tuple) else [argument]
        dims = tuple(self.affine(item, frozenset(), depth + 1) for item in items)
        return None if len(dims) != ndim or any(d is None for d in dims) else dims  # type: ignore[return-value]

    def _shape_of(self, node: cst.BaseExpression, ndim: int, depth: int) -> Shape | None:
        """The shape of a fixed array: the one it is made with here, else its sizes; of a swapped
        name, the one its group's buffers share."""
        if isinstance(node, cst.Name) and node.value in self.swapped and depth < 8:
            return self.shape(node.value, ndim, depth + 1)
        if not isinstance(node, cst.Name) or node.value not in self.fixed:
            return None
        made = self._made(node.value, ndim, depth + 1) if depth < 8 else None
        return made if made is not None else tuple({("size", node.value, d): 1} for d in range(ndim))


def written_before_read(sizes: Sizes, loop: For | While, array: str, ndim: int) -> bool:
    """Does each step of `loop` (a top-level loop of the function) write every element of `array`
    (of `ndim` dimensions) it reads before reading it, with nothing before the loop reading it?"""
    shape = sizes.shape(array, ndim) if ndim >= 1 else None
    if shape is None or not _made_before(sizes.body, loop, array):
        return False
    heads = [loop.test] if isinstance(loop, While) else [loop.start, loop.stop, loop.step]
    if any(array in names_in(h) for h in heads):
        return False
    covered: list[Box] = []
    for s in loop.body:
        if _covers(covered, shape):
            return True
        if reads_array(s, array):
            return False
        box = _written(sizes, s, array, ndim, ())
        if box is not None:
            covered.append(box)
    return True  # never read before the step covers it (or never read at all)


def _made_before(body: tuple[Stmt, ...], loop: For | While, array: str) -> bool:
    """Is the binding of `array` the only statement before `loop` (at the top level) to mention it?"""
    bound = False
    for s in body:
        if s is loop:
            return bound
        for inner in walk_statements((s,)):
            if _shaped_like(inner, array):
                continue  # `a_dot = np.zeros_like(a)` reads its shape, not its values
            if reads_array(inner, array) or (isinstance(inner, Assign) and inner.var == array and inner.writes_element):
                return False
            bound = bound or (isinstance(inner, Assign) and inner.var == array)
    return False


def _shaped_like(s: Stmt, array: str) -> bool:
    """Is `s` the binding of another array made with `array`'s shape and none of its values
    (`np.zeros_like(a)`, `np.full_like(a, v)`: `Primitive.shaped_as`, not `copies`)?"""
    if not isinstance(s, Assign) or s.writes_element or s.var == array:
        return False
    value = unparen(s.value)
    shaped = new_array_shape(value)
    if shaped is None or shaped[0] != "a" or not isinstance(value, cst.Call):
        return False
    prim = primitive(dotted(value.func))
    argument = unparen(shaped[1])
    others = [a.value for a in value.args if unparen(a.value) is not argument]
    return (
        prim is not None
        and not prim.copies
        and isinstance(argument, cst.Name)
        and argument.value == array
        and not any(array in names_in(o) for o in others)
    )


def _written(sizes: Sizes, s: Stmt, array: str, ndim: int, loops: tuple[tuple[str, Affine, Affine], ...]) -> Box | None:
    """The box of `array` that `s` writes whenever it runs, inside the nest `loops` (variable, lo,
    hi): an element write at the top level of the nest's innermost body, or one in a nest of `for`
    loops over ranges with step 1 and no exit, each at the top level of the one around it."""
    if isinstance(s, Assign):
        indices = _element_indices(s, array)
        if indices is None or len(indices) != ndim:
            return None
        names = frozenset(var for var, _, _ in loops)
        box = []
        seen: set[str] = set()
        for index in indices:
            form = sizes.affine(index, names)
            if form is None:
                return None
            used = [var for var, _, _ in loops if ("var", var) in form]
            offset = {k: v for k, v in form.items() if not (isinstance(k, tuple) and k[0] == "var")}
            if not used:
                box.append((offset, affine_plus(offset, {1: 1})))
                continue
            var = used[0]
            if len(used) > 1 or form[("var", var)] != 1 or var in seen:
                return None
            seen.add(var)
            lo, hi = next((lo, hi) for v, lo, hi in loops if v == var)
            box.append((affine_plus(lo, offset), affine_plus(hi, offset)))
        return tuple(box)
    if (
        not isinstance(s, For)
        or len(loops) >= ndim
        or has_break(s)
        or any(isinstance(t, (Break, Continue, Exit)) for t in walk_statements(s.body))
    ):
        return None
    first, end = sizes.affine(s.start), sizes.affine(s.stop)
    if sizes.affine(s.step) != {1: 1} or first is None or end is None:
        return None
    for t in s.body:
        inner = _written(sizes, t, array, ndim, (*loops, (s.var, first, end)))
        if inner is not None:
            return inner
    return None


def _element_indices(s: Assign, array: str) -> list[cst.BaseExpression] | None:
    """The indices of `array[i, j] = value` (integer indices, not an accumulation), else None."""
    if not s.writes_element or s.var != array or s.accumulate is not None:
        return None
    indices = subscript_indices(s.target)  # type: ignore[arg-type]
    return None if any(isinstance(index, cst.Slice) for index in indices) else indices


def _covers(covered: list[Box], shape: Shape) -> bool:
    """Do the boxes that span every axis but the first whole chain from 0 to the first axis's length
    (each starting where the chain so far ends)?"""
    whole = [box[0] for box in covered if all(box[d] == ({}, shape[d]) for d in range(1, len(shape)))]
    end: Affine = {}
    used: set[int] = set()
    progress = True
    while progress:
        if end == shape[0]:
            return True
        progress = False
        for k, (lo, hi) in enumerate(whole):
            if k not in used and lo == end:
                end, progress = hi, True
                used.add(k)
                break
    return end == shape[0]
