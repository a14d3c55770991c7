"""A reversed loop's strong-zero guards are selects (the pass `strong_zeros`): `strong_zero(p, g)`
evaluates `p` whether or not the seed `g` is zero, so that LLVM vectorises the loop.

Pinned: the loops of heat's reverse sweep call `strong_zero` and keep no conditional expression;
straight-line adjoints and parts that could raise (a division) keep their branch. Checked: the
derivatives of the stencils and time loops it speeds up (heat, two swapped buffers, a stencil
reading the array it writes, ode's RK4) against central differences and forward mode, with and
without numba; and the strong zero itself: a partial that is infinite where the seed is exactly
zero still contributes exactly zero, compiled and in plain Python.
"""

from __future__ import annotations

import libcst as cst
import numpy as np
import pytest

import sourcead
from benchmarks.gradbench_workloads import ode_last  # the tool's, its callee compiled for the primal
from benchmarks.workloads import heat_swap
from examples.heat import heat_loss
from sourcead.postpass.strong_zero import eager_selects


def gauss_seidel(u0, kappa, n_steps):
    # a stencil reading the array it writes (each update sees its left neighbour's new value)
    n = u0.shape[0]
    u = u0.copy()
    for _step in range(n_steps):
        for i in range(1, n - 1):
            u[i] = u[i] + kappa * (u[i - 1] - 2.0 * u[i] + u[i + 1])
    s = 0.0
    for i in range(n):
        s += u[i] * u[i] * u[i]
    return s


def masked_products(x, y, c):
    # t[i] = x[i] * y[i]; y is infinite where c is zero, so t_bar[i] = c[i] = 0 there, and the
    # strong zero says x_bar[i] = y[i] * t_bar[i] is exactly 0 (not inf * 0 = nan)
    n = x.shape[0]
    t = np.zeros(n)
    for i in range(n):
        t[i] = x[i] * y[i]
    s = 0.0
    for i in range(n):
        s += t[i] * c[i]
    return s


def quotients(x, y):
    # a division may raise in plain Python: its guard stays a branch
    n = x.shape[0]
    s = 0.0
    for i in range(n):
        s += x[i] / y[i]
    return s


def _heat_args():
    x = np.linspace(0.0, 1.0, 9)
    return np.sin(np.pi * x) + 0.3 * np.sin(5.0 * np.pi * x), 0.3, 4


CASES = {
    "heat": (heat_loss, _heat_args, ("u0", "kappa")),
    "heat_swap": (heat_swap, _heat_args, ("u0", "kappa")),
    "gauss_seidel": (gauss_seidel, _heat_args, ("u0", "kappa")),
    "ode": (ode_last, lambda: (np.array([0.3, 0.6, 0.2, 0.9, 0.5]), 4), ("x",)),
}


@pytest.mark.parametrize("jit", [True, False])
@pytest.mark.parametrize("name", sorted(CASES))
def test_stencils_and_time_loops_against_differences_and_forward_mode(name, jit):
    f, make_args, wrt = CASES[name]
    report = sourcead.check_derivative(f, *make_args(), wrt=wrt, jit=jit)
    assert report.ok, report


def test_the_reversed_loops_select_and_straight_line_code_branches():
    source = sourcead.grad(heat_loss, wrt=("u0", "kappa"), jit=False).source
    reverse = source.split("# reverse sweep", 1)[1]
    assert "strong_zero(kappa * v_bar[i_1 + 1], v_bar[i_1 + 1])" in reverse
    assert "else 0.0" not in reverse  # every guard of heat's adjoint is in a loop
    straight = sourcead.grad(lambda_free, wrt="x", jit=False).source
    assert "strong_zero" not in straight and "else 0.0" in straight


def lambda_free(x, y):
    return x * y


def test_only_what_cannot_raise_is_evaluated_eagerly():
    # a division, a power or a call could raise in plain Python where the guard would skip it
    text = (
        "def f_vjp(a, g, y, k):\n"
        "    for i in range(3):\n"
        "        a[i] += (y[i] * g if g != 0.0 else 0.0)\n"
        "    # reverse sweep\n"
        "    for i in range(3):\n"
        "        a[i] += (y[i] / g if g != 0.0 else 0.0)\n"
        "        a[i] += (y[i] ** 2.0 * g if g != 0.0 else 0.0)\n"
        "        a[i] += (math.exp(y[i]) * g if g != 0.0 else 0.0)\n"
        "        a[i] += (y[k[i]] * g if g != 0.0 else 0.0)\n"
        "        a[i] += (y[i] * g if i > 0 else 0.0)\n"
        "        a[i] += (-y[2 * i - 1] * (g + 1.0) if g != 0.0 else 0.0)\n"
        "    a[0] += (y[0] * g if g != 0.0 else 0.0)\n"
    )
    tree, changed = eager_selects(cst.parse_module(text), "# reverse sweep")
    new = tree.code
    assert changed
    kept = text.splitlines()
    lines = new.splitlines()
    assert lines[:10] == kept[:10]  # before the marker, the unsafe ones, other tests: unchanged
    assert lines[10] == "        a[i] += strong_zero(-y[2 * i - 1] * (g + 1.0), g)"
    assert lines[11] == kept[11]  # straight-line code keeps its branch


@pytest.mark.parametrize("jit", [True, False])
def test_an_infinite_partial_under_a_zero_seed_adds_exactly_zero(jit):
    x = np.array([1.0, 2.0, 3.0, 4.0])
    y = np.array([0.5, np.inf, -1.5, -np.inf])
    c = np.array([2.0, 0.0, 3.0, 0.0])
    gradient = sourcead.grad(masked_products, wrt="x", jit=jit)
    assert "strong_zero(y[" in gradient.source
    with np.errstate(all="ignore"):
        got = gradient(x, y, c)
    np.testing.assert_array_equal(got, np.array([1.0, 0.0, -4.5, 0.0]))  # y * c, and 0 where c = 0


def aliased_last(x, k):
    # `y = z`: another name for z's buffer has z's shape (analysis/contract_walk.py), so the read
    # y[x.shape[0] - 1] needs no bounds checks, and y[k] one fact checked at the call
    n = x.shape[0]
    z = np.zeros(n)
    for i in range(n):
        z[i] = x[i] * x[i]
    y = z
    return y[x.shape[0] - 1] + y[k]


@pytest.mark.parametrize("jit", [True, False])
def test_a_second_name_for_a_buffer_keeps_its_shape_and_its_index_checks(jit):
    x = np.array([0.5, -1.0, 2.0, 3.0])
    report = sourcead.check_derivative(aliased_last, x, 1, wrt="x", jit=jit)
    assert report.ok, report
    gradient = sourcead.grad(aliased_last, wrt="x", jit=jit)
    np.testing.assert_array_equal(gradient(x, 1), np.array([0.0, -2.0, 0.0, 6.0]))
    with pytest.raises(Exception, match="(?i)index|range|shape"):
        gradient(x, 4)  # out of range: refused, never read past the buffer
