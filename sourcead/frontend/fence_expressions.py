"""Part of the pass `fence` (see `fence.py`): which expressions the subset has.

Decides, for every expression the user wrote, whether it is inside the subset: numbers, names
(locals, and globals only when frozen constants), the arithmetic and comparison operators, tuples,
attributes of arrays and module constants, subscripts (slices, and new axes among full slices),
calls to primitives bound to their declared signatures (`rules/`), to array methods and to the
user's own functions; anything else is refused at its position with a hint.
"""

from __future__ import annotations

import inspect
from typing import NoReturn

import libcst as cst
import numpy as np

from ..functions import unwrap
from ..ir.exprs import code, dotted, walk
from ..nested import KEYWORDS, NestedRefusal, recipe_of, refused_object
from ..rules import ATTRIBUTES, METHOD_TABLE, NOT_LITERAL, BindError, bind, primitive
from .bound_names import local_names
from .parse import ParsedFunction
from .resolve import (
    FROZEN_ARRAY_LIMIT,
    LOOPS,
    canonical_call,
    dtype_name,
    is_frozen_constant,
    literal_in_scope,
    lookup,
    prepared_call,
    user_function,
)

_SUBSET = (
    "Supported: float and int scalars, float64 arrays indexed element by element, arithmetic, comparisons, "
    "math functions and their NumPy twins on floats, if/elif/else, for loops over range(...) or prange(...), "
    "while, break, continue, return, and calls to your own functions."
)

_COMPARISONS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)
_OPERATORS = (
    cst.Add,
    cst.Subtract,
    cst.Multiply,
    cst.Divide,
    cst.Power,
    cst.FloorDivide,
    cst.Modulo,
    cst.MatrixMultiply,
)

_DTYPE_HINT = (
    "Write dtype=np.float64 (or float), np.float32 (stored rounded; differentiated as real numbers), "
    "np.int64 (or int), np.bool_ (or bool), or x.dtype. float16, complex and other integer widths are not "
    "supported: compute in float64 and convert outside the function where you need them."
)


class ExpressionFence:
    """The fence's state, its errors, and its checks of expressions (the root of `Fence`)."""

    def __init__(self, parsed: ParsedFunction):
        self.parsed = parsed
        self.locals = local_names(parsed.node)

    def fail(self, node: cst.CSTNode, message: str, hint: str = _SUBSET) -> NoReturn:
        raise self.parsed.error(message, node, hint)

    def is_new_axis(self, node: cst.BaseExpression) -> bool:
        """`None` or `np.newaxis` as an index."""
        if isinstance(node, cst.Name) and node.value == "None":
            return True
        return isinstance(node, cst.Attribute) and node.attr.value == "newaxis" and is_numpy(node.value, self.parsed)

    def check_indices(self, node: cst.Subscript) -> None:
        for element in node.slice:
            if isinstance(element.slice, cst.Slice):
                continue  # a[1:-1], a[:, j], a[::2]
            if isinstance(element.slice, cst.Index) and element.slice.star is not None:
                self.fail(element, "starred indices are not supported")

    def check_expr(self, expr: cst.BaseExpression, loop_vars: set[str]) -> None:
        if isinstance(expr, (cst.Integer, cst.Float)):
            return
        if isinstance(expr, cst.Imaginary):
            self.fail(expr, "complex numbers are not supported", "Work with real and imaginary parts as floats.")
        if isinstance(expr, cst.Name):
            self.check_name(expr)
            return
        if isinstance(expr, cst.BinaryOperation):
            if not isinstance(expr.operator, _OPERATORS):
                self.fail(
                    expr.operator,
                    f"operator `{code(expr.operator).strip()}` is not supported",
                    "Supported arithmetic: + - * / ** // % @.",
                )
            self.check_expr(expr.left, loop_vars)
            self.check_expr(expr.right, loop_vars)
            return
        if isinstance(expr, cst.UnaryOperation):
            if not isinstance(expr.operator, (cst.Minus, cst.Plus, cst.Not)):
                self.fail(expr, "only unary minus, plus and `not` are supported")
            self.check_expr(expr.expression, loop_vars)
            return
        if isinstance(expr, cst.Subscript):
            self.check_subscript(expr, loop_vars)
            return
        if isinstance(expr, cst.Call):
            self.check_call(expr, loop_vars)
            return
        if isinstance(expr, cst.Tuple):
            for element in expr.elements:
                if isinstance(element, cst.StarredElement):
                    self.fail(element, "starred elements are not supported")
                self.check_expr(element.value, loop_vars)
            return
        if isinstance(expr, cst.Attribute):
            self.check_attribute(expr, loop_vars)
            return
        if isinstance(expr, cst.Comparison):
            self.check_expr(expr.left, loop_vars)
            for target in expr.comparisons:
                if not isinstance(target.operator, _COMPARISONS):
                    self.fail(target.operator, "only < <= > >= == != comparisons are supported")
                self.check_expr(target.comparator, loop_vars)
            if len(expr.comparisons) > 1 and any(self.calls_user_function(c.comparator) for c in expr.comparisons):
                self.fail(
                    expr,
                    "a chained comparison that calls your own function",
                    "Compute the value into a variable first, then compare.",
                )
            return
        if isinstance(expr, cst.BooleanOperation):
            self.check_expr(expr.left, loop_vars)
            self.check_expr(expr.right, loop_vars)
            return
        if isinstance(expr, cst.IfExp):
            for part in (expr.test, expr.body, expr.orelse):
                self.check_expr(part, loop_vars)
            return
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.List, cst.Dict, cst.Set)):
            self.fail(
                expr,
                "lists, dicts, sets and comprehensions are not supported",
                "Use a NumPy array and a for loop over range(...).",
            )
        if isinstance(expr, cst.Lambda):
            self.fail(expr, "lambdas are not supported", "Define a module-level function.")
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            self.fail(expr, "strings are not supported in a differentiated function", "Use numbers and arrays.")
        self.fail(expr, f"unsupported expression: {type(expr).__name__}")

    def calls_user_function(self, expr: cst.BaseExpression) -> bool:
        return any(
            isinstance(n, cst.Call) and user_function(n.func, self.parsed.globals) is not None for n in walk(expr)
        )

    def check_attribute(self, expr: cst.Attribute, loop_vars: set[str]) -> None:
        name = expr.attr.value
        root: cst.BaseExpression = expr
        while isinstance(root, cst.Attribute):
            root = root.value
        local = isinstance(root, cst.Name) and root.value in self.locals
        value = None if local else lookup(expr, self.parsed.globals)
        if isinstance(value, np.ndarray):  # frozen arrays are read by a module-level name only
            self.fail(
                expr,
                f"`{dotted(expr)}` is an array read through an attribute",
                f"Bind it to a module-level name (`{expr.attr.value} = {dotted(expr)}`) and read that, "
                "or pass it as an argument.",
            )
        if is_frozen_constant(value) and not isinstance(value, np.ndarray):
            return  # a module constant such as math.pi, or an int of a config module
        if self.module_path(expr):
            self.fail(
                expr,
                f"`{dotted(expr)}` is not a number or a supported function",
                "Only int and float module constants (math.pi, np.inf, cfg.N) can be read.",
            )
        if name in ATTRIBUTES:
            self.check_expr(expr.value, loop_vars)
            return
        self.fail(
            expr,
            f"attribute `.{name}` is not supported",
            f"Supported attributes of arrays: {', '.join('.' + a for a in sorted(ATTRIBUTES))}.",
        )

    def refuse_library_call(self, func: cst.BaseExpression) -> None:
        """A NumPy, SciPy or math function that rules/ does not declare: refused here, at the user's
        call (never inlined from the library's own source)."""
        found = lookup(func, self.parsed.globals)
        library = _library_name(found)
        if library is None:
            return
        if isinstance(found, type) and issubclass(found, np.generic):  # np.float32(x), np.float16(x), ...
            self.fail(
                func,
                f"`{dotted(func) or code(func)}(...)` (a conversion to a NumPy scalar type) is not supported",
                "Write float(x) (float64), or store the value into a float32 array "
                "(`a = np.empty(n, dtype=np.float32)`; `a[i] = x`), which rounds it as np.float32(x) does.",
            )
        self.fail(
            func,
            f"`{dotted(func) or code(func)}` is a {library} function that sourcead does not declare",
            "Write it with supported operations (a loop over its elements, or the NumPy functions listed in "
            "the README's supported subset), or compute it outside the function and pass it as an argument.",
        )

    def module_path(self, expr: cst.BaseExpression) -> bool:
        """Is `expr` a dotted name rooted at a module (np.linalg, math.tau) rather than at a variable?"""
        root = expr
        while isinstance(root, cst.Attribute):
            root = root.value
        return (
            isinstance(root, cst.Name)
            and root.value not in self.locals
            and inspect.ismodule(lookup(root, self.parsed.globals))
        )

    def check_name(self, node: cst.Name) -> None:
        if node.value in ("True", "False"):
            return
        if node.value == "None":
            self.fail(node, "None is not supported as a value", "Use a number, or a flag variable.")
        if node.value in self.locals:
            return
        value = lookup(node, self.parsed.globals)
        if value is None and node.value not in self.parsed.globals:
            self.fail(
                node, f"name `{node.value}` is not defined", "Define it before this line, or pass it as an argument."
            )
        if not is_frozen_constant(value):
            self.fail(
                node,
                f"global `{node.value}` ({_describe_global(value)}) cannot be used as a value",
                "Globals that can be read: numbers, and arrays of float64, int64 or bool (1-D to 3-D, "
                f"at most {FROZEN_ARRAY_LIMIT:,} elements), frozen as numba freezes them; pass others as arguments.",
            )

    def check_subscript(self, expr: cst.Subscript, loop_vars: set[str]) -> None:
        value = expr.value
        if not isinstance(value, (cst.Name, cst.Subscript, cst.Tuple, cst.Attribute, cst.Call, cst.BinaryOperation)):
            self.fail(
                expr,
                "only a named array, a call or an arithmetic expression can be indexed",
                "Assign the value to a variable first, then index it: `y = A @ x; y[0]`.",
            )
        self.check_expr(value, loop_vars)
        self.check_indices(expr)
        new_axes = [e for e in expr.slice if isinstance(e.slice, cst.Index) and self.is_new_axis(e.slice.value)]
        if new_axes:
            if not all(_full_slice(e.slice) for e in expr.slice if e not in new_axes):
                self.fail(
                    expr,
                    "a new axis (None, np.newaxis) is supported among full slices only: x[:, None], x[None, :]",
                    "Index first, then add the axis: `r = A[i]; r[:, None]`.",
                )
            return
        for element in expr.slice:
            if isinstance(element.slice, cst.Slice):
                for part in (element.slice.lower, element.slice.upper, element.slice.step):
                    if part is not None:
                        self.check_expr(part, loop_vars)
            elif isinstance(element.slice, cst.Index):
                self.check_expr(element.slice.value, loop_vars)

    def check_call(self, expr: cst.Call, loop_vars: set[str]) -> None:
        func = expr.func
        scope = self.parsed.globals

        def literal_here(node: cst.BaseExpression) -> bool:
            return literal_in_scope(node, scope) is not NOT_LITERAL

        def bound(signature, args, name: str) -> cst.BaseExpression | None:
            """Bind the call, and say which argument is its dtype (checked by the binding, not
            read as a value)."""
            try:
                found = bind(signature, args, name, expr, literal_here)
            except BindError as exc:
                if str(exc).startswith("`dtype`"):  # np.float32, np.float16, np.int32, ...
                    self.fail(exc.node, str(exc), _DTYPE_HINT)
                self.fail(exc.node, str(exc), f"Write it as {signature.describe(name)}.")
            sequence = found.get("arrays")  # np.concatenate([a, b]): a list written in the call
            if isinstance(sequence, (cst.List, cst.Tuple)):
                for element in sequence.elements:
                    if isinstance(element, cst.StarredElement):
                        self.fail(element, "starred elements are not supported")
                    self.check_expr(element.value, loop_vars)
                joined.append(sequence)
            return found.get("dtype")

        joined: list[cst.BaseExpression] = []

        self.check_prepared(expr)
        if user_function(func, scope) is not None:
            for arg in expr.args:
                if arg.star:
                    self.fail(arg, "starred arguments are not supported", "Pass each argument by name or position.")
                self.check_expr(arg.value, loop_vars)
            return  # a user function: fenced itself when it is inlined
        key = canonical_call(func, scope)
        if key is None and isinstance(func, cst.Attribute) and not self.module_path(func):
            method = METHOD_TABLE.get(func.attr.value)
            if func.attr.value == "astype":
                self.fail(
                    func.attr,
                    "method `.astype()` is not supported",
                    "Allocate the array of the dtype and store into it: `y = np.empty(x.shape, dtype=np.float32)`; "
                    "`y[:] = x` (one `:` per dimension; np.float64, np.float32, np.int64 and np.bool_ are the "
                    "dtypes taken).",
                )
            if method is None:
                self.fail(
                    func.attr,
                    f"method `.{func.attr.value}()` is not supported",
                    f"Supported methods of arrays: {', '.join(f'.{m}()' for m in sorted(METHOD_TABLE))}.",
                )
            self.check_expr(func.value, loop_vars)
            dtype = bound(method.signature, [cst.Arg(func.value), *expr.args], f"x.{method.name}")
        else:
            prim = primitive(key) if key is not None else None
            if key in LOOPS:
                self.fail(func, f"{key}(...) can only be looped over: `for i in {key}(n):`")
            if prim is None or key is None:  # (a primitive has a key)
                self.refuse_library_call(func)
                self.fail(
                    func,
                    f"call to unsupported function `{dotted(func) or code(func)}`",
                    "Supported: the math functions and their NumPy twins, abs, min, max, float, int, len, "
                    "NumPy reductions, products and array creation, and your own functions "
                    "(the full list is in sourcead/rules/).",
                )
            dtype = bound(prim.signature, list(expr.args), key)
        for arg in expr.args:
            if any(arg.value is sequence for sequence in joined):
                continue
            if arg.value is not dtype:
                self.check_expr(arg.value, loop_vars)
            elif not self.is_dtype(arg.value):
                self.fail(
                    arg.value,
                    f"dtype `{code(arg.value)}` is not supported",
                    _DTYPE_HINT,
                )

    def is_dtype(self, value: cst.BaseExpression) -> bool:
        """A dtype as `dtype=` takes it: np.float64, float, np.float32, np.int64, int, np.bool_, bool,
        or `x.dtype` of a variable x."""
        if dtype_name(value, self.parsed.globals) is not None:
            return True
        return (
            isinstance(value, cst.Attribute)
            and value.attr.value == "dtype"
            and isinstance(value.value, cst.Name)
            and value.value.value in self.locals
        )

    def check_prepared(self, expr: cst.Call) -> None:
        """A prepared derivative called here: one whose derivative sourcead takes (`nested.py`),
        passed its arguments by position (the one keyword its call takes aside: `tangents=` of a
        jvp or hvp, `cotangent=` of a vjp), and not the derivative of this very function."""
        func = expr.func.value if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "njit" else expr.func
        obj = lookup(func, self.parsed.globals) if isinstance(func, cst.Name) else None
        refused = refused_object(obj)
        if refused is not None:
            self.fail(
                expr.func,
                f"`{code(func)}` is a prepared {refused}; inside a differentiated function sourcead calls prepared "
                f"grad, value_and_grad, jvp, vjp and hvp objects, not a {refused} yet",
                "Build it column by column from a prepared jvp: jf = sourcead.jvp(f, wrt=...) at module level, "
                "and in a loop `_, column = jf(x, ..., tangents=e)` for each unit vector e.",
            )
        try:
            prepared_call(expr.func, self.parsed.globals)  # registers it, or refuses it here
        except NestedRefusal as exc:
            self.fail(expr.func, str(exc), exc.hint)
        recipe = recipe_of(obj)
        if recipe is None or not isinstance(func, cst.Name):
            return
        name = func.value
        inner = unwrap(recipe.func)
        if inner.__name__ == self.parsed.name and getattr(inner, "__globals__", None) is self.parsed.globals:
            self.fail(
                expr.func,
                f"`{name}` is the derivative of {self.parsed.name} itself: a function cannot call its own derivative",
                f"Compute {name} outside {self.parsed.name} and pass it in as an argument.",
            )
        keyword = KEYWORDS.get(recipe.transform)
        for arg in expr.args:
            if arg.star or (arg.keyword is not None and arg.keyword.value != keyword):
                allowed = f" (and {keyword}=...)" if keyword else ""
                self.fail(
                    arg,
                    f"pass the arguments of `{name}` by position{allowed}",
                    f"Write {name}(x, q, ...{', ' + keyword + '=...' if keyword else ''}).",
                )
        for arg in expr.args:
            if arg.keyword is None or recipe.transform not in ("vjp", "hvp"):
                continue
            if recipe.transform == "vjp" and _returns_tuple(inner):
                self.fail(
                    arg.value,
                    f"`{name}` is the vjp of {inner.__name__}, which returns a tuple: inside a differentiated "
                    "function sourcead takes the vjp of a function with one result",
                    f"Prepare a vjp of a function that returns one float or array, one per result of {inner.__name__}.",
                )
            if isinstance(arg.value, cst.Tuple):
                self.fail(
                    arg.value,
                    f"`{name}` is called with a tuple of {keyword}: inside a differentiated function a prepared "
                    f"{recipe.transform} takes one",
                    f"Prepare one {recipe.transform} per argument, each called with one {keyword}=... .",
                )
        if keyword is not None and not any(a.keyword is not None and a.keyword.value == keyword for a in expr.args):
            self.fail(expr, f"`{name}` is a prepared {recipe.transform}: its call needs {keyword}=...",
                      f"Write {name}(x, ..., {keyword}=...).")  # fmt: skip


def _returns_tuple(func) -> bool:
    """Does `func` return a tuple (`return a, b`) anywhere?"""
    from .parse import parse_function

    try:
        node = parse_function(func).node
    except Exception:  # its own transform says why, if it is ever made
        return False
    return any(isinstance(n, cst.Return) and isinstance(n.value, cst.Tuple) for n in walk(node))


def _full_slice(s: cst.BaseSlice) -> bool:
    """`:` with no bounds and no step."""
    return isinstance(s, cst.Slice) and s.lower is None and s.upper is None and s.step is None


def is_numpy(node: cst.BaseExpression, parsed: ParsedFunction) -> bool:
    """Does `node` name the numpy module (`np`, `numpy`, whatever it was imported as)?"""
    import numpy

    return lookup(node, parsed.globals) is numpy


def _describe_global(value: object) -> str:
    shape = getattr(value, "shape", None)
    if shape is not None:
        return f"{type(value).__name__} of {getattr(value, 'dtype', '?')}, shape {shape}"
    return type(value).__name__


def _library_name(obj: object) -> str | None:
    """`NumPy`, `SciPy`, `math` or `numba` for a function of those packages, else None."""
    module = getattr(obj, "__module__", None) or getattr(type(obj), "__module__", None) or ""
    return {"numpy": "NumPy", "scipy": "SciPy", "math": "math", "numba": "numba"}.get(module.split(".")[0])
