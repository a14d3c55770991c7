"""Sparse Jacobians and Hessians (`ad.sparsity`, `sparse=True`) on the zoo of patterns
(tests/programs/sparse_zoo.py), with and without numba: the pattern holds every nonzero of the
dense result (and is exact for affine code), the sparse result equals the dense one number for
number, and both agree with central finite differences."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import sparse_zoo as zoo

import sourcead as ad

JITS = [pytest.param(False, id="python"), pytest.param(True, id="numba")]
_MADE: dict[tuple, object] = {}


def made(kind: str, func, wrt, jit: bool | None = None, **options):
    """Prepared objects shared by the tests of this module (one compile each)."""
    key = (kind, func.__name__, wrt, jit, tuple(sorted(options.items())))
    if key not in _MADE:
        if kind == "sparsity":
            _MADE[key] = ad.sparsity(func, wrt, **options)
        else:
            _MADE[key] = getattr(ad, kind)(func, wrt, jit=jit, **options)
    return _MADE[key]


def whole(blocks) -> np.ndarray:
    """A sparse result (or a tuple of blocks, nested for a Hessian) as one dense matrix."""
    if isinstance(blocks, tuple):
        if isinstance(blocks[0], tuple):
            return np.block([[b.toarray() for b in row] for row in blocks])
        return np.hstack([b.toarray() for b in blocks])
    return blocks.toarray()


def dense_jacobian(func, wrt, args, jit, mode="forward") -> np.ndarray:
    J = made("jacobian", func, wrt, jit, mode=mode)(*args)
    value = func(*args)
    m = int(np.size(value))
    blocks = J if isinstance(wrt, tuple) else (J,)
    return np.hstack([np.reshape(b, (m, -1)) for b in blocks])


def flat_function(func, wrt, args):
    """f as a function of the wrt arguments' elements, flat and concatenated."""
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    shapes = [np.shape(args[k]) for k in positions]
    sizes = [int(np.prod(s)) for s in shapes]

    def f(v):
        call = list(args)
        start = 0
        for k, shape, size in zip(positions, shapes, sizes, strict=True):
            call[k] = v[start : start + size].reshape(shape)
            start += size
        return np.atleast_1d(np.asarray(func(*call), dtype=float)).ravel()

    v0 = np.concatenate([np.ravel(args[k]).astype(float) for k in positions])
    return f, v0


def finite_jacobian(f, v0, h=1e-6) -> np.ndarray:
    cols = []
    for j in range(v0.size):
        e = np.zeros_like(v0)
        e[j] = h
        cols.append((f(v0 + e) - f(v0 - e)) / (2 * h))
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("jit", JITS)
@pytest.mark.parametrize("name", sorted(zoo.JACOBIANS))
def test_sparse_jacobian_matches_dense_and_differences(name, jit):
    func, make, wrt, exact = zoo.JACOBIANS[name]
    args = make()
    P = whole(made("sparsity", func, wrt)(*args))
    D = dense_jacobian(func, wrt, args, jit)
    J = made("jacobian", func, wrt, jit, sparse=True, mode="forward")(*args)
    blocks = J if isinstance(wrt, tuple) else (J,)
    assert all(isinstance(b, sp.csr_array) and b.dtype == np.float64 for b in blocks)
    assert P.shape == D.shape
    assert not (D != 0)[~P].any(), "the pattern misses a nonzero"
    assert np.array_equal(whole(J), D), "sparse and dense differ"  # forward mode both: the same sums
    auto = whole(made("jacobian", func, wrt, jit, sparse=True)(*args))  # maybe reverse passes: other roundings
    np.testing.assert_allclose(auto, D, rtol=1e-13, atol=1e-13)
    stored = np.zeros(D.shape, dtype=bool)
    for b, lo in zip(blocks, np.cumsum([0, *[b.shape[1] for b in blocks]]), strict=False):
        coo = b.tocoo()
        stored[coo.row, lo + coo.col] = True
    assert not stored[~P].any(), "a stored entry outside the pattern"
    f, v0 = flat_function(func, wrt, args)
    np.testing.assert_allclose(whole(J), finite_jacobian(f, v0), rtol=1e-6, atol=1e-6)
    if exact is not None:
        assert np.array_equal(P, exact()), "affine code: the pattern is exact"


@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
@pytest.mark.parametrize("name", ["arrowhead", "banded", "reductions"])
def test_every_mode_gives_the_dense_numbers(name, mode):
    func, make, wrt, _ = zoo.JACOBIANS[name]
    args = make()
    J = made("jacobian", func, wrt, False, sparse=True, mode=mode)(*args)
    if mode == "auto":
        np.testing.assert_allclose(J.toarray(), dense_jacobian(func, wrt, args, False), rtol=1e-13, atol=1e-13)
    else:
        assert np.array_equal(J.toarray(), dense_jacobian(func, wrt, args, False, mode))


def test_auto_picks_the_fewest_sweeps():
    args = (np.linspace(0.1, 1.0, 30),)
    arrow = made("jacobian", zoo.arrowhead, 0, False, sparse=True)
    _, plan = arrow.plan(*args)
    assert plan.side == "both" and plan.count <= 4  # a dense row and column defeat one-sided colourings
    _, plan = made("jacobian", zoo.reductions, 0, False, sparse=True).plan(*args)
    assert plan.side == "reverse" and plan.count == 1  # one row: one vjp
    _, plan = made("jacobian", zoo.banded, 0, False, sparse=True).plan(*args)
    assert plan.side == "forward" and plan.count == 3


@pytest.mark.parametrize("jit", JITS)
@pytest.mark.parametrize("name", sorted(zoo.HESSIANS))
def test_sparse_hessian_matches_dense_and_differences(name, jit):
    func, make, wrt = zoo.HESSIANS[name]
    args = make()
    P = whole(made("sparsity", func, wrt, of="hessian")(*args))
    assert np.array_equal(P, P.T), "a Hessian's pattern is symmetric"
    dense = made("hessian", func, wrt, jit)(*args)
    if isinstance(wrt, tuple):
        D = np.block([[np.reshape(b, (np.size(args[i]), np.size(args[j]))) for j, b in enumerate(row)]
                      for i, row in enumerate(dense)])  # fmt: skip
    else:
        D = np.reshape(dense, P.shape)
    assert not (D != 0)[~P].any(), "the pattern misses a nonzero"
    H = whole(made("hessian", func, wrt, jit, sparse=True)(*args))
    assert np.array_equal(H, H.T), "star decompression reads (i, j) and (j, i) from one hvp"
    # the dense Hessian's column j is hvp(e_j): its (i, j) and (j, i) may differ by an ulp, and the
    # sparse one reads each pair from one of the two hvps
    np.testing.assert_allclose(H, D, rtol=1e-14, atol=1e-14 * max(1.0, np.abs(D).max()))
    g = ad.grad(func, wrt, jit=False)
    positions = wrt if isinstance(wrt, tuple) else (wrt,)

    def flat_gradient(v):
        f, _ = flat_function(lambda *a: np.concatenate([np.ravel(x) for x in _tuple(g(*a))]), wrt, args)
        return f(v)

    _, v0 = flat_function(func, wrt, args)
    np.testing.assert_allclose(H, finite_jacobian(flat_gradient, v0), rtol=1e-5, atol=1e-5)
    assert len(positions) == (len(wrt) if isinstance(wrt, tuple) else 1)


def _tuple(value):
    return value if isinstance(value, tuple) else (value,)


def test_accidental_zeros_keep_their_entries():
    # d r_i / d x_i = y_i - sin(x_i) and d r_i / d y_i = x_i: zero at x = y = 0, structurally there
    func, make, wrt, _ = zoo.JACOBIANS["accidental_zeros"]
    args = make()
    Px, Py = made("sparsity", func, wrt)(*args)
    assert np.array_equal(Px.toarray(), np.eye(5, dtype=bool)) and np.array_equal(Py.toarray(), np.eye(5, dtype=bool))
    assert not any(block.any() for block in ad.jacobian(func, wrt, jit=False)(*args))
    Jx, Jy = made("jacobian", func, wrt, False, sparse=True)(*args)
    assert Jx.nnz == 5 and Jy.nnz == 5  # stored zeros: the structure is the pattern's


def test_data_index_and_branch_follow_the_arguments():
    x = np.linspace(-1.0, 1.0, 6)
    idx = np.array([5, 0, 2, 2, 4])
    P = made("sparsity", zoo.data_index, 0)(x, idx).toarray()
    expected = np.zeros((5, 6), dtype=bool)
    expected[np.arange(5), idx] = True
    expected[np.arange(5), np.arange(5)] = True
    assert np.array_equal(P, expected)
    pattern = made("sparsity", zoo.data_index, 0).pattern(x, idx)
    assert not pattern.static and any("index" in r for r in pattern.local)
    branch = made("sparsity", zoo.data_branch, 0)
    assert not branch.pattern(x).static
    assert made("sparsity", zoo.banded, 0).pattern(x).static
    P = branch(np.array([1.0, -1.0, 1.0])).toarray()
    assert np.array_equal(P, np.array([[True, True, False], [False, True, False]]))


def test_scalar_result_is_one_row():
    x = np.linspace(0.5, 1.5, 6)
    P = made("sparsity", zoo.reductions, 0)(x)
    assert P.shape == (1, 6) and P.toarray().all()
    J = made("jacobian", zoo.reductions, 0, False, sparse=True)(x)
    assert J.shape == (1, 6)


def test_patterns_are_cached_by_shape_when_static():
    jac = ad.jacobian(zoo.banded, sparse=True, jit=False)
    first = jac.plan(np.linspace(0, 1, 10))
    assert jac.plan(np.linspace(2, 3, 10)) is first or jac.plan(np.linspace(2, 3, 10))[1] is first[1]
    branch = ad.sparsity(zoo.data_branch)
    assert branch(np.ones(4)).nnz == 6 and branch(-np.ones(4)).nnz == 3  # local: per point


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: ad.sparsity(zoo.banded, of="gradient"), "of="),
        (lambda: ad.jacobian(zoo.banded, sparse="yes"), "sparse="),
        (lambda: ad.jacobian(zoo.banded, mode="forward", sparse=True, memory="1MB"), "memory="),
        (lambda: ad.jacobian(zoo.banded, mode="sideways", sparse=True), "mode"),
    ],
)
def test_bad_options_are_refused(make, message):
    with pytest.raises(ad.SourceADError, match=message):
        make()


def _int_result(x):
    n = x.shape[0]
    r = np.zeros(n, dtype=np.int64)
    for i in range(n):
        r[i] = int(x[i])
    return r


def _tuple_result(x):
    return x * 2.0, x * x


def test_bad_functions_are_refused():
    x = np.linspace(0.5, 1.5, 4)
    with pytest.raises(ad.SourceADError, match="float result|int"):
        ad.sparsity(_int_result)(x)
    with pytest.raises(ad.SourceADError, match="tuple"):
        ad.sparsity(_tuple_result)(x)
    with pytest.raises(ad.SourceADError, match="float result"):
        ad.sparsity(zoo.banded, of="hessian")(x)


def _zoo_cases():
    from zoo import ZOO

    return [pytest.param(case, id=case.name) for case in ZOO]


@pytest.mark.parametrize("case", _zoo_cases())
def test_the_main_zoo_patterns_miss_no_nonzero(case):
    """Every function of the numeric zoo (loops, whole arrays, helpers, prange, written arguments,
    selections, runtime helpers): the pattern holds every nonzero of the dense Jacobian."""
    args = case.make_args(np.random.default_rng(0))
    wrt = case.wrt[0] if len(case.wrt) == 1 else tuple(case.wrt)
    try:
        P = made("sparsity", case.func, wrt)(*args)
    except ad.SourceADError as exc:
        assert "returns a tuple" in str(exc)  # the one refusal: a tuple result
        return
    D = ad.jacobian(case.func, wrt, jit=False, mode="forward")(*args)
    for p, d in zip(P if isinstance(P, tuple) else (P,), D if isinstance(D, tuple) else (D,), strict=True):
        assert not (np.reshape(d, p.shape) != 0)[~p.toarray()].any(), "the pattern misses a nonzero"
