"""The public transforms: grad, value_and_grad, jvp, vjp and the `differentiable` decorator.

Each returns a *prepared* derivative: the function is transformed once, here; the generated
code is compiled once per argument type signature by numba; the object is immutable after
construction and keeps no per-call state, so one instance can be called from many threads.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from numba.core.errors import NumbaError

from .compile import Compiled, load
from .errors import AliasingError, SourceADError
from .kinds import ARRAY, FLOAT, INT
from .parse import unwrap
from .pipeline import Generated, generate

Wrt = int | str | tuple[int | str, ...]


@dataclass(frozen=True)
class _Variant:
    """Generated code for one assignment of kinds to the parameters, compiled, with its checks."""

    gen: Generated
    compiled: Compiled
    converters: tuple[Callable[[Any], Any], ...]


class _Prepared:
    """What every transform shares: the generated code, compiled, and argument checks.

    Usually one variant serves every call. Parameters whose kind the code does not reveal (a
    parameter that is only returned or copied) get it from the call's arguments: one variant per
    kind assignment, built once under a lock.
    """

    __slots__ = ("_func", "_mode", "_jit", "_wrt", "_single", "_default", "_free", "_variants", "_lock", "__wrapped__")

    def __init__(self, func: Callable, wrt: Wrt, mode: str, jit: bool):
        self._single = not isinstance(wrt, tuple)
        self._wrt = (wrt,) if self._single else tuple(wrt)  # type: ignore[arg-type]
        self._func, self._mode, self._jit = func, mode, jit
        self._default = self._build(None)
        params = self._default.gen.params
        self._free = tuple((params.index(p), p) for p in params if p in self._default.gen.kinds.free)
        self._variants: dict[tuple[str, ...], _Variant] = {}
        self._lock = threading.Lock()
        self.__wrapped__ = unwrap(func)

    def _build(self, kinds: dict[str, str] | None) -> _Variant:
        gen = generate(self._func, self._mode, self._wrt, kinds)
        self._check(gen)
        return _Variant(gen, load(gen, self._jit), tuple(_converter(gen, name) for name in gen.params))

    def _check(self, gen: Generated) -> None:
        """Transform-specific checks of the generated code (e.g. grad needs a float result)."""

    @property
    def source(self) -> str:
        """The generated module that this derivative runs (for the default argument kinds)."""
        return self._default.gen.source

    def _variant(self, args: tuple) -> _Variant:
        if not self._free:
            return self._default
        key = tuple(ARRAY if isinstance(args[k], np.ndarray) else FLOAT for k, _ in self._free)
        variant = self._variants.get(key)
        if variant is None:
            with self._lock:
                variant = self._variants.get(key)
                if variant is None:
                    variant = self._build({name: kind for (_, name), kind in zip(self._free, key, strict=True)})
                    self._variants[key] = variant
        return variant

    def _args(self, args: tuple) -> tuple[_Variant, list]:
        variant = self._variant(args) if len(args) == len(self._default.converters) else self._default
        gen = variant.gen
        if len(args) != len(gen.params):
            raise SourceADError(
                f"{gen.parsed.name} takes {len(gen.params)} arguments ({', '.join(gen.params)}), got {len(args)}"
            )
        return variant, [convert(a) for convert, a in zip(variant.converters, args, strict=True)]

    def _run(self, variant: _Variant, args: list) -> Any:
        try:
            return variant.compiled.call(*args)
        except NumbaError as exc:
            raise SourceADError(
                f"numba could not compile the generated code {variant.compiled.path}: {str(exc).splitlines()[0]}",
                hint="This is a sourcead limitation or bug; please report it with the function's source.",
            ) from None

    def _grads(self, flat: tuple) -> Any:
        grads = tuple(float(g) if not isinstance(g, np.ndarray) else g for g in flat)
        return grads[0] if self._single else grads


class Gradient(_Prepared):
    """`grad(f, wrt)`: call it like `f`; returns the gradient(s) of the scalar result."""

    __slots__ = ("_with_value", "_written_zeros")

    def __init__(self, func: Callable, wrt: Wrt = 0, jit: bool = True, with_value: bool = False):
        super().__init__(func, wrt, "reverse", jit)
        self._with_value = with_value

    def _check(self, gen: Generated) -> None:
        self._written_zeros = tuple(gen.params.index(m) for m in gen.mutated)
        if gen.output_is_tuple or gen.n_outputs != 1 or _returns_array(gen):
            what = "a tuple" if gen.output_is_tuple else "an array"
            raise SourceADError(
                f"grad needs a function that returns a float; {gen.parsed.name} returns {what}",
                gen.parsed.locate(gen.parsed.node),
                "Use sourcead.vjp(f, wrt)(*args, cotangent=...) for array or tuple results.",
            )

    def __call__(self, *args: Any, out: Any = None) -> Any:
        variant, converted = self._args(args)
        # arguments the function writes are extra outputs; grad gives them a zero cotangent
        zeros = [np.zeros_like(converted[k]) for k in self._written_zeros]
        value, *flat = self._run(variant, converted + [1.0] + zeros)
        if zeros:
            value = value[0]
        grads = self._grads(tuple(flat))
        if out is not None:
            grads = _write_out(out, grads, self._single, args)
        return (float(value), grads) if self._with_value else grads


class VJP(_Prepared):
    """`vjp(f, wrt)(*args, cotangent=c)` -> (value, gradient(s) of <c, f(args)>)."""

    __slots__ = ()

    def __init__(self, func: Callable, wrt: Wrt = 0, jit: bool = True):
        super().__init__(func, wrt, "reverse", jit)

    def __call__(self, *args: Any, cotangent: Any, out: Any = None) -> Any:
        variant, converted = self._args(args)
        seeds = _cotangents(cotangent, variant.gen)
        value, *flat = self._run(variant, converted + seeds)
        grads = self._grads(tuple(flat))
        if out is not None:
            grads = _write_out(out, grads, self._single, args)
        return _plain(value), grads


class JVP(_Prepared):
    """`jvp(f, wrt)(*args, tangents=t)` -> (value, directional derivative along t)."""

    __slots__ = ()

    def __init__(self, func: Callable, wrt: Wrt = 0, jit: bool = True):
        super().__init__(func, wrt, "forward", jit)

    def __call__(self, *args: Any, tangents: Any) -> Any:
        variant, converted = self._args(args)
        gen = variant.gen
        items = (tangents,) if self._single else tangents
        if not isinstance(items, tuple) or len(items) != len(gen.wrt):
            raise SourceADError(f"tangents= must be a tuple of {len(gen.wrt)} values, one per wrt argument")
        dots = [_tangent_like(t, converted[gen.params.index(w)], w) for t, w in zip(items, gen.wrt, strict=True)]
        value, value_dot = self._run(variant, converted + dots)
        return _plain(value), _plain(value_dot)


def grad(f: Callable, wrt: Wrt = 0, *, jit: bool = True) -> Gradient:
    """The gradient of a float-valued `f` with respect to `wrt` (positions or names)."""
    return Gradient(f, wrt, jit)


def value_and_grad(f: Callable, wrt: Wrt = 0, *, jit: bool = True) -> Gradient:
    """Like `grad`, returning `(value, gradient)`."""
    return Gradient(f, wrt, jit, with_value=True)


def vjp(f: Callable, wrt: Wrt = 0, *, jit: bool = True) -> VJP:
    """Reverse mode: `vjp(f, wrt)(*args, cotangent=c)` -> `(value, c^T J)`."""
    return VJP(f, wrt, jit)


def jvp(f: Callable, wrt: Wrt = 0, *, jit: bool = True) -> JVP:
    """Forward mode: `jvp(f, wrt)(*args, tangents=t)` -> `(value, J t)`."""
    return JVP(f, wrt, jit)


class Differentiable:
    """`@differentiable`: `f` still runs (compiled by numba) and gains derivative methods."""

    def __init__(self, func: Callable):
        self.__sourcead_func__ = unwrap(func)
        functools.update_wrapper(self, self.__sourcead_func__)
        self._lock = threading.Lock()
        self._primal: Callable | None = None
        self._prepared: dict[tuple, _Prepared] = {}

    def __call__(self, *args: Any) -> Any:
        if self._primal is None:
            with self._lock:
                if self._primal is None:
                    self._primal = numba.njit(cache=True, nogil=True)(self.__sourcead_func__)
        return self._primal(*args)

    def _get(self, kind: str, wrt: Wrt, jit: bool) -> Any:
        key = (kind, wrt, jit)
        prepared = self._prepared.get(key)
        if prepared is None:
            with self._lock:
                prepared = self._prepared.get(key)
                if prepared is None:
                    make = {"grad": grad, "value_and_grad": value_and_grad, "jvp": jvp, "vjp": vjp}[kind]
                    prepared = make(self.__sourcead_func__, wrt, jit=jit)
                    self._prepared[key] = prepared
        return prepared

    def grad(self, wrt: Wrt = 0, *, jit: bool = True) -> Gradient:
        return self._get("grad", wrt, jit)

    def value_and_grad(self, wrt: Wrt = 0, *, jit: bool = True) -> Gradient:
        return self._get("value_and_grad", wrt, jit)

    def jvp(self, wrt: Wrt = 0, *, jit: bool = True) -> JVP:
        return self._get("jvp", wrt, jit)

    def vjp(self, wrt: Wrt = 0, *, jit: bool = True) -> VJP:
        return self._get("vjp", wrt, jit)

    def source(self, mode: str = "reverse", wrt: Wrt = 0) -> str:
        """The generated derivative module, as text."""
        items = wrt if isinstance(wrt, tuple) else (wrt,)
        return generate(self.__sourcead_func__, mode, items).source


def differentiable(func: Callable) -> Differentiable:
    """Decorator: keep `f` callable and give it `.grad/.value_and_grad/.jvp/.vjp/.source`."""
    return Differentiable(func)


# --- argument checks, built once per prepared derivative ------------------------------------


def _converter(gen: Generated, name: str) -> Callable[[Any], Any]:
    kind = gen.kinds[name]
    is_wrt = name in gen.wrt
    copy = name in gen.copied  # the generated code writes into it: never into the caller's array
    fname = gen.parsed.name
    if kind == ARRAY:

        def to_array(value: Any) -> Any:
            if not isinstance(value, np.ndarray):
                raise SourceADError(f"argument `{name}` of {fname} must be a NumPy array, got {type(value).__name__}")
            if is_wrt and value.dtype != np.float64:
                raise SourceADError(
                    f"cannot differentiate with respect to `{name}`: it is a {value.dtype} array",
                    hint=f"Pass a float64 array, e.g. {name}.astype(np.float64).",
                )
            return value.copy() if copy else value

        return to_array
    if kind == INT:

        def to_int(value: Any) -> int:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise SourceADError(
                    f"argument `{name}` of {fname} is used as an integer (a loop bound or an index); "
                    f"got {type(value).__name__}"
                )
            return int(value)

        return to_int

    def to_float(value: Any) -> float:
        if isinstance(value, np.ndarray) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise SourceADError(
                f"argument `{name}` of {fname} is used as a scalar; got {type(value).__name__}",
                hint="Arrays must be indexed element by element in the function.",
            )
        return float(value)

    return to_float


def _returns_array(gen: Generated) -> bool:
    return any(gen.kinds[name] == ARRAY for name in gen.returned)


def _cotangents(cotangent: Any, gen: Generated) -> list:
    """Flatten a cotangent shaped like the result (then one per written argument, if any)."""
    if gen.mutated:
        if not isinstance(cotangent, tuple) or len(cotangent) != 1 + len(gen.mutated):
            raise SourceADError(
                f"{gen.parsed.name} writes into {', '.join(gen.mutated)}, so its outputs are "
                f"(result, {', '.join(gen.mutated)}): cotangent= must be a tuple of {1 + len(gen.mutated)} values"
            )
        cotangent, written = cotangent[0], cotangent[1:]
    else:
        written = ()
    items = cotangent if gen.output_is_tuple else (cotangent,)
    if not isinstance(items, tuple) or len(items) != gen.n_outputs:
        raise SourceADError(
            f"cotangent= must be a tuple of {gen.n_outputs} values, like the result of {gen.parsed.name}"
        )
    return [_as_float_or_array(c, "cotangent") for c in items + tuple(written)]


def _tangent_like(tangent: Any, arg: Any, name: str) -> Any:
    if isinstance(arg, np.ndarray):
        t = np.array(tangent, dtype=np.float64, copy=True)  # ours to use; never the caller's buffer
        if t.shape != arg.shape:
            raise SourceADError(f"the tangent of `{name}` has shape {t.shape}, but `{name}` has shape {arg.shape}")
        return t
    if isinstance(tangent, np.ndarray):
        raise SourceADError(f"the tangent of the float `{name}` must be a float, got an array")
    return float(tangent)


def _as_float_or_array(value: Any, what: str) -> Any:
    if isinstance(value, np.ndarray):
        return np.asarray(value, dtype=np.float64)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    raise SourceADError(f"{what} must be a float or a float64 array, got {type(value).__name__}")


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, np.ndarray):
        return value
    return float(value)


def _write_out(out: Any, grads: Any, single: bool, args: tuple) -> Any:
    """Copy gradients into user buffers, after checking shape, dtype and overlap with inputs."""
    outs = (out,) if single else out
    values = (grads,) if single else grads
    if not isinstance(outs, tuple) or len(outs) != len(values):
        raise SourceADError("out= must have the structure of the gradients (one buffer, or a tuple of them)")
    results = []
    for buffer, g in zip(outs, values, strict=True):
        if buffer is None or not isinstance(g, np.ndarray):
            results.append(g)
            continue
        if not isinstance(buffer, np.ndarray) or buffer.shape != g.shape or buffer.dtype != np.float64:
            raise SourceADError(f"out= buffer must be a float64 array of shape {g.shape}")
        for k, arg in enumerate(args):
            if isinstance(arg, np.ndarray) and np.may_share_memory(buffer, arg):
                raise AliasingError(f"out= buffer overlaps argument {k}")
        buffer[...] = g
        results.append(buffer)
    return results[0] if single else tuple(results)
