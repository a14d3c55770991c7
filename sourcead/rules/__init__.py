"""Every primitive of the subset, declared once (see `forms.py` for what a declaration holds).

    elementwise.py   operators, math functions and their NumPy twins, abs, min, max, float
    arrays.py        reductions, products, selections, reshapes, creation, sizes; methods
    arrangements.py  flips, rolls, joins, triangles, np.atleast_2d, np.eye, np.identity
    piecewise.py     int, round, floor, sign, comparisons, logic; module constants
    custom.py        the custom-rule registry (`sourcead.custom_rule`): user functions with their partials

The passes find a node's primitive with `classify` (operators, calls and attributes alike) or a
name's with `primitive`; custom rules (`sourcead.custom_rule`) are primitives too.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ..ir.exprs import dotted
from .arrangements import ARRANGEMENTS
from .arrays import ARRAYS, ATTRIBUTES, METHODS
from .custom import custom_primitive
from .elementwise import ELEMENTWISE, OPERATOR_NODES, OPERATORS, UFUNC_OPERATORS
from .forms import (
    Args,
    Bilinear,
    Constant,
    Derivative,
    Joint,
    Method,
    Partials,
    Primitive,
    Pullback,
    ResultError,
    SecondOrderGap,
    Selection,
)
from .nested import nested_primitive
from .piecewise import CONSTANTS, PIECEWISE
from .signature import BindError, Bound, Signature, bind
from .tangents import TANGENT_HELPERS

PRIMITIVES: dict[str, Primitive] = {
    p.name: p
    for p in (*ELEMENTWISE, *UFUNC_OPERATORS, *OPERATORS, *ARRAYS, *ARRANGEMENTS, *PIECEWISE, *TANGENT_HELPERS)
}
METHOD_TABLE: dict[str, Method] = {m.name: m for m in METHODS}
CONSTANT_TABLE: dict[str, Constant] = {c.name: c for c in CONSTANTS}
# canonical dtype literals; np.float32 is float storage (its primitive `dtype.float32` types it so)
DTYPES = {"np.float64": "float", "np.int64": "int", "np.bool_": "bool", "np.float32": "float32"}
NOT_LITERAL = object()


@dataclass(frozen=True)
class DtypeOf:
    """`dtype=x.dtype` as a literal: the dtype of variable `x`, which its type (kinds) says."""

    name: str


def primitive(name: str) -> Primitive | None:
    """The primitive with canonical name `name` (a custom rule's key included), or None."""
    found = PRIMITIVES.get(name)
    if found is not None:
        return found
    return custom_primitive(name) or nested_primitive(name)


def literal(node: cst.BaseExpression) -> object:
    """The value of a literal argument in core form (an int, a float, a bool, None, a tuple of
    them, or a dtype name), or NOT_LITERAL."""
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.Float):
        return float(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = literal(node.expression)
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else NOT_LITERAL
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.Tuple):
        items = [literal(e.value) for e in node.elements]
        return NOT_LITERAL if NOT_LITERAL in items else tuple(items)
    if isinstance(node, cst.Attribute) and node.attr.value == "dtype" and isinstance(node.value, cst.Name):
        return DtypeOf(node.value.value)
    return DTYPES.get(dotted(node), NOT_LITERAL)


def is_literal(node: cst.BaseExpression) -> bool:
    return literal(node) is not NOT_LITERAL


def classify(node: cst.CSTNode) -> tuple[Primitive, Bound] | None:
    """The primitive a core-form node applies and its arguments, or None for leaves (names,
    numbers, element and slice reads) and nodes that are not operations."""
    if isinstance(node, cst.BinaryOperation):
        name = OPERATOR_NODES.get(type(node.operator))
        names = ("a", "b") if name == "MatrixMultiply" else ("x", "y")
        return (PRIMITIVES[name], Bound(dict(zip(names, (node.left, node.right), strict=True)))) if name else None
    if isinstance(node, cst.UnaryOperation):
        name = OPERATOR_NODES[type(node.operator)]
        return PRIMITIVES[name], Bound({"x": node.expression})
    if isinstance(node, cst.Comparison):
        operands = (node.left, *(c.comparator for c in node.comparisons))
        return PRIMITIVES["compare"], Bound({"x": operands[0], "y": operands[1]}, operands)
    if isinstance(node, cst.BooleanOperation):
        name = "and" if isinstance(node.operator, cst.And) else "or"
        return PRIMITIVES[name], Bound({"x": node.left, "y": node.right})
    if isinstance(node, cst.Attribute) and node.attr.value in ("size", "ndim", "shape", "dtype"):
        return PRIMITIVES[node.attr.value], Bound({"a": node.value})
    if isinstance(node, cst.Attribute) and dotted(node) in DTYPES:  # np.float64 as a dtype= argument
        return PRIMITIVES[f"dtype.{DTYPES[dotted(node)]}"], Bound({})
    if isinstance(node, cst.Call):
        prim = primitive(dotted(node.func))
        if prim is None:
            return None
        return prim, bind(prim.signature, list(node.args), prim.name, node, is_literal)
    return None


def new_array_shape(node: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    """For a call that makes a new array, the parameter its shape comes from (`Primitive.shaped_as`:
    "shape" for np.zeros(shape), "a" for np.zeros_like(a) and np.copy(a)) and that argument."""
    if not isinstance(node, cst.Call):
        return None
    try:
        found = classify(node)
    except BindError:
        return None
    if found is None:
        return None
    prim, bound = found
    if prim.shaped_as is None:
        return None
    argument = bound.get(prim.shaped_as)
    return None if argument is None else (prim.shaped_as, argument)


def runtime_helpers() -> frozenset[str]:
    """Every runtime helper that a primitive's derivative may call."""
    return frozenset(h for p in PRIMITIVES.values() for h in p.helpers)


__all__ = [
    "ATTRIBUTES",
    "CONSTANT_TABLE",
    "DTYPES",
    "DtypeOf",
    "METHOD_TABLE",
    "NOT_LITERAL",
    "PRIMITIVES",
    "Args",
    "BindError",
    "Bilinear",
    "Bound",
    "Constant",
    "Derivative",
    "Joint",
    "Method",
    "Partials",
    "Primitive",
    "Pullback",
    "ResultError",
    "SecondOrderGap",
    "Selection",
    "Signature",
    "bind",
    "classify",
    "is_literal",
    "literal",
    "primitive",
    "runtime_helpers",
]
