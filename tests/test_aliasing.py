"""Arguments that share memory: the exact partial derivative, or an AliasingError; never a
silently wrong number. Overlap is judged on memory ranges, not on object identity."""

from __future__ import annotations

import aliasing as al
import numpy as np
import pytest
from numeric import assert_close

import sourcead
from sourcead import AliasingError

RNG = np.random.default_rng(31)


def partial_fd(func, args, k, v, eps=1e-6):
    """Central differences in slot k only, the other slots held as the user passed them."""
    plus, minus = list(args), list(args)
    plus[k] = args[k] + eps * v
    minus[k] = args[k] - eps * v
    return (func(*plus) - func(*minus)) / (2 * eps)


def _aliased_calls():
    x = RNG.standard_normal(12)
    return [
        ("same object", al.weighted_dot, (x, x)),
        ("strided view", al.strided_dot, (x, x[::2])),
        ("reshape", al.matrix_weighted, (x, x.reshape(3, 4))),
        ("one buffer wrapped twice", al.weighted_dot, (x, np.frombuffer(x.data, dtype=np.float64))),
    ]


@pytest.mark.parametrize("what, func, args", _aliased_calls(), ids=lambda v: v if isinstance(v, str) else "")
def test_read_only_aliasing_gives_the_exact_partial_derivatives(what, func, args):
    v = RNG.standard_normal(args[0].shape)
    g0, g1 = sourcead.grad(func, wrt=(0, 1))(*args)
    assert_close(g0 @ v, partial_fd(func, args, 0, v), 1e-7, 1e-9)
    w = RNG.standard_normal(args[1].shape)
    assert_close(float(np.sum(g1 * w)), partial_fd(func, args, 1, w), 1e-7, 1e-9)
    assert not np.shares_memory(g0, g1) and not np.shares_memory(g0, args[0])


@pytest.mark.parametrize(
    "make_buf",
    [
        lambda x: x,
        lambda x: x[::-1],
        lambda x: x.reshape(2, 4).ravel(),
        lambda x: np.frombuffer(x.data, dtype=np.float64),
        lambda x: x[:],
    ],
    ids=["same object", "reversed view", "reshape", "frombuffer", "full slice"],
)
def test_writing_into_an_argument_that_aliases_another_raises(make_buf):
    x = RNG.standard_normal(8)
    with pytest.raises(AliasingError, match="`buf` and `x` of scale_into share memory"):
        sourcead.grad(al.scale_into, wrt="x")(x, make_buf(x))


def test_interleaved_views_do_not_overlap_and_give_the_right_derivative():
    base = RNG.standard_normal(16)
    x, buf = base[::2], base[1::2]  # same buffer, disjoint elements
    g = sourcead.grad(al.scale_into, wrt="x")(x, buf)
    assert_close(g, 4.0 * x, 1e-12, 0)
    assert not np.shares_memory(g, base)


@pytest.mark.parametrize("t", [1.0, -1.0])
def test_a_branch_choosing_the_active_or_the_constant_array(t):
    x, c = RNG.standard_normal(6), RNG.standard_normal(6)
    v = RNG.standard_normal(6)
    g = sourcead.grad(al.pick, wrt="x")(x, c, t)
    assert_close(g @ v, partial_fd(al.pick, (x, c, t), 0, v), 1e-7, 1e-9)
    expected = 3.0 * x * x if t > 0 else c * c
    assert_close(g, expected, 1e-12, 0)


def test_derivatives_never_alias_inputs():
    x = RNG.standard_normal(5)
    _, g = sourcead.vjp(al.zeros_like_arg)(x, cotangent=np.ones(5))
    assert not np.shares_memory(g, x)
    _, t = sourcead.jvp(al.zeros_like_arg)(x, tangents=x)
    assert not np.shares_memory(t, x)
