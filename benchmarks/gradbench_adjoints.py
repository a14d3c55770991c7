"""Hand-written numba adjoints of five GradBench-style workloads (``benchmarks.gradbench_workloads``).

Each takes the workload's arguments and returns the tuple of its gradients in ``wrt`` order, as
``sourcead.grad`` does. They are what an engineer who knows the function writes by hand: the
states of a time loop stored once per step (or recomputed inside the step), adjoints of stencils
in gather form, reductions over samples split into a fixed number of chunks (so the result does
not depend on the thread count) and summed after the parallel loop. ``benchmarks.gradbench``
checks every one against sourcead's gradient and central finite differences before timing it.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import prange

CHUNKS = 16  # parallel reductions: fixed chunks, private partial sums, summed in order


# --- 2-D reaction-diffusion: states stored per step, adjoint stencil as a gather ----------------------


@numba.njit(nogil=True, error_model="numpy")
def gray_scott_grad(u0, v0, feed, kill, n_steps):
    n, m = u0.shape
    du, dv, dt = 0.16, 0.08, 1.0
    U = np.empty((n_steps + 1, n, m))
    V = np.empty((n_steps + 1, n, m))
    U[0] = u0
    V[0] = v0
    for s in range(n_steps):
        for i in range(n):
            ip, im = (i + 1) % n, (i - 1) % n
            for j in range(m):
                jp, jm = (j + 1) % m, (j - 1) % m
                uc, vc = U[s, i, j], V[s, i, j]
                lap_u = U[s, ip, j] + U[s, im, j] + U[s, i, jp] + U[s, i, jm] - 4.0 * uc
                lap_v = V[s, ip, j] + V[s, im, j] + V[s, i, jp] + V[s, i, jm] - 4.0 * vc
                uvv = uc * vc * vc
                U[s + 1, i, j] = uc + dt * (du * lap_u - uvv + feed * (1.0 - uc))
                V[s + 1, i, j] = vc + dt * (dv * lap_v + uvv - (feed + kill) * vc)
    ub = U[n_steps].copy()  # d(0.5 * sum(u^2 + v^2)) / d(final state)
    vb = V[n_steps].copy()
    ub_old = np.empty((n, m))
    vb_old = np.empty((n, m))
    feed_bar = 0.0
    kill_bar = 0.0
    for s in range(n_steps - 1, -1, -1):
        for i in range(n):
            ip, im = (i + 1) % n, (i - 1) % n
            for j in range(m):
                jp, jm = (j + 1) % m, (j - 1) % m
                uc, vc = U[s, i, j], V[s, i, j]
                gu, gv = ub[i, j], vb[i, j]
                # the five-point Laplacian is symmetric: each adjoint gathers from its neighbours
                nb_u = ub[ip, j] + ub[im, j] + ub[i, jp] + ub[i, jm]
                nb_v = vb[ip, j] + vb[im, j] + vb[i, jp] + vb[i, jm]
                ub_old[i, j] = gu * (1.0 - dt * (4.0 * du + vc * vc + feed)) + dt * du * nb_u + gv * dt * vc * vc
                vb_old[i, j] = (
                    gv * (1.0 + dt * (-4.0 * dv + 2.0 * uc * vc - feed - kill))
                    + dt * dv * nb_v
                    - gu * dt * 2.0 * uc * vc
                )
                feed_bar += dt * (gu * (1.0 - uc) - gv * vc)
                kill_bar -= dt * gv * vc
        ub, ub_old = ub_old, ub
        vb, vb_old = vb_old, vb
    return ub, vb, feed_bar, kill_bar


# --- log |det A| by LU: the elimination undone in place, no tape but the pivots -----------------------


@numba.njit(nogil=True, error_model="numpy")
def lu_logdet_grad(A):
    n = A.shape[0]
    U = A.copy()
    piv = np.empty(n, np.int64)
    for k in range(n):
        p = k
        best = abs(U[k, k])
        for i in range(k + 1, n):
            if abs(U[i, k]) > best:
                best = abs(U[i, k])
                p = i
        piv[k] = p
        if p != k:
            for j in range(n):
                U[k, j], U[p, j] = U[p, j], U[k, j]
        for i in range(k + 1, n):
            f = U[i, k] / U[k, k]
            for j in range(k + 1, n):
                U[i, j] -= f * U[k, j]
    # step k reads row k (final once step k is done) and column k below it (never written by the
    # eliminations, only moved by later swaps, which the reverse loop undoes first); the rows it
    # updates enter linearly, so their old values are not needed
    Ub = np.zeros((n, n))
    for k in range(n - 1, -1, -1):
        ukk = U[k, k]
        for i in range(k + 1, n):
            f = U[i, k] / ukk
            fb = 0.0
            for j in range(k + 1, n):
                fb -= U[k, j] * Ub[i, j]
                Ub[k, j] -= f * Ub[i, j]
            Ub[i, k] += fb / ukk
            Ub[k, k] -= fb * f / ukk
        Ub[k, k] += 1.0 / ukk  # d log|u| / du
        p = piv[k]
        if p != k:
            for j in range(n):
                U[k, j], U[p, j] = U[p, j], U[k, j]
                Ub[k, j], Ub[p, j] = Ub[p, j], Ub[k, j]
    return (Ub,)


# --- RK4 ODE: states stored per step, each step's stages recomputed in the reverse sweep --------------


@numba.njit(nogil=True, error_model="numpy")
def _rhs(x, y, z):
    z[0] = x[0]
    for i in range(1, x.shape[0]):
        z[i] = x[i] * y[i - 1]


@numba.njit(nogil=True, error_model="numpy")
def _rhs_adjoint(x, y, zb, x_bar, y_bar):
    # z = rhs(x, y): accumulates x_bar += dz/dx^T zb, and sets y_bar = dz/dy^T zb
    x_bar[0] += zb[0]
    for i in range(1, x.shape[0]):
        x_bar[i] += zb[i] * y[i - 1]
        y_bar[i - 1] = zb[i] * x[i]
    y_bar[x.shape[0] - 1] = 0.0


@numba.njit(nogil=True, error_model="numpy")
def _combine(out, a, u, b, v):
    # out = a * u + b * v, without temporaries
    for i in range(out.shape[0]):
        out[i] = a * u[i] + b * v[i]


@numba.njit(nogil=True, error_model="numpy")
def _rk4_stages(x, y, h, k1, k2, k3, k4, yt1, yt2, yt3):
    _rhs(x, y, k1)
    _combine(yt1, 1.0, y, 0.5 * h, k1)
    _rhs(x, yt1, k2)
    _combine(yt2, 1.0, y, 0.5 * h, k2)
    _rhs(x, yt2, k3)
    _combine(yt3, 1.0, y, h, k3)
    _rhs(x, yt3, k4)


@numba.njit(nogil=True, error_model="numpy")
def ode_grad(x, s):
    n = x.shape[0]
    h = 2.0 / s
    Y = np.zeros((s + 1, n))
    k1, k2, k3, k4 = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    yt1, yt2, yt3 = np.empty(n), np.empty(n), np.empty(n)
    for step in range(s):
        _rk4_stages(x, Y[step], h, k1, k2, k3, k4, yt1, yt2, yt3)
        for i in range(n):
            Y[step + 1, i] = Y[step, i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
    x_bar = np.zeros(n)
    yb = np.zeros(n)  # the adjoint of y after the step being undone, then of y before it
    yb[n - 1] = 1.0
    seed, kb, tb = np.empty(n), np.empty(n), np.empty(n)
    for step in range(s - 1, -1, -1):
        y = Y[step]
        _rk4_stages(x, y, h, k1, k2, k3, k4, yt1, yt2, yt3)  # recomputed, never stored
        seed[:] = yb  # y_new = y + h/6 (k1 + 2 k2 + 2 k3 + k4)
        _combine(kb, h / 6.0, seed, 0.0, seed)  # adjoint of k4 = rhs(yt3)
        _rhs_adjoint(x, yt3, kb, x_bar, tb)  # tb: adjoint of yt3 = y + h k3
        _combine(yb, 1.0, yb, 1.0, tb)
        _combine(kb, h / 3.0, seed, h, tb)  # adjoint of k3 = rhs(yt2)
        _rhs_adjoint(x, yt2, kb, x_bar, tb)  # tb: adjoint of yt2 = y + h/2 k2
        _combine(yb, 1.0, yb, 1.0, tb)
        _combine(kb, h / 3.0, seed, 0.5 * h, tb)  # adjoint of k2 = rhs(yt1)
        _rhs_adjoint(x, yt1, kb, x_bar, tb)  # tb: adjoint of yt1 = y + h/2 k1
        _combine(yb, 1.0, yb, 1.0, tb)
        _combine(kb, h / 6.0, seed, 0.5 * h, tb)  # adjoint of k1 = rhs(y)
        _rhs_adjoint(x, y, kb, x_bar, tb)
        _combine(yb, 1.0, yb, 1.0, tb)
    return (x_bar,)


# --- k-means: the nearest centroid found again, contributions summed per chunk -------------------------


@numba.njit(nogil=True, parallel=True, error_model="numpy")
def kmeans_grad(points, centroids):
    n, d = points.shape
    k_n = centroids.shape[0]
    partial = np.zeros((CHUNKS, k_n, d))
    for chunk in prange(CHUNKS):
        for i in range(chunk * n // CHUNKS, (chunk + 1) * n // CHUNKS):
            best = math.inf
            arg = 0
            for c in range(k_n):
                d2 = 0.0
                for j in range(d):
                    t = points[i, j] - centroids[c, j]
                    d2 += t * t
                if d2 < best:  # the first nearest, as the primal's `if d2 < best`
                    best = d2
                    arg = c
            for j in range(d):
                partial[chunk, arg, j] -= 2.0 * (points[i, j] - centroids[arg, j])
    grad = np.zeros((k_n, d))
    for chunk in range(CHUNKS):
        grad += partial[chunk]
    return (grad,)


# --- logistic regression: per-sample coefficient, X^T coef summed per chunk -----------------------------


@numba.njit(nogil=True, parallel=True, error_model="numpy")
def logistic_grad(w, X, y, lam):
    n, d = X.shape
    partial = np.zeros((CHUNKS, d))
    for chunk in prange(CHUNKS):
        for i in range(chunk * n // CHUNKS, (chunk + 1) * n // CHUNKS):
            z = 0.0
            for j in range(d):
                z += X[i, j] * w[j]
            margin = y[i] * z
            # d/dz log(1 + exp(-y z)) = -y / (1 + exp(y z)), evaluated without overflow
            if margin > 0.0:
                e = math.exp(-margin)
                coef = -y[i] * e / (1.0 + e)
            else:
                coef = -y[i] / (1.0 + math.exp(margin))
            for j in range(d):
                partial[chunk, j] += coef * X[i, j]
    grad = lam * w
    for chunk in range(CHUNKS):
        grad += partial[chunk]
    return (grad,)


HAND = {
    "gray_scott": gray_scott_grad,
    "lu_logdet": lu_logdet_grad,
    "ode": ode_grad,
    "kmeans": kmeans_grad,
    "logistic": logistic_grad,
}
