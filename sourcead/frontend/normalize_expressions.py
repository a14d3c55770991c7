"""Part of the pass `normalize` (see `normalize.py`): expressions, in Python's evaluation order.

Decides what runs before a value and how the value reads it: the statements an expression needs
first (an inlined call, a conditional expression made an if statement, the right of `and`/`or`
when it has effects), the values saved because a later part may change them (`sequence`), and
how names, attributes and subscripts read in core form (a tuple's elements, a frozen constant,
`A[i][j]` as `A[i, j]`, `x[:, None]` as a reshape). `Expressions` also holds the state the
normalizer's parts share (the function, the namer, tuple variables, constants read).
"""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from ..ir.core import Assign, If, Stmt, assigned_names
from ..ir.exprs import Frozen, code, constant_node, names_in, unparen
from ..ir.naming import Namer
from ..rules import ATTRIBUTES
from .bound_names import local_names
from .parse import ParsedFunction
from .resolve import canonical_func_node, is_frozen_constant, lookup

Flat = tuple[list[Stmt], cst.BaseExpression]  # statements to run first, and the value reading their results


class Expressions:
    """The normalizer's state, its errors, and its expressions (the root of `Normalizer`)."""

    def __init__(self, parsed: ParsedFunction, namer: Namer, callers: tuple = ()):
        self.parsed = parsed
        self.namer = namer
        self.callers = callers  # the functions being inlined into, to reject recursion
        self.current: cst.CSTNode = parsed.node  # the user statement being normalized, for errors
        self.params = tuple(p.name.value for p in parsed.node.params.params)
        self.constants: dict[str, Frozen] = {}
        self.custom: set[str] = set()  # custom rules called (keys)
        self.locals = local_names(parsed.node)
        self.tuples: dict[str, tuple[str, ...]] = {}  # a tuple variable -> its element variables

    def fail(self, message: str, node: cst.CSTNode | None = None, hint: str = "") -> Exception:
        return self.parsed.error(message, self.where(node) if node is not None else self.current, hint)

    def where(self, node: cst.CSTNode) -> cst.CSTNode:
        """`node` if it has a file position (rewritten nodes do not), else the statement at hand."""
        return node if self.parsed.locate(node) else self.current

    # --- provided by the parts built on this one (normalize_calls.py, normalize_statements.py) -----

    def call(self, node: cst.Call, result_used: bool = True) -> Flat:
        """A call in core form: a primitive's canonical call, or a user function inlined."""
        raise NotImplementedError

    def assign(self, target: cst.BaseExpression, value: cst.BaseExpression, origin) -> list[Stmt]:
        """`target = value`, with tuples scalarized."""
        raise NotImplementedError

    # --- expressions, in Python's evaluation order ----------------------------------------------

    def value(self, node: cst.BaseExpression, result_used: bool = True) -> Flat:
        """The statements that must run before `node` (inlined calls, hoisted conditional
        expressions) and `node` in core form, reading their results."""
        return self.flat(_one_line(node), result_used)

    def sequence(self, nodes: list[cst.BaseExpression]) -> tuple[list[Stmt], list[cst.BaseExpression]]:
        """Several values evaluated left to right: a value that a later one's statements may
        change (an array a later call writes) is saved before those statements run."""
        flats = [self.flat(n) for n in nodes]
        pre: list[Stmt] = []
        values: list[cst.BaseExpression] = []
        for k, (before, value) in enumerate(flats):
            pre += before
            later = assigned_names(tuple(s for b, _ in flats[k + 1 :] for s in b))
            if names_in(value) & later and not isinstance(value, cst.Name):
                # Python holds a name's array by reference (a later write is seen through it), an
                # element by value and a row or slice as a view: a plain assignment does the same;
                # a computed value is computed now (snapshot copies an array result)
                saved = cst.Name(self.namer.fresh("before"))
                now = value if isinstance(value, cst.Subscript) else cst.Call(cst.Name("snapshot"), [cst.Arg(value)])
                pre.append(Assign(saved, now, None, self.current))
                value = saved
            values.append(value)
        return pre, values

    def flat(self, node: cst.BaseExpression, result_used: bool = True) -> Flat:
        if isinstance(node, (cst.Integer, cst.Float)):
            return [], node
        if isinstance(node, cst.Name):
            return [], self.name(node)
        if isinstance(node, cst.IfExp):
            name = cst.Name(self.namer.fresh("choice"))
            return self.conditional(name, node), name
        if isinstance(node, cst.Attribute):
            return self.attribute(node)
        if isinstance(node, cst.Subscript):
            return self.subscript(node)
        if isinstance(node, cst.Call):
            return self.call(node, result_used)
        if isinstance(node, cst.Tuple):
            pre, values = self.sequence([e.value for e in node.elements])
            return pre, cst.Tuple([cst.Element(v) for v in values])
        if isinstance(node, cst.BinaryOperation):
            pre, (left, right) = self.sequence([node.left, node.right])
            return pre, node.with_changes(left=left, right=right)
        if isinstance(node, cst.UnaryOperation):
            pre, operand = self.flat(node.expression)
            return pre, node.with_changes(expression=operand)
        if isinstance(node, cst.Comparison):
            pre, values = self.sequence([node.left, *(c.comparator for c in node.comparisons)])
            comparisons = [c.with_changes(comparator=v) for c, v in zip(node.comparisons, values[1:], strict=True)]
            return pre, node.with_changes(left=values[0], comparisons=comparisons)
        if isinstance(node, cst.BooleanOperation):
            return self.boolean(node)
        raise self.fail(f"unsupported expression: {type(node).__name__}", node)

    def conditional(self, target: cst.BaseExpression, node: cst.IfExp) -> list[Stmt]:
        """`target = a if c else b` as an if statement: only the chosen branch runs."""
        pre, test = self.flat(node.test)
        then_pre, then = self.flat(node.body)
        else_pre, orelse = self.flat(node.orelse)
        then_stmts = then_pre + self.assign(target, then, node)
        else_stmts = else_pre + self.assign(target, orelse, node)
        return pre + [If(test, tuple(then_stmts), tuple(else_stmts), node)]

    def boolean(self, node: cst.BooleanOperation) -> Flat:
        """`a and b` / `a or b`; when `b` needs statements first, they run only when Python would
        evaluate `b` (an if statement setting a flag)."""
        pre, left = self.flat(node.left)
        right_pre, right = self.flat(node.right)
        if not right_pre:
            return pre, node.with_changes(left=left, right=right)
        flag = cst.Name(self.namer.fresh("both" if isinstance(node.operator, cst.And) else "either"))
        test = flag if isinstance(node.operator, cst.And) else cst.UnaryOperation(cst.Not(), flag)
        run_right = If(test, tuple(right_pre + [Assign(flag, right, None, node)]), (), node)
        return pre + [Assign(flag, left, None, node), run_right], flag

    def name(self, node: cst.Name) -> cst.BaseExpression:
        elements = self.tuples.get(node.value)
        if elements is not None:
            return cst.Tuple([cst.Element(cst.Name(n)) for n in elements])
        if node.value in self.locals or node.value in ("True", "False"):
            return node
        value = lookup(node, self.parsed.globals)
        if is_frozen_constant(value):
            self.constants[node.value] = value
        return node

    def attribute(self, node: cst.Attribute) -> Flat:
        value: Any = lookup(node, self.parsed.globals) if not _rooted_at(node, self.locals) else None
        if is_frozen_constant(value):
            return [], constant_node(value)  # math.pi, np.inf, cfg.N: frozen, as numba freezes them
        pre, owner = self.flat(node.value)
        kind = ATTRIBUTES[node.attr.value]
        if kind == "np.transpose":  # x.T is np.transpose(x): one primitive for both spellings
            return pre, cst.Call(canonical_func_node(kind), [cst.Arg(owner)])
        return pre, node.with_changes(value=owner)

    def subscript(self, node: cst.Subscript) -> Flat:
        pre, base = self.flat(node.value)
        if not isinstance(base, (cst.Name, cst.Tuple, cst.Subscript)) and not _is_shape(base):
            temp = cst.Name(self.namer.fresh("part"))  # (A @ x)[0]: the value first, then its element
            pre.append(Assign(temp, unparen(base), None, self.current))
            base = temp
        if any(isinstance(e.slice, cst.Index) and _is_new_axis(e.slice.value, self.parsed) for e in node.slice):
            before, reshaped = self.new_axes(base, node)
            return pre + before, reshaped
        parts: list[cst.BaseExpression] = []
        for element in node.slice:
            if isinstance(element.slice, cst.Slice):
                parts += [p for p in (element.slice.lower, element.slice.upper, element.slice.step) if p is not None]
            elif isinstance(element.slice, cst.Index):
                parts.append(element.slice.value)
        before, values = self.sequence(parts)
        pre += before
        it = iter(values)
        elements = []
        for element in node.slice:
            if isinstance(element.slice, cst.Slice):
                s = element.slice
                s = s.with_changes(
                    lower=next(it) if s.lower is not None else None,
                    upper=next(it) if s.upper is not None else None,
                    step=next(it) if s.step is not None else None,
                )
                elements.append(element.with_changes(slice=s))
            else:
                elements.append(element.with_changes(slice=element.slice.with_changes(value=next(it))))
        if isinstance(base, cst.Tuple):  # p[0] of a tuple: that element
            return pre, self.tuple_element(base, elements, node)
        if isinstance(base, cst.Subscript) and not _has_slices(base) and isinstance(base.value, cst.Name):
            # A[i][j] is A[i, j] (a row indexed again), so a row passed to a function stays an element of A
            merged = [*base.slice[:-1], base.slice[-1].with_changes(comma=_COMMA), *elements]
            return pre, base.with_changes(slice=merged)
        if not isinstance(base, cst.Name) and not _is_shape(base):
            raise self.fail(
                "only a named array can be indexed here",
                node,
                "Assign the value to a variable first, then index it: `y = A @ x; y[0]`.",
            )
        return pre, node.with_changes(value=base, slice=elements)

    def new_axes(self, base: cst.BaseExpression, node: cst.Subscript) -> Flat:
        """`x[:, None]` is `np.reshape(x, (x.shape[0], 1))`: a 1 for each new axis, the sizes of x
        for the full slices (the fence allows nothing else beside new axes)."""
        pre: list[Stmt] = []
        if not isinstance(base, cst.Name):  # A[i][:, None]: the row first
            temp = cst.Name(self.namer.fresh("part"))
            pre.append(Assign(temp, base, None, self.current))
            base = temp
        sizes, axis = [], 0
        for element in node.slice:
            if isinstance(element.slice, cst.Slice):
                sizes.append(cst.parse_expression(f"{base.value}.shape[{axis}]"))
                axis += 1
            else:
                sizes.append(cst.Integer("1"))
        shape = cst.Tuple([cst.Element(size) for size in sizes])
        return pre, cst.Call(canonical_func_node("np.reshape"), [cst.Arg(base), cst.Arg(shape)])

    def tuple_element(self, base: cst.Tuple, elements, node) -> cst.BaseExpression:
        if len(elements) != 1 or isinstance(elements[0].slice, cst.Slice):
            raise self.fail("a tuple is indexed with one integer", node, "Write p[0], p[1], ...")
        index = elements[0].slice.value
        from ..rules import literal

        k = literal(index)
        if not isinstance(k, int) or isinstance(k, bool) or not -len(base.elements) <= k < len(base.elements):
            raise self.fail(
                f"a tuple of {len(base.elements)} is indexed with a constant here",
                node,
                f"Index it with 0 to {len(base.elements) - 1}; unpack it with `a, b = p`.",
            )
        return base.elements[k].value


_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _one_line(node: cst.BaseExpression) -> cst.BaseExpression:
    """An expression the user wrapped over several lines (inside brackets), on one line: generated
    statements are one line each. Comments inside it are dropped."""
    text = code(node)
    if "\n" not in text:
        return node
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    joined = re.sub(r"([(\[])\s+", r"\1", " ".join(part for part in lines if part))
    return cst.parse_expression(re.sub(r"\s+([)\]])", r"\1", joined).replace(",)", ")"))


def _has_slices(node: cst.Subscript) -> bool:
    return any(isinstance(e.slice, cst.Slice) for e in node.slice)


def _is_shape(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == "shape"


def _rooted_at(node: cst.Attribute, names: set[str]) -> bool:
    root: cst.BaseExpression = node
    while isinstance(root, cst.Attribute):
        root = root.value
    return isinstance(root, cst.Name) and root.value in names


def _is_new_axis(node: cst.BaseExpression, parsed: ParsedFunction) -> bool:
    from .fence_expressions import is_numpy

    if isinstance(node, cst.Name):
        return node.value == "None"
    return isinstance(node, cst.Attribute) and node.attr.value == "newaxis" and is_numpy(node.value, parsed)
