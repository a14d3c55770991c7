"""GradBench's ``saddle``: min over p1 of max over p2 of f(p1, p2) = |p1|^2 - |p2|^2 (GradBench's
objective(x1, y1, x2, y2) = (x1^2 + y1^2) - (x2^2 + y2^2) with p1 = (x1, y1), p2 = (x2, y2)), both
by GradBench's gradient descent (`argmin.py`) from the same start. The objective of the argmin runs
the inner argmax, whose steps call f's gradient in y: the argmin's gradient differentiates through
that loop, a derivative inside a differentiated function. Then the argmax at the x found.

The first letter is the argmin's mode (``r``: sourcead.grad; ``f``: sourcead.jvp, one direction
per coordinate), the second the argmax's (a prepared sourcead.grad or sourcead.jvp of f in y).
"""

from __future__ import annotations

import math

import numpy as np

import sourcead
from benchmarks.gradbench_tool.argmin import argmax, argmin
from benchmarks.gradbench_tool.common import Function, as_list, vector

TINY = {"start": [1.0, 1.0], "min_runs": 1, "min_seconds": 0.0}


def f(p1, p2):
    return (p1[0] * p1[0] + p1[1] * p1[1]) - (p2[0] * p2[0] + p2[1] * p2[1])


f_grad = sourcead.grad(f, wrt=1)  # in y, by reverse mode
f_jvp = sourcead.jvp(f, wrt=1)  # in y, by forward mode


def grad_y_r(p1, p2):
    """f's gradient in p2, by reverse mode (its two entries)."""
    g = f_grad(p1, p2)
    return g[0], g[1]


def grad_y_f(p1, p2):
    """f's gradient in p2, by forward mode: one direction per entry."""
    e0 = np.zeros(2)
    e0[0] = 1.0
    e1 = np.zeros(2)
    e1[1] = 1.0
    v0, d0 = f_jvp(p1, p2, tangents=e0)
    v1, d1 = f_jvp(p1, p2, tangents=e1)
    return d0, d1


def max_r(p1, start):
    """max over p2 of f(p1, p2): gd.hpp's descent on -f from start, p2's gradient by reverse mode."""
    y = start.copy()
    y_prime = start.copy()
    fy = -f(p1, y)
    g0, g1 = grad_y_r(p1, y)
    i = 0
    eta = 1e-5
    going = True
    while going:
        if math.sqrt(g0 * g0 + g1 * g1) <= 1e-5:
            going = False
        elif i == 10:
            eta = eta * 2.0
            i = 0
        else:
            y_prime[0] = y[0] + eta * g0  # descent on -f: its gradient is -(g0, g1)
            y_prime[1] = y[1] + eta * g1
            d0 = y[0] - y_prime[0]
            d1 = y[1] - y_prime[1]
            if math.sqrt(d0 * d0 + d1 * d1) <= 1e-5:
                going = False
            else:
                fy_prime = -f(p1, y_prime)
                if fy_prime < fy:
                    y[0] = y_prime[0]
                    y[1] = y_prime[1]
                    fy = fy_prime
                    g0, g1 = grad_y_r(p1, y)
                    i = i + 1
                else:
                    eta = eta / 2.0
                    i = 0
    return f(p1, y)


def max_f(p1, start):
    """max over p2 of f(p1, p2): gd.hpp's descent on -f from start, p2's gradient by forward mode."""
    y = start.copy()
    y_prime = start.copy()
    fy = -f(p1, y)
    g0, g1 = grad_y_f(p1, y)
    i = 0
    eta = 1e-5
    going = True
    while going:
        if math.sqrt(g0 * g0 + g1 * g1) <= 1e-5:
            going = False
        elif i == 10:
            eta = eta * 2.0
            i = 0
        else:
            y_prime[0] = y[0] + eta * g0  # descent on -f: its gradient is -(g0, g1)
            y_prime[1] = y[1] + eta * g1
            d0 = y[0] - y_prime[0]
            d1 = y[1] - y_prime[1]
            if math.sqrt(d0 * d0 + d1 * d1) <= 1e-5:
                going = False
            else:
                fy_prime = -f(p1, y_prime)
                if fy_prime < fy:
                    y[0] = y_prime[0]
                    y[1] = y_prime[1]
                    fy = fy_prime
                    g0, g1 = grad_y_f(p1, y)
                    i = i + 1
                else:
                    eta = eta / 2.0
                    i = 0
    return f(p1, y)


def outer(variant: str, jit: bool, start: np.ndarray):
    """(objective, gradient) of x for the argmin, in this variant."""
    inner = max_r if variant[1] == "r" else max_f
    value = sourcead.differentiable(inner) if jit else inner
    if variant[0] == "r":
        derivative = sourcead.grad(inner, wrt=0, jit=jit)
        return (lambda x: value(x, start)), (lambda x: derivative(x, start))
    forward = sourcead.jvp(inner, wrt=0, jit=jit)
    units = np.eye(2)

    def gradient(x):
        return np.array([forward(x, start, tangents=units[k])[1] for k in range(2)])

    return (lambda x: value(x, start)), gradient


def solver(variant: str, jit: bool):
    inner_grad = grad_y_r if variant[1] == "r" else grad_y_f
    compiled_f = sourcead.differentiable(f) if jit else f
    cache: dict = {}

    def run(start: np.ndarray) -> np.ndarray:
        key = tuple(start)
        if key not in cache:
            cache.clear()
            cache[key] = outer(variant, jit, start)
        objective, gradient = cache[key]
        x = argmin(objective, gradient, start)
        y = argmax(lambda y: compiled_f(x, y), lambda y: np.array(inner_grad(x, y)), start)
        return np.concatenate([x, y])

    return run


def decode(raw):
    return (vector(raw["start"]),)


def define(jit: bool) -> dict[str, Function]:
    return {v: Function(decode, solver(v, jit), as_list) for v in ("rr", "fr", "rf", "ff")}
