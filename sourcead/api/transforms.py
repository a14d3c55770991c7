"""The public transforms: grad, value_and_grad, jvp, vjp and the `differentiable` decorator.

Each returns a *prepared* derivative: the function is transformed once, here (or its generated
module is found in the disk cache); numba compiles it once per argument type signature, under its
own compile lock; the object is immutable after construction (the only memo, of variants for call
kinds, is replaced whole, never edited) and keeps no per-call state: tapes, adjoints and
workspaces are locals of the generated code, so one instance can be called from many threads.
Everything about the arguments that can be decided once is decided here; a call converts its
arguments with closures built in advance, calls the compiled code and unpacks the result.

This module does not import the pipeline (and libcst) until a function has to be transformed, so
a process whose derivatives are all in the disk cache never pays for it.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numba.core.errors import NumbaError

from ..build import arguments, callplan, rerun
from ..build.compile import Compiled, Spec, load, source_key
from ..errors import ArgumentTypeError, ShapeError, SourceADError, numba_failure
from ..functions import unwrap
from ..ir.types import Type, parse_spec
from .budget import memory_bytes

if TYPE_CHECKING:
    from numba.core.dispatcher import Dispatcher

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
    alias_pairs: tuple[tuple[int, int], ...] = ()  # (written array argument, other array argument)
    plan: callplan.CallPlan | None = None  # shapes, self-overlap, cotangents: checked before the call


class _Prepared:
    """What every transform shares: the compiled code, argument checks and result unpacking.

    Parameters take their types from the call: each array's dtype and number of dimensions, and
    whether a parameter the code only does arithmetic with is a float or an array. One variant is
    generated per assignment of types, built once under a lock and published by replacing the memo
    dict whole. The default variant is built at preparation, from the types the code suggests
    (`kinds.py`); if that guess cannot be compiled, the first call builds from the real types.
    """

    __slots__ = (
        "_func", "_mode", "_jit", "_wrt", "_single", "_default", "_pending", "_free", "_variants", "_lock",
        "_wrt_positions", "_memory", "__wrapped__",
    )  # fmt: skip

    def __init__(self, func: Callable, wrt: Wrt, mode: str, jit: bool, memory: Memory = None):
        self._memory = memory_bytes(memory)
        self._single = not isinstance(wrt, (tuple, list))
        self._wrt = (wrt,) if self._single else tuple(wrt)  # type: ignore[arg-type]
        self._func, self._mode, self._jit = unwrap(func), mode, arguments.check_jit(jit)
        self.__wrapped__ = self._func
        self._lock = threading.Lock()
        self._pending: SourceADError | None = None
        self._default: _Variant | None = self._build_default()
        names = self._params()
        self._wrt_positions = frozenset(
            names.index(w) if isinstance(w, str) else w % len(names)
            for w in self._wrt
            if (w in names if isinstance(w, str) else isinstance(w, int) and -len(names) <= w < len(names))
        )
        spec = self._default.spec if self._default is not None else None
        self._free = tuple(spec.params.index(p) for p in spec.free) if spec is not None else None
        self._variants: dict[tuple, _Variant] = {}
        if self._default is not None:
            default = tuple(arguments.spec_key(parse_spec(self._default.spec.kinds[k])) for k in self._free)  # type: ignore[union-attr]
            self._variants[default] = self._default

    def _build_default(self) -> _Variant | None:
        """The variant for the types the code suggests. Where it fails and parameters the code only
        does arithmetic with might be arrays, try them as arrays; an error that both give does not
        depend on the guess and is raised now, else the first call's types decide."""
        try:
            return self._build(None)
        except SourceADError as exc:
            alternative = getattr(exc, "guessed", None)
            if not alternative:
                raise
            try:
                return self._build(alternative)
            except SourceADError as again:
                if str(again) == str(exc):
                    raise exc from None
            self._pending = exc
            return None

    def _build(self, kinds: dict[str, str] | None) -> _Variant:
        def generate():
            from ..pipeline.driver import generate  # only on a cache miss: keeps libcst out of warm starts

            return generate(self._func, self._mode, self._wrt, kinds, self._memory)

        def check(spec: Spec) -> None:
            try:
                self._check(spec)
            except SourceADError as exc:
                exc.guessed = _other_guess(spec) if kinds is None else {}  # type: ignore[attr-defined]
                raise

        options = {"memory": self._memory} if self._memory is not None else {}
        key = source_key(self._func, self._mode, self._wrt, kinds, options=options)
        compiled = load(key, generate, self._jit, check)
        spec = compiled.spec
        types = [parse_spec(k) for k in spec.kinds]
        return _Variant(
            compiled=compiled,
            spec=spec,
            call=compiled.call,
            converters=tuple(arguments.converter(spec, k, types[k], self._jit) for k in range(len(spec.params))),
            wrt_pos=tuple(spec.params.index(w) for w in spec.wrt),
            wrt_array=tuple(types[spec.params.index(w)].is_array for w in spec.wrt),
            written=tuple(spec.params.index(m) for m in spec.mutated),
            alias_pairs=arguments.alias_pairs(spec, types),
            plan=callplan.build(spec),
        )

    def _check(self, spec: Spec) -> None:
        """Transform-specific checks of the generated code (e.g. grad needs a float result)."""

    def _locate(self):
        """The position of the user's `def`, for an error found at preparation time."""
        from ..frontend.parse import parse_function

        parsed = parse_function(self._func)
        return parsed.locate(parsed.node)

    @property
    def source(self) -> str:
        """The generated module that this derivative runs: for the argument types the code suggests,
        or where those cannot be compiled (an integer array the code does not show is one), for the
        types of the latest call that built a new variant."""
        if self._default is not None:
            return self._default.compiled.source
        if self._variants:
            return list(self._variants.values())[-1].compiled.source
        raise self._pending  # type: ignore[misc]

    def __reduce__(self) -> tuple:
        """Pickles as the recipe: the function (by module and qualified name, as pickle sends a
        module-level function), the transform and its arguments; rebuilt from the disk cache."""
        from .njit import transform_of
        from .pickling import function_ref, rebuild

        wrt = self._wrt[0] if self._single else self._wrt
        return rebuild, (transform_of(self), function_ref(self._func), wrt, self._jit, self._memory)

    @property
    def njit(self) -> Dispatcher:
        """A numba dispatcher doing what this object does, callable from `@numba.njit` code
        (`grad`: `njit(*args)`; `vjp`: `njit(*args, cotangent)`; `jvp`: `njit(*args, tangents)`).
        Parameters whose kind comes from the call take the default variant (floats, 1-D arrays
        where the code says array): see `njit_for`."""
        from .njit import dispatcher

        return dispatcher(self, self._default)

    def njit_for(self, *args: Any) -> Dispatcher:
        """The `.njit` dispatcher of the variant that a call with these arguments uses."""
        from .njit import dispatcher

        return dispatcher(self, self._variant(args))

    def _variant(self, args: tuple) -> _Variant:
        free = self._free if self._free is not None else range(len(args))
        wrt = self._wrt_positions
        key = tuple(arguments.arg_key(args[k], k in wrt) for k in free)
        variant = self._variants.get(key)
        if variant is None:
            with self._lock:
                variant = self._variants.get(key)
                if variant is None:
                    names = self._params()
                    kinds = {names[k]: arguments.arg_spec(args[k], names[k], k in wrt) for k in free}
                    try:
                        variant = self._build(kinds)
                    except SourceADError as exc:
                        raise _for_these_kinds(exc, kinds, self._default) from None
                    self._variants = {**self._variants, key: variant}
        return variant

    def _params(self) -> tuple[str, ...]:
        if self._default is not None:
            return self._default.spec.params
        import inspect

        return tuple(inspect.signature(self._func).parameters)

    def _args(self, args: tuple) -> tuple[_Variant, list]:
        params = self._params()
        if len(args) < len(params):
            args = _with_defaults(self._func, args)
        if len(args) != len(params):
            import inspect

            signature = inspect.signature(self._func)
            raise SourceADError(f"{self._func.__name__}{signature} takes {len(params)} arguments, got {len(args)}")
        variant = self._variant(args)
        if variant.alias_pairs:
            arguments.check_overlap(variant, args)
        converted = [convert(a) for convert, a in zip(variant.converters, args, strict=True)]
        variant.plan.before(args, converted)  # type: ignore[union-attr]
        return variant, converted

    def _run(self, variant: _Variant, args: list, original: tuple | None = None, seeds: list | None = None) -> Any:
        """Call the generated code; a raw error out of it (an index out of range caught by numba's
        bounds checks or by Python) becomes a positioned `SourceADError` (`callplan.explain`)."""
        try:
            if not self._jit:  # plain Python on NumPy floats: NumPy's error model, as numba's (compile.py)
                with np.errstate(all="ignore"):
                    return variant.call(*(np.float64(a) if type(a) is float else a for a in args))
            return variant.call(*args)
        except callplan.RAW_ERRORS as exc:
            rerun.reraise_interrupt(exc)  # Ctrl-C in compiled code: the interrupt, at once, never explained
            if original is None:
                raise
            raise callplan.explain(exc, self._func, original, str(variant.compiled.path), variant.plan, seeds) from None
        except (NumbaError, AssertionError) as exc:  # AssertionError: a run-time check numba inserted
            raise numba_failure(exc, f"the generated code {variant.compiled.path}") from None

    def _grads(self, variant: _Variant, flat: list, out: Any) -> Any:
        if out is not None:
            for buffer, g in zip(out, flat, strict=True):
                if buffer is not None:
                    buffer[...] = g
            flat = [g if buffer is None else buffer for buffer, g in zip(out, flat, strict=True)]
        if self._single:
            g = flat[0]
            return g if variant.wrt_array[0] else float(g)
        return tuple(g if is_array else float(g) for g, is_array in zip(flat, variant.wrt_array, strict=True))

    def _check_out(self, variant: _Variant, out: Any, args: tuple, inputs: tuple = ()) -> tuple:
        return arguments.check_out(variant, self._single, out, args, inputs)


class Gradient(_Prepared):
    """`grad(f, wrt)`: call it like `f`; returns the gradient(s) of the scalar result."""

    __slots__ = ("_with_value",)

    def __init__(self, func: Callable, wrt: Wrt = 0, jit: bool = True, with_value: bool = False, memory: Memory = None):
        self._with_value = with_value  # without it, the generated code leaves out what only the value needs
        super().__init__(func, wrt, "reverse" if with_value else "gradient", jit, memory)

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

    def __init__(self, func: Callable, wrt: Wrt = 0, jit: bool = True, memory: Memory = None):
        super().__init__(func, wrt, "reverse", jit, memory)

    def __call__(self, *args: Any, cotangent: Any, out: Any = None) -> Any:
        variant, converted = self._args(args)
        if out is None and _cotangent_batch(cotangent, variant.spec):  # k cotangents at once
            return _vjp_batch(self, variant, converted, cotangent)
        seeds = _cotangents(cotangent, variant.spec)
        seeds = callplan.check_cotangents(variant.plan, seeds, converted)  # type: ignore[arg-type]
        if out is not None:
            out = self._check_out(variant, out, args, tuple(("cotangent", s) for s in seeds))
        value, *flat = self._run(variant, converted + seeds, args, seeds)
        callplan.check_results(variant.plan, value, seeds)  # type: ignore[arg-type]
        return _plain(value), self._grads(variant, flat, out)


class JVP(_Prepared):
    """`jvp(f, wrt)(*args, tangents=t)` -> (value, directional derivative along t)."""

    __slots__ = ()

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
        self._primal: Callable | None = None
        self._prepared: dict[tuple, _Prepared] = {}

    def __reduce__(self) -> tuple:
        """Pickles by the function; in the receiving process, the module's own decorated object."""
        from .pickling import function_ref, rebuild_differentiable

        return rebuild_differentiable, (function_ref(self.__sourcead_func__), self._memory)

    def __call__(self, *args: Any) -> Any:
        if self._primal is None:
            with self._lock:
                if self._primal is None:
                    self._primal = Primal(self.__sourcead_func__)
        return self._primal(*args)

    @property
    def njit(self) -> Dispatcher:
        """The compiled function itself as a numba dispatcher, for `@numba.njit` code (which
        cannot call the decorated object): `f.njit(*args)` returns what `f(*args)` returns."""
        self._get_primal()
        return self._primal.njit  # type: ignore[union-attr]

    def _get_primal(self) -> None:
        if self._primal is None:
            with self._lock:
                if self._primal is None:
                    self._primal = Primal(self.__sourcead_func__)

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


# --- argument checks, built once per prepared derivative ------------------------------------


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


# --- second order, Jacobians and batches of directions (issue 14) ----------------------------


class HVP(_Prepared):
    """`hvp(f, wrt)(*args, tangents=v)` -> H v, structured like `grad`'s result; tangents with one
    extra leading axis (k directions) give results with that leading axis."""

    __slots__ = ()

    def __init__(self, func: Callable, wrt: Wrt = 0, jit: bool = True, memory: Memory = None):
        super().__init__(func, wrt, "hvp", jit, memory)

    def __reduce__(self) -> tuple:
        wrt = self._wrt[0] if self._single else self._wrt
        return _second_order_recipe("hvp", self._func, wrt, self._jit, self._memory)

    @property
    def njit(self) -> Dispatcher:
        raise SourceADError(
            "hvp has no .njit entry yet", hint="Call it from Python, or its generated module (`.source`)."
        )

    def njit_for(self, *args: Any) -> Dispatcher:
        return self.njit

    def hessp(self, x: Any, p: Any, *args: Any) -> Any:
        """SciPy's `hessp(x, p, *args)` signature (`minimize(..., hessp=ad.hvp(f).hessp)`): H(x) p
        for the first argument x, the others passed as `args=`."""
        if not self._single or self._wrt[0] not in (0, self._params()[0]):
            raise SourceADError(
                "hessp differentiates with respect to the first argument",
                hint="Prepare it as sourcead.hvp(f, wrt=0), as scipy.optimize.minimize optimises the first argument.",
            )
        return self(x, *args, tangents=p)

    def __call__(self, *args: Any, tangents: Any) -> Any:
        variant, converted = self._args(args)
        dots, batched = _directions(tangents, converted, variant, self._single)
        zeros = [np.zeros_like(converted[k]) for k in variant.written]  # written outputs: zero seeds
        if batched:
            _, *flat = _run_batch(self, variant, "hvp", converted, dots, zeros)
            return flat[0] if self._single else tuple(flat)
        _, *flat = self._run(variant, [*converted, *dots, 1.0, *zeros])
        return self._grads(variant, flat, None)


def hvp(f: Callable, wrt: Wrt = 0, *, jit: bool = True, memory: Memory = None) -> HVP:
    """Second order: `hvp(f, wrt)(*args, tangents=v)` -> the Hessian of a float-valued `f` times v."""
    return HVP(f, wrt, jit, memory)


class Hessian:
    """`hessian(f, wrt)(*args)` -> H of shape x.shape + x.shape (JAX's convention; nested tuples
    `H[a][b]` of shape a.shape + b.shape for a tuple wrt): one batch of hvp over the unit vectors."""

    __slots__ = ("_hvp", "_single")

    def __init__(self, func: Callable, wrt: Wrt = 0, jit: bool = True, memory: Memory = None):
        self._hvp = HVP(func, wrt, jit, memory)
        self._single = self._hvp._single

    def __reduce__(self) -> tuple:
        wrt = self._hvp._wrt[0] if self._single else self._hvp._wrt
        return _second_order_recipe("hessian", self._hvp._func, wrt, self._hvp._jit, self._hvp._memory)

    def __call__(self, *args: Any) -> Any:
        args = _with_defaults(self._hvp._func, args)
        variant = self._hvp._variant(args)
        shapes = [np.shape(args[k]) for k in variant.wrt_pos]
        sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
        units = _unit_directions(shapes, sizes)
        columns = self._hvp(*args, tangents=units[0] if self._single else tuple(units))
        columns = (columns,) if self._single else columns
        starts = np.cumsum([0, *sizes])
        blocks = tuple(
            tuple(
                _as_result(columns[a][starts[b] : starts[b + 1]].reshape(sizes[b], sizes[a]).T, shapes[a] + shapes[b])
                for b in range(len(shapes))
            )
            for a in range(len(shapes))
        )
        return blocks[0][0] if self._single else blocks


def hessian(f: Callable, wrt: Wrt = 0, *, jit: bool = True, memory: Memory = None) -> Hessian:
    """The dense Hessian of a float-valued `f`: shape x.shape + x.shape (nested tuples for a tuple wrt)."""
    return Hessian(f, wrt, jit, memory)


class Jacobian:
    """`jacobian(f, wrt, mode)(*args)` -> J of shape out.shape + in.shape (a tuple per wrt argument
    for a tuple wrt): batched jvp over unit tangents ("forward"), batched vjp over unit cotangents
    ("reverse"), or whichever needs fewer sweeps ("auto": forward when in.size <= out.size)."""

    __slots__ = ("_jvp", "_vjp", "_mode", "_single", "_func", "_wrt", "_jit", "_lock", "_memory")

    def __init__(self, func: Callable, wrt: Wrt = 0, mode: str = "auto", jit: bool = True, memory: Memory = None):
        if mode not in ("forward", "reverse", "auto"):
            raise SourceADError(f"unknown jacobian mode {mode!r}", hint="Use mode='forward', 'reverse' or 'auto'.")
        memory_bytes(memory)
        self._func, self._wrt, self._mode, self._jit, self._memory = func, wrt, mode, jit, memory
        self._single = not isinstance(wrt, (tuple, list))
        self._lock = threading.Lock()
        self._jvp: JVP | None = JVP(func, wrt, jit) if mode != "reverse" else None
        self._vjp: VJP | None = VJP(func, wrt, jit, memory) if mode == "reverse" else None

    def __reduce__(self) -> tuple:
        return _second_order_recipe("jacobian", self._func, self._wrt, self._mode, self._jit, self._memory)

    def __call__(self, *args: Any) -> Any:
        args = _with_defaults(self._func, args)
        mode = self._mode
        if mode == "reverse":
            return self._reverse(args)
        jf = self._jvp
        variant = jf._variant(args)  # type: ignore[union-attr]
        _no_tuple_results(variant.spec, "jacobian")
        shapes = [np.shape(args[k]) for k in variant.wrt_pos]
        sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
        if mode == "auto":
            zero = tuple(np.zeros(s) if s else 0.0 for s in shapes)
            value, _ = jf(*args, tangents=zero[0] if self._single else zero)  # type: ignore[misc]
            value = value[0] if variant.spec.mutated else value
            if np.size(value) < sum(sizes):
                return self._reverse(args)
        units = _unit_directions(shapes, sizes)
        variant, converted = jf._args(args)  # type: ignore[union-attr]
        _, columns = _jvp_batch(jf, variant, converted, units[0] if self._single else tuple(units), args)  # type: ignore[arg-type]
        out_shape = columns.shape[1:]
        starts = np.cumsum([0, *sizes])
        blocks = tuple(
            _as_result(np.moveaxis(columns[starts[a] : starts[a + 1]], 0, -1), out_shape + shapes[a])
            for a in range(len(shapes))
        )
        return blocks[0] if self._single else blocks

    def _reverse(self, args: tuple) -> Any:
        if self._vjp is None:
            with self._lock:
                if self._vjp is None:
                    self._vjp = VJP(self._func, self._wrt, self._jit, self._memory)
        vf = self._vjp
        variant, converted = vf._args(args)
        spec = variant.spec
        _no_tuple_results(spec, "jacobian")
        value = _primal_value(self, args, spec)
        out_shape = np.shape(value)
        m = int(np.prod(out_shape, dtype=np.int64))
        seeds = [np.eye(m).reshape((m, *out_shape))]
        seeds += [np.zeros((m, *np.shape(converted[k]))) for k in variant.written]  # written arguments: zero
        _, *rows = _run_batch(vf, variant, "vjp", converted, seeds, [])
        shapes = [np.shape(args[k]) for k in variant.wrt_pos]
        blocks = tuple(_as_result(r, out_shape + s) for r, s in zip(rows, shapes, strict=True))
        return blocks[0] if self._single else blocks


def jacobian(f: Callable, wrt: Wrt = 0, mode: str = "auto", *, jit: bool = True, memory: Memory = None) -> Jacobian:
    """The Jacobian of `f` (a float or an array result): shape out.shape + in.shape."""
    return Jacobian(f, wrt, mode, jit, memory)


def _second_order_recipe(kind: str, func: Callable, *options: Any) -> tuple:
    """Pickle as the recipe (the function by reference, as `pickling.function_ref` sends it)."""
    from .pickling import function_ref

    return _rebuild_second_order, (kind, function_ref(unwrap(func)), options)


def _rebuild_second_order(kind: str, ref: tuple, options: tuple) -> Any:
    from .pickling import check_second_order, resolve

    check_second_order(kind, ref, options)
    return {"hvp": HVP, "hessian": Hessian, "jacobian": Jacobian}[kind](resolve(ref), *options)


def _primal_value(jac: Jacobian, args: tuple, spec: Spec) -> Any:
    """The result of f at args (its shape sizes the reverse Jacobian): a jvp with zero tangents."""
    if jac._jvp is None:
        with jac._lock:
            if jac._jvp is None:
                jac._jvp = JVP(jac._func, jac._wrt, jac._jit)
    pos = [spec.params.index(w) for w in spec.wrt]
    zero = tuple(np.zeros(np.shape(args[k])) if np.ndim(args[k]) else 0.0 for k in pos)
    value, _ = jac._jvp(*args, tangents=zero[0] if jac._single else zero)
    return value[0] if spec.mutated else value


def _no_written_outputs(spec: Spec) -> None:
    """A batch of tangents returns the result's tangents with a leading axis, not those of the
    arrays the function writes: for such a function, one direction per call."""
    if spec.mutated:
        raise SourceADError(
            f"a batch of tangents: {spec.name} writes into {', '.join(spec.mutated)}, whose tangents a batch "
            "does not return",
            hint="Call jvp once per direction (it returns the written arrays' tangents too), or jacobian(f).",
        )


def _no_tuple_results(spec: Spec, what: str) -> None:
    if spec.output_is_tuple:
        raise SourceADError(
            f"{what} needs a float or an array result; {spec.name} returns a tuple",
            hint="Return one array (np.concatenate the parts in your own code), or call jvp/vjp.",
        )


def _unit_directions(shapes: list[tuple], sizes: list[int]) -> list[np.ndarray]:
    """For each wrt argument, a batch of sum(sizes) tangents: the unit vectors of every argument in
    turn (zero in the others)."""
    total = sum(sizes)
    units, start = [], 0
    for shape, size in zip(shapes, sizes, strict=True):
        block = np.zeros((total, size))
        block[start : start + size] = np.eye(size)
        units.append(block.reshape((total, *shape)))
        start += size
    return units


def _as_result(block: np.ndarray, shape: tuple) -> Any:
    block = np.ascontiguousarray(block).reshape(shape)
    return float(block) if block.ndim == 0 else block


def _directions(directions: Any, converted: list, variant: _Variant, single: bool) -> tuple[list, bool]:
    """Tangents, one per wrt argument, each shaped like its argument or with one extra leading axis
    of the same length k for all (a batch); float64 copies, never the caller's buffers."""
    spec = variant.spec
    items = (directions,) if single else directions
    if not isinstance(items, tuple) or len(items) != len(spec.wrt):
        raise SourceADError(f"tangents= must be a tuple of {len(spec.wrt)} values, one per wrt argument")
    dots, batch = [], set()
    for item, k, name in zip(items, variant.wrt_pos, spec.wrt, strict=True):
        shape = np.shape(converted[k])
        t = np.array(callplan.real_array(item, f"the tangent of `{name}`"), copy=True)  # ours; never the caller's
        if t.shape == shape:
            batch.add(None)
            dots.append(t if shape else float(t))
        elif t.ndim == len(shape) + 1 and t.shape[1:] == shape and t.shape[0] > 0:
            batch.add(t.shape[0])
            dots.append(t)
        else:
            raise SourceADError(
                f"the tangent of `{name}` has shape {t.shape}; `{name}` has shape {shape}",
                hint=f"Pass one tangent of shape {shape}, or k of them as an array of shape (k, *{shape}).",
            )
    if len(batch) > 1:
        raise SourceADError("tangents= mixes single tangents and batches (or batches of different lengths)")
    return dots, batch != {None}


def _run_batch(prepared: _Prepared, variant: _Variant, kind: str, args: list, dirs: list, extra: list) -> Any:
    """Call the derivative once per direction, in compiled code when jit=True (`batch.py`)."""
    from .batch import compiled_loop, python_loop

    dirs = [np.ascontiguousarray(d, dtype=np.float64) for d in dirs]
    if not prepared._jit:
        with np.errstate(all="ignore"):
            plain = [np.float64(a) if type(a) is float else a for a in args]
            return python_loop(variant, kind, plain, dirs, extra)
    try:
        return compiled_loop(variant, kind)(*args, *dirs, *extra)
    except SystemError as exc:
        rerun.reraise_interrupt(exc)
        raise
    except (NumbaError, AssertionError) as exc:
        raise numba_failure(exc, f"the batch loop over {variant.compiled.path}") from None


def _tangent_batch(tangents: Any, converted: list, variant: _Variant, single: bool) -> bool:
    """Cheap test: is the first tangent an array with one more axis than its argument?"""
    first = tangents if single else (tangents[0] if isinstance(tangents, tuple) and tangents else None)
    return isinstance(first, np.ndarray) and first.ndim == np.ndim(converted[variant.wrt_pos[0]]) + 1


def _jvp_batch(jf: _Prepared, variant: _Variant, converted: list, tangents: Any, args: tuple) -> tuple:
    """k tangents: in one sweep carrying them all (vector mode) where the code allows, else one
    sweep per direction in a compiled loop."""
    dots, _ = _directions(tangents, converted, variant, jf._single)
    _no_tuple_results(variant.spec, "a batch of tangents")
    vector = _vector_jvp(jf, _with_defaults(jf._func, args))
    if vector is not None:
        prepared, lanes = vector  # its lanes are the last axis: contiguous for each element
        last = [np.ascontiguousarray(np.moveaxis(d, 0, -1)) for d in dots]
        value, lane_dots = prepared._run(lanes, converted + last)
        lane_dots = lane_dots[0] if variant.spec.mutated else lane_dots
        return _plain(value), np.ascontiguousarray(np.moveaxis(lane_dots, -1, 0))
    value, columns = _run_batch(jf, variant, "jvp", converted, dots, [])
    return _plain(value), columns


class _VectorJVP(_Prepared):
    """Vector forward mode (`vector.py`): `f_jvp(*args, *tangents with a leading axis of k)`."""

    __slots__ = ()

    def __init__(self, func: Callable, wrt: Wrt, jit: bool):
        super().__init__(func, wrt, "vector", jit)


_VECTOR_LOCK = threading.Lock()
_VECTOR: dict[tuple, _VectorJVP | None] = {}  # (function, wrt, jit) -> vector mode, or None where it does not apply


def _vector_jvp(jf: _Prepared, args: tuple) -> tuple[_VectorJVP, _Variant] | None:
    """The vector-mode twin of a prepared jvp and its variant for `args`, or None (prange code, or
    a construct the lane rewrite does not cover: then the caller loops over the directions)."""
    key = (jf._func, jf._wrt[0] if jf._single else jf._wrt, jf._jit)
    if key in _VECTOR and _VECTOR[key] is None:
        return None
    try:
        vector = _VECTOR.get(key)
        if vector is None:
            with _VECTOR_LOCK:
                vector = _VECTOR.get(key) or _VectorJVP(*key)
                _VECTOR[key] = vector
        return vector, vector._variant(args)
    except SourceADError:
        with _VECTOR_LOCK:
            _VECTOR[key] = None
        return None


def _cotangent_batch(cotangent: Any, spec: Spec) -> bool:
    """A batch of cotangents for a float result (a 1-D array of k seeds). For array results, whose
    shape the call does not know in advance, batches go through `jacobian(mode="reverse")`."""
    if spec.output_is_tuple or spec.returns_array or spec.mutated:
        return False
    return isinstance(cotangent, np.ndarray) and cotangent.ndim == 1


def _vjp_batch(vf: _Prepared, variant: _Variant, converted: list, cotangent: np.ndarray) -> tuple:
    if cotangent.shape[0] == 0:
        raise SourceADError("cotangent= is an empty batch: give at least one cotangent")
    seeds = [np.array(callplan.real_array(cotangent, "cotangent="))]  # a copy: never the caller's buffer
    value, *flat = _run_batch(vf, variant, "vjp", converted, seeds, [])
    return _plain(value), (flat[0] if vf._single else tuple(flat))
