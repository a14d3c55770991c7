"""Stencils at constant offsets of the loop variable, whose adjoints are gathered (`gather.py`),
and neighbours of them that must keep their scatter. In the zoo (numeric checks, golden files)
and in test_gather.py (short ranges, where only some contributions exist)."""

import numba
import numpy as np


def wide_stencil(u0, c, steps):
    # offsets -2 .. 3, linear and not (a product of two neighbours), buffers swapped every step
    n = u0.shape[0]
    u = u0.copy()
    v = u0.copy()
    for _t in range(steps):
        for i in range(2, n - 3):
            v[i] = u[i] + c * (u[i + 3] - 2.0 * u[i - 2]) - 0.1 * u[i - 1] * u[i + 1]
        u, v = v, u
    return np.sum(u * u)


def five_point(u0, kappa, steps):
    # a 2-D Laplacian: the rows u_bar[i +- 1, j] are gathered along i (inside the loop over j, as
    # written), the columns u_bar[i, j +- 1] along j on the lines the first gather leaves
    n = u0.shape[0]
    m = u0.shape[1]
    u = u0.copy()
    v = u0.copy()
    for _t in range(steps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                v[i, j] = u[i, j] + kappa * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
        u, v = v, u
    return 0.5 * np.sum(u * u)


def one_sided(x, w, lo):
    # one offset only (no ends to guard), a bound that is an argument, and a subtraction
    n = x.shape[0]
    y = np.zeros(n)
    for i in range(lo, n - 2):
        y[i] = w * x[i + 2] - x[i + 1] * x[i + 1]
    s = 0.0
    for i in range(n):
        s += y[i] * y[i]
    return s


def short_range(x, k):
    # offsets -2 and +1 over range(2, n - 1): with n < 6 the middle is empty and the ends overlap
    n = x.shape[0]
    y = np.zeros(n)
    for i in range(2, n - 1):
        y[i] = k * x[i - 2] + x[i + 1] * x[i + 1]
    s = 0.0
    for i in range(n):
        s += (i + 1.0) * y[i]
    return s


def rosenbrock(x):
    # a temporary shared by the contributions at offsets 0 and 1, inlined into each, at the ends too
    s = 0.0
    for i in range(x.shape[0] - 1):
        s += 100.0 * (x[i + 1] - x[i] * x[i]) ** 2 + (1.0 - x[i]) ** 2
    return s


def marked_stencil(x, c):
    # a checkpointed loop reverses one step at a time, each with all its adjoint lines: its
    # neighbours' contributions must not be left to a gather it never runs (fuzz seed 61)
    n = x.shape[0]
    y = x * x
    t = y[1] * y[2]  # its adjoint reads the old y: the loop's writes are recorded
    # sourcead: checkpoint
    for i in range(1, n - 1):
        y[i] = c * x[i - 1] + x[i + 1] * x[i]
    return t + np.sum(y * y)


def laplacian_scalar(u0, kappa, steps):
    # five_point with the Laplacian in a scalar of its own: its contributions read lap_bar, which
    # each iteration adds to and resets, and only the loop mentions: gathered with lap_bar
    # inlined as what the iteration added to it before (kappa * v_bar[i, j])
    n = u0.shape[0]
    m = u0.shape[1]
    u = u0.copy()
    v = u0.copy()
    for _t in range(steps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                lap = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]
                v[i, j] = u[i, j] + kappa * lap
        u, v = v, u
    return 0.5 * np.sum(u * u)


def rows_in_prange(u0, kappa, steps):
    # the 2-D diffusion as numba users parallelise it: a prange over rows, whose adjoint gathers
    # the rows u_bar[i +- 1, j] in a prange of its own instead of 16 chunk rows of u_bar
    n = u0.shape[0]
    m = u0.shape[1]
    u = u0.copy()
    v = u0.copy()
    for _t in range(steps):
        for i in numba.prange(1, n - 1):
            for j in range(1, m - 1):
                v[i, j] = u[i, j] + kappa * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
        u, v = v, u
    return 0.5 * np.sum(u * u)


def written_twice(x, a):
    # v[i] written twice in one iteration: the first write's adjoint reads v_bar[i] after the
    # second's reset; the loop reads v, so its reversal stays descending, with its scatter
    n = x.shape[0]
    v = np.zeros(n)
    for i in range(1, n - 1):
        v[i] = a * x[i - 1]
        v[i] = v[i] * x[i + 1]
    return np.sum(v * v)


def scalar_sums(x, a, b, m):
    # sums into scalar adjoints alone, no stencil: a_bar and b_bar (by `-=`, inside the loop over j)
    # are summed in a loop of their own; x_bar[i], at the index alone, stays with the loop, where the
    # loop over j sums it locally
    n = x.shape[0]
    y = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            y[i, j] = a * x[i] - b * x[i] * x[i] * (j + 1.0)
    s = 0.0
    for i in range(n):
        for j in range(m):
            s += y[i, j] * y[i, j]
    return s


def ring(x, k, steps):
    # 1-D periodic neighbours, each written in another of the idioms rings.py knows: in range by
    # the shape contract (no bounds checks); a serial loop keeps its scatter
    n = x.shape[0]
    u = x.copy()
    un = np.empty(n)
    for _t in range(steps):
        for i in range(n):
            ip = i + 1
            if ip >= n:
                ip -= n
            im = i - 1
            if im == -1:
                im = im + n
            un[i] = u[i] + k * (u[ip] - 2.0 * u[i] + u[im]) - 0.02 * u[i] * u[i] * u[i]
        u, un = un, u
    return np.sum(u * u)


def ring_in_prange(x, k, steps):
    # the same, mapped in parallel: the adjoint gathers around the ring in a prange of its own
    n = x.shape[0]
    u = x.copy()
    un = np.empty(n)
    for _t in range(steps):
        for i in numba.prange(n):
            ip = i + 1
            if ip == n:
                ip = 0
            im = i - 1
            if im < 0:
                im = n - 1
            un[i] = u[i] + k * (u[ip] - 2.0 * u[i] + u[im]) - 0.02 * u[i] * u[i] * u[i]
        u, un = un, u
    return np.sum(u * u)


def modulo_reaction(u0, v0, feed, steps):
    # two fields on a periodic grid, neighbours written with %, rows in prange; v swaps with a
    # buffer made from u0's sizes: normalize writes ring indices, the contract checks v0's shape
    n = u0.shape[0]
    m = u0.shape[1]
    u = u0.copy()
    v = v0.copy()
    un = np.empty((n, m))
    vn = np.empty((n, m))
    for _t in range(steps):
        for i in numba.prange(n):
            for j in range(m):
                lap_u = u[(i + 1) % n, j] + u[(i - 1) % n, j] + u[i, (j + 1) % m] + u[i, (j - 1) % m] - 4.0 * u[i, j]
                lap_v = v[(i + 1) % n, j] + v[(i + n - 1) % n, j] + v[i, (1 + j) % m] + v[i, (j - 1) % m]
                uvv = u[i, j] * v[i, j] * v[i, j]
                un[i, j] = u[i, j] + 0.2 * lap_u - uvv + feed * (1.0 - u[i, j])
                vn[i, j] = v[i, j] + 0.1 * (lap_v - 4.0 * v[i, j]) + uvv - feed * v[i, j]
        u, un = un, u
        v, vn = vn, v
    return np.sum(u * u) + np.sum(v * v)


def ring_product(x, k):
    # ring neighbours multiplied: each contribution's value reads the other neighbour, which the
    # reversed iterations compute again, so they keep their scatter; still in range by the contract
    n = x.shape[0]
    y = np.zeros(n)
    for i in range(n):
        ip = i + 1
        if ip == n:
            ip = 0
        im = i - 1
        if im < 0:
            im += n
        y[i] = x[i] + k * x[ip] * x[im]
    return np.sum(y * y)


def ring_rows_in_prange(u0, kappa, steps):
    # a 2-D periodic diffusion, rows in parallel: the rows u_bar[ip, j], u_bar[im, j] gathered in
    # a prange of their own (the columns, in each iteration's serial loop, keep their scatter);
    # complete contract, so the module compiles parallel (a bounds-checked one compiles serially)
    n = u0.shape[0]
    m = u0.shape[1]
    u = u0.copy()
    v = np.empty((n, m))
    for _t in range(steps):
        for i in numba.prange(n):
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
                v[i, j] = u[i, j] + kappa * (u[ip, j] + u[im, j] + u[i, jp] + u[i, jm] - 4.0 * u[i, j])
        u, v = v, u
    return 0.5 * np.sum(u * u)
