"""Which `prange` loops race in the user's own code: they run as `range` loops (the pass `races`).

numba runs a `prange` loop's iterations in parallel as written, so a loop whose iterations may
write the same element, or read what another iteration writes, gives a different value on every
call (`y[idx[i]] += x[i] ** 2` with repeated indices). sourcead cannot tell a permutation from an
index array with repeats, so such a loop runs serially in every derivative (and the compiled
primal), with a `RaceWarning` positioned at the write; the generated code says why. A loop runs in
parallel when (the conditions of `parallel.py`'s parallel adjoint, relaxed to what keeps the
forward sweep race-free):

- every shared array it writes has an axis the loop variable owns: every write of the array
  indexes that axis with one and the same expression `i`, `i + c`, `c + i`, `i - c`, `c - i` or
  `k * i` (c unchanged by the body, k a nonzero number), and every read of the array in the body indexes
  it there with that expression too (its `.shape` is no read). An array the body assigns whole
  before any use (`row = np.empty(d)`) is the iteration's own scratch;
- every variable the body assigns is assigned before it is read in every iteration (the
  iteration's own), or only accumulated, `s += e`, and not otherwise read in the body (numba's
  reduction); `p = p * x[i]` carries `p` from one iteration to the next;
- no variable of the iteration's own is read after the loop (which iteration's value?).

A `prange` loop inside a parallel one runs serially in numba anyway; in one that runs serially
here it is checked in its turn.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import libcst as cst

from ..analysis.definite import possibly_undefined
from ..analysis.reads import values_read
from ..errors import Location, RaceWarning
from ..ir.core import (
    Assign,
    CoreFunction,
    For,
    If,
    Permute,
    Stmt,
    While,
    assigned_names,
    mentioned_outside,
    walk_statements,
)
from ..ir.exprs import code, is_number, names_in, number_value, subscript_indices, walk

_SHOWN: dict = {}  # as a module's `__warningregistry__`: each place once (hvp analyses the function twice)


def serialize_races(fn: CoreFunction, locate) -> CoreFunction:
    """`fn` with every racing `prange` loop made a `range` loop (`For.serial` says why), warning
    once for each; `locate(node)` gives the user's position of a statement's origin, or None."""
    returned = set().union(*(names_in(v) for v in fn.ret.values)) | set(fn.mutated)
    body = _block(fn.body, (), returned, lambda loop: mentioned_outside(fn.body, loop), locate)
    return fn if body == fn.body else replace(fn, body=body)


def _block(body: tuple[Stmt, ...], after: tuple[Stmt, ...], returned: set[str], outside, locate) -> tuple[Stmt, ...]:
    """`body` with its racing prange loops serial; `after` runs after it (the rest of the
    enclosing blocks, and an enclosing loop's body again); `outside(loop)`: the names the
    function mentions outside the loop's body."""
    out = []
    for k, s in enumerate(body):
        rest = (*body[k + 1 :], *after)
        if isinstance(s, For) and s.parallel:
            race = loop_race(s, rest, returned, outside(s))
            if race is not None:
                stmt, why = race
                _warn(why, locate(stmt.origin) or locate(s.origin))
                inner = _block(s.body, (*s.body, *rest), returned, outside, locate)
                s = replace(s, parallel=False, serial=why, body=inner)
        elif isinstance(s, (For, While)):
            s = replace(s, body=_block(s.body, (*s.body, *rest), returned, outside, locate))
        elif isinstance(s, If):
            then = _block(s.body, rest, returned, outside, locate)
            s = replace(s, body=then, orelse=_block(s.orelse, rest, returned, outside, locate))
        out.append(s)
    return body if all(a is b for a, b in zip(out, body, strict=True)) else tuple(out)


def loop_race(loop: For, after: tuple[Stmt, ...], returned: set[str], outside: set[str]) -> tuple[Stmt, str] | None:
    """The statement of `loop` that may race and why, or None when its iterations are independent.
    `after` runs after the loop, `returned` is read at the end, `outside` is what the function
    mentions outside the loop's body."""
    statements = list(walk_statements(loop.body))
    assigns = [s for s in statements if isinstance(s, Assign)]
    own = {s.var for s in assigns if not s.writes_element and s.accumulate is None}
    own |= {s.var for s in statements if isinstance(s, For)}
    own |= {t for s in statements if isinstance(s, Permute) for t in s.targets}
    # a name the body may read before it assigns it, and that lives on outside the loop (the body's
    # own names an inlined helper's early return leaves "possibly unassigned" behind a flag are not)
    carried = possibly_undefined(loop.body, {loop.var}) & own & outside
    for s in assigns:
        if s.var in carried and not s.writes_element:
            return s, f"`{s.var}` is read before it is assigned in an iteration, so one iteration reads another's"
    escaped = own & possibly_undefined(after, (), returned) - {loop.var}
    for s in assigns:
        if s.var in escaped:
            return s, f"`{s.var}` is assigned in every iteration and read after the loop (which iteration's?)"
    accumulated = {s.var for s in assigns if not s.writes_element and s.accumulate is not None} - own
    read = set().union(*(values_read(s) for s in statements))
    for s in assigns:
        if s.var in accumulated & read:
            return s, f"`{s.var}` is accumulated and also read in the loop body"
    invariant = _invariant(loop)
    for array in dict.fromkeys(s.var for s in assigns if s.writes_element and s.var not in own):
        writes = [s for s in assigns if s.writes_element and s.var == array]
        axis = _owned_axis(writes, loop.var, invariant)
        if axis is None:
            target = getattr(loop.origin, "target", None)
            shown = target.value if isinstance(target, cst.Name) else loop.var
            return writes[0], (
                f"`{array}` is written at an index other than the loop variable `{shown}`: "
                "two iterations may write one element"
            )
        index = code(subscript_indices(writes[0].target)[axis])  # type: ignore[arg-type]
        for t in statements:
            if not _reads_only_at(t, array, axis, index):
                return t, f"`{array}` is written at `{array}[{index}]` and read at another element in the loop body"
    return None


def _warn(why: str, where: Location | None) -> None:
    """A `RaceWarning` shown at the user's line (the pipeline's own frames say nothing to the user)."""
    message = (
        f"this prange loop may race: {why}. prange does not make that safe (numba runs the "
        "iterations in parallel as written: a different result on each call), so sourcead runs it "
        "serially. Write `range` to say so; to keep it parallel, let each iteration write only its own elements "
        "(at the loop variable) and read no other iteration's."
    )
    if where is None:
        warnings.warn(message, RaceWarning, stacklevel=3)
    else:
        warnings.warn_explicit(message, RaceWarning, where.filename, where.line, registry=_SHOWN)


def _invariant(loop: For):
    changing = assigned_names(loop.body) | {loop.var}
    return lambda e: not names_in(e) & changing


def _owned_axis(writes: list[Assign], var: str, invariant) -> int | None:
    """An axis every write indexes with one expression injective in `var`, or None."""
    shapes = [subscript_indices(s.target) for s in writes]  # type: ignore[arg-type]
    for axis in range(min(len(indices) for indices in shapes)):
        texts = {code(indices[axis]) if isinstance(indices[axis], cst.BaseExpression) else "" for indices in shapes}
        if len(texts) == 1 and _injective(shapes[0][axis], var, invariant):
            return axis
    return None


def _injective(e, var: str, invariant) -> bool:
    """Does `e` take a different value for each value of `var` (the rest held fixed)?"""
    if isinstance(e, cst.Name):
        return e.value == var
    if not isinstance(e, cst.BinaryOperation):
        return False
    left, right = e.left, e.right
    if isinstance(e.operator, cst.Add):
        return (_injective(left, var, invariant) and invariant(right)) or (
            invariant(left) and _injective(right, var, invariant)
        )
    if isinstance(e.operator, cst.Subtract):
        return (_injective(left, var, invariant) and invariant(right)) or (
            invariant(left) and _injective(right, var, invariant)
        )
    if isinstance(e.operator, cst.Multiply):
        scale, other = (left, right) if is_number(left) else (right, left)
        return is_number(scale) and number_value(scale) != 0 and _injective(other, var, invariant)
    return False


def _reads_only_at(stmt: Stmt, array: str, axis: int, index: str) -> bool:
    """Does `stmt` read `array` only at elements whose index at `axis` is `index` (or its shape)?"""
    if isinstance(stmt, Assign):
        roots = [stmt.value]
        if isinstance(stmt.target, cst.Subscript):
            roots += subscript_indices(stmt.target)
    elif isinstance(stmt, (If, While)):
        roots = [stmt.test]
    elif isinstance(stmt, For):
        roots = [stmt.start, stmt.stop, stmt.step]
    elif isinstance(stmt, Permute):
        return array not in stmt.sources
    else:
        return True
    for root in roots:
        if array not in names_in(root):
            continue
        mentions = sum(1 for n in walk(root) if isinstance(n, cst.Name) and n.value == array)
        fine = 0
        for n in walk(root):
            if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value == array:
                fine += 1
            elif isinstance(n, cst.Subscript) and isinstance(n.value, cst.Name) and n.value.value == array:
                indices = subscript_indices(n)
                if axis < len(indices) and isinstance(indices[axis], cst.BaseExpression):
                    fine += code(indices[axis]) == index
        if fine < mentions:
            return False
    return True
