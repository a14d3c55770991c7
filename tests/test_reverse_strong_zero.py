"""Reverse mode's strong zero through a singular partial (`Partials.singular`: sqrt, cbrt, x ** c
with 0 < c < 1, arcsin, ...), the dual of forward mode's (`test_forward_strong_zero.py`).

`math.sqrt(a * b)` at b = 0 is flat in a: moving a keeps a * b at 0, so the derivative in a is 0,
while in b it is infinite. Reverse mode's adjoint of the product is g * inf; the contribution to
a's adjoint through the zero partial b is 0, not inf * 0 (`derive/adjoints.py`, with the adjoints
that may be non-finite found by `reverse/singular.py`). And an adjoint that is exactly zero where
it reaches the infinite partial (`c * math.sqrt(v)` at c = 0) contributes 0.

Each gradient is checked against forward mode along every basis direction (both modes must give
the derivative along a direction that keeps the inner value at the singular point), against
central differences wherever both sides of the difference are defined, and against the value
known by hand; in plain Python and compiled.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from numba import prange

import sourcead as ad

NAN = math.nan


def root(v):
    return math.sqrt(v)


def sqrt_of_scaled(a, b):
    return math.sqrt(a * b)


def over_statements(a, b, c):
    v = a * b
    w = v * c
    return math.sqrt(w) + a


def helper_of_scaled(a, b):
    return root(a * b) + 2.0 * (a * b) ** 0.5


def zero_above(c, v):
    return c * math.sqrt(v) + v


def loop_roots(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.sqrt(x[i] * y[i]) + np.cbrt(x[i] * y[i])
    return s


def loop_carried(x, y):
    """The adjoint that met the infinite partial travels back through a loop-carried product."""
    s = 0.0
    p = 1.0
    for i in range(x.shape[0]):
        p = p * y[i]
        s += math.sqrt(x[i] * p)
    return s


def array_roots(x, y):
    return np.sum(np.sqrt(x * y)) + np.sum(np.arcsin(x * y * 0.25) * 2.0)


def parallel_roots(x, y):
    out = np.zeros(x.shape[0])
    for i in prange(x.shape[0]):
        out[i] = math.sqrt(x[i] * y[i]) * (i + 1.0)
    return np.sum(out)


def smooth(a, b):
    """No singular partial: its reverse code has no guard on a partial."""
    return math.exp(a * b) * math.sin(b)


X = np.array([1.0, 2.0, 0.0, 3.0])
Y = np.array([0.0, 1.5, 2.0, 0.5])


def _basis(args, k, i):
    """The direction of element i (None: a float) of argument k, zero in the others."""
    out = []
    for j, a in enumerate(args):
        t = np.zeros_like(a) if isinstance(a, np.ndarray) else 0.0
        if j == k:
            if isinstance(t, np.ndarray):
                t[i] = 1.0
            else:
                t = 1.0
        out.append(t)
    return tuple(out)


def _entries(args, k):
    return list(np.ndindex(args[k].shape)) if isinstance(args[k], np.ndarray) else [None]


def _value(f, args) -> float:
    """f's value, nan where math raises (a square root of a negative number)."""
    try:
        return float(f(*args))
    except ValueError:
        return NAN


def _check(f, args, expected=None, jit=False):
    """The gradient in every argument: against forward mode along each basis direction (exactly,
    infinite entries included), central differences where defined, and `expected` where given."""
    wrt = tuple(range(len(args)))
    with np.errstate(all="ignore"):
        grads = ad.grad(f, wrt=wrt, jit=jit)(*args)
        jvp = ad.jvp(f, wrt=wrt, jit=jit)
        for k in wrt:
            for i in _entries(args, k):
                got = grads[k][i] if i is not None else grads[k]
                dot = jvp(*args, tangents=_basis(args, k, i))[1]
                assert got == pytest.approx(dot, rel=1e-12, abs=1e-14, nan_ok=True), (f.__name__, k, i)
                h = 1e-7
                up = _value(f, [a + h * t for a, t in zip(args, _basis(args, k, i), strict=True)])
                down = _value(f, [a - h * t for a, t in zip(args, _basis(args, k, i), strict=True)])
                if np.isfinite(up) and np.isfinite(down) and np.isfinite(got):
                    assert got == pytest.approx((up - down) / (2 * h), rel=1e-5, abs=1e-6), (f.__name__, k, i)
    if expected is not None:
        for got, want in zip(grads, expected, strict=True):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    return grads


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_a_zero_partial_below_an_infinite_one_contributes_zero(jit):
    _check(sqrt_of_scaled, (1.0, 0.0), (0.0, math.inf), jit)  # flat in a, infinite in b
    _check(sqrt_of_scaled, (0.0, 2.0), (math.inf, 0.0), jit)
    _check(sqrt_of_scaled, (2.0, 3.0), jit=jit)
    _check(over_statements, (1.0, 0.0, 2.0), (1.0, math.inf, 0.0), jit)
    _check(over_statements, (1.0, 0.5, 0.0), (1.0, 0.0, math.inf), jit)
    _check(helper_of_scaled, (1.0, 0.0), (0.0, math.inf), jit)
    _check(helper_of_scaled, (1.5, 2.0), jit=jit)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_a_zero_adjoint_reaching_an_infinite_partial_contributes_zero(jit):
    # c * sqrt(v) at c = 0 is 0 for every v >= 0: only `+ v` moves; in c its derivative is sqrt(0)
    with np.errstate(all="ignore"):
        assert ad.grad(zero_above, wrt=(0, 1), jit=jit)(0.0, 0.0) == (0.0, 1.0)
        assert ad.grad(zero_above, wrt=(0, 1), jit=jit)(2.0, 0.0) == (0.0, math.inf)
    _check(zero_above, (2.0, 0.5), jit=jit)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_in_loops_whole_arrays_and_prange(jit):
    # element 0: x * y = 0 with x moving (flat), y moving (infinite); element 2 the other way round
    inf = math.inf
    for f in (loop_roots, array_roots, parallel_roots):
        x_bar, y_bar = _check(f, (X, Y), jit=jit)
        assert x_bar[0] == 0.0 and y_bar[2] == 0.0, f.__name__
        assert y_bar[0] == inf and x_bar[2] == inf, f.__name__
        assert np.all(np.isfinite(x_bar[[1, 3]])) and np.all(np.isfinite(y_bar[[1, 3]]))
    # p = y[0] * ... is 0 from the first element on: every x[i] is flat, y[0] infinite
    x_bar, y_bar = _check(loop_carried, (X + 1.0, Y), jit=jit)
    np.testing.assert_array_equal(x_bar, np.zeros(4))
    assert y_bar[0] == inf


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_a_genuinely_infinite_derivative_stays_infinite_and_nan_stays_nan(jit):
    with np.errstate(all="ignore"):
        assert ad.grad(root, jit=jit)(0.0) == math.inf  # d/dx sqrt(x) at 0
        assert ad.grad(sqrt_of_scaled, wrt=(0, 1), jit=jit)(0.0, 2.0)[0] == math.inf
        for args in ((NAN, 1.0), (1.0, NAN), (NAN, NAN)):  # a nan partial is not a zero one
            assert all(math.isnan(g) for g in ad.grad(sqrt_of_scaled, wrt=(0, 1), jit=jit)(*args)), args
        y = Y.copy()
        y[1] = NAN
        x_bar, y_bar = ad.grad(loop_roots, wrt=(0, 1), jit=jit)(X, y)
        assert math.isnan(x_bar[1]) and math.isnan(y_bar[1])


def test_code_without_singular_partials_is_not_guarded_on_its_partials():
    source = ad.differentiable(smooth).source("reverse", wrt=(0, 1))
    assert "b != 0.0" not in source and "a != 0.0" not in source
    guarded = ad.differentiable(sqrt_of_scaled).source("reverse", wrt=(0, 1))
    assert "b != 0.0" in guarded and "a != 0.0" in guarded


def visibly_positive(d):
    return math.sqrt(d * d + 0.1) + np.exp(d) ** 0.5


def test_a_visibly_positive_operand_is_not_singular():
    """sqrt, cbrt and powers are singular only at 0: `d * d + 0.1` never reaches it, and neither
    mode guards it (a guard would cost a compare where nothing can be infinite)."""
    for mode, seeds in (("reverse", {"result_bar"}), ("forward", set())):
        source = ad.differentiable(visibly_positive).source(mode, wrt=0)
        assert set(re.findall(r"(\S+) != 0\.0", source)) == seeds, mode  # the seed's guard only
    for jit in (False, True):
        _check(visibly_positive, (0.0,), jit=jit)
        _check(visibly_positive, (-1.3,), jit=jit)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_a_custom_rule_declares_its_singular_partial(jit):
    """`custom_rule(partials=..., singular=("x",))`: both modes guard it as they guard math.sqrt.
    Undeclared, the flat direction gives inf * 0 (what the declaration is for)."""
    import singular_rules as sr

    with np.errstate(all="ignore"):
        assert ad.grad(sr.declared, wrt=(0, 1), jit=jit)(1.0, 0.0) == (0.0, math.inf)
        assert ad.jvp(sr.declared, wrt=(0, 1), jit=jit)(1.0, 0.0, tangents=(1.0, 0.0))[1] == 0.0
        assert ad.jvp(sr.declared, wrt=(0, 1), jit=jit)(1.0, 0.0, tangents=(0.0, 1.0))[1] == math.inf
        assert math.isnan(ad.grad(sr.undeclared, wrt=(0, 1), jit=jit)(1.0, 0.0)[0])
        assert math.isnan(ad.jvp(sr.undeclared, wrt=(0, 1), jit=jit)(1.0, 0.0, tangents=(1.0, 0.0))[1])
    _check(sr.declared, (2.0, 0.5), jit=jit)  # and where nothing is singular, the derivative itself


def test_a_custom_rule_names_its_singular_arguments():
    import singular_rules as sr

    from sourcead.custom import _positions, lookup

    for bad in (("y",), (1,), (True,)):
        with pytest.raises(ad.SourceADError, match="not an argument of undeclared_root"):
            ad.custom_rule(partials=sr.root_partials, singular=bad)(sr.undeclared_root)
    assert lookup(sr.undeclared_root).singular == ()  # a refused declaration registers nothing
    # by name or position, the same declaration
    assert _positions(sr.declared, ("b",)) == _positions(sr.declared, (1,)) == _positions(sr.declared, "b") == (1,)
