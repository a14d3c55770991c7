"""First contributions assigned (`sourcead/first_contributions.py`): an accumulation into a scalar
adjoint that is zero on every path is written as an assignment, and only there; gradients that
go through it match finite differences."""

from __future__ import annotations

import textwrap

import libcst as cst
import numpy as np
import pytest
from numeric import assert_close, finite_difference_gradient
from sources import function_from_source

import sourcead
from sourcead.postpass.first_contributions import assign_first_contributions
from sourcead.postpass.marked import rewrite_after

_ADJOINTS = frozenset({"a_bar", "b_bar"})


def _rewritten(body: str) -> str:
    text = "def f_vjp(x, n, out_bar):\n    # reverse sweep\n" + textwrap.indent(textwrap.dedent(body).strip(), "    ")
    tree = cst.parse_module(text + "\n")
    out = rewrite_after(tree, "# reverse sweep", lambda s: assign_first_contributions(s, _ADJOINTS)).code
    return textwrap.dedent(out.split("# reverse sweep\n", 1)[1])


def test_straight_line_first_contributions_are_assigned():
    out = _rewritten("""
        a_bar = 0.0
        b_bar = 0.0
        a_bar += 2.0 * out_bar
        a_bar += x[0] * out_bar
        b_bar -= a_bar + out_bar
        a_bar += b_bar
    """)
    assert "a_bar = 2.0 * out_bar\na_bar += x[0] * out_bar\n" in out  # the second adds to a value
    assert "b_bar = -(a_bar + out_bar)\n" in out
    assert "a_bar += b_bar" in out


def test_a_primal_name_and_a_value_reading_its_target_keep_their_add():
    out = _rewritten("""
        s = 0.0
        s += x[0]
        a_bar = 0.0
        a_bar += a_bar * x[0]
    """)
    assert "s += x[0]" in out  # a primal: the sign of a zero could reach atan2 or a division
    assert "a_bar += a_bar * x[0]" in out


@pytest.mark.parametrize(
    "body, assigned",
    [
        # zero at the end of every iteration and at the entry: zero at each iteration's start
        ("for i in range(n):\n    a_bar += x[i]\n    x[i] += a_bar\n    a_bar = 0.0", True),
        # not reset: the second iteration adds to the first one's value
        ("for i in range(n):\n    a_bar += x[i]\n    x[i] += a_bar", False),
        # reset on one branch only
        ("for i in range(n):\n    a_bar += x[i]\n    if x[i] > 0.0:\n        a_bar = 0.0", False),
        # reset on both branches
        (
            "for i in range(n):\n    a_bar += x[i]\n    if x[i] > 0.0:\n        a_bar = 0.0\n"
            "    else:\n        a_bar = 0.0",
            True,
        ),
        # a `continue` before the reset carries the value to the next iteration
        ("for i in range(n):\n    a_bar += x[i]\n    if x[i] > 0.0:\n        continue\n    a_bar = 0.0", False),
        # a `break` before the reset leaves the loop: the iterations that go on start at zero
        ("for i in range(n):\n    a_bar += x[i]\n    if x[i] > 0.0:\n        break\n    a_bar = 0.0", True),
        ("i = n\nwhile i > 0:\n    i -= 1\n    a_bar += x[i]\n    x[i] = a_bar\n    a_bar = 0.0", True),
        # a prange body is numba's reduction: left as written
        ("for i in prange(n):\n    a_bar += x[i]\n    a_bar = 0.0", False),
        # the loop variable itself is bound by each iteration
        ("for a_bar in range(n):\n    a_bar += x[0]", False),
    ],
)
def test_loops_assign_where_every_path_resets(body, assigned):
    out = _rewritten("a_bar = 0.0\n" + body)
    assert ("a_bar = x[" in out) == assigned, out


def test_after_a_loop_what_its_header_and_breaks_hold():
    # no iteration may run, or a break leaves with a value: a_bar is not known zero after it
    out = _rewritten("""
        a_bar = 0.0
        for i in range(n):
            a_bar += x[i]
            if x[i] > 0.0:
                break
            a_bar = 0.0
        a_bar += out_bar
        b_bar = 0.0
        for i in range(n):
            b_bar += x[i]
            b_bar = 0.0
        b_bar += out_bar
    """)
    assert "a_bar += out_bar" in out
    assert "b_bar = out_bar" in out


def test_a_statement_it_does_not_model_forgets_what_is_zero():
    out = _rewritten("""
        a_bar = 0.0
        with open(x) as a_bar:
            pass
        a_bar += out_bar
    """)
    assert "a_bar += out_bar" in out


_PAIRS = """
def f(p, w, cut):
    s = 0.0
    for i in range(p.shape[0]):
        for j in range(i + 1, p.shape[0]):
            d = p[j] - p[i]
            if d * d > cut:
                break
            e = w * d
            s += math.sin(e) * d
    return s
"""


def test_a_loop_carried_adjoint_assigned_matches_finite_differences(tmp_path):
    """`d_bar` and `e_bar`, reset at each pair's end, start each iteration assigned; a break
    leaves the inner loop early on some rows."""
    f = function_from_source(tmp_path, _PAIRS, "f")
    for jit in (True, False):
        g = sourcead.grad(f, wrt=("p", "w"), jit=jit)
        assert "    e_bar = " in g.source and "e_bar += " not in g.source, g.source
        for n in (0, 1, 2, 6):
            args = (np.random.default_rng(n).standard_normal(n), 0.7, 1.5)
            for got, expected in zip(g(*args), finite_difference_gradient(f, args, ("p", "w")), strict=True):
                assert_close(got, expected, rtol=1e-6, atol=1e-8)


def test_an_array_adjoints_first_product_is_assigned_where_nothing_touches_it_before():
    """`a_bar = zeros_like(W)` then `a_bar += matmul_bar_right(g, x, W)` (a new array of W's shape)
    is one assignment; an element write, a view or an in-place helper of a_bar, a rebinding of W,
    another helper, or `-=` keep the zeros and the add."""
    out = _rewritten("""
        a_bar = zeros_like(W)
        t = W[0]
        a_bar += matmul_bar_right(g, x, W)
        a_bar += matmul_bar_right(g, x, W)
    """)
    assert "a_bar = matmul_bar_right(g, x, W)\na_bar += matmul_bar_right(g, x, W)\n" in out
    kept = {
        "a_bar[0] = 1.0": "element",
        "v = a_bar[1:]": "view",
        "add_outer(a_bar, True, g, x)": "helper",
        "W = W * 2.0": "rebound",
    }
    for line in kept:
        out = _rewritten(f"""
            a_bar = zeros_like(W)
            {line}
            a_bar += matmul_bar_right(g, x, W)
        """)
        assert "a_bar += matmul_bar_right(g, x, W)" in out, line
    # another new array, of a shape not known here: moved where it has W's shape (`first_of`)
    for value in ("matmul_bar_left(g, x, W)", "np.outer(g, W)", "matmul_bar_right(g, W, x)"):
        out = _rewritten(f"a_bar = zeros_like(W)\na_bar += {value}")
        assert f"a_bar = first_of({value}, W)" in out, value
    out = _rewritten("a_bar = zeros_like(W)\na_bar -= matmul_bar_right(g, x, W)")
    assert "a_bar = first_of(-matmul_bar_right(g, x, W), W)" in out
    out = _rewritten("a_bar = zeros_like(x)\nfor i in range(n):\n    a_bar += matmul_bar_left(g, x, W)")
    assert "a_bar += matmul_bar_left(g, x, W)" in out  # the second iteration adds to the first
