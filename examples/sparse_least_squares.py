"""`scipy.optimize.least_squares` with a sparse Jacobian from the source: the Broyden tridiagonal
system of n equations (the example of SciPy's own documentation, where the pattern is given by
hand as ``jac_sparsity=``).

``sourcead.jacobian(residual, sparse=True)`` reads the tridiagonal pattern from the code, colours
it (3 colours, whatever n) and returns each Jacobian as a ``scipy.sparse.csr_array``: one
vector-mode forward sweep carrying 3 tangents instead of n, and exact derivatives where SciPy's
``jac_sparsity`` would difference. SciPy's trust-region solver takes it as ``jac=``.
Run: ``python examples/sparse_least_squares.py``.
"""

import time

import numpy as np
from scipy.optimize import least_squares

import sourcead


def residual(x):
    n = x.shape[0]
    f = np.zeros(n)
    for i in range(n):
        left = x[i - 1] if i > 0 else 0.0
        right = x[i + 1] if i < n - 1 else 0.0
        f[i] = (3.0 - x[i]) * x[i] + 1.0 - left - 2.0 * right
    return f


def solve(n=100000, jit=True):
    """Solve with the sparse Jacobian; returns scipy's result and the prepared Jacobian."""
    jac = sourcead.jacobian(residual, sparse=True, jit=jit)
    result = least_squares(residual, -np.ones(n), jac=jac, xtol=1e-12, ftol=1e-12, gtol=1e-12)
    return result, jac


def main():
    n = 100000
    start = time.perf_counter()
    result, jac = solve(n)
    elapsed = time.perf_counter() - start
    pattern, plan = jac.plan(result.x)
    print(
        f"n = {n}: {result.nfev} residuals, {result.njev} sparse Jacobians ({pattern.matrix.nnz} nonzeros, "
        f"{plan.count} colours, {plan.side} passes), {elapsed:.2f} s"
    )
    print(f"cost = {result.cost:.3e}, max |f| = {np.abs(residual(result.x)).max():.2e}")


if __name__ == "__main__":
    main()
