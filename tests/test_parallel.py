"""prange loops differentiate into parallel, race-free adjoint loops.

Each gradient is computed with 1 thread and with 2 threads, 20 times, and must equal the
gradient of the serial twin (the same source with `range`) to 1e-12 relative; the derivative
itself is checked against central finite differences and forward mode (dot-product test).
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import numba
import numpy as np
import parallel_kernels as par
import pytest
from numeric import assert_close, assert_gradient_matches

import sourcead
from sourcead import runtime

KERNELS = Path(__file__).parent / "programs" / "parallel_kernels.py"


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    """parallel_kernels.py with every prange( read as range(: the serial twin."""
    text = KERNELS.read_text().replace("numba.prange(", "range(").replace("prange(", "range(")
    path = tmp_path_factory.mktemp("serial") / "serial_kernels.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("serial_kernels", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["serial_kernels"] = module
    spec.loader.exec_module(module)
    return module


def _cases():
    rng = np.random.default_rng(11)
    X = rng.standard_normal((300, 5))
    y = (rng.random(300) > 0.5).astype(np.float64)
    idx = rng.integers(0, 7, size=500)  # 500 reads of 7 elements: many collisions
    return [
        ("logistic_loss", (0.3 * rng.standard_normal(5), X, y), ("w",)),
        ("gather_sum", (rng.standard_normal(7), idx), ("x",)),
        ("softplus_rows", (rng.standard_normal(5), X, 0.2), ("W", "b")),
        ("mapped_stencil", (rng.standard_normal(64), 0.3), ("u", "c")),
        ("inner_recurrence", (rng.standard_normal(200), 0.8), ("x", "w")),
        ("heat_steps", (rng.standard_normal(40), 0.2, 30), ("u0", "kappa")),
        ("diffusion_rows", (rng.standard_normal((12, 9)), 0.1, 15), ("u0", "kappa")),
        ("scratch_rows", (0.5 * rng.standard_normal((60, 5)), rng.standard_normal(5)), ("X", "w")),
        ("scratch_recurrence", (0.5 * rng.standard_normal((60, 6)), rng.standard_normal(6)), ("X", "w")),
        ("scratch_overwritten", (0.5 * rng.standard_normal((60, 6)), rng.standard_normal(6)), ("X", "w")),
        ("empty_prange_between_records", (rng.standard_normal(6), 1), ("x",)),
        ("index_slots", (rng.standard_normal(8), rng.integers(0, 8, 40), rng.integers(0, 8, 40)), ("x",)),
        ("whole_row_products", (0.5 * rng.standard_normal((300, 5)), rng.standard_normal(5)), ("X", "w")),
    ]


CASES = _cases()


def _flat(grads):
    return np.concatenate([np.atleast_1d(np.asarray(g, dtype=float)).ravel() for g in grads])


@pytest.mark.parametrize("name, args, wrt", CASES, ids=[c[0] for c in CASES])
def test_parallel_adjoint_equals_serial_with_1_and_2_threads(name, args, wrt, serial):
    expected = _flat(sourcead.grad(getattr(serial, name), wrt=wrt)(*args))
    parallel = sourcead.grad(getattr(par, name), wrt=wrt)
    parallel(*args)  # builds the variant for these types (integer arrays the code does not show)
    assert "prange(" in parallel.source.split("# reverse sweep")[1]  # the adjoint loop is parallel
    previous = numba.get_num_threads()
    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            for _ in range(20):
                assert_close(_flat(parallel(*args)), expected, 1e-12, 1e-14)
    finally:
        numba.set_num_threads(previous)


@pytest.mark.parametrize("name, args, wrt", CASES, ids=[c[0] for c in CASES])
def test_parallel_adjoint_is_the_same_bit_for_bit_on_any_thread_count(name, args, wrt):
    # fixed chunks, summed in chunk order: no reduction order that depends on the threads
    parallel = sourcead.grad(getattr(par, name), wrt=wrt)
    previous, results = numba.get_num_threads(), {}
    try:
        for threads in sorted({1, 2, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(threads)
            results[threads] = _flat(parallel(*args))
    finally:
        numba.set_num_threads(previous)
    for threads, got in results.items():
        assert np.array_equal(got, results[1]), threads


@pytest.mark.parametrize("name, args, wrt", CASES, ids=[c[0] for c in CASES])
def test_parallel_derivatives_against_finite_differences_and_forward_mode(name, args, wrt):
    func = getattr(par, name)
    params = func.__code__.co_varnames[: func.__code__.co_argcount]
    rng = np.random.default_rng(5)
    grads = sourcead.grad(func, wrt=wrt)(*args)
    tangents = tuple(
        rng.standard_normal(np.shape(args[params.index(w)]))
        if np.ndim(args[params.index(w)])
        else rng.standard_normal()
        for w in wrt
    )
    eps = 1e-5
    plus, minus = list(args), list(args)
    for w, t in zip(wrt, tangents, strict=True):
        k = params.index(w)
        plus[k] = args[k] + eps * t
        minus[k] = args[k] - eps * t
    fd = (func(*plus) - func(*minus)) / (2 * eps)
    reverse = sum(float(np.sum(g * t)) for g, t in zip(grads, tangents, strict=True))
    # rounding in the sum of hundreds of terms: about n * ulp(|f|) / eps of noise in the difference
    assert_close(reverse, fd, 1e-6, 1e-9 * max(1.0, abs(func(*args))))
    _, forward = sourcead.jvp(func, wrt=wrt)(*args, tangents=tangents)
    assert_close(forward, reverse, 1e-10, 1e-12)


def test_a_parallel_gradient_called_from_several_python_threads_at_once():
    # numba's workqueue layer would abort the process here; sourcead asks for a threadsafe layer
    from concurrent.futures import ThreadPoolExecutor

    name, args, wrt = CASES[0]
    gradient = sourcead.grad(getattr(par, name), wrt=wrt)
    rng = np.random.default_rng(2)
    inputs = [(args[0] + 0.1 * rng.standard_normal(args[0].shape), *args[1:]) for _ in range(16)]
    expected = [_flat(gradient(*a)) for a in inputs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for _ in range(5):
            results = list(pool.map(lambda a: _flat(gradient(*a)), inputs))
            for got, want in zip(results, expected, strict=True):
                assert_close(got, want, 1e-12, 1e-14)
    assert numba.threading_layer() in ("omp", "tbb")


def test_a_prange_loop_that_may_race_runs_serially_and_says_why():
    # writes at perm[i]: race-free for a permutation, which sourcead cannot tell from an index
    # array with repeats (issue 38): both sweeps are serial (the warning: test_outsiders_prange.py)
    x = np.random.default_rng(9).standard_normal(10)
    perm = np.random.default_rng(9).permutation(10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sourcead.RaceWarning)
        gradient = sourcead.grad(par.permuted_writes, wrt="x")
        with_value = sourcead.value_and_grad(par.permuted_writes, wrt="x")
    # grad's forward sweep drops the loop (its reverse sweep reads only y's shape); with the value it stays
    serial = "# a prange loop run serially: `y` is written at an index other than the loop variable"
    assert serial in with_value.source
    assert "prange(" not in gradient.source and "prange(" not in with_value.source
    expected = np.array([2.0 * x[i] * (perm[i] + 1) for i in range(10)])
    assert_close(gradient(x, perm), expected, 1e-12, 0)


def test_a_prange_loop_overwriting_rows_an_earlier_adjoint_reads_gets_a_serial_adjoint():
    # one-value tape slots per iteration cannot hold a row's record (its size is known when it runs)
    rng = np.random.default_rng(3)
    x, A, c = rng.standard_normal(2), rng.standard_normal((9, 2)), rng.standard_normal((9, 2))
    gradient = sourcead.grad(par.rows_overwritten, wrt=("x", "c"))
    assert "serial adjoint of a prange loop: a value it overwrites is still needed" in gradient.source
    gx, gc = gradient(x, A, c)
    tx, tc = rng.standard_normal(2), rng.standard_normal((9, 2))
    eps = 1e-6
    fd = (par.rows_overwritten(x + eps * tx, A, c + eps * tc) - par.rows_overwritten(x - eps * tx, A, c - eps * tc)) / (
        2 * eps
    )
    reverse = float(np.sum(gx * tx) + np.sum(gc * tc))
    assert_close(reverse, fd, 1e-6, 1e-9)
    _, forward = sourcead.jvp(par.rows_overwritten, wrt=("x", "c"))(x, A, c, tangents=(tx, tc))
    assert_close(forward, reverse, 1e-10, 1e-12)


@numba.njit(parallel=True)
def _add_all_chunk_rows(total, rows):
    for part in numba.prange(16):
        runtime.add_chunk_rows(total, rows, part)


@pytest.mark.parametrize("shape", [(37,), (5, 3), (4, 3, 2), (3,)])
def test_chunk_rows_are_added_in_chunk_order_and_zeroed(shape):
    # the runtime helpers behind every scattered adjoint: compiled (in a prange loop) and plain
    rng = np.random.default_rng(4)
    start = rng.standard_normal(shape)
    expected = start.copy()
    rows = runtime.chunk_zeros(shape)
    assert rows.shape == (runtime.ADJOINT_CHUNKS,) + shape and not rows.any()
    rows[...] = rng.standard_normal(rows.shape) * 10.0 ** rng.integers(-8, 8, rows.shape)
    for c in range(runtime.ADJOINT_CHUNKS):
        expected += rows[c]  # element by element, chunk 0 first
    for jitted in (True, False):
        total, mine = start.copy(), rows.copy()
        if jitted:
            _add_all_chunk_rows(total, mine)
        else:
            for part in range(runtime.ADJOINT_CHUNKS):
                runtime.add_chunk_rows(total, mine, part)
        assert np.array_equal(total, expected) and not mine.any()


@pytest.mark.parametrize("jit", [False, True])
def test_a_variable_read_before_a_prange_loop_that_counts_with_it(jit):
    x, w = np.random.default_rng(12).standard_normal(7), 0.8
    gradient = sourcead.grad(par.index_before_a_prange, wrt=("x", "w"), jit=jit)
    assert "prange(" in gradient.source.split("# reverse sweep")[1]  # still a parallel adjoint
    assert_gradient_matches(par.index_before_a_prange, (x, w), ("x", "w"), gradient(x, w))
