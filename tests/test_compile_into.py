"""In-place helpers that keep numba's compile of a gradient short: `add_into(x, g)` and
`subtract_into(x, g)` (`x += unbroadcast(g, x)`, `x -= unbroadcast(g, x)` for an array x, a view),
and `restore_flat(tape, top, x)` (a recorded row or slice loaded back in place).

The reverse sweep wrote an accumulation into a slice of an adjoint, `x_bar[s] += unbroadcast(g,
x_bar[s])`, and a restore, `x[s] = tape[top : top + x[s].size].reshape(x[s].shape)`, as slices
assigned from arrays, which numba lowers inline as an overlap test, a copy and loop nests; the
calls are helpers compiled once per argument types. Each helper must be the line it stands for, for
every operand the sweeps give it (views of any layout, broadcast shapes both ways, a number, an
operand that overlaps the target), with numba and in plain NumPy; and the gradients written with
them must match central differences, compiled and not.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numeric import finite_difference_gradient

import sourcead
from sourcead.pipeline.driver import generate
from sourcead.runtime import add_into, record_flat, restore_flat, subtract_into, unbroadcast

RNG = np.random.default_rng(11)


def _base(shape):
    return RNG.standard_normal(shape)


# (base array, the view of it added into, g: an array, a view of the base itself, or a number)
CASES = {
    "same shape, strided view": (_base((6, 8)), lambda a: a[1:, ::2], lambda a: _base((5, 4))),
    "g broadcast along rows": (_base((5, 4)), lambda a: a[1:, :], lambda a: _base((1, 4))),
    "target broadcast: g summed": (_base((5, 4)), lambda a: a[1:2, :], lambda a: _base((3, 4))),
    "g lacks an axis": (_base((5, 4)), lambda a: a[:, 1:], lambda a: _base((3,))),
    "g has an extra axis": (_base((6,)), lambda a: a[2:], lambda a: _base((3, 4))),
    "a number": (_base((3, 4, 2)), lambda a: a[:, 1:, :], lambda a: 1.5),
    "overlaps, shifted up": (_base((7,)), lambda a: a[1:], lambda a: a[:-1]),
    "overlaps, shifted down": (_base((7,)), lambda a: a[:-1], lambda a: a[1:]),
    "3-D slices": (_base((4, 5, 3)), lambda a: a[1:, :-1, :], lambda a: _base((3, 4, 3))),
}


def _expected(base, view_of, g_of, sign):
    """NumPy's `view += unbroadcast(g, view)` (g read before the view is written, as NumPy does)."""
    a = base.copy()
    g = g_of(a)
    g = g.copy() if isinstance(g, np.ndarray) else g
    view = view_of(a)
    view += sign * unbroadcast(g, view)
    return a


def _compiled(view_of, g_of, helper):
    @numba.njit
    def run(a):
        helper(view_of(a), g_of(a))

    return run


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("helper, sign", [(add_into, 1.0), (subtract_into, -1.0)], ids=["add", "subtract"])
def test_it_is_the_line_it_stands_for(name, helper, sign):
    base, view_of, g_of = CASES[name]
    g_fixed = g_of(base)
    if isinstance(g_fixed, np.ndarray) and not np.shares_memory(g_fixed, base):
        g_of = lambda a, g=g_fixed: g  # noqa: E731 - the same array every call
    expected = _expected(base, view_of, g_of, sign)
    plain = base.copy()
    helper(view_of(plain), g_of(plain))
    np.testing.assert_allclose(plain, expected, rtol=1e-13, atol=1e-13)
    compiled = base.copy()
    _compiled(numba.njit(view_of), numba.njit(g_of), helper)(compiled)
    np.testing.assert_allclose(compiled, expected, rtol=1e-13, atol=1e-13)


def test_shapes_that_do_not_broadcast_raise():
    @numba.njit
    def run(a, g):
        add_into(a[1:], g)

    with pytest.raises(ValueError):
        run(np.zeros(5), np.ones(3))


@pytest.mark.parametrize("view", ["row", "column", "block"])
def test_restore_flat_loads_what_record_flat_stored(view):
    pick = {
        "row": lambda a: a[2, 1:],
        "column": lambda a: a[1:, 3],
        "block": lambda a: a[1:3, ::2],
    }[view]

    def round_trip(a, tape):
        record_flat(tape, 2, pick(a))
        before = pick(a).copy()
        pick(a)[...] = -1.0  # overwritten, then loaded back
        restore_flat(tape, 2, pick(a))
        return before

    picked = numba.njit(pick)
    for run in (round_trip, lambda a, tape: _njit_round_trip(a, tape, picked)):
        a, tape = _base((4, 5)), np.zeros(40)
        original = a.copy()
        before = run(a, tape)
        np.testing.assert_array_equal(a, original)
        np.testing.assert_array_equal(tape[2 : 2 + before.size], before.ravel())


@numba.njit
def _njit_round_trip(a, tape, pick):
    record_flat(tape, 2, pick(a))
    before = pick(a).copy()
    view = pick(a)
    view[...] = -1.0
    restore_flat(tape, 2, pick(a))
    return before


# --- the generated code --------------------------------------------------------------------------


def shifted_sums(x, w):
    y = np.zeros(x.shape[0] + 1)
    y[1:] += x * w[0]
    y[:-1] -= 2.0 * x
    z = y[1:] * y[:-1]
    return np.sum(z * w[1])


def row_sweeps(u, c):
    v = u.copy()
    for t in range(3):
        for j in range(1, v.shape[0]):
            v[j, 1:] = c * v[j - 1, 1:] * v[j, :-1] + v[j, 1:]
    return np.sum(v * v)


PROGRAMS = {
    "shifted_sums": (shifted_sums, ("x", "w"), {"x": "array:1", "w": "array:1"}, lambda: (_base((5,)), _base((2,)))),
    "row_sweeps": (row_sweeps, ("u",), {"u": "array:2", "c": "float"}, lambda: (0.3 * _base((4, 5)), 0.7)),
}


@pytest.fixture(scope="module", params=list(PROGRAMS))
def program(request):
    func, wrt, kinds, make_args = PROGRAMS[request.param]
    return request.param, func, wrt, kinds, make_args()


def test_the_sweeps_write_them(program):
    name, func, wrt, kinds, _ = program
    source = generate(func, "gradient", wrt, kinds).source
    assert "add_into(" in source or "subtract_into(" in source
    assert "+= unbroadcast(" not in source
    if name == "row_sweeps":
        assert "restore_flat(" in source
        assert ".reshape(" not in source


@pytest.mark.parametrize("jit", [False, True], ids=["plain", "numba"])
def test_gradients_written_with_them_match_central_differences(program, jit):
    _, func, wrt, _, args = program
    got = sourcead.grad(func, wrt=wrt, jit=jit)(*args)
    got = got if isinstance(got, tuple) else (got,)
    expected = finite_difference_gradient(func, args, wrt)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)
