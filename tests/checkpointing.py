"""Time loops for the checkpointing tests (`test_checkpoint.py`) and the zoo."""

from __future__ import annotations

import numba
import numpy as np


def heat_swap(u0, k, steps):
    # explicit heat equation with periodic ends and a buffer swap: the state is u, un and the
    # scalars the step assigns
    u = u0.copy()
    un = np.empty_like(u)
    n = u.shape[0]
    for t in range(steps):
        for i in range(n):
            left = u[i - 1] if i > 0 else u[n - 1]
            right = u[i + 1] if i < n - 1 else u[0]
            un[i] = u[i] + k * (left - 2.0 * u[i] + right) - 0.01 * u[i] ** 3
        u, un = un, u
    return np.sum(u * u)


def heat_marked(u0, k, steps):
    u = u0.copy()
    un = np.empty_like(u)
    n = u.shape[0]
    # sourcead: checkpoint
    for t in range(steps):
        for i in range(n):
            left = u[i - 1] if i > 0 else u[n - 1]
            right = u[i + 1] if i < n - 1 else u[0]
            un[i] = u[i] + k * (left - 2.0 * u[i] + right) - 0.01 * u[i] ** 3
        u, un = un, u
    return np.sum(u * u)


def parallel_in_place(u, k, steps):
    # a prange map inside the time loop, a written argument, a step that rebinds a scalar
    un = np.empty_like(u)
    n = u.shape[0]
    energy = 0.0
    for t in range(1, steps + 1):  # sourcead: checkpoint
        for i in numba.prange(1, n - 1):
            un[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1]) - 0.05 * np.sin(u[i])
        for i in range(1, n - 1):
            u[i] = un[i]
        energy = energy * 0.5 + u[1] * u[1] / t
    return np.sum(u * u) + energy


def whole_arrays(x0, A, dt, steps):
    # whole-array state rebound every step, with a matrix product and a scratch array per step
    x = x0.copy()
    for t in range(steps):
        f = A @ x - x**3
        x = x + dt * f
    return np.sum(x * x)


def early_exit(x0, steps):
    # a break: such a loop keeps its records (its trip count is not known at its entry)
    x = x0.copy()
    for t in range(steps):
        x[0] = np.sin(x[0]) * 0.9 + x[1] * 0.1
        if x[0] < 0.01:
            break
    return x[0] * x[1]


def parallel_steps(u0, k, steps):
    # parallel_in_place on a copy (the zoo's functions leave their arguments alone)
    u = u0.copy()
    un = np.empty_like(u)
    n = u.shape[0]
    energy = 0.0
    for t in range(1, steps + 1):  # sourcead: checkpoint
        for i in numba.prange(1, n - 1):
            un[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1]) - 0.05 * np.sin(u[i])
        for i in range(1, n - 1):
            u[i] = un[i]
        energy = energy * 0.5 + u[1] * u[1] / t
    return np.sum(u * u) + energy


def particle_while(x0, v0, drag, dt, t_end):
    # a while loop: how many steps it runs depends on dt and t_end (online checkpointing)
    x = x0.copy()
    v = v0.copy()
    t = 0.0
    while t < t_end:
        for i in range(x.shape[0]):
            a = -x[i] - drag * v[i] * abs(v[i])
            v[i] = v[i] + dt * a
            x[i] = x[i] + dt * v[i]
        t = t + dt
    return np.sum(x * x) + 0.5 * np.sum(v * v)


def heat_until(u0, k, floor, most):
    # a while loop whose condition needs statements (a call): the heat equation with a buffer swap
    # until the largest value falls below floor, or after most steps
    u = u0.copy()
    un = np.empty_like(u)
    n = u.shape[0]
    steps = 0
    # sourcead: checkpoint
    while np.max(np.abs(u)) > floor and steps < most:
        for i in range(n):
            left = u[i - 1] if i > 0 else u[n - 1]
            right = u[i + 1] if i < n - 1 else u[0]
            un[i] = u[i] + k * (left - 2.0 * u[i] + right) - 0.01 * u[i] ** 3
        u, un = un, u
        steps += 1
    return np.sum(u * u) + steps


def nested_steps(u0, k, outer, inner):
    # nested time loops, both marked: each replay of an outer step runs the inner loop with its own
    # snapshots
    u = u0.copy()
    n = u.shape[0]
    total = 0.0
    for s in range(outer):  # sourcead: checkpoint
        for t in range(inner):  # sourcead: checkpoint
            for i in range(1, n - 1):
                u[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1]) * (1.0 + 0.1 * s)
        total = total + u[n // 2] * u[n // 2]
        u[0] = np.sin(u[1])
    return total + np.sum(u * u)


def inner_only(u0, k, outer, inner):
    # only the inner loop marked: it cannot be checkpointed (the outer step is not replayed)
    u = u0.copy()
    n = u.shape[0]
    for s in range(outer):
        for t in range(inner):  # sourcead: checkpoint
            for i in range(1, n - 1):
                u[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1])
    return np.sum(u * u)
