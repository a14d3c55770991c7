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

import numpy as np
import pytest
from numba import prange
from numeric import central_difference_jvp, vdot

import sourcead as ad

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
    # the two np.sqrt (of the variance, of std + EPS) on their tangents, and the division by the
    # second on its partial (the tangent it multiplies crossed them): not the products or the sums;
    # each the fused strong_zero_each, none np.where
    assert re.findall(r"strong_zero_each\(.*, (\w+)\)", source) == ["t3", "std_dot", "t9"]
    assert "t9 = -t7 * t6" in source
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
