"""GradBench/ADBench-style workloads, written in the loop style numba users write.

The five that GradBench's evals share take their objective from the GradBench tool
(``benchmarks.gradbench_tool``), so that each is written once: ``gmm`` (the tool's
``gmm_objective``: weights, means, log-diagonals and strictly lower parts of the inverse-covariance
factors, Wishart prior), ``ba`` (the sum of squares of the tool's ``ba_residuals`` and
``weight_errors``), ``lstm`` (the tool's ``lstm_objective``), ``ode`` (the tool's ``ode_last``: RK4
on y0' = x0, yi' = xi * y(i-1), the last element of y(2)) and ``kmeans`` (the tool's ``kmeans_cost``,
a ``prange`` over the points). Written here, in our own words from public specifications:
``lu_logdet`` (log |det A| by LU with partial pivoting), ``particle`` (the Pearlmutter-Siskind
charged particle, naive Euler with a ``while``/``break`` until it crosses the x axis, one trajectory
per control value), ``nbody`` (softened gravity, symplectic Euler), ``gray_scott`` (2-D
reaction-diffusion, periodic indices, buffers swapped every step) and ``logistic`` (logistic
regression with an L2 penalty).

Every function is in the subset sourcead supports today. Inputs are deterministic (closed forms
or a seeded generator), sized so that the numba primal takes about 0.5-5 ms on this machine.
``GB_WORKLOADS`` lists them with what to differentiate; ``benchmarks.gradbench`` runs them.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np
from numba import prange

import benchmarks.gradbench_tool.ode as _tool_ode
from benchmarks.gradbench_tool import ba as _tool_ba
from benchmarks.gradbench_tool.gmm import gmm_objective
from benchmarks.gradbench_tool.kmeans import kmeans_cost
from benchmarks.gradbench_tool.lstm import lstm_objective


def with_compiled_callees(func: Callable, **callees: Callable) -> Callable:
    """func (the same code, so the same source for sourcead) with the named functions it calls
    compiled by numba, so that ``numba.njit(func)`` compiles: the benches njit a workload's primal."""
    scope = dict(func.__globals__) | {name: numba.njit(callee) for name, callee in callees.items()}
    return types.FunctionType(func.__code__, scope, func.__name__, func.__defaults__)


# the tool's functions that these workloads call, as numba-compiled functions
ba_residuals = numba.njit(_tool_ba.ba_residuals)
weight_errors = numba.njit(_tool_ba.weight_errors)
ode_last = with_compiled_callees(_tool_ode.ode_last, ode_solve=_tool_ode.ode_solve)


@dataclass(frozen=True)
class GBWorkload:
    """One GradBench-style function, its inputs and what to differentiate."""

    name: str
    func: Callable  # loop style, differentiated by sourcead, compiled by numba
    make_args: Callable[[], tuple]  # deterministic: the same arguments in every process
    wrt: tuple[str, ...]
    size: str


# --- GMM (ADBench) ----------------------------------------------------------------------------------


def _gmm_args(n=1000, d=10, k=25):
    # the tool's parameters: weights alpha, means mu, log-diagonals q and strictly lower parts of the
    # inverse-covariance factors (column by column), Wishart gamma and m, and the constant term (0)
    rng = np.random.default_rng(11)
    alpha = rng.standard_normal(k)
    mu = rng.random((k, d))
    q = 0.3 * rng.standard_normal((k, d))
    lower = 0.3 * rng.standard_normal((k, d * (d - 1) // 2))
    x = rng.random((n, d))
    return alpha, mu, q, lower, x, 1.0, 0.0, 0.0


# --- bundle adjustment (ADBench) --------------------------------------------------------------------


def ba_objective(cams, X, w, obs, feats):
    # the sum of squares of the tool's residuals: its reprojection errors and weight errors
    err = ba_residuals(cams, X, w, obs, feats)
    werr = weight_errors(w)
    return np.sum(err * err) + np.sum(werr * werr)


def _ba_args(n_cams=50, n_points=5000, n_obs=40_000):
    rng = np.random.default_rng(12)
    cams = np.empty((n_cams, 11))
    cams[:, 0:3] = 0.1 * rng.standard_normal((n_cams, 3))
    cams[:, 3:5] = 0.5 * rng.standard_normal((n_cams, 2))
    cams[:, 5] = -10.0 + 0.5 * rng.standard_normal(n_cams)  # points lie in front of the cameras
    cams[:, 6] = 1.0 + 0.1 * rng.random(n_cams)
    cams[:, 7:9] = 0.01 * rng.standard_normal((n_cams, 2))
    cams[:, 9:11] = 0.01 * rng.standard_normal((n_cams, 2))
    X = rng.standard_normal((n_points, 3))
    w = 1.0 + 0.1 * rng.standard_normal(n_obs)
    obs = np.stack([np.arange(n_obs) % n_cams, (np.arange(n_obs) * 7) % n_points], axis=1).astype(np.int64)
    feats = 0.1 * rng.standard_normal((n_obs, 2))
    return cams, X, w, obs, feats


# --- LSTM with diagonal weights (ADBench): lstm_objective is the tool's ---------------------------------


def _lstm_args(n_layers=2, b=32, c=1000):
    rng = np.random.default_rng(13)
    main_params = 0.5 * rng.standard_normal((2 * n_layers, 4 * b))
    extra_params = 0.5 * rng.standard_normal((3, b))
    state = 0.5 * rng.standard_normal((2 * n_layers, b))
    sequence = rng.standard_normal((c, b))
    return main_params, extra_params, state, sequence


# --- RK4 ODE (GradBench `ode`): ode_last is the tool's ---------------------------------------------------


def _ode_args(n=200, s=500):
    # x_i near (i + 1) / 2 keeps every y_i(2) of order one (y_i grows like prod x * t^(i+1)/(i+1)!)
    i = np.arange(n)
    return 0.5 * (i + 1) * (1.0 + 0.1 * np.sin(i)), s


# --- log |det A| by LU with partial pivoting --------------------------------------------------------


def lu_logdet(A):
    n = A.shape[0]
    U = A.copy()
    logdet = 0.0
    for k in range(n):
        p = k
        best = abs(U[k, k])
        for i in range(k + 1, n):
            if abs(U[i, k]) > best:
                best = abs(U[i, k])
                p = i
        if p != k:
            for j in range(n):
                tmp = U[k, j]
                U[k, j] = U[p, j]
                U[p, j] = tmp
        logdet += math.log(abs(U[k, k]))
        for i in range(k + 1, n):
            f = U[i, k] / U[k, k]
            for j in range(k + 1, n):
                U[i, j] = U[i, j] - f * U[k, j]
    return logdet


def _lu_args(n=100):
    return (np.random.default_rng(14).standard_normal((n, n)),)


# --- charged particle (GradBench `particle`, the inner trajectory) -----------------------------------


@numba.njit
def particle_accel(px, py, w):
    # the force -grad p of p = 1/|x - (10, 10 - w)| + 1/|x - (10, 0)| on a unit charge and mass
    ax = 0.0
    ay = 0.0
    dx = px - 10.0
    dy = py - (10.0 - w)
    r = math.sqrt(dx * dx + dy * dy)
    ax += dx / (r * r * r)
    ay += dy / (r * r * r)
    dy = py
    r = math.sqrt(dx * dx + dy * dy)
    ax += dx / (r * r * r)
    ay += dy / (r * r * r)
    return ax, ay


def particle_loss(w, dt):
    # one trajectory per control value w[j], from (0, 8) at velocity (0.75, 0), naive Euler until
    # the next step would cross the x axis, then the crossing by linear interpolation
    total = 0.0
    for j in range(w.shape[0]):
        px = 0.0
        py = 8.0
        vx = 0.75
        vy = 0.0
        while True:
            nx = px + dt * vx
            ny = py + dt * vy
            if ny <= 0.0:
                break
            ax, ay = particle_accel(px, py, w[j])
            vx = vx + dt * ax
            vy = vy + dt * ay
            px = nx
            py = ny
        tf = -py / vy
        xf = px + tf * vx
        total += xf * xf
    return total


def _particle_args(m=200, dt=0.01):
    return np.linspace(0.0, 0.5, m), dt


# --- n-body ------------------------------------------------------------------------------------------


def nbody_energy(p0, v0, m, n_steps, dt):
    # symplectic Euler under softened gravity; the total energy of the final state
    n = p0.shape[0]
    eps2 = 0.01
    p = p0.copy()
    v = v0.copy()
    for _step in range(n_steps):
        for i in range(n):
            ax = 0.0
            ay = 0.0
            az = 0.0
            for j in range(n):
                dx = p[j, 0] - p[i, 0]
                dy = p[j, 1] - p[i, 1]
                dz = p[j, 2] - p[i, 2]
                r2 = dx * dx + dy * dy + dz * dz + eps2
                inv = m[j] / (r2 * math.sqrt(r2))
                ax += dx * inv
                ay += dy * inv
                az += dz * inv
            v[i, 0] += dt * ax
            v[i, 1] += dt * ay
            v[i, 2] += dt * az
        for i in range(n):
            p[i, 0] += dt * v[i, 0]
            p[i, 1] += dt * v[i, 1]
            p[i, 2] += dt * v[i, 2]
    energy = 0.0
    for i in range(n):
        energy += 0.5 * m[i] * (v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2])
        for j in range(i + 1, n):
            dx = p[j, 0] - p[i, 0]
            dy = p[j, 1] - p[i, 1]
            dz = p[j, 2] - p[i, 2]
            energy -= m[i] * m[j] / math.sqrt(dx * dx + dy * dy + dz * dz + eps2)
    return energy


def _nbody_args(n=64, n_steps=20, dt=0.01):
    rng = np.random.default_rng(15)
    return rng.standard_normal((n, 3)), 0.1 * rng.standard_normal((n, 3)), (1.0 + 0.5 * rng.random(n)) / n, n_steps, dt


# --- 2-D reaction-diffusion (Gray-Scott) --------------------------------------------------------------


def gray_scott(u0, v0, feed, kill, n_steps):
    # explicit Euler on a periodic grid, two buffers per field exchanged every step
    n = u0.shape[0]
    m = u0.shape[1]
    du = 0.16
    dv = 0.08
    dt = 1.0
    u = u0.copy()
    v = v0.copy()
    un = np.empty((n, m))
    vn = np.empty((n, m))
    for _step in range(n_steps):
        for i in range(n):
            ip = i + 1
            if ip == n:
                ip = 0
            im = i - 1
            if im < 0:
                im = n - 1
            for j in range(m):
                jp = j + 1
                if jp == m:
                    jp = 0
                jm = j - 1
                if jm < 0:
                    jm = m - 1
                uc = u[i, j]
                vc = v[i, j]
                lap_u = u[ip, j] + u[im, j] + u[i, jp] + u[i, jm] - 4.0 * uc
                lap_v = v[ip, j] + v[im, j] + v[i, jp] + v[i, jm] - 4.0 * vc
                uvv = uc * vc * vc
                un[i, j] = uc + dt * (du * lap_u - uvv + feed * (1.0 - uc))
                vn[i, j] = vc + dt * (dv * lap_v + uvv - (feed + kill) * vc)
        u, un = un, u
        v, vn = vn, v
    s = 0.0
    for i in range(n):
        for j in range(m):
            s += u[i, j] * u[i, j] + v[i, j] * v[i, j]
    return 0.5 * s


def _gray_scott_args(n=64, n_steps=50):
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    blob = np.exp(-((i - n / 2) ** 2 + (j - n / 2) ** 2) / (0.02 * n * n))
    return 1.0 - 0.5 * blob, 0.25 * blob + 0.01 * np.cos(0.3 * i + 0.2 * j), 0.037, 0.06, n_steps


# --- k-means cost (GradBench `kmeans`): kmeans_cost is the tool's --------------------------------------


def _kmeans_args(n=20_000, k=32, d=8):
    rng = np.random.default_rng(16)
    return rng.standard_normal((n, d)), rng.standard_normal((k, d))


# --- logistic regression --------------------------------------------------------------------------------


def logistic_loss(w, X, y, lam):
    # labels y in {-1, +1}: sum of log(1 + exp(-y x.w)), stable for either sign, plus an L2 penalty
    total = 0.0
    for i in prange(X.shape[0]):
        z = 0.0
        for j in range(X.shape[1]):
            z += X[i, j] * w[j]
        margin = y[i] * z
        if margin > 0.0:
            total += math.log(1.0 + math.exp(-margin))
        else:
            total += math.log(1.0 + math.exp(margin)) - margin
    reg = 0.0
    for j in range(w.shape[0]):
        reg += w[j] * w[j]
    return total + 0.5 * lam * reg


def _logistic_args(n=50_000, d=32):
    rng = np.random.default_rng(17)
    X = rng.standard_normal((n, d))
    w_true = rng.standard_normal(d) / math.sqrt(d)
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ w_true))), 1.0, -1.0)
    return 0.1 * rng.standard_normal(d), X, y, 1e-2


GB_WORKLOADS = (
    GBWorkload("gmm", gmm_objective, _gmm_args, ("alpha", "mu", "q", "lower"), "n 1000, d 10, K 25"),
    GBWorkload("ba", ba_objective, _ba_args, ("cams", "X", "w"), "50 cams, 5000 points, 40000 obs"),
    GBWorkload("lstm", lstm_objective, _lstm_args, ("main_params", "extra_params"), "2 layers, b 32, c 1000"),
    GBWorkload("ode", ode_last, _ode_args, ("x",), "n 200, 500 RK4 steps"),
    GBWorkload("lu_logdet", lu_logdet, _lu_args, ("A",), "100 x 100"),
    GBWorkload("particle", particle_loss, _particle_args, ("w",), "200 trajectories, dt 0.01"),
    GBWorkload("nbody", nbody_energy, _nbody_args, ("p0", "v0"), "64 bodies, 20 steps"),
    GBWorkload("gray_scott", gray_scott, _gray_scott_args, ("u0", "v0", "feed", "kill"), "64 x 64, 50 steps"),
    GBWorkload("kmeans", kmeans_cost, _kmeans_args, ("centroids",), "20000 points, K 32, d 8"),
    GBWorkload("logistic", logistic_loss, _logistic_args, ("w",), "50000 x 32"),
)

GB_BY_NAME = {w.name: w for w in GB_WORKLOADS}
