"""Reverse mode's half of `linearize`: an adjoint pushed from an expression's root to its leaves.

`adjoint` sends a statement's seed through the tree of derivatives `linearize` built, and writes
each leaf's contribution; the strong zeros that keep a zero from meeting an infinite partial are
placed here: the seed's, a selection's condition, and those of a singular partial (below).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from ..ir.exprs import code, is_cheap, paren, transformed, unparen
from .linearize import Edge, Node, _unparen_args
from .singular import finite_number as _finite
from .singular import nonzero_partial as _nonzero

Accumulate = Callable[[cst.BaseExpression, cst.BaseExpression], None]
Bind = Callable[[cst.BaseExpression], cst.BaseExpression]
# may the leaf's value be zero because of a singular point, where it moves infinitely fast
# (`derive/singular.py`'s `moving_zeros`: `s = math.sqrt(v)` at v = 0)?
MovingLeaf = Callable[[cst.BaseExpression], bool]


def adjoint(
    root: Node,
    seed: cst.BaseExpression,
    accumulate: Accumulate,
    bind: Bind,
    array_seed: bool = False,
    singular: bool = False,
    suspect: bool = False,
    moving: MovingLeaf = lambda leaf: False,
) -> None:
    """Reverse mode: send `seed` from the root to every active leaf (`accumulate(leaf, g)`). A
    selection's condition wraps each contribution below it whole, as forward mode wraps the
    selected tangent: `(t9 * t14 if t12 <= sm else 0.0)`, never `t9 * (-t12 * t11 * (g if t12 <=
    sm else 0.0))`, which is nan where a partial below the operand not chosen is infinite.

    An exactly zero seed contributes exactly zero (Enzyme's "strong zero"): `d_bar * (1 - t0 *
    t0) * z` is nan at d_bar = 0 and z = inf, where the statement's value did not matter. A float
    seed is one more condition at the root, `seed != 0.0`; an array seed (`array_seed`, the
    adjoint of a whole-array statement) is guarded elementwise, `np.where(seed != 0.0, p * seed,
    0.0)`, which every elementwise partial below enters (`exprs.times`). A contribution that is
    the seed times constants only (`g`, `-g`, `2.0 * g`, a sum of it) needs no guard.

    Through a singular partial (`Partials.singular`: sqrt at 0, ...) two more, as forward mode's
    guard on a zero tangent, its dual: an adjoint exactly zero where it reaches that partial
    contributes zero (`c * math.sqrt(v)` at c = 0: v's adjoint is 0, not 0 * inf), and an adjoint
    that crossed one, or a `singular` seed (an adjoint that may be non-finite where its value is
    finite, `reverse/singular.py`), contributes zero through an exactly zero partial below
    (`math.sqrt(a * b)` at b = 0 is flat in a: `(b * t1 if b != 0.0 else 0.0)`, not inf * 0).

    Neither zero of an adjoint that reaches a singular partial is taken where that adjoint may be
    zero only because a partial on its way from the output reads a value that moves infinitely
    fast there (`moving`): `s = math.sqrt(v); r = s * s` at v = 0 gives s's adjoint 2 * s * g = 0,
    and 0 * inf at sqrt's partial stands for the finite 2 * s * (0.5 / s) * g, not for 0 (r = v:
    the strong zero gave 0 where the derivative is 1). Such an adjoint is suspect: the seed of a
    statement (`suspect`, from `reverse/singular.py`, across statements and loops) and, within
    it, any adjoint below an edge whose partial reads such a value (`_moves`). A suspect adjoint
    crosses a singular partial unguarded (nan at 0 * inf: honest), and a suspect seed of a
    statement with a singular partial loses the seed's guard. The seed's guard elsewhere stays:
    `d_bar * (1 - t0 * t0) * z` at z = inf is an infinite value, not a singular partial, and
    nothing moves infinitely fast there; the value 0 it gives is that of the statement's
    contribution as a function of d_bar, whichever way d_bar came to be 0."""
    inner = unparen(seed)
    negated = isinstance(inner, cst.UnaryOperation) and isinstance(inner.operator, cst.Minus)
    # `-=`: the seed is -g, zero where g is
    base = unparen(inner.expression) if negated and isinstance(inner, cst.UnaryOperation) else seed
    if not is_cheap(base):
        seed = base = bind(seed)
    test = f"{code(base)} != 0.0"
    if suspect and _singular_below(root):  # its zero may stand for a finite limit: no seed guard
        _Push(accumulate, bind, test, moving=moving).run(root, seed, (), singular, True)
        return
    if array_seed:
        zero_with_seed = [code(seed), code(base)]  # zero wherever the seed is: guards around them are no-ops
        unguarded_bind = lambda v: bind(_unguarded(v, test, zero_with_seed))  # noqa: E731
        into = lambda leaf, g: accumulate(leaf, _unguarded(g, test, zero_with_seed))  # noqa: E731
        _Push(into, unguarded_bind, test, zero_with_seed, moving=moving).run(root, _where(test, seed), (), singular)
        return
    _Push(accumulate, bind, test, None, [code(base)], moving).run(root, seed, (), singular)


@dataclass
class _Push:
    """One statement's push. `rewrap`: for an array seed, guarded as `np.where(seed != 0.0, ...,
    0.0)`, the values that are zero wherever the seed is (it, and the guarded adjoints bound on the
    way); `seed`: a float seed's own text, where a contribution that only scales it needs no guard."""

    accumulate: Accumulate
    bind: Bind
    test: str  # the seed's strong zero, `seed != 0.0`
    rewrap: list[str] | None = None
    seed: list[str] | None = None
    moving: MovingLeaf = lambda leaf: False

    def run(self, root: Node, g, masks: tuple[str, ...], tainted: bool, suspect: bool = False) -> None:
        """`tainted`: `g` may be non-finite where the values are finite (it crossed a singular
        partial); `suspect`: `g` may be zero only because a partial above read a value that moves
        infinitely fast (`adjoint`)."""
        if root.leaf is not None:
            if self.seed is not None and not _scales(g, self.seed):
                masks = (*masks, self.test)  # a float seed's strong zero: one more condition
            self.accumulate(root.leaf, _selected(g, masks, root.array_leaf))
            return
        if root.joint is not None:  # one call gives every operand's adjoint: bound once, read per operand
            whole = self.bind(root.joint.adjoint(g))
            for k, edge in zip(root.joint.index, root.edges, strict=True):
                part = cst.Subscript(whole, [cst.SubscriptElement(cst.Index(cst.Integer(str(k))))])
                self.run(edge.child, part, masks, tainted, suspect or _moves(root, edge, self.moving))
            return
        rewrap = self.rewrap
        selected = _where_parts(g) if rewrap else None
        if selected is not None and rewrap is not None and not root.elementwise and code(selected[1]) in rewrap:
            g, selected = selected[1], None  # not a product that could enter the guard: the seed as it is
        if len(root.edges) > 1 and not is_cheap(g) and not (selected is not None and is_cheap(selected[1])):
            g = self.bind(g)  # a guarded array adjoint is guarded again, for the partials below to enter
            if selected is not None and rewrap is not None:
                rewrap.append(code(g))
                g = _where(selected[0], g)
        for edge in root.edges:
            inner = (*masks, edge.mask) if edge.mask is not None else masks
            arrays = edge.result_axes > 0
            crossing = g
            guard = edge.strong is not None and not suspect  # zero where it reaches the infinite partial
            if guard and not self.is_seed(g):
                crossing = self.nonzero(g, arrays)
            p = edge.partial
            if tainted and p is not None and not _nonzero(p):  # zero through a zero partial
                p = p if is_cheap(p, 0) else self.bind(p)
                contribution = edge.reverse(_guarded(crossing, f"{code(p)} != 0.0", arrays), p=p)
            else:
                contribution = edge.reverse(crossing)
            below = suspect or _moves(root, edge, self.moving)
            self.run(edge.child, contribution, inner, tainted or edge.strong is not None, below)

    def is_seed(self, g: cst.BaseExpression) -> bool:
        """Is `g` zero exactly where the statement's seed is, which the seed's guard covers?"""
        if self.seed is not None:
            return _scales(g, self.seed)
        parts = _where_parts(g)
        return (
            parts is not None and parts[0] == self.test and self.rewrap is not None and _scales(parts[1], self.rewrap)
        )

    def nonzero(self, g: cst.BaseExpression, arrays: bool) -> cst.BaseExpression:
        """`g` guarded on itself, for the partial below to enter: `(g if g != 0.0 else 0.0)`."""
        g = g if is_cheap(g, 0) else self.bind(g)
        return _guarded(g, f"{code(g)} != 0.0", arrays)


def suspect_leaves(root: Node, moving: MovingLeaf) -> list[cst.BaseExpression]:
    """The leaves whose adjoint contributions are suspect whatever the seed (`adjoint`): below an
    edge whose partial reads a value that moves infinitely fast (`reverse/singular.py`'s dataflow)."""
    if root.leaf is not None:
        return []
    found = []
    for edge in root.edges:
        found += _leaves(edge.child) if _moves(root, edge, moving) else suspect_leaves(edge.child, moving)
    return found


def _leaves(root: Node) -> list[cst.BaseExpression]:
    return [root.leaf] if root.leaf is not None else [leaf for e in root.edges for leaf in _leaves(e.child)]


def _moves(node: Node, edge: Edge, moving: MovingLeaf) -> bool:
    """May `edge`'s partial be zero only because it reads a value that moves infinitely fast
    (`_zero_moves`) through a factor that may be zero (`Edge.zero_reads`): the `s` of `s * s`, not
    the `y` of `x / y` towards y (its partial -(x / y) / y is zero where x is), nor a selection's 0
    or 1. Of a derivative call (no partial written) every operand counts as read."""
    reads = tuple(e.child for e in node.edges) if node.joint is not None else edge.zero_reads
    return any(_zero_moves(n, moving) for n in reads)


def _zero_moves(node: Node, moving: MovingLeaf) -> bool:
    """May `node`'s value be zero where it moves infinitely fast: a leaf in `moving`, or a zero
    factor of it (`Node.zero_from`) that is, or that a singular partial gives (`math.sqrt(v)`)?"""
    if node.leaf is not None:
        return moving(node.leaf)
    kids = node.zero_from
    return any(
        e.strong is not None or _zero_moves(e.child, moving)
        for e in node.edges
        if kids is None or any(e.child is k for k in kids)
    )


def _singular_below(root: Node) -> bool:
    """Does a singular partial stand anywhere in the tree?"""
    return any(e.strong is not None or _singular_below(e.child) for e in root.edges)


def _guarded(g: cst.BaseExpression, test: str, arrays: bool) -> cst.BaseExpression:
    """`g` where `test` holds, else zero, in a form the partials below enter (`exprs.times`)."""
    if arrays:
        return _where(test, g)
    return cst.parse_expression(f"({code(unparen(g))} if {test} else 0.0)")


def _selected(g: cst.BaseExpression, masks: tuple[str, ...], array_leaf: bool) -> cst.BaseExpression:
    """`g` where every condition in `masks` holds, else zero: 0.0 towards a float leaf; towards an
    array leaf `g` may be an array or a float, and the runtime's `chosen` gives zeros of its type."""
    if not masks:
        return g
    test = masks[0] if len(masks) == 1 else " and ".join(f"({m})" for m in masks)
    if array_leaf:
        return cst.parse_expression(f"chosen({test}, {code(g)})")
    return cst.parse_expression(f"({code(g)} if {test} else 0.0)")


def _where(test: str, g: cst.BaseExpression) -> cst.BaseExpression:
    return cst.parse_expression(f"np.where({test}, {code(unparen(g))}, 0.0)")


def _where_parts(g: cst.BaseExpression) -> tuple[str, cst.BaseExpression] | None:
    """(test, d) of `np.where(test, d, 0.0)`, else None."""
    inner = unparen(g)
    if isinstance(inner, cst.Call) and code(inner.func) == "np.where" and len(inner.args) == 3:
        if isinstance(inner.args[2].value, cst.Float) and inner.args[2].value.value == "0.0":
            return code(inner.args[0].value), inner.args[1].value
    return None


def _unguarded(g: cst.BaseExpression, test: str, zero_with_seed: list[str]) -> cst.BaseExpression:
    """`g` without the guards that change nothing: `np.where(s != 0.0, 2.0 * s, 0.0)` is `2.0 * s`
    exactly (and so for a guarded adjoint bound on the way), wherever it stands."""
    return _unparen_args(transformed(g, _Unguard(test, zero_with_seed)))


class _Unguard(cst.CSTTransformer):
    def __init__(self, test: str, zero_with_seed: list[str]):
        self.test, self.zero_with_seed = test, zero_with_seed

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        parts = _where_parts(updated)
        if parts is not None and parts[0] == self.test and _scales(parts[1], self.zero_with_seed):
            return paren(parts[1])
        return updated


_SHAPING = ("np.sum", "unbroadcast")


def _scales(g: cst.BaseExpression, seed: list[str]) -> bool:
    """Is `g` the seed (one of the values in `seed`) times constants only (`g`, `-g`, `2.0 * g`,
    `g / 2.0`, its sum or its shape summed back)? Then a zero seed gives exactly zero unguarded."""
    g = unparen(g)
    if code(g) in seed:
        return True
    if isinstance(g, cst.UnaryOperation) and isinstance(g.operator, cst.Minus):
        return _scales(g.expression, seed)
    if isinstance(g, cst.BinaryOperation) and isinstance(g.operator, cst.Multiply):
        return _scales(g.left, seed) and _finite(g.right) or _finite(g.left) and _scales(g.right, seed)
    if isinstance(g, cst.BinaryOperation) and isinstance(g.operator, cst.Divide):
        return _scales(g.left, seed) and _finite(g.right)
    if isinstance(g, cst.Call) and g.args and code(g.func) in _SHAPING:
        return _scales(g.args[0].value, seed)
    if isinstance(g, cst.Call) and len(g.args) in (2, 3) and code(g.func) == "np.full_like":
        return _scales(g.args[1].value, seed)
    return False
