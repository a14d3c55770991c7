"""What the rest of `api/` may know about a prepared derivative, declared below the transforms.

A prepared object (`grad(f)`, `vjp(f)`, `@differentiable f`, ...) says what it is through one
method, `__sourcead_recipe__()`, returning its `Recipe`: the transform's name, the user's
function, wrt, jit and the memory budget. Pickling (`pickling.py`) and the `.njit` entries
(`njit.py`) ask that, never `isinstance` against the transform classes, so they sit below them
and import none of them. `_Variant` is one compiled variant of a prepared object (its code and
call plan), which `.njit` and the batch loops (`batch.py`) read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..build import callplan
from ..build.compile import Compiled, Spec

Wrt = int | str | tuple[int | str, ...]
Memory = int | str | None  # bytes, or "64kB", "16MB", "2GB" (`budget.py`)


@dataclass(frozen=True)
class _Variant:
    """The compiled code for one assignment of kinds to the parameters, and its call plan."""

    compiled: Compiled
    spec: Spec
    call: Callable
    converters: tuple[Callable[[Any], Any], ...]
    wrt_pos: tuple[int, ...]  # argument position of each wrt name
    wrt_array: tuple[bool, ...]  # is its derivative an array?
    written: tuple[int, ...]  # positions of the arguments the function writes (extra outputs)
    plan: callplan.CallPlan  # shapes, self-overlap, cotangents: checked before the call
    alias_pairs: tuple[tuple[int, int], ...] = ()  # (written array argument, other array argument)


@dataclass(frozen=True)
class Recipe:
    """What a prepared object is: enough to make it again in another process, or to write its
    `.njit` entry. `transform` is "grad", "value_and_grad", "vjp", "jvp", "primal", "hvp",
    "vector" (vector-mode jvp, internal) or "differentiable"; `wrt` as the user gave it (one
    position or name, or a tuple: `single` says which); `memory` in bytes, or as given to
    `@differentiable`."""

    transform: str
    func: Callable
    wrt: Wrt
    single: bool
    jit: bool
    memory: Memory


@runtime_checkable
class Prepared(Protocol):
    """A prepared derivative (or `@differentiable` function): it tells its recipe."""

    def __sourcead_recipe__(self) -> Recipe: ...
