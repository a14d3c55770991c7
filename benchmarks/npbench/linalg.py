"""NPBench's PolyBench linear-algebra kernels, as their numba versions are written.

Each ``*_kernel`` keeps the idioms of NPBench's ``*_numba_n.py`` (``@``, slices, in-place updates,
``np.empty(..., dtype=x.dtype)``) with the ``@nb.jit`` decorator removed; it is written here in
our own words from the kernel's math. Each ``*_objective`` is what gets differentiated: the sum
of what the kernel returns, or, for a kernel that updates its arguments in place, a copy of those
arguments, the call, and the sum of what it wrote. ``init_*`` builds NPBench-like inputs (the
same deterministic patterns, not NPBench's code).
"""

from __future__ import annotations

import numpy as np

from benchmarks.npbench.common import grid


# ---- atax: y = A^T (A x) -----------------------------------------------------------------
def atax_kernel(A, x):
    return (A @ x) @ A


def atax_objective(A, x):
    return np.sum(atax_kernel(A, x))


def init_atax(M, N):
    i, j = grid(M, N)
    return ((i + j) % N) / (5.0 * M), 1.0 + np.arange(N) / N


# ---- bicg: s = r A, q = A p ----------------------------------------------------------------
def bicg_kernel(A, p, r):
    return r @ A, A @ p


def bicg_objective(A, p, r):
    s, q = bicg_kernel(A, p, r)
    return np.sum(s) + np.sum(q)


def init_bicg(M, N):
    i, j = grid(N, M)
    return (i * (j + 1) % N) / N, (np.arange(M) % M) / M, (np.arange(N) % N) / N


# ---- gemm: C = alpha A B + beta C (in place) --------------------------------------------
def gemm_kernel(alpha, beta, C, A, B):
    C[:] = alpha * A @ B + beta * C


def gemm_objective(alpha, beta, C, A, B):
    C_out = C.copy()
    gemm_kernel(alpha, beta, C_out, A, B)
    return np.sum(C_out)


def init_gemm(NI, NJ, NK):
    i, j = grid(NI, NJ)
    C = ((i * j + 1) % NI) / NI
    i, k = grid(NI, NK)
    A = (i * (k + 1) % NK) / NK
    k, j = grid(NK, NJ)
    B = (k * (j + 2) % NJ) / NJ
    return 1.5, 1.2, C, A, B


# ---- gemver: rank-2 update then two matrix-vector products (in place) ---------------------
def gemver_kernel(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    A += np.outer(u1, v1) + np.outer(u2, v2)
    x += beta * y @ A + z
    w += alpha * A @ x


def gemver_objective(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    A_out = A.copy()
    w_out = w.copy()
    x_out = x.copy()
    gemver_kernel(alpha, beta, A_out, u1, v1, u2, v2, w_out, x_out, y, z)
    return np.sum(A_out) + np.sum(w_out) + np.sum(x_out)


def init_gemver(N):
    i, j = grid(N, N)
    n = np.arange(N) + 1.0
    A = (i * j % N) / N
    u1, u2, v1, v2 = n - 1.0, n / N / 2.0, n / N / 4.0, n / N / 6.0
    return 1.5, 1.2, A, u1, v1, u2, v2, np.zeros(N), np.zeros(N), n / N / 8.0, n / N / 9.0


# ---- gesummv: alpha A x + beta B x -------------------------------------------------------
def gesummv_kernel(alpha, beta, A, B, x):
    return alpha * A @ x + beta * B @ x


def gesummv_objective(alpha, beta, A, B, x):
    return np.sum(gesummv_kernel(alpha, beta, A, B, x))


def init_gesummv(N):
    i, j = grid(N, N)
    return 1.5, 1.2, ((i * j + 1) % N) / N, ((i * j + 2) % N) / N, (np.arange(N) % N) / N


# ---- k2mm: D = alpha A B C + beta D (in place) ----------------------------------------------
def k2mm_kernel(alpha, beta, A, B, C, D):
    D[:] = alpha * A @ B @ C + beta * D


def k2mm_objective(alpha, beta, A, B, C, D):
    D_out = D.copy()
    k2mm_kernel(alpha, beta, A, B, C, D_out)
    return np.sum(D_out)


def init_k2mm(NI, NJ, NK, NL):
    i, j = grid(NI, NK)
    A = ((i * j + 1) % NI) / NI
    i, j = grid(NK, NJ)
    B = (i * (j + 1) % NJ) / NJ
    i, j = grid(NJ, NL)
    C = ((i * (j + 3) + 1) % NL) / NL
    i, j = grid(NI, NL)
    D = (i * (j + 2) % NK) / NK
    return 1.5, 1.2, A, B, C, D


# ---- k3mm: A B C D ------------------------------------------------------------------------
def k3mm_kernel(A, B, C, D):
    return A @ B @ C @ D


def k3mm_objective(A, B, C, D):
    return np.sum(k3mm_kernel(A, B, C, D))


def init_k3mm(NI, NJ, NK, NL, NM):
    i, j = grid(NI, NK)
    A = ((i * j + 1) % NI) / (5.0 * NI)
    i, j = grid(NK, NJ)
    B = ((i * (j + 1) + 2) % NJ) / (5.0 * NJ)
    i, j = grid(NJ, NM)
    C = (i * (j + 3) % NL) / (5.0 * NL)
    i, j = grid(NM, NL)
    D = ((i * (j + 2) + 2) % NK) / (5.0 * NK)
    return A, B, C, D


# ---- mvt: x1 += A y1, x2 += y2 A (in place) ------------------------------------------------
def mvt_kernel(x1, x2, y_1, y_2, A):
    x1 += A @ y_1
    x2 += y_2 @ A


def mvt_objective(x1, x2, y_1, y_2, A):
    x1_out = x1.copy()
    x2_out = x2.copy()
    mvt_kernel(x1_out, x2_out, y_1, y_2, A)
    return np.sum(x1_out) + np.sum(x2_out)


def init_mvt(N):
    n = np.arange(N)
    i, j = grid(N, N)
    return (n % N) / N, ((n + 1) % N) / N, ((n + 3) % N) / N, ((n + 4) % N) / N, (i * j % N) / N


# ---- symm: C = alpha A B + beta C with A symmetric, lower part stored (in place) ---------
def symm_kernel(alpha, beta, C, A, B):
    temp2 = np.empty((C.shape[1],), dtype=C.dtype)
    C *= beta
    for i in range(C.shape[0]):
        for j in range(C.shape[1]):
            C[:i, j] += alpha * B[i, j] * A[i, :i]
            temp2[j] = B[:i, j] @ A[i, :i]
        C[i, :] += alpha * B[i, :] * A[i, i] + alpha * temp2


def symm_objective(alpha, beta, C, A, B):
    C_out = C.copy()
    symm_kernel(alpha, beta, C_out, A, B)
    return np.sum(C_out)


def init_symm(M, N):
    i, j = grid(M, N)
    C = ((i + j) % 100) / M
    B = ((N + i - j) % 100) / M
    i, j = grid(M, M)
    A = np.where(j <= i, ((i + j) % 100) / M, -999.0)
    return 1.5, 1.2, C, A, B


# ---- syr2k / syrk: symmetric rank-2k / rank-k updates of the lower triangle (in place) ------
def syr2k_kernel(alpha, beta, C, A, B):
    for i in range(A.shape[0]):
        C[i, : i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, : i + 1] += A[: i + 1, k] * alpha * B[i, k] + B[: i + 1, k] * alpha * A[i, k]


def syr2k_objective(alpha, beta, C, A, B):
    C_out = C.copy()
    syr2k_kernel(alpha, beta, C_out, A, B)
    return np.sum(C_out)


def init_syr2k(M, N):
    i, j = grid(N, N)
    C = ((i * j + 3) % N) / M
    i, j = grid(N, M)
    return 1.5, 1.2, C, ((i * j + 1) % N) / N, ((i * j + 2) % M) / M


def syrk_kernel(alpha, beta, C, A):
    for i in range(A.shape[0]):
        C[i, : i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, : i + 1] += alpha * A[i, k] * A[: i + 1, k]


def syrk_objective(alpha, beta, C, A):
    C_out = C.copy()
    syrk_kernel(alpha, beta, C_out, A)
    return np.sum(C_out)


def init_syrk(M, N):
    i, j = grid(N, N)
    C = ((i * j + 2) % N) / M
    i, j = grid(N, M)
    return 1.5, 1.2, C, ((i * j + 1) % N) / N


# ---- trmm: B = alpha A^T B with A unit lower triangular (in place) -------------------------
def trmm_kernel(alpha, A, B):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1 :, i], B[i + 1 :, j])
    B *= alpha


def trmm_objective(alpha, A, B):
    B_out = B.copy()
    trmm_kernel(alpha, A, B_out)
    return np.sum(B_out)


def init_trmm(M, N):
    i, j = grid(M, M)
    A = ((i * j) % M) / M
    A[np.arange(M), np.arange(M)] = 1.0
    i, j = grid(M, N)
    return 1.5, A, ((N + i - j) % N) / N


# ---- doitgen: each row of each slab times C4 (in place) -----------------------------------
def doitgen_kernel(NR, NQ, NP, A, C4):
    for r in range(NR):
        for q in range(NQ):
            tmp = A[r, q, :] @ C4
            A[r, q, :] = tmp


def doitgen_objective(NR, NQ, NP, A, C4):
    A_out = A.copy()
    doitgen_kernel(NR, NQ, NP, A_out, C4)
    return np.sum(A_out)


def init_doitgen(NR, NQ, NP):
    i, j, k = np.indices((NR, NQ, NP), dtype=np.float64)
    A = ((i * j + k) % NP) / NP
    i, j = grid(NP, NP)
    return NR, NQ, NP, A, (i * j % NP) / NP
