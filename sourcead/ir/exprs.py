"""Small helpers to build, inspect and print libcst expressions.

Generated code is built from libcst nodes (rule templates are instantiated by `template`), so
substituted operands are parenthesized here, never by string concatenation.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterator, Sequence

import libcst as cst
import numpy as np

_MODULE = cst.Module(body=[])

# Nodes that never need parentheses when they become an operand.
_ATOMS = (cst.Name, cst.Integer, cst.Float, cst.Subscript, cst.Call, cst.Attribute)


def code(node: cst.CSTNode) -> str:
    """The source text of a node."""
    return _MODULE.code_for_node(node)


def name(identifier: str) -> cst.Name:
    return cst.Name(identifier)


def number(value: float) -> cst.BaseExpression:
    """A float literal; infinities and NaN are `math.inf` and `math.nan` (numba freezes both)."""
    value = float(value)
    if math.isnan(value):
        return cst.parse_expression("math.nan")
    if math.isinf(value):
        return cst.parse_expression("math.inf" if value > 0 else "-math.inf")
    text = repr(value)
    if text.startswith("-"):
        return cst.UnaryOperation(cst.Minus(), cst.Float(text[1:]))
    return cst.Float(text)


Frozen = bool | int | float | np.ndarray  # a global numba freezes, and so do we (`resolve.is_frozen_constant`)


def transformed(node: cst.BaseExpression, transformer: cst.CSTTransformer) -> cst.BaseExpression:
    """`node` rewritten by `transformer`, which must leave an expression (not remove it)."""
    result = node.visit(transformer)
    assert isinstance(result, cst.BaseExpression), result
    return result


def constant_node(value: bool | int | float) -> cst.BaseExpression:
    """A frozen constant as a literal: `True`, `3`, `-2`, `0.5`, `math.inf`."""
    if isinstance(value, bool):
        return cst.Name(str(value))
    if isinstance(value, int):
        return cst.Integer(str(value)) if value >= 0 else cst.UnaryOperation(cst.Minus(), cst.Integer(str(-value)))
    return number(value)


def constant_text(value: Frozen) -> str:
    """A frozen global as text: a literal, or `np.array([...], dtype=...)` for an array."""
    if isinstance(value, np.ndarray):
        return f"np.array({value.tolist()!r}, dtype=np.{value.dtype.name})"
    return code(constant_node(value))


def is_atom(node: cst.BaseExpression) -> bool:
    """Names, numbers (also negative ones), subscripts, calls, attributes, parenthesized nodes."""
    return isinstance(node, _ATOMS) or bool(getattr(node, "lpar", ())) or _is_negative_number(node)


def is_cheap(node: cst.BaseExpression, depth: int = 1) -> bool:
    """Cheap to evaluate again: names, numbers, attributes, elements and views at index arithmetic,
    and one operation on such values (`1.0 - x`). Anything else that a derivative reads twice is
    bound to a temporary first."""
    node = unparen(node)
    if isinstance(node, (cst.Name, cst.Integer, cst.Float)) or _is_negative_number(node):
        return True
    if isinstance(node, cst.Attribute):
        return is_cheap(node.value, 0)
    if isinstance(node, cst.Subscript):
        return is_cheap(node.value, 0) and all(_is_cheap_index(e.slice) for e in node.slice)
    if (
        depth
        and isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply))
    ):
        return is_cheap(node.left, 0) and is_cheap(node.right, 0)
    if depth and isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return is_cheap(node.expression, 0)
    return False


def _is_cheap_index(part: cst.BaseSlice) -> bool:
    if isinstance(part, cst.Index):
        return _is_index(part.value)
    return all(p is None or _is_index(p) for p in (part.lower, part.upper, part.step))  # type: ignore[attr-defined]


def _is_index(node: cst.BaseExpression) -> bool:
    """An index expression of loop-counter arithmetic: `i`, `i + 1`, `n - i - 1`."""
    node = unparen(node)
    if isinstance(node, (cst.Name, cst.Integer)):
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
        return _is_index(node.left) and _is_index(node.right)
    return False


def _is_negative_number(node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, (cst.Integer, cst.Float))
    )


def paren(node: cst.BaseExpression) -> cst.BaseExpression:
    """`node`, parenthesized unless it is an atom."""
    if is_atom(node):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def unparen(node: cst.BaseExpression) -> cst.BaseExpression:
    if getattr(node, "lpar", ()):
        return node.with_changes(lpar=[], rpar=[])
    return node


_CONFIG = cst.PartialParserConfig()  # libcst's default, passed so that no operand is taken for it


def template(text: str, **operands: cst.BaseExpression) -> cst.BaseExpression:
    """Instantiate an expression template such as `"1.0 - {z} * {z}"` (every `{name}` must be given).

    What libcst's `parse_template_expression` gives, but each template is parsed once: its
    placeholders become names, and each instance replaces them by copies of the operands
    (parsing the template again per instance was a tenth of a reverse transform's time)."""
    parsed = _TEMPLATES.get(text)
    if parsed is None:
        placeholders = frozenset(_PLACEHOLDER.findall(text))
        mangled = _PLACEHOLDER.sub(lambda m: _MANGLED + m.group(1), text)
        parsed = _TEMPLATES[text] = (cst.parse_expression(mangled, _CONFIG), placeholders)
    expression, placeholders = parsed
    if not placeholders <= operands.keys():
        raise ValueError(f"template {text!r} takes {sorted(placeholders)}, given {sorted(operands)}")
    mapping = {_MANGLED + k: paren(operands[k]).deep_clone() for k in placeholders}
    return transformed(expression, Rename(mapping))


_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_MANGLED = "__sourcead_template_"
_TEMPLATES: dict[str, tuple[cst.BaseExpression, frozenset[str]]] = {}


def is_number(node: cst.BaseExpression, value: float | None = None) -> bool:
    node = unparen(node)
    if isinstance(node, (cst.Integer, cst.Float)):
        return value is None or float(node.evaluated_value) == value
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = unparen(node.expression)
        if isinstance(inner, (cst.Integer, cst.Float)):
            return value is None or -float(inner.evaluated_value) == value
    return False


def number_value(node: cst.BaseExpression) -> float:
    """The value of a number literal, `-2` included; AttributeError for any other node (callers
    that may meet one catch it)."""
    node = unparen(node)
    if isinstance(node, cst.UnaryOperation):
        return -float(_evaluated(unparen(node.expression)))
    return float(_evaluated(node))


def _evaluated(node: cst.BaseExpression) -> float:
    if not isinstance(node, (cst.Integer, cst.Float)):
        raise AttributeError(f"{type(node).__name__} is not a number literal")
    return node.evaluated_value


def _precedence(node: cst.BaseExpression) -> int:
    if is_atom(node):
        return 10
    if isinstance(node, cst.BinaryOperation):
        op = node.operator
        if isinstance(op, cst.Power):
            return 5
        if isinstance(op, (cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo)):
            return 3
        if isinstance(op, (cst.Add, cst.Subtract)):
            return 2
    if isinstance(node, cst.UnaryOperation):
        return 4
    return 0


def operand(node: cst.BaseExpression, parent: int, right: bool) -> cst.BaseExpression:
    """`node` as an operand of an operator of precedence `parent`, parenthesized only if needed."""
    own = _precedence(node)
    if own < parent or (right and own == parent):
        return paren(node)
    return node


def times(factor: cst.BaseExpression, other: cst.BaseExpression, arrays: bool = False) -> cst.BaseExpression:
    """`factor * other`, with the trivial factors 1 and -1 folded away. A selected derivative
    (`(d if m else 0.0)`, `np.where(m, d, 0.0)`) takes the factor inside, so an unselected operand
    contributes exactly 0.0 even where the factor is infinite (never 0 * inf). `arrays`: either
    may be an array, which a float's `(d if m else 0.0)` cannot take inside (numba types both
    branches alike): there the product stays outside."""
    for a, b in ((factor, other), (other, factor)):
        selected = _selected(b, conditional=not arrays)
        if selected is not None:
            rebuild, chosen = selected
            return rebuild(times(a, chosen, arrays) if a is factor else times(chosen, a, arrays))
    if is_number(factor, 1.0):
        return other
    if is_number(factor, -1.0):
        return negate(other)
    if is_number(other, 1.0):
        return factor
    return cst.BinaryOperation(operand(factor, 3, False), cst.Multiply(), operand(other, 3, True))


def _selected(node: cst.BaseExpression, conditional: bool = True):
    """For `(d if m else 0.0)` (where `conditional`) or `np.where(m, d, 0.0)`: (a function
    rebuilding it around a new d, d)."""
    inner = unparen(node)
    if conditional and isinstance(inner, cst.IfExp) and is_number(inner.orelse, 0.0):
        return (lambda d: paren(inner.with_changes(body=d))), inner.body
    if (
        isinstance(inner, cst.Call)
        and dotted(inner.func) == "np.where"
        and len(inner.args) == 3
        and is_number(inner.args[2].value, 0.0)
    ):
        args = list(inner.args)
        return (lambda d: inner.with_changes(args=[args[0], args[1].with_changes(value=unparen(d)), args[2]])), args[
            1
        ].value
    return None


def negate(node: cst.BaseExpression) -> cst.BaseExpression:
    inner = unparen(node)
    if isinstance(inner, cst.UnaryOperation) and isinstance(inner.operator, cst.Minus):
        return inner.expression
    return cst.UnaryOperation(cst.Minus(), operand(node, 4, False))


def plus(terms: list[cst.BaseExpression]) -> cst.BaseExpression:
    """The sum of `terms`, written `a + b - c` rather than `a + (-c)`."""
    total = operand(terms[0], 2, False) if len(terms) > 1 else terms[0]
    for term in terms[1:]:
        inner = unparen(term)
        if isinstance(inner, cst.UnaryOperation) and isinstance(inner.operator, cst.Minus):
            total = cst.BinaryOperation(total, cst.Subtract(), operand(inner.expression, 2, True))
        else:
            total = cst.BinaryOperation(total, cst.Add(), operand(term, 2, True))
    return total


def names_in(node: cst.CSTNode) -> set[str]:
    """Every variable name read in `node` (not attribute names, not called functions).

    A fresh set each call (callers add to it); the names of a node are kept, since libcst nodes
    are immutable and every pass asks again about the same statements (a third of the pipeline's
    time before).
    """
    names = _NAMES.get(node)
    if names is None:
        found: set[str] = set()
        _collect_names(node, found)
        if len(_NAMES) >= _NAMES_KEPT:
            _NAMES.clear()  # one call, safe while another thread transforms too
        names = _NAMES[node] = frozenset(found)
    return set(names)


# Keyed by node (identity); holding the node keeps its id from being reused.
_NAMES: dict[cst.CSTNode, frozenset[str]] = {}
_NAMES_KEPT = 100_000


def children(node: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """`node.children`, kept per node as `names_in` keeps names: libcst computes them by visiting
    the node each time, and the passes ask about each node three times on average (a sixth of a
    transform's time)."""
    found = _CHILDREN.get(node)
    if found is None:
        if len(_CHILDREN) >= _NAMES_KEPT:
            _CHILDREN.clear()
        found = _CHILDREN[node] = node.children
    return found


_CHILDREN: dict[cst.CSTNode, Sequence[cst.CSTNode]] = {}


def _collect_names(node: cst.CSTNode, found: set[str]) -> None:
    if isinstance(node, cst.Name):
        found.add(node.value)
    elif isinstance(node, cst.Attribute):
        _collect_names(node.value, found)
    elif isinstance(node, cst.Call):
        if not isinstance(node.func, cst.Name):
            _collect_names(node.func, found)
        for arg in node.args:
            _collect_names(arg.value, found)  # not the keyword's name
    else:
        for child in parts(node):
            _collect_names(child, found)


def parts(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The child nodes of `node` that can hold code, read from its fields: `children` without
    the tokens and whitespace, in field order (not always the order of the text: an `IfExp`'s
    test comes first), and without the visit libcst makes to compute `children` (a visit builds
    every node again: a full one per pass was half a reverse transform's time). For questions
    whose answer does not depend on order: the names read, whether a kind of node occurs."""
    for field in _code_fields(type(node)):
        value = getattr(node, field)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (tuple, list)):
            yield from (v for v in value if isinstance(v, cst.CSTNode))


def all_names(node: cst.CSTNode) -> set[str]:
    """Every name in `node`: variables, functions called, attribute names, keywords (the names a
    fresh one must differ from)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, cst.Name):
            found.add(item.value)
        else:
            stack.extend(parts(item))
    return found


def contains(node: cst.CSTNode, kind: type[cst.CSTNode] | tuple[type[cst.CSTNode], ...]) -> bool:
    """Whether `node` or a node inside it is a `kind`."""
    return isinstance(node, kind) or any(contains(child, kind) for child in parts(node))


_TOKENS = frozenset({"lpar", "rpar", "lbracket", "rbracket", "lbrace", "rbrace", "comma", "semicolon",
                     "equal", "colon", "operator", "asynchronous", "header", "footer", "leading_lines",
                     "lines_after_decorators"})  # fmt: skip
_FIELDS: dict[type, tuple[str, ...]] = {}


def _code_fields(kind: type) -> tuple[str, ...]:
    found = _FIELDS.get(kind)
    if found is None:
        names = (f.name for f in dataclasses.fields(kind))
        found = _FIELDS[kind] = tuple(n for n in names if n not in _TOKENS and not n.startswith("whitespace"))
    return found


def subscript_indices(node: cst.Subscript) -> list[cst.BaseExpression]:
    """The indices of `a[i, j]`; a slice (`a[1:-1]`, `a[:, j]`) stands as its `cst.Slice` node."""
    return [e.slice.value if isinstance(e.slice, cst.Index) else e.slice for e in node.slice]  # type: ignore[misc]


def has_slice(node: cst.Subscript) -> bool:
    return any(isinstance(e.slice, cst.Slice) for e in node.slice)


def subscript(array: str, indices: list[cst.BaseExpression]) -> cst.Subscript:
    elements = [
        cst.SubscriptElement(
            cst.Index(index),
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            if k < len(indices) - 1
            else cst.MaybeSentinel.DEFAULT,
        )
        for k, index in enumerate(indices)
    ]
    return cst.Subscript(cst.Name(array), elements)


def dotted(node: cst.BaseExpression) -> str:
    """`np.zeros` for the expression np.zeros; "" for anything but names and attributes."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        prefix = dotted(node.value)
        return f"{prefix}.{node.attr.value}" if prefix else ""
    return ""


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in children(node):
        yield from walk(child)


class Rename(cst.CSTTransformer):
    """Replace variables by expressions (not attribute names or keywords; parameters only if asked)."""

    def __init__(self, mapping: dict[str, cst.BaseExpression], params: bool = False):
        self.mapping = mapping
        self.params = params

    def visit_Param(self, node: cst.Param) -> bool:
        return self.params

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        new = self.mapping.get(original.value)
        return new if new is not None else updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)
