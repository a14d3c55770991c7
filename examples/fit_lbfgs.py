"""Fit a GARCH(1,1) volatility model by maximum likelihood with SciPy's L-BFGS-B and sourcead.

The loss is a plain loop over 200 000 returns, the kind of recurrence that array frameworks must
unroll or scan; ``sourcead.grad(loss)`` gives its exact gradient, which SciPy takes as ``jac``.
Run: ``python examples/fit_lbfgs.py`` (a few seconds, most of it compiling once).
"""

import math
import time

import numba
import numpy as np
from scipy.optimize import minimize

import sourcead


def loss(theta, r, s0):
    """Mean negative log-likelihood (up to a constant) of returns r; theta = (omega, alpha, beta)."""
    omega = theta[0]
    alpha = theta[1]
    beta = theta[2]
    s = s0
    total = 0.0
    for t in range(1, r.shape[0]):
        s = omega + alpha * r[t - 1] * r[t - 1] + beta * s
        total += math.log(s) + r[t] * r[t] / s
    return 0.5 * total / r.shape[0]


def simulate(n, omega, alpha, beta, seed=0):
    """Returns from a GARCH(1,1) process with the given parameters (deterministic)."""
    z = np.random.default_rng(seed).standard_normal(n)
    r = np.empty(n)
    s = omega / (1.0 - alpha - beta)
    for t in range(n):
        r[t] = math.sqrt(s) * z[t]
        s = omega + alpha * r[t] * r[t] + beta * s
    return r


class Timed:
    """Wraps a function and adds up the seconds spent in it."""

    def __init__(self, fn):
        self.fn, self.calls, self.seconds = fn, 0, 0.0

    def __call__(self, *args):
        start = time.perf_counter()
        try:
            return self.fn(*args)
        finally:
            self.calls += 1
            self.seconds += time.perf_counter() - start


def main():
    true = np.array([0.05, 0.10, 0.85])
    r = simulate(200_000, *true)
    s0 = float(np.var(r))
    grad = sourcead.grad(loss)  # wrt the first argument, theta
    start = time.perf_counter()
    grad(true, r, s0)  # transform and compile once, outside the optimisation
    prepare = time.perf_counter() - start

    fun = Timed(numba.njit(loss))
    fun(true, r, s0)  # compile the loss too
    fun.calls, fun.seconds = 0, 0.0
    jac = Timed(grad)
    start = time.perf_counter()
    fit = minimize(
        fun,
        np.array([0.1, 0.2, 0.6]),
        args=(r, s0),
        jac=jac,
        method="L-BFGS-B",
        bounds=[(1e-6, None), (0.0, 1.0), (0.0, 1.0)],
    )
    total = time.perf_counter() - start
    print(f"converged: {fit.success} ({fit.message}) after {fit.nit} iterations")
    print("             omega   alpha   beta")
    print("true       " + "".join(f"{v:8.4f}" for v in true))
    print("estimated  " + "".join(f"{v:8.4f}" for v in fit.x))
    print(f"loss {fit.fun:.6f}, |gradient| {np.linalg.norm(jac.fn(fit.x, r, s0)):.1e}")
    print(
        f"gradients: {jac.calls} calls, {jac.seconds * 1e3:.1f} ms in all ({jac.seconds / jac.calls * 1e3:.2f} ms each)"
    )
    print(f"losses:    {fun.calls} calls, {fun.seconds * 1e3:.1f} ms; optimisation {total * 1e3:.0f} ms in all")
    print(f"first gradient (transform + compile): {prepare:.2f} s")


if __name__ == "__main__":
    main()
