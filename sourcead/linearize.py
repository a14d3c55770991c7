"""The derivative of one expression, shared by forward and reverse mode.

`linearize` walks an expression tree bottom-up, looks up each operation's rule, and returns
a tree of partial derivatives over the active leaves (variables and array elements). Values
that the partials need (an operand like `a * b`, or a result like `tanh(...)`) are bound to
numbered temporaries, so nothing is computed twice. Forward mode contracts the tree with the
leaves' tangents (`tangent`); reverse mode pushes an adjoint from the root to the leaves
(`adjoint`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from . import custom
from .exprs import code, dotted, is_atom, paren, plus, template, times, unparen
from .naming import Namer
from .rules import (
    AXIS_REDUCTIONS,
    BILINEAR,
    ELEMENTWISE,
    REDUCTIONS,
    RESHAPES,
    SELECTIONS,
    UNARY_OPERATORS,
    Bilinear,
    Reduction,
    Rule,
    binary_rule,
)

IsActiveLeaf = Callable[[cst.BaseExpression], bool]
KindOf = Callable[[cst.BaseExpression], str]  # "float", "int", "bool" or "array"


@dataclass
class Edge:
    """How a derivative crosses from a node to one active child: `forward(child tangent)` is the
    node's tangent contribution, `reverse(node adjoint)` the child's adjoint contribution."""

    child: Node
    forward: Callable[[cst.BaseExpression], cst.BaseExpression]
    reverse: Callable[[cst.BaseExpression], cst.BaseExpression]


@dataclass
class Node:
    """An active subexpression: a leaf, or edges towards its active children."""

    leaf: cst.BaseExpression | None = None
    edges: list[Edge] = field(default_factory=list)
    elementwise: bool = True  # a float adjoint broadcasts through it (False: products, reductions...)


@dataclass
class Linearized:
    bindings: list[tuple[str, cst.BaseExpression]]  # temporaries to compute first, in order
    value: cst.BaseExpression  # the expression, reading those temporaries
    root: Node | None  # None when the expression carries no derivative


class UnsupportedDerivative(Exception):
    """An active operand reaches an operation that has no rule."""

    def __init__(self, node: cst.CSTNode, what: str):
        super().__init__(what)
        self.node = node


def linearize(
    expr: cst.BaseExpression, is_active_leaf: IsActiveLeaf, namer: Namer, kind_of: KindOf = lambda e: "float"
) -> Linearized:
    builder = _Builder(is_active_leaf, namer, kind_of)
    value, root = builder.visit(expr)
    return Linearized(builder.bindings, value, root)


def tangent(root: Node, leaf_tangent: Callable[[cst.BaseExpression], cst.BaseExpression]) -> cst.BaseExpression:
    """Forward mode: the sum over active children of their contributions (partial * child tangent)."""
    if root.leaf is not None:
        return leaf_tangent(root.leaf)
    return plus([edge.forward(tangent(edge.child, leaf_tangent)) for edge in root.edges])


def adjoint(
    root: Node,
    seed: cst.BaseExpression,
    accumulate: Callable[[cst.BaseExpression, cst.BaseExpression], None],
    bind: Callable[[cst.BaseExpression], cst.BaseExpression],
) -> None:
    """Reverse mode: send `seed` from the root to every active leaf (`accumulate(leaf, g)`)."""
    if root.leaf is not None:
        accumulate(root.leaf, seed)
        return
    if len(root.edges) > 1 and not is_atom(seed):
        seed = bind(seed)
    for edge in root.edges:
        adjoint(edge.child, edge.reverse(seed), accumulate, bind)


class _Builder:
    def __init__(self, is_active_leaf: IsActiveLeaf, namer: Namer, kind_of: KindOf):
        self.is_active_leaf = is_active_leaf
        self.namer = namer
        self.kind_of = kind_of
        self.bindings: list[tuple[str, cst.BaseExpression]] = []

    def bind(self, value: cst.BaseExpression) -> cst.Name:
        temp = self.namer.temp()
        self.bindings.append((temp, value))
        return cst.Name(temp)

    def visit(self, node: cst.BaseExpression) -> tuple[cst.BaseExpression, Node | None]:
        if isinstance(node, (cst.Name, cst.Subscript)):
            return node, (Node(leaf=node) if self.is_active_leaf(node) else None)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.MatrixMultiply):
            return self.bilinear(node, BILINEAR["np.dot"], node.left, node.right)
        if isinstance(node, cst.Call) and dotted(node.func) in BILINEAR:
            return self.bilinear(node, BILINEAR[dotted(node.func)], node.args[0].value, node.args[1].value)
        if isinstance(node, cst.BinaryOperation):
            (left, lnode), (right, rnode) = self.visit(node.left), self.visit(node.right)
            rule = binary_rule(node.operator, right)
            rebuilt = node.with_changes(left=left, right=right)
            return self.apply(node, rule, rebuilt, [left, right], [lnode, rnode], "operator")
        if isinstance(node, cst.UnaryOperation):
            operand, onode = self.visit(node.expression)
            rule = UNARY_OPERATORS.get(type(node.operator).__name__)
            return self.apply(node, rule, node.with_changes(expression=operand), [operand], [onode], "operator")
        if isinstance(node, cst.Call) and dotted(node.func) in SELECTIONS:
            return self.select(node)
        if isinstance(node, cst.Call) and dotted(node.func) in RESHAPES:
            return self.reshape(node)
        if isinstance(node, cst.Call) and dotted(node.func) in AXIS_REDUCTIONS and len(node.args) == 2:
            return self.reduction(node, AXIS_REDUCTIONS[dotted(node.func)], axis=node.args[1].value)
        if isinstance(node, cst.Call) and dotted(node.func) in REDUCTIONS:
            return self.reduction(node, REDUCTIONS[dotted(node.func)])
        if isinstance(node, cst.Call):
            key = dotted(node.func)
            user_rule = custom.by_name(key)
            rule = ELEMENTWISE.get(key) or (user_rule.rule if user_rule else None)
            if rule is None:
                return node, None  # constants: len, int, shapes, fresh arrays
            visited = [self.visit(arg.value) for arg in node.args]
            args = [value for value, _ in visited]
            rebuilt = node.with_changes(args=[a.with_changes(value=v) for a, v in zip(node.args, args, strict=True)])
            return self.apply(node, rule, rebuilt, args, [n for _, n in visited], key)
        return node, None

    def bilinear(self, node, rule: Bilinear, a: cst.BaseExpression, b: cst.BaseExpression):
        """z = f(a, b) linear in each operand (`a @ b`, np.dot, np.outer): one edge per active operand."""
        (av, an), (bv, bn) = self.visit(a), self.visit(b)
        if an is None and bn is None:
            return _rebuild_matmul(node, av, bv), None
        av = av if is_atom(av) else self.bind(av)
        bv = bv if is_atom(bv) else self.bind(bv)
        edges = []
        if an is not None:
            forward = lambda t: _instantiate(rule.tangent_a, {"t": t, "b": bv})  # noqa: E731
            back = lambda g: _unparen_args(_instantiate(rule.adjoint_a, {"g": g, "a": av, "b": bv}))  # noqa: E731
            edges.append(Edge(an, forward, back))
        if bn is not None:
            forward = lambda t: _instantiate(rule.tangent_b, {"t": t, "a": av})  # noqa: E731
            back = lambda g: _unparen_args(_instantiate(rule.adjoint_b, {"g": g, "a": av, "b": bv}))  # noqa: E731
            edges.append(Edge(bn, forward, back))
        return _rebuild_matmul(node, av, bv), Node(edges=edges, elementwise=False)

    def reshape(self, node: cst.Call) -> tuple[cst.BaseExpression, Node | None]:
        """np.reshape(x, shape): linear; the adjoint goes back to x's shape."""
        value, child = self.visit(node.args[0].value)
        if child is not None and not is_atom(value):
            value = self.bind(value)
        rebuilt = node.with_changes(args=[node.args[0].with_changes(value=value), node.args[1]])
        if child is None:
            return rebuilt, None
        shape = node.args[1].value
        x_shape = cst.parse_expression(f"{code(value)}.shape")

        def forward(t: cst.BaseExpression) -> cst.BaseExpression:
            return _call("np.reshape", _call("np.ascontiguousarray", t), shape)

        def back(g: cst.BaseExpression) -> cst.BaseExpression:
            return _call("np.reshape", _call("np.ascontiguousarray", g), x_shape)

        return rebuilt, Node(edges=[Edge(child, forward, back)], elementwise=False)

    def select(self, node: cst.Call) -> tuple[cst.BaseExpression, Node | None]:
        """np.where(c, a, b) and np.clip(x, lo, hi): each active operand's derivative passes where
        that operand is the one selected, and is summed back to its shape."""
        visited = [self.visit(arg.value) for arg in node.args]
        values = [v if is_atom(v) else self.bind(v) for v, _ in visited]
        rebuilt = node.with_changes(args=[a.with_changes(value=v) for a, v in zip(node.args, values, strict=True)])
        children = [child for _, child in visited]
        if all(child is None for child in children):
            return rebuilt, None
        operands = {f"a{k}": code(v) for k, v in enumerate(values)}
        masks = {k: m.format(**operands) for k, m in enumerate(SELECTIONS[dotted(node.func)]) if m is not None}
        result_is_array = self.kind_of(node) == "array"
        edges = []
        for k, mask in masks.items():
            if children[k] is None:
                continue
            operand, array = values[k], self.kind_of(node.args[k].value) == "array"
            keep = lambda d, m=mask: cst.parse_expression(f"np.where({m}, {code(d)}, 0.0)")  # noqa: E731
            if not result_is_array:  # all floats: a conditional expression
                keep = lambda d, m=mask: cst.parse_expression(f"({code(d)} if {m} else 0.0)")  # noqa: E731
                edges.append(Edge(children[k], keep, keep))
                continue
            back = (
                (lambda g, m=keep, o=operand: _call("unbroadcast", m(g), o))
                if array
                else (lambda g, m=keep: _call("np.sum", m(g)))
            )
            edges.append(Edge(children[k], keep, back))
        return rebuilt, Node(edges=edges)

    def reduction(self, node: cst.Call, rule: Reduction, axis=None) -> tuple[cst.BaseExpression, Node | None]:
        value, child = self.visit(node.args[0].value)
        rebuilt = node.with_changes(args=[node.args[0].with_changes(value=value), *node.args[1:]])
        if child is None:
            return rebuilt, None
        if not is_atom(value) and "{x}" in rule.tangent + rule.adjoint:
            value = self.bind(value)
            rebuilt = node.with_changes(args=[node.args[0].with_changes(value=value), *node.args[1:]])
        names = {"k": axis} if axis is not None else {}
        spread = rule.adjoint in ("{g}", "{g} / {x}.size") and not (child.leaf is not None or child.elementwise)
        if spread and not is_atom(value):
            value = self.bind(value)
            rebuilt = node.with_changes(args=[node.args[0].with_changes(value=value), *node.args[1:]])
        edge = Edge(
            child,
            forward=lambda t, x=value: _unparen_args(_instantiate(rule.tangent, {"t": t, "x": x, **names})),
            reverse=lambda g, x=value: _spread(
                g if rule.adjoint == "{g}" else _unparen_args(_instantiate(rule.adjoint, {"g": g, "x": x, **names})),
                x if spread else None,
            ),
        )
        return rebuilt, Node(edges=[edge], elementwise=False)

    def apply(
        self,
        original: cst.BaseExpression,
        rule: Rule | None,
        rebuilt: cst.BaseExpression,
        operands: list[cst.BaseExpression],
        children: list[Node | None],
        what: str,
    ) -> tuple[cst.BaseExpression, Node | None]:
        active = [k for k, child in enumerate(children) if child is not None]
        if not active:
            return rebuilt, None
        if rule is None:
            raise UnsupportedDerivative(original, what)
        used = "".join(rule.partials[k] for k in active)
        names = dict(zip("xy", operands, strict=False))
        originals = _operands(original)
        kinds = [self.kind_of(o) for o in originals]
        shaped = {"xy"[k] for k in active if self.sums_to_shape(kinds, k, originals)}
        for key in "xy":
            if ("{" + key + "}" in used or key in shaped) and not is_atom(names[key]):
                names[key] = self.bind(names[key])  # read by a partial, or the shape to sum back to
                rebuilt = _replace_operand(rebuilt, "xy".index(key), names[key])
        if "{z}" in used:
            rebuilt = self.bind(rebuilt)
            names["z"] = rebuilt
        edges = []
        for k in active:
            partial = _instantiate(rule.partials[k], names)
            edges.append(
                Edge(
                    children[k],
                    lambda t, p=partial: times(p, t),
                    self.broadcast_back(partial, kinds, k, names, originals),
                )
            )  # type: ignore[arg-type]
        return rebuilt, Node(edges=edges)

    def broadcast_back(self, partial, kinds: list[str], k: int, names: dict, operands: list) -> Callable:
        """The reverse contribution to operand k: partial * adjoint, summed back to the operand's
        shape where NumPy broadcast it (a float operand of an array result, or arrays of
        different shapes)."""
        if kinds[k] != "array" and "array" in kinds:
            return lambda g: _call("np.sum", times(partial, g))
        if not self.sums_to_shape(kinds, k, operands):
            return lambda g: times(partial, g)
        operand = names["xy"[k]]  # an atom: `apply` bound it
        return lambda g: _call("unbroadcast", times(partial, g), operand)

    def sums_to_shape(self, kinds: list[str], k: int, operands: list) -> bool:
        """Must operand k's adjoint be summed back to its shape at run time? Only when arrays of
        possibly different shapes meet; arrays computed elementwise from one array share its shape."""
        arrays = [o for o, kind in zip(operands, kinds, strict=True) if kind == "array"]
        if kinds[k] != "array" or len(arrays) < 2:
            return False
        return len({frozenset(_array_roots(o, self.kind_of)) for o in arrays} | {frozenset()}) != 2


def _rebuild_matmul(node, a: cst.BaseExpression, b: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(node, cst.BinaryOperation):
        return node.with_changes(left=paren(a), right=paren(b))
    return node.with_changes(args=[node.args[0].with_changes(value=a), node.args[1].with_changes(value=b)])


def _spread(contribution: cst.BaseExpression, like: cst.BaseExpression | None) -> cst.BaseExpression:
    """A float adjoint made into a full array shaped like `like`, for a child that is not elementwise
    (a matrix product needs its adjoint as an array, not a broadcast float)."""
    return contribution if like is None else _call("np.full_like", like, contribution)


def _unparen_args(node: cst.BaseExpression) -> cst.BaseExpression:
    """Template operands are parenthesized for operators; inside call arguments they need not be."""
    if isinstance(node, cst.Call):
        return node.with_changes(args=[a.with_changes(value=unparen(a.value)) for a in node.args])
    return node


def _call(func: str, *args: cst.BaseExpression) -> cst.Call:
    return cst.Call(cst.parse_expression(func), [cst.Arg(a if isinstance(a, cst.Tuple) else unparen(a)) for a in args])


def _array_roots(node: cst.BaseExpression, kind_of: KindOf) -> set[str]:
    """The array variables an elementwise expression is computed from (its shape's origin); a
    reduction's operand does not count (it yields a float)."""
    if isinstance(node, cst.Name):
        return {node.value} if kind_of(node) == "array" else set()
    if isinstance(node, cst.Call) and dotted(node.func) in REDUCTIONS:
        return set()
    return set().union(*(_array_roots(o, kind_of) for o in _operands(node)))


def _operands(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, cst.BinaryOperation):
        return [node.left, node.right]
    if isinstance(node, cst.UnaryOperation):
        return [node.expression]
    if isinstance(node, cst.Call):
        return [a.value for a in node.args]
    return []


def _instantiate(text: str, names: dict[str, cst.BaseExpression]) -> cst.BaseExpression:
    return template(text, **{k: v for k, v in names.items() if "{" + k + "}" in text})


def _replace_operand(node: cst.BaseExpression, index: int, value: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(node, cst.BinaryOperation):
        return node.with_changes(left=value) if index == 0 else node.with_changes(right=value)
    if isinstance(node, cst.UnaryOperation):
        return node.with_changes(expression=value)
    if isinstance(node, cst.Call):
        args = list(node.args)
        args[index] = args[index].with_changes(value=value)
        return node.with_changes(args=args)
    return node
