"""`check_derivative`: a function's derivatives against central finite differences and each other.

For every argument in `wrt`, along a seeded random direction `v` of that argument's shape, and a
seeded random cotangent `w` of the output's shape (float, array, tuple, plus the final state of the
arguments the function writes), the report compares:

    jvp  vs finite differences     <w, J v>            and  <w, D_v f>
    vjp  vs finite differences     <J^T w, v>          and  <w, D_v f>
    grad vs finite differences     <grad f, v>         and  D_v f          (float results only)
    dot product                    <w, J v>            and  <J^T w, v>     (forward against reverse)

where `D_v f` is the derivative of `t -> f(x + t v)` at 0 by Ridders' extrapolation of central
differences, which also estimates its own error. Two more lines compare the value that the
generated jvp and vjp code computes with `f` itself. With `order=2` (float results), also:

    hvp vs finite differences      <r, H v>            and  <r, D_v grad f>  (r: a random projection)
    symmetry                       <u, H v>            and  <v, H u>         (u, v over every wrt)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..build import cache_writes
from ..errors import SourceADError
from ..functions import unwrap
from .first_order import grad, jvp, vjp
from .higher import hvp

EPS = float(np.finfo(np.float64).eps)
FIRST_STEP = 1e-2  # Ridders' first step: this fraction of the argument's scale (at least 1)
SHRINK = 1.4  # ratio of successive steps (Numerical Recipes' dfridr)
STEPS = 10  # at most this many step sizes
SAFE = 2.0  # stop once the extrapolation error grows by this factor
ERROR_WEIGHT = 2.0  # a difference up to this many FD error estimates is FD error, not a bug
TRUST = 1e-3  # FD whose error estimate exceeds this fraction of the derivative prove nothing
NOISE = 1e3  # f carries rounding of about NOISE * eps * |f|; derivatives below that / step are zero
RETRIES = 8  # times the first step is divided by 10 when f fails (domain error, nan) next to x


@dataclass(frozen=True)
class Check:
    """One comparison: `value` (from the derivative under test) against `reference`.

    `error` is |value - reference| relative to the size of the terms that make them up; the check
    passes when `error <= allowed` and the finite differences behind `reference` converged.
    """

    what: str
    wrt: str | None  # the argument the check is about; None for the value checks
    value: float
    reference: float
    error: float
    allowed: float
    ok: bool
    note: str = ""

    def __str__(self) -> str:
        return self.line(len(self.what))

    def line(self, width: int) -> str:
        """The check on one line: what, both numbers, relative error, allowed error, verdict."""
        verdict = "PASS" if self.ok else "FAIL"
        line = (
            f"{self.what:<{width}} {self.value:>23.15e} {self.reference:>23.15e} "
            f"{self.error:>9.1e} {self.allowed:>9.1e}  {verdict}"
        )
        return line + (f"  ({self.note})" if self.note else "")


@dataclass(frozen=True)
class CheckReport:
    """All checks of one function; `str(report)` is a readable table, `report.ok` the verdict."""

    function: str
    wrt: tuple[str, ...]
    jit: bool
    rtol: float
    seed: int
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    @property
    def failures(self) -> tuple[Check, ...]:
        return tuple(check for check in self.checks if not check.ok)

    def __str__(self) -> str:
        head = (
            f"check_derivative({self.function}, wrt={', '.join(self.wrt)}; "
            f"jit={self.jit}, rtol={self.rtol:g}, seed={self.seed})"
        )
        width = max([len("check"), *(len(check.what) for check in self.checks)])
        legend = "(numbers are projected on seeded random directions: v for an argument, w for the output)"
        columns = f"{'check':<{width}} {'tested':>23} {'reference':>23} {'rel.err':>9} {'allowed':>9}"
        failed = len(self.failures)
        summary = f"all {len(self.checks)} checks pass" if not failed else f"{failed} of {len(self.checks)} checks FAIL"
        return "\n".join([head, legend, columns, *(check.line(width) for check in self.checks), summary])


def check_derivative(
    f: Callable, *args: Any, wrt: Any = 0, jit: bool = True, rtol: float = 1e-6, seed: int = 0, order: int = 1
) -> CheckReport:
    """Check the derivatives of `f` at `args` with respect to `wrt` (positions or names).

    Finite differences: the step along `v` starts at 1% of the argument's scale (its largest
    magnitude, at least 1) and shrinks by 1.4 up to ten times; Ridders' tableau extrapolates the
    central differences and estimates their error `e` (rounding and truncation). A check against
    finite differences passes when

        |derivative - reference| <= rtol * scale + 2 * e + floor,

    and `e <= 1e-3 * scale + floor`: finite differences that do not settle (a jump or kink of `f`
    at `args`, or noise larger than the derivative) make the check FAIL, with a note saying so,
    rather than pass unverified. `scale` is the size of the terms (|w| |J v|, |v| |J^T w|, the
    larger of the two sides), so a sum that cancels is judged against its terms; `floor` is
    1000 * eps * |w| |f(x)| / (smallest step): a derivative below what rounding of `f` lets
    finite differences see counts as zero (the check says so). The dot-product test (forward
    against reverse, both exact up to rounding) passes when the two sides agree to
    `rtol * scale + 1000 * eps * |w| |f(x)| |v| / max(1, |x|)` (rounding of derivatives of the
    size |f| / |x| that most functions have).

    `jit=True` checks the numba-compiled derivatives and evaluates `f` compiled by numba too;
    `jit=False` runs both as plain Python. `seed` seeds the random directions. `order=2` adds the
    second-order checks (hvp against finite differences of the gradient, which grad's own checks
    vouch for, and the symmetry of the Hessian) for a float-valued `f`.
    """
    if order not in (1, 2):
        raise SourceADError(f"order must be 1 or 2, got {order!r}")
    func = unwrap(f)
    items = tuple(wrt) if isinstance(wrt, (tuple, list)) else (wrt,)
    forward, reverse = jvp(func, items, jit=jit), vjp(func, items, jit=jit)
    spec = forward._variant(args).spec  # names and written arguments, as the compiler sees them
    positions = tuple(spec.params.index(name) for name in spec.wrt)
    outputs = _outputs(_primal(func, jit), tuple(spec.params.index(name) for name in spec.mutated))

    try:
        f0 = outputs(args)
    except Exception as exc:  # the user's function failed: say where, not how deep
        raise SourceADError(f"{spec.name} fails at the given arguments: {type(exc).__name__}: {exc}") from None
    rng = np.random.default_rng(seed)
    cotangent = _random_like(rng, f0)
    directions = [_random_like(rng, args[k]) for k in positions]
    zeros = [_zero_like(args[k]) for k in positions]

    value, jtw = reverse(*_copy(args), cotangent=_copy(cotangent))
    checks = [
        _value_check("value: jvp vs f", forward(*_copy(args), tangents=_copy(tuple(zeros)))[0], f0, cotangent, rtol),
        _value_check("value: vjp vs f", value, f0, cotangent, rtol),
    ]
    result = f0[0] if spec.mutated else f0
    gradients, unit = None, None
    if not isinstance(result, (tuple, np.ndarray)):  # a float result: grad applies
        gradients = grad(func, items, jit=jit)(*_copy(args))
        unit = (1.0, *(_zero_like(leaf) for leaf in f0[1:])) if spec.mutated else 1.0

    for i, (name, k, v) in enumerate(zip(spec.wrt, positions, directions, strict=True)):
        tangents = tuple(v if j == i else zero for j, zero in enumerate(zeros))
        _, jv = forward(*_copy(args), tangents=_copy(tangents))
        against = _Against(name, _directional(outputs, args, k, v), _norm(f0), rtol)
        checks.append(against.check("jvp", _dot(cotangent, jv), _norm(cotangent) * _norm(jv), cotangent))
        checks.append(against.check("vjp", _dot(jtw[i], v), _norm(jtw[i]) * _norm(v), cotangent))
        if gradients is not None:
            checks.append(against.check("grad", _dot(gradients[i], v), _norm(gradients[i]) * _norm(v), unit))
        floor = NOISE * EPS * _norm(cotangent) * _norm(f0) * _norm(v) / max(1.0, _norm(args[k]))
        checks.append(_dot_check(name, cotangent, jv, v, jtw[i], floor, rtol))
    if order == 2:
        if gradients is None:
            raise SourceADError(f"order=2 checks need a float result; {spec.name} returns an array or a tuple")
        checks += _second_order_checks(func, items, args, spec, positions, directions, rng, jit, rtol)
    return CheckReport(function=spec.name, wrt=tuple(spec.wrt), jit=jit, rtol=rtol, seed=seed, checks=tuple(checks))


def _second_order_checks(func, items, args, spec, positions, directions, rng, jit, rtol) -> list[Check]:
    """hvp along each argument's direction against Ridders' differences of the gradient, projected
    on a random r; then <u, H v> against <v, H u> for random u and v over every wrt argument."""
    gradient, product = grad(func, items, jit=jit), hvp(func, items, jit=jit)
    zeros = [_zero_like(args[k]) for k in positions]

    def gradients(moved: tuple) -> Any:
        return gradient(*_copy(moved))

    g0 = gradients(args)
    r = _random_like(rng, g0)
    checks = []
    for i, (name, k, v) in enumerate(zip(spec.wrt, positions, directions, strict=True)):
        hv = product(*_copy(args), tangents=_copy(tuple(v if j == i else z for j, z in enumerate(zeros))))
        against = _Against(name, _directional(gradients, args, k, v), _norm(g0), rtol)
        checks.append(against.check("hvp", _dot(r, hv), _norm(r) * _norm(hv), r))
    u = tuple(_random_like(rng, z) for z in zeros)
    v = tuple(_random_like(rng, z) for z in zeros)
    hu, hv = product(*_copy(args), tangents=_copy(u)), product(*_copy(args), tangents=_copy(v))
    scale = max(_norm(u) * _norm(hv), _norm(v) * _norm(hu))
    floor = NOISE * EPS * _norm(g0) * _norm(u) * _norm(v) / max(1.0, _norm(tuple(args[k] for k in positions)))
    checks.append(compare("symmetry <u,Hv> vs <v,Hu>", None, _dot(u, hv), _dot(v, hu), scale, rtol, floor))
    return checks


# --- the comparisons --------------------------------------------------------------------------


def compare(
    what: str,
    wrt: str | None,
    value: float,
    reference: float,
    scale: float,
    rtol: float,
    slack: float = 0.0,
    trusted: bool = True,
    note: str = "",
) -> Check:
    """`value` against `reference`: pass when |value - reference| <= rtol * scale + slack.

    `scale` is the size of the terms both sides are made of; `slack` an absolute allowance (the
    reference's own error); `trusted=False` (a reference known to be wrong) fails the check.
    """
    difference = abs(value - reference)
    allowed = rtol * scale + slack
    denominator = max(scale, slack, np.finfo(np.float64).tiny)  # slack: for derivatives too small to see
    ok = bool(trusted and difference <= allowed)  # nan never passes
    return Check(what, wrt, float(value), float(reference), difference / denominator, allowed / denominator, ok, note)


def _value_check(what: str, value: Any, f0: Any, cotangent: Any, rtol: float) -> Check:
    scale = _norm(cotangent) * max(_norm(value), _norm(f0))
    return compare(what, None, _dot(cotangent, value), _dot(cotangent, f0), scale, rtol)


@dataclass(frozen=True)
class _Difference:
    """Ridders' estimate of the directional derivative (flattened outputs) and its error."""

    estimate: np.ndarray | None
    error: float
    smallest_step: float
    note: str = ""


@dataclass(frozen=True)
class _Against:
    """Checks of derivatives along one argument's direction against its finite differences."""

    name: str
    fd: _Difference
    f_size: float  # |f(x)|
    rtol: float

    def floor(self, projection: Any) -> float:
        """What rounding of f lets finite differences see of <projection, D_v f>: below it is zero."""
        return NOISE * EPS * _norm(projection) * self.f_size / self.fd.smallest_step

    def check(self, mode: str, value: float, ad_scale: float, projection: Any) -> Check:
        """`value` (from `mode`) against <projection, D_v f>; `ad_scale` is the size of its terms."""
        what, fd = f"{mode} vs finite differences, wrt {self.name}", self.fd
        if fd.estimate is None:
            return compare(what, self.name, value, np.nan, ad_scale, self.rtol, trusted=False, note=fd.note)
        fd_error = _norm(projection) * fd.error
        scale = max(ad_scale, _norm(projection) * _norm(fd.estimate))
        floor = self.floor(projection)
        trusted = fd_error <= TRUST * scale + floor
        note = "" if trusted else f"finite differences do not settle (error {fd_error:.1e}): a jump or kink here?"
        if trusted and scale <= floor:
            note = "too small for finite differences to see next to |f|: counts as zero"
        reference = _dot(projection, fd.estimate)
        return compare(
            what, self.name, value, reference, scale, self.rtol, ERROR_WEIGHT * fd_error + floor, trusted, note
        )


def _dot_check(name: str, cotangent: Any, jv: Any, v: Any, jtw: Any, floor: float, rtol: float) -> Check:
    scale = max(_norm(cotangent) * _norm(jv), _norm(v) * _norm(jtw))
    what = f"dot product <w,Jv> vs <J'w,v>, wrt {name}"
    return compare(what, name, _dot(cotangent, jv), _dot(jtw, v), scale, rtol, floor)


# --- finite differences -----------------------------------------------------------------------


def _directional(outputs: Callable, args: tuple, k: int, v: Any) -> _Difference:
    """d/dt f(x + t v) at t = 0, x = args[k], by Ridders' extrapolation of central differences."""
    x = args[k]
    step = (
        FIRST_STEP * max(1.0, float(np.max(np.abs(x), initial=0.0))) / max(float(np.max(np.abs(v), initial=0.0)), EPS)
    )

    def central(h: float) -> np.ndarray:
        plus, minus = _flat(outputs(_moved(args, k, h, v))), _flat(outputs(_moved(args, k, -h, v)))
        if not (np.all(np.isfinite(plus)) and np.all(np.isfinite(minus))):
            raise FloatingPointError("f is not finite")
        return (plus - minus) / (2.0 * h)

    for _ in range(RETRIES):
        try:
            return _ridders(central, step)
        except (ArithmeticError, ValueError):  # a domain error next to x: come closer
            step /= 10.0
    return _Difference(None, np.inf, step, "f fails or is not finite at every step tried next to the point")


def _ridders(central: Callable[[float], np.ndarray], step: float) -> _Difference:
    """Numerical Recipes' dfridr, on vectors: a Richardson tableau over shrinking steps."""
    factor = SHRINK * SHRINK
    table = [[central(step)]]
    best, error = table[0][0], np.inf
    for i in range(1, STEPS):
        step /= SHRINK
        row = [central(step)]
        weight = factor
        for j in range(1, i + 1):
            row.append((row[j - 1] * weight - table[i - 1][j - 1]) / (weight - 1.0))
            weight *= factor
            change = max(_norm(row[j] - row[j - 1]), _norm(row[j] - table[i - 1][j - 1]))
            if change <= error:
                best, error = row[j], change
        table.append(row)
        if _norm(row[i] - table[i - 1][i - 1]) >= SAFE * error:
            break
    return _Difference(best, float(error), step)


# --- evaluating f -----------------------------------------------------------------------------


def _primal(func: Callable, jit: bool) -> Callable:
    """`func` compiled by numba (as `@differentiable` runs it), or as plain Python when `jit` is
    off or numba cannot compile it alone (it calls plain Python helpers, which sourcead reads)."""
    if not jit:
        return func
    import numba
    from numba.core.errors import NumbaError

    compiled: Any  # numba's dispatcher: its `_cache` is numba's own, untyped
    try:  # numba's own disk cache, beside the user's file: an accelerator, never a failure
        compiled = numba.njit(cache=True, nogil=True)(func)
        cache_writes.tolerant(compiled._cache)
    except (RuntimeError, OSError):  # no folder numba may write to ("no locator available")
        compiled = numba.njit(nogil=True)(func)
    chosen: list[Callable] = [compiled]

    def call(*args: Any) -> Any:
        try:
            return chosen[0](*args)
        except NumbaError:
            chosen[0] = func
            return func(*args)
        except ModuleNotFoundError:
            # numba's cache beside the file was written where the file was imported under another
            # module name (`heat`, then `examples.heat`): compile again, without that cache
            chosen[0] = numba.njit(nogil=True)(func)
            return chosen[0](*args)

    return call


def _outputs(primal: Callable, written: tuple[int, ...]) -> Callable[[tuple], Any]:
    """args -> f's outputs, as the derivatives see them: the result, then each written argument."""

    def outputs(args: tuple) -> Any:
        moved = _copy(args)
        result = primal(*moved)
        return (result, *(moved[k] for k in written)) if written else result

    return outputs


def _moved(args: tuple, k: int, t: float, v: Any) -> tuple:
    x = args[k]
    moved = x + t * v if isinstance(x, np.ndarray) else float(x) + t * float(v)
    return (*args[:k], moved, *args[k + 1 :])


# --- trees of floats and arrays ---------------------------------------------------------------


def _leaves(tree: Any) -> list:
    if isinstance(tree, tuple):
        return [leaf for part in tree for leaf in _leaves(part)]
    return [tree]


def _flat(tree: Any) -> np.ndarray:
    parts = [np.ravel(np.asarray(leaf, dtype=np.float64)) for leaf in _leaves(tree)]
    return np.concatenate(parts) if parts else np.zeros(0)


def _dot(a: Any, b: Any) -> float:
    return float(np.dot(_flat(a), _flat(b)))


def _norm(a: Any) -> float:
    return float(np.linalg.norm(_flat(a)))


def _copy(tree: Any) -> Any:
    if isinstance(tree, (tuple, list)):
        return tuple(_copy(part) for part in tree)
    return tree.copy() if isinstance(tree, np.ndarray) else tree


def _random_like(rng: np.random.Generator, tree: Any) -> Any:
    if isinstance(tree, tuple):
        return tuple(_random_like(rng, part) for part in tree)
    if isinstance(tree, np.ndarray):
        return rng.standard_normal(tree.shape)
    return float(rng.standard_normal())


def _zero_like(tree: Any) -> Any:
    if isinstance(tree, tuple):
        return tuple(_zero_like(part) for part in tree)
    return np.zeros(tree.shape) if isinstance(tree, np.ndarray) else 0.0
