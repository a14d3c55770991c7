"""out= (DESIGN.md section 1): gradients written into user buffers, checked before the call.

A buffer must be a writeable float64 array of the argument's shape, must not overlap any input
(arguments, cotangents) or another out= buffer (memory ranges, not object identity), and is None
for a float argument. A rejected call leaves every buffer untouched.
"""

from __future__ import annotations

import numpy as np
import pytest

import sourcead
from sourcead import AliasingError, SourceADError


def weighted(x, y, a):
    s = 0.0
    for i in range(x.shape[0]):
        s += a * x[i] * x[i] * y[i]
    return s


def scaled(x, a):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        y[i] = a * x[i]
    return y


X = np.array([0.5, -1.0, 2.0])
Y = np.array([1.5, 0.25, -0.5])


@pytest.fixture(scope="module", params=[True, False], ids=["jit", "python"])
def g3(request):
    return sourcead.grad(weighted, wrt=(0, 1, 2), jit=request.param)


@pytest.fixture(scope="module")
def gx():
    return sourcead.grad(weighted, wrt="x")


def test_out_receives_the_gradient_and_is_returned(gx):
    out = np.full(3, np.nan)
    result = gx(X, Y, 2.0, out=out)
    assert result is out
    np.testing.assert_array_equal(out, gx(X, Y, 2.0))


def test_tuple_out_with_none_allocates_and_floats_stay_floats(g3):
    bx = np.full(3, np.nan)
    rx, ry, ra = g3(X, Y, 2.0, out=(bx, None, None))
    fx, fy, fa = g3(X, Y, 2.0)
    assert rx is bx and not np.shares_memory(ry, X) and not np.shares_memory(ry, Y)
    np.testing.assert_array_equal(bx, fx)
    np.testing.assert_array_equal(ry, fy)
    assert isinstance(ra, float) and ra == fa


def test_out_may_be_a_strided_view_interleaved_with_an_input(gx):
    base = np.zeros(6)
    base[::2] = X
    g = gx(base[::2], Y, 2.0, out=base[1::2])  # same buffer, disjoint elements: no overlap
    np.testing.assert_array_equal(g, gx(X, Y, 2.0))
    np.testing.assert_array_equal(base[::2], X)


@pytest.mark.parametrize(
    ("buffer", "message"),
    [
        (np.zeros(4), r"float64 array of shape \(3,\), got a float64 array of shape \(4,\)"),
        (np.zeros(3, np.float32), "got a float32 array"),
        ([0.0, 0.0, 0.0], "got list"),
        (np.zeros((3, 1)), r"shape \(3, 1\)"),
    ],
)
def test_out_of_the_wrong_shape_dtype_or_type_is_refused(gx, buffer, message):
    with pytest.raises(SourceADError, match=message):
        gx(X, Y, 2.0, out=buffer)


def test_read_only_out_is_refused(gx):
    out = np.zeros(3)
    out.flags.writeable = False
    with pytest.raises(SourceADError, match="read-only"):
        gx(X, Y, 2.0, out=out)


def test_out_for_a_float_argument_must_be_none(g3):
    with pytest.raises(SourceADError, match="out= for `a` must be None"):
        g3(X, Y, 2.0, out=(None, None, np.zeros(())))


@pytest.mark.parametrize("out", [(np.zeros(3),), (np.zeros(3), np.zeros(3)), np.zeros(3)])
def test_out_must_have_the_structure_of_the_gradients(g3, out):
    with pytest.raises(SourceADError, match="structure of the gradients"):
        g3(X, Y, 2.0, out=out)


def test_out_overlapping_an_argument_is_an_aliasing_error_naming_it(gx):
    x = X.copy()
    with pytest.raises(AliasingError, match="overlaps argument `x`"):
        gx(x, Y, 2.0, out=x)
    y = np.concatenate([Y, [0.0]])
    with pytest.raises(AliasingError, match="overlaps argument `y`"):
        gx(X, y[:3], 2.0, out=y[1:])  # a different view of the same memory, not the same object


def test_out_buffers_overlapping_each_other_are_refused_and_nothing_is_written(g3):
    shared = np.full(4, np.nan)
    with pytest.raises(AliasingError, match="out= buffers for `x` and `y` overlap"):
        g3(X, Y, 2.0, out=(shared[:3], shared[1:], None))
    assert np.isnan(shared).all()


def test_a_refused_call_leaves_earlier_buffers_untouched(g3):
    bx = np.full(3, np.nan)
    with pytest.raises(SourceADError):
        g3(X, Y, 2.0, out=(bx, np.zeros(2), None))
    assert np.isnan(bx).all()


def test_vjp_out_is_checked_against_the_cotangent_too():
    vf = sourcead.vjp(scaled, wrt=0)
    w = np.array([1.0, 2.0, 3.0])
    out = np.full(3, np.nan)
    value, g = vf(X, 2.0, cotangent=w, out=out)
    assert g is out
    np.testing.assert_array_equal(out, 2.0 * w)
    with pytest.raises(AliasingError, match="overlaps the cotangent"):
        vf(X, 2.0, cotangent=w, out=w)


def test_value_and_grad_accepts_out():
    vg = sourcead.value_and_grad(weighted, wrt="y")
    out = np.empty(3)
    value, g = vg(X, Y, 2.0, out=out)
    assert g is out and value == pytest.approx(weighted(X, Y, 2.0))
    np.testing.assert_allclose(out, 2.0 * X * X)
