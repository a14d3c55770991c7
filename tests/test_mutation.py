"""A function that writes into an argument array has that array's final state as an extra output.

jvp returns `((result, a_final), (result_dot, a_dot))`, vjp takes `cotangent=(c_result, c_a)`,
grad differentiates the result alone. The caller's arrays are never modified by a derivative.
"""

from __future__ import annotations

import mutating as mu
import numpy as np
from numeric import assert_close

import sourcead

RNG = np.random.default_rng(3)


def functional(func, mutated_position):
    """The pure function (args) -> (result, final state of the written argument)."""

    def pure(*args):
        args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        result = func(*args)
        return result, args[mutated_position]

    return pure


def fd_jvp(f, args, k, v, eps=1e-6):
    plus = list(args)
    minus = list(args)
    plus[k] = args[k] + eps * v
    minus[k] = args[k] - eps * v
    (rp, ap), (rm, am) = f(*plus), f(*minus)
    return (rp - rm) / (2 * eps), (ap - am) / (2 * eps)


def test_written_argument_is_an_extra_output_in_both_modes():
    x, out = RNG.standard_normal(5), np.full(5, 7.0)
    before = out.copy()
    pure = functional(mu.fill_squares, 1)
    v = RNG.standard_normal(5)
    (value, final), (s_dot, out_dot) = sourcead.jvp(mu.fill_squares, wrt="x")(x, out, tangents=v)
    fd_s, fd_out = fd_jvp(pure, (x, out), 0, v)
    assert_close(value, float(np.sum(x * x)), 1e-12, 0)
    assert_close(final, x * x, 1e-12, 0)
    assert_close(s_dot, fd_s, 1e-7, 1e-9)
    assert_close(out_dot, fd_out, 1e-7, 1e-9)
    c = (0.3, RNG.standard_normal(5))
    (value2, final2), g = sourcead.vjp(mu.fill_squares, wrt="x")(x, out, cotangent=c)
    assert_close(c[0] * s_dot + c[1] @ out_dot, g @ v, 1e-12, 1e-12)  # dot-product test
    np.testing.assert_array_equal(out, before)  # the caller's array is untouched
    assert_close(final2, x * x, 1e-12, 0)


def test_grad_of_a_function_that_steps_its_argument_in_place():
    u = np.sin(np.linspace(0.0, 3.0, 24))
    before = u.copy()
    g, kappa_bar = sourcead.grad(mu.heat_in_place, wrt=("u", "kappa"))(u, 0.2, 30)
    np.testing.assert_array_equal(u, before)
    v = RNG.standard_normal(24)
    eps = 1e-6
    fd = (mu.heat_in_place(u + eps * v, 0.2, 30) - mu.heat_in_place(u - eps * v, 0.2, 30)) / (2 * eps)
    assert_close(g @ v, fd, 1e-7, 1e-9)
    fd_k = (mu.heat_in_place(u.copy(), 0.2 + eps, 30) - mu.heat_in_place(u.copy(), 0.2 - eps, 30)) / (2 * eps)
    assert_close(kappa_bar, fd_k, 1e-7, 1e-9)
