# ruff: noqa: E741, F841 (NPBench's names: I, J, K, l; K unused as in NPBench)
"""NPBench's stencil and time-stepping kernels (PolyBench and weather stencils), as their numba
versions are written (decorator removed), in our own words; objectives and inputs as in linalg.py."""

from __future__ import annotations

import numpy as np

from benchmarks.npbench.common import grid, rng


# ---- jacobi_1d / jacobi_2d / heat_3d: two buffers swapped every half step (in place) -------
def jacobi_1d_kernel(TSTEPS, A, B):
    for t in range(1, TSTEPS):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def jacobi_1d_objective(TSTEPS, A, B):
    A_out = A.copy()
    B_out = B.copy()
    jacobi_1d_kernel(TSTEPS, A_out, B_out)
    return np.sum(A_out) + np.sum(B_out)


def init_jacobi_1d(N, TSTEPS):
    n = np.arange(N, dtype=np.float64)
    return TSTEPS, (n + 2.0) / N, (n + 3.0) / N


def jacobi_2d_kernel(TSTEPS, A, B):
    for t in range(1, TSTEPS):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def jacobi_2d_objective(TSTEPS, A, B):
    A_out = A.copy()
    B_out = B.copy()
    jacobi_2d_kernel(TSTEPS, A_out, B_out)
    return np.sum(A_out) + np.sum(B_out)


def init_jacobi_2d(N, TSTEPS):
    i, j = grid(N, N)
    return TSTEPS, i * (j + 2.0) / N, i * (j + 3.0) / N


def heat_3d_kernel(TSTEPS, A, B):
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


def heat_3d_objective(TSTEPS, A, B):
    A_out = A.copy()
    B_out = B.copy()
    heat_3d_kernel(TSTEPS, A_out, B_out)
    return np.sum(A_out) + np.sum(B_out)


def init_heat_3d(N, TSTEPS):
    i, j, k = np.indices((N, N, N), dtype=np.float64)
    A = (i + j + (N - k)) * 10.0 / N
    return TSTEPS, A, A.copy()


# ---- seidel_2d: Gauss-Seidel sweeps, a row update then a running scan along it (in place) ---
def seidel_2d_kernel(TSTEPS, N, A):
    for t in range(0, TSTEPS - 1):
        for i in range(1, N - 1):
            A[i, 1:-1] += (
                A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:] + A[i, 2:] + A[i + 1, :-2] + A[i + 1, 1:-1] + A[i + 1, 2:]
            )
            for j in range(1, N - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 9.0


def seidel_2d_objective(TSTEPS, N, A):
    A_out = A.copy()
    seidel_2d_kernel(TSTEPS, N, A_out)
    return np.sum(A_out)


def init_seidel_2d(N, TSTEPS):
    i, j = grid(N, N)
    return TSTEPS, N, (i * (j + 2.0) + 2.0) / N


# ---- fdtd_2d: 2-D FDTD, a boundary row set from one element of the source (in place) -------
def fdtd_2d_kernel(TMAX, ex, ey, hz, _fict_):
    for t in range(TMAX):
        ey[0, :] = _fict_[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def fdtd_2d_objective(TMAX, ex, ey, hz, _fict_):
    ex_out = ex.copy()
    ey_out = ey.copy()
    hz_out = hz.copy()
    fdtd_2d_kernel(TMAX, ex_out, ey_out, hz_out, _fict_)
    return np.sum(ex_out) + np.sum(ey_out) + np.sum(hz_out)


def init_fdtd_2d(TMAX, NX, NY):
    i, j = grid(NX, NY)
    return TMAX, i * (j + 1.0) / NX, i * (j + 2.0) / NY, i * (j + 3.0) / NX, np.arange(TMAX, dtype=np.float64)


# ---- adi: alternating-direction implicit sweeps with tridiagonal solves (in place on u) ----
def adi_kernel(TSTEPS, N, u):
    v = np.empty(u.shape, dtype=u.dtype)
    p = np.empty(u.shape, dtype=u.dtype)
    q = np.empty(u.shape, dtype=u.dtype)
    DX = 1.0 / N
    DY = 1.0 / N
    DT = 1.0 / TSTEPS
    B1 = 2.0
    B2 = 1.0
    mul1 = B1 * DT / (DX * DX)
    mul2 = B2 * DT / (DY * DY)
    a = -mul1 / 2.0
    b = 1.0 + mul2
    c = a
    d = -mul2 / 2.0
    e = 1.0 + mul2
    f = d
    for t in range(1, TSTEPS + 1):
        v[0, 1 : N - 1] = 1.0
        p[1 : N - 1, 0] = 0.0
        q[1 : N - 1, 0] = v[0, 1 : N - 1]
        for j in range(1, N - 1):
            p[1 : N - 1, j] = -c / (a * p[1 : N - 1, j - 1] + b)
            q[1 : N - 1, j] = (
                -d * u[j, 0 : N - 2] + (1.0 + 2.0 * d) * u[j, 1 : N - 1] - f * u[j, 2:N] - a * q[1 : N - 1, j - 1]
            ) / (a * p[1 : N - 1, j - 1] + b)
        v[N - 1, 1 : N - 1] = 1.0
        for j in range(N - 2, 0, -1):
            v[j, 1 : N - 1] = p[1 : N - 1, j] * v[j + 1, 1 : N - 1] + q[1 : N - 1, j]
        u[1 : N - 1, 0] = 1.0
        p[1 : N - 1, 0] = 0.0
        q[1 : N - 1, 0] = u[1 : N - 1, 0]
        for j in range(1, N - 1):
            p[1 : N - 1, j] = -f / (d * p[1 : N - 1, j - 1] + e)
            q[1 : N - 1, j] = (
                -a * v[0 : N - 2, j] + (1.0 + 2.0 * a) * v[1 : N - 1, j] - c * v[2:N, j] - d * q[1 : N - 1, j - 1]
            ) / (d * p[1 : N - 1, j - 1] + e)
        u[1 : N - 1, N - 1] = 1.0
        for j in range(N - 2, 0, -1):
            u[1 : N - 1, j] = p[1 : N - 1, j] * u[1 : N - 1, j + 1] + q[1 : N - 1, j]


def adi_objective(TSTEPS, N, u):
    u_out = u.copy()
    adi_kernel(TSTEPS, N, u_out)
    return np.sum(u_out)


def init_adi(N, TSTEPS):
    i, j = grid(N, N)
    return TSTEPS, N, (i + N - j) / N


# ---- deriche: recursive Gaussian edge filter, chained constants, four 1-D recursions -------
def deriche_kernel(alpha, imgIn):
    k = (1.0 - np.exp(-alpha)) * (1.0 - np.exp(-alpha)) / (1.0 + alpha * np.exp(-alpha) - np.exp(2.0 * alpha))
    a1 = a5 = k
    a2 = a6 = k * np.exp(-alpha) * (alpha - 1.0)
    a3 = a7 = k * np.exp(-alpha) * (alpha + 1.0)
    a4 = a8 = -k * np.exp(-2.0 * alpha)
    b1 = 2.0 ** (-alpha)
    b2 = -np.exp(-2.0 * alpha)
    c1 = c2 = 1
    y1 = np.empty_like(imgIn)
    y1[:, 0] = a1 * imgIn[:, 0]
    y1[:, 1] = a1 * imgIn[:, 1] + a2 * imgIn[:, 0] + b1 * y1[:, 0]
    for j in range(2, imgIn.shape[1]):
        y1[:, j] = a1 * imgIn[:, j] + a2 * imgIn[:, j - 1] + b1 * y1[:, j - 1] + b2 * y1[:, j - 2]
    y2 = np.empty_like(imgIn)
    y2[:, -1] = 0.0
    y2[:, -2] = a3 * imgIn[:, -1]
    for j in range(imgIn.shape[1] - 3, -1, -1):
        y2[:, j] = a3 * imgIn[:, j + 1] + a4 * imgIn[:, j + 2] + b1 * y2[:, j + 1] + b2 * y2[:, j + 2]
    imgOut = c1 * (y1 + y2)
    y1[0, :] = a5 * imgOut[0, :]
    y1[1, :] = a5 * imgOut[1, :] + a6 * imgOut[0, :] + b1 * y1[0, :]
    for i in range(2, imgIn.shape[0]):
        y1[i, :] = a5 * imgOut[i, :] + a6 * imgOut[i - 1, :] + b1 * y1[i - 1, :] + b2 * y1[i - 2, :]
    y2[-1, :] = 0.0
    y2[-2, :] = a7 * imgOut[-1, :]
    for i in range(imgIn.shape[0] - 3, -1, -1):
        y2[i, :] = a7 * imgOut[i + 1, :] + a8 * imgOut[i + 2, :] + b1 * y2[i + 1, :] + b2 * y2[i + 2, :]
    imgOut[:] = c2 * (y1 + y2)
    return imgOut


def deriche_objective(alpha, imgIn):
    return np.sum(deriche_kernel(alpha, imgIn))


def init_deriche(W, H):
    i, j = grid(W, H)
    return 0.25, ((313.0 * i + 991.0 * j) % 65536) / 65535.0


# ---- hdiff: horizontal diffusion with flux limiters (writes out_field) ----------------------
def hdiff_kernel(in_field, out_field, coeff):
    I, J, K = out_field.shape[0], out_field.shape[1], out_field.shape[2]
    lap_field = 4.0 * in_field[1 : I + 3, 1 : J + 3, :] - (
        in_field[2 : I + 4, 1 : J + 3, :]
        + in_field[0 : I + 2, 1 : J + 3, :]
        + in_field[1 : I + 3, 2 : J + 4, :]
        + in_field[1 : I + 3, 0 : J + 2, :]
    )
    res = lap_field[1:, 1 : J + 1, :] - lap_field[:-1, 1 : J + 1, :]
    flx_field = np.where((res * (in_field[2 : I + 3, 2 : J + 2, :] - in_field[1 : I + 2, 2 : J + 2, :])) > 0, 0, res)
    res = lap_field[1 : I + 1, 1:, :] - lap_field[1 : I + 1, :-1, :]
    fly_field = np.where((res * (in_field[2 : I + 2, 2 : J + 3, :] - in_field[2 : I + 2, 1 : J + 2, :])) > 0, 0, res)
    out_field[:, :, :] = in_field[2 : I + 2, 2 : J + 2, :] - coeff[:, :, :] * (
        flx_field[1:, :, :] - flx_field[:-1, :, :] + fly_field[:, 1:, :] - fly_field[:, :-1, :]
    )


def hdiff_objective(in_field, out_field, coeff):
    out = out_field.copy()
    hdiff_kernel(in_field, out, coeff)
    return np.sum(out)


def init_hdiff(I, J, K):
    g = rng()
    return g.random((I + 4, J + 4, K)), g.random((I, J, K)), g.random((I, J, K))


# ---- vadv: vertical advection, a Thomas solve per column (writes utens_stage) ---------------
BET_M = 0.5
BET_P = 0.5


def vadv_kernel(utens_stage, u_stage, wcon, u_pos, utens, dtr_stage):
    I, J, K = utens_stage.shape[0], utens_stage.shape[1], utens_stage.shape[2]
    ccol = np.empty((I, J, K), dtype=utens_stage.dtype)
    dcol = np.empty((I, J, K), dtype=utens_stage.dtype)
    data_col = np.empty((I, J), dtype=utens_stage.dtype)
    for k in range(1):
        gcv = 0.25 * (wcon[1:, :, k + 1] + wcon[:-1, :, k + 1])
        cs = gcv * BET_M
        ccol[:, :, k] = gcv * BET_P
        bcol = dtr_stage - ccol[:, :, k]
        correction_term = -cs * (u_stage[:, :, k + 1] - u_stage[:, :, k])
        dcol[:, :, k] = dtr_stage * u_pos[:, :, k] + utens[:, :, k] + utens_stage[:, :, k] + correction_term
        divided = 1.0 / bcol
        ccol[:, :, k] = ccol[:, :, k] * divided
        dcol[:, :, k] = dcol[:, :, k] * divided
    for k in range(1, K - 1):
        gav = -0.25 * (wcon[1:, :, k] + wcon[:-1, :, k])
        gcv = 0.25 * (wcon[1:, :, k + 1] + wcon[:-1, :, k + 1])
        as_ = gav * BET_M
        cs = gcv * BET_M
        acol = gav * BET_P
        ccol[:, :, k] = gcv * BET_P
        bcol = dtr_stage - acol - ccol[:, :, k]
        correction_term = -as_ * (u_stage[:, :, k - 1] - u_stage[:, :, k]) - cs * (
            u_stage[:, :, k + 1] - u_stage[:, :, k]
        )
        dcol[:, :, k] = dtr_stage * u_pos[:, :, k] + utens[:, :, k] + utens_stage[:, :, k] + correction_term
        divided = 1.0 / (bcol - ccol[:, :, k - 1] * acol)
        ccol[:, :, k] = ccol[:, :, k] * divided
        dcol[:, :, k] = (dcol[:, :, k] - (dcol[:, :, k - 1]) * acol) * divided
    for k in range(K - 1, K):
        gav = -0.25 * (wcon[1:, :, k] + wcon[:-1, :, k])
        as_ = gav * BET_M
        acol = gav * BET_P
        bcol = dtr_stage - acol
        correction_term = -as_ * (u_stage[:, :, k - 1] - u_stage[:, :, k])
        dcol[:, :, k] = dtr_stage * u_pos[:, :, k] + utens[:, :, k] + utens_stage[:, :, k] + correction_term
        divided = 1.0 / (bcol - ccol[:, :, k - 1] * acol)
        dcol[:, :, k] = (dcol[:, :, k] - (dcol[:, :, k - 1]) * acol) * divided
    for k in range(K - 1, K - 2, -1):
        datacol = dcol[:, :, k]
        data_col[:] = datacol
        utens_stage[:, :, k] = dtr_stage * (datacol - u_pos[:, :, k])
    for k in range(K - 2, -1, -1):
        datacol = dcol[:, :, k] - ccol[:, :, k] * data_col[:, :]
        data_col[:] = datacol
        utens_stage[:, :, k] = dtr_stage * (datacol - u_pos[:, :, k])


def vadv_objective(utens_stage, u_stage, wcon, u_pos, utens, dtr_stage):
    out = utens_stage.copy()
    vadv_kernel(out, u_stage, wcon, u_pos, utens, dtr_stage)
    return np.sum(out)


def init_vadv(I, J, K):
    g = rng()
    utens_stage, u_stage = g.random((I, J, K)), g.random((I, J, K))
    wcon = g.random((I + 1, J, K))
    u_pos, utens = g.random((I, J, K)), g.random((I, J, K))
    return utens_stage, u_stage, wcon, u_pos, utens, 3.0 / 20.0
