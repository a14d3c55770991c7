"""`@differentiable`: the function still runs (compiled by numba, `Primal`) and gains derivative
methods, each prepared once, on first use.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import SourceADError
from ..functions import unwrap
from . import pickling
from .budget import memory_bytes
from .first_order import JVP, VJP, Gradient, Primal, grad, jvp, value_and_grad, vjp
from .higher import HVP, hvp
from .pickling import function_ref, rebuild_differentiable
from .prepared import _Prepared
from .protocol import Memory, Recipe, Wrt

if TYPE_CHECKING:
    from numba.core.dispatcher import Dispatcher


class Differentiable:
    """`@differentiable`: `f` still runs (compiled by numba) and gains derivative methods.

    The compiled primal and each prepared derivative are made once, under a lock, on first use.
    """

    def __init__(self, func: Callable, memory: Memory = None):
        self.__sourcead_func__ = unwrap(func)
        self._memory = memory
        memory_bytes(memory)  # a bad budget fails at the decorator
        functools.update_wrapper(self, self.__sourcead_func__)
        self._lock = threading.Lock()
        self._primal: Primal | None = None
        self._prepared: dict[tuple, _Prepared] = {}

    def __sourcead_recipe__(self) -> Recipe:
        """What this object is (`protocol.py`): the function decorated, with its memory budget."""
        return Recipe("differentiable", self.__sourcead_func__, (), False, True, self._memory)

    def __reduce__(self) -> tuple:
        """Pickles by the function; in the receiving process, the module's own decorated object."""
        return rebuild_differentiable, (function_ref(self.__sourcead_func__), self._memory)

    def __call__(self, *args: Any) -> Any:
        return self._get_primal()(*args)

    @property
    def njit(self) -> Dispatcher:
        """The compiled function itself as a numba dispatcher, for `@numba.njit` code (which
        cannot call the decorated object): `f.njit(*args)` returns what `f(*args)` returns."""
        return self._get_primal().njit  # type: ignore[return-value]  # mypy binds the Dispatcher's __get__

    def _get_primal(self) -> Primal:
        """The compiled primal, made once, under the lock, on first use."""
        primal = self._primal
        if primal is None:
            with self._lock:
                primal = self._primal
                if primal is None:
                    primal = self._primal = Primal(self.__sourcead_func__)
        return primal

    def _get(self, kind: str, wrt: Wrt, jit: bool, memory: Memory = None) -> Any:
        memory = self._memory if memory is None else memory
        key = (kind, tuple(wrt) if isinstance(wrt, list) else wrt, jit, memory)
        prepared = self._prepared.get(key)
        if prepared is None:
            with self._lock:
                prepared = self._prepared.get(key)
                if prepared is None:
                    make = {"grad": grad, "value_and_grad": value_and_grad, "jvp": jvp, "vjp": vjp, "hvp": hvp}[kind]
                    prepared = make(self.__sourcead_func__, key[1], jit=jit, memory=memory)
                    self._prepared = {**self._prepared, key: prepared}
        return prepared

    def grad(self, wrt: Wrt = 0, *, jit: bool = True, memory: Memory = None) -> Gradient:
        return self._get("grad", wrt, jit, memory)

    def value_and_grad(self, wrt: Wrt = 0, *, jit: bool = True, memory: Memory = None) -> Gradient:
        return self._get("value_and_grad", wrt, jit, memory)

    def jvp(self, wrt: Wrt = 0, *, jit: bool = True, memory: Memory = None) -> JVP:
        return self._get("jvp", wrt, jit, memory)

    def vjp(self, wrt: Wrt = 0, *, jit: bool = True, memory: Memory = None) -> VJP:
        return self._get("vjp", wrt, jit, memory)

    def hvp(self, wrt: Wrt = 0, *, jit: bool = True, memory: Memory = None) -> HVP:
        return self._get("hvp", wrt, jit, memory)

    def source(
        self,
        mode: str = "reverse",
        wrt: Wrt = 0,
        arrays: dict[str, int | tuple[int, str]] | None = None,
        memory: Memory = None,
    ) -> str:
        """The generated derivative module, as text (mode "reverse", "gradient" (what `grad` runs),
        "forward" or "hvp"); `arrays`
        gives parameters the code does not say are arrays their number of dimensions, or
        (ndim, dtype) with dtype "float", "int" or "bool" (`sourcead emit --array NAME:NDIM:DTYPE`)."""
        from ..ir.types import ARRAY_DTYPES, array_kind
        from ..pipeline.driver import generate

        items = tuple(wrt) if isinstance(wrt, (tuple, list)) else (wrt,)
        kinds = {}
        for name, given in (arrays or {}).items():
            ndim, dtype = given if isinstance(given, tuple) else (given, "float")
            if int(ndim) not in (1, 2, 3) or dtype not in ARRAY_DTYPES:
                raise SourceADError(
                    f"arrays[{name!r}] = {given!r}: not an array's number of dimensions (1 to 3), or (ndim, dtype)",
                    hint='Give 2, or (1, "int"): dtype "float", "int" or "bool".',
                )
            kinds[name] = array_kind(int(ndim), dtype)
        budget = memory_bytes(self._memory if memory is None else memory)
        return generate(self.__sourcead_func__, mode, items, kinds or None, budget).source


def differentiable(func: Callable | None = None, *, memory: Memory = None) -> Any:
    """Decorator: keep `f` callable and give it `.grad/.value_and_grad/.jvp/.vjp/.source`.
    `@differentiable(memory="256MB")` gives its reverse-mode derivatives a memory budget."""
    if func is None:
        return lambda f: Differentiable(f, memory)
    return Differentiable(func, memory)


pickling.register("differentiable", lambda r: Differentiable(r.func, r.memory))
