"""Kinds of values: float, int or array, inferred from how the code uses each name.

Parameters get their kind from usage (indexed, `.shape`, `len`, `.copy()` -> array; a `range`
bound or an index -> int; otherwise float), locals from what is assigned to them, to a fixed
point over loops. Only floats and float arrays can carry derivatives; ints never do.
The prepared derivative checks at call time that the arguments have these kinds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import libcst as cst

from . import custom
from .core import Assign, CoreFunction, For, If, Permute, While, walk_statements
from .exprs import dotted, has_slice, subscript_indices, walk
from .parse import ParsedFunction
from .rules import (
    ARRAY_CREATION,
    BILINEAR,
    CONSTANT_FUNCTIONS,
    ELEMENTWISE,
    INTEGER_FUNCTIONS,
    REDUCTIONS,
    RESHAPES,
    SELECTIONS,
)

FLOAT, INT, BOOL, ARRAY = "float", "int", "bool", "array"


@dataclass(frozen=True)
class Kinds:
    """The kind of every variable, and the number of indices of every array (its ndim)."""

    of: Mapping[str, str]
    ndim: Mapping[str, int]
    free: frozenset[str] = frozenset()  # parameters whose use does not tell float from array: the call does

    def __getitem__(self, var: str) -> str:
        return self.of.get(var, FLOAT)

    def is_float(self, var: str) -> bool:
        return self[var] == FLOAT

    def is_array(self, var: str) -> bool:
        return self[var] == ARRAY

    def carries(self, var: str) -> bool:
        """Can `var` carry a derivative? Floats and float arrays can; ints and bools never."""
        return self[var] in (FLOAT, ARRAY)


def infer_kinds(fn: CoreFunction, parsed: ParsedFunction, given: Mapping[str, str] | None = None) -> Kinds:
    """Kinds from usage; `given` (from the call's arguments) decides the parameters that usage leaves free."""
    params, free = _param_kinds(fn)
    ndim: dict[str, int] = {}
    _note_ndims(fn, parsed, ndim)
    free |= {p for p, kind in params.items() if kind == ARRAY and p not in ndim}  # ndim from the call
    for name in free:
        kind, _, dims = (given or {}).get(name, params[name]).partition(":")
        if params[name] != ARRAY:
            params[name] = ARRAY if kind == ARRAY else FLOAT
        if params[name] == ARRAY:
            ndim[name] = int(dims) if dims and kind == ARRAY else 1
    of: dict[str, str] = dict(params)
    for name, value in fn.constants:
        of[name] = INT if isinstance(value, int) else FLOAT
    changed = True
    while changed:
        changed = False
        for stmt in walk_statements(fn.body):
            if isinstance(stmt, For):
                changed |= _join(of, stmt.var, INT, parsed, stmt.origin)
            elif isinstance(stmt, Permute):
                for target, source in zip(stmt.targets, stmt.sources, strict=True):
                    if source in of:
                        changed |= _join(of, target, of[source], parsed, stmt.origin)
            elif isinstance(stmt, Assign) and not stmt.writes_element:
                kind = expr_kind(stmt.value, of, ndim)
                changed |= _join(of, stmt.var, kind, parsed, stmt.origin)
                if kind == ARRAY and stmt.var not in ndim:
                    ndim[stmt.var] = expr_ndim(stmt.value, of, ndim)
                    changed = True
    for stmt in walk_statements(fn.body):
        if isinstance(stmt, Assign) and stmt.writes_element and of.get(stmt.var) != ARRAY:
            raise parsed.error(f"`{stmt.var}` is indexed but it is not an array", stmt.origin)
        if isinstance(stmt, Assign) and of.get(stmt.var) == ARRAY and not stmt.writes_element:
            _check_array_value(stmt, parsed)
    return Kinds(of, ndim, frozenset(free))


def _check_array_value(stmt: Assign, parsed: ParsedFunction) -> None:
    """Whole arrays may be created, copied, renamed, or computed elementwise (arithmetic and the
    elementwise functions of the rule table, with NumPy broadcasting)."""
    for node in walk(stmt.value):
        if isinstance(node, cst.Call):
            key = dotted(node.func)
            if (
                key in ARRAY_CREATION | CONSTANT_FUNCTIONS | RESHAPES
                or key in SELECTIONS
                or key in ELEMENTWISE
                or key in REDUCTIONS
            ):
                continue
            if key in BILINEAR:
                continue
            if key.endswith(".copy"):
                continue
            if custom.by_name(key) is None:
                raise parsed.error(
                    f"`{key or 'this call'}` is not supported on whole arrays yet",
                    stmt.origin,
                    "Write a loop over the elements: `for i in range(len(x)): y[i] = ...`.",
                )


def expr_ndim(node: cst.BaseExpression, of: Mapping[str, str], ndim: Mapping[str, int]) -> int:
    """The number of dimensions of an expression's value (0 for numbers)."""
    if expr_kind(node, of, ndim) != ARRAY:
        return 0
    if isinstance(node, cst.Name):
        return ndim.get(node.value, 1)
    if isinstance(node, cst.UnaryOperation):
        return expr_ndim(node.expression, of, ndim)
    if isinstance(node, cst.Subscript):  # a slice keeps one dimension per slice index
        return sum(isinstance(e.slice, cst.Slice) for e in node.slice)
    if isinstance(node, cst.BinaryOperation):
        left, right = expr_ndim(node.left, of, ndim), expr_ndim(node.right, of, ndim)
        return matmul_ndim(left, right) if isinstance(node.operator, cst.MatrixMultiply) else max(left, right)
    if isinstance(node, cst.Call):
        key = dotted(node.func)
        args = [a.value for a in node.args]
        if key == "np.dot":
            return matmul_ndim(expr_ndim(args[0], of, ndim), expr_ndim(args[1], of, ndim))
        if key == "np.reshape":
            shape = args[1]
            return len(shape.elements) if isinstance(shape, cst.Tuple) else 1
        if key in ("np.outer", "np.transpose"):
            return 2 if key == "np.outer" else expr_ndim(args[0], of, ndim)
        if key == "np.cumsum" or key in ("np.arange", "np.linspace"):
            return 1
        if key in ("np.sum", "np.mean") and len(args) == 2:
            return expr_ndim(args[0], of, ndim) - 1
        if key in ("np.zeros", "np.ones", "np.empty", "np.full") and args and isinstance(args[0], cst.Tuple):
            return len(args[0].elements)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "copy":
            return expr_ndim(node.func.value, of, ndim)
        return max([expr_ndim(a, of, ndim) for a in args] or [1])
    return 1


def matmul_ndim(left: int, right: int) -> int:
    """ndim of `a @ b` for 1-D and 2-D operands: (1,1) -> 0, (2,1) and (1,2) -> 1, (2,2) -> 2."""
    return max(left + right - 2, 0)


def expr_kind(node: cst.BaseExpression, of: Mapping[str, str], ndim: Mapping[str, int] | None = None) -> str:
    """The kind of an expression's value, given the kinds (and ndims) of the names it reads."""
    if isinstance(node, cst.Integer):
        return INT
    if isinstance(node, cst.Float):
        return FLOAT
    if isinstance(node, cst.Name):
        if node.value in ("True", "False"):
            return BOOL
        return of.get(node.value, FLOAT)
    if isinstance(node, (cst.Comparison, cst.BooleanOperation)):
        return BOOL
    if isinstance(node, cst.UnaryOperation):
        if isinstance(node.operator, cst.Not):
            return BOOL
        inner = expr_kind(node.expression, of, ndim)
        return INT if inner == BOOL else inner
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, cst.MatrixMultiply):
            return _matmul_kind(node.left, node.right, of, ndim)
        left, right = (
            INT if k == BOOL else k for k in (expr_kind(node.left, of, ndim), expr_kind(node.right, of, ndim))
        )
        if ARRAY in (left, right):
            return ARRAY
        if isinstance(node.operator, cst.Divide):
            return FLOAT
        return INT if left == right == INT else FLOAT
    if isinstance(node, cst.Attribute) and node.attr.value == "size":
        return INT
    if isinstance(node, cst.Subscript):
        if _is_shape(node.value):
            return INT
        return ARRAY if has_slice(node) else FLOAT  # a slice, or an element of a float64 array
    if isinstance(node, cst.Call):
        return _call_kind(node, of, ndim)
    return FLOAT


def _matmul_kind(a: cst.BaseExpression, b: cst.BaseExpression, of: Mapping[str, str], ndim) -> str:
    dims = ndim or {}
    return FLOAT if matmul_ndim(expr_ndim(a, of, dims), expr_ndim(b, of, dims)) == 0 else ARRAY


def _call_kind(node: cst.Call, of: Mapping[str, str], ndim: Mapping[str, int] | None = None) -> str:
    func = node.func
    key = dotted(func)
    if key == "np.dot":
        return _matmul_kind(node.args[0].value, node.args[1].value, of, ndim)
    if key in ARRAY_CREATION or (isinstance(func, cst.Attribute) and func.attr.value == "copy"):
        return ARRAY
    if key in INTEGER_FUNCTIONS:
        return INT
    if key in ("np.sum", "np.mean") and len(node.args) == 2:  # over an axis: one dimension fewer
        return ARRAY if expr_ndim(node.args[0].value, of, ndim or {}) >= 2 else FLOAT
    if key in REDUCTIONS:
        return ARRAY if REDUCTIONS[key].keeps_shape else FLOAT
    if key in ("np.outer", "np.reshape"):
        return ARRAY
    kinds = {expr_kind(a.value, of, ndim) for a in node.args}
    if key in ("abs", "min", "max"):
        return INT if kinds <= {INT, BOOL} else FLOAT
    return ARRAY if ARRAY in kinds else FLOAT  # NumPy functions of arrays are arrays


def _param_kinds(fn: CoreFunction) -> tuple[dict[str, str], set[str]]:
    """Kinds of parameters from usage, and the parameters whose usage says nothing."""
    params = set(fn.params)
    kinds = {p: FLOAT for p in fn.params}
    statements = list(walk_statements(fn.body))
    copies = [(s.var, s.value.value) for s in statements if isinstance(s, Assign) and isinstance(s.value, cst.Name)]
    copies += [pair for s in statements if isinstance(s, Permute) for pair in zip(s.targets, s.sources, strict=True)]
    arrays: set[str] = set()
    for stmt in statements:
        for root in _roots(stmt):
            for node in walk(root):
                arrays.update(_array_uses(node))
    changed = True
    while changed:  # `y = x` and y used as an array: x is an array too
        changed = False
        for target, source in copies:
            if target in arrays and source not in arrays:
                arrays.add(source)
                changed = True
    for name in arrays & params:
        kinds[name] = ARRAY
    for stmt in statements:
        if isinstance(stmt, For):
            for bound in (stmt.start, stmt.stop, stmt.step):
                _mark_int(bound, params, kinds)
        for root in _roots(stmt):
            for node in walk(root):
                if isinstance(node, cst.Subscript) and not _is_shape(node.value):
                    for index in subscript_indices(node):
                        _mark_int(index, params, kinds)
    # Nothing says whether the others are floats or arrays (`x * w` works for both under NumPy):
    # the call decides.
    return kinds, {p for p in params - arrays if kinds[p] == FLOAT}


def _roots(stmt) -> list[cst.BaseExpression]:
    """The expressions a statement itself holds (not those of its nested blocks)."""
    if isinstance(stmt, For):
        return [stmt.start, stmt.stop, stmt.step]
    if isinstance(stmt, (If, While)):
        return [stmt.test]
    if isinstance(stmt, Assign):
        return [stmt.target, stmt.value]
    return []


def _mark_int(expr: cst.BaseExpression, params: set[str], kinds: dict[str, str]) -> None:
    """Names used directly as an index or a loop bound (in + - * // % arithmetic) are ints."""
    if isinstance(expr, cst.Name) and expr.value in params and kinds[expr.value] != ARRAY:
        kinds[expr.value] = INT
    elif isinstance(expr, cst.BinaryOperation) and not isinstance(expr.operator, cst.Divide):
        _mark_int(expr.left, params, kinds)
        _mark_int(expr.right, params, kinds)
    elif isinstance(expr, cst.UnaryOperation):
        _mark_int(expr.expression, params, kinds)


_ARRAY_ATTRIBUTES = ("shape", "copy", "size")


def _array_uses(node: cst.CSTNode) -> list[str]:
    """Names that this node uses as arrays."""
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
        return [node.value.value]
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.attr.value in _ARRAY_ATTRIBUTES:
        return [node.value.value]
    if isinstance(node, cst.Call) and dotted(node.func) in ("len", "np.zeros_like", "np.empty_like", *REDUCTIONS):
        arg = node.args[0].value if node.args else None
        return [arg.value] if isinstance(arg, cst.Name) else []
    operands: list[cst.BaseExpression] = []
    if isinstance(node, cst.Call) and dotted(node.func) == "np.dot":
        operands = [a.value for a in node.args]
    elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.MatrixMultiply):
        operands = [node.left, node.right]
    return [o.value for o in operands if isinstance(o, cst.Name)]


def _note_ndims(fn: CoreFunction, parsed: ParsedFunction, ndim: dict[str, int]) -> None:
    """Every array must be indexed with the same number of indices everywhere."""
    for stmt in walk_statements(fn.body):
        for root in _roots(stmt):
            for node in walk(root):
                if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
                    count = len(node.slice)
                    seen = ndim.setdefault(node.value.value, count)
                    if seen != count:
                        raise parsed.error(
                            f"`{node.value.value}` is indexed with {count} indices here and {seen} elsewhere",
                            stmt.origin,
                            "Index every dimension: write a[i, j] for a 2-D array.",
                        )


def _join(of: dict[str, str], var: str, kind: str, parsed: ParsedFunction, origin: cst.CSTNode) -> bool:
    old = of.get(var)
    if old == kind or (old == FLOAT and kind in (INT, BOOL)) or (old == INT and kind == BOOL):
        return False
    if old is None or (old in (INT, BOOL) and kind == FLOAT) or (old == BOOL and kind == INT):
        of[var] = kind
        return True
    raise parsed.error(
        f"`{var}` holds an array in one place and a number in another",
        origin,
        "Use a different name for each.",
    )


def _is_shape(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == "shape"
