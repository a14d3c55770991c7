"""An array rebound in a loop with another shape each iteration: its adjoint restarts at zero
shaped like the array restored in the reverse sweep (or, where nothing restores it, with the shape
the forward sweep recorded), not like the adjoint it replaces."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import finite_difference_gradient
from shape_changing import (
    growing_prefix,
    growing_prefix_linear,
    rebound_argument,
    shrinking_suffix,
    shrinking_suffix_linear,
)

import sourcead as ad


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize(
    "func",
    [growing_prefix, shrinking_suffix, growing_prefix_linear, shrinking_suffix_linear, rebound_argument],
    ids=lambda f: f.__name__,
)
def test_gradient_and_hvp_of_a_shape_changing_temporary(func, jit):
    r = np.linspace(0.1, 1.0, 6)
    np.testing.assert_allclose(
        ad.grad(func, jit=jit)(r), finite_difference_gradient(func, (r,), ["r"])[0], rtol=1e-6, atol=1e-8
    )
    v = np.linspace(-1.0, 1.0, 6)
    h = 1e-5
    expected = (ad.grad(func, jit=jit)(r + h * v) - ad.grad(func, jit=jit)(r - h * v)) / (2 * h)
    np.testing.assert_allclose(ad.hvp(func, jit=jit)(r, tangents=v), expected, rtol=1e-5, atol=1e-6)
