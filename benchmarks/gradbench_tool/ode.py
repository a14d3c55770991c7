"""GradBench's ``ode`` (cmpad's an_ode): y0' = x0, yi' = xi * y(i-1), y(0) = 0, solved to t = 2 by
s steps of classic Runge-Kutta. ``primal`` is y(2); ``gradient`` the gradient of its last
element with respect to x."""

from __future__ import annotations

import numpy as np

import sourcead
from benchmarks.gradbench_tool.common import Function, as_list, primal, vector

TINY = {"x": [0.3, 0.6, 0.2, 0.9], "s": 3, "min_runs": 1, "min_seconds": 0.0}


def ode_solve(x, s):
    n = x.shape[0]
    h = 2.0 / s
    y = np.zeros(n)
    k1 = np.empty(n)
    k2 = np.empty(n)
    k3 = np.empty(n)
    k4 = np.empty(n)
    tmp = np.empty(n)
    for _ in range(s):
        k1[0] = x[0]
        for i in range(1, n):
            k1[i] = x[i] * y[i - 1]
        for i in range(n):
            tmp[i] = y[i] + h * k1[i] / 2.0
        k2[0] = x[0]
        for i in range(1, n):
            k2[i] = x[i] * tmp[i - 1]
        for i in range(n):
            tmp[i] = y[i] + h * k2[i] / 2.0
        k3[0] = x[0]
        for i in range(1, n):
            k3[i] = x[i] * tmp[i - 1]
        for i in range(n):
            tmp[i] = y[i] + h * k3[i]
        k4[0] = x[0]
        for i in range(1, n):
            k4[i] = x[i] * tmp[i - 1]
        for i in range(n):
            y[i] += h * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]) / 6.0
    return y


def ode_last(x, s):
    y = ode_solve(x, s)
    return y[x.shape[0] - 1]


def decode(raw):
    return vector(raw["x"]), int(raw["s"])


def define(jit: bool) -> dict[str, Function]:
    return {
        "primal": Function(decode, primal(ode_solve, jit), as_list),
        "gradient": Function(decode, sourcead.grad(ode_last, wrt="x", jit=jit), as_list),
    }
