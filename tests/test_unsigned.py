"""Unsigned indices in the reverse sweep (`sourcead/unsigned.py`): which loop variables are
written `np.uint64(j)` in an index, which keep their sign; and that a loop whose variable may be
negative (an index counting from the end) keeps its meaning (finite differences)."""

from __future__ import annotations

import libcst as cst
import numpy as np
import pytest
from numeric import assert_close, finite_difference_gradient
from sources import function_from_source

import sourcead
from sourcead.postpass.unsigned import unsigned_indices

_FUNCTION = """
def f_vjp(x, n, k):
    s = x[0]
    # reverse sweep
    for {var} in {loop}:
        x_bar[{var}] += x[{var}] * k
"""


@pytest.mark.parametrize(
    "loop, unsigned",
    [
        ("range(n - 1, -1, -1)", True),  # down to 0
        ("range(n - 1, (k + 1) - 1, -1)", False),  # down to k, whose sign is not known here
        ("range(n - 1, -2, -1)", False),  # down to -1
        ("range(x.shape[0] + 1, 0, -2)", True),
        ("range(len(x), n)", True),  # up from a size
        ("range(2 * len(x) // 3, n)", True),
        ("range(len(x) - 1, n)", False),  # up from -1 where x is empty
        ("range(n)", False),  # up from 0: LLVM sees it is never negative, the index stays as written
        ("range(1, n)", False),
        ("prange(len(x), n)", False),  # a parallel loop's own index keeps its type
        ("range(len(x), n, k)", False),  # a step of unknown sign
    ],
)
def test_which_loop_variables_index_unsigned(loop, unsigned):
    text = unsigned_indices(cst.parse_module(_FUNCTION.format(var="j", loop=loop).lstrip()), "# reverse sweep").code
    assert ("x_bar[np.uint64(j)] += x[np.uint64(j)] * k" in text) == unsigned, text
    assert "s = x[0]" in text  # before the marker: as written


def test_outer_variables_stay_signed_and_bound_inner_ranges():
    text = """
def f_vjp(U, U_bar, n, f):
    # reverse sweep
    for k in range(n - 1, -1, -1):
        U_bar[k, k] += 1.0
        for j in range(n - 1, k, -1):
            U_bar[k, j] += f * U_bar[j, k]
            j = 0
        for j in range(k + 1, n):
            U_bar[k, j] += f * U_bar[j, k]
"""
    out = unsigned_indices(cst.parse_module(text.lstrip()), "# reverse sweep").code
    assert "U_bar[np.uint64(k), np.uint64(k)] += 1.0" in out  # k: the innermost loop's variable there
    assert "U_bar[k, j] += f * U_bar[j, k]\n            j = 0" in out  # j assigned in its loop: signed
    assert "U_bar[k, np.uint64(j)] += f * U_bar[np.uint64(j), k]" in out  # up from k + 1, k >= 0


_FROM_THE_END = """
def f(x, w, m):
    s = 0.0
    for i in range(-m, x.shape[0] - m):
        for j in range(i, x.shape[0] - m):
            s += w * x[i] * x[j]
    return s
"""


def test_indices_that_count_from_the_end_keep_their_meaning(tmp_path):
    """`x[i]` for i from -m: the reversed loops count down to -m - 1 and keep their sign."""
    f = function_from_source(tmp_path, _FROM_THE_END, "f")
    g = sourcead.grad(f, wrt=("x", "w"))
    assert "np.uint64(i)" not in g.source and "np.uint64(j)" not in g.source
    args = (np.random.default_rng(2).standard_normal(6), 0.7, 2)
    for got, expected in zip(g(*args), finite_difference_gradient(f, args, ("x", "w")), strict=True):
        assert_close(got, expected, rtol=1e-6, atol=1e-8)


_TRIANGLE = """
def f(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(i + 1, x.shape[0]):
            s += w * x[i] * x[j] * x[j]
    return s
"""


def test_a_triangular_adjoint_indexes_unsigned_and_matches_finite_differences(tmp_path):
    f = function_from_source(tmp_path, _TRIANGLE, "f")
    for jit in (True, False):
        g = sourcead.grad(f, wrt=("x", "w"), jit=jit)
        assert "np.uint64(j" in g.source
        for n in (0, 1, 2, 5):
            args = (np.random.default_rng(n).standard_normal(n), 0.7)
            for got, expected in zip(g(*args), finite_difference_gradient(f, args, ("x", "w")), strict=True):
                assert_close(got, expected, rtol=1e-6, atol=1e-8)
