"""GradBench's ``llsq`` (cmpad's llsq_obj): y(x) = 1/2 sum_i (s_i - sum_j x_j t_i^j)^2 with
t_i = -1 + 2i/(n-1) and s_i = sign(t_i); ``primal`` is y, ``gradient`` its gradient in x."""

from __future__ import annotations

import sourcead
from benchmarks.gradbench_tool.common import Function, as_list, number, primal, vector

TINY = {"x": [0.3, -0.2, 0.5], "n": 5, "min_runs": 1, "min_seconds": 0.0}


def llsq_objective(x, n):
    m = x.shape[0]
    total = 0.0
    for i in range(n):
        t = -1.0 + i * 2.0 / (n - 1)
        r = 0.0
        if t > 0.0:
            r = 1.0
        elif t < 0.0:
            r = -1.0
        power = 1.0
        for j in range(m):
            r -= x[j] * power
            power *= t
        total += r * r
    return total / 2.0


def decode(raw):
    return vector(raw["x"]), int(raw["n"])


def define(jit: bool) -> dict[str, Function]:
    return {
        "primal": Function(decode, primal(llsq_objective, jit), number),
        "gradient": Function(decode, sourcead.grad(llsq_objective, wrt="x", jit=jit), as_list),
    }
