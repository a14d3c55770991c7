"""`strong_zero_each(p, g)`, the fused form of an array's strong zero `np.where(g != 0.0, p, 0.0)`.

The pass `strong_zeros` writes one for the other in the reverse sweep, so they must be the same
value for every operand the sweeps give them: arrays of one shape, broadcast shapes, a number for
either, nan and inf in either, with numba (where the ufunc fuses with `p`'s arithmetic) and in
plain NumPy (`jit=False`). The derivatives of programs that use it are checked by the numeric
tests of the zoo; this pins the helper and the rewrite themselves.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

import sourcead
from sourcead.pipeline.driver import generate
from sourcead.runtime import strong_zero_each

RNG = np.random.default_rng(5)


def _with_zeros(shape: tuple[int, ...]) -> np.ndarray:
    x = RNG.standard_normal(shape)
    x.flat[::3] = 0.0
    return x


CASES = {
    "same shape": (_with_zeros((5, 4)), _with_zeros((5, 4))),
    "row seed": (_with_zeros((5, 4)), _with_zeros((4,))),
    "column part": (_with_zeros((5, 1)), _with_zeros((5, 4))),
    "number part": (2.5, _with_zeros((6,))),
    "number seed": (_with_zeros((3, 2)), 0.0),
    "non-finite": (
        np.array([np.inf, np.nan, -np.inf, 1.0, np.nan]),
        np.array([0.0, 0.0, 1.0, np.nan, np.inf]),
    ),
}


@numba.njit
def _fused(p, g):
    return strong_zero_each(p * 1.0, g)


@numba.njit
def _where(p, g):
    return np.where(g != 0.0, p * 1.0, 0.0)


@pytest.mark.parametrize("name", CASES)
def test_it_is_np_where_of_a_nonzero_seed(name):
    p, g = CASES[name]
    expected = np.where(np.asarray(g) != 0.0, p, 0.0)
    for got in (strong_zero_each(p, g), _fused(p, g)):
        assert np.shape(got) == expected.shape
        np.testing.assert_array_equal(got, expected)  # nan where p is nan and g is not zero
    np.testing.assert_array_equal(_fused(p, g), _where(p, g))


def _two_steps(x, w):
    y = w * np.sqrt(x * x + 1.0)
    z = y * x
    return np.sum(z)


def test_the_pass_writes_it_for_the_reverse_sweeps_array_guards_and_the_gradient_is_unchanged():
    source = generate(_two_steps, "gradient", ("x", "w"), {"x": "array:1", "w": "array:1"}).source
    assert "strong_zero_each(" in source and "np.where(" not in source.split("# reverse sweep", 1)[1]
    x, w = RNG.standard_normal(7), _with_zeros((7,))
    plain = sourcead.grad(_two_steps, wrt=(0, 1), jit=False)(x, w)
    compiled = sourcead.grad(_two_steps, wrt=(0, 1))(x, w)
    r = np.sqrt(x * x + 1.0)
    expected = (w * r + w * x * x / r, x * r)
    for got in (plain, compiled):
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-13)
