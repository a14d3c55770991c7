"""Which of the caller's arrays a generated function writes: what sourcead makes extra outputs.

The answer follows the caller's memory, not the parameter's name (issue 38, finding 1): a
parameter written and then rebound (`x[0] = 1.0; x = x * 2.0`) is still written, and after a swap
(`x, v = v, x`) a write through `v` writes the caller's `x`. The analysis walks the function in
order and keeps, for every name, the parameters whose memory it may refer to (a may-alias set:
branches are joined, loop bodies are repeated until nothing changes); a store into a name
(`a[i] = ...`, `a[1:] += ...`), an augmented assignment of an array name (`a += b` writes in
place), and a call to a helper that writes the argument it is given, write every parameter the
name may refer to. Views keep their base's memory (`a[1:]`, `a[:, j]`, `a.T`, `for row in A`);
everything else (arithmetic, calls, `.copy()`, `np.zeros_like`) is fresh.

`writes_agree` is the dynamic half: the arrays a plain run changes must be among the ones found.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

State = dict[str, frozenset[int]]
_VIEWS = {"T", "reshape", "transpose", "ravel"}  # attributes and methods whose result shares memory


def written_params(
    source: str, name: str, params: tuple[str, ...], arrays: Iterable[str] | None = None
) -> tuple[str, ...]:
    """The parameters of `name` whose memory it may write (also through the helpers it calls), in
    parameter order. `arrays`: the array parameters (floats are never written); None: any."""
    tree = ast.parse(source)
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    memo: dict[str, frozenset[int]] = {}

    def writes(fname: str, origins: Iterable[str] | None = None) -> frozenset[int]:
        key = fname if origins is None else ""
        if key and key in memo:
            return memo[key]
        if key:
            memo[key] = frozenset()  # a recursive call writes nothing more
        fn = functions[fname]
        names = [a.arg for a in fn.args.args]
        allowed = set(names if origins is None else origins)
        state = {p: frozenset({k}) for k, p in enumerate(names) if p in allowed}
        flow = _Flow(functions, writes)
        flow.block(fn.body, state)
        if key:
            memo[key] = frozenset(flow.found)
        return frozenset(flow.found)

    found = writes(name, arrays)
    return tuple(params[k] for k in sorted(found) if k < len(params))


class _Flow:
    def __init__(self, functions: dict[str, ast.FunctionDef], writes: Callable[[str], frozenset[int]]):
        self.functions = functions
        self.writes = writes
        self.found: set[int] = set()

    def block(self, body: list[ast.stmt], state: State) -> State:
        for stmt in body:
            state = self.stmt(stmt, state)
        return state

    def stmt(self, node: ast.stmt, state: State) -> State:
        for expr in _headers(node):
            self.calls(expr, state)
        if isinstance(node, ast.Assign):
            values = self.tokens(node.value, state)
            elements = node.value.elts if isinstance(node.value, ast.Tuple) else None
            parts = [self.tokens(e, state) for e in elements] if elements is not None else None
            for target in node.targets:
                self.bind(target, values, parts, state)
        elif isinstance(node, ast.AugAssign):
            self.found |= self.base(node.target, state)  # an array name in place, or a store
        elif isinstance(node, (ast.For, ast.While)):
            state = self.loop(node, state)
        elif isinstance(node, ast.If):
            state = _join(self.block(node.body, dict(state)), self.block(node.orelse, dict(state)))
        return state

    def bind(self, target: ast.expr, values: frozenset[int], parts: list | None, state: State) -> None:
        if isinstance(target, ast.Name):
            state[target.id] = values
        elif isinstance(target, ast.Tuple):
            for k, element in enumerate(target.elts):
                fresh = parts[k] if parts is not None and len(parts) == len(target.elts) else frozenset()
                self.bind(element, fresh, None, state)
        else:
            self.found |= self.base(target, state)

    def loop(self, node: ast.For | ast.While, state: State) -> State:
        entry = dict(state)
        for _ in range(10):
            inner = dict(entry)
            if isinstance(node, ast.For):
                over = self.tokens(node.iter, entry) if isinstance(node.iter, ast.Name) else frozenset()
                self.bind(node.target, over, None, inner)  # `for row in A`: row is a view of A
            merged = _join(entry, self.block(node.body, inner))
            if merged == entry:
                break
            entry = merged
        return _join(entry, self.block(node.orelse, dict(entry)))

    def calls(self, expr: ast.AST, state: State) -> None:
        for node in ast.walk(expr):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.functions:
                for k in self.writes(node.func.id):
                    if k < len(node.args):
                        self.found |= self.tokens(node.args[k], state)

    def tokens(self, expr: ast.expr, state: State) -> frozenset[int]:
        """The parameters whose memory the value of `expr` may be (empty: a fresh value)."""
        if isinstance(expr, ast.Name):
            return state.get(expr.id, frozenset())
        if isinstance(expr, ast.Subscript):
            index = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
            return self.tokens(expr.value, state) if any(isinstance(i, ast.Slice) for i in index) else frozenset()
        if isinstance(expr, ast.Attribute) and expr.attr in _VIEWS:
            return self.tokens(expr.value, state)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _VIEWS:
            return self.tokens(expr.func.value, state)
        if isinstance(expr, ast.IfExp):
            return self.tokens(expr.body, state) | self.tokens(expr.orelse, state)
        return frozenset()

    def base(self, target: ast.expr, state: State) -> frozenset[int]:
        """The memory a store into `target` writes: its innermost name's."""
        while isinstance(target, (ast.Subscript, ast.Attribute)):
            target = target.value
        return state.get(target.id, frozenset()) if isinstance(target, ast.Name) else frozenset()


def _headers(node: ast.stmt) -> list[ast.AST]:
    """The expressions a statement evaluates itself (not those of the suites it holds)."""
    if isinstance(node, ast.For):
        return [node.iter]
    if isinstance(node, (ast.While, ast.If)):
        return [node.test]
    return [child for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr)]


def _join(a: State, b: State) -> State:
    return {k: a.get(k, frozenset()) | b.get(k, frozenset()) for k in a.keys() | b.keys()}


def writes_agree(func: Callable, params: tuple[str, ...], written: tuple[str, ...], args: tuple[Any, ...]) -> bool:
    """Does a plain run on copies change only arrays the analysis calls written? (A miss would
    make the checker expect too few outputs: a false `wrong`.)"""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        with np.errstate(all="ignore"):
            func(*copies)
    except Exception:
        return False
    return all(
        name in written or not isinstance(a, np.ndarray) or np.array_equal(a, c, equal_nan=True)
        for name, a, c in zip(params, args, copies, strict=True)
    )
