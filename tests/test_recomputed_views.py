"""Views with a derivative computed again in each reversed iteration (`reverse/recompute.py`), not
recorded: spmv's rows `vals = A_val[A_row[i] : A_row[i + 1]]`. Each reversed iteration zeroes the
view's adjoint after computing the view again, shaped like that iteration's row: rows of length 0,
1 and more, in any order, give the gradient of central differences, with and without numba (a
row of length 1 would broadcast silently into a zero of another row's length). A view mentioned
outside its loop keeps its records."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_gradient_matches
from sources import function_from_source

import sourcead

_CSR = """
def csr(A_row, A_col, A_val, x):
    y = np.empty(A_row.size - 1)
    for i in range(A_row.size - 1):
        cols = A_col[A_row[i] : A_row[i + 1]]
        vals = A_val[A_row[i] : A_row[i + 1]]
        y[i] = vals @ x[cols]
    return np.sum(y * y)
"""

_SCALED = """
def scaled(A_row, A_val, x):
    B = A_val * 2.0
    s = 0.0
    for i in range(A_row.size - 1):
        vals = B[A_row[i] : A_row[i + 1]]
        s += np.sum(np.sin(vals) * vals) * x[i]
    return s
"""

_KEPT = """
def kept(A_row, A_val, x):
    s = 0.0
    vals = A_val[0:1]
    for i in range(A_row.size - 1):
        vals = A_val[A_row[i] : A_row[i + 1]]
        s += np.sum(vals * vals) * x[i]
    return s + np.sum(vals * vals)
"""

ROWS = [2, 0, 1, 3, 1, 1, 0, 2]  # lengths 0, 1 and more, 1 next to 1 and next to others


def _csr_args(rng):
    n = 5
    A_row = np.concatenate([[0], np.cumsum(ROWS)]).astype(np.int64)
    A_col = rng.integers(0, n, size=A_row[-1]).astype(np.int64)
    return A_row, A_col, rng.standard_normal(A_row[-1]), rng.standard_normal(n)


@pytest.fixture(scope="module")
def functions(tmp_path_factory):
    folder = tmp_path_factory.mktemp("views")
    return {name: function_from_source(folder, text, name) for name, text in
            [("csr", _CSR), ("scaled", _SCALED), ("kept", _KEPT)]}  # fmt: skip


def _reverse_sweep(source: str) -> str:
    return source.split("# reverse sweep", 1)[1]


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_rows_of_any_length_match_central_differences(functions, jit):
    rng = np.random.default_rng(7)
    args = _csr_args(rng)
    g = sourcead.grad(functions["csr"], wrt=("A_val", "x"), jit=jit)
    got = g(*args)
    assert "tape" not in g.source and "record_flat" not in g.source, g.source  # nothing recorded
    assert "    csr_vals_bar = zeros_like(csr_vals)" not in g.source.split("# reverse sweep")[0]
    reverse = _reverse_sweep(g.source)
    assert reverse.count("vals_bar = zeros_like(vals)") == 1, reverse  # at the top of each iteration only
    assert_gradient_matches(functions["csr"], args, ("A_val", "x"), got, rtol=1e-6, atol=1e-8)
    row, _, val, _ = args
    x = rng.standard_normal(len(ROWS))
    scaled = sourcead.grad(functions["scaled"], wrt=("A_val", "x"), jit=jit)
    got = scaled(row, val, x)
    assert "tape" not in scaled.source, scaled.source  # a view of an array computed once, before
    assert_gradient_matches(functions["scaled"], (row, val, x), ("A_val", "x"), got, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_a_view_mentioned_outside_its_loop_keeps_its_records(functions, jit):
    rng = np.random.default_rng(8)
    row, _, val, _ = _csr_args(rng)
    x = rng.standard_normal(len(ROWS))
    g = sourcead.grad(functions["kept"], wrt=("A_val", "x"), jit=jit)
    got = g(row, val, x)
    assert "record_flat(" in g.source.split("# reverse sweep")[0], g.source  # its old rows are recorded
    assert_gradient_matches(functions["kept"], (row, val, x), ("A_val", "x"), got, rtol=1e-6, atol=1e-8)
