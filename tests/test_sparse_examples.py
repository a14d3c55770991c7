"""The sparse examples at small sizes: SciPy's least_squares (jac=) and trust-constr (jac=, hess=)
take the sparse arrays, and the 2-D Bratu Newton solve converges, with and without numba."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import sourcead as ad

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import bratu_newton  # noqa: E402
import sparse_least_squares  # noqa: E402
import sparse_trust_constr  # noqa: E402

JITS = [pytest.param(False, id="python"), pytest.param(True, id="numba")]


@pytest.mark.parametrize("jit", JITS)
def test_least_squares_takes_the_sparse_jacobian(jit):
    result, jac = sparse_least_squares.solve(40, jit=jit)
    assert result.success and np.abs(sparse_least_squares.residual(result.x)).max() < 1e-10
    dense = ad.jacobian(sparse_least_squares.residual, jit=False, mode="forward")(result.x)
    assert np.array_equal(jac(result.x).toarray(), dense)


@pytest.mark.parametrize("jit", JITS)
def test_trust_constr_takes_the_sparse_hessian(jit):
    result, hess = sparse_trust_constr.solve(12, jit=jit)
    assert np.abs(result.x - 1.0).max() < 1e-6
    x = np.linspace(-1.0, 1.0, 12)
    assert np.array_equal(hess(x).toarray(), ad.hessian(sparse_trust_constr.rosenbrock, jit=jit)(x))


@pytest.mark.parametrize("jit", JITS)
def test_bratu_newton_converges(jit):
    u, jac = bratu_newton.newton(8, tol=1e-9, jit=jit, log=lambda line: None)
    assert np.abs(bratu_newton.residual(u, 5.0)).max() < 1e-9
    pattern, plan = jac.plan(u, 5.0)
    assert pattern.static and pattern.matrix.nnz == 5 * 64 - 4 * 8
    dense = ad.jacobian(bratu_newton.residual, jit=jit, mode="forward")(u, 5.0).reshape(64, 64)
    assert np.array_equal(jac(u, 5.0).toarray(), dense)
