"""Second order and Jacobians: hvp (`HVP`, a prepared derivative of its own), the dense
Hessian (one batch of hvp over the unit vectors) and the Jacobian (batched jvp or vjp over unit
directions, whichever needs fewer sweeps). They pickle as their recipe (`pickling.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..build.compile import Spec
from ..errors import SourceADError
from ..functions import unwrap
from .budget import memory_bytes
from .callargs import _with_defaults
from .directions import _directions, _jvp_batch, _no_tuple_results, _run_batch
from .first_order import JVP, VJP
from .pickling import check_second_order, function_ref, resolve
from .prepared import _Prepared
from .protocol import Memory, Wrt
from .sparse import Pattern, SparseJacobian, _Patterns, _Plan, blocks, star_plan

if TYPE_CHECKING:
    from numba.core.dispatcher import Dispatcher


class HVP(_Prepared):
    """`hvp(f, wrt)(*args, tangents=v)` -> H v, structured like `grad`'s result; tangents with one
    extra leading axis (k directions) give results with that leading axis."""

    __slots__ = ()
    TRANSFORM = "hvp"

    def __init__(self, func: Callable, wrt: Wrt = 0, jit: bool = True, memory: Memory = None):
        super().__init__(func, wrt, "hvp", jit, memory)

    def __reduce__(self) -> tuple:
        wrt = self._wrt[0] if self._single else self._wrt
        return _second_order_recipe("hvp", self._func, wrt, self._jit, self._memory)

    @property
    def njit(self) -> Dispatcher:
        raise _no_njit()

    def njit_for(self, *args: Any) -> Dispatcher:
        raise _no_njit()

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
        _, *flat = self._run(variant, [*converted, *dots, 1.0, *zeros], args)
        return self._grads(variant, flat, None)


def _no_njit() -> SourceADError:
    return SourceADError("hvp has no .njit entry yet", hint="Call it from Python, or its generated module (`.source`).")


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


def hessian(
    f: Callable, wrt: Wrt = 0, *, jit: bool = True, memory: Memory = None, sparse: bool = False
) -> Hessian | SparseHessian:
    """The dense Hessian of a float-valued `f`: shape x.shape + x.shape (nested tuples for a tuple wrt);
    `sparse=True`: a `scipy.sparse.csr_array` (in.size, in.size) from a coloured pattern (`sparse.py`)."""
    if _sparse_flag(sparse):
        return SparseHessian(f, wrt, jit, memory)
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
        assert jf is not None  # made in __init__ for the modes other than "reverse"
        variant = jf._variant(args)
        _no_tuple_results(variant.spec, "jacobian")
        shapes = [np.shape(args[k]) for k in variant.wrt_pos]
        sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
        if mode == "auto":
            zero = tuple(np.zeros(s) if s else 0.0 for s in shapes)
            value, _ = jf(*args, tangents=zero[0] if self._single else zero)
            value = value[0] if variant.spec.mutated else value
            if np.size(value) < sum(sizes):
                return self._reverse(args)
        units = _unit_directions(shapes, sizes)
        variant, converted = jf._args(args)
        _, columns = _jvp_batch(jf, variant, converted, units[0] if self._single else tuple(units), args)
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


def jacobian(
    f: Callable, wrt: Wrt = 0, mode: str = "auto", *, jit: bool = True, memory: Memory = None, sparse: bool = False
) -> Jacobian | SparseJacobian:
    """The Jacobian of `f` (a float or an array result): shape out.shape + in.shape; `sparse=True`: a
    `scipy.sparse.csr_array` (out.size, in.size) from a coloured pattern (`sparse.py`)."""
    if _sparse_flag(sparse):
        return SparseJacobian(f, wrt, mode, jit, memory)
    return Jacobian(f, wrt, mode, jit, memory)


def _sparse_flag(sparse: Any) -> bool:
    if not isinstance(sparse, (bool, np.bool_)):
        raise SourceADError(f"sparse={sparse!r} is not a bool", hint="Use sparse=True or sparse=False.")
    return bool(sparse)


class SparseHessian:
    """`hessian(f, wrt, sparse=True)(*args)` -> a CSR float64 array (in.size, in.size): a star
    colouring of the Hessian's pattern, one batch of hvps over its seeds, direct recovery."""

    __slots__ = ("_patterns", "_hvp")

    def __init__(self, func: Callable, wrt: Wrt = 0, jit: bool = True, memory: Memory = None):
        self._patterns = _Patterns(unwrap(func), wrt, True)
        self._hvp = HVP(func, wrt, jit, memory)

    def __reduce__(self) -> tuple:
        p, h = self._patterns, self._hvp
        return _second_order_recipe("sparse_hessian", p.func, p.wrt, h._jit, h._memory)

    def plan(self, *args: Any) -> tuple[Pattern, _Plan]:
        return self._patterns.get(_with_defaults(self._patterns.func, args), star_plan)

    def __call__(self, *args: Any) -> Any:
        args = _with_defaults(self._patterns.func, args)
        pattern, plan = self._patterns.get(args, star_plan)
        k = plan.forward[0].shape[0]
        tangents = plan.forward
        products = self._hvp(*args, tangents=tangents[0] if self._patterns.single else tangents)
        products = (products,) if self._patterns.single else products
        B = np.concatenate([np.asarray(p, dtype=np.float64).reshape(k, -1) for p in products], axis=1).T
        H = plan.decompress(pattern.matrix, B)
        return blocks(H, pattern, self._patterns.single, True)


def _second_order_recipe(kind: str, func: Callable, *options: Any) -> tuple:
    """Pickle as the recipe (the function by reference, as `pickling.function_ref` sends it)."""
    return _rebuild_second_order, (kind, function_ref(unwrap(func)), options)


def _rebuild_second_order(kind: str, ref: tuple, options: tuple) -> Any:
    if kind == "sparse_hessian":
        check_second_order("hessian", ref, options)
        return SparseHessian(resolve(ref), *options)
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
