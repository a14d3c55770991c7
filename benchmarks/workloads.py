"""Benchmark workloads: loop-style functions in the subset sourcead supports today.

Each is a plain module-level ``def`` (sourcead reads its source) with deterministic inputs.
A new entry in ``WORKLOADS`` is picked up by ``python -m benchmarks.run`` with no other change.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from examples.heat import example_args as heat_args
from examples.heat import heat_loss


@dataclass(frozen=True)
class Workload:
    """One function to time, its inputs and what to differentiate."""

    name: str
    func: Callable
    make_args: Callable[[], tuple]  # deterministic: same arguments in every process
    wrt: tuple[str, ...]
    size: str  # human-readable problem size for the table


def sum_squares(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


def logsumexp_loop(x):
    # no max-shift (that needs a branch): inputs are kept in [-1, 1]
    n = x.shape[0]
    s = 0.0
    for i in range(n):
        s += math.exp(x[i])
    q = 0.0
    for i in range(n):
        q += x[i] * x[i]
    return math.log(s) + 0.5 * q / float(n)


def logistic_map(r, x0):
    # r = 3.2 sits on the stable 2-cycle, so 1000 steps keep a finite, meaningful derivative
    x = x0
    for _k in range(1000):
        x = r * x * (1.0 - x)
    return x


def dense_tanh(W, x):
    s = 0.0
    for i in range(W.shape[0]):
        a = 0.0
        for j in range(W.shape[1]):
            a += W[i, j] * x[j]
        s += math.tanh(a)
    return s


def _vector(n):
    return (np.sin(0.37 * np.arange(n)),)


def _dense_args(m=128, n=128):
    i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    W = np.cos(0.11 * i + 0.07 * j) / math.sqrt(n)
    x = np.sin(0.23 * np.arange(n))
    return W, x


WORKLOADS = (
    Workload("heat", heat_loss, heat_args, ("u0", "kappa"), "200 points x 200 steps"),
    Workload("sum_squares", sum_squares, lambda: _vector(100_000), ("x",), "n = 100000"),
    Workload("logsumexp", logsumexp_loop, lambda: _vector(100_000), ("x",), "n = 100000"),
    Workload("logistic_map", logistic_map, lambda: (3.2, 0.3), ("r", "x0"), "1000 steps"),
    Workload("dense_tanh", dense_tanh, _dense_args, ("W", "x"), "128 x 128"),
)

BY_NAME = {w.name: w for w in WORKLOADS}
