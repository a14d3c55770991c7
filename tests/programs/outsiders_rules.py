"""Issue 38 (what outsiders found): the programs of one area, each a zoo entry (`zoo.py`) that was
silently wrong, crashing or wrongly refused before. The comment above each says what went wrong."""

from __future__ import annotations

import numpy as np
from numba import prange

# --- norms at a zero vector (finding 4) --------------------------------------------------------
# np.linalg.norm(B, axis=1) at a zero row gave a nan tangent and gradient (the lowered
# np.sqrt(np.sum(B * B, axis=1)): sqrt's partial 0.5 / 0 times 0), where np.linalg.norm(B) gives
# the documented subgradient 0; ord=1 gave 1 there, ord=np.inf crashed (a sourcead bug), and
# keepdims=True was refused. Each is called where a row or a column is zero: the subgradient 0,
# which is also what central differences of a norm give there.


def zero_row_and_column(rng: np.random.Generator) -> np.ndarray:
    """A 4x3 matrix whose row 1 and column 2 are zero; its other entries 0.3 to 1 away from zero,
    so that finite differences cross no other kink."""
    B = np.sign(rng.standard_normal((4, 3))) * rng.uniform(0.3, 1.0, (4, 3))
    B[1] = 0.0
    B[:, 2] = 0.0
    return B


def norms_of_rows_at_zero(B):
    r2 = np.linalg.norm(B, axis=1) + np.linalg.norm(B, 2, axis=-1)
    r1 = np.linalg.norm(B, 1, axis=1)
    rinf = np.linalg.norm(B, ord=np.inf, axis=-1)
    return r2 + 2.0 * r1 + 0.5 * rinf + np.linalg.norm(B)


def norms_of_columns_at_zero(B):
    c2 = np.linalg.norm(B, axis=0, keepdims=True)
    c1 = np.linalg.norm(B, 1, axis=-2, keepdims=True)
    cinf = np.linalg.norm(B, np.inf, axis=0)
    return c2 + c1 * 3.0 + cinf - B


def norms_of_a_zero_vector(x, y):
    along = np.linalg.norm(x, axis=0) + np.linalg.norm(x, axis=-1)
    return along, np.linalg.norm(x, 1), np.linalg.norm(x, 2), np.linalg.norm(x, np.inf), np.linalg.norm(x) + y * y


# --- a scalar written into a row or slice (finding 8) ------------------------------------------
# `h[t] = x[t]` with h[t] a row: the adjoint added the row's adjoint to x_bar[t] without summing it
# ("setting an array element with a sequence", reported as a sourcead bug; NPBench fdtd_2d's
# `ey[0, :] = fict[t]`). The value's adjoint is the slice's summed back to the value's shape.


def scalars_into_rows(x, s):
    n = x.shape[0]
    h = np.zeros((n, 3))
    g = np.ones((n, 3))
    c = np.zeros((2, n))
    for t in range(n):
        h[t] = x[t]
        g[t, :] = 2.0 * x[t] * s
        g[t] += s
        g[t, 1:] -= x[t] * x[t]
        c[:, t] = np.sin(x[t])
    h[1:3] = s * s
    h[:, 2] = s
    return np.sum(h * g) + np.sum(c * c)


def scalars_into_rows_prange(x, w):
    n = x.shape[0]
    h = np.zeros((n, 4))
    for t in prange(n):
        h[t] = w * x[t]
        h[t, 1:3] = x[t] * x[t]
        h[t, 3] += x[t]
    return np.sum(np.tanh(h))


def scalars_into_3d(x):
    n = x.shape[0]
    h = np.zeros((n, 2, 3))
    for t in range(n):
        h[t] = x[t]
        h[t, 1] *= x[t]
        h[t, :, 2] = 0.5 * x[t]
    h[0, 1:] += 1.0
    return np.sum(h * h)


def rows_into_rows(A, v):
    # a row into rows: v's adjoint sums over the rows it was written into (a crash); a (1, 3) slice
    # into a (2, 3) one: its adjoint was added unsummed, silently wrong under numba
    h = A.copy()
    h[1:3] = v
    h[0] = v * v
    h[2:4, :] = 2.0 * A[0:1, :]
    h[:, 1] = A[:, 0]
    return np.sum(h * np.cos(h))


def fdtd_rows(fict, ex0, ey0, hz0):
    # NPBench's fdtd_2d, its slice updates written as assignments (an array result: second order
    # refuses the views of hz and ey its forward code reads in a loop that writes them)
    ex, ey, hz = ex0.copy(), ey0.copy(), hz0.copy()
    for t in range(fict.shape[0]):
        ey[0, :] = fict[t]
        ey[1:, :] = ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    return ex * ey + hz * hz


def products_into_rows(A, x, v):
    # a product broadcast into rows: its adjoint is summed back to the product's shape first
    h = np.zeros((4, 3))
    h[0:2] = 2.0 * (A @ x)
    h[2:4] = np.transpose(v) * 3.0
    h[1] = np.tanh(A @ x)
    return np.sum(h * h)
