"""Sparse Jacobians and Hessians: the pattern (`sparsity`), then compressed evaluation.

`sparsity(f, wrt, of)` runs the pattern sweep (`pattern/sweep.py`, plain Python over sets of
input elements) and returns the pattern as a `scipy.sparse.csr_array` of bool. `jacobian(...,
sparse=True)` colours it (`colouring/`), runs one vector-mode forward sweep over the colours'
seeds (or one batch of vjps over row colours, or both for a bicolouring) and decompresses into
CSR; `hessian(..., sparse=True)` runs one batch of hvps over a star colouring's seeds. Patterns
and colourings are cached per argument shapes (and, for a pattern local to the point, per
argument values), in a dict replaced whole under a lock. They pickle as their recipe.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import SourceADError
from ..functions import unwrap
from ..runtime.deps import Dep
from .budget import memory_bytes
from .callargs import _with_defaults
from .directions import _jvp_batch, _run_batch
from .first_order import JVP, VJP
from .pickling import check_recipe, function_ref, resolve
from .prepared import _Prepared
from .protocol import Memory, Wrt
from .vector_cache import _vector_jvp

if TYPE_CHECKING:
    import scipy.sparse as sp

_KEPT = 8  # patterns local to the point: the latest ones kept per prepared object


class _PatternSweep(_Prepared):
    """The pattern sweep of `f`: plain Python, its tangents sets of input elements."""

    __slots__ = ()
    TRANSFORM = "sparsity"

    def __init__(self, func: Callable, wrt: Wrt):
        super().__init__(func, wrt, "sparsity", False)


@dataclass(frozen=True)
class Pattern:
    """A pattern over all wrt arguments at once (columns: their flat elements, one after another)."""

    matrix: sp.csr_array  # bool, (out.size, n) for a Jacobian, (n, n) for a Hessian
    shapes: tuple[tuple[int, ...], ...]  # of the wrt arguments
    out_shape: tuple[int, ...]
    local: tuple[str, ...]  # why the pattern is local to the point (empty: static)

    @property
    def static(self) -> bool:
        return not self.local


class _Patterns:
    """Pattern sweeps of one function, cached: by shapes (and int arguments) where the pattern is
    static, by the arguments' bytes too where it is local."""

    def __init__(self, func: Callable, wrt: Wrt, hessian: bool):
        self.func, self.wrt, self.hessian = func, wrt, hessian
        self.single = not isinstance(wrt, (tuple, list))
        self.sweep = _PatternSweep(func, wrt)
        self.lock = threading.Lock()
        self.cache: dict[tuple, Any] = {}

    def get(self, args: tuple, extra: Callable[[Pattern], Any] | None = None) -> tuple[Pattern, Any]:
        """The pattern at `args` and what `extra` makes of it (a colouring), both cached."""
        variant = self.sweep._variant(args)
        local = _local_reasons(variant.compiled.source)
        key = _key(args, local)
        found = self.cache.get(key)
        if found is None:
            pattern = self.compute(args, local)
            found = (pattern, extra(pattern) if extra is not None else None)
            with self.lock:
                kept = {k: v for k, v in self.cache.items() if k[0] == "static"}
                kept.update(list((k, v) for k, v in self.cache.items() if k[0] == "local")[-_KEPT + 1 :])
                self.cache = {**kept, key: found}
        return found

    def compute(self, args: tuple, local: tuple[str, ...]) -> Pattern:
        sweep = self.sweep
        variant, converted = sweep._args(args)
        spec = variant.spec
        if spec.output_is_tuple:
            raise SourceADError(
                f"a sparse pattern needs a float or an array result; {spec.name} returns a tuple",
                hint="Return one array (np.concatenate the parts in your own code).",
            )
        shapes = tuple(np.shape(converted[k]) for k in variant.wrt_pos)
        sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
        starts = np.cumsum([0, *sizes])
        seeds = [_seed(shape, int(start)) for shape, start in zip(shapes, starts, strict=False)]
        pairs: list | None = [] if self.hessian else None
        value, dots = sweep._run(variant, [*converted, *seeds, pairs], args)
        if spec.mutated:
            value, dots = value[0], dots[0]
        _float_result(value, spec.name)
        n = int(starts[-1])
        if self.hessian:
            if np.ndim(value) != 0:
                raise SourceADError(
                    f"a Hessian needs a float result; {spec.name} returns an array of shape {np.shape(value)}",
                    hint="Sum the result into a float, or ask for the Jacobian's pattern (of='jacobian').",
                )
            matrix = _pairs_matrix(pairs or [], n)
        else:
            matrix = _rows_matrix(dots, n)
        return Pattern(matrix, shapes, np.shape(value), local)


def _seed(shape: tuple, start: int) -> Any:
    if not shape:
        return Dep(frozenset((start,)))
    size = int(np.prod(shape, dtype=np.int64))
    seed = np.empty(size, dtype=object)
    seed[:] = [Dep(frozenset((start + k,))) for k in range(size)]
    return seed.reshape(shape)


def _float_result(value: Any, name: str) -> None:
    dtype = np.asarray(value).dtype
    if dtype.kind != "f":
        raise SourceADError(
            f"{name} returns {dtype} values: a derivative needs a float result",
            hint="Return floats (float(), .astype(np.float64)); int and bool results have no derivative.",
        )


def _rows_matrix(dots: Any, n: int) -> sp.csr_array:
    import scipy.sparse as sp

    items = [dots] if not isinstance(dots, np.ndarray) else list(np.asarray(dots, dtype=object).reshape(-1))
    rows = [sorted(item.s) if isinstance(item, Dep) else [] for item in items]
    indptr = np.cumsum([0, *map(len, rows)])
    indices = np.fromiter((j for row in rows for j in row), dtype=np.int64, count=int(indptr[-1]))
    data = np.ones(len(indices), dtype=bool)
    return sp.csr_array((data, indices, indptr), shape=(len(rows), n))


def _pairs_matrix(pairs: list, n: int) -> sp.csr_array:
    """The symmetric pattern of all pairs (a, b): every element of a with every element of b."""
    import scipy.sparse as sp

    grouped: dict[frozenset, set[int]] = {}
    for a, b in pairs:
        a_s, b_s = a.s, b.s
        if a_s and b_s:
            found = grouped.get(a_s)
            if found is None:
                grouped[a_s] = set(b_s)
            else:
                found |= b_s
    rows: list[int] = []
    cols: list[int] = []
    for a_s, b_set in grouped.items():
        b_list = list(b_set)
        for i in a_s:
            rows.extend([i] * len(b_list))
            cols.extend(b_list)
    r = np.array(rows, dtype=np.int64)
    c = np.array(cols, dtype=np.int64)
    both = sp.coo_array((np.ones(2 * len(r), dtype=bool), (np.concatenate([r, c]), np.concatenate([c, r]))), (n, n))
    matrix = sp.csr_array(both)
    matrix.sum_duplicates()
    matrix.data[:] = True
    return matrix


def _local_reasons(source: str) -> tuple[str, ...]:
    marker = "# pattern local to the point: "
    return tuple(line.strip()[len(marker) :] for line in source.splitlines() if line.strip().startswith(marker))


def _key(args: tuple, local: tuple[str, ...]) -> tuple:
    """Shapes, dtypes and int arguments; for a local pattern, a digest of every argument too."""
    parts: list = []
    digest = hashlib.blake2b(digest_size=16) if local else None
    for a in args:
        arr = np.asarray(a)
        parts.append((arr.shape, arr.dtype.str, a if isinstance(a, (int, bool, np.integer)) else None))
        if digest is not None:
            digest.update(np.ascontiguousarray(arr).tobytes())
    return ("local" if local else "static", tuple(parts), digest.hexdigest() if digest is not None else None)


def blocks(matrix: sp.csr_array, pattern: Pattern, single: bool, hessian: bool) -> Any:
    """The whole matrix, or its blocks per wrt argument (a tuple; nested for a Hessian)."""
    import scipy.sparse as sp

    if single:
        return matrix
    sizes = [int(np.prod(s, dtype=np.int64)) for s in pattern.shapes]
    starts = np.cumsum([0, *sizes])
    cols = [(int(starts[b]), int(starts[b + 1])) for b in range(len(sizes))]
    csc = matrix.tocsc()
    if not hessian:
        return tuple(sp.csr_array(csc[:, lo:hi]) for lo, hi in cols)
    csr = sp.csr_array(matrix)
    return tuple(tuple(sp.csr_array(sp.csr_array(csr[ra:rb])[:, ca:cb]) for ca, cb in cols) for ra, rb in cols)


# --- the public objects


class Sparsity:
    """`sparsity(f, wrt, of)(*args)` -> the pattern, a `scipy.sparse.csr_array` of bool:
    (out.size, in.size) for of="jacobian", (in.size, in.size) and symmetric for of="hessian"."""

    __slots__ = ("_patterns", "_of", "_memory")

    def __init__(self, func: Callable, wrt: Wrt = 0, of: str = "jacobian"):
        if of not in ("jacobian", "hessian"):
            raise SourceADError(f"unknown pattern of={of!r}", hint="Use of='jacobian' or of='hessian'.")
        self._of = of
        self._patterns = _Patterns(unwrap(func), wrt, of == "hessian")

    def __reduce__(self) -> tuple:
        return sparse_rebuild, ("sparsity", function_ref(self._patterns.func), (self._patterns.wrt, self._of))

    def pattern(self, *args: Any) -> Pattern:
        """The pattern with what the CLI reports: the wrt shapes and why it is local, if it is."""
        return self._patterns.get(_with_defaults(self._patterns.func, args))[0]

    def __call__(self, *args: Any) -> Any:
        pattern = self.pattern(*args)
        return blocks(pattern.matrix, pattern, self._patterns.single, self._of == "hessian")


def sparsity(f: Callable, wrt: Wrt = 0, of: str = "jacobian") -> Sparsity:
    """The sparsity pattern of f's Jacobian (or Hessian) at the arguments given: never a missing nonzero."""
    return Sparsity(f, wrt, of)


@dataclass(frozen=True)
class _Plan:
    side: str  # "forward", "reverse", "both" (bicolouring) or "star" (a Hessian's hvps)
    colours: Any  # column or row colours; (rows, columns) for "both"
    count: int  # sweeps: colours, or both sides' colours for a bicolouring
    forward: tuple = ()  # the seeds of the forward sweep, one (k, *shape) batch per wrt argument
    lanes: tuple = ()  # the same as vector mode's lanes: (*shape, k), contiguous
    reverse: Any = None  # the cotangents of the vjps, (k, *out.shape)
    gather: Any = None  # for each stored entry, where in the compressed blocks (flat) it is read

    def decompress(self, P: sp.csr_array, *compressed: np.ndarray) -> sp.csr_array:
        """The matrix from its compressed blocks (flattened and joined in order): one gather."""
        import scipy.sparse as sp

        flat = compressed[0].ravel() if len(compressed) == 1 else np.concatenate([c.ravel() for c in compressed])
        return sp.csr_array((flat[self.gather], P.indices.copy(), P.indptr.copy()), shape=P.shape)


def _gather(side: str, colours: Any, P: sp.csr_array) -> np.ndarray:
    """Where `colouring`'s decompression reads each stored entry: its decompression run once on
    blocks that hold their own flat positions (decompression by direct recovery is a gather, so
    every later call is one indexing of the compressed blocks, checked once by the colouring's code)."""
    import scipy.sparse as sp

    from ..colouring import decompress_bicolouring, decompress_columns, decompress_rows, decompress_star

    m, n = P.shape

    def positions(shape: tuple, start: int = 0) -> np.ndarray:
        return np.arange(start, start + int(np.prod(shape)), dtype=np.float64).reshape(shape)

    if side == "forward":
        D = decompress_columns(P, colours, positions((m, _count(colours))))
    elif side == "reverse":
        D = decompress_rows(P, colours, positions((_count(colours), n)))
    elif side == "star":
        D = decompress_star(P, colours, positions((n, _count(colours))))
    else:
        rows, cols = colours
        kc, kr = int(cols.max(initial=0)), int(rows.max(initial=0))
        D = decompress_bicolouring(P, rows, cols, positions((m, kc)), positions((kr, n), m * kc))
    D = sp.csr_array(D)
    D.sort_indices()
    if not (np.array_equal(D.indptr, P.indptr) and np.array_equal(D.indices, P.indices)):
        raise AssertionError("the decompression's structure is not the pattern's")  # the colouring's contract
    return D.data.astype(np.int64)


def _plan(side: str, colours: Any, count: int, pattern: Pattern) -> _Plan:
    """A colouring with its seeds, made once and kept with the pattern."""
    m, n = pattern.matrix.shape
    forward: tuple = ()
    lanes: tuple = ()
    reverse = None
    cols = colours[1] - 1 if side == "both" else colours
    if side in ("forward", "star") or side == "both" and cols.max(initial=-1) >= 0:
        S = seeds_of(cols, n)
        forward = split_seeds(S.T, pattern.shapes, S.shape[1])
        lanes = tuple(np.ascontiguousarray(np.moveaxis(f, 0, -1)) for f in forward)
    rows = colours[0] - 1 if side == "both" else colours
    if side == "reverse" or side == "both" and rows.max(initial=-1) >= 0:
        S = seeds_of(rows, m)
        reverse = np.ascontiguousarray(S.T).reshape((S.shape[1], *pattern.out_shape))
    return _Plan(side, colours, count, forward, lanes, reverse, _gather(side, colours, pattern.matrix))


class SparseJacobian:
    """`jacobian(f, wrt, mode, sparse=True)(*args)` -> a CSR float64 array (out.size, in.size):
    colour the pattern, one vector-mode sweep over the seeds (or a batch of vjps), decompress."""

    __slots__ = ("_patterns", "_mode", "_jit", "_memory", "_jvp", "_vjp", "_lock")

    def __init__(self, func: Callable, wrt: Wrt = 0, mode: str = "auto", jit: bool = True, memory: Memory = None):
        if mode not in ("forward", "reverse", "auto"):
            raise SourceADError(f"unknown jacobian mode {mode!r}", hint="Use mode='forward', 'reverse' or 'auto'.")
        memory_bytes(memory)
        if memory is not None and mode == "forward":
            raise SourceADError(
                "memory= bounds what reverse mode records; a sparse Jacobian in forward mode records nothing",
                hint="Drop memory=, or use mode='reverse' or 'auto' (its vjps then keep to the budget).",
            )
        self._patterns = _Patterns(unwrap(func), wrt, False)
        self._mode, self._jit, self._memory = mode, jit, memory
        self._jvp: JVP | None = JVP(func, wrt, jit) if mode != "reverse" else None
        self._vjp: VJP | None = VJP(func, wrt, jit, memory) if mode == "reverse" else None
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple:
        p = self._patterns
        return sparse_rebuild, ("jacobian", function_ref(p.func), (p.wrt, self._mode, self._jit, self._memory))

    def plan(self, *args: Any) -> tuple[Pattern, _Plan]:
        """The pattern and how it is evaluated (side and colours), as cached."""
        return self._patterns.get(_with_defaults(self._patterns.func, args), self._colour)

    def __call__(self, *args: Any) -> Any:
        args = _with_defaults(self._patterns.func, args)
        pattern, plan = self._patterns.get(args, self._colour)
        P = pattern.matrix
        m, n = P.shape
        if plan.side == "forward":
            J = plan.decompress(P, self._forward(args, plan, m))
        elif plan.side == "reverse":
            J = plan.decompress(P, self._reverse(args, plan))
        else:
            Bcol = self._forward(args, plan, m) if plan.forward else np.zeros((m, 0))
            Brow = self._reverse(args, plan) if plan.reverse is not None else np.zeros((0, n))
            J = plan.decompress(P, Bcol, Brow)
        return blocks(J, pattern, self._patterns.single, False)

    def _colour(self, pattern: Pattern) -> _Plan:
        from ..colouring import bicolouring, column_colouring, row_colouring

        P = pattern.matrix
        options: list[_Plan] = []
        if self._mode in ("forward", "auto"):
            cols = column_colouring(P)
            options.append(_Plan("forward", cols, _count(cols)))
        if self._mode in ("reverse", "auto"):
            rows = row_colouring(P)
            options.append(_Plan("reverse", rows, _count(rows)))
        if self._mode == "auto" and min(o.count for o in options) > 2:
            rc, cc = bicolouring(P)
            options.append(_Plan("both", (rc, cc), int(rc.max(initial=0)) + int(cc.max(initial=0))))
        best = min(options, key=lambda o: o.count)  # the first of the fewest: forward on a tie
        return _plan(best.side, best.colours, best.count, pattern)

    def _forward(self, args: tuple, plan: _Plan, m: int) -> np.ndarray:
        """B = J @ S (m, k): one vector-mode sweep carrying a seed per colour."""
        jf = self._jvp
        if jf is None:
            with self._lock:
                jf = self._jvp = self._jvp or JVP(self._patterns.func, self._patterns.wrt, self._jit)
        k = plan.forward[0].shape[0]
        variant, converted = jf._args(args)
        vector = _vector_jvp(jf, args)
        if vector is None:  # vector mode does not apply: a compiled loop over the seeds
            seeds = plan.forward[0] if self._patterns.single else plan.forward
            _, columns = _jvp_batch(jf, variant, converted, seeds, args)
            return np.asarray(columns, dtype=np.float64).reshape(k, m).T
        prepared, lanes = vector
        spec = lanes.spec
        # the lanes go in as they are kept, unless the code may write its arguments' memory
        seeds = [lane.copy() for lane in plan.lanes] if spec.copied or spec.mutated else list(plan.lanes)
        _, lane_dots = prepared._run(lanes, [*converted, *seeds], args)
        lane_dots = lane_dots[0] if spec.mutated else lane_dots
        return np.asarray(lane_dots, dtype=np.float64).reshape(m, k)

    def _reverse(self, args: tuple, plan: _Plan) -> np.ndarray:
        """C = S.T @ J (k, n): one batch of vjps, a cotangent per colour."""
        vf = self._vjp
        if vf is None:
            with self._lock:
                vf = self._vjp = self._vjp or VJP(self._patterns.func, self._patterns.wrt, self._jit, self._memory)
        k = plan.reverse.shape[0]
        variant, converted = vf._args(args)
        cotangents = [plan.reverse] + [np.zeros((k, *np.shape(converted[j]))) for j in variant.written]
        _, *rows = _run_batch(vf, variant, "vjp", converted, cotangents, [])
        return np.concatenate([np.asarray(r, dtype=np.float64).reshape(k, -1) for r in rows], axis=1)


def star_plan(pattern: Pattern) -> _Plan:
    from ..colouring import star_colouring

    colours = star_colouring(pattern.matrix)
    return _plan("star", colours, _count(colours), pattern)


def _count(colours: np.ndarray) -> int:
    return int(colours.max(initial=-1)) + 1


def seeds_of(colours: np.ndarray, n: int) -> np.ndarray:
    """S (n, k): S[j, colours[j]] = 1, a row of zeros where the colour is negative (not seeded)."""
    colours = np.asarray(colours, dtype=np.int64)
    k = max(_count(colours), 1)
    S = np.zeros((n, k))
    keep = np.flatnonzero(colours >= 0)
    S[keep, colours[keep]] = 1.0
    return S


def split_seeds(seeds_t: np.ndarray, shapes: tuple, k: int) -> tuple:
    """(k, n) seeds -> one (k, *shape) batch per wrt argument."""
    out, start = [], 0
    for shape in shapes:
        size = int(np.prod(shape, dtype=np.int64))
        out.append(np.ascontiguousarray(seeds_t[:, start : start + size]).reshape((k, *shape)))
        start += size
    return tuple(out)


def sparse_rebuild(kind: str, ref: tuple, options: tuple) -> Any:
    if kind not in ("sparsity", "jacobian") or not isinstance(options, tuple):
        raise SourceADError(f"not a sparse recipe: {kind!r}")
    if kind == "sparsity":
        check_recipe(ref, options[0])
        return Sparsity(resolve(ref), *options)
    check_recipe(ref, options[0], options[-2], options[-1])
    return SparseJacobian(resolve(ref), *options)
