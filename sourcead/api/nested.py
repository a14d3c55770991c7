"""The compiled entries a derivative call binds (`sourcead/nested.py`): the prepared object's own
call and the Hessian-vector product its derivatives come from, for the kinds of the call.

    force      = grad(potential, wrt=0).njit       (*args) -> the gradient
    force_hvp  = hvp(potential, wrt=<floats>)      (*args, *tangents) -> (H v)[k] for each float k

Under `jit=True` (the prepared object's) both are numba dispatchers, callable from the outer
generated code compiled or not; under `jit=False` plain Python, which compiled code cannot call.
"""

from __future__ import annotations

import importlib
import inspect
import re
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import nested
from ..build.jit import bounds_checked, jitted_name
from ..errors import SourceADError
from ..ir.types import parse_spec
from .higher import HVP
from .njit import _core_dispatcher
from .protocol import Prepared

_LOCK = threading.Lock()
_ENTRIES: dict[tuple, Callable] = {}


def _example(spec: str) -> Any:
    """An argument of this kind: what chooses the variant (its values never run)."""
    kind = parse_spec(spec)
    if not kind.is_array:
        return {"int": 1, "bool": False}.get(kind.dtype, 0.0)
    dtype = {"int": np.int64, "bool": np.bool_}.get(kind.dtype, np.float64)
    return np.zeros((1,) * kind.ndim, dtype=dtype)


def entry(
    obj: Prepared, module: str, name: str, kinds: tuple[str, ...], hvp: tuple[int, ...] | None, part: str = ""
) -> Callable:
    """The callable generated code binds as `name` (hvp None) or as `name_hvp`; for a lowered call
    (`api/lowering.py`), those of its part: `name_part` and `name_part_hvp`."""
    key = (id(obj), kinds, hvp, part)
    found = _ENTRIES.get(key)
    if found is None:
        with _LOCK:
            found = _ENTRIES.get(key)
            if found is None:
                try:
                    found = _build(obj, module, name, kinds, hvp, part)
                except SourceADError as exc:  # kinds the caller's code only guessed: its real call builds another
                    found = _refusing(exc, obj.__sourcead_recipe__().jit)
                _ENTRIES[key] = found
    return found


def _refusing(exc: SourceADError, jit: bool) -> Callable:
    """What a module binds for a call whose kinds the inner derivative refuses: the error, when
    (if ever) it runs. A caller's default variant guesses the kinds of arguments it only passes on;
    the call with the real ones builds a variant of its own."""
    message = str(exc).splitlines()[0]

    def refuse(*args: Any) -> Any:
        raise SourceADError(message)

    if not jit:
        return refuse
    import numba

    def refuse_compiled(*args: Any) -> Any:
        raise ValueError(message)

    return numba.njit(refuse_compiled)


def _build(
    obj: Any, module: str, name: str, kinds: tuple[str, ...], hvp: tuple[int, ...] | None, part: str
) -> Callable:
    recipe = obj.__sourcead_recipe__()
    examples = tuple(_example(k) for k in kinds)
    func = recipe.func
    if part:  # a lowered call's gradient: of the function, or of a scalar function made from it
        func = nested.scalar_function(obj, module, name, part, kinds)
        name = f"{name}_{part}"
        if hvp is None:
            obj = _part_gradient(obj, func)
    if hvp is None:
        if recipe.jit:
            return obj.njit_for(*examples)
        return lambda *args: obj(*args)
    second = HVP(func, tuple(hvp), recipe.jit, recipe.memory)
    variant = second._variant(examples)
    if variant.written:
        raise SourceADError(
            f"`{name}` differentiates {func.__name__}, which writes into its arguments: "
            "its derivative inside a differentiated function is not supported yet",
            hint=f"Let {func.__name__} compute on copies of its arguments.",
        )
    n = len(kinds)
    params = [f"a{k}" for k in range(n)]
    dots = [f"d{k}" for k in hvp]
    outs = [f"h{k}" for k in hvp]
    text = (
        f"def {name}_hvp({', '.join(params + dots)}):\n"
        f"    _value, {', '.join(outs)}, = core({', '.join(params + dots)}, 1.0)\n"
        f"    return ({', '.join(outs)},)\n"
    )
    if recipe.jit:
        found = __import__(_core_dispatcher(variant), fromlist=["_"])
        core = getattr(found, jitted_name(bounds_checked(variant.spec)))
    else:
        core = _plain(variant.call)
    scope: dict[str, Any] = {"core": core}
    exec(compile(text, f"<derivative of {name}>", "exec"), scope)
    function = scope[f"{name}_hvp"]
    if recipe.jit:
        import numba

        return numba.njit(function)
    return function


def _part_gradient(obj: Any, func: Callable) -> Any:
    """The prepared `grad(func, w)` of a lowered call's part (one per prepared object and part)."""
    from .first_order import Gradient

    recipe = obj.__sourcead_recipe__()
    params = list(inspect.signature(recipe.func).parameters)
    w = recipe.wrt if isinstance(recipe.wrt, int) else params.index(recipe.wrt)
    key = (id(obj), id(func))
    found = _GRADIENTS.get(key)
    if found is None:
        with _PART_LOCK:  # `entry` holds _LOCK while it builds
            found = _GRADIENTS.setdefault(key, Gradient(func, w, recipe.jit, memory=recipe.memory))
    return found


_GRADIENTS: dict[tuple[int, int], Any] = {}
_PART_LOCK = threading.Lock()


def _plain(call: Callable) -> Callable:
    """The plain-Python generated code, on NumPy floats as `_Prepared._run` calls it."""

    def run(*args: Any) -> Any:
        with np.errstate(all="ignore"):
            return call(*(np.float64(a) if type(a) is float else a for a in args))

    return run


_BINDING = re.compile(r'^(\w+) = nested_entry\("([\w.]+)", "(\w+)", \(.*\)(, part="\w+")?\)(  #.*)?$', re.M)


def refuse_python_inner(func: Callable, source: str) -> None:
    """Compiled code cannot call a derivative prepared with `jit=False` (plain Python): said at the
    call in the user's function, before numba fails on it."""
    for found in _BINDING.finditer(source):
        obj = getattr(importlib.import_module(found.group(2)), found.group(3))
        if obj.__sourcead_recipe__().jit:
            continue
        from ..frontend.parse import parse_function  # only on this error: keeps libcst out of warm starts
        from ..ir.exprs import walk

        parsed = parse_function(func)
        name = found.group(3)
        calls = [n for n in walk(parsed.node) if isinstance(n, cst_call()) and _calls(n, name)]
        raise parsed.error(
            f"`{name}` was prepared with jit=False, and the compiled code of {func.__name__} cannot call plain Python",
            calls[0] if calls else parsed.node,
            f"Prepare {name} with jit=True (the default), or differentiate {func.__name__} with jit=False too.",
        )


def cst_call() -> type:
    import libcst as cst

    return cst.Call


def _calls(node: Any, name: str) -> bool:
    func = node.func
    if getattr(func, "attr", None) is not None and func.attr.value == "njit":
        func = func.value
    return getattr(func, "value", None) == name


def forward_function(obj: Any) -> Callable:
    """The plain generated `f_jvp` of a prepared jvp (its default variant): inlined like a helper."""
    return obj._default_variant().compiled.python


nested.install(entry=entry, check=refuse_python_inner, forward=forward_function)

from . import lowering as _lowering  # noqa: E402, F401  (installs the lowered calls' helpers)
