"""The Cholesky factor's derivatives (`runtime/linalg.py`) solve with the factor by blocked
substitution instead of `np.linalg.solve`: the solves against their definition on sizes that take
several blocks and a last partial one, with and without numba, and the gradient and tangent of a
factor of more than one block against central differences and each other."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close
from sources import function_from_source

import sourcead
from sourcead.runtime import linalg

_N = 70  # more than one block of the solves (`linalg._BLOCK`, 64), the last one partial
_RNG = np.random.default_rng(11)
_M = _RNG.standard_normal((_N, _N))
_SPD = _M @ _M.T + _N * np.eye(_N)
_WEIGHTS = _RNG.standard_normal((_N, _N))
_DIRECTION = _RNG.standard_normal((_N, _N))


@pytest.fixture(scope="module")
def compiled_solves():
    import numba

    return numba.njit(linalg._solve_lower), numba.njit(linalg._solve_lower_t), numba.njit(linalg._phi_lower_t_product)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("n", [1, 5, 13])
def test_the_triangular_solves_and_the_product_solve(compiled_solves, jit, n):
    lower, lower_t, phi = (
        compiled_solves if jit else (linalg._solve_lower, linalg._solve_lower_t, linalg._phi_lower_t_product)
    )
    z = np.linalg.cholesky(_SPD[:n, :n])
    b = _RNG.standard_normal((n, n + 2))
    g = _RNG.standard_normal((n, n))
    expected = np.tril(z.T @ g) - 0.5 * np.diag(np.diag(z.T @ g))  # Φ: the lower triangle, diagonal halved
    for block in (1, 4, 64):  # blocks of one row, several with a partial last, one block
        assert_close(z @ lower(z, b, block), b, rtol=1e-12, atol=1e-12)
        assert_close(z.T @ lower_t(z, b, block), b, rtol=1e-12, atol=1e-12)
        assert_close(lower(z, b, block), np.linalg.solve(z, b), rtol=1e-10, atol=1e-12)
        assert_close(lower_t(z, b, block), np.linalg.solve(z.T, b), rtol=1e-10, atol=1e-12)
        assert_close(phi(z, g, block), expected, rtol=1e-12, atol=1e-12)


_SOURCE = """
def weighted_factor(A, W):
    return np.sum(W * np.linalg.cholesky(A))
"""


@pytest.fixture(scope="module")
def weighted_factor(tmp_path_factory):
    return function_from_source(tmp_path_factory.mktemp("linalg_solves"), _SOURCE, "weighted_factor")


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_a_factor_of_several_blocks_differentiates(weighted_factor, jit):
    (grad,) = sourcead.grad(weighted_factor, wrt=("A",), jit=jit)(_SPD.copy(), _WEIGHTS)
    assert np.all(np.triu(grad, 1) == 0.0)  # NumPy reads the lower triangle only
    h = 1e-5
    up, down = (weighted_factor(_SPD + s * h * _DIRECTION, _WEIGHTS) for s in (1.0, -1.0))
    assert_close(np.vdot(grad, _DIRECTION), (up - down) / (2 * h), rtol=1e-6)
    _, tangent = sourcead.jvp(weighted_factor, wrt=("A",), jit=jit)(_SPD.copy(), _WEIGHTS, tangents=(_DIRECTION,))
    assert_close(tangent, np.vdot(grad, _DIRECTION), rtol=1e-10)
