"""The prepared derivative: what every transform shares (`_Prepared`).

Each transform returns a *prepared* derivative: the function is transformed once, here (or its
generated module is found in the disk cache); numba compiles it once per argument type signature,
under its own compile lock; the object is immutable after construction (the only memo, of variants
for call kinds, is replaced whole, never edited) and keeps no per-call state: tapes, adjoints and
workspaces are locals of the generated code, so one instance can be called from many threads.
Everything about the arguments that can be decided once is decided here; a call converts its
arguments with closures built in advance, calls the compiled code and unpacks the result.

This module does not import the pipeline (and libcst) until a function has to be transformed, so
a process whose derivatives are all in the disk cache never pays for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numba.core.errors import NumbaError

from .. import nested
from ..build import arguments, callplan, rerun
from ..build.compile import Spec, load, source_key
from ..errors import SourceADError, numba_failure
from ..functions import unwrap
from ..ir.types import parse_spec
from .budget import memory_bytes
from .callargs import _for_these_kinds, _other_guess, _with_defaults
from .njit import dispatcher
from .pickling import function_ref, rebuild
from .protocol import Memory, Recipe, Wrt, _Variant

if TYPE_CHECKING:
    from numba.core.dispatcher import Dispatcher


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
    TRANSFORM: ClassVar[str]  # its name in the recipe ("grad", "vjp", ...): each transform says its own

    def __init__(self, func: Callable, wrt: Wrt, mode: str, jit: bool, memory: Memory = None):
        self._memory = memory_bytes(memory)
        self._single = not isinstance(wrt, (tuple, list))
        self._wrt: tuple[int | str, ...] = tuple(wrt) if isinstance(wrt, (tuple, list)) else (wrt,)
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
        if self._default is not None and self._free is not None:
            default = tuple(arguments.spec_key(parse_spec(self._default.spec.kinds[k])) for k in self._free)
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
        if self._jit:
            nested.check_compiled(self._func, compiled.source)  # derivative calls (nested.py)
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
        if self._default is None and self._variants:
            return list(self._variants.values())[-1].compiled.source
        return self._default_variant().compiled.source

    def _default_variant(self) -> _Variant:
        """The variant for the types the code suggests, or the error that kept it from being built."""
        if self._default is None:
            assert self._pending is not None  # `_build_default` keeps the error where it gives no variant
            raise self._pending
        return self._default

    def __sourcead_recipe__(self) -> Recipe:
        """What this object is (`protocol.py`), for pickling and `.njit`."""
        wrt = self._wrt[0] if self._single else self._wrt
        return Recipe(self.TRANSFORM, self._func, wrt, self._single, self._jit, self._memory)

    def __reduce__(self) -> tuple:
        """Pickles as the recipe: the function (by module and qualified name, as pickle sends a
        module-level function), the transform and its arguments; rebuilt from the disk cache."""
        recipe = self.__sourcead_recipe__()
        return rebuild, (recipe.transform, function_ref(recipe.func), recipe.wrt, recipe.jit, recipe.memory)

    @property
    def njit(self) -> Dispatcher:
        """A numba dispatcher doing what this object does, callable from `@numba.njit` code
        (`grad`: `njit(*args)`; `vjp`: `njit(*args, cotangent)`; `jvp`: `njit(*args, tangents)`).
        Parameters whose kind comes from the call take the default variant (floats, 1-D arrays
        where the code says array): see `njit_for`."""
        return dispatcher(self, self._default_variant())

    def njit_for(self, *args: Any) -> Dispatcher:
        """The `.njit` dispatcher of the variant that a call with these arguments uses."""
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
        variant.plan.before(args, converted)
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
