"""The idioms numba users write first (issue 12), differentiated as written; one function each.

Each is a zoo entry (`zoo.py`): golden files pin its generated code, the numeric tests check it
against finite differences, by the dot-product test, and compiled against plain Python.
"""

from __future__ import annotations

import math

import numba
import numpy as np

# --- loops over arrays: elements, rows, enumerate, zip -------------------------------------------


def loop_over_elements(x, w):
    s = 0.0
    for v in x:
        s += v * v
    for i, v in enumerate(x):
        s += w[i] * math.sin(v)
    return s


def loop_over_pairs(x, y):
    s = 0.0
    for a, b in zip(x, y, strict=False):
        s += a * b
    for i, (a, b) in enumerate(zip(x, y[1:])):  # noqa: B905 (zip runs to the shorter)
        s += i * a * b
    return s


def loop_over_rows(A, w):
    s = 0.0
    for row in A:
        s += np.sum(row * row * w)
    for i, row in enumerate(A):
        s += row[0] * (i + 1.0)
    return s


# --- NumPy's ufunc names and special functions ---------------------------------------------------


def ufunc_names(x, y):
    z = np.add(x, y) * np.multiply(x, y) + np.subtract(x, y) / np.divide(x, y + 3.0)
    z = z + np.negative(x) + np.power(x, 2.0) + np.square(y) + np.reciprocal(y + 3.0)
    return np.sum(z) + np.true_divide(x[0], 2.0)


def special_functions(x, counts):
    # a Poisson log-likelihood: lgamma of the (constant) counts passes through untouched
    s = 0.0
    for i in range(x.shape[0]):
        rate = math.exp(x[i])
        s += counts[i] * x[i] - rate - math.lgamma(counts[i] + 1.0)
        s += math.lgamma(rate + 1.0) + math.gamma(x[i] + 2.0) + math.erf(x[i]) + math.erfc(x[i])
        s += math.cbrt(x[i] + 2.0) + math.log1p(rate) + math.expm1(x[i])
    return s + np.sum(np.cbrt(x + 2.0) + np.log1p(np.exp(x)) + np.expm1(x))


# --- new axes, and elements of computed values ----------------------------------------------------


def new_axes(x, y, A):
    outer = x[:, None] * y[None, :]
    centred = A - np.mean(A, axis=0)[None, :]
    return np.sum(outer * A) + np.sum(x[:, np.newaxis] * centred) + np.sum(A[0][:, None] * y)


def elements_of_values(A, x):
    return (A @ x)[0] + np.dot(A[1], x) + A[2, :] @ x + np.sin(x * 2.0)[1] + (x * x)[-1]


# --- defaults, keywords and module-level constant arrays -----------------------------------------

WEIGHTS = np.array([0.5, -1.0, 2.0, 0.25])  # frozen into the generated module, as numba freezes it
STENCIL = np.array([[1.0, -2.0], [0.5, 1.5]])


def _scaled(a, scale=2.0, shift=-0.5):
    return a * scale + shift


def defaults_and_constants(x, alpha=0.5, n=2):
    s = np.sum(_scaled(x) * WEIGHTS) + np.sum(_scaled(x, shift=1.0, scale=3.0) ** 2) * alpha
    for i in range(n):
        s += STENCIL[i, 0] * x[i] + STENCIL[i, 1] * x[i + 1] ** 2
    return s


# --- reductions over an axis, statistics, norms, sorting -----------------------------------------


def reductions_and_statistics(X, x):
    s = np.sum(np.max(X, axis=0)) + np.sum(np.min(X, axis=-1) * x[:3]) + np.sum(X.max(axis=1, keepdims=True) * X)
    s += np.sum(np.mean(X, axis=0, keepdims=True) * X) + np.sum(np.sum(X, axis=-2) ** 2)
    s += np.std(x) + np.var(x * 2.0, ddof=1) + np.sum(np.std(X, axis=1)) + X.var()
    s += np.linalg.norm(x, 1) + np.linalg.norm(x, np.inf) + np.sum(np.linalg.norm(X, axis=0)) + np.linalg.norm(X)
    return s + np.sum(np.sort(x) * np.arange(x.shape[0]))


# --- rows of 2-D arguments read as arrays (the type guess starts from one index: a 1-D array) ------


def rows_as_arrays(points, centroids, w):
    s = 0.0
    for i in range(points.shape[0]):
        best = np.inf
        for c in range(centroids.shape[0]):
            d2 = np.sum((points[i] - centroids[c]) ** 2)
            if d2 < best:
                best = d2
        s += best + np.dot(points[i], w) ** 2
    return s


def rows_in_prange(cams, X, obs):
    # a row of each argument per iteration: the adjoint of each row is the iteration's own
    # (its adjoint array was shared by all iterations: a numba error, a race had it compiled)
    total = 0.0
    for i in numba.prange(obs.shape[0]):
        cam = cams[obs[i, 0]]
        p = X[obs[i, 1]]
        r = cam[0] * p[0] + cam[1] * p[1] - cam[2] * np.sum(p * p)
        total += r * r
    return total


def empty_loop_between_records(x, m):
    # a loop of m - 2 iterations (none for m = 1) whose reversal runs in the loop's order, between
    # loops that record: its records are counted max(m - 2, 0), never a negative number of them
    y = x.copy()
    t = 1.0
    s = 0.0
    for i in range(x.shape[0]):
        s += y[i] * y[i]
        t = t * math.sin(x[i] + 1.0)
    for i in range(1, m - 1):
        y[i] = math.sin(x[i]) * 0.5 + x[0]
    for i in range(x.shape[0]):
        t = t * math.cos(y[i])
    return s + t + np.sum(y * y)
