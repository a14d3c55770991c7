"""Rank-1 updates of one adjoint matrix in one pass (`postpass/outers.py`), into a zero adjoint as
a new array (`postpass/first_contributions.py`: `outer_of`, `outers_of`), and a scalar factor of a
matrix product's operand moved onto its seed (`reverse/scaled.py`): the text each makes, where
each must not apply, the runtime helpers against NumPy, and gradients against central differences
with and without numba."""

from __future__ import annotations

import textwrap

import libcst as cst
import numpy as np
import pytest
from numeric import assert_close, assert_gradient_matches
from sources import function_from_source

import sourcead
from sourcead.pipeline.driver import generate
from sourcead.postpass.first_contributions import assign_first_contributions
from sourcead.postpass.marked import rewrite_after
from sourcead.postpass.outers import fuse_outers
from sourcead.runtime import add_outer, add_outers, add_product, add_products, outer_of, outers_of

_ADJOINTS = frozenset({"A_bar", "x_bar", "u_bar"})


def _sweep(body: str, *rewrites) -> str:
    text = "def f_vjp(A, x, u, v, w, z, n, out_bar):\n    # reverse sweep\n"
    text += textwrap.indent(textwrap.dedent(body).strip(), "    ") + "\n"
    out = rewrite_after(cst.parse_module(text), "# reverse sweep", *rewrites).code
    return textwrap.dedent(out.split("# reverse sweep\n", 1)[1])


def _fused(body: str) -> str:
    return _sweep(body, lambda s: fuse_outers(s, _ADJOINTS))


def test_two_updates_of_one_matrix_are_one_pass_where_what_they_read_holds():
    out = _fused("""
        add_outer(A_bar, True, u, v)
        t0 = u * 2.0
        x_bar += t0
        add_outer(A_bar, m, t0, z)
    """)
    assert out == "t0 = u * 2.0\nx_bar += t0\nadd_outers(A_bar, True, u, v, m, t0, z)\n", out
    inside = _fused("for i in range(n):\n    add_outer(A_bar, True, u, v)\n    add_outer(A_bar, True, w, z)")
    assert "    add_outers(A_bar, True, u, v, True, w, z)" in inside, inside


@pytest.mark.parametrize(
    "between",
    [
        "u = w * 2.0",  # binds what the first update reads
        "A_bar[0, 0] += 1.0",  # writes the matrix
        "t = A_bar[0]",  # reads the matrix (a view)
        "u[0] = 1.0",  # writes what the first update reads
        "w += z",  # an array that is not an adjoint may be a view of u
        "record(u)",  # a call whose result is dropped: an in-place helper
        "for i in range(n):\n    t = 1.0",  # a loop between
    ],
)
def test_updates_stay_apart_where_a_statement_between_may_change_what_they_read(between):
    out = _fused(f"add_outer(A_bar, True, u, v)\n{between}\nadd_outer(A_bar, True, w, z)")
    assert "add_outers" not in out and out.count("add_outer(") == 2, out


def test_an_adjoint_the_first_update_reads_may_not_change_between():
    out = _fused("add_outer(A_bar, True, u_bar, v)\nu_bar += z\nadd_outer(A_bar, True, w, z)")
    assert "add_outers" not in out
    out = _fused("add_outer(A_bar, True, u, v)\nu_bar += z\nadd_outer(A_bar, True, w, z)")
    assert "add_outers(A_bar, True, u, v, True, w, z)" in out  # another adjoint: no view of u


def test_updates_of_two_matrices_or_reading_their_own_stay_apart():
    out = _fused("add_outer(A_bar, True, u, v)\nadd_outer(x_bar, True, w, z)")
    assert "add_outers" not in out
    out = _fused("add_outer(A_bar, True, u, v)\nadd_outer(A_bar, True, A_bar[0], z)")
    assert "add_outers" not in out


def test_a_dot_products_two_contributions_are_one_loop():
    out = _fused("add_product(A_bar[i, :i], m, g, x[:i])\nadd_product(x_bar[:i], m, g, A[i, :i])")
    assert out == "add_products(A_bar[i, :i], m, g, x[:i], x_bar[:i], m, g, A[i, :i])\n", out
    apart = [
        "add_product(A_bar[i, :i], m, g, x[:i])\nt = 1.0\nadd_product(x_bar[:i], m, g, A[i, :i])",  # not adjacent
        "add_product(A_bar[i, :i], m, g, x_bar[:i])\nadd_product(x_bar[:i], m, g, A[i, :i])",  # reads the other's
        "add_product(A_bar[i, :i], m, g, A_bar[0, :i])\nadd_product(x_bar[:i], m, g, A[i, :i])",  # its own
        "add_product(A[i, :i], m, g, x[:i])\nadd_product(x_bar[:i], m, g, A[i, :i])",  # not into an adjoint
        # two slices of one adjoint (lu's row and column, cholesky's two rows): two loops are faster
        "add_product(A_bar[i, :j], m, g, A[:j, j])\nadd_product(A_bar[:j, j], m, g, A[i, :j])",
        "add_product(A_bar[i, :j], m, g, A[j, :j])\nadd_product(A_bar[j, :j], m, g, A[i, :j])",
    ]
    for body in apart:
        assert "add_products" not in _fused(body), body


def test_the_product_helper_adds_as_two_loops_do():
    rng = np.random.default_rng(4)
    v, w, start = rng.standard_normal(5), rng.standard_normal(5), rng.standard_normal((2, 5))
    for m, n, k in ((True, True, 5), (True, False, 5), (False, True, 5), (True, True, 3)):
        expected = start.copy()
        add_product(expected[0, :k], m, 0.3, v[:k])
        add_product(expected[1], n, -1.7, w)
        got = start.copy()
        add_products(got[0, :k], m, 0.3, v[:k], got[1], n, -1.7, w)
        assert np.array_equal(got, expected)
    same = start.copy()
    add_products(same[0], True, 0.3, v, same[0], True, -1.7, w)  # one slice twice: each element's two adds in order
    expected = start.copy()
    add_product(expected[0], True, 0.3, v)
    add_product(expected[0], True, -1.7, w)
    assert np.array_equal(same, expected)
    with pytest.raises(ValueError, match="inner sizes differ"):
        add_products(start[0], True, 0.3, v[:3], start[1], True, 1.0, w)


def _products_in_both_orders(v, w, start):
    """add_products into two overlapping views of one array, against add_product twice: two
    rows shifted by one (contiguous: the fused loop where compiled), a row and a column (strided:
    two loops)."""
    fused, apart = start.copy(), start.copy()
    add_products(fused[0, :5], True, 0.3, v, fused[0, 1:], True, -1.7, w)
    add_product(apart[0, :5], True, 0.3, v)
    add_product(apart[0, 1:], True, -1.7, w)
    add_products(fused[1, 1:], True, 1.1, v, fused[1:, 1], True, 0.6, w)
    add_product(apart[1, 1:], True, 1.1, v)
    add_product(apart[1:, 1], True, 0.6, w)
    return fused, apart


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_the_product_helper_into_overlapping_views_only_adds_in_another_order(jit):
    import numba

    rng = np.random.default_rng(6)
    v, w, start = rng.standard_normal(5), rng.standard_normal(5), rng.standard_normal((6, 6))
    run = numba.njit(_products_in_both_orders) if jit else _products_in_both_orders
    fused, apart = run(v, w, start)
    assert not np.array_equal(fused, start)
    assert_close(fused, apart, rtol=1e-15, atol=1e-15)


def test_an_update_of_a_zero_matrix_is_a_new_array():
    def first(body: str) -> str:
        return _sweep(body, lambda s: assign_first_contributions(s, _ADJOINTS))

    out = first("A_bar = zeros_like(A)\nadd_outer(A_bar, m, u, v)\nadd_outer(A_bar, True, w, z)")
    assert "A_bar = outer_of(A, m, u, v)\nadd_outer(A_bar, True, w, z)\n" in out, out
    out = first("A_bar = zeros_like(A)\nadd_outers(A_bar, True, u, v, m, w, z)")
    assert "A_bar = outers_of(A, True, u, v, m, w, z)" in out, out
    kept = ["A_bar[0, 0] = 1.0", "A = A * 2.0", "t = A_bar[1:]"]
    for line in kept:  # touched, or another shape: no longer known zero of A's shape
        out = first(f"A_bar = zeros_like(A)\n{line}\nadd_outer(A_bar, True, u, v)")
        assert "add_outer(A_bar, True, u, v)" in out, line
    out = first("A_bar = zeros_like(A)\nfor i in range(n):\n    add_outer(A_bar, True, u, v)")
    assert "add_outer(A_bar, True, u, v)" in out  # the second iteration adds to the first
    out = first("A_bar = zeros_like(A)\nadd_outer(A_bar, True, A_bar[0], v)")
    assert "outer_of" not in out  # reads the matrix it would replace


def test_the_helpers_add_as_two_updates_do():
    rng = np.random.default_rng(3)
    u, w = rng.standard_normal(3), rng.standard_normal(3)
    v, z = rng.standard_normal(4), rng.standard_normal(4)
    start = rng.standard_normal((3, 4))
    for m in (True, False):
        for n in (True, False):
            expected = start.copy()
            add_outer(expected, m, u, v)
            add_outer(expected, n, w, z)
            got = start.copy()
            add_outers(got, m, u, v, n, w, z)
            assert np.array_equal(got, expected)  # the same sums, in the same order
            fresh = np.zeros((3, 4))
            add_outer(fresh, m, u, v)
            add_outer(fresh, n, w, z)
            assert_close(outers_of(start, m, u, v, n, w, z), fresh, rtol=0.0)
            assert_close(outer_of(start, m, u, v), m * np.outer(u, v), rtol=0.0)
    for call in (
        lambda: add_outers(start, True, u, u, True, w, z),  # a vector of the wrong length
        lambda: outer_of(np.zeros((2, 4)), True, u, v),  # a matrix of the wrong shape
        lambda: outers_of(start, True, u, v, True, w, u),
    ):
        with pytest.raises(ValueError, match="sizes do not match"):
            call()


_FUNCTIONS = """
def atax(A, x):
    return np.sum((A @ x) @ A)


def gesummv(alpha, beta, A, B, x):
    return np.sum(np.sin(alpha * A @ x + (B * beta) @ x))


def scaled_left(alpha, A, y):
    return np.sum(np.cos(y @ (alpha * A)))


def scaled_product(alpha, A, x):
    return np.sum(np.tanh(alpha * (A @ x)))


def by_vector(v, A, x):
    return np.sum(np.sin((v * A) @ x))
"""


@pytest.fixture(scope="module")
def functions(tmp_path_factory):
    folder = tmp_path_factory.mktemp("outers")
    names = ("atax", "gesummv", "scaled_left", "scaled_product", "by_vector")
    return {name: function_from_source(folder, _FUNCTIONS, name) for name in names}


def _cases():
    rng = np.random.default_rng(5)
    A, B = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    x, y, v = rng.standard_normal(3), rng.standard_normal(4), rng.standard_normal(4)
    return {
        "atax": ((A, x), ("A", "x")),
        "gesummv": ((1.5, 0.7, A, B, x), ("A", "B", "x")),
        "scaled_left": ((1.3, A, y), ("A", "y")),
        "scaled_product": ((0.4, A, x), ("A", "x")),
        "by_vector": ((v.reshape(4, 1), A, x), ("v", "A", "x")),
    }


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("name", ["atax", "gesummv", "scaled_left", "scaled_product", "by_vector"])
def test_gradients_through_the_rewrites_match_central_differences(functions, name, jit):
    args, wrt = _cases()[name]
    g = sourcead.grad(functions[name], wrt=wrt, jit=jit)
    assert_gradient_matches(functions[name], args, wrt, g(*args), rtol=1e-6, atol=1e-8)
    params = functions[name].__code__.co_varnames[: len(args)]
    kinds = {p: f"array:{a.ndim}" if isinstance(a, np.ndarray) else "float" for p, a in zip(params, args, strict=True)}
    text = generate(functions[name], "gradient", wrt, kinds).source  # the code for these arguments
    code = "\n".join(line.partition("#")[0] for line in text.split("# reverse sweep")[1].splitlines())
    if name == "atax":
        assert "A_bar = outers_of(A, " in code and "zeros_like(A)" not in code
    elif name == "gesummv":  # no copy of A scaled (but the primal's, for np.sin), no outer product scaled
        assert code.count("alpha * A") == code.count("B * beta") == 1, code
        assert "matmul_bar_right(alpha * t" in code and "outer_of(A, result_bar != 0.0, alpha * t" in code, code
    elif name == "scaled_left":  # the primal's product only (for np.cos), not in an adjoint
        assert code.count("alpha * A") == 1 and "matmul_bar_left(alpha * t" in code, code
    elif name == "by_vector":  # v is an array: `v * A` is no scalar factor
        assert "v * A" in code, code
