"""Newton's method on the 2-D Bratu problem at a size where a dense Jacobian is impossible.

-(u_xx + u_yy) = lam * exp(u) on the unit square, u = 0 on the boundary, on an N x N interior grid:
at N = 320, 102 400 unknowns (a dense Jacobian would take 84 GB). ``sourcead.jacobian(residual,
sparse=True)`` reads the 5-point pattern from the loops, colours it (5 colours: one vector-mode
sweep carrying 5 tangents gives the whole Jacobian) and returns a ``scipy.sparse.csr_array`` that
``scipy.sparse.linalg.spsolve`` factors; the pattern and colouring are computed once, on the
first call (the pattern is static: no branch reads data), and reused by every Newton step.
Run: ``python examples/bratu_newton.py [N]``.
"""

import math
import sys
import time

import numpy as np
from scipy.sparse.linalg import spsolve

import sourcead


def residual(u, lam):
    n = u.shape[0]
    m = u.shape[1]
    h2 = 1.0 / ((n + 1) * (m + 1))
    r = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            up = u[i - 1, j] if i > 0 else 0.0
            down = u[i + 1, j] if i < n - 1 else 0.0
            left = u[i, j - 1] if j > 0 else 0.0
            right = u[i, j + 1] if j < m - 1 else 0.0
            r[i, j] = (4.0 * u[i, j] - up - down - left - right) / h2 - lam * math.exp(u[i, j])
    return r


def newton(n=320, lam=5.0, tol=1e-9, jit=True, log=print):
    """Newton steps until max |residual| < tol; returns the solution and the prepared Jacobian."""
    jac = sourcead.jacobian(residual, sparse=True, jit=jit)
    u = np.zeros((n, n))
    for step in range(20):
        r = residual(u, lam)
        size = np.abs(r).max()
        log(f"  step {step}: max |residual| = {size:.3e}")
        if size < tol:
            break
        start = time.perf_counter()
        J = jac(u, lam)
        mid = time.perf_counter()
        u = u - spsolve(J.tocsc(), r.ravel()).reshape(n, n)
        log(f"           Jacobian {mid - start:.2f} s, spsolve {time.perf_counter() - mid:.2f} s")
    return u, jac


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 320
    start = time.perf_counter()
    u, jac = newton(n)
    pattern, plan = jac.plan(u, 5.0)
    print(
        f"N = {n} ({n * n} unknowns): {pattern.matrix.nnz} nonzeros, {plan.count} colours ({plan.side}), "
        f"static pattern: {pattern.static}; total {time.perf_counter() - start:.1f} s; max u = {u.max():.6f}"
    )


if __name__ == "__main__":
    main()
