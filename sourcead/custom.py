"""Custom rules: give a user function its own partial derivatives.

    def softplus_partials(x):
        return (1.0 / (1.0 + math.exp(-x)),)

    @sourcead.custom_rule(partials=softplus_partials)
    def softplus(x):
        return math.log1p(math.exp(x))

A partial that may be infinite or nan where the function's value is finite (a square root's at 0)
is declared by the argument's name or position, `singular=("x",)`: both modes then give an exactly
zero derivative where the argument's tangent or the partials below it are exactly zero, as for the
built-in `math.sqrt` (`rules/forms.py`, `Partials.singular`).

Like the built-in rules (`sourcead/rules/`), a custom rule declares partial derivatives once and
both modes are derived from them: forward mode contracts them with the tangents, reverse mode
multiplies them into the adjoint. The function and its partials are float functions of floats
that numba can compile; sourcead never differentiates their bodies, it calls them. Calls to
them are not inlined: generated code imports them by module and name (see `jitable`), so they
must be module-level functions of an importable module.

This module is the registry, and imports no libcst (a warm start reads it to key the cache);
`rules/custom.py` makes a registered rule a primitive like the built-in ones.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from numba.extending import register_jitable

from .errors import SourceADError
from .functions import unwrap


@dataclass(frozen=True)
class CustomRule:
    func: Callable
    partials: Callable
    singular: tuple[int, ...] = ()  # the positions of the arguments whose partial may be non-finite

    @property
    def key(self) -> str:
        """The canonical name of the function, also its name in generated modules."""
        return f"custom.{self.func.__module__}.{self.func.__qualname__}"

    @property
    def func_name(self) -> str:
        return _local_name(self.func)

    @property
    def partials_name(self) -> str:
        return _local_name(self.partials)

    def header_lines(self) -> list[str]:
        """The lines that bind the function and its partials in a generated module."""
        return [
            f'{self.func_name} = jitable("{self.func.__module__}", "{self.func.__qualname__}")',
            f'{self.partials_name} = jitable("{self.partials.__module__}", "{self.partials.__qualname__}")',
        ]


_REGISTRY: dict[int, CustomRule] = {}


def custom_rule(*, partials: Callable, singular: tuple[str | int, ...] = ()) -> Callable[[Callable], Callable]:
    """Decorator: `f`'s derivatives come from `partials(*args) -> (df/darg0, df/darg1, ...)`;
    `singular` names the arguments (by name or position) whose partial may be infinite or nan where
    `f`'s value is finite."""

    def register(func: Callable) -> Callable:
        plain, plain_partials = unwrap(func), unwrap(partials)
        for f in (plain, plain_partials):
            if not inspect.isfunction(f) or "<locals>" in f.__qualname__:
                raise SourceADError(
                    f"custom rules need module-level functions; got {getattr(f, '__qualname__', f)!r}",
                    hint="Define the function and its partials at the top level of a module.",
                )
        n_func = len(inspect.signature(plain).parameters)
        if n_func != len(inspect.signature(plain_partials).parameters):
            raise SourceADError(
                f"{plain.__name__} and {plain_partials.__name__} must take the same arguments",
                hint="partials(*args) returns one partial derivative per argument, as a tuple.",
            )
        if not 1 <= n_func <= 2:
            raise SourceADError(f"custom rules take 1 or 2 float arguments; {plain.__name__} takes {n_func}")
        rule = CustomRule(plain, plain_partials, _positions(plain, singular))
        _REGISTRY[id(func)] = _REGISTRY[id(plain)] = rule
        return func

    return register


def _positions(func: Callable, singular: Any) -> tuple[int, ...]:
    """The positions of the arguments `singular` names (names or positions), checked."""
    params = list(inspect.signature(func).parameters)
    given = (singular,) if isinstance(singular, (str, int)) else tuple(singular)
    positions = []
    for entry in given:
        if isinstance(entry, str) and entry in params:
            positions.append(params.index(entry))
        elif isinstance(entry, int) and not isinstance(entry, bool) and 0 <= entry < len(params):
            positions.append(entry)
        else:
            raise SourceADError(
                f"singular={singular!r}: {entry!r} is not an argument of {func.__name__}",
                hint=f"Name the arguments whose partial may be infinite, by name or position: of {', '.join(params)}.",
            )
    return tuple(sorted(set(positions)))


def lookup(obj: Any) -> CustomRule | None:
    """The custom rule registered for `obj` (a function or what wraps it), if any."""
    return _REGISTRY.get(id(obj)) or _REGISTRY.get(id(unwrap(obj))) if obj is not None else None


def by_key(key: str) -> CustomRule | None:
    return next((c for c in _REGISTRY.values() if c.key == key), None)


def by_name(name: str) -> CustomRule | None:
    """The custom rule whose function generated code calls `name`."""
    return next((c for c in _REGISTRY.values() if c.func_name == name), None)


@functools.cache
def jitable(module: str, qualname: str) -> Callable:
    """The function `module.qualname`, callable both from Python and from numba-compiled code."""
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return register_jitable(unwrap(obj))


def _local_name(func: Callable) -> str:
    return func.__name__
