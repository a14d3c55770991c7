"""Vectorised JAX versions of the GradBench-style workloads, for ``jax.jit(jax.grad(...))``.

Imported only by the JAX child process of ``benchmarks.gradbench`` (JAX is an optional extra, and
its thread pool must not share a process with numba's). Each function takes the same arguments as
its loop-style twin in ``benchmarks.gradbench_workloads`` and computes the same value, written the
way a JAX user would: whole-array operations, ``lax.fori_loop`` / ``lax.scan`` for time loops,
``jnp.linalg.slogdet`` for the determinant. ``particle`` has no entry: its trajectory loop runs
until a data-dependent crossing, and ``jax.grad`` cannot differentiate a ``lax.while_loop``.
"""

from __future__ import annotations

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402  (after enabling float64)
from jax import lax  # noqa: E402
from jax.scipy.special import logsumexp  # noqa: E402


def gmm(alpha, mu, q, lower, x, gamma, m, constant):
    n, d = x.shape
    k_n = alpha.shape[0]
    rows, cols = [], []
    for c in range(d):  # the strictly lower part, column by column, as the loop version reads it
        for r in range(c + 1, d):
            rows.append(r)
            cols.append(c)
    Q = jnp.zeros((k_n, d, d)).at[:, jnp.array(rows), jnp.array(cols)].set(lower)
    Q = Q + jax.vmap(jnp.diag)(jnp.exp(q))
    xc = x[:, None, :] - mu[None, :, :]
    qx = jnp.einsum("krc,nkc->nkr", Q, xc)
    main = alpha + jnp.sum(q, axis=1) - 0.5 * jnp.sum(qx * qx, axis=2)
    prior = jnp.sum(0.5 * gamma * gamma * jnp.exp(2.0 * q) - m * q) + 0.5 * gamma * gamma * jnp.sum(lower**2)
    return jnp.sum(logsumexp(main, axis=1)) - n * logsumexp(alpha) - prior + constant


def ba(cams, X, w, obs, feats):
    cam = cams[obs[:, 0]]
    pt = X[obs[:, 1]]
    rot, centre = cam[:, 0:3], cam[:, 3:6]
    d = pt - centre
    theta = jnp.sqrt(jnp.sum(rot * rot, axis=1, keepdims=True))  # never near 0 on these inputs
    axis = rot / theta
    co, si = jnp.cos(theta), jnp.sin(theta)
    dot = jnp.sum(axis * d, axis=1, keepdims=True)
    r = d * co + jnp.cross(axis, d) * si + axis * dot * (1.0 - co)
    p = r[:, 0:2] / r[:, 2:3]
    rsq = jnp.sum(p * p, axis=1, keepdims=True)
    dist = 1.0 + cam[:, 9:10] * rsq + cam[:, 10:11] * rsq * rsq
    proj = cam[:, 6:7] * dist * p + cam[:, 7:9]
    res = w[:, None] * (proj - feats)
    return jnp.sum(res * res) + jnp.sum((1.0 - w * w) ** 2)


def lstm(main_params, extra_params, state, sequence):
    n_layers = main_params.shape[0] // 2
    b = sequence.shape[1]

    def step(st, pair):
        x = pair[0] * extra_params[0]
        new = []
        for layer in range(n_layers):
            wt, bias = main_params[2 * layer], main_params[2 * layer + 1]
            h, c = st[2 * layer], st[2 * layer + 1]
            forget = jax.nn.sigmoid(x * wt[:b] + bias[:b])
            ingate = jax.nn.sigmoid(h * wt[b : 2 * b] + bias[b : 2 * b])
            outgate = jax.nn.sigmoid(x * wt[2 * b : 3 * b] + bias[2 * b : 3 * b])
            change = jnp.tanh(h * wt[3 * b :] + bias[3 * b :])
            c = c * forget + ingate * change
            h = outgate * jnp.tanh(c)
            new += [h, c]
            x = h
        ypred = x * extra_params[1] + extra_params[2]
        lse = jnp.log(2.0 + jnp.sum(jnp.exp(ypred)))
        return jnp.stack(new), jnp.sum(pair[1] * (ypred - lse))

    pairs = jnp.stack([sequence[:-1], sequence[1:]], axis=1)
    _, terms = lax.scan(step, state, pairs)
    return -jnp.sum(terms) / ((sequence.shape[0] - 1) * b)


def ode(x, s):
    h = 2.0 / s

    def rhs(y):
        return jnp.concatenate([x[:1], x[1:] * y[:-1]])

    def step(_, y):
        k1 = rhs(y)
        k2 = rhs(y + 0.5 * h * k1)
        k3 = rhs(y + 0.5 * h * k2)
        k4 = rhs(y + h * k3)
        return y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    return lax.fori_loop(0, s, step, jnp.zeros_like(x))[-1]


def lu_logdet(A):
    return jnp.linalg.slogdet(A)[1]


def nbody(p0, v0, m, n_steps, dt):
    eps2 = 0.01

    def step(_, pv):
        p, v = pv
        d = p[None, :, :] - p[:, None, :]  # d[i, j] = p[j] - p[i]
        r2 = jnp.sum(d * d, axis=2) + eps2
        a = jnp.sum(d * (m[None, :] / (r2 * jnp.sqrt(r2)))[:, :, None], axis=1)
        v = v + dt * a
        return p + dt * v, v

    p, v = lax.fori_loop(0, n_steps, step, (p0, v0))
    d = p[None, :, :] - p[:, None, :]
    inv = 1.0 / jnp.sqrt(jnp.sum(d * d, axis=2) + eps2)
    pairs = jnp.triu(m[:, None] * m[None, :] * inv, k=1)
    return 0.5 * jnp.sum(m[:, None] * v * v) - jnp.sum(pairs)


def gray_scott(u0, v0, feed, kill, n_steps):
    du, dv, dt = 0.16, 0.08, 1.0

    def lap(a):
        return jnp.roll(a, -1, 0) + jnp.roll(a, 1, 0) + jnp.roll(a, -1, 1) + jnp.roll(a, 1, 1) - 4.0 * a

    def step(_, uv):
        u, v = uv
        uvv = u * v * v
        return (
            u + dt * (du * lap(u) - uvv + feed * (1.0 - u)),
            v + dt * (dv * lap(v) + uvv - (feed + kill) * v),
        )

    u, v = lax.fori_loop(0, n_steps, step, (u0, v0))
    return 0.5 * jnp.sum(u * u + v * v)


def kmeans(points, centroids):
    d2 = jnp.sum((points[:, None, :] - centroids[None, :, :]) ** 2, axis=2)
    return jnp.sum(jnp.min(d2, axis=1))


def logistic(w, X, y, lam):
    margin = y * (X @ w)
    return jnp.sum(jnp.logaddexp(0.0, -margin)) + 0.5 * lam * jnp.sum(w * w)


VECTORISED = {
    "gmm": gmm,
    "ba": ba,
    "lstm": lstm,
    "ode": ode,
    "lu_logdet": lu_logdet,
    "nbody": nbody,
    "gray_scott": gray_scott,
    "kmeans": kmeans,
    "logistic": logistic,
}
