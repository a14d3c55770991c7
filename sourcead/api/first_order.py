"""The first-order transforms: grad, value_and_grad, vjp, jvp, and the compiled primal
(`Primal`, behind `@differentiable`'s call and `.njit`). Each is a `_Prepared` (`prepared.py`)
with its own call: the seeds it passes and the results it unpacks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ..build import callplan
from ..build.compile import Spec
from ..errors import SourceADError
from . import pickling
from .callargs import _cotangents, _plain, _tangent_like
from .directions import _cotangent_batch, _jvp_batch, _no_written_outputs, _tangent_batch, _vjp_batch
from .prepared import _Prepared
from .protocol import Memory, Recipe, Wrt


class Gradient(_Prepared):
    """`grad(f, wrt)`: call it like `f`; returns the gradient(s) of the scalar result."""

    __slots__ = ("_with_value",)
    TRANSFORM = "grad"  # "value_and_grad" with_value (its recipe says which)

    def __init__(self, func: Callable, wrt: Wrt = 0, jit: bool = True, with_value: bool = False, memory: Memory = None):
        self._with_value = with_value  # without it, the generated code leaves out what only the value needs
        super().__init__(func, wrt, "reverse" if with_value else "gradient", jit, memory)

    def __sourcead_recipe__(self) -> Recipe:
        recipe = super().__sourcead_recipe__()
        return replace(recipe, transform="value_and_grad" if self._with_value else "grad")

    def _check(self, spec: Spec) -> None:
        if spec.output_is_tuple or spec.n_outputs != 1 or spec.returns_array:
            what = "a tuple" if spec.output_is_tuple else "an array"
            raise SourceADError(
                f"grad needs a function that returns a float; {spec.name} returns {what}",
                self._locate(),
                "Use sourcead.vjp(f, wrt)(*args, cotangent=...) for array or tuple results.",
            )

    def __call__(self, *args: Any, out: Any = None) -> Any:
        variant, converted = self._args(args)
        if out is not None:
            out = self._check_out(variant, out, args)
        # arguments the function writes are extra outputs, with a zero cotangent
        zeros = [np.zeros_like(converted[k]) for k in variant.written]
        results = self._run(variant, [*converted, 1.0, *zeros], args)
        if not self._with_value:
            return self._grads(variant, list(results), out)
        value, *flat = results
        grads = self._grads(variant, flat, out)
        return float(value[0] if variant.written else value), grads


class VJP(_Prepared):
    """`vjp(f, wrt)(*args, cotangent=c)` -> (value, gradient(s) of <c, f(args)>)."""

    __slots__ = ()
    TRANSFORM = "vjp"

    def __init__(self, func: Callable, wrt: Wrt = 0, jit: bool = True, memory: Memory = None):
        super().__init__(func, wrt, "reverse", jit, memory)

    def __call__(self, *args: Any, cotangent: Any, out: Any = None) -> Any:
        variant, converted = self._args(args)
        if out is None and _cotangent_batch(cotangent, variant.spec):  # k cotangents at once
            return _vjp_batch(self, variant, converted, cotangent)
        seeds = _cotangents(cotangent, variant.spec)
        seeds = callplan.check_cotangents(variant.plan, seeds, converted)
        if out is not None:
            out = self._check_out(variant, out, args, tuple(("cotangent", s) for s in seeds))
        value, *flat = self._run(variant, converted + seeds, args, seeds)
        callplan.check_results(variant.plan, value, seeds)
        return _plain(value), self._grads(variant, flat, out)


class JVP(_Prepared):
    """`jvp(f, wrt)(*args, tangents=t)` -> (value, directional derivative along t)."""

    __slots__ = ()
    TRANSFORM = "jvp"

    def __init__(self, func: Callable, wrt: Wrt = 0, jit: bool = True, memory: Memory = None):
        super().__init__(func, wrt, "forward", jit, memory)  # forward mode keeps no tape: nothing to bound

    def __call__(self, *args: Any, tangents: Any) -> Any:
        variant, converted = self._args(args)
        if _tangent_batch(tangents, converted, variant, self._single):  # k tangents at once
            _no_written_outputs(variant.spec)
            return _jvp_batch(self, variant, converted, tangents, args)
        spec = variant.spec
        items = (tangents,) if self._single else tangents
        if not isinstance(items, tuple) or len(items) != len(spec.wrt):
            raise SourceADError(f"tangents= must be a tuple of {len(spec.wrt)} values, one per wrt argument")
        dots = [_tangent_like(t, converted[k], w) for t, k, w in zip(items, variant.wrt_pos, spec.wrt, strict=True)]
        value, value_dot = self._run(variant, converted + dots, args)
        return _plain(value), _plain(value_dot)


class Primal(_Prepared):
    """The function itself, compiled from its core form (so the functions it calls are inlined)."""

    __slots__ = ()
    TRANSFORM = "primal"

    def __init__(self, func: Callable, jit: bool = True):
        super().__init__(func, (), "primal", jit)

    def __call__(self, *args: Any) -> Any:
        variant, converted = self._args(args)
        return _plain(self._run(variant, converted, args))


def grad(f: Callable, wrt: Wrt = 0, *, jit: bool = True, memory: Memory = None) -> Gradient:
    """The gradient of a float-valued `f` with respect to `wrt` (positions or names). `memory`: a
    budget for the snapshots of checkpointed time loops (docs/design.md, "Checkpointed loops")."""
    return Gradient(f, wrt, jit, memory=memory)


def value_and_grad(f: Callable, wrt: Wrt = 0, *, jit: bool = True, memory: Memory = None) -> Gradient:
    """Like `grad`, returning `(value, gradient)`."""
    return Gradient(f, wrt, jit, with_value=True, memory=memory)


def vjp(f: Callable, wrt: Wrt = 0, *, jit: bool = True, memory: Memory = None) -> VJP:
    """Reverse mode: `vjp(f, wrt)(*args, cotangent=c)` -> `(value, c^T J)`."""
    return VJP(f, wrt, jit, memory)


def jvp(f: Callable, wrt: Wrt = 0, *, jit: bool = True, memory: Memory = None) -> JVP:
    """Forward mode: `jvp(f, wrt)(*args, tangents=t)` -> `(value, J t)`. Forward mode records
    nothing, so `memory` (accepted as on every transform) changes nothing."""
    return JVP(f, wrt, jit, memory)


pickling.register("grad", lambda r: Gradient(r.func, r.wrt, r.jit, memory=r.memory))
pickling.register("value_and_grad", lambda r: Gradient(r.func, r.wrt, r.jit, with_value=True, memory=r.memory))
pickling.register("vjp", lambda r: VJP(r.func, r.wrt, r.jit, r.memory))
pickling.register("jvp", lambda r: JVP(r.func, r.wrt, r.jit, r.memory))
pickling.register("primal", lambda r: Primal(r.func, r.jit))
