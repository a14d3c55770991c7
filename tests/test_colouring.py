"""Colourings and decompression (sourcead.colouring): each colouring checked by an independent
dense checker (distance-2, star, bicolouring property), each decompression by a round trip of a
random matrix with the pattern's structure (compress with the seed matrix, decompress, compare
exactly), on the zoo of benchmarks/colouring.py, on edge cases and on random patterns."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.colouring import arrowhead, banded, block_diagonal, random_sparse, stencil
from sourcead.colouring import (
    bicolouring,
    column_colouring,
    decompress_bicolouring,
    decompress_columns,
    decompress_rows,
    decompress_star,
    row_colouring,
    seed_matrix,
    star_colouring,
)
from sourcead.errors import SourceADError

ORDERS = ["natural", "largest_first", "smallest_last", "saturation", "best"]


# ---- independent checkers, on dense masks --------------------------------------------------


def is_distance2(mask: np.ndarray, colours: np.ndarray) -> bool:
    """No row has two nonzero columns of one colour."""
    return all(len(set(colours[np.flatnonzero(row)])) == row.sum() for row in mask)


def is_star(mask: np.ndarray, colours: np.ndarray) -> bool:
    """Distance-1 proper on the adjacency graph, and no path a-b-c-d coloured x-y-x-y."""
    adj = mask & ~np.eye(mask.shape[0], dtype=bool)
    for b, c in zip(*np.nonzero(adj), strict=True):
        if colours[b] == colours[c]:
            return False
        for a in np.flatnonzero(adj[b]):
            for d in np.flatnonzero(adj[c]):
                if a != c and d != b and a != d and colours[a] == colours[c] and colours[d] == colours[b]:
                    return False
    return True


def is_bicolouring(mask: np.ndarray, rc: np.ndarray, cc: np.ndarray) -> bool:
    """Every nonzero is alone of its column's colour in its row, or of its row's in its column."""
    for i, j in zip(*np.nonzero(mask), strict=True):
        forward = cc[j] > 0 and np.sum(cc[np.flatnonzero(mask[i])] == cc[j]) == 1
        reverse = rc[i] > 0 and np.sum(rc[np.flatnonzero(mask[:, j])] == rc[i]) == 1
        if not (forward or reverse):
            return False
    return True


def colour_count(colours: np.ndarray) -> int:
    return int(colours.max(initial=-1)) + 1


def with_values(P: sp.csr_array, seed: int = 0) -> np.ndarray:
    """A dense matrix with P's structure and random nonzero values."""
    rng = np.random.default_rng(seed)
    return P.toarray() * rng.uniform(0.5, 2.0, P.shape) * rng.choice([-1.0, 1.0], P.shape)


def symmetric_values(P: sp.csr_array, seed: int = 0) -> np.ndarray:
    H = with_values(P, seed)
    return np.triu(H) + np.triu(H, 1).T


# ---- round trips -----------------------------------------------------------------------------


def check_columns(P: sp.csr_array, order: str = "best") -> int:
    colours = column_colouring(P, order=order)
    assert colours.dtype == np.int64 and colours.shape == (P.shape[1],)
    assert is_distance2(P.toarray(), colours)
    J = with_values(P)
    got = decompress_columns(P, colours, J @ seed_matrix(colours))
    assert isinstance(got, sp.csr_array) and got.dtype == np.float64
    assert np.array_equal(got.toarray(), J)
    assert got.nnz == sp.csr_array(P).nnz  # P's structure, zeros and all
    return colour_count(colours)


def check_rows(P: sp.csr_array, order: str = "best") -> int:
    colours = row_colouring(P, order=order)
    assert colours.dtype == np.int64 and colours.shape == (P.shape[0],)
    assert is_distance2(P.toarray().T, colours)
    J = with_values(P, 1)
    got = decompress_rows(P, colours, seed_matrix(colours).T @ J)
    assert np.array_equal(got.toarray(), J)
    return colour_count(colours)


def check_star(P: sp.csr_array, order: str = "best") -> int:
    colours = star_colouring(P, order=order)
    assert colours.dtype == np.int64 and colours.shape == (P.shape[0],)
    assert is_star(P.toarray(), colours)
    H = symmetric_values(P, 2)
    got = decompress_star(P, colours, H @ seed_matrix(colours))
    assert np.array_equal(got.toarray(), H)
    assert np.array_equal(got.toarray(), got.toarray().T)
    return colour_count(colours)


def check_bicolouring(P: sp.csr_array, order: str = "best") -> int:
    rc, cc = bicolouring(P, order=order)
    assert rc.shape == (P.shape[0],) and cc.shape == (P.shape[1],)
    assert is_bicolouring(P.toarray(), rc, cc)
    J = with_values(P, 3)
    Bcol = J @ seed_matrix(cc - 1, int(cc.max(initial=0)))
    Brow = seed_matrix(rc - 1, int(rc.max(initial=0))).T @ J
    got = decompress_bicolouring(P, rc, cc, Bcol, Brow)
    assert np.array_equal(got.toarray(), J)
    return int(rc.max(initial=0) + cc.max(initial=0))


ZOO = {
    "tridiagonal": banded(30, 1),
    "banded2": banded(30, 2),
    "banded5": banded(40, 5),
    "stencil5": stencil(7, 5),
    "stencil9": stencil(7, 9),
    "arrowhead": arrowhead(20),
    "block4": block_diagonal(24),
    "random": random_sparse(40, 3.0, seed=1),
    "random_wide": sp.csr_array(sp.random_array((12, 30), density=0.15, rng=np.random.default_rng(4)).astype(bool)),
}


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("name", list(ZOO))
def test_one_sided_colourings_round_trip_on_the_zoo(name: str, order: str) -> None:
    check_columns(ZOO[name], order)
    check_rows(ZOO[name], order)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("name", [k for k in ZOO if k != "random_wide"])
def test_star_colouring_round_trips_on_the_zoo(name: str, order: str) -> None:
    P = ZOO[name]
    check_star(sp.csr_array((P + P.T).astype(bool)), order)


@pytest.mark.parametrize("name", list(ZOO))
def test_bicolouring_round_trips_on_the_zoo(name: str) -> None:
    check_bicolouring(ZOO[name])


# ---- quality: the optimum where theory gives it --------------------------------------------


@pytest.mark.parametrize("b", [1, 2, 5])
def test_banded_patterns_get_the_optimal_2b_plus_1_colours(b: int) -> None:
    P = banded(200, b)
    assert check_columns(P) == 2 * b + 1
    assert check_rows(P) == 2 * b + 1


def test_tridiagonal_star_colouring_uses_three_colours() -> None:
    assert check_star(banded(100, 1)) == 3


@pytest.mark.parametrize(
    ("points", "optimum"),
    [(5, 5), (9, 9)],
)
def test_stencils_get_their_optimum(points: int, optimum: int) -> None:
    assert check_columns(stencil(12, points)) == optimum
    assert check_rows(stencil(12, points)) == optimum


def test_block_diagonal_and_arrowhead_hessians_get_their_optimum() -> None:
    assert check_star(block_diagonal(40)) == 4
    assert check_star(arrowhead(30)) == 2  # a star graph: the hub, then every leaf


def test_bicolouring_beats_both_one_sided_colourings_on_an_arrowhead() -> None:
    P = arrowhead(50)
    one_sided = min(check_columns(P), check_rows(P))
    assert one_sided == 50
    assert check_bicolouring(P) == 3  # the optimum (benchmarks/colouring.py says why 2 cannot do)


def test_bicolouring_is_never_worse_than_a_one_sided_colouring() -> None:
    for P in ZOO.values():
        assert check_bicolouring(P) <= min(check_columns(P), check_rows(P))


# ---- edge cases ------------------------------------------------------------------------------

EDGE = {
    "empty row and column": sp.csr_array(np.array([[1, 0, 1], [0, 0, 0], [1, 0, 1]], bool)),
    "0 x 4": sp.csr_array((0, 4), dtype=bool),
    "4 x 0": sp.csr_array((4, 0), dtype=bool),
    "0 x 0": sp.csr_array((0, 0), dtype=bool),
    "1 x 1": sp.csr_array(np.ones((1, 1), bool)),
    "1 x 1 empty": sp.csr_array((1, 1), dtype=bool),
    "dense": sp.csr_array(np.ones((6, 6), bool)),
    "dense wide": sp.csr_array(np.ones((3, 7), bool)),
    "all zero": sp.csr_array((5, 5), dtype=bool),
}


@pytest.mark.parametrize("name", list(EDGE))
def test_edge_cases_round_trip(name: str) -> None:
    P = EDGE[name]
    check_columns(P)
    check_rows(P)
    check_bicolouring(P)
    if P.shape[0] == P.shape[1]:
        check_star(P)


def test_a_dense_pattern_needs_one_colour_a_line() -> None:
    P = EDGE["dense"]
    assert check_columns(P) == check_rows(P) == check_star(P) == 6
    assert check_bicolouring(P) == 6


def test_csr_matrix_dense_and_unsorted_inputs_are_accepted() -> None:
    mask = ZOO["random"].toarray()
    m = sp.csr_matrix(mask)
    assert np.array_equal(column_colouring(m), column_colouring(mask))
    coo = sp.coo_array(mask)
    shuffled = np.random.default_rng(0).permutation(coo.nnz)
    unsorted = sp.csr_array((coo.data[shuffled], (coo.row[shuffled], coo.col[shuffled])), shape=mask.shape)
    check_columns(unsorted)


# ---- random patterns ---------------------------------------------------------------------------


@st.composite
def masks(draw: st.DrawFn, square: bool = False) -> np.ndarray:
    m = draw(st.integers(0, 9))
    n = m if square else draw(st.integers(0, 9))
    density = draw(st.floats(0.0, 1.0))
    seed = draw(st.integers(0, 2**32 - 1))
    return np.random.default_rng(seed).random((m, n)) < density


@settings(max_examples=60, deadline=None)
@given(masks())
def test_random_jacobian_patterns(mask: np.ndarray) -> None:
    P = sp.csr_array(mask)
    check_columns(P)
    check_rows(P)
    check_bicolouring(P)


@settings(max_examples=60, deadline=None)
@given(masks(square=True), st.sampled_from(ORDERS))
def test_random_hessian_patterns(mask: np.ndarray, order: str) -> None:
    check_star(sp.csr_array(mask | mask.T), order)


# ---- bad input -------------------------------------------------------------------------------


def test_star_colouring_needs_a_square_symmetric_pattern() -> None:
    with pytest.raises(SourceADError, match="square"):
        star_colouring(sp.csr_array(np.ones((2, 3), bool)))
    with pytest.raises(SourceADError, match="symmetric"):
        star_colouring(sp.csr_array(np.triu(np.ones((3, 3), bool))))
    with pytest.raises(SourceADError, match="symmetric"):
        decompress_star(sp.csr_array(np.triu(np.ones((3, 3), bool))), np.arange(3), np.eye(3))


def test_not_a_pattern_is_an_error() -> None:
    with pytest.raises(SourceADError, match="scipy.sparse"):
        column_colouring([[1, 0], [0, 1]])
    with pytest.raises(SourceADError, match="2-D"):
        column_colouring(np.ones(3, bool))
    with pytest.raises(SourceADError, match="unknown vertex order"):
        column_colouring(ZOO["tridiagonal"], order="random")


def test_compressed_blocks_of_the_wrong_shape_are_errors() -> None:
    P = ZOO["tridiagonal"]
    c = column_colouring(P)
    with pytest.raises(SourceADError, match=r"B must have shape \(30, 3\)"):
        decompress_columns(P, c, np.zeros((29, 3)))
    with pytest.raises(SourceADError, match="B must have shape"):
        decompress_columns(P, c, np.zeros((30, 2)))
    with pytest.raises(SourceADError, match=r"C must have shape \(3, 30\)"):
        decompress_rows(P, row_colouring(P), np.zeros((30, 3)))
    with pytest.raises(SourceADError, match="B must have shape"):
        decompress_star(P, star_colouring(P), np.zeros(30))
    rc, cc = bicolouring(P)
    with pytest.raises(SourceADError, match="Brow must have shape"):
        decompress_bicolouring(P, rc, cc, np.zeros((30, int(cc.max()))), np.zeros((1, 29)))
    with pytest.raises(SourceADError, match="has 29 entries"):
        decompress_columns(P, c[:-1], np.zeros((30, 3)))
    with pytest.raises(SourceADError, match="1-D int"):
        seed_matrix(np.zeros(3))


def test_a_colouring_that_does_not_determine_the_matrix_is_an_error_not_a_wrong_matrix() -> None:
    P = ZOO["tridiagonal"]
    one = np.zeros(30, np.int64)
    with pytest.raises(SourceADError, match=r"do not determine entry \(0, 1\)"):
        decompress_columns(P, one, np.zeros((30, 1)))
    with pytest.raises(SourceADError, match="do not determine"):
        decompress_rows(P, one, np.zeros((1, 30)))
    with pytest.raises(SourceADError, match="do not determine"):
        decompress_star(P, np.arange(30) % 2, np.zeros((30, 2)))  # proper, but not a star colouring
    with pytest.raises(SourceADError, match="do not determine"):
        decompress_bicolouring(P, one, one + 1, np.zeros((30, 1)), np.zeros((0, 30)))


def test_seed_matrix() -> None:
    S = seed_matrix(np.array([2, 0, 1, 0]))
    assert S.dtype == np.float64 and S.shape == (4, 3)
    assert np.array_equal(S, np.array([[0, 0, 1], [1, 0, 0], [0, 1, 0], [1, 0, 0]], float))
    assert seed_matrix(np.array([1, -1]), k=3).tolist() == [[0, 1, 0], [0, 0, 0]]
    assert seed_matrix(np.array([], np.int64)).shape == (0, 0)
    with pytest.raises(SourceADError, match="fewer than"):
        seed_matrix(np.array([3]), k=2)


def test_negative_colours_are_an_error_in_decompression() -> None:
    P = ZOO["tridiagonal"]
    with pytest.raises(SourceADError, match=">= 0"):
        decompress_columns(P, np.full(30, -1), np.zeros((30, 1)))


def test_hubs_set_apart_keep_star_colourings_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past a work budget, vertices of many neighbours get colours of their own (small budgets
    here, so the small zoo takes that path)."""
    from sourcead.colouring import colour

    monkeypatch.setattr(colour, "_STAR_WORK", 10)
    monkeypatch.setattr(colour, "_HUB", 3)
    assert check_star(arrowhead(30)) == 2
    for name in ("stencil9", "random", "block4"):
        P = ZOO[name]
        check_star(sp.csr_array((P + P.T).astype(bool)))
    monkeypatch.setattr(colour, "_STAR_WORK", 0)  # and bicolouring without its bipartite candidate
    for P in ZOO.values():
        check_bicolouring(P)
