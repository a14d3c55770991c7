"""NPBench's PolyBench factorisations, solvers and statistics kernels, as their numba versions
are written (decorator removed), in our own words; objectives and inputs as in linalg.py."""

from __future__ import annotations

import numpy as np

from benchmarks.npbench.common import grid, lower_spd, rng


# ---- cholesky: in-place lower Cholesky factor, dot products of row slices -----------------
def cholesky_kernel(A):
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])


def cholesky_objective(A):
    A_out = A.copy()
    cholesky_kernel(A_out)
    return np.sum(A_out)


def init_cholesky(N):
    return (lower_spd(N),)


# ---- cholesky2: numpy's Cholesky plus the strict upper part, written into A ---------------
def cholesky2_kernel(A):
    A[:] = np.linalg.cholesky(A) + np.triu(A, k=1)


def cholesky2_objective(A):
    A_out = A.copy()
    cholesky2_kernel(A_out)
    return np.sum(A_out)


# ---- lu: in-place Doolittle LU, row-slice @ column-slice ----------------------------------
def lu_kernel(A):
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]


def lu_objective(A):
    A_out = A.copy()
    lu_kernel(A_out)
    return np.sum(A_out)


# ---- ludcmp: LU, then forward and backward substitution -----------------------------------
def ludcmp_kernel(A, b):
    x = np.zeros_like(b)
    y = np.zeros_like(b)
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]
    for i in range(A.shape[0]):
        y[i] = b[i] - A[i, :i] @ y[:i]
    for i in range(A.shape[0] - 1, -1, -1):
        x[i] = (y[i] - A[i, i + 1 :] @ x[i + 1 :]) / A[i, i]
    return x, y


def ludcmp_objective(A, b):
    A_out = A.copy()
    x, y = ludcmp_kernel(A_out, b)
    return np.sum(x) + np.sum(y) + np.sum(A_out)


def init_ludcmp(N):
    return lower_spd(N), (np.arange(N) + 1.0) / N / 2.0 + 4.0


# ---- trisolv: forward substitution into x (in place) ---------------------------------------
def trisolv_kernel(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def trisolv_objective(L, x, b):
    x_out = x.copy()
    trisolv_kernel(L, x_out, b)
    return np.sum(x_out)


def init_trisolv(N):
    i, j = grid(N, N)
    return (i + N - j + 1) * 2.0 / N, np.full(N, -999.0), np.arange(N, dtype=np.float64)


# ---- durbin: Levinson-Durbin recursion for a Toeplitz system --------------------------------
def durbin_kernel(r):
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def durbin_objective(r):
    return np.sum(durbin_kernel(r))


def init_durbin(N):
    return (N + 1.0 - np.arange(N),)


# ---- gramschmidt: modified Gram-Schmidt QR --------------------------------------------------
def gramschmidt_kernel(A):
    Q = np.zeros_like(A)
    R = np.zeros((A.shape[1], A.shape[1]), dtype=A.dtype)
    for k in range(A.shape[1]):
        nrm = np.dot(A[:, k], A[:, k])
        R[k, k] = np.sqrt(nrm)
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, A.shape[1]):
            R[k, j] = np.dot(Q[:, k], A[:, j])
            A[:, j] -= Q[:, k] * R[k, j]
    return Q, R


def gramschmidt_objective(A):
    A_work = A.copy()
    Q, R = gramschmidt_kernel(A_work)
    return np.sum(Q) + np.sum(R)


def init_gramschmidt(M, N):
    return (rng().random((M, N)),)


# ---- covariance / correlation: statistics with symmetric writes ------------------------------
def covariance_kernel(M, float_n, data):
    mean = np.sum(data, axis=0) / float_n
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
    return cov


def covariance_objective(M, float_n, data):
    return np.sum(covariance_kernel(M, float_n, data.copy()))


def init_covariance(M, N):
    i, j = grid(N, M)
    return M, float(N), (i * j) / M


def covariance2_kernel(M, float_n, data):
    return np.cov(np.transpose(data))


def covariance2_objective(M, float_n, data):
    return np.sum(covariance2_kernel(M, float_n, data))


def correlation_kernel(M, float_n, data):
    mean = np.sum(data, axis=0) / float_n
    stddev = np.sqrt(np.sum((data - mean) ** 2, axis=0) / float_n)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1 : M, i] = corr[i, i + 1 : M] = data[:, i] @ data[:, i + 1 : M]
    return corr


def correlation_objective(M, float_n, data):
    return np.sum(correlation_kernel(M, float_n, data.copy()))


def init_correlation(M, N):
    i, j = grid(N, M)
    return M, float(N), (i * j) / M + i
