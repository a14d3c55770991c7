"""Reverse mode's strong zero where the zero adjoint comes from a value that moves infinitely fast.

`s = math.sqrt(v); r = s * s + 3.0 * v` is 4 v for v >= 0. At v = 0, s's adjoint 2 * s * g is zero
only because s is, which is zero only because v is; sqrt's partial 0.5 / s is infinite for the same
reason, and 0 * inf stands for 2 * s * (0.5 / s) = 1 there, not for 0. The strong zero (an exactly
zero adjoint contributes nothing through a singular partial) gave 3.0, a silent wrong derivative;
now that adjoint is suspect (`reverse/singular.py`'s `suspect_adjoints`) and crosses unguarded:
nan, as forward mode gives. Each case is checked in plain Python and compiled: at the singular
point nan or the one-sided derivative, never another number; a step away, central differences and
forward mode. The strong zeros that are sound stay: `c * math.sqrt(v)` at c = 0 (flat in v),
`math.sqrt(a * b)` at b = 0 (flat in a), the batch normalization of a constant column.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import sourcead as ad


def root(v):
    return math.sqrt(v)


def zero_squared(v):
    s = math.sqrt(v)
    return s * s + 3.0 * v


def power_squared(v):
    return math.sqrt(v) ** 2 + v


def inline_squared(v):
    return math.sqrt(v) * math.sqrt(v) - v


def through_helper(v):
    s = root(v)
    return s * s + v


def scaled_square(c, v):
    s = math.sqrt(v)
    return c * s * s


def loop_squares(x):
    out = 0.0
    for i in range(x.shape[0]):
        s = math.sqrt(x[i])
        out += s * s * (i + 1.0)
    return out


def carried_square(x):
    """The zero factor reaches the product a loop iteration later."""
    out = 0.0
    s = 1.0
    for i in range(x.shape[0]):
        out += s * s
        s = math.sqrt(x[i])
    return out + s * s


def array_squares(v):
    return np.sum(np.sqrt(v) * np.sqrt(v))


def array_squared_variable(v):
    s = np.sqrt(v)
    return np.sum(s * s * 2.0)


SINGULAR = np.array([0.0, 1.0, 4.0])
# (function, arguments at the singular point, the one-sided gradient there)
CASES = [
    (zero_squared, (0.0,), (4.0,)),
    (power_squared, (0.0,), (2.0,)),
    (inline_squared, (0.0,), (0.0,)),
    (through_helper, (0.0,), (2.0,)),
    (scaled_square, (2.0, 0.0), (0.0, 2.0)),
    (loop_squares, (SINGULAR,), (np.array([1.0, 2.0, 3.0]),)),
    (carried_square, (SINGULAR,), (np.ones(3),)),
    (array_squares, (SINGULAR,), (np.ones(3),)),
    (array_squared_variable, (SINGULAR,), (np.full(3, 2.0),)),
]
IDS = [case[0].__name__ for case in CASES]


def _honest(got, want) -> None:
    """nan, or the one-sided derivative: never another number (inf included)."""
    got, want = np.atleast_1d(np.asarray(got, dtype=float)), np.atleast_1d(np.asarray(want, dtype=float))
    wrong = ~np.isnan(got) & ~np.isclose(got, want, rtol=1e-12, atol=1e-14)
    assert not wrong.any(), (got, want)


def _one_sided(f, args, k, i, h=1e-9):
    """(f(args + h e) - f(args)) / h along element i of argument k (the domain is v >= 0)."""
    moved = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    if isinstance(moved[k], np.ndarray):
        moved[k][i] += h
    else:
        moved[k] += h
    return (f(*moved) - f(*args)) / h


def _away(args):
    """The arguments a step away from the singular point (every square root's operand > 0)."""
    return tuple(a + 0.25 for a in args)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize(("f", "args", "want"), CASES, ids=IDS)
def test_a_zero_adjoint_from_a_moving_value_is_not_a_strong_zero(f, args, want, jit):
    wrt = tuple(range(len(args)))
    for k, a in enumerate(args):  # the expected one-sided derivatives are what differences give
        for i in np.ndindex(np.shape(a)):
            expected = np.asarray(want[k])[i]
            assert _one_sided(f, args, k, i) == pytest.approx(expected, rel=1e-6, abs=1e-6)
    with np.errstate(all="ignore"):
        grads = ad.grad(f, wrt=wrt, jit=jit)(*args)
        value, pulled = ad.vjp(f, wrt=wrt, jit=jit)(*args, cotangent=1.0)
        for k in wrt:
            _honest(grads[k], want[k])
            _honest(pulled[k], want[k])
        away = _away(args)
        moved = ad.grad(f, wrt=wrt, jit=jit)(*away)
        jvp = ad.jvp(f, wrt=wrt, jit=jit)
        for k in wrt:
            for i in np.ndindex(np.shape(args[k])):
                basis = [np.zeros_like(a) if isinstance(a, np.ndarray) else 0.0 for a in away]
                if isinstance(basis[k], np.ndarray):
                    basis[k][i] = 1.0
                else:
                    basis[k] = 1.0
                h = 1e-6
                up = f(*[a + h * t for a, t in zip(away, basis, strict=True)])
                down = f(*[a - h * t for a, t in zip(away, basis, strict=True)])
                got = np.asarray(moved[k])[i]
                assert got == pytest.approx((up - down) / (2 * h), rel=1e-6, abs=1e-6)
                assert got == pytest.approx(jvp(*away, tangents=tuple(basis))[1], rel=1e-12, abs=1e-14)
    assert value == pytest.approx(f(*args))


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_the_zero_squared_case_was_a_silent_wrong_3(jit):
    """The reported case: grad gave 3.0 (2 * s * g = 0 strong-zeroed at sqrt's partial)."""
    with np.errstate(all="ignore"):
        got = ad.grad(zero_squared, jit=jit)(0.0)
        forward = ad.jvp(zero_squared, jit=jit)(0.0, tangents=1.0)[1]
    assert math.isnan(got) and math.isnan(forward)


def zero_above(c, v):
    return c * math.sqrt(v) + v


def sqrt_of_scaled(a, b):
    return math.sqrt(a * b)


def scaled_by_moving(c, v):
    """c's partial s * s is zero with s: but no singular partial stands below c."""
    s = math.sqrt(v)
    return c * s * s


def column_norm(x):
    """A batch normalization: at a constant column the variance's adjoint is zero because d is,
    not because of a value that moves infinitely fast (std's zero is not a factor of it)."""
    mean = np.sum(x, axis=0) / x.shape[0]
    d = x - mean
    std = np.sqrt(np.sum(d * d, axis=0) / x.shape[0])
    return np.sum(np.arange(1.0, 13.0).reshape(4, 3) * d / np.sqrt(std + 1.0))


CONSTANT_COLUMN = np.array([[1.0, 0.3, 2.0], [1.0, -0.4, 2.0], [1.0, 0.9, 2.0], [1.0, 0.1, 2.0]])


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_the_sound_strong_zeros_stay(jit):
    with np.errstate(all="ignore"):
        assert ad.grad(zero_above, wrt=(0, 1), jit=jit)(0.0, 0.0) == (0.0, 1.0)  # flat in v but for + v
        assert ad.grad(sqrt_of_scaled, wrt=(0, 1), jit=jit)(1.0, 0.0) == (0.0, math.inf)  # flat in a
        assert ad.grad(scaled_by_moving, wrt=0, jit=jit)(2.0, 0.0) == 0.0
        got = ad.grad(column_norm, jit=jit)(CONSTANT_COLUMN)
    assert np.all(np.isfinite(got))
    h = 1e-6
    for i in np.ndindex(CONSTANT_COLUMN.shape):
        step = np.zeros_like(CONSTANT_COLUMN)
        step[i] = h
        difference = (column_norm(CONSTANT_COLUMN + step) - column_norm(CONSTANT_COLUMN - step)) / (2 * h)
        assert got[i] == pytest.approx(difference, rel=1e-5, abs=1e-6), i


def two_outputs(v):
    s = math.sqrt(v)
    return s * s, 3.0 * v


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_a_zero_cotangent_on_an_output_through_a_moving_zero_is_conservative(jit):
    """The adjoint of s is suspect whatever the cotangents (a static analysis): with (0, 1) the
    derivative 3 becomes nan, where the strong zero was right; with (1, 0) it gave 0, not 1."""
    with np.errstate(all="ignore"):
        for cotangent, want in (((0.0, 1.0), 3.0), ((1.0, 0.0), 1.0), ((1.0, 1.0), 4.0)):
            _, (got,) = ad.vjp(two_outputs, wrt=(0,), jit=jit)(0.0, cotangent=cotangent)
            _honest(got, want)


def test_only_suspect_adjoints_lose_their_guards():
    """sqrt's contribution is unguarded where the adjoint is suspect, guarded elsewhere."""
    source = ad.differentiable(zero_squared).source("reverse", wrt=0)
    assert "v_bar += 0.5 / s * s_bar\n" in source
    kept = ad.differentiable(zero_above).source("reverse", wrt=(0, 1))
    assert "!= 0.0 else 0.0)" in kept.split("# reverse sweep")[1]
    arrays = ad.differentiable(array_squared_variable).source("reverse", wrt=0, arrays={"v": 1})
    # the array adjoint's first contribution is assigned (first_of), unguarded
    assert "v_bar = first_of(0.5 / s * s_bar, v)" in arrays and "strong_zero" not in arrays.split("s_bar")[-1]


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_hvp_through_a_moving_zero(jit):
    """H v of 4 v is 0: a step away exact; at 0 not a finite wrong number (the tangent code's own
    value s_dot is infinite there, and its reverse sweep gives inf: a known gap, not a zero's)."""
    with np.errstate(all="ignore"):
        assert ad.hvp(zero_squared, jit=jit)(0.25, tangents=1.0) == pytest.approx(0.0, abs=1e-12)
        got = ad.hvp(zero_squared, jit=jit)(0.0, tangents=1.0)
    assert not math.isfinite(got) or got == 0.0
