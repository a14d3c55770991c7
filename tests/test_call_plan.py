"""Calls checked before compiled code runs (issue 17, parts 1-3): shapes against the code's shape
contract, tangents and cotangents against the arguments and results, dtypes and ndims, written
arguments that overlap themselves. Every bad call gets one clear error, with jit=True and jit=False
alike; every good call still gets the right derivative (checked against finite differences)."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import sourcead
from sourcead import AliasingError, SourceADError
from sourcead.errors import ArgumentTypeError, ShapeError

RNG = np.random.default_rng(17)
JIT = pytest.mark.parametrize("jit", [True, False], ids=["jit", "python"])


def dot(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * y[i]
    return s


def shifted(x, y):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * y[i + 1]
    return s


def guarded(x, y):
    n = x.shape[0]
    s = 0.0
    for i in range(n):
        if i + 1 < n:
            s += x[i] * y[i + 1]
    return s


def scale(x, y):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = x[i] * math.sin(y[i])
    return out


def whole(x):
    y = np.sin(x) * 2.0
    return y


def into(x, buf):
    for i in range(x.shape[0]):
        buf[i] = buf[i] + x[i] * x[i]
    s = 0.0
    for i in range(buf.shape[0]):
        s += buf[i] * buf[i]
    return s


def gather(x, idx):
    s = 0.0
    for k in range(idx.shape[0]):
        s += x[idx[k]] * x[idx[k]]
    return s


def gather_next(x, idx):
    s = 0.0
    for k in range(idx.shape[0]):
        s += x[idx[k] + 1] * x[idx[k] + 1]  # computed from data: no fact covers it
    return s


def matrix_rows(A, w):
    n, m = A.shape
    s = 0.0
    for i in range(n):
        for j in range(m):
            s += A[i, j] * w[j]
    return s


def firsts(x, n):
    s = 0.0
    for i in range(n):
        s += x[i] * x[i]
    return s


def inner_loop(x, y, m):
    s = 0.0
    for i in range(x.shape[0]):
        for _j in range(m):
            s += x[i] * y[i]
    return s


def stepped(x, y):
    s = 0.0
    for i in range(1, x.shape[0], 3):
        s += x[i] * y[i]
    for i in range(x.shape[0] - 1, -1, -2):
        s += x[i] * y[i - 1]
    return s


# --- shapes of arguments against the shape contract -------------------------------------------


def _call(transform, func, jit, *args):
    """Call one transform of `func` on `args` (wrt every float array), with fitting seeds."""
    wrt = tuple(k for k, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype == np.float64)
    if transform == "grad":
        return sourcead.grad(func, wrt=wrt, jit=jit)(*args)
    if transform == "vjp":
        return sourcead.vjp(func, wrt=wrt, jit=jit)(*args, cotangent=1.0)
    tangents = tuple(np.ones_like(args[k]) for k in wrt)
    return sourcead.jvp(func, wrt=wrt, jit=jit)(*args, tangents=tangents)


@JIT
@pytest.mark.parametrize("transform", ["grad", "vjp", "jvp"])
def test_mismatched_lengths_are_refused_before_the_call(transform, jit):
    x, y = RNG.standard_normal(5), RNG.standard_normal(3)
    with pytest.raises(
        ShapeError, match=r"argument `y` has shape \(3,\); it needs y.shape\[0\] >= x.shape\[0\]"
    ) as info:
        _call(transform, dot, jit, x, y)
    assert info.value.where is not None and info.value.where.line == dot.__code__.co_firstlineno + 3
    assert "s += x[i] * y[i]" in str(info.value)
    assert isinstance(info.value, ValueError)


@JIT
def test_an_offset_index_needs_one_more_element(jit):
    x = RNG.standard_normal(5)
    with pytest.raises(ShapeError, match=r"up to y\[5\].*y.shape\[0\] >= x.shape\[0\] \+ 1"):
        sourcead.grad(shifted, wrt=(0, 1), jit=jit)(x, x.copy())
    report = sourcead.check_derivative(shifted, x, RNG.standard_normal(6), wrt=(0, 1), jit=jit)
    assert report.ok, str(report)


def test_two_million_against_ten_elements_is_an_error_not_a_crash():
    big, small = RNG.standard_normal(2_000_000), RNG.standard_normal(10)
    for transform in ("grad", "vjp", "jvp"):
        with pytest.raises(ShapeError, match=r"argument `y` has shape \(10,\)"):
            _call(transform, dot, True, big, small)


@JIT
def test_arrays_longer_than_the_loops_need_are_fine(jit):
    x, y = RNG.standard_normal(4), RNG.standard_normal(9)
    report = sourcead.check_derivative(dot, x, y, wrt=(0, 1), jit=jit)
    assert report.ok, str(report)
    gy = sourcead.grad(dot, wrt=1, jit=jit)(x, y)
    assert np.array_equal(gy[4:], np.zeros(5))  # y's elements past x's length do not enter


@JIT
def test_an_access_under_a_guard_is_not_refused(jit):
    x = RNG.standard_normal(6)
    y = RNG.standard_normal(6)  # y[i + 1] only runs for i + 1 < n: same length is right
    report = sourcead.check_derivative(guarded, x, y, wrt=(0, 1), jit=jit)
    assert report.ok, str(report)


@JIT
def test_an_int_argument_bounds_the_loop(jit):
    x = RNG.standard_normal(4)
    with pytest.raises(ShapeError, match=r"x.shape\[0\] >= n"):
        sourcead.grad(firsts, jit=jit)(x, 7)
    assert sourcead.grad(firsts, jit=jit)(x, 0).tolist() == [0.0] * 4  # no iteration: no requirement
    report = sourcead.check_derivative(firsts, x, 3, wrt=0, jit=jit)
    assert report.ok, str(report)


@JIT
def test_an_access_in_a_loop_that_does_not_run_asks_nothing(jit):
    x, y = RNG.standard_normal(5), RNG.standard_normal(2)
    assert np.array_equal(sourcead.grad(inner_loop, wrt=(0, 1), jit=jit)(x, y, 0)[1], np.zeros(2))
    with pytest.raises(ShapeError, match=r"y.shape\[0\] >= x.shape\[0\] \(when x.shape\[0\] > 0 and m > 0\)"):
        sourcead.grad(inner_loop, wrt=(0, 1), jit=jit)(x, y, 2)


@JIT
@pytest.mark.parametrize("n, m, fits", [(8, 8, True), (8, 7, False), (7, 6, True), (6, 5, True), (6, 4, False)])
def test_steps_other_than_one_need_exactly_the_indices_they_reach(jit, n, m, fits):
    # range(1, n, 3) reaches 1, 4, 7 (n = 8) or 1, 4 (n = 6, 7); range(n - 1, -1, -2) reads y[i - 1]
    # down to y[-1] or y[0]: y must hold the largest index reached
    x, y = RNG.standard_normal(n), RNG.standard_normal(m)
    reached = max(max(range(1, n, 3)), n - 2)
    assert fits == (reached < m)
    if not fits:
        with pytest.raises(ShapeError, match="the arguments' shapes do not fit stepped"):
            sourcead.grad(stepped, wrt=(0, 1), jit=jit)(x, y)
        return
    report = sourcead.check_derivative(stepped, x, y, wrt=(0, 1), jit=jit)
    assert report.ok, str(report)


@JIT
def test_sizes_unpacked_from_a_shape_are_contract_terms(jit):
    A, w = RNG.standard_normal((3, 4)), RNG.standard_normal(2)
    with pytest.raises(ShapeError, match=r"w.shape\[0\] >= A.shape\[1\]"):
        sourcead.grad(matrix_rows, wrt=(0, 1), jit=jit)(A, w)


def test_the_shape_checks_are_code_a_reader_can_follow():
    plan = sourcead.grad(shifted, wrt=(0, 1))._default.plan
    assert plan.source == (
        "def check_shapes(x, y):\n"
        "    if x.shape[0] > 0 and not (x.shape[0] + 1 <= y.shape[0]):\n"
        "        raise _fail(0, 1, x.shape[0], y.shape[0], y.shape)\n"
    )
    assert plan.complete
    assert sourcead.grad(dot)._default.plan.source.count("if ") == 1  # x[i] over x's own range: no check


# --- indices the contract does not cover: numba's bounds checks, the user's line -------------------


@JIT
def test_an_index_out_of_range_in_the_users_code_names_the_line(jit):
    x, idx = RNG.standard_normal(5), np.array([0, 3, 6])
    g = sourcead.grad(gather_next, jit=jit)
    assert not g._default.plan.complete  # x[idx[k] + 1]: data decides, so numba checks the bounds
    with pytest.raises(ShapeError, match="gather_next indexes an array out of range") as info:
        g(x, idx)
    assert info.value.where.line == gather_next.__code__.co_firstlineno + 3
    good = np.array([0, 3, 2, 3])
    report = sourcead.check_derivative(gather_next, x, good, wrt=0, jit=jit)
    assert report.ok, str(report)


@JIT
def test_an_index_read_from_an_int_argument_is_checked_at_the_call(jit):
    x = RNG.standard_normal(5)
    g = sourcead.grad(gather, jit=jit)
    assert g._default.plan.complete  # every value of idx must index x: one check of idx, at the call
    for bad in ([0, 3, 7], [0, -6]):
        with pytest.raises(ShapeError, match=r"every value of idx\[0:idx.shape\[0\]\] in range\(-x.shape\[0\]"):
            g(x, np.array(bad))
    assert np.array_equal(g(x, np.array([], dtype=np.int64)), np.zeros(5))
    report = sourcead.check_derivative(gather, x, np.array([0, 3, -5, 4, 3]), wrt=0, jit=jit)
    assert report.ok, str(report)


def test_bounds_checks_can_be_asked_for_every_variant(monkeypatch):
    monkeypatch.setenv("SOURCEAD_BOUNDSCHECK", "1")
    g = sourcead.grad(dot, wrt=(0, 1))
    assert g._default.call.targetoptions.get("boundscheck") is True
    x, y = RNG.standard_normal(5), RNG.standard_normal(5)
    report = sourcead.check_derivative(dot, x, y, wrt=(0, 1))
    assert report.ok, str(report)
    monkeypatch.delenv("SOURCEAD_BOUNDSCHECK")
    assert sourcead.grad(dot, wrt=(0, 1))._default.call.targetoptions.get("boundscheck") is not True


# --- tangents and cotangents -------------------------------------------------------------------------


@JIT
@pytest.mark.parametrize("length", [2, 7])
def test_a_cotangent_of_the_wrong_length_for_an_array_result(jit, length):
    x, y = RNG.standard_normal(5), RNG.standard_normal(5)
    with pytest.raises(ShapeError, match=rf"the cotangent has shape \({length},\), but the result .* \(5,\)"):
        sourcead.vjp(scale, wrt=(0, 1), jit=jit)(x, y, cotangent=np.ones(length))


@JIT
@pytest.mark.parametrize("length", [1, 2, 7])
def test_a_cotangent_of_the_wrong_length_for_a_whole_array_result(jit, length):
    x = RNG.standard_normal(5)  # the result's shape is known only after the call
    with pytest.raises(
        ShapeError, match=rf"cotangent of the result has shape \({length},\), but the result has shape \(5,\)"
    ):
        sourcead.vjp(whole, jit=jit)(x, cotangent=np.ones(length))


@JIT
def test_a_cotangent_too_short_for_a_written_argument(jit):
    x, buf = RNG.standard_normal(5), RNG.standard_normal(5)
    with pytest.raises(ShapeError, match=r"cotangent of the written argument `buf` has shape \(3,\)"):
        sourcead.vjp(into, wrt=0, jit=jit)(x, buf, cotangent=(1.0, np.ones(3)))
    report = sourcead.check_derivative(into, x, buf, wrt=(0, 1), jit=jit)
    assert report.ok, str(report)


@JIT
def test_cotangents_have_the_kind_of_their_result(jit):
    x = RNG.standard_normal(5)
    with pytest.raises(ShapeError, match="must be a float"):  # (np.ones(k) is a batch of k cotangents)
        sourcead.vjp(dot, jit=jit)(x, x, cotangent=np.ones((1, 2)))
    with pytest.raises(ShapeError, match="must be a 1-D float64 array"):
        sourcead.vjp(scale, jit=jit)(x, x, cotangent=1.0)
    with pytest.raises(ShapeError, match="must be a 1-D array"):
        sourcead.vjp(scale, jit=jit)(x, x, cotangent=np.array(1.0))


@JIT
def test_complex_tangents_and_cotangents_are_refused_not_truncated(jit):
    x = RNG.standard_normal(5)
    with pytest.raises(ArgumentTypeError, match="tangent of `x` is complex"):
        sourcead.jvp(dot, jit=jit)(x, x, tangents=np.ones(5) * (1 + 2j))
    with pytest.raises(ArgumentTypeError, match="tangent of `r` is complex"):
        sourcead.jvp(lambda_free_scalar, jit=jit)(2.0, tangents=1j)
    with pytest.raises(ArgumentTypeError, match="cotangent is complex"):
        sourcead.vjp(scale, jit=jit)(x, x, cotangent=np.ones(5) + 0j)
    with pytest.raises(ArgumentTypeError, match="cotangent is complex"):
        sourcead.vjp(dot, jit=jit)(x, x, cotangent=1 + 1j)
    assert isinstance(ArgumentTypeError("m"), TypeError)


def lambda_free_scalar(r):
    return r * r


# --- arguments: dtype, ndim, kind ---------------------------------------------------------------------


@JIT
def test_complex_and_zero_dimensional_arguments(jit):
    x = RNG.standard_normal(5)
    g = sourcead.grad(dot, jit=jit)
    with pytest.raises(ArgumentTypeError, match="complex128"):
        g(x + 0j, x)
    with pytest.raises(ArgumentTypeError, match="complex128"):
        g(x, x + 0j)
    with pytest.raises(ArgumentTypeError, match="0-d array"):
        g(np.array(2.0), x)
    with pytest.raises(ArgumentTypeError, match="is complex"):
        sourcead.grad(lambda_free_scalar, jit=jit)(1 + 2j)


@JIT
def test_wrong_ndim_and_a_float_for_an_array(jit):
    x = RNG.standard_normal(5)
    with pytest.raises(ArgumentTypeError, match="`x` a 2-D float64 array .*reads it as a 1-D"):
        sourcead.grad(dot, jit=jit)(np.ones((2, 5)), x)
    with pytest.raises(ArgumentTypeError, match="argument `x` of dot must be a NumPy array"):
        sourcead.grad(dot, wrt=1, jit=jit)(3.0, x)
    with pytest.raises(ArgumentTypeError, match="`A` a 1-D float64 array .*reads it as a 2-D"):
        sourcead.grad(matrix_rows, jit=jit)(x, x)


# --- written arguments that overlap themselves --------------------------------------------------------


@JIT
def test_a_written_argument_that_overlaps_itself_is_refused(jit):
    x = RNG.standard_normal(5)

    def zero_stride():
        return as_strided(np.ones(1), shape=(5,), strides=(0,))

    assert into(x, zero_stride().copy()) != into(x, zero_stride())  # the derivative would be of another function
    for transform in (sourcead.grad, sourcead.value_and_grad, sourcead.vjp, sourcead.jvp):
        g = transform(into, jit=jit)
        seeds = {"vjp": {"cotangent": (1.0, np.ones(5))}, "jvp": {"tangents": np.ones(5)}}
        with pytest.raises(AliasingError, match="`buf` of into overlaps itself"):
            g(x, zero_stride(), **seeds.get(transform.__name__, {}))


@JIT
def test_overlapping_rows_of_a_written_argument_are_refused(jit):
    x = RNG.standard_normal(5)
    windows = as_strided(np.ones(6), shape=(5, 2), strides=(8, 8))  # each row shares an element with the next
    with pytest.raises(AliasingError, match="`B` of into_rows overlaps itself"):
        sourcead.grad(into_rows, jit=jit)(x, windows)
    report = sourcead.check_derivative(into_rows, x, np.ones((5, 2)), wrt=(0, 1), jit=jit)
    assert report.ok, str(report)


def into_rows(x, B):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += x[i] * B[i, j]
    s = 0.0
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            s += B[i, j] * B[i, j]
    return s


@JIT
def test_a_strided_written_argument_without_overlap_is_fine(jit):
    x = RNG.standard_normal(5)
    buf = RNG.standard_normal(10)[::2]  # not contiguous, elements distinct
    report = sourcead.check_derivative(into, x, buf, wrt=(0, 1), jit=jit)
    assert report.ok, str(report)


# --- .njit entries: the same contract in compiled code -------------------------------------------------


def test_njit_entries_check_the_shape_contract():
    x = RNG.standard_normal(5)
    with pytest.raises(ShapeError, match=r"y.shape\[0\] >= x.shape\[0\]"):
        sourcead.grad(dot, wrt=(0, 1)).njit(x, x[:3])
    with pytest.raises(ShapeError, match="cotangent of result 0 does not have the shape"):
        sourcead.vjp(scale).njit(x, x, np.ones(2))
    with pytest.raises(ShapeError, match="cotangent of the written argument `buf`"):
        sourcead.vjp(into).njit(x, x.copy(), (1.0, np.ones(2)))
    with pytest.raises(AliasingError, match="overlaps itself"):
        sourcead.grad(into).njit(x, as_strided(np.ones(1), shape=(5,), strides=(0,)))
    gx, gy = sourcead.grad(dot, wrt=(0, 1)).njit(x, x + 1.0)
    assert np.array_equal(gx, x + 1.0) and np.array_equal(gy, x)  # d(x.y)/dx = y, d/dy = x


def test_raw_errors_never_escape_the_plain_python_code():
    with pytest.raises(SourceADError):
        sourcead.grad(gather, jit=False)(RNG.standard_normal(3), np.array([5]))


# --- arrays that swap: static shapes where every name of the swap has the same one -----------------


def swap_buffers(x, k, steps):
    n = x.shape[0]
    u = x.copy()
    v = np.zeros(n)
    for _ in range(steps):
        v[0] = u[0]
        for i in range(1, n):
            v[i] = u[i] + k * (u[i - 1] - u[i])
        u, v = v, u
    s = 0.0
    for i in range(n):
        s += u[i] * u[i]
    return s


def swap_arguments(a, b):
    p = a.copy()
    q = b.copy()
    p, q = q, p  # p now has b's shape
    s = 0.0
    for i in range(a.shape[0]):
        s += p[i] * p[i]
    return s + q[0]


def swap_bound_late(x, steps):
    u = x.copy()
    s = 0.0
    for _ in range(steps):
        s += u[x.shape[0] - 1] * u[0]  # from the second step on, u is the v below
        v = np.zeros(2)
        v[0] = u[0]
        v[1] = u[0]
        u, v = v, u
    return s


@JIT
def test_buffers_of_one_shape_that_swap_need_no_bounds_checks(jit):
    g = sourcead.grad(swap_buffers, wrt=(0, 1), jit=jit)
    assert g._default.plan.complete
    x = RNG.standard_normal(7)
    report = sourcead.check_derivative(swap_buffers, x, 0.3, 4, wrt=(0, 1), jit=jit)
    assert report.ok, str(report)


@JIT
def test_arrays_of_different_shapes_that_swap_are_bounds_checked(jit):
    g = sourcead.grad(swap_arguments, wrt=(0, 1), jit=jit)
    assert not g._default.plan.complete  # p may hold b's array: p[i] over a's range is not covered
    a, b = RNG.standard_normal(5), RNG.standard_normal(3)
    with pytest.raises(ShapeError, match="out of range"):
        g(a, b)
    report = sourcead.check_derivative(swap_arguments, a, RNG.standard_normal(6), wrt=(0, 1), jit=jit)
    assert report.ok, str(report)


def test_a_swapped_name_bound_after_its_read_is_bounds_checked():
    g = sourcead.grad(swap_bound_late, wrt=0)
    assert not g._default.plan.complete
    with pytest.raises(ShapeError, match="out of range"):
        g(RNG.standard_normal(5), 3)  # u[4] of the 2-element v, in the second step


def swap_made_apart(x, y, steps):
    n = x.shape[0]
    u = y.copy()  # y's shape
    w = np.zeros(n)  # x's shape
    for _ in range(steps):
        for i in range(n):
            w[i] = 0.5 * u[i] * u[i] + x[i]
        u, w = w, u
    s = 0.0
    for i in range(n):
        s += u[i] * u[i]
    return s


def swap_moving_read(x, y, steps):
    n = x.shape[0]
    u = y.copy()
    w = np.zeros(n)
    s = 0.0
    for t in range(steps):
        s += u[t] * u[t]  # y[0] in the first step only: odd steps read the other buffer
        w[0] = u[0] + x[n - 1]
        u, w = w, u
    return s


def swap_read_first_alone(x, y, steps):
    n = x.shape[0]
    u = y.copy()
    w = np.zeros(n)
    for _ in range(steps):
        for i in range(n):
            w[i] = u[0] * x[i]
        u, w = w, u
    s = 0.0
    for i in range(n):
        s += u[i] * u[i]  # y's elements only where steps is 0 (or even): no read in the loop covers it
    return s


@JIT
def test_buffers_made_apart_that_swap_are_checked_at_the_call(jit):
    """`u = y.copy()` and `w = np.zeros(n)` exchange in a time loop: the first step reads y's
    array at every i, and so does the final sum where no step runs, so `y.shape[0] >= x.shape[0]`
    is exact, checked at the call, and nothing else needs bounds checks."""
    g = sourcead.grad(swap_made_apart, wrt=(0, 1), jit=jit)
    assert g._default.plan.complete
    x = RNG.standard_normal(5)
    for steps in (0, 1, 2, 3):
        report = sourcead.check_derivative(swap_made_apart, x, RNG.standard_normal(7), steps, wrt=(0, 1), jit=jit)
        assert report.ok, str(report)
        with pytest.raises(IndexError):
            swap_made_apart(x, RNG.standard_normal(4), steps)
        with pytest.raises(ShapeError, match=r"y.shape\[0\] >= x.shape\[0\]"):
            g(x, RNG.standard_normal(4), steps)


@JIT
def test_a_swapped_read_that_moves_with_the_swapping_loop_is_bounds_checked(jit):
    """`u[t]` reads y at t = 0, 2, ...: `y.shape[0] >= steps` would refuse calls the primal runs."""
    g = sourcead.grad(swap_moving_read, wrt=(0, 1), jit=jit)
    assert not g._default.plan.complete
    x, y = RNG.standard_normal(5), RNG.standard_normal(1)
    swap_moving_read(x, y, 2)  # runs: u[1] reads the 5-element buffer
    report = sourcead.check_derivative(swap_moving_read, x, y, 2, wrt=(0, 1), jit=jit)
    assert report.ok, str(report)
    with pytest.raises(IndexError):
        swap_moving_read(x, y, 3)
    with pytest.raises(ShapeError, match="out of range"):
        g(x, y, 3)  # u[2] of y's array, as the primal's IndexError


@JIT
def test_a_swapped_read_after_the_loop_that_no_read_in_it_covers_is_bounds_checked(jit):
    g = sourcead.grad(swap_read_first_alone, wrt=(0, 1), jit=jit)
    assert not g._default.plan.complete
    x, y = RNG.standard_normal(5), RNG.standard_normal(1)
    swap_read_first_alone(x, y, 1)  # runs: the final sum reads the 5-element buffer
    report = sourcead.check_derivative(swap_read_first_alone, x, y, 1, wrt=(0, 1), jit=jit)
    assert report.ok, str(report)
    with pytest.raises(ShapeError, match="out of range"):
        g(x, y, 2)  # back to y's array: y[1] does not exist


# --- triangular loops, ranged ints, locals bound in a loop, floor quotients of sizes --------------


def pairs(x):
    n = x.shape[0]
    s = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            s += x[i] * x[j]
    return s


def eliminate(A):
    # LU-like: A[k, j] for j in range(k + 1, n) asks what A[k, k] asks (A.shape[1] >= n)
    n = A.shape[0]
    U = A.copy()
    s = 0.0
    for k in range(n):
        p = k
        for i in range(k + 1, n):
            if abs(U[i, k]) > abs(U[p, k]):
                p = i
        s += U[p, k] * U[k, k]
        for j in range(k + 1, n):
            U[k, j] = U[k, j] * U[p, j]
            s += U[k, j]
    return s


def lower_reads(x, y):
    # y[j] for j < i < n: reaches y[n - 2], where the hull of the triangle says n - 1
    n = x.shape[0]
    s = 0.0
    for i in range(n):
        for j in range(i):
            s += x[i] * y[j]
    return s


def checked_elsewhere(x, y, m):
    n = x.shape[0]
    s = 0.0
    for _ in range(m):
        for i in range(n):
            s += y[i]  # checked at the call only where m > 0
    for i in range(n):
        for j in range(i + 1, n):
            s += x[i] * y[j]
    return s


def counted(x):
    p = 0
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            p += 1  # not a value the contract can bound
        s += x[i] * x[p]
    return s


def layers(x, y):
    # a local bound in the loop from its variable, a floor quotient of a size
    n = x.shape[0] // 2
    s = 0.0
    for layer in range(n):
        r = 2 * layer
        s += x[r] * x[r + 1] * y[r]
    return s


@JIT
def test_a_triangular_loop_over_its_own_array_needs_no_bounds_checks(jit):
    g = sourcead.grad(pairs, jit=jit)
    assert g._default.plan.complete and g._default.plan.source == ""  # holds for every call
    report = sourcead.check_derivative(pairs, RNG.standard_normal(6), jit=jit)
    assert report.ok, str(report)


@JIT
def test_a_pivot_and_triangular_rows_are_covered_by_the_diagonals_fact(jit):
    g = sourcead.grad(eliminate, jit=jit)
    assert g._default.plan.complete
    assert g._default.plan.source.count("if ") == 1  # A[k, k]: A.shape[1] >= A.shape[0], exactly
    with pytest.raises(ShapeError, match=r"A.shape\[1\] >= A.shape\[0\]"):
        g(RNG.standard_normal((4, 3)))
    A = np.random.default_rng(7).standard_normal((5, 7))  # pivots: 4 of 5 rows swap their pivot
    report = sourcead.check_derivative(eliminate, A, jit=jit)  # a fixed matrix: away from a tie
    assert report.ok, str(report)


@JIT
def test_a_triangular_bound_that_asks_more_than_the_code_reads_is_bounds_checked(jit):
    g = sourcead.grad(lower_reads, wrt=(0, 1), jit=jit)
    assert not g._default.plan.complete  # the hull asks len(y) >= n: not exact, so not checked
    x = RNG.standard_normal(5)
    report = sourcead.check_derivative(lower_reads, x, RNG.standard_normal(4), wrt=(0, 1), jit=jit)
    assert report.ok, str(report)  # n - 1 elements are what the code reads: not refused
    with pytest.raises(ShapeError, match="out of range"):
        g(x, RNG.standard_normal(3))


@JIT
def test_a_fact_checked_under_other_guards_does_not_cover_a_triangular_read(jit):
    g = sourcead.grad(checked_elsewhere, wrt=(0, 1), jit=jit)
    assert not g._default.plan.complete  # y[i]'s fact is not checked where m == 0
    with pytest.raises(ShapeError, match="out of range"):
        g(RNG.standard_normal(5), RNG.standard_normal(2), 0)
    x, y = RNG.standard_normal(5), RNG.standard_normal(5)
    report = sourcead.check_derivative(checked_elsewhere, x, y, 2, wrt=(0, 1), jit=jit)
    assert report.ok, str(report)


@JIT
def test_an_int_counted_by_data_stays_bounds_checked(jit):
    g = sourcead.grad(counted, jit=jit)
    assert not g._default.plan.complete
    with pytest.raises(ShapeError, match="out of range"):
        g(np.ones(4))  # p reaches 4
    report = sourcead.check_derivative(counted, np.array([1.0, -1.0, 2.0, -3.0]), jit=jit)
    assert report.ok, str(report)


@JIT
def test_locals_bound_in_a_loop_and_floor_quotients_are_contract_terms(jit):
    g = sourcead.grad(layers, wrt=(0, 1), jit=jit)
    assert g._default.plan.complete
    assert "x.shape[0] // 2" in g._default.plan.source
    with pytest.raises(ShapeError, match=r"y.shape\[0\] >= 2 \* \(x.shape\[0\] // 2\) - 1"):
        g(RNG.standard_normal(7), RNG.standard_normal(4))  # y[4] is read: 5 elements needed
    for n in (6, 7):
        report = sourcead.check_derivative(layers, RNG.standard_normal(n), RNG.standard_normal(5), wrt=(0, 1), jit=jit)
        assert report.ok, str(report)


def test_floor_quotients_reach_the_compiled_entry_checks():
    entry = sourcead.grad(layers, wrt=(0, 1)).njit
    with pytest.raises(ShapeError, match=r"y.shape\[0\] >= 2 \* \(x.shape\[0\] // 2\) - 1"):
        entry(RNG.standard_normal(7), RNG.standard_normal(4))
    x, y = RNG.standard_normal(7), RNG.standard_normal(5)
    assert np.allclose(entry(x, y)[1], sourcead.grad(layers, wrt=(0, 1), jit=False)(x, y)[1])


# --- prange loops: numba does not bounds-check an index that is the loop's own variable -----------


def mapped_unknown_length(x, y):
    r = x * 2.0  # a whole-array result: the contract does not know its length
    s = 0.0
    for i in numba.prange(r.shape[0]):
        s += r[i] * y[i]
    return s


def mapped_gather(x, idx):
    s = 0.0
    for i in numba.prange(idx.shape[0]):
        s += x[idx[i] - 1] * x[idx[i] - 1]  # computed from data: no fact covers it
    return s


def mapped_rows(X, obs):
    # bundle adjustment's pattern: rows picked by an int argument, in a parallel loop
    s = 0.0
    for i in numba.prange(obs.shape[0]):
        p = obs[i, 1]
        s += X[p, 0] * X[p, 1]
    return s


@JIT
def test_an_uncovered_index_at_the_prange_variable_is_checked_serially(jit):
    # fuzz seed 80, program 246: y[i] past y's end ran silently in the parallel, bounds-checked build
    from sourcead.build.jit import compiled_parallel

    g = sourcead.grad(mapped_unknown_length, wrt=(0, 1), jit=jit)
    x, y = RNG.standard_normal(5), RNG.standard_normal(3)
    variant = g._variant((x, y))
    assert not variant.plan.complete and not compiled_parallel(variant.compiled.spec)
    with pytest.raises(ShapeError, match="out of range"):
        g(x, y)
    report = sourcead.check_derivative(mapped_unknown_length, x, RNG.standard_normal(5), wrt=(0, 1), jit=jit)
    assert report.ok, str(report)


@JIT
@pytest.mark.parametrize("bad", [1, 2, 3])
def test_a_data_index_out_of_range_in_any_chunk_of_a_prange_raises(jit, bad):
    # an IndexError in another thread's chunks of a parallel loop was lost: the gradient came back
    # as the other chunks' sums (zeros here); bounds-checked variants now compile serially
    g = sourcead.grad(mapped_gather, wrt=0, jit=jit)
    x = RNG.standard_normal(4)
    idx = np.array([1, 2, 3])
    idx[bad - 1] = 5
    with pytest.raises(ShapeError, match="out of range"):
        g(x, idx)
    assert np.allclose(g(x, np.array([1, 4, 4])), [2 * x[0], 0.0, 0.0, 4 * x[3]])


@JIT
def test_rows_picked_by_an_int_argument_stay_parallel_and_unchecked(jit):
    from sourcead.build.jit import compiled_parallel

    g = sourcead.grad(mapped_rows, wrt=0, jit=jit)
    X, obs = RNG.standard_normal((6, 2)), np.array([[0, 5], [1, 2], [2, 5]])
    variant = g._variant((X, obs))
    assert variant.plan.complete and compiled_parallel(variant.compiled.spec)
    with pytest.raises(ShapeError, match=r"every value of obs\[0:obs.shape\[0\], 1\] in range\(-X.shape\[0\]"):
        g(X[:5], obs)
    report = sourcead.check_derivative(mapped_rows, X, obs, wrt=0, jit=jit)
    assert report.ok, str(report)


# --- operands Python may not evaluate ----------------------------------------------------------


def short_circuit(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.0 and y[i] > 0.0:  # y[i] is read only where x[i] > 0
            s += x[i] * y[i]
        s += y[i] if x[i] < -1.0 else x[i]
        if 0.0 < x[i] < y[i]:
            s += x[i]
    return s


@JIT
def test_operands_python_may_skip_ask_nothing_of_the_shapes(jit):
    # fuzz seed 81: `A[...] >= 1.0 and data[pos] ...` was refused for a data that only the skipped
    # operand indexes out of range
    x = np.array([-0.5, -0.25, -0.75])  # never > 0, never < -1: y is never read
    g = sourcead.grad(short_circuit, wrt=(0, 1), jit=jit)
    gx, gy = g(x, np.ones(1))
    assert np.array_equal(gx, np.ones(3)) and np.array_equal(gy, np.zeros(1))
    with pytest.raises(ShapeError, match="out of range"):
        g(np.array([-0.5, 2.0, 1.0]), np.ones(1))  # y[1]: now read, and past y's end
    report = sourcead.check_derivative(short_circuit, np.array([0.5, -2.0, 0.3]), np.array([1.5, 0.5, 0.1]),
                                       wrt=(0, 1), jit=jit)  # fmt: skip
    assert report.ok, str(report)


def picked_corner(M, perm):
    # fuzz seed 83: the check of M[perm[1], ...] read perm[1] itself, past a one-element perm
    return M[perm[1], perm[0]] * 2.0


@JIT
def test_the_check_of_a_data_index_does_not_index_out_of_range_itself(jit):
    g = sourcead.grad(picked_corner, wrt=0, jit=jit)
    M = RNG.standard_normal((3, 3))
    with pytest.raises(ShapeError, match="perm"):
        g(M, np.array([1]))
    assert g(M, np.array([2, 1]))[1, 2] == 2.0
