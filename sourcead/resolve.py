"""Resolve the names a user function reads: known functions, modules, frozen global constants."""

from __future__ import annotations

import builtins
import functools
import inspect
import math
from collections.abc import Mapping
from typing import Any

import libcst as cst
import numba
import numpy as np

from . import custom
from .rules import known_calls


def _canonical_objects() -> dict[int, str]:
    """id(python object) -> canonical name, for every function the rules know."""
    table: dict[int, str] = {}
    roots = {"math": math, "np": np}
    for key in known_calls():
        head, *path = key.split(".")
        if key == "prange":
            obj = numba.prange
        elif head in roots:
            obj = functools.reduce(getattr, path, roots[head])  # np.linalg.norm: through np.linalg
        else:
            obj = getattr(builtins, key)
        table[id(obj)] = key
    return table


_CANONICAL = _canonical_objects()


def lookup(expr: cst.BaseExpression, scope: Mapping[str, Any]) -> Any:
    """The Python object a dotted name like `np.zeros` stands for, or None."""
    if isinstance(expr, cst.Name):
        if expr.value in scope:
            return scope[expr.value]
        return getattr(builtins, expr.value, None)
    if isinstance(expr, cst.Attribute):
        owner = lookup(expr.value, scope)
        return getattr(owner, expr.attr.value, None) if owner is not None else None
    return None


def canonical_call(func: cst.BaseExpression, scope: Mapping[str, Any]) -> str | None:
    """The canonical name (`math.sin`, `np.zeros`, `abs`, `custom.mod.f`) of a called function, or None."""
    obj = lookup(func, scope)
    if obj is None:
        return None
    rule = custom.lookup(obj)
    return rule.key if rule is not None else _CANONICAL.get(id(obj))


def user_function(func: cst.BaseExpression, scope: Mapping[str, Any]):
    """The plain Python function a call to a user function reaches (through numba dispatchers and
    sourcead decorators), or None for anything else."""
    from .parse import unwrap

    obj = lookup(func, scope)
    if obj is None or id(obj) in _CANONICAL or custom.lookup(obj) is not None:
        return None
    obj = unwrap(obj)
    return obj if inspect.isfunction(obj) else None


def canonical_func_node(key: str) -> cst.BaseExpression:
    """The expression that calls `key` in generated code (modules imported as `math` and `np`)."""
    if key.startswith("custom."):
        return cst.Name(custom.by_key(key).func_name)  # type: ignore[union-attr]
    return cst.parse_expression(key)  # math.sin, np.linalg.norm, abs


def is_frozen_constant(value: Any) -> bool:
    """Globals that numba freezes at compile time, and so do we."""
    return isinstance(value, (int, float, bool)) and not isinstance(value, np.ndarray)
