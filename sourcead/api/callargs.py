"""Argument checks and result conversions of a call, shared by the transforms: the cotangents
and tangents a call gives, the defaults it leaves out, the float or array results it returns, and
what an error building a variant says about the call's argument kinds (`prepared.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..build import callplan
from ..build.compile import Spec
from ..errors import ArgumentTypeError, ShapeError, SourceADError
from ..functions import unwrap
from ..ir.types import Type, parse_spec
from .protocol import _Variant


def _other_guess(spec: Spec) -> dict[str, str]:
    """Another guess at the parameters the call decides (see `kinds.other_guess`): floats as 1-D
    arrays, arrays with one more dimension."""
    other = {}
    for p, kind in zip(spec.params, spec.kinds, strict=True):
        if p in spec.free:
            t = parse_spec(kind)
            other[p] = (Type("float", 1) if not t.is_array else Type(t.dtype, t.ndim + 1)).spec()
    return other


def _cotangents(cotangent: Any, spec: Spec) -> list:
    """Flatten a cotangent shaped like the result (then one per written argument, if any)."""
    if spec.mutated:
        if not isinstance(cotangent, tuple) or len(cotangent) != 1 + len(spec.mutated):
            raise SourceADError(
                f"{spec.name} writes into {', '.join(spec.mutated)}, so its outputs are "
                f"(result, {', '.join(spec.mutated)}): cotangent= must be a tuple of {1 + len(spec.mutated)} values"
            )
        cotangent, written = cotangent[0], cotangent[1:]
    else:
        written = ()
    items = cotangent if spec.output_is_tuple else (cotangent,)
    if not isinstance(items, tuple) or len(items) != spec.n_outputs:
        raise SourceADError(f"cotangent= must be a tuple of {spec.n_outputs} values, like the result of {spec.name}")
    return [_as_float_or_array(c, "cotangent") for c in items + tuple(written)]


def _tangent_like(tangent: Any, arg: Any, name: str) -> Any:
    if isinstance(arg, np.ndarray):
        t = np.array(callplan.real_array(tangent, f"the tangent of `{name}`"), copy=True)  # ours; never the caller's
        if t.shape != arg.shape:
            raise ShapeError(f"the tangent of `{name}` has shape {t.shape}, but `{name}` has shape {arg.shape}")
        return t
    if isinstance(tangent, np.ndarray) and tangent.ndim == 0:  # NumPy's scalar in a box: its float
        tangent = callplan.real_array(tangent, f"the tangent of `{name}`")[()]
    elif isinstance(tangent, np.ndarray):
        raise ShapeError(f"the tangent of the float `{name}` must be a float, got an array")
    return callplan.real_float(tangent, f"the tangent of `{name}`")


def _as_float_or_array(value: Any, what: str) -> Any:
    if isinstance(value, np.ndarray):
        return callplan.real_array(value, what)
    return callplan.real_float(value, what)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, np.ndarray):
        return value
    return float(value)


def _with_defaults(func: Callable, args: tuple) -> tuple:
    """`args` followed by the defaults of the parameters they leave out (`def f(x, alpha=0.5)`
    called as `g(x)`); unchanged where a left-out parameter has no default (the caller says so)."""
    import inspect

    rest = list(inspect.signature(unwrap(func)).parameters.values())[len(args) :]
    if any(p.default is inspect.Parameter.empty for p in rest):
        return args
    return (*args, *(p.default for p in rest))


def _for_these_kinds(exc: SourceADError, kinds: dict[str, str], default: _Variant | None) -> SourceADError:
    """An error building the variant of a call's argument kinds, said to be about those kinds
    where they differ from the default variant's (a 2-D array where the code reads a 1-D one)."""
    if default is None or getattr(exc, "guessed", None) is None:
        return exc
    spec = default.spec
    changed = [
        f"`{name}` {parse_spec(kind).describe()} ({spec.name} reads it as "
        f"{parse_spec(spec.kinds[spec.params.index(name)]).describe()} by default)"
        for name, kind in kinds.items()
        if kind != spec.kinds[spec.params.index(name)]
    ]
    if not changed:
        return exc
    if exc.message.startswith("argument `"):
        return ArgumentTypeError(exc.message, exc.where, exc.hint)
    return ArgumentTypeError(f"with argument {'; argument '.join(changed)}: {exc.message}", exc.where, exc.hint)
