"""An array adjoint's first contribution written once (`postpass/first_contributions.py`,
`runtime/fresh.py`): `x_bar = zeros_like(y); x_bar += e` becomes `x_bar = first_of(e, y)` where e
is a new array no live name reaches (moved: no pass over memory), else `first_copy_of(e, y)` (a
float fills it, an array is copied: one pass, no zeros). Pinned: where each fires, where a move must
not (a view, a seed, an adjoint read later or in the next iteration, a prange body), the helpers'
own contract (a new array, never an alias of an input, float64), and every program's gradient
against central differences and the dot-product test, with and without numba.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import numpy as np
import pytest
from numeric import assert_close, assert_gradient_matches, norm, vdot
from sources import function_from_source

import sourcead
from sourcead.pipeline.driver import generate
from sourcead.postpass.first_contributions import assign_first_contributions
from sourcead.postpass.marked import rewrite_after
from sourcead.runtime import first_copy_of, first_of

# ---- text-level: the rewrite and where a move must not be made ----------------------------------
_ADJOINTS = frozenset({"x_bar", "z_bar", "w_bar", "y_bar"})


def _rewritten(body: str) -> str:
    body = textwrap.indent(textwrap.dedent(body).strip(), "    ")
    text = "def f_vjp(x, y, n, out_bar):\n    # reverse sweep\n" + body
    tree = cst.parse_module(text + "\n")
    out = rewrite_after(tree, "# reverse sweep", lambda s: assign_first_contributions(s, _ADJOINTS)).code
    return textwrap.dedent(out.split("# reverse sweep\n", 1)[1])


@pytest.mark.parametrize(
    "value, written",
    [
        ("2.0 * out_bar", "x_bar = first_of(2.0 * out_bar, y)"),  # arithmetic: a new value
        ("np.exp(y)", "x_bar = first_of(np.exp(y), y)"),
        ("np.where(y > 0.0, out_bar, 0.0)", "x_bar = first_of(np.where(y > 0.0, out_bar, 0.0), y)"),
        ("chosen(m, y * out_bar)", "x_bar = first_of(chosen(m, y * out_bar), y)"),
        # the zero adjoint read for its shape alone: y's shape, so the zeros are not read
        ("unbroadcast(np.exp(y), x_bar)", "x_bar = first_of(unbroadcast(np.exp(y), y), y)"),
        # may be a view or an argument itself: copied, never returned
        ("expand_axis(g, y, 0)", "x_bar = first_copy_of(expand_axis(g, y, 0), y)"),
        ("np.reshape(g, y.shape)", "x_bar = first_copy_of(np.reshape(g, y.shape), y)"),
        ("broadcast_like(y, g)", "x_bar = first_copy_of(broadcast_like(y, g), y)"),
        ("unbroadcast(g, y)", "x_bar = first_copy_of(unbroadcast(g, y), y)"),
        ("g[1:]", "x_bar = first_copy_of(g[1:], y)"),
        ("g.T", "x_bar = first_copy_of(g.T, y)"),
        ("out_bar", "x_bar = first_copy_of(out_bar, y)"),  # the seed: an argument
        ("y", "x_bar = first_copy_of(y, y)"),
    ],
)
def test_a_first_contribution_into_zeros_is_assigned(value, written):
    out = _rewritten(f"x_bar = zeros_like(y)\nx_bar += {value}\nx_bar += g")
    assert f"{written}\nx_bar += g\n" in out


def test_a_subtraction_is_a_negated_new_value():
    assert "x_bar = first_of(-(y * g), y)" in _rewritten("x_bar = zeros_like(y)\nx_bar -= y * g")


def test_the_shape_of_an_operation_is_kept():
    out = _rewritten("x_bar = zeros_like(broadcast_like(y, g))\nx_bar += np.exp(y)")
    assert "x_bar = first_of(np.exp(y), broadcast_like(y, g))" in out


def test_a_dead_owned_adjoint_is_moved():
    out = _rewritten("""
        z_bar = zeros_like(y)
        x_bar = zeros_like(y)
        z_bar += np.exp(y)
        z_bar[0] += 1.0
        add_outer(z_bar, True, g, g)
        x_bar += z_bar
        return x_bar
    """)
    assert "x_bar = first_of(z_bar, y)" in out


@pytest.mark.parametrize(
    "between, after, why",
    [
        ("", "w = z_bar * 2.0", "read later"),
        ("", "return x_bar, z_bar", "returned"),
        ("v = z_bar[1:]", "v[0] = 1.0", "a view of it is live"),
        ("v = z_bar", "", "a second name"),
        ("v = unbroadcast(z_bar, y)", "", "unbroadcast may return it"),
        ("v = chosen(m, z_bar)", "", "chosen may return it"),
        ("keep(z_bar)", "", "handed to a call that could keep it"),
    ],
)
def test_an_adjoint_that_may_be_reached_later_is_copied(between, after, why):
    out = _rewritten(f"""
        z_bar = np.exp(y)
        x_bar = zeros_like(y)
        {between}
        x_bar += z_bar
        {after}
    """)
    assert "x_bar = first_copy_of(z_bar, y)" in out, why


def test_an_adjoint_iterated_over_is_copied():
    out = _rewritten("""
        z_bar = np.exp(y)
        x_bar = zeros_like(y)
        for row in z_bar:
            w = row[0]
        x_bar += z_bar
        row[0] = 1.0
    """)
    assert "x_bar = first_copy_of(z_bar, y)" in out  # `row` is a view of z_bar's last row


def test_a_seed_or_an_alias_of_one_is_copied():
    out = _rewritten("z_bar = out_bar\nx_bar = zeros_like(y)\nx_bar += z_bar")
    assert "x_bar = first_copy_of(z_bar, y)" in out


def test_an_adjoint_owned_on_one_branch_only_is_copied():
    out = _rewritten("""
        if n > 0:
            z_bar = np.exp(y)
        else:
            z_bar = out_bar
        x_bar = zeros_like(y)
        x_bar += z_bar
    """)
    assert "x_bar = first_copy_of(z_bar, y)" in out


def test_an_adjoint_read_in_the_next_iteration_is_copied():
    out = _rewritten("""
        z_bar = np.exp(y)
        for i in range(n):
            x_bar = zeros_like(y)
            x_bar += z_bar
            y[i] += x_bar[i]
    """)
    assert "x_bar = first_copy_of(z_bar, y)" in out  # z_bar again at the next iteration
    out = _rewritten("""
        for i in range(n):
            z_bar = np.exp(y)
            x_bar = zeros_like(y)
            x_bar += z_bar
            w = z_bar[0]
    """)
    assert "x_bar = first_copy_of(z_bar, y)" in out


def test_a_loop_that_adds_again_or_a_prange_body_keeps_the_add():
    out = _rewritten("x_bar = zeros_like(y)\nfor i in range(n):\n    x_bar += np.exp(y)")
    assert "x_bar += np.exp(y)" in out
    out = _rewritten("for i in prange(n):\n    x_bar = zeros_like(y)\n    x_bar += np.exp(y)\n    y[i] = x_bar[0]")
    assert "x_bar += np.exp(y)" in out


def test_a_rebound_shape_or_a_touched_zero_keeps_the_add():
    for line in ("y = y * 2.0", "x_bar[0] = 1.0", "v = x_bar[1:]"):
        out = _rewritten(f"x_bar = zeros_like(y)\n{line}\nx_bar += np.exp(g)")
        assert "x_bar += np.exp(g)" in out, line


# ---- the runtime helpers ------------------------------------------------------------------------
def _helpers(jit: bool):
    if not jit:
        return first_of, first_copy_of
    import numba

    return numba.njit(lambda e, y: first_of(e, y)), numba.njit(lambda e, y: first_copy_of(e, y))


@pytest.fixture(scope="module", params=[False, True], ids=["python", "numba"])
def helpers(request):
    return _helpers(request.param)


def test_first_of_moves_a_new_array_of_the_shape(helpers):
    move, copy = helpers
    e, y = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    assert move(e, y) is e or np.shares_memory(move(e, y), e)
    got = copy(e, y)
    assert not np.shares_memory(got, e) and got.dtype == np.float64
    assert_close(got, e, 0.0)


@pytest.mark.parametrize(
    "e",
    [np.arange(3.0), np.asarray(2.5), 2.5, 3, np.arange(3, dtype=np.int64), np.arange(3.0, dtype=np.float32)],
    ids=["row", "0-d", "float", "int", "ints", "float32"],
)
def test_a_smaller_or_other_typed_value_is_broadcast_into_a_new_float64_array(helpers, e):
    y = np.ones((2, 3), dtype=np.float32)  # zeros_like gives float64 whatever y's dtype
    for helper in helpers:
        got = helper(e, y)
        assert got.shape == (2, 3) and got.dtype == np.float64
        assert_close(got, np.zeros((2, 3)) + e, 0.0)
        if isinstance(e, np.ndarray):
            assert not np.shares_memory(got, e)


def test_a_strided_value_is_copied_contiguous(helpers):
    move, _ = helpers
    e = np.arange(12.0).reshape(3, 4)[:, ::2]
    got = move(e, np.ones((3, 2)))
    assert not np.shares_memory(got, e) and got.flags.c_contiguous
    assert_close(got, e, 0.0)


# ---- whole programs: each rewrite fires, and gradients stay right ----------------------------------
PROGRAMS = """
def fill(a):
    r = a + np.sum(np.tanh(a))
    return np.sum(r)


def chain(x, w):
    y = np.sin(x) * w
    z = y
    u = z
    return np.sum(u * u)


def reduced(A):
    s = np.sum(A, axis=0)
    return np.sum(s * s)


def broadcast(A, v):
    B = A * v
    C = B
    return np.sum(C * C)


def steps(x, n):
    y = x * 1.0
    for k in range(n):
        y = np.sin(y) * 0.9
    return np.sum(y * y)


def read_later(x):
    y = np.cos(x)
    z = y
    return np.sum(z * z) + np.sum(y)


def sliced(x):
    y = np.sin(x)
    z = y[1:]
    return np.sum(z * z) + np.sum(y)


def rows(X):
    out = np.empty(X.shape[0])
    for i in prange(X.shape[0]):
        out[i] = np.sum(np.exp(X[i]) * X[i])
    y = out
    return np.sum(y * y)
"""
RNG = np.random.default_rng(40)
X23 = RNG.standard_normal((2, 3))
# name: (arguments, wrt, a line the reverse sweep holds)
CASES = {
    "fill": ((RNG.standard_normal(4),), ("a",), "r_bar = first_copy_of(result_bar, a)"),  # a float fills it
    "chain": ((RNG.standard_normal(4), RNG.standard_normal(4)), ("x", "w"), "y_bar = first_of(z_bar, y)"),
    "reduced": ((X23,), ("A",), "A_bar = first_copy_of(expand_axis(s_bar, A, 0), A)"),  # a broadcast view
    "broadcast": ((X23, RNG.standard_normal(3)), ("A", "v"), "B_bar = first_of(C_bar, broadcast_like(A, v))"),
    "steps": ((RNG.standard_normal(3), 3), ("x",), "x_bar = first_of(y_bar, x)"),
    "read_later": ((RNG.standard_normal(3),), ("x",), "y_bar += z_bar"),
    "sliced": ((RNG.standard_normal(4),), ("x",), "add_into(y_bar[1:], z_bar)"),
    "rows": ((X23,), ("X",), "X_bar[i] += chosen("),  # a prange body stays as written
}
KINDS = {"steps": {"x": "array:1", "n": "int"}}


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("first_contributions")
    return {name: function_from_source(folder, "from numba import prange\n\n" + PROGRAMS, name) for name in CASES}


def _kinds(name: str, args: tuple, params: tuple[str, ...]) -> dict[str, str]:
    found = {p: f"array:{a.ndim}" for p, a in zip(params, args, strict=False) if isinstance(a, np.ndarray)}
    return {**found, **KINDS.get(name, {})}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_program_holds_its_rewrite(programs, name):
    func = programs[name]
    args, wrt, line = CASES[name]
    params = func.__code__.co_varnames[: func.__code__.co_argcount]
    text = generate(func, "gradient", wrt, _kinds(name, args, params)).source
    assert line in text.partition("# reverse sweep")[2]


@pytest.fixture(scope="module")
def compiled(programs):
    return {name: sourcead.grad(programs[name], wrt=CASES[name][1]) for name in CASES}


def _copies(args: tuple) -> tuple:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_central_differences(programs, compiled, name, jit):
    func = programs[name]
    args, wrt, _ = CASES[name]
    grad = compiled[name] if jit else sourcead.grad(func, wrt=wrt, jit=False)
    given = _copies(args)
    got = grad(*given)
    for before, after in zip(args, given, strict=True):
        assert_close(after, before, 0.0)  # the arguments are not written
    for g in got if isinstance(got, tuple) else (got,):
        assert not any(np.shares_memory(g, a) for a in given if isinstance(a, np.ndarray))
    assert_gradient_matches(func, args, wrt, got, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_and_reverse_agree(programs, name):
    func = programs[name]
    args, wrt, _ = CASES[name]
    params = func.__code__.co_varnames[: func.__code__.co_argcount]
    tangents = tuple(RNG.standard_normal(np.shape(a)) for p, a in zip(params, args, strict=True) if p in wrt)
    _, jv = sourcead.jvp(func, wrt=wrt, jit=False)(*_copies(args), tangents=tangents)
    _, jtw = sourcead.vjp(func, wrt=wrt, jit=False)(*_copies(args), cotangent=0.7)
    jtw = jtw if isinstance(jtw, tuple) else (jtw,)
    assert_close(vdot(jtw, tangents), 0.7 * jv, rtol=1e-10, atol=1e-12 * norm(jtw) * norm(tangents))
