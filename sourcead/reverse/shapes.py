"""Shapes from the adjoints: what `unbroadcast` sums back to, without reading a primal value (used by
`reverse/adjoint.py`).

`unbroadcast(g, like)` reads only the shape of `like`. Where `like` is an operand of the statement
(`B[:-2]`, or a sum of such, `B[:-2] + B[1:-1]`), the adjoint's lines compute it from the primal
arrays: the sum again, for its shape alone, and the reverse sweep reads the primal `B`, so the
to-be-recorded analysis keeps `B`'s old values (a linear stencil recorded its state every step).
An active array's adjoint has its shape, slice for slice, so the shape comes from there:

    t4 = B[:-2]                                      t6 = A_bar[1:-1]
    t5 = B[1:-1]                                     t7 = unbroadcast(0.33333 * t6,
    t6 = A_bar[1:-1]                        ->                    broadcast_like(B_bar[:-2], B_bar[1:-1]))
    t7 = unbroadcast(0.33333 * t6, t4 + t5)          B_bar[:-2] += unbroadcast(t7, B_bar[:-2])
    B_bar[:-2] += unbroadcast(t7, t4)                B_bar[1:-1] += unbroadcast(t7, B_bar[1:-1])
    B_bar[1:-1] += unbroadcast(t7, t5)

(`broadcast_like`: a float array of the operands' broadcast shape, `derive/shape_like.py`.) Only
for arrays bound once as a whole (an argument, or one assignment outside loops) and never swapped:
their adjoint is allocated with the shape they keep. The temporaries nothing reads any more are
dropped. The same facts give grad's adjoint zeros from the operands' shapes (`zeros_from_operands`:
`result_bar = zeros_like(matmul_like(matmul_like(A, x), A))`), so that the forward sweep does not
compute `result = (A @ x) @ A` for its shape alone.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import replace

import libcst as cst

from ..analysis.program import Program
from ..derive.shape_like import float_shaped, shape_like
from ..ir.core import Assign, For, Permute, While, walk_statements
from ..ir.emit import Line
from ..ir.exprs import code, dotted, names_in, unparen
from ..rules import new_array_shape

_ELEMENTWISE = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)
# stand-ins that read their operands' shapes only (only broadcast_like's are read from adjoints:
# `A_bar += outer(g, x)` is added in place only where g does not read A_bar, `adjoint.py`)
_SHAPE_HELPERS = ("broadcast_like", "matmul_like")
_DEPTH = 32  # bindings and operations followed for a stand-in


def steady_arrays(prog: Program) -> frozenset[str]:
    """The active arrays whose shape never changes: bound at most once as a whole, never swapped."""
    statements = list(walk_statements(prog.fn.body))
    swapped = {n for s in statements if isinstance(s, Permute) for n in (*s.targets, *s.sources)}
    in_loops = {t for s in statements if isinstance(s, (For, While)) for t in walk_statements(s.body)}
    bound: dict[str, int] = {}
    for s in statements:
        if isinstance(s, Assign) and not s.writes_element:
            bound[s.var] = bound.get(s.var, 0) + (2 if s in in_loops else 1)  # in a loop: bound again
    return frozenset(
        v
        for v in prog.kinds.of
        if prog.kinds.is_array(v)
        and prog.is_active(v)
        and v not in swapped
        and bound.get(v, 0) <= (0 if v in prog.fn.params else 1)
    )


def shapes_from_adjoints(
    prog: Program, steady: frozenset[str], lines: list[Line], kept: AbstractSet[str] = frozenset()
) -> list[Line]:
    """`lines` with each `unbroadcast(g, like)` reading its shape from adjoints where it can (see
    the module docstring), and the temporaries left unread dropped (but those in `kept`)."""
    bound = {line.target.value: line.value for line in lines if line.op == "=" and isinstance(line.target, cst.Name)}
    rewriter = _Shapes(prog, steady, bound)
    out = [_replace_value(line, line.value.visit(rewriter)) for line in lines]  # type: ignore[arg-type]
    if not rewriter.released:
        return lines
    return _drop_unread(out, rewriter.released, kept)


def _replace_value(line: Line, value: cst.BaseExpression) -> Line:
    return line if value is line.value else replace(line, value=value)


class _Shapes(cst.CSTTransformer):
    def __init__(self, prog: Program, steady: frozenset[str], bound: dict[str, cst.BaseExpression]):
        self.prog, self.steady, self.bound = prog, steady, bound
        self.released: set[str] = set()  # the names the replaced shapes read: temporaries perhaps unread now

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if dotted(updated.func) != "unbroadcast" or len(updated.args) != 2:
            return updated
        like = self.stand_in(updated.args[1].value, 0)
        if like is None:
            return updated
        self.released |= names_in(updated.args[1].value)
        return updated.with_changes(args=[updated.args[0], updated.args[1].with_changes(value=like)])

    def stand_in(self, e: cst.BaseExpression, depth: int) -> cst.BaseExpression | None:
        """An expression of `e`'s shape that reads no primal value, or None."""
        e = unparen(e)
        if depth > _DEPTH:
            return None
        if isinstance(e, cst.Name) and e.value in self.bound:
            return self.stand_in(self.bound[e.value], depth + 1)
        if isinstance(e, (cst.Name, cst.Subscript)):
            base = e if isinstance(e, cst.Name) else e.value
            if not isinstance(base, cst.Name) or base.value not in self.steady:
                return None
            if isinstance(e, cst.Subscript) and any(base.value in names_in(s) for s in e.slice):
                return None
            return self.prog.shadow(e, "_bar")
        if isinstance(e, cst.Call) and dotted(e.func) == "broadcast_like":  # broadcast_like(B[:-2], B[1:-1])
            args = [self.operand(arg.value, depth) for arg in e.args]
            if any(a is False for a in args):
                return None
            arrays = list({code(a): a for a in args if a is not None}.values())  # type: ignore[arg-type]
            if len(arrays) == 1:  # a float does not shape it, nor a repeated operand
                return arrays[0]  # type: ignore[return-value]
            return e.with_changes(
                args=[arg if a is None else arg.with_changes(value=a) for arg, a in zip(e.args, args, strict=True)]
            )
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, _ELEMENTWISE):
            parts = [self.operand(side, depth) for side in (e.left, e.right)]
            if any(p is False for p in parts):
                return None
            arrays = [p for p in parts if p is not None]
            if len(arrays) == 1:
                return arrays[0]  # type: ignore[return-value]
            if len(arrays) == 2 and code(arrays[0]) == code(arrays[1]):  # type: ignore[arg-type]
                return arrays[0]  # type: ignore[return-value]
            if len(arrays) == 2:
                return cst.parse_expression(f"broadcast_like({code(arrays[0])}, {code(arrays[1])})")  # type: ignore[arg-type]
        return None

    def operand(self, e: cst.BaseExpression, depth: int) -> cst.BaseExpression | bool | None:
        """An operand's stand-in; None for a float (it does not shape the result); False: unknown."""
        e = unparen(e)
        kind = self.is_array(e, depth)
        if kind is None:
            return False
        if not kind:
            return None
        found = self.stand_in(e, depth + 1)
        return False if found is None else found

    def is_array(self, e: cst.BaseExpression, depth: int) -> bool | None:
        """Is `e` an array (False: a float, `b[j]` of a vector, a literal), read through the
        temporaries' bindings; None where its type is not known here."""
        e = unparen(e)
        if isinstance(e, (cst.Float, cst.Integer)):
            return False
        if depth > _DEPTH:
            return None
        if isinstance(e, cst.Name) and e.value in self.bound:
            return self.is_array(self.bound[e.value], depth + 1)
        if isinstance(e, cst.UnaryOperation):
            return self.is_array(e.expression, depth + 1)
        if isinstance(e, cst.Call) and dotted(e.func) in _SHAPE_HELPERS:
            return True  # (a float stand-in, where every operand is one, is read the same way)
        if isinstance(e, cst.BinaryOperation):
            sides = [self.is_array(side, depth + 1) for side in (e.left, e.right)]
            return None if None in sides else any(sides)
        kinds = self.prog.kinds
        if any(name not in kinds.of for name in names_in(e)):
            return None
        return kinds.type_of(e).is_array


def zeros_from_operands(prog: Program) -> dict[str, cst.BaseExpression]:
    """The adjoint's zero of each active float array bound once, at the top of the function, by an
    operation with a shape stand-in (`result = (A @ x) @ A`: `zeros_like(matmul_like(matmul_like(A,
    x), A))`, `Primitive.shape_like`) on arrays whose shapes stay: where nothing else in the reverse
    sweep reads the array (nor restores it: `sweeps.py`), the forward sweep need not compute it for
    its shape alone. An array's shape stays through accumulations into it (`u += v`, in place)."""
    statements = list(walk_statements(prog.fn.body))
    swapped = {n for s in statements if isinstance(s, Permute) for n in (*s.targets, *s.sources)}
    bound: dict[str, int] = {}
    for s in statements:
        if isinstance(s, Assign) and not s.writes_element and s.accumulate is None:  # (`u += v`: in place)
            bound[s.var] = bound.get(s.var, 0) + 1
    top = {s.var: s.value for s in prog.fn.body if isinstance(s, Assign) and not s.writes_element and not s.accumulate}
    steady = {v for v in prog.fn.params if v not in bound} | {v for v in top if bound[v] == 1}
    steady -= swapped

    def stand_in(value: cst.BaseExpression, depth: int) -> cst.BaseExpression | None:
        value = unparen(value)
        if isinstance(value, cst.Name):  # `s = result0`: result0's
            if value.value not in steady:
                return None
            inner = stand_in(top[value.value], depth + 1) if value.value in top and depth < _DEPTH else None
            return inner or value
        made = new_array_shape(value)
        if made is not None and made[0] != "shape":  # np.copy(a), np.zeros_like(a): a's shape
            return stand_in(made[1], depth + 1) if depth < _DEPTH else None
        like = shape_like(value, lambda e: prog.kinds.type_of(e).is_array)
        if like is None or not names_in(like) <= steady:
            return None
        return like

    # an array written element by element stays in the forward sweep (`postpass/deadcode.py` keeps
    # element writes): its own shape is as cheap
    written = {s.var for s in statements if isinstance(s, Assign) and s.writes_element}
    zeros = {}
    for var in sorted(steady & set(top) - written):
        if prog.kinds.is_array(var) and prog.kinds[var].dtype == "float" and prog.is_active(var):
            like = float_shaped(stand_in(top[var], 0), prog.kinds.type_of)  # (zeros_like reads its dtype)
            if like is not None and (not isinstance(like, cst.Name) or like.value in prog.fn.params):
                zeros[var] = cst.parse_expression(f"zeros_like({code(like)})")
    return zeros


def _drop_unread(lines: list[Line], released: set[str], kept: AbstractSet[str]) -> list[Line]:
    """Without the bindings of the `released` temporaries (and of those their values read) that no
    later line reads (nor `kept`), to a fixed point."""
    candidates = set(released)
    while True:
        later: set[str] = set(kept)
        drop = set()
        for k in range(len(lines) - 1, -1, -1):
            line = lines[k]
            name = line.target.value if line.op == "=" and isinstance(line.target, cst.Name) else None
            if name in candidates and name not in later and _is_temporary(name, lines) and _pure(line.value):
                drop.add(k)
                candidates |= names_in(line.value)
                continue
            later |= line.reads()
        if not drop:
            return lines
        lines = [line for k, line in enumerate(lines) if k not in drop]


def _is_temporary(name: str, lines: list[Line]) -> bool:
    """A name the adjoint's lines bind once, as the linearization's temporaries (`t4`)."""
    return sum(1 for line in lines if isinstance(line.target, cst.Name) and line.target.value == name) == 1


def _pure(value: cst.BaseExpression) -> bool:
    """Reads and arithmetic only (a slice, a sum): dropping it changes nothing but its value."""
    for node in _walk(value):
        if isinstance(node, cst.Call):
            return False
    return True


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _walk(child)
