"""JAX bridge: a sourcead derivative as the custom rule of a JAX function.

    import jax
    jax.config.update("jax_enable_x64", True)        # sourcead differentiates float64 only
    import sourcead.jax
    F = sourcead.jax.function(f, wrt=(0, 1))          # reverse mode: jax.grad, jax.vjp
    Fj = sourcead.jax.function(f, wrt=0, mode="forward")   # forward mode: jax.jvp, jax.jacfwd

The compiled code runs on the host through `jax.pure_callback`, so F works under `jax.jit` and
`jax.vmap` (the callback loops over the batch, `vmap_method="sequential"`). Reverse mode is a
`jax.custom_vjp`: its forward pass runs the compiled primal, its backward pass sourcead's `vjp`
with respect to the `wrt` arguments that JAX actually differentiates (symbolic zeros tell which;
one `vjp` prepared per subset). Forward mode is a `jax.custom_jvp` whose rule runs sourcead's
`jvp`. JAX cannot transpose a host callback, so a function is one or the other: `jax.grad` needs
mode="reverse", `jax.jvp` mode="forward".

Arguments: JAX or NumPy arrays, Python floats and ints (a 0-d array is a float, or an int for an
integer dtype). `wrt` arguments must be float64 (enable `jax_enable_x64`). Differentiating an
argument that is not in `wrt` is refused. Results have f's structure: a float is a 0-d float64
array, an array a float64 array, a tuple a tuple of them. A callback must declare its result's
shape before it runs: floats need nothing, an array result needs `out_shape`, a function of the
arguments (each with `.shape` and `.dtype`) returning the result's shape (a tuple of shapes, `()`
for a float, for a tuple result), e.g. `out_shape=lambda x, c: x.shape`.

`import sourcead` does not import jax; this module does, and says which extra to install when
jax is missing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..api.pickling import function_ref, resolve
from ..api.protocol import Wrt
from ..errors import SourceADError
from .common import Bridge, check_options, missing

try:
    import jax
    import jax.custom_derivatives as _cd
    import jax.numpy as jnp
except ImportError:
    raise missing("jax", "jax") from None

__all__ = ["JaxFunction", "function"]

_VMAP = "sequential"  # a batch is a loop over the host callback


def function(
    f: Callable, wrt: Wrt = 0, *, mode: str = "reverse", out_shape: Callable[..., Any] | None = None, jit: bool = True
) -> JaxFunction:
    """`f` as a JAX-callable whose derivative is sourcead's generated code."""
    return JaxFunction(f, wrt, mode=mode, out_shape=out_shape, jit=jit)


class JaxFunction:
    """A prepared bridge: call it like `f`, on JAX arrays, inside or outside `jax.jit`."""

    def __init__(
        self, f: Callable, wrt: Wrt = 0, *, mode: str = "reverse", out_shape: Callable | None = None, jit: bool = True
    ):
        if mode not in ("reverse", "forward"):
            raise SourceADError(f"mode must be 'reverse' or 'forward', got {mode!r}")
        self._bridge = b = Bridge(f, wrt, jit, "jax")
        if b.returns_array and out_shape is None:
            raise SourceADError(
                f"{b.name} returns an array: sourcead.jax.function needs out_shape=, its shape from the arguments'",
                hint="e.g. out_shape=lambda x, c: x.shape (a tuple of shapes, () for a float, for a tuple result)",
            )
        self._out_shape = out_shape
        self.mode = mode
        self.__wrapped__ = b.func
        self.__name__ = b.name
        self._fn: Callable[..., Any]
        if mode == "reverse":
            rev = jax.custom_vjp(self._call)
            rev.defvjp(self._fwd, self._bwd, symbolic_zeros=True)
            self._fn = rev
        else:
            fwd = jax.custom_jvp(self._call)
            fwd.defjvp(self._jvp_rule, symbolic_zeros=True)
            self._fn = fwd

    def __call__(self, *args: Any) -> Any:
        self._bridge.check_arity(args)
        return self._fn(*args)

    def __reduce__(self) -> tuple:
        """Pickles as the recipe (function by module and name, wrt, mode, out_shape)."""
        b = self._bridge
        options = {"mode": self.mode, "out_shape": self._out_shape, "jit": b.jit}
        return rebuild, (function_ref(b.func), b.wrt_names[0] if b.single else b.wrt_names, options)

    def __repr__(self) -> str:
        return f"sourcead.jax.function({self._bridge.name}, wrt={self._bridge.wrt_names}, mode={self.mode!r})"

    # --- shapes and checks (at trace time) ------------------------------------------------------

    def _check(self, args: tuple) -> None:
        b = self._bridge
        for k in b.wrt_pos:
            dtype = jnp.result_type(args[k])
            if dtype != jnp.float64:
                hint = (
                    "Enable float64 in JAX: jax.config.update('jax_enable_x64', True)."
                    if not jax.config.jax_enable_x64
                    else f"Pass {b.params[k]}.astype(jnp.float64)."
                )
                raise SourceADError(
                    f"argument `{b.params[k]}` of {b.name} is {dtype}; sourcead differentiates float64 only", hint=hint
                )

    def _out_avals(self, args: tuple) -> Any:
        b = self._bridge
        f64 = jnp.float64
        if self._out_shape is None:
            # placeholders of the arguments' shapes (views of one float): what picks the variant
            placeholders = [np.broadcast_to(np.zeros(()), jnp.shape(a)) if jnp.ndim(a) else 0.0 for a in args]
            if self._bridge.spec_for(placeholders).returns_array:
                raise SourceADError(
                    f"{b.name} returns an array for these arguments: sourcead.jax.function needs out_shape=",
                    hint="e.g. out_shape=lambda x, c: x.shape (a tuple of shapes, () for a float, for a tuple result)",
                )
            shapes: Any = tuple(() for _ in range(b.n_outputs)) if b.output_is_tuple else ()
        else:
            abstract = [jax.ShapeDtypeStruct(jnp.shape(a), jnp.result_type(a)) for a in args]
            shapes = self._out_shape(*abstract)
        if b.output_is_tuple:
            if not isinstance(shapes, tuple) or len(shapes) != b.n_outputs:
                raise SourceADError(f"out_shape must give a tuple of {b.n_outputs} shapes for {b.name}, got {shapes!r}")
            return tuple(jax.ShapeDtypeStruct(tuple(s), f64) for s in shapes)
        return jax.ShapeDtypeStruct(tuple(shapes), f64)

    # --- the host side: NumPy in, NumPy out -------------------------------------------------

    def _host_primal(self, *args: Any) -> Any:
        value = self._bridge.primal(*_from_host(args))
        return _to_host(value)

    def _host_vjp(self, wanted: tuple[int, ...], n_args: int, *flat: Any) -> Any:
        b = self._bridge
        args, seeds = _from_host(flat[:n_args]), [_scalar_or_array(s) for s in flat[n_args:]]
        cotangent = tuple(seeds) if b.output_is_tuple else seeds[0]
        _, grads = b.vjp(wanted)(*args, cotangent=cotangent)
        return tuple(np.asarray(g, dtype=np.float64) for g in grads)

    def _host_jvp(self, n_args: int, *flat: Any) -> Any:
        b = self._bridge
        args, dots = _from_host(flat[:n_args]), [_scalar_or_array(t) for t in flat[n_args:]]
        _, value_dot = b.jvp()(*args, tangents=tuple(dots))
        return _to_host(value_dot)

    # --- the JAX side -----------------------------------------------------------------------

    def _call(self, *args: Any) -> Any:
        self._check(args)
        return jax.pure_callback(self._host_primal, self._out_avals(args), *args, vmap_method=_VMAP)

    def _refuse_non_wrt(self, which: list[bool]) -> None:
        b = self._bridge
        for k, moved in enumerate(which):
            if moved and k not in b.wrt_pos:
                raise SourceADError(
                    f"JAX differentiates {b.name} with respect to `{b.params[k]}`, which is not in wrt="
                    f"{b.wrt_names[0] if b.single else b.wrt_names}",
                    hint="Add it to wrt, or differentiate only wrt arguments (argnums=).",
                )

    def _fwd(self, *primals: Any) -> Any:
        values = tuple(p.value for p in primals)
        perturbed = [bool(p.perturbed) for p in primals]
        self._refuse_non_wrt([moved and _is_float(v) for moved, v in zip(perturbed, values, strict=True)])
        # which wrt arguments JAX differentiates: kept in the residuals' structure (dict keys),
        # not in their leaves, so it stays static under jit and vmap
        wanted = {k: None for k in self._bridge.wrt_pos if perturbed[k]}
        return self._call(*values), (values, wanted)

    def _bwd(self, residuals: Any, cotangent: Any) -> Any:
        values, wanted_keys = residuals
        wanted = tuple(sorted(wanted_keys))
        n = len(values)
        out: list[Any] = [None] * n
        if not wanted:
            return tuple(out)
        b = self._bridge
        cts = cotangent if b.output_is_tuple else (cotangent,)
        avals = self._out_avals(values)
        avals = avals if b.output_is_tuple else (avals,)
        cts = tuple(_materialize(c, a) for c, a in zip(cts, avals, strict=True))
        shapes = tuple(jax.ShapeDtypeStruct(jnp.shape(values[k]), jnp.float64) for k in wanted)
        host = functools.partial(self._host_vjp, wanted, n)
        grads = jax.pure_callback(host, shapes, *values, *cts, vmap_method=_VMAP)
        for k, g in zip(wanted, grads, strict=True):
            out[k] = g
        return tuple(out)

    def _jvp_rule(self, primals: tuple, tangents: tuple) -> Any:
        b = self._bridge
        zero = [isinstance(t, _cd.SymbolicZero) for t in tangents]
        self._refuse_non_wrt([not z and _is_float(p) for z, p in zip(zero, primals, strict=True)])
        self._check(primals)
        dots = tuple(jnp.zeros(jnp.shape(primals[k]), jnp.float64) if zero[k] else tangents[k] for k in b.wrt_pos)
        # the value from its own callback, on the primals alone: under vmap of the tangents only
        # (jax.jacfwd), it must stay unbatched
        value = self._call(*primals)
        host = functools.partial(self._host_jvp, len(primals))
        value_dot = jax.pure_callback(host, self._out_avals(primals), *primals, *dots, vmap_method=_VMAP)
        return value, value_dot


def _is_float(value: Any) -> bool:
    return bool(jnp.issubdtype(jnp.result_type(value), jnp.floating))


def _materialize(cotangent: Any, aval: Any) -> Any:
    if isinstance(cotangent, _cd.SymbolicZero):
        return jnp.zeros(aval.shape, aval.dtype)
    return cotangent


def _scalar_or_array(value: Any) -> Any:
    value = np.asarray(value)
    return value.item() if value.ndim == 0 else value


def _from_host(args: tuple) -> list:
    """A callback's arguments, as sourcead takes them: 0-d arrays become floats, ints or bools."""
    return [_scalar_or_array(a) for a in args]


def _to_host(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_to_host(v) for v in value)
    return np.asarray(value, dtype=np.float64)


def rebuild(ref: tuple, wrt: Any, options: dict) -> JaxFunction:
    """A `sourcead.jax.function`, made again in this process from its pickled recipe."""
    check_options(ref, wrt, options)
    return function(resolve(ref), wrt, **options)
