"""Workloads written twice: loop style for sourcead, vectorized for the array frameworks.

Each ``Pair`` holds a loop-style function (scalars, element-by-element indexing, ``prange`` where
the loop is a map or a reduction over independent items) that sourcead differentiates and numba
compiles, and the same loss written the way a JAX, PyTorch or autograd user would write it,
against a small ``ops`` namespace (``benchmarks.peers`` gives one per framework). Both take the
same arguments in the same order; ``wrt`` names the ones to differentiate. Inputs are
deterministic: closed-form arrays, or a generator with a fixed seed.

Sizes put the numba primal at roughly 5-50 ms on a 2-core x86_64 machine (see the table).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np
from numba import prange


@dataclass(frozen=True)
class Pair:
    """One loss, its loop and vectorized forms, inputs and what to differentiate."""

    name: str
    loop: Callable  # loop style, differentiated by sourcead
    vec: Callable  # vec(ops, *args): the idiomatic array-framework form of the same loss
    make_args: Callable[[], tuple]  # deterministic
    wrt: tuple[str, ...]
    size: str
    style: str  # "loop": written step by step in any framework; "vector": maps onto whole-array ops
    # eager peers (a Python loop per step) on a long recurrence: time them on these smaller
    # inputs and scale by `eager_scale` (documented as extrapolated)
    eager_args: Callable[[], tuple] | None = None
    eager_scale: float = 1.0


# --- logistic regression over samples -------------------------------------------------------------


def logistic_loop(w, X, y, lam):
    n = X.shape[0]
    total = 0.0
    for i in prange(n):
        z = 0.0
        for j in range(X.shape[1]):
            z += X[i, j] * w[j]
        # log(1 + exp(z)) - y z, the numerically stable way round for either sign of z
        if z > 0.0:
            total += z + math.log(1.0 + math.exp(-z)) - y[i] * z
        else:
            total += math.log(1.0 + math.exp(z)) - y[i] * z
    reg = 0.0
    for j in range(w.shape[0]):
        reg += w[j] * w[j]
    return total / n + 0.5 * lam * reg


def logistic_vec(ops, w, X, y, lam):
    z = X @ w
    return ops.mean(ops.softplus(z) - y * z) + 0.5 * lam * ops.sum(w * w)


def _logistic_args(n=300_000, d=50):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((n, d))
    w_true = rng.standard_normal(d) / math.sqrt(d)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ w_true)))).astype(np.float64)
    return 0.1 * rng.standard_normal(d), X, y, 1e-3


# --- Gaussian-mixture log-likelihood ----------------------------------------------------------------


def gmm_loop(mu, log_s, logits, x):
    # negative log-likelihood of 2-D points under K diagonal Gaussians with softmax weights
    k_n = mu.shape[0]
    m = logits[0]
    for k in range(1, k_n):
        m = max(m, logits[k])
    z = 0.0
    for k in range(k_n):
        z += math.exp(logits[k] - m)
    log_norm = m + math.log(z)  # log sum_k exp(logits[k])
    c = np.zeros(k_n)  # per component: log weight (unnormalized) minus log of the 2-D normalizer
    prec = np.zeros(k_n)  # per component: 1 / sigma**2
    for k in range(k_n):
        c[k] = logits[k] - 2.0 * log_s[k]
        prec[k] = math.exp(-2.0 * log_s[k])
    total = 0.0
    for i in prange(x.shape[0]):
        best = -1e300
        for k in range(k_n):
            best = max(best, c[k] - 0.5 * ((x[i, 0] - mu[k, 0]) ** 2 + (x[i, 1] - mu[k, 1]) ** 2) * prec[k])
        s = 0.0
        for k in range(k_n):
            s += math.exp(c[k] - 0.5 * ((x[i, 0] - mu[k, 0]) ** 2 + (x[i, 1] - mu[k, 1]) ** 2) * prec[k] - best)
        total += best + math.log(s)
    n = x.shape[0]
    return -(total / n - log_norm - math.log(2.0 * math.pi))


def gmm_vec(ops, mu, log_s, logits, x):
    d2 = ops.sum((x[:, None, :] - mu[None, :, :]) ** 2, axis=2)  # (n, K)
    a = logits - 2.0 * log_s - 0.5 * d2 * ops.exp(-2.0 * log_s)
    return -(ops.mean(ops.logsumexp(a, axis=1)) - ops.logsumexp(logits, axis=0) - math.log(2.0 * math.pi))


def _gmm_args(n=120_000, k=16):
    rng = np.random.default_rng(2)
    centres = rng.uniform(-4.0, 4.0, (k, 2))
    x = centres[rng.integers(0, k, n)] + 0.6 * rng.standard_normal((n, 2))
    return centres + 0.3 * rng.standard_normal((k, 2)), np.full(k, -0.2), np.zeros(k), x


# --- linear least squares ---------------------------------------------------------------------------


def lsq_loop(x, A, b):
    s = 0.0
    for i in prange(A.shape[0]):
        r = -b[i]
        for j in range(A.shape[1]):
            r += A[i, j] * x[j]
        s += r * r
    return 0.5 * s


def lsq_vec(ops, x, A, b):
    r = A @ x - b
    return 0.5 * ops.sum(r * r)


def _lsq_args(m=12_000, n=2000):
    rng = np.random.default_rng(3)
    return rng.standard_normal(n), rng.standard_normal((m, n)) / math.sqrt(n), rng.standard_normal(m)


# --- a small MLP (one tanh hidden layer, squared error) ----------------------------------------------


def mlp_loop(W1, b1, w2, b2, X, y):
    n = X.shape[0]
    total = 0.0
    for i in prange(n):
        out = b2
        for h in range(W1.shape[1]):
            a = b1[h]
            for k in range(X.shape[1]):
                a += X[i, k] * W1[k, h]
            out += w2[h] * math.tanh(a)
        total += (out - y[i]) ** 2
    return total / n


def mlp_vec(ops, W1, b1, w2, b2, X, y):
    out = ops.tanh(X @ W1 + b1) @ w2 + b2
    return ops.mean((out - y) ** 2)


def _mlp_args(n=8192, d=32, hidden=64):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2]
    W1 = rng.standard_normal((d, hidden)) / math.sqrt(d)
    w2 = rng.standard_normal(hidden) / math.sqrt(hidden)
    return W1, np.zeros(hidden), w2, 0.0, X, y


# --- 2-D diffusion, explicit time stepping ----------------------------------------------------------


def diffusion_loop(u0, kappa, n_steps):
    # the border keeps its initial values; interior: five-point Laplacian, explicit Euler
    n = u0.shape[0]
    m = u0.shape[1]
    u = u0.copy()
    v = u0.copy()
    for _step in range(n_steps):
        for i in prange(1, n - 1):
            for j in range(1, m - 1):
                v[i, j] = u[i, j] + kappa * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
        u, v = v, u
    s = 0.0
    for i in range(n):
        for j in range(m):
            s += u[i, j] * u[i, j]
    return 0.5 * s


def diffusion_vec(ops, u0, kappa, n_steps):
    def step(u):
        lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
        return u + kappa * ops.pad1(lap)

    u = ops.repeat(step, n_steps, u0)
    return 0.5 * ops.sum(u * u)


def _diffusion_args(n=320, n_steps=500):
    x = np.linspace(0.0, 1.0, n)
    u0 = np.outer(np.sin(np.pi * x), np.sin(2.0 * np.pi * x)) + 0.2 * np.cos(7.0 * np.add.outer(x, x))
    return u0, 0.2, n_steps


# --- an explicit ODE integrator: Lorenz-96 with classic RK4 (4D-Var style misfit) -------------------


@numba.njit  # so that the numba primal can call it; sourcead inlines the Python function
def l96_rhs(x, out, forcing):
    # dx_i/dt = (x[i+1] - x[i-2]) x[i-1] - x[i] + F on a ring; the wrapped ends are peeled off
    n = x.shape[0]
    out[0] = (x[1] - x[n - 2]) * x[n - 1] - x[0] + forcing
    out[1] = (x[2] - x[n - 1]) * x[0] - x[1] + forcing
    for i in range(2, n - 1):
        out[i] = (x[i + 1] - x[i - 2]) * x[i - 1] - x[i] + forcing
    out[n - 1] = (x[0] - x[n - 3]) * x[n - 2] - x[n - 1] + forcing
    return 0.0  # sourcead wants a return value even from a function that only writes `out`


def lorenz96_loop(x0, forcing, target, n_steps, dt):
    n = x0.shape[0]
    x = x0.copy()
    k1 = np.zeros(n)
    k2 = np.zeros(n)
    k3 = np.zeros(n)
    k4 = np.zeros(n)
    y = np.zeros(n)
    for _step in range(n_steps):
        l96_rhs(x, k1, forcing)
        for i in range(n):
            y[i] = x[i] + 0.5 * dt * k1[i]
        l96_rhs(y, k2, forcing)
        for i in range(n):
            y[i] = x[i] + 0.5 * dt * k2[i]
        l96_rhs(y, k3, forcing)
        for i in range(n):
            y[i] = x[i] + dt * k3[i]
        l96_rhs(y, k4, forcing)
        for i in range(n):
            x[i] = x[i] + dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
    s = 0.0
    for i in range(n):
        s += (x[i] - target[i]) ** 2
    return 0.5 * s


def lorenz96_vec(ops, x0, forcing, target, n_steps, dt):
    def rhs(x):
        return (ops.roll(x, -1) - ops.roll(x, 2)) * ops.roll(x, 1) - x + forcing

    def step(x):
        k1 = rhs(x)
        k2 = rhs(x + 0.5 * dt * k1)
        k3 = rhs(x + 0.5 * dt * k2)
        k4 = rhs(x + dt * k3)
        return x + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    x = ops.repeat(step, n_steps, x0)
    return 0.5 * ops.sum((x - target) ** 2)


def _lorenz96_args(n=400, n_steps=2500, dt=0.001):
    i = np.arange(n)
    x0 = 8.0 + 0.5 * np.sin(0.3 * i) + 0.01 * np.cos(1.7 * i)
    target = 8.0 + np.cos(0.2 * i)
    return x0, 8.0, target, n_steps, dt


# --- n-body potential + kinetic energy (softened gravity) -------------------------------------------


def nbody_loop(p, v, m, eps):
    # positions p, velocities v, masses m: kinetic plus softened gravitational potential energy
    n = p.shape[0]
    kinetic = 0.0
    for i in range(n):
        kinetic += 0.5 * m[i] * (v[i, 0] ** 2 + v[i, 1] ** 2 + v[i, 2] ** 2)
    e2 = eps * eps
    potential = 0.0
    for i in prange(n):
        for j in range(i + 1, n):
            # one line and no temporary: sourcead cannot yet read an expression split over lines, and
            # a temporary assigned in this inner loop would be taped and make the adjoint serial
            potential -= m[i] * m[j] / math.sqrt((p[i, 0] - p[j, 0]) ** 2 + (p[i, 1] - p[j, 1]) ** 2 + (p[i, 2] - p[j, 2]) ** 2 + e2)  # noqa: E501  # fmt: skip
    return kinetic + potential


def nbody_vec(ops, p, v, m, eps):
    kinetic = 0.5 * ops.sum(m * ops.sum(v * v, axis=1))
    d = ops.sqrt(ops.sum((p[:, None, :] - p[None, :, :]) ** 2, axis=2) + eps * eps)
    mm = m[:, None] * m[None, :] * (1.0 - ops.eye(p.shape[0]))  # no self-interaction
    return kinetic - 0.5 * ops.sum(mm / d)


def _nbody_args(n=2500):
    rng = np.random.default_rng(5)
    return rng.standard_normal((n, 3)), 0.1 * rng.standard_normal((n, 3)), rng.uniform(0.5, 1.5, n), 0.05


# --- a long scalar recurrence: GARCH(1,1) negative log-likelihood ------------------------------------


def garch_loop(omega, alpha, beta, r, s0):
    s = s0
    total = 0.0
    for t in range(1, r.shape[0]):
        s = omega + alpha * r[t - 1] * r[t - 1] + beta * s
        total += math.log(s) + r[t] * r[t] / s
    return 0.5 * total


def garch_vec(ops, omega, alpha, beta, r, s0):
    def step(carry, rr):  # rr = (r[t-1]**2, r[t]**2)
        s, total = carry
        s = omega + alpha * rr[0] + beta * s
        return s, total + ops.log(s) + rr[1] / s

    r2 = r * r
    _, total = ops.scan(step, (s0, 0.0), ops.stack([r2[:-1], r2[1:]], axis=1))
    return 0.5 * total


def garch_series(n, omega=0.05, alpha=0.1, beta=0.85, seed=6):
    """A GARCH(1,1) return series with the given parameters (deterministic)."""
    z = np.random.default_rng(seed).standard_normal(n)
    r = np.empty(n)
    s = omega / (1.0 - alpha - beta)
    for t in range(n):
        r[t] = math.sqrt(s) * z[t]
        s = omega + alpha * r[t] * r[t] + beta * s
    return r


def _garch_args(n=1_000_000):
    r = garch_series(n)
    return 0.04, 0.12, 0.8, r, float(np.var(r))


PAIRS = (
    Pair("logistic", logistic_loop, logistic_vec, _logistic_args, ("w",), "300000 x 50", "vector"),
    Pair("gmm", gmm_loop, gmm_vec, _gmm_args, ("mu", "log_s", "logits"), "120000 points, K = 16, 2-D", "vector"),
    Pair("least_squares", lsq_loop, lsq_vec, _lsq_args, ("x",), "A: 12000 x 2000", "vector"),
    Pair("mlp", mlp_loop, mlp_vec, _mlp_args, ("W1", "b1", "w2", "b2"), "8192 x 32 -> 64 tanh -> 1", "vector"),
    Pair(
        "diffusion_2d",
        diffusion_loop,
        diffusion_vec,
        _diffusion_args,
        ("u0", "kappa"),
        "320 x 320, 500 steps",
        "vector",
        eager_args=lambda: _diffusion_args(n_steps=50),
        eager_scale=10.0,
    ),
    Pair(
        "lorenz96_rk4",
        lorenz96_loop,
        lorenz96_vec,
        _lorenz96_args,
        ("x0", "forcing"),
        "n = 400, 2500 RK4 steps",
        "loop",
        eager_args=lambda: _lorenz96_args(n_steps=250),
        eager_scale=10.0,
    ),
    Pair("nbody", nbody_loop, nbody_vec, _nbody_args, ("p", "v", "m"), "2500 bodies (3.1M pairs)", "vector"),
    Pair(
        "garch",
        garch_loop,
        garch_vec,
        _garch_args,
        ("omega", "alpha", "beta"),
        "T = 1000000",
        "loop",
        eager_args=lambda: _garch_args(10_000),
        eager_scale=100.0,
    ),
)

BY_NAME = {p.name: p for p in PAIRS}
