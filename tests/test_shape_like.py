"""A matrix product whose adjoint is summed back to its shape (`unbroadcast`) is not computed again
for that shape: `matmul_like(a, b)` (`Primitive.shape_like`) stands for it. Checked: the generated
reverse sweep, a product broadcast along an axis of length 1 (where the shape decides the sum)
against finite differences compiled and not, and sizes that do not meet."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, finite_difference_gradient
from sources import function_from_source

import sourcead
from sourcead.reverse.sweeps import REVERSE_SWEEP

_LAYER = """
def f(A, x, b):
    y = A @ x + b
    return np.sum(np.tanh(y))
"""

_ROWS = """
def f(A, B, C):
    return np.sum(np.sin(A @ B + C) * C)
"""

_DOT = """
def f(a, M, c):
    return np.sum(np.cos(np.dot(a, M) + c))
"""


def _sweep(source: str) -> str:
    """The reverse sweep's code, without its comments."""
    lines = source[source.index(REVERSE_SWEEP) :].splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith("#"))


@pytest.mark.parametrize("jit", [True, False])
def test_a_layer_reads_the_products_shape_not_its_value(tmp_path, jit):
    f = function_from_source(tmp_path, _LAYER, "f")
    g = sourcead.grad(f, wrt=("A", "x", "b"), jit=jit)
    sweep = _sweep(g.source)
    assert "unbroadcast(y_bar, matmul_like(A, x))" in sweep and "A @ x" not in sweep, sweep
    rng = np.random.default_rng(1)
    args = (rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(3))
    for got, expected in zip(g(*args), finite_difference_gradient(f, args, ("A", "x", "b")), strict=True):
        assert_close(got, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("jit", [True, False])
@pytest.mark.parametrize("rows", [1, 3])
def test_a_product_broadcast_along_rows_sums_back_to_its_shape(tmp_path, jit, rows):
    """A (rows x 2) @ B (2 x 4) + C (3 x 4): with one row the product's adjoint is summed over C's
    rows, which only the product's shape says."""
    f = function_from_source(tmp_path, _ROWS, "f")
    g = sourcead.grad(f, wrt=("A", "B", "C"), jit=jit)
    assert "matmul_like(A, B)" in _sweep(g.source)
    rng = np.random.default_rng(rows)
    args = (rng.standard_normal((rows, 2)), rng.standard_normal((2, 4)), rng.standard_normal((3, 4)))
    for got, expected in zip(g(*args), finite_difference_gradient(f, args, ("A", "B", "C")), strict=True):
        assert_close(got, expected, rtol=1e-6, atol=1e-8)


def test_np_dot_of_a_vector_and_a_matrix(tmp_path):
    f = function_from_source(tmp_path, _DOT, "f")
    g = sourcead.grad(f, wrt=("a", "M", "c"))
    assert "matmul_like(a, M)" in _sweep(g.source)
    rng = np.random.default_rng(4)
    args = (rng.standard_normal(3), rng.standard_normal((3, 5)), rng.standard_normal(5))
    for got, expected in zip(g(*args), finite_difference_gradient(f, args, ("a", "M", "c")), strict=True):
        assert_close(got, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("jit", [True, False])
def test_sizes_that_do_not_meet_are_the_primals_error(tmp_path, jit):
    f = function_from_source(tmp_path, _LAYER, "f")
    g = sourcead.grad(f, wrt=("A", "x", "b"), jit=jit)
    with pytest.raises(sourcead.ShapeError, match="y = A @ x"):
        g(np.ones((3, 4)), np.ones(5), np.ones(3))
