"""GradBench's gradient-descent solver (its `cpp/gradbench/gd.hpp`), in Python, for ``particle`` and
``saddle``: the same steps and tolerances, so every tool finds the same point. Each objective and
gradient it calls is compiled code (sourcead's derivatives, numba's primal)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def argmin(objective: Callable, gradient: Callable, start: np.ndarray) -> np.ndarray:
    """The point gradient descent from `start` reaches: steps shrink on a rise, grow after 10 falls."""
    x = np.array(start, dtype=np.float64)
    fx = objective(x)
    gx = gradient(x)
    i, eta = 0, 1e-5
    while True:
        if np.sqrt(np.sum(gx * gx)) <= 1e-5:
            return x
        if i == 10:
            eta *= 2.0
            i = 0
            continue
        x_prime = x - eta * gx
        if np.sqrt(np.sum((x - x_prime) ** 2)) <= 1e-5:
            return x
        fx_prime = objective(x_prime)
        if fx_prime < fx:
            x, fx = x_prime, fx_prime
            gx = gradient(x)
            i += 1
        else:
            eta /= 2.0
            i = 0


def argmax(objective: Callable, gradient: Callable, start: np.ndarray) -> np.ndarray:
    return argmin(lambda x: -objective(x), lambda x: -gradient(x), start)
