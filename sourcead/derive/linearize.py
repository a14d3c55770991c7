"""The derivative of one expression, shared by forward and reverse mode.

`linearize` walks an expression tree bottom-up, asks each operation's primitive for its derivative
(`rules/`: partials, a selection, a pullback, or a bilinear product) and returns a tree of
derivatives over the active leaves (variables and array elements). Values that the derivatives
need (an operand like `a * b`, or a result like `tanh(...)`) are bound to numbered temporaries, so
nothing is computed twice. Forward mode contracts the tree with the leaves' tangents (`tangent`);
reverse mode pushes an adjoint from the root to the leaves (`derive/adjoints.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from ..ir.exprs import code, is_cheap, paren, plus, template, times, transformed, unparen
from ..ir.naming import Namer
from ..ir.types import Type
from ..rules import Bilinear, Bound, Joint, Partials, Primitive, Pullback, Selection, classify
from .shape_like import float_shaped, operand_shape, shape_like
from .singular import nonzero_partial, vanishing
from .singular import singular as singular_positions

IsActiveLeaf = Callable[[cst.BaseExpression], bool]
TypeOf = Callable[[cst.BaseExpression], Type]
# a derivative crossing an edge (`Edge`), as a lambda binding its loop's values as defaults
Derive = Callable[..., cst.BaseExpression]


@dataclass
class Edge:
    """How a derivative crosses from a node to one active child: `forward(child tangent)` is the
    node's tangent contribution, `reverse(node adjoint)` the child's adjoint contribution."""

    child: Node
    forward: Derive
    reverse: Derive
    # a float adjoint of an array result may cross as it is: the partial is an array of the result's
    # shape (it makes the contribution full-sized), or the child has that shape (it stands for each
    # element); not `x + A` towards a float x, where the float would count once, not once per element
    full_partial: bool = False  # the partial is an array of the result's shape
    float_crosses_here: bool = True  # else: the operand is smaller than the result, or broadcast
    # a float selection's condition (`a0 <= a1` for min): the reverse sweep puts it around each
    # contribution that reaches a leaf through this edge, not around the adjoint that crosses it
    mask: str | None = None
    # a singular partial (`Partials.singular`): forward mode's contribution `value` guarded by the
    # child's tangent, `strong(t, second_order, value)`; `axes`: the child's number of axes (0: a
    # float), `result_axes` the result's
    strong: Derive | None = None
    axes: int = 0
    result_axes: int = 0
    # an elementwise partial (`Partials`): a tangent or an adjoint that may be non-finite is guarded
    # on it being zero, `forward(t, p=temp)` and `reverse(g, p=temp)` reading a temporary bound to it
    partial: cst.BaseExpression | None = None
    # the active operands whose values the partial reads (`c` for `c * s`), and whether it is
    # nonzero wherever it is finite (a number, a reciprocal `1 / y`): forward mode's guard on it
    partial_reads: tuple[Node, ...] = ()
    partial_nonzero: bool = False
    # the active operands whose values a factor of the partial that may be zero reads (`s` for
    # `s * s`; `x` for `x / y` towards y, whose partial is -z / y): reverse mode's suspect
    # adjoints (`adjoints.py`)
    zero_reads: tuple[Node, ...] = ()

    @property
    def float_crosses(self) -> bool:
        return self.full_partial or self.float_crosses_here and self.child.takes_float_adjoint


@dataclass
class Node:
    """An active subexpression: a leaf, or edges towards its active children."""

    leaf: cst.BaseExpression | None = None
    array_leaf: bool = False  # the leaf is an array: its adjoint contributions may be arrays
    edges: list[Edge] = field(default_factory=list)
    elementwise: bool = True  # a float adjoint broadcasts through it (False: products, reductions...)
    shape_of: Callable[[cst.BaseExpression], cst.BaseExpression] | None = None  # the tangent in the result's shape
    joint: JointNode | None = None  # one call takes every edge's tangent, or gives every edge's adjoint
    # the children whose zero may make this value zero (`x` of `x / y`; None: any of them), for
    # reverse mode's suspect adjoints (`adjoints.py`)
    zero_from: tuple[Node, ...] | None = None

    @property
    def takes_float_adjoint(self) -> bool:
        """Can a float adjoint (of a full sum or mean) be sent into this node as it is? Only where it
        stands for the same value at every element of every active leaf, all the way down (a
        product below an elementwise node needs its adjoint as an array)."""
        if self.leaf is not None:
            return True
        return self.elementwise and all(e.float_crosses for e in self.edges)


@dataclass
class JointNode:
    """A `Joint` primitive's node: `tangent(child tangents)` is its tangent, `adjoint(g)` one call
    whose entry `index[k]` is edge k's adjoint."""

    tangent: Callable[[list[cst.BaseExpression]], cst.BaseExpression]
    adjoint: Callable[[cst.BaseExpression], cst.BaseExpression]
    index: list[int]


@dataclass
class Linearized:
    bindings: list[tuple[str, cst.BaseExpression]]  # temporaries to compute first, in order
    value: cst.BaseExpression  # the expression, reading those temporaries
    root: Node | None  # None when the expression carries no derivative


class UnsupportedDerivative(Exception):
    """A value that carries a derivative reaches an argument of a primitive that has no rule for it."""

    def __init__(self, node: cst.CSTNode, what: str):
        super().__init__(what)
        self.node = node


def linearize(expr: cst.BaseExpression, is_active_leaf: IsActiveLeaf, namer: Namer, type_of: TypeOf) -> Linearized:
    builder = _Builder(is_active_leaf, namer, type_of)
    value, root = builder.visit(expr)
    return Linearized(builder.bindings, value, root)


@dataclass(frozen=True)
class Guards:
    """Forward mode's strong zeros (`tangent`): `bind(value, axes)` binds a value read twice to a
    temporary (a tangent with its number of axes; `axes=None`: a primal value, the partial);
    `second_order`: the tangent code is differentiated again (hvp); `singular_leaf(leaf)`: the
    leaf's tangent may be non-finite where its value is finite (`forward/singular.py`)."""

    bind: Callable[[cst.BaseExpression, int | None], cst.BaseExpression]
    second_order: bool = False
    singular_leaf: Callable[[cst.BaseExpression], bool] = lambda leaf: False


def tangent(
    root: Node,
    leaf_tangent: Callable[[cst.BaseExpression], cst.BaseExpression],
    guards: Guards | None = None,
) -> cst.BaseExpression:
    """Forward mode: the sum over active children of their contributions (partial * child tangent).

    With `guards` (forward mode), two strong zeros, the duals of reverse mode's (`adjoints.py`).
    An exactly zero tangent contributes exactly zero through a partial its primitive declares
    singular (`Partials.singular`: sqrt, x ** 0.5, arcsin, ...), as reverse mode's zero seed does:
    `(0.5 / t0 * t1 if t1 != 0.0 else 0.0)` for `math.sqrt(v)` (nan at v = 0 unguarded),
    `np.where(t1 != 0.0, ..., 0.0)` for an array. And a tangent that may be non-finite where the
    values are finite (it crossed a singular partial, here or in the statement that made a leaf's
    value) contributes exactly zero through an exactly zero partial above it: `c * math.sqrt(v)`
    at c = 0 is 0 for every v, and its tangent along v is `(c * t2 if c != 0.0 else 0.0)`, not
    0 * inf. Products, sums, exp of finite tangents stay branch-free. Without `guards` (the
    sparsity sweep: structure only) nothing is guarded.

    In the tangent code second order differentiates again (`second_order`), the guard on a zero
    tangent holds only where the partial is not finite too: `chosen(t1 != 0.0 or
    math.isfinite(p), p * t1)`, whose derivative is that of `p * t1` wherever p is finite (also
    where t1 vanishes at one point). That code has no guard on a zero partial: where one would
    hold, the second derivative is infinite or undefined (`c * sqrt(v)` at c = 0, v = 0: d2/dc dv
    is 1 / (2 sqrt(v))), and each guard would cost a record and a branch in hvp's loops."""
    if root.leaf is not None:
        return leaf_tangent(root.leaf)
    if root.joint is not None:
        return root.joint.tangent([tangent(edge.child, leaf_tangent, guards) for edge in root.edges])
    parts = []
    for edge in root.edges:
        t = tangent(edge.child, leaf_tangent, guards)
        parts.append(edge.forward(t) if guards is None else _contribution(edge, t, guards))
    total = plus(parts)
    return root.shape_of(total) if root.shape_of is not None else total


def _contribution(edge: Edge, t: cst.BaseExpression, guards: Guards) -> cst.BaseExpression:
    """`edge`'s contribution `p * t` with its strong zeros (`tangent`)."""
    p = edge.partial
    crossed = lambda node: crossed_singular(node, guards.singular_leaf)  # noqa: E731
    # not where the partial itself may move infinitely fast (`s * s_dot` with s = sqrt(v) at v = 0:
    # 0 * inf stands for the finite s * (0.5 / s) v_dot, not for 0); there 0 * inf stays nan. Not
    # in second order's tangent code (see `tangent`)
    zero_partial = (
        not guards.second_order
        and p is not None
        and not edge.partial_nonzero
        and crossed(edge.child)
        and not any(map(crossed, edge.partial_reads))
    )
    if edge.strong is None and not zero_partial:
        return edge.forward(t)
    if edge.strong is not None:  # its guard reads t again
        t = t if is_cheap(t, 0) else guards.bind(t, edge.axes)
    if zero_partial and p is not None:
        p = p if is_cheap(p, 0) else guards.bind(p, None)
        value = _unless_zero(p, edge.forward(t, p=p), edge.result_axes > 0)
    else:
        value = edge.forward(t)
    if edge.strong is not None:
        value = edge.strong(t, guards.second_order, value)
    # an array's select stays the size of this contribution: the factors above multiply it, not
    # enter it (they are finite where their values are, or guarded on their own edges)
    return guards.bind(value, edge.result_axes) if edge.result_axes else value


def crossed_singular(node: Node, singular_leaf: Callable[[cst.BaseExpression], bool]) -> bool:
    """May the tangent of `node` be non-finite where its value is finite: it crosses a singular
    partial on the way from its leaves, or a leaf's tangent may be (`singular_leaf`)?"""
    if node.leaf is not None:
        return singular_leaf(node.leaf)
    return any(e.strong is not None or crossed_singular(e.child, singular_leaf) for e in node.edges)


def _unless_zero(p: cst.BaseExpression, value: cst.BaseExpression, arrays: bool) -> cst.BaseExpression:
    """`value` (`p * t`), exactly zero where the partial `p` is."""
    nonzero, v = f"{code(p)} != 0.0", code(value)  # a conditional keeps its parentheses
    if arrays:  # p or t an array: the contribution has the result's shape, which np.where keeps
        return cst.parse_expression(f"np.where({nonzero}, {v}, 0.0)")
    return cst.parse_expression(f"({v} if {nonzero} else 0.0)")


class _Builder:
    def __init__(self, is_active_leaf: IsActiveLeaf, namer: Namer, type_of: TypeOf):
        self.is_active_leaf = is_active_leaf
        self.namer = namer
        self.type_of = type_of
        self.bindings: list[tuple[str, cst.BaseExpression]] = []

    def bind(self, value: cst.BaseExpression) -> cst.Name:
        temp = self.namer.temp()
        self.bindings.append((temp, unparen(value)))
        return cst.Name(temp)

    def atom(self, value: cst.BaseExpression) -> cst.BaseExpression:
        """`value` itself if it is cheap to read again, else a temporary bound to it."""
        return value if is_cheap(value) else self.bind(value)

    def is_array(self, node: cst.BaseExpression) -> bool:
        return self.type_of(node).is_array

    def visit(self, node: cst.BaseExpression) -> tuple[cst.BaseExpression, Node | None]:
        if isinstance(node, (cst.Name, cst.Subscript)):
            return node, (Node(leaf=node, array_leaf=self.is_array(node)) if self.is_active_leaf(node) else None)
        found = classify(node)
        if found is None:
            return node, None  # numbers, constants such as math.inf
        prim, bound = found
        if prim.constant:
            return node, None  # piecewise constant: a zero derivative, whatever its operands carry
        form = (prim.special(bound) if prim.special is not None else None) or prim.derivative
        operands = prim.differentiable if form is not None else tuple(bound.args)
        visited = {p: self.visit(bound.args[p]) for p in operands if p in bound.args}
        values = {p: value for p, (value, _) in visited.items()}
        children = {p: child for p, (_, child) in visited.items() if child is not None}
        rebuilt = _with_args(node, prim, bound, values)
        if not children:
            return rebuilt, None
        if form is None:
            raise UnsupportedDerivative(node, prim.name)
        if isinstance(form, Partials):
            return self.partials(node, prim, bound, form, rebuilt, values, children)
        if isinstance(form, Selection):
            return self.selection(node, prim, bound, form, values, children)
        if isinstance(form, Pullback):
            return self.pullback(node, prim, bound, form, values, children)
        if isinstance(form, Joint):
            return self.joint(node, prim, bound, form, values, children)
        return self.bilinear(node, prim, bound, form, values, children)

    # --- elementwise: partial derivatives ---------------------------------------------------------

    def partials(self, original, prim: Primitive, bound: Bound, form: Partials, rebuilt, values, children):
        operands = list(prim.differentiable)
        originals = [bound.args[p] for p in operands]
        types = [self.type_of(o) for o in originals]
        arrays = any(t.is_array for t in types)
        templates = form.for_arrays(arrays)
        active = [k for k, p in enumerate(operands) if p in children]
        used = "".join(templates[k] for k in active)
        names = dict(zip("xy", (values[p] for p in operands), strict=False))
        shaped = {k for k in active if self.sums_to_shape(types, k, originals)}
        widening = [k for k in range(len(operands)) if self.widens(types, k, active, used, originals)]
        reads = used.replace("{r}", "{y}")  # the reciprocal reads y
        for k, key in enumerate("xy"[: len(operands)]):
            if "{" + key + "}" not in reads and k not in widening and k in shaped and not is_cheap(names[key], 0):
                like = self.scaled_shape_like(names[key])
                if like is not None:  # only its shape is read: not the value computed again
                    names[key] = like
                    continue
            if is_cheap(names[key]):
                continue
            if "{" + key + "}" in reads or k in shaped or k in widening:
                names[key] = self.bind(names[key])  # read by a partial, or the shape to sum back to
                values = {**values, operands[k]: names[key]}
        rebuilt = _with_args(original, prim, bound, values)
        if "{r}" in used:  # 1 / y, divided once for every partial that reads it
            names["r"] = self.bind(template("1.0 / {y}", y=names["y"]))
        if "{z}" in used:
            rebuilt = self.bind(rebuilt)
            names["z"] = rebuilt
        names["m"] = cst.Name("np" if arrays else "math")
        edges = []
        singular = singular_positions(form, originals)
        zero_keys, own_zero = self.vanishing(original, prim, bound, operands, values, children)
        full = {
            "xy"[j] for j in range(len(operands)) if types[j].is_array and not self.sums_to_shape(types, j, originals)
        }
        full |= {"z"} if arrays else set()  # the placeholders that stand for arrays of the result's shape
        for k in active:
            partial = _instantiate(templates[k], names)
            # the products may be arrays (a partial, or a tangent or adjoint, of an array's shape)
            a = arrays
            back: Derive
            if not types[k].is_array and arrays:  # a float operand broadcast over an array result
                back = lambda g, p=partial, a=a: _call("np.sum", times(p, g, a))  # noqa: E731
            elif k in shaped:  # arrays of possibly different shapes meet: sum back to the operand's shape
                o = operand_shape(names["xy"[k]], self.is_array) or names["xy"[k]]  # `q * t0`: its shape, not its value
                back = lambda g, p=partial, o=o, a=a: _call("unbroadcast", times(p, g, a), o)  # noqa: E731
            else:
                back = lambda g, p=partial, a=a: times(p, g, a)  # noqa: E731
            child = children[operands[k]]
            full_partial = any("{" + key + "}" in templates[k] for key in full)
            here = k not in shaped and (types[k].is_array or not arrays)
            forward: Derive = lambda t, p=partial, a=a: times(p, t, a)  # noqa: E731
            strong = _strong(partial, arrays, types[k].is_array) if k in singular else None
            axes = (types[k].ndim, max(t.ndim for t in types))
            read = [j for j, key in enumerate("xy"[: len(operands)]) if _reads_operand(templates[k], key)]
            edges.append(
                Edge(
                    child,
                    forward,
                    back,
                    full_partial,
                    here,
                    strong=strong,
                    axes=axes[0],
                    result_axes=axes[1],
                    partial=partial,
                    partial_reads=tuple(children[operands[j]] for j in read if operands[j] in children),
                    partial_nonzero=templates[k] == "{r}" or nonzero_partial(partial),
                    zero_reads=tuple(children[operands[j]] for j in zero_keys(templates[k]) if operands[j] in children),
                )  # fmt: skip
            )
        shape_of = None
        if widening:  # a constant operand the tangent does not read widens the result
            wide = [names["xy"[k]] for k in widening]
            shape_of = lambda t: _call("broadcast_tangent", t, *wide)  # noqa: E731
        zero_from = tuple(children[operands[j]] for j in own_zero if operands[j] in children)
        return rebuilt, Node(edges=edges, shape_of=shape_of, zero_from=zero_from)

    def vanishing(
        self, original, prim: Primitive, bound: Bound, operands: list[str], values, children
    ) -> tuple[Callable[[str], list[int]], list[int]]:
        """The positions of the operands a partial's template reads through a factor that may be
        zero (`derive/singular.py`'s `vanishing`), the result `{z}` through the operation's own;
        and those the operation's own value reads so."""
        keys = "xy"[: len(operands)]
        marks: dict[str, cst.BaseExpression] = {key: cst.Name(f"_{key}_") for key in "xyzrm"}
        # an operand without derivative stands as it is: `t2 ** (0.5 - 1.0)` is never zero
        own_args = {
            p: marks[key] if p in children else values[p] for p, key in zip(operands, keys, strict=False) if p in values
        }
        own = _with_args(original, prim, bound, own_args)
        names = {f"_{key}_": {key} for key in keys}
        names["_z_"] = vanishing(own, names)

        def positions(text: str) -> list[int]:
            found = vanishing(_instantiate(text, marks), names)
            return [j for j, key in enumerate(keys) if key in found]

        return positions, [j for j, key in enumerate(keys) if key in names["_z_"]]

    def scaled_shape_like(self, value: cst.BaseExpression) -> cst.BaseExpression | None:
        """`shape_like`, knowing which operands are floats."""
        return shape_like(value, self.is_array)

    def widens(self, types: list[Type], k: int, active: list[int], used: str, originals) -> bool:
        """Is operand k a constant array that may make the result larger than the tangent, which is
        built from the active operands' tangents and partials (`x + A` with x a float: the tangent
        of x stands for every element of the result)? Not when a partial reads it (`x * A`)."""
        if k in active or not types[k].is_array or "{" + "xy"[k] + "}" in used:
            return False
        if not any(types[j].is_array for j in active):
            return True
        return self.sums_to_shape(types, k, originals)

    def sums_to_shape(self, types: list[Type], k: int, originals: list[cst.BaseExpression]) -> bool:
        """Must operand k's adjoint be summed back to its shape at run time? Only when arrays of
        possibly different shapes meet; arrays computed elementwise from one array share its shape."""
        arrays = [j for j, t in enumerate(types) if t.is_array]
        if not types[k].is_array or len(arrays) < 2:
            return False
        if any(types[j].ndim != types[k].ndim for j in arrays):
            return True
        roots = {frozenset(array_roots(originals[j], self.type_of)) for j in arrays}
        return len(roots | {frozenset()}) != 2

    # --- selections: each operand where it is the one chosen --------------------------------------

    def selection(self, original, prim: Primitive, bound: Bound, form: Selection, values, children):
        params = [p.name for p in prim.signature.params if p.name in bound.args]
        full = {p: self.atom(values.get(p, bound.args[p])) for p in params}
        rebuilt = _with_args(original, prim, bound, full)
        operands = {f"a{k}": code(full[p]) for k, p in enumerate(params)}
        types = [self.type_of(bound.args[p]) for p in params]
        result_is_array = self.is_array(original)
        edges = []
        for p, mask_template in zip(prim.differentiable, form.masks, strict=True):
            if p not in children:
                continue
            mask = mask_template.format(**operands)
            if not result_is_array:  # floats: a conditional expression passes the derivative or 0.0
                keep = lambda d, m=mask: cst.parse_expression(f"({code(d)} if {m} else 0.0)")  # noqa: E731
                edges.append(Edge(children[p], keep, lambda g: g, mask=mask))
                continue
            keep = lambda d, m=mask: cst.parse_expression(f"np.where({m}, {code(d)}, 0.0)")  # noqa: E731
            k = params.index(p)
            back: Derive
            if not types[k].is_array:
                back = lambda g, m=keep: _call("np.sum", m(g))  # noqa: E731
            elif self.sums_to_shape(types, k, [bound.args[q] for q in params]):
                back = lambda g, m=keep, o=full[p]: _call("unbroadcast", m(g), o)  # noqa: E731
            else:
                back = keep
            edges.append(Edge(children[p], keep, back))
        return rebuilt, Node(edges=edges)

    # --- one operand, not elementwise: tangent and adjoint templates -------------------------------

    def pullback(self, original, prim: Primitive, bound: Bound, form: Pullback, values, children):
        (operand,) = prim.differentiable
        child = children[operand]
        value = values[operand]
        reads = form.tangent + form.adjoint
        spread = form.spread and not child.takes_float_adjoint
        shape = None  # what the spread adjoint takes its shape from: the operand, or a cheap stand-in
        if not is_cheap(value, 0) and "{x}" not in reads and spread:
            # `np.sum((A @ x) @ A)`: its shape, not the product again (full_like takes its dtype too)
            shape = float_shaped(self.scaled_shape_like(value), self.type_of)
        if not is_cheap(value) and ("{x}" in reads or spread) and shape is None:
            value = self.bind(value)
        rebuilt = _with_args(original, prim, bound, {**values, operand: value})
        names = {p: v for p, v in bound.args.items() if p != operand}
        names["x"] = value
        if "{z}" in reads:
            rebuilt = self.bind(rebuilt)
            names["z"] = rebuilt

        # spread over float32 storage: the adjoint stays float64 (its dtype, not the operand's)
        single = spread and shape is None and self.type_of(bound.args[operand]).single

        def back(g: cst.BaseExpression) -> cst.BaseExpression:
            contribution = g if form.adjoint == "{g}" else (_instantiate(form.adjoint, {"g": g, **names}))
            if single:
                return _unparen_args(
                    cst.parse_expression(f"np.full_like({code(value)}, {code(contribution)}, dtype=np.float64)")
                )
            return _call("np.full_like", shape or value, contribution) if spread else contribution

        tangent_form = form.tangent
        if prim.name == "np.full_like" and self.type_of(bound.args["a"]).single:  # like float32 storage
            tangent_form = "np.full_like({a}, {t}, dtype=np.float64)"  # a float64 tangent all the same
        nonlinear = (child,) if "{x}" in form.adjoint or "{z}" in form.adjoint else ()  # its partial reads it
        edge = Edge(child, lambda t: _instantiate(tangent_form, {"t": t, **names}), back, zero_reads=nonlinear)
        return rebuilt, Node(edges=[edge], elementwise=False)

    # --- products: linear in each operand -----------------------------------------------------------

    def bilinear(self, original, prim: Primitive, bound: Bound, form: Bilinear, values, children):
        a, b = self.atom(values["a"]), self.atom(values["b"])
        rebuilt = _with_args(original, prim, bound, {"a": a, "b": b})
        others = {p: v for p, v in bound.args.items() if p not in ("a", "b")}  # literals: join_along's axis
        edges = []
        for k, (p, other) in enumerate((("a", "b"), ("b", "a"))):
            if p not in children:
                continue
            forward = lambda t, k=k, o=other: _instantiate(  # noqa: E731
                form.tangents[k], {"t": t, o: {"a": a, "b": b}[o], **others}
            )
            # bilinear: an operand's own adjoint reads no value of it, at most its shape (`alpha * A`: A's)
            own = {p: operand_shape({"a": a, "b": b}[p], self.is_array) or {"a": a, "b": b}[p]}
            back = lambda g, k=k, own=own: _instantiate(form.adjoints[k], {"g": g, "a": a, "b": b, **own, **others})  # noqa: E731
            reads = (children[other],) if other in children else ()  # the partial towards p is the other operand
            edges.append(Edge(children[p], forward, back, zero_reads=reads))
        return rebuilt, Node(edges=edges, elementwise=False)

    # --- one call for every operand (derivative calls) ----------------------------------------------

    def joint(self, original, prim: Primitive, bound: Bound, form: Joint, values, children):
        params = [p.name for p in prim.signature.params if p.name in bound.args]
        args = {p: self.atom(values.get(p, bound.args[p])) for p in params}
        rebuilt = _with_args(original, prim, bound, args)
        texts = [code(args[p]) for p in params]
        types = [self.type_of(bound.args[p]) for p in params]
        active = [k for k, p in enumerate(params) if p in children]
        _, index = form.adjoint(texts, types, "g")

        def forward(tangents: list[cst.BaseExpression]) -> cst.BaseExpression:
            dots: list[str | None] = [None] * len(params)
            for k, t in zip(active, tangents, strict=True):
                dots[k] = code(t)
            return cst.parse_expression(form.tangent(texts, types, dots))

        def back(g: cst.BaseExpression) -> cst.BaseExpression:
            return cst.parse_expression(form.adjoint(texts, types, code(unparen(g)))[0])

        edges = [Edge(children[params[k]], lambda t: t, lambda g: g) for k in active]
        joint = JointNode(forward, back, [index[k] for k in active])
        return rebuilt, Node(edges=edges, elementwise=False, joint=joint)


def _reads_operand(template: str, key: str) -> bool:
    """Does a partial's template read operand `key` (x or y): by name, through the result `{z}`, or
    (y) through the reciprocal `{r}`?"""
    return "{" + key + "}" in template or "{z}" in template or key == "y" and "{r}" in template


def _strong(partial: cst.BaseExpression, arrays: bool, array_tangent: bool) -> Derive:
    """Forward mode's contribution `value` (`partial * t`, or that under its own guard) through a
    singular partial, exactly zero where the tangent t is: a conditional on floats, `np.where` on an
    array tangent, and for a float tangent of an array result (`x ** A`) a conditional whose zero
    has the partial's shape. For second order (`second`), zero only where the partial is not finite
    too."""

    def guarded(t: cst.BaseExpression, second: bool, value: cst.BaseExpression) -> cst.BaseExpression:
        p, nonzero = code(value), f"{code(t)} != 0.0"  # a conditional keeps its parentheses
        if second and arrays:
            return cst.parse_expression(f"np.where(np.logical_or({nonzero}, np.isfinite({code(partial)})), {p}, 0.0)")
        if second:  # a selection second order differentiates without a branch (`rules/tangents.py`)
            return cst.parse_expression(f"chosen({nonzero} or math.isfinite({code(partial)}), {p})")
        if array_tangent:
            return cst.parse_expression(f"np.where({nonzero}, {p}, 0.0)")
        if arrays:
            return cst.parse_expression(f"({p} if {nonzero} else np.zeros_like({code(unparen(partial))}))")
        return cst.parse_expression(f"({p} if {nonzero} else 0.0)")

    return guarded


def _with_args(node: cst.BaseExpression, prim: Primitive, bound: Bound, values: dict) -> cst.BaseExpression:
    """`node` with the arguments named in `values` replaced."""
    if isinstance(node, cst.BinaryOperation):
        first, second = ("a", "b") if prim.name == "MatrixMultiply" else ("x", "y")
        left, right = values.get(first, node.left), values.get(second, node.right)
        return node.with_changes(left=paren(left) if prim.name == "MatrixMultiply" else left, right=right)
    if isinstance(node, cst.UnaryOperation):
        return node.with_changes(expression=values.get("x", node.expression))
    if isinstance(node, cst.Call):
        params = [p.name for p in prim.signature.params]
        args = []
        for k, arg in enumerate(node.args):
            name = arg.keyword.value if arg.keyword is not None else params[k]
            value = values[name] if name in values else None
            args.append(
                arg.with_changes(value=value if isinstance(value, cst.Tuple) else unparen(value))
                if value is not None
                else arg
            )
        return node.with_changes(args=args)
    return node


def _call(func: str, *args: cst.BaseExpression) -> cst.Call:
    return _unparen_args(cst.Call(cst.parse_expression(func), [cst.Arg(a) for a in args]))  # type: ignore[return-value]


def _unparen_args(node: cst.BaseExpression) -> cst.BaseExpression:
    """Template operands are parenthesized for operators; as call arguments and subscripts they need
    not be (a tuple keeps its parentheses: it is one argument)."""
    return transformed(node, _Unparen())


class _Unparen(cst.CSTTransformer):
    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        value = updated.value
        return updated if isinstance(value, cst.Tuple) else updated.with_changes(value=unparen(value))


def array_roots(node: cst.BaseExpression, type_of: TypeOf) -> set[str]:
    """The array variables an elementwise expression is computed from (its shape's origin); an
    operand that is not elementwise does not count (a reduction yields a float)."""
    if isinstance(node, (cst.Name, cst.Subscript)):  # a slice or a row is the root of its own shape
        return {code(node)} if type_of(node).is_array else set()
    found = classify(node)
    if found is None:
        return set()
    prim, bound = found
    like = prim.shape_like
    if like is not None and like.strip("{}") in bound.args and like == "{" + like.strip("{}") + "}":
        return array_roots(bound.args[like.strip("{}")], type_of)  # the shape of one argument (a gradient's)
    if not isinstance(prim.derivative, Partials | Selection) and not prim.constant:
        return {"<" + code(node) + ">"} if type_of(node).is_array else set()
    return set().union(*(array_roots(v, type_of) for v in bound.args.values()))


def _instantiate(text: str, names: dict[str, cst.BaseExpression]) -> cst.BaseExpression:
    node = _unparen_args(template(text, **{k: v for k, v in names.items() if "{" + k + "}" in text}))
    return node if isinstance(unparen(node), cst.IfExp) else unparen(node)  # a conditional keeps its parentheses
