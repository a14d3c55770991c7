"""Forward mode's strong zero: an exactly zero tangent contributes exactly zero through a partial
that may be infinite where the value is finite (`Partials.singular`: sqrt, cbrt, x ** c with
0 < c < 1, arcsin, arccos, arccosh, arctan2, powers), as reverse mode's exactly zero seed does.

The normalizations below (NPBench's batch norm, `benchmarks/npbench/apps.py`) take the square root
of a zero variance where a column is constant: its partial is infinite, the variance's tangent
exactly zero. Their derivatives exist there (the square root enters as `d / sqrt(s + 1)` with `d`
zero where `s` is), so forward mode is checked against reverse mode (the dot-product test) and
against central differences; the plain cases against the directional derivative known by hand.
A nonzero tangent through an infinite partial stays infinite: the guard hides nothing.
"""

from __future__ import annotations

import math
import re

import numba
import numpy as np
import pytest
from numba import prange
from numeric import central_difference_jvp, vdot

import sourcead as ad
from sourcead.pipeline.driver import generate
from sourcead.pipeline.passes import FRONT, MODULE, TANGENT, run
from sourcead.pipeline.stages import Unit
from sourcead.runtime import pymath

EPS = 1.0  # the normalizations' epsilon: large, so central differences stay well conditioned


def root(v):
    return math.sqrt(v)


def loop_norm(x):
    """Scalar loops: mean, variance, sqrt (math.sqrt), weighted normalized sum."""
    n = x.shape[0]
    m = 0.0
    for i in range(n):
        m += x[i]
    m = m / n
    v = 0.0
    for i in range(n):
        v += (x[i] - m) ** 2
    s = math.sqrt(v / n)
    out = 0.0
    for i in range(n):
        out += (i + 1.0) * (x[i] - m) / math.sqrt(s + EPS)
    return out


def loop_norm_power(x):
    """The same with `** 0.5` and the square root in an inlined helper."""
    n = x.shape[0]
    m = 0.0
    for i in range(n):
        m += x[i]
    m = m / n
    v = 0.0
    for i in range(n):
        d = x[i] - m
        v += d * d
    s = (v / n) ** 0.5
    out = 0.0
    for i in range(n):
        out += (i + 1.0) * (x[i] - m) / root(s + EPS)
    return out


def column_norm(x, w):
    """Whole arrays: NPBench's batchnorm2d over the rows (np.sqrt of an array of variances)."""
    mean = np.sum(x, axis=0) / x.shape[0]
    d = x - mean
    std = np.sqrt(np.sum(d * d, axis=0) / x.shape[0])
    return np.sum(w * d / np.sqrt(std + EPS))


def column_norm_power(x, w):
    mean = np.sum(x, axis=0) / x.shape[0]
    d = x - mean
    std = np.power(np.sum(d * d, axis=0) / x.shape[0], 0.5)
    return np.sum(w * d / np.sqrt(std + EPS))


def parallel_norm(x, w):
    """One column per prange iteration, each with its own square root of a variance."""
    n, k = x.shape
    out = np.zeros(k)
    for j in prange(k):
        m = 0.0
        for i in range(n):
            m += x[i, j]
        m = m / n
        v = 0.0
        for i in range(n):
            v += (x[i, j] - m) * (x[i, j] - m)
        s = math.sqrt(v / n)
        acc = 0.0
        for i in range(n):
            acc += w[i, j] * (x[i, j] - m) / math.sqrt(s + EPS)
        out[j] = acc
    return np.sum(out)


def sqrt_of_product(x, y):
    return math.sqrt(x * y) + y


def sum_of_roots(x):
    return np.sum(np.sqrt(x))


def sum_of_cube_roots(x):
    return np.sum(np.cbrt(x) * 2.0)


def element_roots(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.sqrt(x[i]) + x[i] ** 0.5
    return s


def weighted_arcsin(x, w):
    return np.sum(w * np.arcsin(x))


def smooth_norm(x):
    return math.sqrt(x * x + 1.0)


CONSTANT_COLUMN = np.array([[1.0, 0.3, 2.0], [1.0, -0.4, 2.0], [1.0, 0.9, 2.0], [1.0, 0.1, 2.0]])
WEIGHTS = np.arange(1.0, 13.0).reshape(4, 3) / 7.0
CONSTANT_VECTOR = np.full(5, 0.7)
NORMS = [
    (loop_norm, (CONSTANT_VECTOR,)),
    (loop_norm_power, (CONSTANT_VECTOR,)),
    (column_norm, (CONSTANT_COLUMN, WEIGHTS)),
    (column_norm_power, (CONSTANT_COLUMN, WEIGHTS)),
]


def _tangent(shape) -> np.ndarray:
    return np.random.default_rng(3).standard_normal(shape)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("f, args", NORMS, ids=[f.__name__ for f, _ in NORMS])
def test_a_zero_variance_agrees_with_reverse_mode_and_differences(f, args, jit):
    v = _tangent(args[0].shape)
    with np.errstate(all="ignore"):  # plain Python: the reverse sweep's eager np.where may warn
        value, dot = ad.jvp(f, wrt=0, jit=jit)(*args, tangents=v)
        grad = ad.grad(f, wrt=0, jit=jit)(*args)
    assert np.isfinite(dot) and np.all(np.isfinite(grad))
    assert value == pytest.approx(f(*args), rel=1e-13)
    assert dot == pytest.approx(vdot(grad, v), rel=1e-10, abs=1e-12)
    expected = central_difference_jvp(f, args, [f.__code__.co_varnames[0]], [v], eps=1e-6)
    assert dot == pytest.approx(expected, rel=1e-6, abs=1e-8)


def test_a_zero_variance_in_a_prange_loop():
    args = (CONSTANT_COLUMN, WEIGHTS)
    v = _tangent(CONSTANT_COLUMN.shape)
    for jit in (False, True):
        _, dot = ad.jvp(parallel_norm, wrt=0, jit=jit)(*args, tangents=v)
        grad = ad.grad(parallel_norm, wrt=0, jit=jit)(*args)
        assert np.isfinite(dot)
        assert dot == pytest.approx(vdot(grad, v), rel=1e-10, abs=1e-12)
    assert dot == pytest.approx(central_difference_jvp(parallel_norm, args, ["x"], [v]), rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_directional_derivatives_where_the_singular_operand_stays_put(jit):
    # sqrt(x * y) at x = 0 along (0, 1): x * y stays 0, so only `+ y` moves
    assert ad.jvp(sqrt_of_product, wrt=(0, 1), jit=jit)(0.0, 2.0, tangents=(0.0, 1.0)) == (2.0, 1.0)
    x = np.array([0.0, 1.0, 4.0])
    direction = np.array([0.0, 1.0, 1.0])  # the zero element stays zero
    assert ad.jvp(sum_of_roots, jit=jit)(x, tangents=direction)[1] == pytest.approx(0.5 + 0.25, rel=1e-15)
    assert ad.jvp(sum_of_cube_roots, jit=jit)(x, tangents=direction)[1] == pytest.approx(
        2.0 * (1.0 / 3.0 + 1.0 / (3.0 * 16.0 ** (1.0 / 3.0))), rel=1e-14
    )
    assert ad.jvp(element_roots, jit=jit)(x, tangents=direction)[1] == pytest.approx(2.0 * 0.75, rel=1e-15)
    w = np.array([2.0, 3.0])
    at_one = np.array([1.0, 0.5])  # arcsin's partial is infinite at 1
    got = ad.jvp(weighted_arcsin, wrt=0, jit=jit)(at_one, w, tangents=np.array([0.0, 1.0]))[1]
    assert got == pytest.approx(3.0 / math.sqrt(0.75), rel=1e-14)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_a_nonzero_tangent_through_an_infinite_partial_stays_infinite(jit):
    x = np.array([0.0, 1.0, 4.0])
    with np.errstate(all="ignore"):
        assert ad.jvp(sum_of_roots, jit=jit)(x, tangents=np.array([1.0, 0.0, 0.0]))[1] == math.inf
        assert ad.jvp(element_roots, jit=jit)(x, tangents=np.array([1.0, 0.0, 0.0]))[1] == math.inf
        assert ad.jvp(sum_of_cube_roots, jit=jit)(x, tangents=np.array([1.0, 0.0, 0.0]))[1] == math.inf
        _, dot = ad.jvp(sqrt_of_product, wrt=(0, 1), jit=jit)(0.0, 2.0, tangents=(1.0, 0.0))
        assert dot == math.inf
        _, dot = ad.jvp(weighted_arcsin, wrt=0, jit=jit)(np.array([1.0, 0.5]), np.ones(2), tangents=np.ones(2))
        assert not np.isfinite(dot)
        _, dot = ad.jvp(sum_of_roots, jit=jit)(x, tangents=np.array([math.nan, 0.0, 0.0]))
        assert math.isnan(dot)  # a nan tangent is not a zero one


def test_only_declared_singular_partials_are_guarded():
    source = ad.differentiable(column_norm).source("forward", wrt="x", arrays={"x": 2, "w": 2})
    # the two np.sqrt (of the variance, of std + EPS) on their tangents: not the division (its
    # partial in the denominator reads the quotient, whose tangent may be infinite where the
    # denominator's is: no strong zero), the products or the sums; each the fused strong_zero_each
    assert re.findall(r"strong_zero_each\(.*, (\w+)\)", source) == ["t3", "std_dot"]
    assert "np.where(" not in source and "!= 0.0" not in source


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_a_batch_of_tangents_through_a_guard(jit):
    """Vector forward mode (k tangents at once, a tangent bound for the guard among them) gives
    each direction's own jvp."""
    from sourcead.api import vector_cache

    x = np.array([0.0, 1.0, 4.0])
    directions = np.array([[0.0, 1.0, 1.0], [0.0, 2.0, 0.0], [1.0, 0.0, 0.0]])
    cases = [(sum_of_roots, (x,), directions), (element_roots, (x,), directions)]
    cases += [(f, args, np.stack([_tangent(args[0].shape), np.zeros(args[0].shape)])) for f, args in NORMS]
    for f, args, batch in cases:
        jf = ad.jvp(f, wrt=0, jit=jit)
        with np.errstate(all="ignore"):
            _, dots = jf(*args, tangents=batch)
            singles = [jf(*args, tangents=d)[1] for d in batch]
        assert vector_cache._VECTOR[(f, 0, jit)] is not None, f.__name__  # not one sweep per direction
        np.testing.assert_allclose(dots, singles, rtol=1e-14, atol=1e-14)
        assert np.all(np.isfinite(dots)) or f in (sum_of_roots, element_roots)
    assert dots[-1] == 0.0


def kink(x, y):
    """sqrt(y * y) is |y|: at y = 0 its tangent along (1, 0) is zero, through an infinite partial."""
    return math.sqrt(y * y) + x * x


def _gradient_differences(f, args, v, h=1e-6):
    """H v by central differences of the gradient along v (the first argument's direction)."""
    grad = ad.grad(f, wrt=0, jit=False)
    with np.errstate(all="ignore"):
        return (grad(args[0] + h * v, *args[1:]) - grad(args[0] - h * v, *args[1:])) / (2 * h)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_second_order_keeps_the_derivative_of_a_vanishing_tangent(jit):
    """hvp differentiates the tangent code again: its guard is `p * t if t != 0.0 or
    isfinite(p) else 0.0`, so where p is finite it is `p * t` and its derivative p dt + t dp
    (sqrt(x * x + 1) at 0: t vanishes there, and H v = v, not 0)."""
    assert ad.hvp(smooth_norm, jit=jit)(0.0, tangents=1.0) == pytest.approx(1.0, rel=1e-15)
    x = np.array([0.3, -0.2, 0.8, 0.1, 0.5])
    v = _tangent(5)
    np.testing.assert_allclose(ad.hvp(loop_norm, jit=jit)(x, tangents=v), _gradient_differences(loop_norm, (x,), v),
                               rtol=1e-6, atol=1e-8)  # fmt: skip


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_second_order_has_the_strong_zero_where_the_partial_is_infinite(jit):
    """Along a direction that keeps sqrt's operand at 0 (|y| at y = 0 moving x; a variance that
    stays 0), H v is what central differences of the gradient give, where it was nan."""
    with np.errstate(all="ignore"):
        assert ad.hvp(kink, wrt=(0, 1), jit=jit)(0.7, 0.0, tangents=(1.0, 0.0)) == (2.0, 0.0)
        assert ad.hvp(kink, wrt=(0, 1), jit=jit)(0.7, 0.5, tangents=(1.0, 1.0)) == pytest.approx((2.0, 0.0))
        assert ad.hvp(root, jit=jit)(0.0, tangents=1.0) == -math.inf  # d2/dx2 sqrt(x) at 0: infinite
    if jit:
        return
    shift = np.ones(5)  # every element moved alike: the variance stays 0
    for f in (loop_norm, loop_norm_power):
        got = ad.hvp(f, jit=False)(CONSTANT_VECTOR, tangents=shift)
        np.testing.assert_allclose(got, _gradient_differences(f, (CONSTANT_VECTOR,), shift), atol=1e-8)
    v = _tangent(CONSTANT_COLUMN.shape)
    v[:, 0] = 0.4  # the constant column stays constant
    for f in (column_norm, column_norm_power):
        with np.errstate(all="ignore"):
            got = ad.hvp(f, wrt=0, jit=False)(CONSTANT_COLUMN, WEIGHTS, tangents=v)
        assert np.all(np.isfinite(got))
        expected = _gradient_differences(f, (CONSTANT_COLUMN, WEIGHTS), v)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


def sqrt_of_scaled(a, b):
    return math.sqrt(a * b)


def test_reverse_mode_where_a_zero_partial_meets_an_infinite_one():
    """sqrt(a * b) at b = 0 is flat in a: both modes give 0 (`test_reverse_strong_zero.py`)."""
    assert ad.jvp(sqrt_of_scaled, wrt=0, jit=False)(1.0, 0.0, tangents=1.0) == (0.0, 0.0)
    with np.errstate(all="ignore"):
        assert ad.grad(sqrt_of_scaled, wrt=0, jit=False)(1.0, 0.0) == 0.0


# --- a zero partial above a singular one: forward mode's twin of reverse mode's guard ----------------
#
# `c * math.sqrt(v)` at c = 0 is 0 for every v >= 0: along v its derivative is 0, yet sqrt's tangent
# is inf at v = 0, and c times it was 0 * inf = nan, where reverse mode gives 0. A tangent that may be
# non-finite (it crossed a singular partial: in the statement, or in the one that made its variable,
# `forward/singular.py`) contributes exactly 0 through an exactly zero partial above it. Each jvp is
# checked along every basis direction against reverse mode's gradient (the dot-product test, exactly,
# infinities included), against one-sided differences into the domain (sqrt of a negative number has
# none on the other side), and against values known by hand; compiled and in plain Python.


def zero_above(c, v):
    return c * math.sqrt(v) + v


def zero_above_power(c, v):
    return c * v**0.5 + 2.0 * v


def zero_above_across(c, v):
    s = math.sqrt(v)
    r = c * s
    return r + v


def zero_above_helper(c, v):
    return root(v) * c + np.arcsin(v) * c + v


def zero_above_loop(c, v):
    s = 0.0
    for i in range(c.shape[0]):
        s += c[i] * math.sqrt(v[i]) + v[i]
    return s


def zero_above_prange(c, v):
    out = np.zeros(c.shape[0])
    for i in prange(c.shape[0]):
        out[i] = c[i] * math.sqrt(v[i]) * (i + 1.0) + v[i]
    return np.sum(out)


def zero_above_arrays(c, v):
    """An array partial above an array tangent."""
    return np.sum(c * np.sqrt(v)) + np.sum(v)


def float_partial_above_array(c, v):
    """A float partial (c) above an array tangent: the guard's seed is a number."""
    return np.sum(c * np.sqrt(v) + v)


def array_partial_above_float(c, s):
    """An array partial (c) above a float tangent (sqrt of a float): broadcast to c's shape."""
    return np.sum(c * math.sqrt(s)) + s


SCALAR_POINTS = {
    zero_above: [((0.0, 0.0), (0.0, 1.0)), ((2.0, 0.0), None), ((0.0, 0.5), None), ((1.5, 2.0), None)],
    zero_above_power: [((0.0, 0.0), (0.0, 2.0)), ((1.5, 2.0), None)],
    zero_above_across: [((0.0, 0.0), (0.0, 1.0)), ((1.5, 2.0), None)],
    zero_above_helper: [((0.0, 0.0), (0.0, 1.0)), ((0.0, 1.0), None), ((0.7, 0.3), None)],
}
C, V = np.array([0.0, 1.5, 0.0, 2.0]), np.array([0.0, 0.0, 0.5, 3.0])
ARRAY_POINTS = {
    zero_above_loop: (C, V),
    zero_above_prange: (C, V),
    zero_above_arrays: (C, V),
    float_partial_above_array: (0.0, V),
    array_partial_above_float: (C, 0.0),
}


@pytest.fixture(scope="module")
def prepared():
    """The prepared jvp and grad of each function, compiled once for the module."""
    made: dict = {}

    def get(f, mode, jit, wrt):
        key = (f, mode, jit, wrt)
        if key not in made:
            made[key] = (ad.jvp if mode == "jvp" else ad.grad)(f, wrt=wrt, jit=jit)
        return made[key]

    return get


def _directions(args):
    """Every basis direction of the arguments (one element of one argument moves)."""
    for k, a in enumerate(args):
        for i in np.ndindex(np.shape(a)):
            t = [np.zeros_like(b) if isinstance(b, np.ndarray) else np.float64(0.0) for b in args]
            if isinstance(a, np.ndarray):
                t[k] = t[k].copy()
                t[k][i] = 1.0
            else:
                t[k] = np.float64(1.0)
            yield k, i, tuple(t)


def _one_sided(f, args, t, h=1e-10):
    """(f(args + h t) - f(args)) / h, or with -h where args + h t leaves the domain (arcsin at 1)."""
    for step in (h, -h):
        moved = [a + step * d for a, d in zip(args, t, strict=True)]
        with np.errstate(invalid="ignore"):
            difference = (f(*moved) - f(*args)) / step
        if np.isfinite(difference):
            return difference
    return math.nan


def _check_against_reverse(prepared, f, args, jit, expected=None):
    wrt = tuple(range(len(args)))
    with np.errstate(all="ignore"):
        grads = prepared(f, "grad", jit, wrt)(*args)
        jvp = prepared(f, "jvp", jit, wrt)
        dots = []
        for k, i, t in _directions(args):
            value, dot = jvp(*args, tangents=t)
            want = np.asarray(grads[k])[i]
            assert dot == pytest.approx(want, rel=1e-12, abs=1e-14), (f.__name__, args, k, i)
            if np.isfinite(dot):  # moving this element into its domain (the others stay)
                assert dot == pytest.approx(_one_sided(f, args, t), rel=1e-4, abs=1e-5), (f.__name__, args, k, i)
            dots.append(dot)
    assert value == pytest.approx(f(*args), rel=1e-14)
    if expected is not None:
        assert tuple(dots) == expected
    return dots


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("f", list(SCALAR_POINTS), ids=lambda f: f.__name__)
def test_a_zero_partial_above_an_infinite_one_contributes_zero(prepared, f, jit):
    for args, expected in SCALAR_POINTS[f]:
        _check_against_reverse(prepared, f, args, jit, expected)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("f", list(ARRAY_POINTS), ids=lambda f: f.__name__)
def test_in_loops_prange_and_whole_arrays(prepared, f, jit):
    """Element 0: c = 0 and v = 0, moving v is flat but for `+ v`; element 1: c != 0 and v = 0,
    moving v is infinite; element 2: c = 0, v > 0, finite."""
    dots = _check_against_reverse(prepared, f, ARRAY_POINTS[f], jit)
    assert all(np.isfinite(d) or d == math.inf for d in dots)  # never nan
    if f in (zero_above_loop, zero_above_prange, zero_above_arrays):
        n = C.size
        along_v = dots[n:]
        assert along_v[0] == 1.0 and along_v[1] == math.inf and along_v[2] == 1.0


def zero_squared(v):
    """sqrt(v) * sqrt(v) is v: at v = 0 the partial s is zero only because v is, and its tangent
    (0.5 / s) v_dot infinite for the same reason: 0 * inf stands for 1 here, not for 0."""
    s = math.sqrt(v)
    return s * s + 3.0 * v


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_a_zero_partial_that_moves_infinitely_fast_is_not_a_strong_zero(prepared, jit):
    """The guard holds only where the partial reads no value with a non-finite tangent: here
    forward mode stays nan (the true one-sided derivative is 4), never a silent wrong 0."""
    with np.errstate(all="ignore"):
        assert math.isnan(prepared(zero_squared, "jvp", jit, 0)(0.0, tangents=1.0)[1])
        assert prepared(zero_squared, "jvp", jit, 0)(0.25, tangents=1.0)[1] == pytest.approx(4.0, rel=1e-14)
    assert _one_sided(zero_squared, (0.0,), (1.0,)) == pytest.approx(4.0, rel=1e-6)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_reverse_mode_where_the_partial_moves_infinitely_fast(jit):
    """Reverse mode's twin: s's adjoint 2 * s * g is zero for the same reason, and its strong zero
    at sqrt's partial gave 3.0; it is not taken there (`reverse/singular.py`'s suspect adjoints):
    nan, as forward mode (`test_reverse_singular_zero.py` has the neighbours)."""
    with np.errstate(all="ignore"):
        got = ad.grad(zero_squared, jit=jit)(0.0)
        assert ad.grad(zero_squared, jit=jit)(0.25) == pytest.approx(4.0, rel=1e-14)
    assert math.isnan(got) or got == pytest.approx(4.0)


def test_only_tangents_that_crossed_a_singular_partial_are_guarded_on_their_partials():
    """`c * t` is guarded where t may be infinite; `c * u` of an ordinary tangent, a nonzero
    partial (`+`, `1 / y`), and the partial `s` of `s * s` (see above) are not."""

    def guarded(f, **kw) -> list[str]:
        source = ad.differentiable(f).source("forward", wrt=(0, 1), **kw)
        return re.findall(r"if (\w+) != 0\.0|strong_zero(?:_each)?\(.*?, (\w+)\)", source)

    assert guarded(zero_above) == [("v_dot", ""), ("c", "")]
    assert guarded(zero_above_across) == [("v_dot", ""), ("c", "")]  # r_dot: across statements
    assert guarded(smooth_product) == []
    source = ad.differentiable(zero_squared).source("forward", wrt=0)
    assert "s != 0.0" not in source and "(0.5 / t0 * v_dot if v_dot != 0.0 else 0.0)" in source
    arrays = ad.differentiable(zero_above_arrays).source("forward", wrt=(0, 1), arrays={"c": 1, "v": 1})
    assert "strong_zero_each(0.5 / t0 * v_dot, v_dot)" in arrays and "strong_zero_each(c * t1, c)" in arrays
    assert "np.where(" not in arrays


def smooth_product(c, u):
    return c * math.exp(u) + c * u / (u * u + 1.0)


def user_select(x, w):
    """The user's own np.where in a primal statement, and a singular partial's guard in the tangent."""
    m = np.where(w != 0.0, w * 2.0, 0.0)
    return np.sum(np.sqrt(x * m))


def test_the_pass_rewrites_tangent_statements_only():
    """The user's `np.where(w != 0.0, w * 2.0, 0.0)` stays as written (its dtypes are NumPy's); the
    tangent's guard becomes strong_zero_each."""
    source = generate(user_select, "forward", ("x",), {"x": "array:1", "w": "array:1"}).source
    assert "m = np.where(w != 0.0, w * 2.0, 0.0)" in source
    assert source.count("np.where(") == 1 and source.count("strong_zero_each(") == 1


def _before_the_pass(f, wrt, kinds) -> str:
    """Forward mode's module without the pass strong_zeros: the guards as np.where."""
    unit = Unit(f, wrt, kinds, mode="forward")
    return run((*FRONT, TANGENT, MODULE), unit).generated.source


def _entry(source: str, name: str, jit: bool):
    """The generated function, compiled, or as plain Python with NumPy's error model (`jit=False`:
    `math` is `runtime.pymath`, and the callers pass NumPy floats)."""
    scope: dict = {}
    exec(compile(source, f"<{name}>", "exec"), scope)
    if jit:
        return numba.njit(error_model="numpy")(scope[name])  # as build/ compiles it
    scope["math"] = pymath
    return scope[name]


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_the_fused_guards_are_np_where_exactly(jit):
    """The same tangents, bit for bit, from the module with strong_zero_each and the one with
    np.where: nan and inf in `p * t` where the seed is 0, a float seed with an array `p`, an
    array seed with a float tangent broadcast."""
    cases = [
        (zero_above_arrays, ("c", "v"), (C, V)),
        (float_partial_above_array, ("c", "v"), (np.float64(0.0), V)),
        (array_partial_above_float, ("c", "s"), (C, np.float64(0.0))),
        (sum_of_roots, ("x",), (np.array([0.0, 1.0, 4.0, 0.0]),)),
    ]
    for f, wrt, args in cases:
        kinds = {n: ("array:1" if isinstance(a, np.ndarray) else "float") for n, a in zip(wrt, args, strict=True)}
        fused = generate(f, "forward", wrt, kinds).source
        where = _before_the_pass(f, wrt, kinds)
        assert "strong_zero_each(" in fused and "strong_zero_each(" not in where and "np.where(" in where
        fused_jvp, where_jvp = _entry(fused, f"{f.__name__}_jvp", jit), _entry(where, f"{f.__name__}_jvp", jit)
        nan = tuple(np.full_like(a, math.nan) if isinstance(a, np.ndarray) else np.float64(math.nan) for a in args)
        with np.errstate(all="ignore"):
            for t in [*(t for _, _, t in _directions(args)), nan]:
                np.testing.assert_array_equal(np.asarray(fused_jvp(*args, *t)), np.asarray(where_jvp(*args, *t)))


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_a_batch_of_tangents_through_a_zero_partial(jit):
    """Vector forward mode reads the new guards lane by lane: each direction's own jvp."""
    directions = np.array([[0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 1.0]])
    for f in (zero_above_loop, zero_above_arrays):
        jf = ad.jvp(f, wrt=1, jit=jit)
        with np.errstate(all="ignore"):
            _, dots = jf(C, V, tangents=directions)
            singles = [jf(C, V, tangents=d)[1] for d in directions]
        np.testing.assert_array_equal(dots, singles)
        assert dots[1] == 1.0  # c = 0, v = 0: flat but for `+ v`


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_hvp_fuses_the_second_order_guards_of_its_tangent_code(jit):
    """hvp's tangent code guards arrays with `np.where(np.logical_or(t != 0.0, np.isfinite(p)), p *
    t, 0.0)`; after its sweeps they are strong_zero_each with that mask, and H v is unchanged:
    central differences of the gradient, at a constant column and at a generic point."""
    source = generate(column_norm, "hvp", ("x",), {"x": "array:2", "w": "array:2"}).source
    forward_sweep = source.split("# reverse sweep", 1)[0]
    assert "np.where(" not in forward_sweep
    assert forward_sweep.count("strong_zero_each(") == 2 and "np.logical_or(t3 != 0.0" in forward_sweep
    v = _tangent(CONSTANT_COLUMN.shape)
    v[:, 0] = 0.4  # the constant column stays constant
    generic = CONSTANT_COLUMN + _tangent(CONSTANT_COLUMN.shape)
    hvp = ad.hvp(column_norm, wrt=0, jit=jit)
    for x in (CONSTANT_COLUMN, generic):
        with np.errstate(all="ignore"):
            got = hvp(x, WEIGHTS, tangents=v)
        np.testing.assert_allclose(got, _gradient_differences(column_norm, (x, WEIGHTS), v), rtol=1e-6, atol=1e-8)
