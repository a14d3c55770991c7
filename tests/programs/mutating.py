"""Functions that write into their argument arrays (their final state is an extra output)."""

import numpy as np


def fill_squares(x, out):
    s = 0.0
    for i in range(x.shape[0]):
        out[i] = x[i] * x[i]
        s += out[i]
    return s


def heat_in_place(u, kappa, n_steps):
    # time stepping that updates its argument in place
    n = u.shape[0]
    v = np.zeros(n)
    for _step in range(n_steps):
        for i in range(1, n - 1):
            v[i] = u[i] + kappa * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(1, n - 1):
            u[i] = v[i]
    s = 0.0
    for i in range(n):
        s += u[i] * u[i]
    return s
