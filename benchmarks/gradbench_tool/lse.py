"""GradBench's ``lse``: log sum_i exp(x_i), computed as a + log sum_i exp(x_i - a) with a the
largest x_i (the eval asks for the primitives, not a built-in LSE); ``gradient`` is its gradient."""

from __future__ import annotations

import math

import sourcead
from benchmarks.gradbench_tool.common import Function, as_list, number, primal, vector

TINY = {"x": [0.3, -0.2, 0.5, 0.1], "min_runs": 1, "min_seconds": 0.0}


def logsumexp(x):
    n = x.shape[0]
    a = x[0]
    for i in range(1, n):
        if x[i] > a:
            a = x[i]
    total = 0.0
    for i in range(n):
        total += math.exp(x[i] - a)
    return a + math.log(total)


def decode(raw):
    return (vector(raw["x"]),)


def define(jit: bool) -> dict[str, Function]:
    return {
        "primal": Function(decode, primal(logsumexp, jit), number),
        "gradient": Function(decode, sourcead.grad(logsumexp, jit=jit), as_list),
    }
