"""Pass 2, fence: reject everything outside the supported subset, with a positioned error.

The fence is the only pass that judges the user's code; passes after it may assume the subset.
"""

from __future__ import annotations

import libcst as cst

from .exprs import dotted
from .parse import ParsedFunction
from .resolve import canonical_call, is_frozen_constant, lookup
from .rules import known_calls

_SUBSET = (
    "Supported: float and int scalars, float64 arrays indexed element by element, "
    "+ - * / ** // %, math functions, for loops over range(...), and one return at the end."
)

_STATEMENT_HINTS: dict[type, str] = {
    cst.If: "if/elif/else is not supported yet; compute both values and combine them arithmetically.",
    cst.While: "while loops are not supported yet; use `for i in range(n)`.",
    cst.Try: "try/except is not supported; differentiated code cannot catch exceptions.",
    cst.With: "with-blocks are not supported.",
    cst.FunctionDef: "nested functions are not supported; define the helper at module level.",
    cst.ClassDef: "classes are not supported inside a differentiated function.",
    cst.Break: "break is not supported yet; loop over the exact range instead.",
    cst.Continue: "continue is not supported yet.",
    cst.Global: "global statements are not supported; pass the value as an argument.",
    cst.Nonlocal: "nonlocal statements are not supported; pass the value as an argument.",
    cst.Del: "del is not supported.",
    cst.Raise: "raise is not supported in a differentiated function.",
    cst.Assert: "assert is not supported in a differentiated function.",
    cst.Import: "imports inside the function are not supported; import at module level.",
    cst.ImportFrom: "imports inside the function are not supported; import at module level.",
}

_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power, cst.FloorDivide, cst.Modulo)


def fence(parsed: ParsedFunction) -> None:
    """Raise `SourceADError` at the first construct outside the subset."""
    Fence(parsed).check_function()


class Fence:
    def __init__(self, parsed: ParsedFunction):
        self.parsed = parsed
        self.locals = local_names(parsed.node)
        # parameters never rebound: writing into their elements would mutate the caller's array
        self.params = {p.name.value for p in parsed.node.params.params} - _assigned_in(parsed.node.body)
        self.finished_loops: set[str] = set()  # loop variables whose loop has ended

    def fail(self, node: cst.CSTNode, message: str, hint: str = _SUBSET) -> None:
        raise self.parsed.error(message, node, hint)

    def check_function(self) -> None:
        node = self.parsed.node
        params = node.params
        if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg or params.kwonly_params:
            self.fail(
                node,
                "*args, **kwargs and keyword-only parameters are not supported",
                "Use plain positional parameters.",
            )
        for param in params.params + params.posonly_params:
            if param.default is not None:
                self.fail(param, "parameter defaults are not supported", "Pass every argument explicitly.")
        if isinstance(node.body, cst.SimpleStatementSuite):
            self.fail(node, "write the function body on its own lines", "Put each statement on a line.")
        body = list(node.body.body)
        if body and _is_docstring(body[0]):
            body = body[1:]
        if not body or not _is_return(body[-1]):
            self.fail(
                body[-1] if body else node,
                "the function must end with a `return` statement",
                "Return the value to differentiate as the last statement.",
            )
        self.check_block(body, loop_vars=set())

    def check_block(self, stmts: list[cst.BaseStatement], loop_vars: set[str], top: bool = True) -> None:
        for k, stmt in enumerate(stmts):
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    last = top and k == len(stmts) - 1
                    self.check_small(small, loop_vars, last)
                    self.finished_loops -= _assigned_in(small)
            elif isinstance(stmt, cst.For):
                self.check_for(stmt, loop_vars)
                self.finished_loops.add(stmt.target.value)  # type: ignore[union-attr]
            else:
                hint = _STATEMENT_HINTS.get(type(stmt), _SUBSET)
                self.fail(stmt, f"unsupported statement: {type(stmt).__name__.lower()}", hint)

    def check_for(self, stmt: cst.For, loop_vars: set[str]) -> None:
        if stmt.orelse is not None:
            self.fail(stmt.orelse, "for ... else is not supported", "Remove the else block.")
        if stmt.asynchronous is not None:
            self.fail(stmt, "async for is not supported")
        if not isinstance(stmt.target, cst.Name):
            self.fail(stmt.target, "the loop variable must be a single name", "Loop over indices: `for i in range(n)`.")
        it = stmt.iter
        key = canonical_call(it.func, self.parsed.globals) if isinstance(it, cst.Call) else None
        if key not in ("range", "prange"):
            self.fail(
                it,
                "only loops over range(...) are supported",
                "Loop over indices: `for i in range(len(x))`, then read x[i].",
            )
        if key == "prange":
            self.fail(it, "prange loops are not supported yet", "Use range(...) for now.")
        if not 1 <= len(it.args) <= 3 or any(a.keyword or a.star for a in it.args):
            self.fail(it, "range takes 1 to 3 positional arguments")
        if len(it.args) == 3 and not _is_positive_int_literal(it.args[2].value):
            self.fail(
                it.args[2],
                "the step of a range must be a positive integer literal for now",
                "Write the loop with step 1 and compute the index: `j = start - k`.",
            )
        for arg in it.args:
            self.check_expr(arg.value, loop_vars)
        var = stmt.target.value  # type: ignore[union-attr]
        self.finished_loops.discard(var)
        if var in loop_vars:
            self.fail(stmt.target, f"loop variable `{var}` is reused by an inner loop", "Rename it.")
        body = stmt.body
        if isinstance(body, cst.SimpleStatementSuite):
            self.fail(body, "put the loop body on its own lines")
        self.check_block(list(body.body), loop_vars | {var}, top=False)
        for inner in _assigned_in(stmt.body):
            if inner == var:
                self.fail(
                    stmt,
                    f"the loop variable `{var}` is assigned inside its loop",
                    "Use another name for the new value.",
                )

    def check_small(self, small: cst.BaseSmallStatement, loop_vars: set[str], last: bool) -> None:
        if isinstance(small, cst.Return):
            if not last:
                self.fail(
                    small,
                    "return is only supported as the last statement of the function",
                    "Store the result in a variable and return it at the end.",
                )
            if small.value is None:
                self.fail(small, "the function must return a value")
            value = small.value
            items = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
            for item in items:
                self.check_expr(item, loop_vars)
            return
        if isinstance(small, cst.Assign):
            if len(small.targets) != 1:
                self.fail(
                    small, "chained assignment `a = b = ...` is not supported", "Assign each name on its own line."
                )
            self.check_target(small.targets[0].target)
            self.check_expr(small.value, loop_vars)
            return
        if isinstance(small, cst.AugAssign):
            if not isinstance(
                small.operator,
                (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign, cst.PowerAssign),
            ):
                self.fail(small.operator, "unsupported augmented assignment", "Supported: += -= *= /= **=.")
            self.check_target(small.target)
            self.check_expr(small.value, loop_vars)
            return
        if isinstance(small, cst.Pass):
            return
        if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
            return
        if isinstance(small, cst.AnnAssign):
            self.fail(small, "annotated assignments are not supported", "Drop the annotation.")
        hint = _STATEMENT_HINTS.get(type(small), _SUBSET)
        if isinstance(small, cst.Expr):
            self.fail(
                small,
                "a bare expression statement has no effect on the result",
                "Assign its value to a variable, or remove it.",
            )
        self.fail(small, f"unsupported statement: {type(small).__name__.lower()}", hint)

    def check_target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            return
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            if target.value.value in self.params:
                self.fail(
                    target,
                    f"writing into the argument array `{target.value.value}` is not supported yet",
                    f"Work on a copy: `{target.value.value} = {target.value.value}.copy()` first.",
                )
            self.check_indices(target)
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            self.fail(target, "tuple unpacking is not supported yet", "Assign each name on its own line.")
        self.fail(
            target,
            "you can assign to a name or to an array element `a[i]` / `a[i, j]`",
            "Slices and attributes cannot be assigned yet.",
        )

    def check_indices(self, node: cst.Subscript) -> None:
        for element in node.slice:
            if not isinstance(element.slice, cst.Index):
                self.fail(
                    element,
                    "slices are not supported yet",
                    "Index element by element: `a[i]` or `a[i, j]` inside a loop.",
                )
            if element.slice.star is not None:
                self.fail(element, "starred indices are not supported")

    def check_expr(self, expr: cst.BaseExpression, loop_vars: set[str]) -> None:
        if isinstance(expr, (cst.Integer, cst.Float)):
            return
        if isinstance(expr, cst.Name):
            self.check_name(expr)
            return
        if isinstance(expr, cst.BinaryOperation):
            if not isinstance(expr.operator, _OPERATORS):
                self.fail(
                    expr.operator,
                    f"operator `{expr.operator._get_token()}` is not supported",
                    "Supported arithmetic: + - * / ** // %.",
                )
            self.check_expr(expr.left, loop_vars)
            self.check_expr(expr.right, loop_vars)
            return
        if isinstance(expr, cst.UnaryOperation):
            if not isinstance(expr.operator, (cst.Minus, cst.Plus)):
                self.fail(expr, "only unary minus and plus are supported")
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
                self.check_expr(element.value, loop_vars)
            return
        if isinstance(expr, cst.Attribute):
            if is_frozen_constant(lookup(expr, self.parsed.globals)):
                return  # a module constant such as math.pi
            self.fail(expr, f"attribute `.{expr.attr.value}` is not supported here", "Use `x.shape[k]` for sizes.")
        if isinstance(expr, (cst.Comparison, cst.BooleanOperation, cst.IfExp)):
            self.fail(expr, "comparisons and conditional expressions are not supported yet")
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.List, cst.Dict, cst.Set)):
            self.fail(
                expr,
                "lists, dicts, sets and comprehensions are not supported",
                "Use a NumPy array and a for loop over range(...).",
            )
        if isinstance(expr, cst.Lambda):
            self.fail(expr, "lambdas are not supported", "Define a module-level function.")
        self.fail(expr, f"unsupported expression: {type(expr).__name__}")

    def check_name(self, node: cst.Name) -> None:
        if node.value in self.finished_loops:
            self.fail(
                node,
                f"the loop variable `{node.value}` is read after its loop",
                "Copy the value you need into another variable inside the loop.",
            )
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
                f"global `{node.value}` ({type(value).__name__}) cannot be used as a value",
                "Only int and float globals can be read; pass arrays as arguments.",
            )

    def check_subscript(self, expr: cst.Subscript, loop_vars: set[str]) -> None:
        value = expr.value
        if isinstance(value, cst.Attribute) and value.attr.value == "shape" and isinstance(value.value, cst.Name):
            self.check_name(value.value)
            return
        if not isinstance(value, cst.Name):
            self.fail(expr, "only a named array can be indexed", "Index a variable: `a[i]` or `a[i, j]`.")
        self.check_name(value)
        self.check_indices(expr)
        for element in expr.slice:
            self.check_expr(element.slice.value, loop_vars)  # type: ignore[union-attr]

    def check_call(self, expr: cst.Call, loop_vars: set[str]) -> None:
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value == "copy" and isinstance(func.value, cst.Name):
            if expr.args:
                self.fail(expr, "x.copy() takes no arguments")
            self.check_name(func.value)
            return
        if any(arg.keyword is not None or arg.star for arg in expr.args):
            self.fail(
                expr,
                "keyword and starred arguments are not supported in calls",
                "Pass arguments by position, e.g. np.zeros(n).",
            )
        key = canonical_call(func, self.parsed.globals)
        if key is None or key not in known_calls() or key in ("range", "prange"):
            shown = dotted(func)
            self.fail(
                func,
                f"call to unsupported function `{shown}`",
                "Supported: math.sin cos tan exp log sqrt tanh pow, abs, float, int, len, "
                "np.zeros, np.empty, np.zeros_like, np.ones, x.copy().",
            )
        for arg in expr.args:
            self.check_expr(arg.value, loop_vars)


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_return(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[-1], cst.Return)


def _is_positive_int_literal(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Integer) and int(node.value) > 0


def local_names(node: cst.FunctionDef) -> set[str]:
    names = {p.name.value for p in node.params.params + node.params.posonly_params}
    return names | _assigned_in(node.body)


def _assigned_in(body: cst.CSTNode) -> set[str]:
    names: set[str] = set()

    class Collector(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            if isinstance(node.target, cst.Name):
                names.add(node.target.value)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.target, cst.Name):
                names.add(node.target.value)

        def visit_For(self, node: cst.For) -> None:
            if isinstance(node.target, cst.Name):
                names.add(node.target.value)

    body.visit(Collector())
    return names
