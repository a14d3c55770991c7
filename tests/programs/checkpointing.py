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


@numba.njit
def _rk4_rhs(x, y, z):
    z[0] = x[0]
    for i in range(1, x.shape[0]):
        z[i] = x[i] * y[i - 1] - 0.1 * np.sin(y[i])


def rk4_stages(x, s):
    # RK4 with scratch arrays: each step fills k1 .. k4 and yt before reading them, so a snapshot
    # holds y alone (coverage.py)
    n = x.shape[0]
    h = 1.0 / s
    y = np.zeros(n)
    yt = np.empty(n)
    k1 = np.empty(n)
    k2 = np.empty(n)
    k3 = np.empty(n)
    k4 = np.empty(n)
    for _step in range(s):  # sourcead: checkpoint
        _rk4_rhs(x, y, k1)
        for i in range(n):
            yt[i] = y[i] + 0.5 * h * k1[i]
        _rk4_rhs(x, yt, k2)
        for i in range(n):
            yt[i] = y[i] + 0.5 * h * k2[i]
        _rk4_rhs(x, yt, k3)
        for i in range(n):
            yt[i] = y[i] + h * k3[i]
        _rk4_rhs(x, yt, k4)
        for i in range(n):
            y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
    return np.sum(y * y)


def carried_corner(x, s):
    # each step writes a[1:] first, then reads a[0], which only the end of the step before wrote:
    # a is part of the state
    n = x.shape[0]
    y = x.copy()
    a = np.zeros(n)
    for _step in range(s):  # sourcead: checkpoint
        for i in range(1, n):
            a[i] = np.sin(y[i])
        for i in range(n):
            y[i] = y[i] + 0.1 * a[i] * a[0]
        a[0] = y[0] * y[n - 1]
    return np.sum(y * y) + a[0]


def read_before_the_loop(x, s):
    # a scratch array each step fills before reading it, whose values before the loop an adjoint
    # outside the loop reads (c): a is part of the state
    n = x.shape[0]
    a = x * 2.0
    c = np.sum(a * a)
    y = x.copy()
    for _step in range(s):  # sourcead: checkpoint
        for i in range(n):
            a[i] = np.cos(y[i])
        for i in range(n):
            y[i] = y[i] * a[i]
    return np.sum(y) + c


def read_in_place(x, s):
    # a[i] += ... reads a[i]: the step does not fill a before it reads it; a is part of the state
    n = x.shape[0]
    y = x.copy()
    a = np.zeros(n)
    for _step in range(s):  # sourcead: checkpoint
        for i in range(n):
            a[i] += 0.5 * y[i]
        for i in range(n):
            y[i] = np.sin(y[i]) + 0.1 * a[i]
    return np.sum(y * y)


def scratch_returned(x, s):
    # the scratch array is the result: the reverse sweep's replays write it with earlier steps'
    # values, so the value returned must be a copy taken before
    n = x.shape[0]
    y = x.copy()
    a = np.empty(n)
    for _step in range(s):  # sourcead: checkpoint
        for i in range(n):
            a[i] = 2.0 * y[i]  # linear: no adjoint reads a, so nothing records it
        for i in range(n):
            y[i] = np.sin(y[i]) + 0.3 * a[i]
    return a


def swap_stencil(u0, k, steps):
    # heat_swap's shape: the step writes v whole (both ends, then the interior) before the swap, so
    # a snapshot holds u alone; v names either buffer, both made with u0's length
    n = u0.shape[0]
    u = u0.copy()
    v = np.zeros(n)
    for _step in range(steps):  # sourcead: checkpoint
        v[0] = u[0]
        v[n - 1] = u[n - 1]
        for i in range(1, n - 1):
            v[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1]) - 0.02 * u[i] ** 3
        u, v = v, u
    return np.sum(u * u)


def swap_grid(u0, v0, f, steps):
    # 2-D periodic reaction-diffusion with two swapped pairs, as gray_scott: each step writes un
    # and vn whole (a nest over the shape each was made with, one transposed) before the swaps
    n = u0.shape[0]
    m = u0.shape[1]
    nv = v0.shape[0]
    mv = v0.shape[1]
    u = u0.copy()
    v = v0.copy()
    un = np.empty((n, m))
    vn = np.empty_like(v0)
    for _step in range(steps):  # sourcead: checkpoint
        for i in range(n):
            ip = i + 1
            if ip == n:
                ip = 0
            for j in range(m):
                lap = u[ip, j] + u[i - 1, j] + u[i, (j + 1) % m] + u[i, j - 1] - 4.0 * u[i, j]
                un[i, j] = u[i, j] + 0.1 * lap - u[i, j] * v[i, j] * v[i, j] + f * (1.0 - u[i, j])
        for j in range(mv):
            for i in range(nv):
                vn[i, j] = v[i, j] + u[i, j] * v[i, j] * v[i, j] - (f + 0.05) * v[i, j]
        u, un = un, u
        v, vn = vn, v
    return 0.5 * np.sum(u * u + v * v)


def fixed_rim(u0, k, steps):
    # the step writes the interior of un only: the rims of the two buffers (u0's, zeros) stay as
    # they were made and reach u in turn; un is part of the state
    n = u0.shape[0]
    m = u0.shape[1]
    u = u0.copy()
    un = np.zeros((n, m))
    for _step in range(steps):  # sourcead: checkpoint
        for i in range(1, n - 1):
            for j in range(m):
                un[i, j] = u[i, j] + k * (u[i - 1, j] + u[i + 1, j] - 2.0 * u[i, j]) * u[i, j]
        u, un = un, u
    return np.sum(u * u)


def rk4_sizes_spelled(x, s):
    # rk4_stages with each fill spelled by the filled array's own size: `range(len(yt))`,
    # `range(k1.shape[0])` (a size read is not a read of the values)
    n = x.shape[0]
    h = 1.0 / s
    y = np.zeros(n)
    yt = np.empty(n)
    k1 = np.empty_like(y)
    k2 = np.empty(n)
    for _step in range(s):  # sourcead: checkpoint
        k1[0] = x[0]
        for i in range(1, k1.shape[0]):
            k1[i] = x[i] * y[i - 1] - 0.1 * np.sin(y[i])
        for i in range(len(yt)):
            yt[i] = y[i] + 0.5 * h * k1[i]
        k2[0] = x[0]
        for i in range(1, k2.shape[0]):
            k2[i] = x[i] * yt[i - 1] - 0.1 * np.sin(yt[i])
        for i in range(n):
            y[i] += 0.5 * h * (k1[i] + k2[i])
    return np.sum(y * y)


def weights_changed_after_the_branch(x, w, s, smooth):
    # fuzz 98:381: a checkpointed loop inside a branch reads `w`, which a statement after the
    # branch overwrites; `w` was left out of the snapshots (only the statements after the loop in
    # its own branch counted), so the replays read the new weights (no adjoint reads `w`: nothing
    # else restores it)
    y = x.copy()
    if smooth:
        for _step in range(s):
            for i in range(y.shape[0]):
                y[i] = np.sin(y[i]) + w[i]
    else:
        y[0] = 2.0 * y[0]
    for i in range(w.shape[0]):
        w[i] = 0.5
    return np.sum(y * y)
