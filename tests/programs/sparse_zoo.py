"""Programs for the sparse Jacobians and Hessians (tests/test_sparse*.py): each pattern of the
issue's zoo, written as users write it, with the pattern expected where the code is affine in its
indices (`EXACT`: the pattern must equal it, no extra entry) and arguments to call it with."""

import math

import numpy as np


def _bump(a, b):
    # a helper the residuals call (inlined by normalize)
    return a * b - 0.5 * b


def banded(x):
    # a 1-D residual: offsets -1, 0, +1 and a nonlinear term
    n = x.shape[0]
    r = np.zeros(n)
    r[0] = x[0] - 1.0
    for i in range(1, n - 1):
        r[i] = x[i - 1] - 2.0 * x[i] + x[i + 1] + 0.1 * math.exp(x[i])
    r[n - 1] = x[n - 1] * x[n - 2]
    return r


def five_point(u):
    # a 2-D periodic Laplacian with ring indices, and a nonlinear source
    n = u.shape[0]
    m = u.shape[1]
    r = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            ip = (i + 1) % n
            im = (i - 1) % n
            jp = (j + 1) % m
            jm = (j - 1) % m
            r[i, j] = 4.0 * u[i, j] - u[ip, j] - u[im, j] - u[i, jp] - u[i, jm] + 0.1 * u[i, j] ** 3
    return r


def nine_point(u):
    # a 2-D 9-point stencil on the interior, identity rows on the boundary
    n = u.shape[0]
    m = u.shape[1]
    r = u.copy()
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            s = 0.0
            for a in range(-1, 2):
                for b in range(-1, 2):
                    s += u[i + a, j + b]
            r[i, j] = s - 9.0 * u[i, j] + u[i, j] * u[i, j]
    return r


def arrowhead(x):
    # a dense first row and a dense first column
    n = x.shape[0]
    r = np.zeros(n)
    r[0] = np.sum(x * x)
    for i in range(1, n):
        r[i] = x[0] * x[i] + x[i]
    return r


def block_diagonal(x):
    # blocks of four at strided indices 4 * b + k
    nb = x.shape[0] // 4
    r = np.zeros(4 * nb)
    for b in range(nb):
        for k in range(4):
            r[4 * b + k] = x[4 * b + k] * x[4 * b + (k + 1) % 4] + x[4 * b]
    return r


def triangular(x):
    # a triangular loop: row i reads x[0..i]
    n = x.shape[0]
    r = np.zeros(n)
    for i in range(n):
        s = 0.0
        for j in range(i + 1):
            s += (j + 1.0) * x[j]
        r[i] = s * x[i]
    return r


def reductions(x):
    # a float result: one dense row
    return np.sum(x * x) + np.prod(x[:3]) + np.max(x)


def helper_calls(x):
    n = x.shape[0]
    r = np.zeros(n - 1)
    for i in range(n - 1):
        r[i] = _bump(x[i], x[i + 1])
    return r


def whole_array(x):
    # whole-array code: shifted slices, elementwise functions
    return x[1:] * x[:-1] - np.sin(x[1:]) + 2.0 * x[:-1]


def data_index(x, idx):
    # an index read from an int array: the pattern follows idx
    m = idx.shape[0]
    r = np.zeros(m)
    for k in range(m):
        r[k] = x[idx[k]] ** 2 + x[k]
    return r


def data_branch(x):
    # a branch on data: the pattern is that of the branch taken at this point
    n = x.shape[0]
    r = np.zeros(n - 1)
    for i in range(n - 1):
        if x[i] > 0.0:
            r[i] = x[i] * x[i + 1]
        else:
            r[i] = 2.0 * x[i]
    return r


def accidental_zeros(x, y):
    # x * y at x = y = 0 and cos at 0: derivatives exactly zero here, structurally there
    n = x.shape[0]
    r = np.zeros(n)
    for i in range(n):
        r[i] = x[i] * y[i] + math.cos(x[i])
    return r


def affine(x):
    # affine code: the pattern must be exact (offsets, strides, a ring)
    n = x.shape[0]
    r = np.zeros(n)
    for i in range(n):
        r[i] = 2.0 * x[i] - x[(i + 3) % n]
    for i in range(0, n - 1, 2):
        r[i] += x[i + 1]
    return r


# --- Hessians: float results


def rosenbrock(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s += 100.0 * (x[i + 1] - x[i] * x[i]) ** 2 + (1.0 - x[i]) ** 2
    return s


def rosenbrock_whole(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def energy_2d(u):
    # a 2-D periodic Dirichlet energy with a quartic term: a 5-point Hessian
    n = u.shape[0]
    m = u.shape[1]
    e = 0.0
    for i in range(n):
        for j in range(m):
            dx = u[(i + 1) % n, j] - u[i, j]
            dy = u[i, (j + 1) % m] - u[i, j]
            e += dx * dx + dy * dy + 0.25 * u[i, j] ** 4
    return e


def arrow_energy(x):
    # x[0] meets every other element: a dense row and column
    return x[0] * np.sum(x[1:] ** 2) + np.sum(np.cos(x))


def block_energy(x, y):
    # two arguments (a tuple wrt), coupled element by element
    return np.sum(x * x * y) + np.sum(np.exp(y))


def cumulative(x):
    # a partial that is not elementwise (cumsum): its pairs are all against all (a superset)
    return np.sum(np.cumsum(x) ** 2) + x[0] * np.dot(x, x)


def matrix_square(x):
    # a matrix product of a reshaped argument, and a running product
    m = np.reshape(x, (3, 3))
    p = 1.0
    for i in range(x.shape[0]):
        p = p * x[i]
    return np.sum((m @ m) ** 2) + p


def quotients(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s += x[i] / (1.0 + x[i + 1] ** 2) + math.sqrt(x[i] ** 2 + 1.0)
    return s


def _ring(n, offsets):
    p = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for o in offsets:
            p[i, (i + o) % n] = True
    return p


def _exact_affine(n):
    p = _ring(n, (0, 3))
    for i in range(0, n - 1, 2):
        p[i, i + 1] = True
    return p


def _exact_five_point(n, m):
    p = np.zeros((n * m, n * m), dtype=bool)
    for i in range(n):
        for j in range(m):
            for a, b in ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)):
                p[i * m + j, ((i + a) % n) * m + (j + b) % m] = True
    return p


def _exact_banded(n):
    p = np.zeros((n, n), dtype=bool)
    p[0, 0] = True
    for i in range(1, n - 1):
        p[i, i - 1 : i + 2] = True
    p[n - 1, n - 2 :] = True
    return p


def _exact_block(n):
    p = np.zeros((n, n), dtype=bool)
    for b in range(n // 4):
        for k in range(4):
            p[4 * b + k, [4 * b + k, 4 * b + (k + 1) % 4, 4 * b]] = True
    return p


def _exact_triangular(n):
    return np.tril(np.ones((n, n), dtype=bool))


def _rng():
    return np.random.default_rng(41)


# name -> (function, arguments, wrt, exact pattern or None)
JACOBIANS = {
    "banded": (banded, lambda: (_rng().uniform(-1, 1, 9),), 0, lambda: _exact_banded(9)),
    "five_point": (five_point, lambda: (_rng().uniform(-1, 1, (4, 5)),), 0, lambda: _exact_five_point(4, 5)),
    "nine_point": (nine_point, lambda: (_rng().uniform(-1, 1, (5, 4)),), 0, None),
    "arrowhead": (arrowhead, lambda: (_rng().uniform(-1, 1, 8),), 0, None),
    "block_diagonal": (block_diagonal, lambda: (_rng().uniform(-1, 1, 12),), 0, lambda: _exact_block(12)),
    "triangular": (triangular, lambda: (_rng().uniform(-1, 1, 7),), 0, lambda: _exact_triangular(7)),
    "reductions": (reductions, lambda: (_rng().uniform(0.5, 1.5, 6),), 0, None),
    "helper_calls": (helper_calls, lambda: (_rng().uniform(-1, 1, 7),), 0, None),
    "whole_array": (whole_array, lambda: (_rng().uniform(-1, 1, 8),), 0, None),
    "data_index": (data_index, lambda: (_rng().uniform(-1, 1, 6), np.array([5, 0, 2, 2, 4])), 0, None),
    "data_branch": (data_branch, lambda: (np.array([1.0, -1.0, 2.0, -0.5, 0.3, 0.7]),), 0, None),
    "accidental_zeros": (
        accidental_zeros,
        lambda: (np.zeros(5), np.zeros(5)),
        (0, 1),
        None,
    ),
    "affine": (affine, lambda: (_rng().uniform(-1, 1, 8),), 0, lambda: _exact_affine(8)),
}

HESSIANS = {
    "rosenbrock": (rosenbrock, lambda: (_rng().uniform(-1, 1, 8),), 0),
    "rosenbrock_whole": (rosenbrock_whole, lambda: (_rng().uniform(-1, 1, 8),), 0),
    "energy_2d": (energy_2d, lambda: (_rng().uniform(-1, 1, (4, 4)),), 0),
    "arrow_energy": (arrow_energy, lambda: (_rng().uniform(-1, 1, 7),), 0),
    "cumulative": (cumulative, lambda: (_rng().uniform(-1, 1, 6),), 0),
    "matrix_square": (matrix_square, lambda: (_rng().uniform(0.5, 1.5, 9),), 0),
    "quotients": (quotients, lambda: (_rng().uniform(-1, 1, 7),), 0),
    "block_energy": (block_energy, lambda: (_rng().uniform(-1, 1, 5), _rng().uniform(-1, 1, 5)), (0, 1)),
}
