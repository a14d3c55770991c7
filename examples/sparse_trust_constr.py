"""`scipy.optimize.minimize(method="trust-constr")` with the gradient and a sparse Hessian from the
source: the chained Rosenbrock function of n variables, written as a loop.

``sourcead.hessian(f, sparse=True)`` reads the Hessian's tridiagonal pattern from the code (the
pairs of variables that meet in a nonlinear operation), star-colours it (3 colours) and fills it
with 3 Hessian-vector products: a ``scipy.sparse.csr_array`` SciPy's trust-region method factors
or iterates on. Run: ``python examples/sparse_trust_constr.py``.
"""

import time

import numpy as np
from scipy.optimize import minimize

import sourcead


def rosenbrock(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s += 100.0 * (x[i + 1] - x[i] * x[i]) ** 2 + (1.0 - x[i]) ** 2
    return s


def solve(n=1000, jit=True):
    grad = sourcead.grad(rosenbrock, jit=jit)
    hess = sourcead.hessian(rosenbrock, sparse=True, jit=jit)
    x0 = np.full(n, -0.5)
    x0[::2] = 1.2
    result = minimize(
        rosenbrock, x0, method="trust-constr", jac=grad, hess=hess, options={"gtol": 1e-10, "maxiter": 2000}
    )
    return result, hess


def main():
    n = 5000
    start = time.perf_counter()
    result, hess = solve(n)
    elapsed = time.perf_counter() - start
    pattern, plan = hess.plan(result.x)
    print(
        f"n = {n}: {result.nit} iterations, {result.njev} gradients, {result.nhev} sparse Hessians "
        f"({pattern.matrix.nnz} nonzeros, {plan.count} colours), {elapsed:.2f} s"
    )
    print(f"f = {result.fun:.3e}, max |x - 1| = {np.abs(result.x - 1.0).max():.2e}")


if __name__ == "__main__":
    main()
