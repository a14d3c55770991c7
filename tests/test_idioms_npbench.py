"""Issue 40, item 2: NPBench's kernels differentiated as written. Each supported idiom
(`programs/idioms_npbench.py`) is checked by `sourcead.check_derivative` (jvp, vjp and grad against
Ridders' central differences, the dot-product test, and hvp to second order) as plain Python and
compiled (its gradient and tangent equal the plain ones); each refused one is refused at the user's
line, in the user's names, with what to write."""

from __future__ import annotations

import inspect

import idioms_npbench as k
import numpy as np
import pytest
from numeric import assert_compiled_equals_plain

import sourcead
from sourcead import SourceADError
from sourcead.errors import BoundsWarning, ShapeError


def _line(func) -> int:
    lines, first = inspect.getsourcelines(func)
    return first + next(i for i, text in enumerate(lines) if "# refused" in text)


def _refused(func, *args, needle: str, token: str, at=None) -> SourceADError:
    with pytest.raises(SourceADError) as info:
        sourcead.grad(func, jit=False)(*args)
    err = info.value
    assert needle in str(err), str(err)
    assert err.hint
    assert err.where is not None and err.where.filename.endswith("idioms_npbench.py"), str(err)
    assert err.where.line == _line(at or func)
    assert err.where.source_line[err.where.column :].startswith(token)
    return err


@pytest.mark.parametrize(
    "func, args, needle, token",
    [
        (k.undeclared_numpy, (np.ones((3, 3)),), "`np.tri` is a NumPy function that sourcead does not declare",
         "np.tri("),
        (k.undeclared_scipy, (np.eye(2) + 1.0, np.ones(2)), "`scipy.linalg.solve` is a SciPy function", "scipy."),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)  # fmt: skip
def test_an_undeclared_library_function_is_refused_at_the_users_call(func, args, needle, token):
    _refused(func, *args, needle=needle, token=token)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _spd(r: np.random.Generator, n: int) -> np.ndarray:
    m = r.uniform(0.0, 1.0, (n, n))
    return m @ m.T + n * np.eye(n)


def _masked_data(r: np.random.Generator) -> np.ndarray:
    """Columns away from masked_writes' thresholds: one clamped (norm < 0.7), one doubled (entries
    in (0.3, 0.6)), one left (entries above 0.6), so finite differences cross no kink."""
    return np.stack((r.uniform(0.1, 0.15, 5), r.uniform(0.4, 0.5, 5), r.uniform(0.75, 0.95, 5)), axis=1)


# each supported idiom: the function, its arguments (away from kinks), the arguments to differentiate,
# and the order checked (2 unless said)
SUPPORTED = {
    "segment_sums": (k.segment_sums,
                     lambda r: (np.array([0, 2, 2, 5, 6]), r.uniform(0.2, 1.0, 6), r.uniform(0.2, 1.0, 4)), (1, 2)),
    "dtypes_of_arrays": (k.dtypes_of_arrays, lambda r: (r.uniform(0.2, 1.0, 4), r.uniform(0.2, 1.0, (4, 3))), (0, 1)),
    "dtypes_named": (k.dtypes_named, lambda r: (r.uniform(0.2, 1.0, 4),), (0,)),
    "dtypes_in_helper_and_prange": (k.dtypes_in_helper_and_prange,
                                    lambda r: (r.uniform(0.2, 1.0, 3), r.uniform(0.2, 1.0, (4, 3))), (0, 1)),
    "chained_scalars": (k.chained_scalars, lambda r: (0.3, r.uniform(0.2, 1.0, 5)), (0, 1)),
    "chained_elements": (k.chained_elements, lambda r: (r.uniform(0.2, 1.0, 4),), (0,)),
    "chained_in_prange_and_helper": (k.chained_in_prange_and_helper, lambda r: (r.uniform(0.2, 1.0, 4),), (0,)),
    # second order: the forward code binds np.flip(y[:k]) to a temporary whose shape changes from one
    # iteration to the next, which reverse mode cannot size yet (a crash, not a wrong number)
    "durbin": (k.durbin, lambda r: (r.uniform(0.05, 0.3, 5),), (0,), 1),
    "correlation_like": (k.correlation_like, lambda r: (r.uniform(0.2, 1.0, (5, 4)),), (0,)),
    "nbody_like": (k.nbody_like, lambda r: (r.uniform(0.0, 1.0, (4, 3)), r.uniform(0.5, 1.0, (4, 1))), (0, 1)),
    "arrangements_in_loops": (k.arrangements_in_loops, lambda r: (r.uniform(0.2, 1.0, 3), r.uniform(0.2, 1.0, (4, 3))),
                              (0, 1)),
    "fdtd_2d": (k.fdtd_2d, lambda r: (r.uniform(0.2, 1.0, (4, 5)), r.uniform(0.2, 1.0, (4, 5)),
                                      r.uniform(0.2, 1.0, (4, 5)), r.uniform(0.2, 1.0, 3)), (0, 1, 2, 3)),
    "scalars_into_slices": (k.scalars_into_slices, lambda r: (r.uniform(0.2, 1.0, 4), 0.7), (0, 1)),
    "scalars_into_slices_prange": (k.scalars_into_slices_prange, lambda r: (r.uniform(0.2, 1.0, 4), 0.4), (0, 1)),
    "softmax": (k.softmax, lambda r: (r.uniform(0.0, 1.0, (2, 2, 3, 4)),), (0,)),
    "softmax_loops": (k.softmax_loops, lambda r: (r.uniform(0.0, 1.0, (2, 2, 3, 4)),), (0,)),
    "conv2d_bias_loops": (k.conv2d_bias_loops, lambda r: (r.uniform(0.0, 1.0, (2, 4, 4, 3)),
                          r.uniform(0.0, 1.0, (2, 2, 3, 2)), r.uniform(0.0, 1.0, 2)), (0, 1, 2)),
    "covariances": (k.covariances, lambda r: (r.uniform(0.2, 1.0, (6, 4)), r.uniform(0.2, 1.0, 5),
                                              r.uniform(0.2, 1.0, 5)), (0, 1, 2)),
    # first order: second order refuses np.linalg.cholesky (its own test in test_second_order.py)
    "cholesky_factor": (k.cholesky_factor, lambda r: (_spd(r, 5),), (0,), 1),
    "masked_writes": (k.masked_writes, lambda r: (_masked_data(r), np.concatenate((r.uniform(0.1, 0.3, 2),
                                                                                   r.uniform(0.7, 0.9, 2)))), (0, 1)),
    "gathered": (k.gathered, lambda r: (r.uniform(0.2, 1.0, 5), np.array([0, 4, 4, -2, 1, 3]),
                                        r.uniform(0.2, 1.0, (2, 3))), (0, 2)),
    "masked_writes_in_loop": (k.masked_writes_in_loop, lambda r: (r.uniform(0.0, 1.0, 6), 3), (0,)),
    # radii spread over the bins (none empty), away from the thresholds
    "masked_reads": (k.masked_reads, lambda r: (r.uniform(0.2, 1.0, 8), np.array([0.05, 0.2, 0.35, 0.45, 0.6,
                     0.75, 0.9, 1.0]), np.where(r.uniform(0, 1, (3, 4)) > 0.5, 0.8, 0.3) + r.uniform(0, 0.1, (3, 4))),
                     (0, 2)),
    "masked_reads_of_a_changing_array": (k.masked_reads_of_a_changing_array,
                                            lambda r: (r.uniform(0.2, 1.0, 6), np.array([0.1, 0.3, 0.45, 0.9, 0.2,
                                                                                         0.8])), (0,)),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SUPPORTED))
def test_an_idiom_is_differentiated_as_written(name):
    func, make, wrt, *order = SUPPORTED[name]
    args = make(_rng(len(name)))
    report = sourcead.check_derivative(func, *args, wrt=wrt, jit=False, order=order[0] if order else 2)
    assert report.ok, str(report)


@pytest.mark.parametrize("name", sorted(SUPPORTED))
def test_an_idioms_compiled_derivatives_equal_the_checked_plain_ones(name):
    func, make, wrt, *_ = SUPPORTED[name]
    assert_compiled_equals_plain(func, make(_rng(len(name))), wrt)


def test_a_dtype_outside_the_subset_says_which_are_accepted():
    err = _refused(
        k.dtype_not_supported, np.ones(3), needle="`dtype` of np.zeros must be np.float64", token="np.float16"
    )
    assert "x.dtype" in str(err)


def test_chained_arrays_written_through_one_name_are_refused_with_both_names():
    err = _refused(
        k.chained_arrays_written,
        np.ones(3),
        needle="`a = b = np.zeros(x.shape[0])` gives one array 2 names",
        token="a = b",
    )
    assert "`b = a.copy()`" in err.hint


def test_a_reduction_over_a_middle_axis_of_a_4d_array_is_refused_with_what_to_write():
    err = _refused(
        k.max_over_a_middle_axis, np.ones((2, 2, 2, 2)), needle="takes the last axis (axis=-1) here", token="return"
    )
    assert "Loop over the other axes" in err.hint


def test_an_undeclared_numpy_function_in_a_helper_is_refused_at_the_helpers_line():
    _refused(
        k.undeclared_in_a_helper,
        np.ones(3),
        needle="`np.tri` is a NumPy function",
        token="np.tri(",
        at=k._lower_triangle_of_ones,
    )


def test_a_mask_index_is_refused_with_the_np_where_spelling():
    err = _refused(
        k.masked_update,
        np.linspace(0.0, 1.0, 5),
        needle="writes through a mask held in a name",
        token="m]",
    )
    assert "x = np.where(m, v, x)" in err.hint and "x[x > 0.5] = v" in err.hint


def test_a_gather_of_rows_or_a_write_at_an_array_of_indices_is_refused_with_the_loop_spelling():
    err = _refused(k.gathered_rows, np.ones((4, 2)), np.array([0, 2]), needle="not a 1-D integer array", token="idx")
    assert "A[idx[k]]" in err.hint
    err = _refused(k.scattered, np.ones(4), np.array([0, 2]), np.ones(2), needle="writes at an array of indices",
                   token="idx")  # fmt: skip
    assert "x[idx[k]] += v[k]" in err.hint


def test_a_gather_out_of_range_raises_at_the_users_line():
    for jit in (False, True):
        with pytest.raises(ShapeError, match="out of bounds") as info:
            sourcead.grad(k.gathered, wrt=0, jit=jit)(np.ones(4), np.array([0, 2, 9]), np.ones((2, 3)))
        assert info.value.where is not None and info.value.where.filename.endswith("idioms_npbench.py")


def test_a_gather_in_a_prange_loop_is_probed_at_the_call_and_says_so():
    r = _rng(7)
    args = (r.uniform(0.2, 1.0, 5), np.array([1, 1, -1, 2]), r.uniform(0.2, 1.0, 3))
    with pytest.warns(BoundsWarning, match=r"`x\[idx\]`"):
        report = sourcead.check_derivative(k.gathered_in_prange, *args, wrt=(0, 2))
    assert report.ok, str(report)


def test_np_cov_of_two_arrays_or_of_a_vector_is_refused_with_the_spelling_to_write():
    err = _refused(k.covariance_of_two_arrays, np.ones(3), np.ones(3), needle="np.cov takes one array here", token="y")
    assert "np.cov(np.vstack((x, y)))" in err.hint
    err = _refused(k.covariance_of_a_vector, np.ones(3), needle="np.cov takes a 2-D array here", token="return")
    assert "np.var(x, ddof=1)" in err.hint


def test_a_write_through_a_mask_is_refused_where_numpy_means_something_else():
    err = _refused(
        k.mask_of_other_dimensions, np.ones((3, 2)), np.ones(3), needle="a bool array of the array's 2 dimensions",
        token="A[",
    )  # fmt: skip
    assert "m[:, None]" in err.hint
    err = _refused(k.mask_given_an_array, np.ones(3), np.ones(3), needle="takes a number v here", token="y")
    assert "np.where(m, v, x)" in err.hint


def test_a_mask_of_another_shape_raises_numpys_index_error():
    for jit in (False, True):
        with pytest.raises(ShapeError, match="boolean index did not match"):
            sourcead.grad(k.mask_of_another_shape, wrt=0, jit=jit)(np.ones(3), np.ones(4))


def test_a_mask_read_of_another_shape_raises_numpys_index_error():
    for jit in (False, True):
        with pytest.raises(ShapeError, match="boolean index did not match"):
            sourcead.grad(k.mask_read_of_another_shape, wrt=0, jit=jit)(np.ones(3), np.ones(4))


def test_a_mask_read_records_no_mask_it_can_compute_again():
    """azimint's mask of constant radii is computed again in each reversed iteration (one mask per
    bin on the tape would be bins x N values); the mask of an array written in the loop is recorded."""
    sources = {}
    for name in ("masked_reads", "masked_reads_of_a_changing_array"):
        func, make, wrt, *_ = SUPPORTED[name]
        gradient = sourcead.grad(func, wrt=wrt, jit=False)
        gradient(*make(_rng(0)))
        sources[name] = gradient.source
    source = sources["masked_reads"]
    assert "record mask_r12" not in source and source.count("mask_r12 = np.logical_and(") == 2
    assert "record m:" in sources["masked_reads_of_a_changing_array"]
