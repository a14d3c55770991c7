"""Derivatives never alias an input or each other, even when the function returns an argument.

Parameters that are only returned get their kind (float or array) from the call's arguments.
"""

from __future__ import annotations

import numpy as np
import passthrough as pt
import pytest

import sourcead

X = np.array([0.5, -1.0, 2.0])


@pytest.mark.parametrize("jit", [False, True])
def test_vjp_of_identity_is_a_fresh_copy_of_the_cotangent(jit):
    w = np.array([1.0, 2.0, 3.0])
    value, g = sourcead.vjp(pt.ident, jit=jit)(X, cotangent=w)
    assert value is X or np.array_equal(value, X)
    np.testing.assert_array_equal(g, w)
    assert not np.shares_memory(g, w) and not np.shares_memory(g, X)


def test_identity_on_floats_and_arrays_uses_the_call_kinds():
    assert sourcead.grad(pt.ident)(2.0) == 1.0
    value, t = sourcead.jvp(pt.ident)(X, tangents=np.ones(3))
    np.testing.assert_array_equal(t, np.ones(3))
    with pytest.raises(sourcead.SourceADError, match="returns an array"):
        sourcead.grad(pt.ident)(X)


def test_renamed_argument_gets_its_partial_and_the_other_gets_zero():
    w = np.array([1.0, -1.0, 0.5])
    _, (gx, gy) = sourcead.vjp(pt.pick_second, wrt=(0, 1))(X, X, cotangent=w)
    np.testing.assert_array_equal(gx, np.zeros(3))
    np.testing.assert_array_equal(gy, w)
    assert not np.shares_memory(gx, gy)


def test_an_array_returned_twice_gets_two_tangents_that_do_not_share_memory():
    _, (t0, t1) = sourcead.jvp(pt.twice)(X, tangents=np.ones(3))
    np.testing.assert_array_equal(t0, np.ones(3))
    assert not np.shares_memory(t0, t1)
    _, g = sourcead.vjp(pt.twice)(X, cotangent=(np.ones(3), 2.0 * np.ones(3)))
    np.testing.assert_array_equal(g, 3.0 * np.ones(3))


def test_mixed_tuple_result_in_both_modes_agrees_by_the_dot_product_test():
    rng = np.random.default_rng(7)
    v, w = rng.standard_normal(3), (0.7, rng.standard_normal(3))
    _, (js, jx) = sourcead.jvp(pt.scaled_and_self, wrt="x")(X, 1.5, tangents=v)
    _, g = sourcead.vjp(pt.scaled_and_self, wrt="x")(X, 1.5, cotangent=w)
    assert np.isclose(w[0] * js + w[1] @ jx, g @ v, rtol=1e-12)
    assert not np.shares_memory(jx, v)
