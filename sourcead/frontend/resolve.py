"""Resolve the names a user function reads: primitives, user functions, frozen global constants."""

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

from .. import custom, nested
from ..rules import NOT_LITERAL, PRIMITIVES, literal

# what a `for` loop may run over: ranges, and (normalize writes them as ranges) arrays, enumerate, zip
LOOPS = {"range": range, "prange": numba.prange, "enumerate": enumerate, "zip": zip}
_DTYPE_OBJECTS = {np.float64: "np.float64", float: "np.float64", np.int64: "np.int64", int: "np.int64",
                  np.bool_: "np.bool_", bool: "np.bool_", np.float32: "np.float32"}  # fmt: skip
_DTYPE_STRINGS = {"float64": "np.float64", "f8": "np.float64", "float": "np.float64", "int64": "np.int64",
                  "i8": "np.int64", "int": "np.int64", "bool": "np.bool_", "float32": "np.float32",
                  "f4": "np.float32"}  # fmt: skip


def _resolve_path(key: str) -> Any:
    """The Python object a canonical name spells (`np.linalg.norm`, `math.sin`, `abs`), or None."""
    head, *path = key.split(".")
    roots = {"math": math, "np": np}
    try:
        if head in roots:
            return functools.reduce(getattr, path, roots[head])
        return getattr(builtins, key) if not path else None
    except AttributeError:
        return None


def _canonical_objects() -> dict[int, str]:
    """id(python object) -> canonical name, for every primitive that a name spells, and loops."""
    table: dict[int, str] = {}
    for key, prim in PRIMITIVES.items():
        for spelling in (key, *prim.spellings):
            obj = _resolve_path(spelling)
            if obj is not None and callable(obj):
                table.setdefault(id(obj), key)
    for key, obj in LOOPS.items():
        table[id(obj)] = key
    from .. import runtime  # helpers that are primitives too (forward mode's, read back by second order)

    for key in sorted(set(PRIMITIVES) & set(runtime.HELPERS)):
        table[id(getattr(runtime, key))] = key
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


def prepared_call(func: cst.BaseExpression, scope: Mapping[str, Any]) -> nested.NestedCall | None:
    """The derivative call (`nested.py`) of a call to a prepared derivative held in a module global
    (`force(x, q)` or `force.njit(x, q)`, with `force = sourcead.grad(potential, wrt=0)`), or of a
    `nested.Part` in a lowered call's helper; None for any other call; `nested.NestedRefusal` for
    one whose derivative is not taken."""
    if not _prepared_global(func, scope):
        return None
    if isinstance(func, cst.Attribute):
        func = func.value
    assert isinstance(func, cst.Name)
    value = scope[func.value]
    if isinstance(value, nested.Part):
        return nested.register(value.obj, value.module, value.name, value.part)
    transform = nested.recipe_of(value).transform
    if transform in nested.INLINED or transform in nested.LOWERED:
        if transform in nested.LOWERED:
            nested.refuse_lowered(value, func.value)
        return None  # its generated code, or a helper lowering it, is inlined (`user_function`)
    return nested.register(value, str(scope.get("__name__")), func.value)


def _prepared_global(func: cst.BaseExpression, scope: Mapping[str, Any]) -> bool:
    """Is `func` a prepared derivative held in a global, or its `.njit`?"""
    if isinstance(func, cst.Attribute) and func.attr.value == "njit":
        func = func.value
    if not isinstance(func, cst.Name):
        return False
    value = scope.get(func.value)
    return isinstance(value, nested.Part) or nested.recipe_of(value) is not None


def canonical_call(func: cst.BaseExpression, scope: Mapping[str, Any]) -> str | None:
    """The canonical name (`math.sin`, `np.zeros`, `abs`, `range`, `custom.mod.f`, `nested.mod.g`)
    of a called function, or None."""
    try:
        call = prepared_call(func, scope)
    except nested.NestedRefusal:
        return None  # the fence says why, at the call
    if call is not None:
        return call.key
    obj = lookup(func, scope)
    if obj is None:
        return None
    rule = custom.lookup(obj)
    if rule is not None:
        return rule.key
    return _CANONICAL.get(id(obj))


def user_function(func: cst.BaseExpression, scope: Mapping[str, Any]):
    """The plain Python function a call to a user function reaches (through numba dispatchers and
    sourcead decorators), or None for anything else."""
    from .parse import unwrap

    if _prepared_global(func, scope):  # a derivative call (not inlined), or a jvp's code (inlined)
        name = func.value if isinstance(func, cst.Attribute) else func
        obj = lookup(name, scope)
        if isinstance(obj, nested.Part):
            return None
        transform = nested.recipe_of(obj).transform
        if transform in nested.LOWERED:  # value_and_grad, vjp, hvp: a helper of a plain call and a gradient
            try:
                return nested.lowered_function(obj, str(scope.get("__name__")), name.value)  # type: ignore[attr-defined]
            except nested.NestedRefusal:
                return None  # the fence says why, at the call
        return nested.forward_function(obj) if transform in nested.INLINED else None
    obj = lookup(func, scope)
    if obj is None or id(obj) in _CANONICAL or custom.lookup(obj) is not None:
        return None
    obj = unwrap(obj)
    if not inspect.isfunction(obj) or _library(obj):
        return None
    return obj


# a function of these packages is NumPy's or Python's own, never the user's: a call to one that
# rules/ does not declare is refused at the user's call (the fence), never inlined from its source
_LIBRARIES = ("numpy", "math", "scipy", "numba")


def _library(func) -> bool:
    module = getattr(func, "__module__", None) or ""
    return module.split(".")[0] in _LIBRARIES


def inlined_call(call: cst.Call, scope: Mapping[str, Any]) -> cst.Call:
    """A call of a prepared jvp, vjp or hvp, `g(x, q, tangents=v)`, as a call of its inlined code,
    which takes the tangents (or the cotangent) after the arguments: `g(x, q, v)` (a tuple of
    tangents spread out)."""
    if not _prepared_global(call.func, scope):
        return call
    extra = ("tangents", "cotangent")
    args = [a for a in call.args if a.keyword is None or a.keyword.value not in extra]
    for a in call.args:
        if a.keyword is not None and a.keyword.value in extra:
            value = a.value
            items = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
            args += [cst.Arg(item) for item in items]
    return call.with_changes(args=args)


def canonical_func_node(key: str) -> cst.BaseExpression:
    """The expression that calls `key` in generated code (modules imported as `math` and `np`)."""
    if key.startswith("custom."):
        return cst.Name(custom.by_key(key).func_name)  # type: ignore[union-attr]
    if key.startswith("nested."):
        return cst.Name(nested.by_key(key).call_name)  # type: ignore[union-attr]
    return cst.parse_expression(key)  # math.sin, np.linalg.norm, abs


FROZEN_ARRAY_LIMIT = 10_000  # elements: a module-level array larger than this is passed as an argument


def is_frozen_constant(value: Any) -> bool:
    """Globals that numba freezes at compile time, and so do we: numbers, and arrays of float64,
    int64 or bool (1-D to 3-D, at most FROZEN_ARRAY_LIMIT elements, written into the module)."""
    if isinstance(value, np.ndarray):
        return (
            value.dtype in (np.float64, np.int64, np.bool_)
            and 1 <= value.ndim <= 3
            and value.size <= FROZEN_ARRAY_LIMIT
        )
    return isinstance(value, (int, float, bool))


def dtype_name(expr: cst.BaseExpression, scope: Mapping[str, Any]) -> str | None:
    """`np.float64` for the expressions np.float64, float, numpy.float64 and "float64"; the same for
    float32 (float storage: rounded where stored, a real number to differentiation), int64 and bool."""
    if isinstance(expr, cst.SimpleString):
        return _DTYPE_STRINGS.get(str(expr.evaluated_value))
    obj = lookup(expr, scope)
    try:
        return _DTYPE_OBJECTS.get(obj)
    except TypeError:
        return None


def literal_in_scope(expr: cst.BaseExpression, scope: Mapping[str, Any]) -> object:
    """A literal argument as the user wrote it: a number, a bool, None, a tuple, a dtype, or a frozen
    int global (`AXIS = 1` at module level); NOT_LITERAL otherwise."""
    found = literal(expr)
    if found is not NOT_LITERAL:
        return found
    dtype = dtype_name(expr, scope)
    if dtype is not None:
        return dtype
    value = lookup(expr, scope) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value == float("inf"):  # np.inf, as np.linalg.norm's ord
        return value
    return NOT_LITERAL
