"""Issue 40, item 2: NPBench's idioms, each written as the kernels write them (`*_numba_n.py`),
and the spellings around it (keyword or positional, in a loop, in `prange`, in a helper). The
comment above each says what went wrong before; `tests/test_idioms_npbench.py` checks each against
finite differences, by the dot-product test and to second order, with and without numba."""

from __future__ import annotations

import numpy as np
import scipy.linalg
from numba import prange

# --- a NumPy function sourcead does not declare (refused at the user's call) --------------------
# np.tri is a plain Python function of NumPy's: sourcead inlined its source as if it were the
# user's and reported an error positioned in numpy/lib/_twodim_base_impl.py


def undeclared_numpy(x):
    return np.sum(np.tri(x.shape[0]) * x)  # refused


def undeclared_scipy(A, b):
    return np.sum(scipy.linalg.solve(A, b))  # refused


def _lower_triangle_of_ones(n, x):
    return np.tri(n) * x  # refused


def undeclared_in_a_helper(x):
    return np.sum(_lower_triangle_of_ones(x.shape[0], x))


# --- dtype= as the kernels give it (item 1) -----------------------------------------------------
# `np.empty(shape, dtype=x.dtype)` (adi, symm, gramschmidt, covariance, correlation, vadv, softmax,
# mlp) was refused with "must be a literal", and `dtype=np.float64` or `float` too


def dtypes_of_arrays(x, A):
    n = x.shape[0]
    a = np.empty((n,), dtype=x.dtype)
    b = np.zeros((n, 2), dtype=A.dtype)
    c = np.ones(n, x.dtype)  # positional
    d = np.full(n, 0.5, dtype=x.dtype)
    e = np.empty_like(A, dtype=A.dtype)
    f = np.zeros_like(x, dtype=x.dtype)
    g = np.ones_like(x, dtype=x.dtype)
    h = np.full_like(A, 2.0, dtype=A.dtype)
    for i in range(n):
        a[i] = x[i] * x[i]
        b[i, 0] = A[i, 1] + a[i]
        b[i, 1] = c[i] * d[i] * x[i]
    e[:] = A * h
    f += x
    g *= x
    return np.sum(a * b[:, 0]) + np.sum(b[:, 1] ** 2) + np.sum(e * A) + np.sum(f * g)


def dtypes_named(x):
    n = x.shape[0]
    a = np.zeros(n, dtype=np.float64)
    b = np.ones((n,), dtype=float)
    c = np.empty(n, np.float64)
    d = np.ones(n, dtype="float64")
    k = np.zeros(2, dtype=np.int64)  # an int array: indices, never differentiated
    m = np.zeros(2, dtype=int)
    flags = np.ones(n, dtype=np.bool_)
    k[1] = n - 1
    m[0] = 1
    for i in range(n):
        c[i] = np.sin(x[i])
        if flags[i]:
            a[i] = x[i] * b[i] + c[i] * d[i]
    return np.sum(a * a) + x[k[1]] * x[m[0]]


def _scratch(x):
    s = np.empty_like(x, dtype=x.dtype)
    s[:] = 2.0 * x
    return s


def dtypes_in_helper_and_prange(x, A):
    n = A.shape[0]
    out = np.empty(n, dtype=A.dtype)
    for i in prange(n):
        row = np.zeros(A.shape[1], dtype=A.dtype)
        row[:] = A[i] * x
        out[i] = np.sum(row * row)
    return np.sum(out) + np.sum(_scratch(x) * x)


def dtype_not_supported(x):
    a = np.zeros(x.shape[0], dtype=np.float16)  # refused
    return np.sum(a * x)


# --- chained assignment (item 2) ----------------------------------------------------------------
# `a1 = a5 = k` (deriche, covariance) was refused: "Assign each name on its own line"


def chained_scalars(alpha, x):
    k = (1.0 - np.exp(-alpha)) * (1.0 - np.exp(-alpha)) / (1.0 + 2.0 * alpha * np.exp(-alpha))
    a1 = a5 = k
    a2 = a6 = k * np.exp(-alpha) * (alpha - 1.0)
    b1 = b2 = 0.5
    s = t = 0.0
    for i in range(x.shape[0]):
        y1 = y2 = a1 * x[i] + a2 * s + b1 * t
        s = t = y1 * b2 + a5 * y2 + a6
    return s + t


def chained_elements(x):
    n = x.shape[0]
    a = np.zeros(n)
    b = np.zeros(n)
    for i in range(n):
        a[i] = b[n - 1 - i] = np.sin(x[i]) * x[i]  # the value once, into two elements
    j = a[0] = 2.0 * x[0]  # a name first, then an element
    return np.sum(a * b) + j * x[1]


def _chained_helper(v):
    p = q = v * v
    return p + 2.0 * q


def chained_in_prange_and_helper(x):
    n = x.shape[0]
    out = np.zeros(n)
    for i in prange(n):
        u = w = np.cos(x[i])
        out[i] = u * w + _chained_helper(x[i])
    c = d = x * 2.0  # one array, two names, only read
    return np.sum(out) + np.sum(c * d)


def chained_arrays_written(x):
    a = b = np.zeros(x.shape[0])  # refused
    a[0] = x[0]
    return np.sum(b * x)


# --- np.flip, np.eye, np.identity, np.triu/np.tril, np.roll, joins (item 3) ---------------------
# each was refused ("call to unsupported function"), np.eye by inlining NumPy's own source


def durbin(r):
    # NPBench's durbin as its numba version writes it
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return np.sum(y)


def correlation_like(data):
    # NPBench's correlation without its masked update: np.eye with a dtype, a chained slice write
    m = data.shape[1]
    d = data - np.mean(data, axis=0)
    corr = np.eye(m, dtype=data.dtype)
    for i in range(m - 1):
        corr[i + 1 : m, i] = corr[i, i + 1 : m] = d[:, i] @ d[:, i + 1 : m]
    return np.sum(corr * corr) + np.sum(np.identity(m) * corr)


def nbody_like(pos, mass):
    # NPBench's nbody energy and acceleration: np.triu with k, np.hstack of columns
    x = pos[:, 0:1]
    y = pos[:, 1:2]
    dx = x.T - x
    dy = y.T - y
    inv_r = 1.0 / np.sqrt(dx**2 + dy**2 + 0.1)
    pe = np.sum(np.triu(-(mass * mass.T) * inv_r, 1))
    a = np.hstack((dx @ mass, dy @ mass))
    return pe + np.sum(a * a) + np.sum(np.tril(inv_r) * inv_r)


def _flipped_and_rolled(A):
    return np.flip(A, axis=1) + np.roll(A, 1, axis=0) + np.flipud(A) * np.fliplr(A)


def arrangements_in_loops(x, A):
    n = A.shape[0]
    out = np.zeros(n)
    for i in prange(n):
        row = np.concatenate((A[i], np.flip(x)))
        out[i] = np.sum(np.roll(row, i) * row)
    s = 0.0
    for i in range(n):
        s += np.sum(np.vstack((x, A[i])) ** 2) * np.eye(n, k=1)[i, (i + 1) % n]
    B = np.vstack([x, x * x])
    joined = np.concatenate([A, A * A], axis=1)
    return (
        np.sum(out) + s + np.sum(_flipped_and_rolled(A) * A) + np.sum(np.tril(A[:3], k=-1) * B[0]) + np.sum(joined**2)
    )


# --- rows and slices set from one number (item 4) ------------------------------------------------
# NPBench's fdtd_2d crashed: `ey[0, :] = fict[t]` added the row's adjoint to fict_bar[t] unsummed


def fdtd_2d(ex0, ey0, hz0, fict):
    # NPBench's fdtd_2d as its numba version writes it (in-place slice updates)
    ex, ey, hz = ex0.copy(), ey0.copy(), hz0.copy()
    for t in range(fict.shape[0]):
        ey[0, :] = fict[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    return np.sum(ex) + np.sum(ey) + np.sum(hz)


def _fill_column(a, j, s):
    a[:, j] = s
    a[1:-1, j] *= s


def scalars_into_slices(x, s):
    n = x.shape[0]
    a = np.ones((n, 3))
    v = np.zeros(n + 2)
    for i in range(n):
        a[i] = x[i]  # a row of a 2-D array from one element
        a[i, 1:] += s * x[i]
        a[i, :2] -= x[i] * x[i]
        a[i, 2:] *= x[i]
        v[1:-1] = x[i] * s  # a slice of a 1-D array
        v[:] += x[(i + 1) % n]
        a[i] /= 1.0 + v[i]
    _fill_column(a, 1, s)
    a[1:-1] = s
    a[:, 0] -= np.sin(s)
    return np.sum(a * a) + np.sum(v * v)


def scalars_into_slices_prange(x, w):
    n = x.shape[0]
    a = np.zeros((n, 4))
    for i in prange(n):
        a[i, :] = w * x[i]
        a[i, 1:3] -= x[i] * x[i]
        a[i, 2:] *= x[i]
        a[i] += w
    return np.sum(np.sin(a))


# --- 4-D arrays (item 5) ----------------------------------------------------------------------------
# reductions over an axis took 1-D and 2-D arrays only: NPBench's softmax was refused


def softmax(x):
    # NPBench's softmax as written with NumPy (keepdims over the last axis of a 4-D array)
    tmp_max = np.max(x, axis=-1, keepdims=True)
    tmp_out = np.exp(x - tmp_max)
    tmp_sum = np.sum(tmp_out, axis=-1, keepdims=True)
    return np.sum(tmp_out / tmp_sum * x)


def softmax_loops(x):
    # softmax with its maxima found by loops over three indices, a fourth read by a slice
    new_shape = (x.shape[0], x.shape[1], x.shape[2], 1)
    tmp_max = np.empty(new_shape, dtype=x.dtype)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            for k in range(x.shape[2]):
                tmp_max[i, j, k, 0] = np.max(x[i, j, k, :])
    tmp_out = np.exp(x - tmp_max)
    tmp_sum = np.reshape(np.sum(tmp_out, axis=-1), new_shape)
    return np.sum(tmp_out / tmp_sum * x)


def conv2d_bias_loops(inp, weights, bias):
    # NPBench's conv2d_bias with its window sums over axes (1, 2, 3) written as one axis at a time
    k = weights.shape[0]
    h_out = inp.shape[1] - k + 1
    w_out = inp.shape[2] - k + 1
    out = np.empty((inp.shape[0], h_out, w_out, weights.shape[3]), dtype=inp.dtype)
    for i in prange(h_out):
        for j in range(w_out):
            for c in range(weights.shape[3]):
                window = inp[:, i : i + k, j : j + k, :] * weights[:, :, :, c]
                out[:, i, j, c] = np.sum(np.sum(np.sum(window, axis=3), axis=2), axis=1)
    out = out + bias
    return np.sum(out * out) + np.sum(np.mean(out, axis=1) ** 2) + np.sum(np.var(inp, axis=2))


def max_over_a_middle_axis(x):
    return np.sum(np.max(x, axis=1))  # refused


def segment_sums(row_start, values, x):
    # spmv's row loop with the gather written as a loop: slices bounded by an integer array's elements
    y = np.empty(row_start.size - 1, values.dtype)
    for i in range(row_start.size - 1):
        vals = values[row_start[i] : row_start[i + 1]]
        y[i] = np.sum(vals * vals) * x[i]
    return np.sum(y * y)


def masked_update(x):
    m = x <= 0.5  # a mask held in a name: only kinds know it is one
    x[m] = 1.0  # refused
    return np.sum(x * x)


def gathered(x, idx, A):
    # spmv's `x[cols]`, cols a slice of an integer array; repeated and negative indices; a parameter
    # only ever a whole index (`x[idx]`); a gather inside a loop and of a gather
    cols = idx[1:]
    s = np.sum(x[cols] * 2.0) + np.sum(np.sin(x[idx]) * x[idx[::-1]])
    for i in range(A.shape[0]):
        s += np.sum(A[i] * x[idx[:3]]) + np.dot(x[cols], x[cols])
    return s + np.sum(x[(idx + 1) % x.shape[0]] ** 2)


def gathered_rows(A, idx):
    return np.sum(A[idx] * 2.0)  # refused


def scattered(x, idx, v):
    x[idx] += v  # refused
    return np.sum(x * x)


def covariances(data, x, y):
    # covariance2's np.cov(np.transpose(data)), and the other spellings NumPy reads
    cov = np.cov(np.transpose(data))
    by_columns = np.cov(data, rowvar=False, bias=True)
    pair = np.cov(np.vstack((x, y)), ddof=0)
    return np.sum(cov * by_columns) + np.sum(pair * pair) + np.sum(np.cov(data.T, ddof=2))


def covariance_of_two_arrays(x, y):
    return np.sum(np.cov(x, y))  # refused


def covariance_of_a_vector(x):
    return np.sum(np.cov(x))  # refused


def cholesky_factor(A):
    # cholesky2's np.linalg.cholesky: NumPy reads A's lower triangle, so the upper has no derivative
    A[:] = np.linalg.cholesky(A) + np.triu(A, k=1)
    return np.sum(np.sin(A)) + np.sum(np.linalg.cholesky(A[:3, :3] @ A[:3, :3].T + np.eye(3)))


def masked_writes(data, y):
    # correlation's `stddev[stddev <= 0.1] = 1.0`, and the other spellings of a write through a mask
    stddev = np.sqrt(np.sum(data * data, axis=0))
    stddev[stddev <= 0.7] = 1.0
    data[np.logical_and(data > 0.3, data < 0.6)] *= 2.0  # an argument: its elements are written
    y[np.isnan(y)] = 0.0
    y[y > 0.5] -= 0.25
    return np.sum(data / stddev) + np.sum(y * y)


def masked_writes_in_loop(x, steps):
    s = x.copy()
    for _ in range(steps):
        s = np.sin(s) + 0.5
        s[s < 0.9] += 0.1
    return np.sum(s * s)


def mask_of_other_dimensions(A, m):
    A[m > 0.5] = 0.0  # refused
    return np.sum(A)


def mask_given_an_array(x, y):
    x[x > 0.5] = y  # refused
    return np.sum(x)


def mask_of_another_shape(x, y):
    s = np.sin(x)
    s[y > 0.5] = 2.0  # NumPy's IndexError where y's shape is not x's
    return np.sum(s * s)


def gathered_in_prange(x, idx, w):
    out = np.zeros(w.shape[0])
    for i in prange(w.shape[0]):
        out[i] = np.sum(x[idx] * w[i])
    return np.sum(out * out)


def masked_reads(data, radius, A):
    # azimint_naive's bins: a mask held in a name, the elements it selects held in another, their
    # mean; a 2-D mask read (C order), np.extract itself, and a selection of a selection
    rmax = radius.max()
    res = np.zeros(3, dtype=np.float64)
    for i in range(3):
        r1 = rmax * i / 3
        r2 = rmax * (i + 1) / 3
        mask_r12 = np.logical_and((r1 <= radius), (radius < r2))
        values_r12 = data[mask_r12]
        res[i] = values_r12.mean()
    big = A[A > 0.5]
    picked = np.extract(radius > 0.3, data * data)
    return np.sum(res * res) + np.sum(np.sin(big) * big[::-1]) + np.sum(picked) + np.sum(big[big > 0.7] ** 3)


def masked_reads_of_a_changing_array(data, radius):
    # the mask's operand changes each step: its mask is recorded, not computed again
    s = 0.0
    for i in range(3):
        m = radius < 0.5
        s += np.sum(data[m] ** 2) * (i + 1)
        radius[1] = radius[1] + 0.3
    return s


def mask_read_of_another_shape(x, y):
    return np.sum(x[y > 0.5])  # NumPy's IndexError where y's shape is not x's
