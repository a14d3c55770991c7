"""Explicit-Euler 1-D heat equation: a loss to differentiate with respect to the
initial state ``u0`` and the diffusion number ``kappa``.

Written in the loop style sourcead supports: ``for`` over ``range`` only,
element-by-element reads and writes, no branches, one return at the end.
"""

import numpy as np


def heat_loss(u0, kappa, n_steps):
    """Half the squared norm of the state after ``n_steps`` explicit-Euler steps
    of u_t = u_xx (fixed ends; ``kappa`` = dt/dx**2, stable for kappa <= 0.5)."""
    n = u0.shape[0]
    u = u0.copy()
    v = np.zeros_like(u)
    for _step in range(n_steps):
        for i in range(1, n - 1):
            v[i] = u[i] + kappa * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        # copy back element by element: the ends keep their initial values
        for i in range(1, n - 1):
            u[i] = v[i]
    s = 0.0
    for i in range(n):
        s += u[i] * u[i]
    return 0.5 * s


def example_args(n_points=200, n_steps=200):
    """Deterministic inputs: a smooth bump plus a high mode, kappa well inside the stable range."""
    x = np.linspace(0.0, 1.0, n_points)
    u0 = np.sin(np.pi * x) + 0.3 * np.sin(9.0 * np.pi * x) + 0.1 * x
    return u0, 0.25, n_steps


if __name__ == "__main__":
    print(heat_loss(*example_args()))
