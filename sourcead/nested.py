"""Derivative calls: a prepared derivative (`force = sourcead.grad(potential, wrt=0)`) called
inside a function that a transform differentiates.

The call is not inlined: like a custom rule (`custom.py`) it is a primitive of its own
(`rules/nested.py`), and generated code calls the prepared object's compiled code by the user's
name for it (`F = force(x, q)`). Its derivatives come from the calculus, one order higher and
from the same user function: the tangent of grad_w f(a) is the w-part of H(a) a_dot, and the
adjoints of all of a are H(a)[:, w] F_bar, by the symmetry of H; both are one call of
`hvp(f, wrt=<every float argument>)`, bound in the generated module as `force_hvp`. The outer
reverse sweep records the inner call's arguments only: the inner gradient has no tape in the
outer one, and its hvp recomputes from those arguments.

A prepared value_and_grad, vjp or hvp is lowered into a plain call and the derivative call of a
scalar function's gradient (`Part`, `lowered_function`; `api/lowering.py` writes them), and a
prepared jvp's generated tangent code is inlined (`forward_function`).

This module is the registry (the resolver registers each prepared global a function calls) and
the hook generated modules bind through (`nested_entry`): `api/nested.py`, which can build
prepared objects, installs it. Prepared objects are known here by their protocol alone
(`__sourcead_recipe__`, `api/protocol.py`), never by class.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .functions import unwrap

SUPPORTED = ("grad",)  # the transforms whose call is a derivative call of their own
INLINED = ("jvp",)  # prepared transforms whose generated code the front end inlines
# prepared transforms lowered into a plain call and the derivative call of a scalar function's
# gradient (`Part`): the front end inlines a small generated helper (`lowered_function`)
LOWERED = ("value_and_grad", "vjp", "hvp")
KEYWORDS = {"jvp": "tangents", "hvp": "tangents", "vjp": "cotangent"}  # the one keyword each call takes


class NestedRefusal(Exception):
    """A prepared object called where its derivative cannot be taken: the front end says it at the call."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True)
class NestedCall:
    """A prepared derivative held in a module global and called inside a differentiated function."""

    module: str  # where the global lives (generated modules import it from there)
    name: str  # the global's name: the name generated code calls it by
    transform: str  # grad, ...
    func: Callable  # the user's function it differentiates
    params: tuple[str, ...]  # its parameters
    wrt: tuple[int, ...]  # positions differentiated
    single: bool
    jit: bool
    part: str = ""  # "" for a prepared grad; else the gradient a lowered call needs (`Part`)

    @property
    def key(self) -> str:
        return f"nested.{self.module}.{self.name}" + (f".{self.part}" if self.part else "")

    @property
    def call_name(self) -> str:
        """The name generated code calls it by: the user's, or `vf_vjp` for a part of `vf`."""
        return f"{self.name}_{self.part}" if self.part else self.name

    @property
    def hvp_name(self) -> str:
        return f"{self.call_name}_hvp"

    def header_lines(self, kinds: tuple[str, ...], floats: tuple[int, ...]) -> list[str]:
        """The lines that bind the call and its derivative in a generated module, for arguments of
        these kinds (`Type.spec`) and the float arguments its derivative takes tangents for."""
        where = f'"{self.module}", "{self.name}"'
        part = f', part="{self.part}"' if self.part else ""
        what = "grad" if self.part else self.transform
        mark = f"  # {what}({self.func.__name__}, wrt={self.wrt[0]}), {fingerprint(self.func)}"
        return [
            f"{self.call_name} = nested_entry({where}, {kinds!r}{part}){mark}",
            f"{self.hvp_name} = nested_entry({where}, {kinds!r}, hvp={floats!r}{part})",
        ]


@dataclass(frozen=True)
class Part:
    """The gradient a lowered call needs (`LOWERED`), as a global of the helper the front end
    inlines for the call of the prepared object `obj`, held in `module` as the global `name`:

        part "grad"  of value_and_grad(f, w):  grad(f, w)
        part "vjp"   of vjp(f, w):             grad(s, w), s(a..., c) = np.sum(c * f(a...))
        part "hvp"   of hvp(f, w):             grad(t, w), t(a..., v) = the tangent of jvp(f, w) along v

    The scalar functions s and t are generated source (`scalar_function`), rebuilt from the
    prepared object's recipe in any process: a generated module binds the part by the user's global
    (`nested_entry("mod", "vf", kinds, part="vjp")`)."""

    module: str
    name: str
    part: str
    obj: Any = None


def fingerprint(func: Callable) -> str:
    """A digest of the inner function's source and of the user functions it calls: written into the
    caller's module, so that editing them changes the caller's module text, its name and so the
    machine code numba caches for it (which binds the inner derivative's compiled code)."""
    digest = hashlib.sha256()
    seen: set[int] = set()
    todo: list[Any] = [func]
    while todo:
        f = unwrap(todo.pop())
        if id(f) in seen or not inspect.isfunction(f):
            continue
        seen.add(id(f))
        try:
            digest.update(inspect.getsource(f).encode())
        except (OSError, TypeError):
            digest.update(f.__qualname__.encode())
        todo += [f.__globals__.get(name) for name in f.__code__.co_names]
    return digest.hexdigest()[:16]


_REGISTRY: dict[str, NestedCall] = {}
_HOOKS: dict[str, Callable] = {}  # installed by api/nested.py: entry, check, forward


def recipe_of(obj: Any) -> Any:
    """The recipe of a prepared derivative (`__sourcead_recipe__`), or None for anything else (a
    `@differentiable` function is the user's own function, inlined as one)."""
    method = getattr(type(obj), "__sourcead_recipe__", None)
    recipe = method(obj) if method is not None else None
    return recipe if recipe is not None and recipe.transform not in ("differentiable", "primal") else None


def register(obj: Any, module: str, name: str, part: str = "") -> NestedCall:
    """The derivative call of the prepared object `obj`, held in `module` as the global `name` (or
    of its `part`, `Part`); `NestedRefusal` when it is one whose derivative sourcead does not take yet."""
    recipe = recipe_of(obj)
    transform = recipe.transform
    if transform in LOWERED:
        refuse_lowered(obj, name)
    if part:
        params = tuple(inspect.signature(recipe.func).parameters)
        w = recipe.wrt
        position = params.index(w) if isinstance(w, str) else w % len(params)
        scalar = scalar_function(obj, module, name, part)
        params = tuple(inspect.signature(scalar).parameters)
        found = NestedCall(module, name, transform, scalar, params, (position,), True, recipe.jit, part)
        _REGISTRY[found.key] = found
        return found
    if transform not in SUPPORTED:
        raise NestedRefusal(
            f"`{name}` is a prepared {transform}; sourcead differentiates calls of prepared grad, "
            f"value_and_grad, jvp, vjp and hvp objects, not of {transform}",
            "Call a plain function that computes it instead, or prepare the inner derivative "
            f"with sourcead.grad({recipe.func.__name__}, wrt=...).",
        )
    if not recipe.single:
        raise NestedRefusal(
            f"`{name}` returns a tuple of gradients (wrt={recipe.wrt!r}); a derivative call needs one",
            f"Prepare one per argument: sourcead.grad({recipe.func.__name__}, wrt={recipe.wrt[0]!r}), ...",
        )
    params = tuple(inspect.signature(recipe.func).parameters)
    w = recipe.wrt
    position = params.index(w) if isinstance(w, str) else w % len(params)
    found = NestedCall(module, name, transform, recipe.func, params, (position,), True, recipe.jit)
    _REGISTRY[found.key] = found
    return found


def by_key(key: str) -> NestedCall | None:
    return _REGISTRY.get(key)


def by_name(name: str) -> NestedCall | None:
    """The derivative call that generated code calls as `name`."""
    return next((c for c in _REGISTRY.values() if c.call_name == name), None)


def refuse_lowered(obj: Any, name: str) -> None:
    """`NestedRefusal` for a lowered call (`LOWERED`) with a tuple wrt: its result is a tuple of
    gradients, which a derivative call does not return."""
    recipe = recipe_of(obj)
    if not recipe.single:
        raise NestedRefusal(
            f"`{name}` is a prepared {recipe.transform} with a tuple wrt ({recipe.wrt!r}); inside a "
            "differentiated function sourcead takes one wrt argument",
            f"Prepare one per argument: sourcead.{recipe.transform}({recipe.func.__name__}, "
            f"wrt={recipe.wrt[0]!r}), ...",
        )


def refused_object(obj: Any) -> str | None:
    """What a sourcead object that no derivative call covers is (a jacobian, a hessian), or None."""
    kind = type(obj)
    if kind.__module__.startswith("sourcead.") and kind.__name__ in ("Jacobian", "Hessian", "SparseHessian"):
        return kind.__name__.lower().replace("sparsehessian", "sparse hessian")
    return None


def install(**hooks: Callable) -> None:
    """`api/nested.py` gives what needs prepared objects built: `entry` (the compiled code a
    generated module binds), `check` (compiled code calls none prepared with `jit=False`) and
    `forward` (the generated forward-mode function of a prepared jvp, inlined like a helper)."""
    _HOOKS.update(hooks)


def _hook(name: str) -> Callable:
    if name not in _HOOKS:
        importlib.import_module("sourcead")  # its api installs the hooks
    return _HOOKS[name]


def check_compiled(func: Callable, source: str) -> None:
    """Before numba compiles the generated module of `func`: every derivative call it binds is
    compiled code too (a positioned error otherwise)."""
    if "nested_entry(" in source:
        _hook("check")(func, source)


def forward_function(obj: Any) -> Callable:
    """The generated forward-mode function `f_jvp(*args, *tangents) -> (value, tangent)` of a
    prepared jvp: plain source inside the subset, which the front end inlines like a helper."""
    return _hook("forward")(obj)


def lowered_function(obj: Any, module: str, name: str) -> Callable:
    """The generated helper the front end inlines for a call of a prepared value_and_grad, vjp or
    hvp (`LOWERED`) held in `module` as the global `name`: a plain call of the function and a call
    of its `Part`, `vf(x, q, cotangent) -> (f(x, q), vf_vjp(x, q, cotangent))`."""
    refuse_lowered(obj, name)
    return _hook("lowered")(obj, module, name)


def scalar_function(obj: Any, module: str, name: str, part: str, kinds: tuple[str, ...] | None = None) -> Callable:
    """The scalar function whose gradient is the `Part` `part` of the prepared object `obj` (for
    a call with arguments of these kinds, where they matter)."""
    return _hook("scalar")(obj, module, name, part, kinds)


def nested_entry(
    module: str, name: str, kinds: tuple[str, ...], hvp: tuple[int, ...] | None = None, part: str = ""
) -> Callable:
    """What a generated module binds for the global `name` of `module` (or for its `part`): its
    value call, or (with `hvp`, the positions of the float arguments) the Hessian-vector product
    of its function, `(*args, *tangents of those) -> (adjoint of each)`."""
    obj = getattr(importlib.import_module(module), name)
    return _hook("entry")(obj, module, name, kinds, hvp, part)


_BINDING_LINE = re.compile(r"^\w+ = nested_entry\(.*$", re.M)


def bind_ahead(text: str) -> None:
    """Build the derivative calls a generated module's header binds before the module is run.

    A module runs under the lock every module load holds (`build/modules.py`); building an inner
    derivative there would take the inner prepared object's lock after that load lock, while a
    thread preparing the inner object itself takes them the other way round, and the two could
    wait on each other for ever. Built here first, with no load lock held, the header's own
    `nested_entry` calls find them made."""
    lines = _BINDING_LINE.findall(text)
    if lines:
        exec("\n".join(lines), {"nested_entry": nested_entry})
