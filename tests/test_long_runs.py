"""The control-flow workloads at realistic sizes: derivatives against central finite differences
and forward mode against reverse mode (dot-product test)."""

from __future__ import annotations

import numpy as np
import pytest
import zoo
from numeric import assert_close

import sourcead


def _check(func, args, wrt, rtol=1e-6):
    params = func.__code__.co_varnames[: func.__code__.co_argcount]
    rng = np.random.default_rng(8)
    tangents = tuple(
        rng.standard_normal(np.shape(args[params.index(w)])) if np.ndim(args[params.index(w)]) else 1.0 for w in wrt
    )
    grads = sourcead.grad(func, wrt=wrt)(*args)
    reverse = sum(float(np.sum(g * t)) for g, t in zip(grads, tangents, strict=True))
    _, forward = sourcead.jvp(func, wrt=wrt)(*args, tangents=tangents)
    assert_close(forward, reverse, 1e-10, 1e-12)
    eps = 1e-6
    plus, minus = list(args), list(args)
    for w, t in zip(wrt, tangents, strict=True):
        k = params.index(w)
        plus[k], minus[k] = args[k] + eps * t, args[k] - eps * t
    fd = (func(*plus) - func(*minus)) / (2 * eps)
    assert_close(reverse, fd, rtol, 1e-9 * max(1.0, abs(func(*args))))


def test_heat_equation_with_buffer_swaps_200_points_2000_steps():
    x = np.linspace(0.0, 1.0, 200)
    u0 = np.sin(np.pi * x) + 0.2 * np.sin(7 * np.pi * x)
    _check(zoo.heat_swap, (u0, 0.2, 2000), ("u0", "kappa"))


def test_logistic_recurrence_1000_steps():
    _check(zoo.logistic_long, (2.7, 0.4), ("r", "x0"))


@pytest.mark.parametrize("a", [2.0, 17.0, 1e4])
def test_newton_iteration_to_a_tolerance(a):
    _check(zoo.newton_sqrt, (a,), ("a",))
    assert_close(sourcead.grad(zoo.newton_sqrt)(a), 0.5 / np.sqrt(a), 1e-9, 0)


def test_break_and_early_return_at_size():
    x = np.random.default_rng(4).standard_normal(5000)
    _check(zoo.first_passage, (x, 400.0), ("x",))
