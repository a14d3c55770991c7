"""GradBench's ``particle``: a charged particle, pushed by the field of two charges at (10, 0) and
(10, 10 - w), is integrated by Euler steps until it crosses the x axis; the objective is the square
of where it crosses, and gradient descent finds the w that makes it cross at the origin. The force
is the gradient of the potential: a derivative inside the differentiated objective.

``rr``: the argmin by reverse mode (sourcead.grad of the objective), the force by reverse mode
(a prepared sourcead.grad of the potential); ``fr``: the argmin by forward mode (sourcead.jvp);
``rf``/``ff``: the force by forward mode (a prepared sourcead.jvp, one direction per coordinate).
"""

from __future__ import annotations

import math

import numpy as np

import sourcead
from benchmarks.gradbench_tool.argmin import argmin
from benchmarks.gradbench_tool.common import Function, number

TINY = {"w": 0.0, "min_runs": 1, "min_seconds": 0.0}


def potential(x, w):
    """The electric potential at x of the two charges."""
    a = x[0] - 10.0
    b = x[1] - (10.0 - w)
    return 1.0 / math.sqrt(a * a + b * b) + 1.0 / math.sqrt(a * a + x[1] * x[1])


potential_grad = sourcead.grad(potential, wrt=0)  # the force's reverse mode (minus the force)
potential_jvp = sourcead.jvp(potential, wrt=0)  # its forward mode


def crossing_r(w):
    """x_0(t_f)^2, the force from the potential's gradient by reverse mode."""
    x = np.zeros(2)
    x[1] = 8.0
    xdot = np.zeros(2)
    xdot[0] = 0.75
    dt = 0.1
    result = 0.0
    flying = True
    while flying:
        g = potential_grad(x, w)
        x[0] = x[0] + dt * xdot[0]
        x[1] = x[1] + dt * xdot[1]
        if x[1] <= 0.0:
            x_f = x[0] - x[1] / xdot[1] * xdot[0]
            result = x_f * x_f
            flying = False
        else:
            xdot[0] = xdot[0] - dt * g[0]
            xdot[1] = xdot[1] - dt * g[1]
    return result


def crossing_f(w):
    """The same, the force from two directional derivatives of the potential (forward mode)."""
    x = np.zeros(2)
    x[1] = 8.0
    xdot = np.zeros(2)
    xdot[0] = 0.75
    dt = 0.1
    result = 0.0
    flying = True
    e0 = np.zeros(2)
    e0[0] = 1.0
    e1 = np.zeros(2)
    e1[1] = 1.0
    while flying:
        p0, d0 = potential_jvp(x, w, tangents=e0)
        p1, d1 = potential_jvp(x, w, tangents=e1)
        x[0] = x[0] + dt * xdot[0]
        x[1] = x[1] + dt * xdot[1]
        if x[1] <= 0.0:
            x_f = x[0] - x[1] / xdot[1] * xdot[0]
            result = x_f * x_f
            flying = False
        else:
            xdot[0] = xdot[0] - dt * d0
            xdot[1] = xdot[1] - dt * d1
    return result


def outer(variant: str, jit: bool):
    """(objective, gradient) of w as one-element arrays, for the argmin, in this variant."""
    inner = crossing_r if variant[1] == "r" else crossing_f
    value = sourcead.differentiable(inner) if jit else inner
    if variant[0] == "r":
        derivative = sourcead.grad(inner, jit=jit)

        def gradient(w):
            return np.array([derivative(w[0])])
    else:
        forward = sourcead.jvp(inner, jit=jit)

        def gradient(w):
            return np.array([forward(w[0], tangents=1.0)[1]])

    return (lambda w: value(w[0])), gradient


def solver(variant: str, jit: bool):
    objective, gradient = outer(variant, jit)

    def run(w0: float) -> float:
        return float(argmin(objective, gradient, np.array([w0]))[0])

    return run


def decode(raw):
    return (float(raw["w"]),)


def define(jit: bool) -> dict[str, Function]:
    return {v: Function(decode, solver(v, jit), number) for v in ("rr", "fr", "rf", "ff")}
