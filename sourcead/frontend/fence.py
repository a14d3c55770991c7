"""The pass `fence`: reject everything outside the supported subset, with a positioned error.

The fence is the only pass that judges the user's code; passes after it may assume the subset.
The statement checks are here, the expression checks in `fence_expressions.py`.
"""

from __future__ import annotations

import libcst as cst

from ..ir.exprs import code, walk
from .bound_names import assigned_in
from .fence_expressions import _SUBSET, ExpressionFence
from .parse import ParsedFunction
from .resolve import canonical_call, user_function

_STATEMENT_HINTS: dict[type, str] = {
    cst.Try: "try/except is not supported; differentiated code cannot catch exceptions.",
    cst.With: "with-blocks are not supported.",
    cst.FunctionDef: "nested functions are not supported; define the helper at module level.",
    cst.ClassDef: "classes are not supported inside a differentiated function.",
    cst.Global: "global statements are not supported; pass the value as an argument.",
    cst.Nonlocal: "nonlocal statements are not supported; pass the value as an argument.",
    cst.Del: "del is not supported.",
    cst.Raise: "raise is not supported in a differentiated function.",
    cst.Assert: "assert is not supported in a differentiated function.",
    cst.Import: "imports inside the function are not supported; import at module level.",
    cst.ImportFrom: "imports inside the function are not supported; import at module level.",
}

_AUGMENTED = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign, cst.PowerAssign)


def fence(parsed: ParsedFunction, callee: bool = False) -> None:
    """Raise `SourceADError` at the first construct outside the subset. A callee (inlined into
    its caller) may return nothing: it is then called for what it writes into arrays."""
    Fence(parsed).check_function(callee)


class Fence(ExpressionFence):
    """The fence of one function: its signature, its return paths, and its statements."""

    def check_function(self, callee: bool = False) -> None:
        node = self.parsed.node
        params = node.params
        if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg or params.kwonly_params:
            self.fail(
                node,
                "*args, **kwargs and keyword-only parameters are not supported",
                "Use plain positional parameters.",
            )
        for param in [*params.params, *params.posonly_params]:
            if param.default is not None and not _plain_literal(param.default):
                self.fail(
                    param.default,
                    "a parameter default must be a number or True/False",
                    "Pass the value as an argument.",
                )
        suite = node.body
        if not isinstance(suite, cst.IndentedBlock):  # a SimpleStatementSuite: `def f(x): return x`
            self.fail(node, "write the function body on its own lines", "Put each statement on a line.")
        body = list(suite.body)
        if body and _is_docstring(body[0]):
            body = body[1:]
        if not body or not (_always_returns(body) or callee and not _returns_anything(self.parsed.node)):
            self.fail(
                body[-1] if body else node,
                "the function must return a value on every path",
                "End the function with a `return` statement.",
            )
        self.check_block(body, loop_vars=set(), in_loop=False)

    def check_block(self, stmts: list[cst.BaseStatement], loop_vars: set[str], in_loop: bool) -> None:
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self.check_small(small, loop_vars, in_loop)
            elif isinstance(stmt, cst.For):
                self.check_for(stmt, loop_vars)
            elif isinstance(stmt, cst.If):
                self.check_if(stmt, loop_vars, in_loop)
            elif isinstance(stmt, cst.While):
                if stmt.orelse is not None:
                    self.fail(stmt.orelse, "while ... else is not supported", "Remove the else block.")
                for node in walk(stmt.test):
                    if isinstance(node, cst.Call) and user_function(node.func, self.parsed.globals) is not None:
                        self.fail(
                            node,
                            "a while condition cannot call your own functions",
                            "Compute the value in a variable before the loop and at the end of its body.",
                        )
                self.check_expr(stmt.test, loop_vars)
                self.check_suite(stmt.body, loop_vars, in_loop=True)
            else:
                hint = _STATEMENT_HINTS.get(type(stmt), _SUBSET)
                self.fail(stmt, f"unsupported statement: {type(stmt).__name__.lower()}", hint)

    def check_if(self, stmt: cst.If, loop_vars: set[str], in_loop: bool) -> None:
        self.check_expr(stmt.test, loop_vars)
        self.check_suite(stmt.body, loop_vars, in_loop)
        if isinstance(stmt.orelse, cst.If):
            self.check_if(stmt.orelse, loop_vars, in_loop)
        elif isinstance(stmt.orelse, cst.Else):
            self.check_suite(stmt.orelse.body, loop_vars, in_loop)

    def check_suite(self, body: cst.BaseSuite, loop_vars: set[str], in_loop: bool) -> None:
        if not isinstance(body, cst.IndentedBlock):  # a SimpleStatementSuite: `if c: x = 1`
            self.fail(body, "put the block on its own lines", "Write the body indented under the colon.")
        self.check_block(list(body.body), loop_vars, in_loop)

    def check_for(self, stmt: cst.For, loop_vars: set[str]) -> None:
        if stmt.orelse is not None:
            self.fail(stmt.orelse, "for ... else is not supported", "Remove the else block.")
        if stmt.asynchronous is not None:
            self.fail(stmt, "async for is not supported")
        it = stmt.iter
        key = canonical_call(it.func, self.parsed.globals) if isinstance(it, cst.Call) else None
        if key not in ("range", "prange"):
            self.check_iteration(stmt.target, it, key, loop_vars)
            target = stmt.target  # a tuple for enumerate (check_iteration)
            index = target.elements[0].value if key == "enumerate" and isinstance(target, cst.Tuple) else None
            self.check_loop_body(stmt, index.value if isinstance(index, cst.Name) else None, loop_vars)
            return
        assert isinstance(it, cst.Call)  # range(...) or prange(...)
        if not isinstance(stmt.target, cst.Name):
            self.fail(stmt.target, "the loop variable must be a single name", "Loop over indices: `for i in range(n)`.")
        if not 1 <= len(it.args) <= 3 or any(a.keyword or a.star for a in it.args):
            self.fail(it, "range takes 1 to 3 positional arguments")
        if len(it.args) == 3 and isinstance(it.args[2].value, cst.Integer) and int(it.args[2].value.value) == 0:
            self.fail(it.args[2], "the step of a range cannot be zero")
        for arg in it.args:
            self.check_expr(arg.value, loop_vars)
        self.check_loop_body(stmt, stmt.target.value, loop_vars)

    def check_loop_body(self, stmt: cst.For, var: str | None, loop_vars: set[str]) -> None:
        """The body, with `var` the loop's index variable (None: a fresh one normalize makes)."""
        if var is None:
            self.check_suite(stmt.body, loop_vars, in_loop=True)
            return
        if var in loop_vars:
            self.fail(stmt.target, f"loop variable `{var}` is reused by an inner loop", "Rename it.")
        self.check_suite(stmt.body, loop_vars | {var}, in_loop=True)
        for inner in assigned_in(stmt.body):
            if inner == var:
                self.fail(
                    stmt,
                    f"the loop variable `{var}` is assigned inside its loop",
                    "Use another name for the new value.",
                )

    def check_iteration(self, target: cst.BaseExpression, it: cst.BaseExpression, key: str | None, loop_vars) -> None:
        """`for v in x` (elements of a 1-D array, rows of a 2-D one), `for i, v in enumerate(x)`,
        `for a, b in zip(x, y)` and `for i, (a, b) in enumerate(zip(x, y))`: normalize writes each
        as a loop over indices."""
        hint = "Loop over indices: `for i in range(len(x))`, then read x[i]."
        if key == "prange":
            self.fail(it, "prange takes the loop's bounds", "Write `for i in prange(len(x))`, then read x[i].")
        if isinstance(it, (cst.Tuple, cst.List, cst.Set, cst.Dict)) or key not in (None, "enumerate", "zip"):
            self.fail(it, "a for loop runs over range(...), an array, enumerate(array) or zip(arrays)", hint)
        if key == "enumerate":
            args = it.args  # type: ignore[attr-defined]
            if len(args) != 1 or args[0].keyword or args[0].star:
                self.fail(it, "enumerate takes one array here (no start=)", hint)
            if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
                self.fail(target, "a loop over enumerate(...) takes two names: `for i, v in enumerate(x)`")
            if not isinstance(target.elements[0].value, cst.Name):
                self.fail(target, "the index of enumerate(...) must be a name")
            inner = args[0].value
            inner_key = canonical_call(inner.func, self.parsed.globals) if isinstance(inner, cst.Call) else None
            self.check_iteration(target.elements[1].value, inner, inner_key, loop_vars)
            return
        if key == "zip":
            args = [a for a in it.args if a.keyword is None]  # type: ignore[attr-defined]
            for a in it.args:  # type: ignore[attr-defined]
                if a.keyword is not None and not (a.keyword.value == "strict" and code(a.value) == "False"):
                    self.fail(a, "zip takes arrays here, and strict=False at most", hint)
            if len(args) < 1 or any(a.star for a in args):
                self.fail(it, "zip takes arrays here (no *args)", hint)
            if not (isinstance(target, cst.Tuple) and len(target.elements) == len(args)):
                self.fail(target, f"a loop over zip(...) of {len(args)} arrays takes {len(args)} names")
            for element, arg in zip(target.elements, args, strict=True):
                if not isinstance(element.value, cst.Name):
                    self.fail(element.value, "each name of a loop over zip(...) must be a single name", hint)
                self.check_expr(arg.value, loop_vars)
            return
        if not isinstance(target, cst.Name):
            self.fail(target, "a loop over an array takes one name: an element, or a row", hint)
        self.check_expr(it, loop_vars)

    def check_small(self, small: cst.BaseSmallStatement, loop_vars: set[str], in_loop: bool) -> None:
        if isinstance(small, cst.Return):
            if small.value is None:
                self.fail(small, "the function must return a value", "Return the value to differentiate.")
            value = small.value
            items = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
            for item in items:
                self.check_expr(item, loop_vars)
            return
        if isinstance(small, (cst.Break, cst.Continue)):
            if not in_loop:
                self.fail(small, f"`{type(small).__name__.lower()}` outside a loop")
            return
        if isinstance(small, cst.Assign):
            if len(small.targets) != 1:  # a = b = value: each target a name or an element
                for chained in small.targets:
                    if isinstance(chained.target, cst.Tuple):
                        self.fail(
                            chained.target,
                            "chained assignment to a tuple `a = b, c = ...` is not supported",
                            "Assign each name on its own line.",
                        )
                    self.check_target(chained.target)
                self.check_expr(small.value, loop_vars)
                return
            target = small.targets[0].target
            if isinstance(target, cst.Tuple):
                self.check_unpacking(target, small.value, loop_vars)
                return
            self.check_target(target)
            self.check_expr(small.value, loop_vars)
            return
        if isinstance(small, cst.AugAssign):
            if not isinstance(small.operator, tuple(_AUGMENTED)):
                self.fail(small.operator, "unsupported augmented assignment", "Supported: += -= *= /= **=.")
            self.check_target(small.target)
            self.check_expr(small.value, loop_vars)
            return
        if isinstance(small, cst.Pass):
            return
        if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
            return
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            if user_function(small.value.func, self.parsed.globals) is not None:
                self.check_call(small.value, loop_vars)  # a call for its writes into arrays
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

    def check_unpacking(self, target: cst.Tuple, value: cst.BaseExpression, loop_vars: set[str]) -> None:
        for element in target.elements:
            if isinstance(element, cst.StarredElement):
                self.fail(element, "starred assignment is not supported", "Name every value: `a, b = pair`.")
            self.check_target(element.value)
        if isinstance(value, cst.Tuple) and len(value.elements) != len(target.elements):
            self.fail(
                value,
                f"{len(target.elements)} names on the left but {len(value.elements)} values on the right",
                "Write as many names as values: `a, b = b, a`.",
            )
        if not isinstance(value, (cst.Tuple, cst.Call, cst.Name, cst.Attribute)):
            self.fail(
                value,
                "tuple assignment needs a tuple on the right",
                "Write `a, b = b, a`, `n, m = A.shape`, `u, v = helper(...)`, or assign each name on its own line.",
            )
        self.check_expr(value, loop_vars)

    def check_target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            return
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            self.check_indices(target)
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            self.fail(target, "nested tuple unpacking is not supported", "Assign each name on its own line.")
        self.fail(
            target,
            "you can assign to a name or to an array element `a[i]` / `a[i, j]`",
            "Attributes and other targets cannot be assigned.",
        )


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _returns_anything(node: cst.FunctionDef) -> bool:
    return any(isinstance(n, cst.Return) for n in walk(node.body))


def _always_returns(body: list[cst.BaseStatement]) -> bool:
    """Does every path through `body` end in a return?"""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return isinstance(last.body[-1], cst.Return)
    if isinstance(last, cst.If):
        return _if_always_returns(last)
    return False


def _if_always_returns(stmt: cst.If) -> bool:
    if not _always_returns(_lines(stmt.body)):
        return False
    if isinstance(stmt.orelse, cst.If):
        return _if_always_returns(stmt.orelse)
    if isinstance(stmt.orelse, cst.Else):
        return _always_returns(_lines(stmt.orelse.body))
    return False


def _lines(suite: cst.BaseSuite) -> list[cst.BaseStatement]:
    """The statements of an indented block (a one-line suite returns nothing the fence accepts)."""
    return list(suite.body) if isinstance(suite, cst.IndentedBlock) else []


def _plain_literal(node: cst.BaseExpression) -> bool:
    """A number, -number or True/False: a default that means the same in every module."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float)) or isinstance(node, cst.Name) and node.value in ("True", "False")
