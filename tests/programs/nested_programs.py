"""Programs that call a derivative inside the function a transform differentiates (issue 42)."""

import numpy as np
from numba import prange

import sourcead as ad


def potential(x, q):
    """A charged particle in a smooth well: a float of the position x and the charge q."""
    return q * np.sum(x * x * x * x) / 4.0 + q * q * np.sum(np.sin(x))


force = ad.grad(potential, wrt=0)


def simulate(x0, q, dt, steps):
    x = x0.copy()
    v = np.zeros_like(x0)
    for _ in range(steps):
        v = v - dt * force(x, q)
        x = x + dt * v
    return np.sum(x * x)


def simulate_njit_call(x0, q, dt, steps):
    """The same, through the prepared object's `.njit`."""
    x = x0.copy()
    v = np.zeros_like(x0)
    for _ in range(steps):
        v = v - dt * force.njit(x, q)
        x = x + dt * v
    return np.sum(x * x)


def spring_energy(k, x):
    """A float argument before the one differentiated: the inner gradient is wrt position 1."""
    return 0.5 * k * np.sum(x * x * (1.0 + 0.1 * x * x))


stiff = ad.grad(spring_energy, wrt=1)


def spring(x0, k, dt, steps):
    x = x0.copy()
    for _ in range(steps):
        x = x - dt * stiff(k, x)
    return np.sum(np.sin(x))


pot_jvp = ad.jvp(potential, wrt=0)


def simulate_forward_inner(x0, q, dt, steps):
    """The force by forward mode: one directional derivative per coordinate (GradBench's `*f`)."""
    x = x0.copy()
    v = np.zeros_like(x0)
    for step in range(steps):
        force_now = np.zeros_like(x)
        for k in range(x.shape[0]):
            e = np.zeros_like(x)
            e[k] = 1.0
            value, slope = pot_jvp(x, q, tangents=e)
            force_now[k] = slope
        v = v - dt * force_now
        x = x + dt * v
    return np.sum(x * x)


def field_energy(X, q):
    """Each row a particle: the squared force on each, in parallel (one inner gradient per iteration)."""
    n = X.shape[0]
    e = np.zeros(n)
    for i in prange(n):
        f = force(X[i], q)
        e[i] = np.sum(f * f)
    return np.sum(e)


def loss(w, X, y):
    r = X @ w - y
    return np.sum(r * r) / y.shape[0] + 0.01 * np.sum(w * w)


loss_grad = ad.grad(loss, wrt=0)


def tuned(lr, w0, X, y, X_val, y_val):
    """The validation loss after 30 gradient steps of size lr: its gradient tunes lr."""
    w = w0.copy()
    for _ in range(30):
        w = w - lr * loss_grad(w, X, y)
    return loss(w, X_val, y_val)
