"""What the framework bridges (`sourcead.torch`, `sourcead.jax`) share, with no framework here.

A bridge is built on the public transforms, prepared once per bridge object: the primal (the
compiled function itself), `vjp` with respect to the `wrt` arguments a call actually needs
(one prepared `vjp` per subset, made on first use, so an argument that needs no gradient costs no
adjoint work), and, for forward mode, `jvp`. The thread-safety and caching story is theirs.

Bridges take functions that only read their arguments: a function that writes into an
argument array has that array's final state as an extra output, which a framework's autograd
cannot attach to an input tensor, so it is refused with a clear error at construction.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..api.decorator import Differentiable, differentiable
from ..api.first_order import JVP, VJP, jvp, vjp
from ..api.pickling import check_recipe, refused
from ..api.protocol import Wrt
from ..errors import SourceADError
from ..functions import unwrap


def missing(framework: str, extra: str) -> SourceADError:
    """The error for a framework that is not installed: which extra to install."""
    return SourceADError(
        f"sourcead.{extra} needs {framework}, which is not installed",
        hint=f"Install it with: pip install 'sourcead[{extra}]'",
    )


def check_options(ref: Any, wrt: Any, options: Any) -> None:
    """A bridge's pickled recipe (`pickling.check_recipe`): its options keyword arguments."""
    if not isinstance(options, dict) or not all(isinstance(k, str) for k in options):
        raise refused(f"the options {options!r} are not keyword arguments")
    check_recipe(ref, wrt, options.get("jit", True))


class Bridge:
    """The prepared transforms behind one bridge object, and the argument plan."""

    def __init__(self, func: Callable, wrt: Wrt, jit: bool, bridge: str):
        self.func = unwrap(func)
        self.jit = jit
        self.single = not isinstance(wrt, (tuple, list))
        items: tuple[int | str, ...] = tuple(wrt) if isinstance(wrt, (tuple, list)) else (wrt,)
        full = vjp(self.func, items, jit=jit)  # prepared now: a bad function or wrt fails here
        spec = full._default_variant().spec
        if spec.mutated:
            raise SourceADError(
                f"sourcead.{bridge}.function({spec.name}): {spec.name} writes into its argument"
                f"{'s' if len(spec.mutated) > 1 else ''} {', '.join(f'`{m}`' for m in spec.mutated)}; "
                f"a {bridge} bridge takes functions that only read their arguments",
                hint="Write into a local copy instead (e.g. `a = a.copy()` at the top of the function).",
            )
        self.name = spec.name
        self.params = spec.params
        self.kinds = spec.kinds
        self.wrt_names = spec.wrt
        self.wrt_pos = tuple(spec.params.index(w) for w in spec.wrt)
        self.n_outputs = spec.n_outputs
        self.output_is_tuple = spec.output_is_tuple
        self.returns_array = spec.returns_array
        self._vjps: dict[tuple[int, ...], VJP] = {self.wrt_pos: full}
        self._primal: Differentiable | None = None
        self._jvp: JVP | None = None
        self._lock = threading.Lock()

    def check_arity(self, args: tuple) -> None:
        if len(args) != len(self.params):
            raise SourceADError(
                f"{self.name} takes {len(self.params)} arguments ({', '.join(self.params)}), got {len(args)}"
            )

    def spec_for(self, args: list | tuple) -> Any:
        """The generated code's spec for a call with these (NumPy) arguments: parameters whose
        kind comes from the call (a float or an array) can change what the results are."""
        full = self._vjps[self.wrt_pos]
        return full._variant(tuple(args)).spec

    def scalar_result(self, args: list | tuple) -> bool:
        spec = self.spec_for(args)
        return not spec.output_is_tuple and not spec.returns_array

    def primal(self, *args: Any) -> Any:
        if self._primal is None:
            with self._lock:
                if self._primal is None:
                    self._primal = differentiable(self.func)
        return self._primal(*args)

    def vjp(self, positions: tuple[int, ...]) -> VJP:
        """`vjp` with respect to these argument positions (a subset of wrt), results as a tuple."""
        found = self._vjps.get(positions)
        if found is None:
            with self._lock:
                found = self._vjps.get(positions)
                if found is None:
                    found = vjp(self.func, tuple(self.params[k] for k in positions), jit=self.jit)
                    self._vjps = {**self._vjps, positions: found}
        return found

    def jvp(self) -> JVP:
        if self._jvp is None:
            with self._lock:
                if self._jvp is None:
                    self._jvp = jvp(self.func, self.wrt_names, jit=self.jit)
        return self._jvp
