"""Kernels whose generated code must do no more than their primal does (issue 40, item 4), and
prange loops whose indices the call contract proves or cannot prove (item 5): test_perf_shapes.py.

trisolv, cholesky and lu are written as NPBench's numba versions write them: a dot product of row
slices in a loop.
"""

import numpy as np
from numba import prange


def trisolv(L, b):
    x = np.zeros_like(b)
    for i in range(b.shape[0]):
        x[i] = (b[i] - np.dot(L[i, :i], x[:i])) / L[i, i]
    return np.sum(x)


def cholesky(A0):
    A = A0.copy()
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])
    return np.sum(A)


def lu(A0):
    A = A0.copy()
    N = A.shape[0]
    for i in range(N):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, N):
            A[i, j] -= A[i, :i] @ A[:i, j]
    return np.sum(A)


def modulo_weights(x, w):
    # an index `e % 8`: in range for every e where w has at least 8 elements
    n = x.shape[0]
    out = np.zeros(n)
    for i in prange(n):
        k = i * 3 + 1
        out[i] = x[i] * w[k % 8]
    return np.sum(out * out)


def squared_index(x, w):
    # an index the contract cannot bound (`i * i` is not affine in i)
    n = x.shape[0]
    out = np.zeros(n)
    for i in prange(n):
        out[i] = x[i] * w[i * i]
    return np.sum(out * out)


def atax(A, x):
    return np.sum((A @ x) @ A)


def bicg(A, p, r):
    return np.sum(r @ A) + np.sum(A @ p)


def jacobi_1d(TSTEPS, A0, B0):
    # a linear stencil: its adjoint reads no state, so nothing is recorded
    A = A0.copy()
    B = B0.copy()
    for t in range(1, TSTEPS):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
    return np.sum(A) + np.sum(B)


def gesummv(alpha, beta, A, B, x):
    # np.sum of a sum of products: nothing computed in the forward sweep for its shape alone
    y = alpha * A @ x + beta * B @ x
    return np.sum(y)


def mvt(x1, x2, y_1, y_2, A):
    x1_out = x1.copy()
    x2_out = x2.copy()
    x1_out += A @ y_1
    x2_out += y_2 @ A
    return np.sum(x1_out) + np.sum(x2_out)


def heat_3d(TSTEPS, A0, B0):
    # a linear stencil of sums and differences: no state recorded, no sum computed for its shape
    A = A0.copy()
    B = B0.copy()
    for t in range(1, TSTEPS):
        B[1:-1, 1:-1, 1:-1] = (
            0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1])
            + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1])
            + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, 0:-2])
            + A[1:-1, 1:-1, 1:-1]
        )
        A[1:-1, 1:-1, 1:-1] = (
            0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1])
            + 0.125 * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1])
            + 0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, 0:-2])
            + B[1:-1, 1:-1, 1:-1]
        )
    return np.sum(A) + np.sum(B)


def time_steps(x0, q, y, dt, steps):
    # x is bound again each step: `x - dt * g` is not computed again for unbroadcast's shape
    x = x0.copy()
    for _ in range(steps):
        g = q * np.sin(x)
        x = x - dt * g + 0.1 * dt * y
    return np.sum(x * x)
