"""prange loops whose adjoints must run in parallel and race-free (test_parallel.py).

test_parallel.py also imports a serial twin of this file, with every `prange(` read as `range(`.
"""

import math

import numba
import numpy as np
from numba import prange


def logistic_loss(w, X, y):
    # logistic regression: a per-sample loss mapped over samples, a shared parameter vector
    n = X.shape[0]
    total = 0.0
    for i in prange(n):
        z = 0.0
        for j in range(X.shape[1]):
            z += X[i, j] * w[j]
        p = 1.0 / (1.0 + math.exp(-z))
        total += -(y[i] * math.log(p) + (1.0 - y[i]) * math.log(1.0 - p))
    return total / n


def gather_sum(x, idx):
    # a gather with many index collisions: its adjoint is a scatter
    s = 0.0
    for i in numba.prange(idx.shape[0]):
        v = x[idx[i]]
        s += math.sin(v) * v
    return s


def softplus_rows(W, X, b):
    # per-sample output written at the loop index, with a nested reduction loop and a branch
    n = X.shape[0]
    out = np.zeros(n)
    for i in prange(n):
        a = b
        for j in range(X.shape[1]):
            a += W[j] * X[i, j]
        if a > 0.0:
            out[i] = a + math.log(1.0 + math.exp(-a))
        else:
            out[i] = math.log(1.0 + math.exp(a))
    s = 0.0
    for i in range(n):
        s += out[i] * out[i]
    return s


def mapped_stencil(u, c):
    # reads neighbours, writes its own element: a map whose adjoint scatters to i-1 and i+1
    n = u.shape[0]
    v = np.zeros(n)
    for i in prange(1, n - 1):
        v[i] = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1])
    s = 0.0
    for i in range(n):
        s += math.tanh(v[i])
    return s


def inner_recurrence(x, w):
    # the shared w's adjoint is accumulated inside an inner loop of the prange body
    out = np.zeros(x.shape[0])
    for i in prange(x.shape[0]):
        z = x[i]
        for _k in range(6):
            z = math.sin(z) * w + math.cos(z * w)
        out[i] = z
    s = 0.0
    for i in range(x.shape[0]):
        s += out[i] * out[i]
    return s


def permuted_writes(x, perm):
    # writes at perm[i], not at the loop index: no race-free parallel adjoint is known, so serial
    y = np.zeros(x.shape[0])
    for i in prange(x.shape[0]):
        y[perm[i]] = x[i] * x[i]
    s = 0.0
    for i in range(x.shape[0]):
        s += y[i] * float(i + 1)
    return s


def heat_steps(u0, kappa, n_steps):
    # time stepping with a prange map per step and buffer swaps: the old values each step
    # overwrites are needed by kappa's adjoint, so every iteration records them in its own slot
    n = u0.shape[0]
    u = u0.copy()
    v = u0.copy()
    for _step in range(n_steps):
        for i in prange(1, n - 1):
            v[i] = u[i] + kappa * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u, v = v, u
    s = 0.0
    for i in range(n):
        s += u[i] * u[i] * float(i)
    return s


def diffusion_rows(u0, kappa, n_steps):
    # 2-D: prange over rows, an inner loop over columns, swaps
    n = u0.shape[0]
    m = u0.shape[1]
    u = u0.copy()
    v = u0.copy()
    for _step in range(n_steps):
        for i in prange(1, n - 1):
            for j in range(1, m - 1):
                v[i, j] = u[i, j] + kappa * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
        u, v = v, u
    s = 0.0
    for i in range(n):
        for j in range(m):
            s += u[i, j] * u[i, j]
    return 0.5 * s


def scratch_rows(X, w):
    # a scratch row per iteration, written and read at any index: the iteration's own
    n, d = X.shape
    total = 0.0
    for i in numba.prange(n):
        row = np.empty(d)
        for j in range(d):
            row[j] = np.tanh(X[i, j] * w[j])
        s = 0.0
        for j in range(d):
            s += row[j] * row[j] * w[j]
        total += s
    return total


def scratch_recurrence(X, w):
    # a scratch array each iteration overwrites in a recurrence (its records stay in the iteration)
    n, d = X.shape
    out = np.zeros(n)
    for i in numba.prange(n):
        acc = np.zeros(d)
        for j in range(d):
            acc[j] = X[i, j] * w[j]
        for j in range(1, d):
            acc[j] = acc[j] * acc[j - 1] + np.sin(acc[j])
        out[i] = acc[d - 1]
    return np.sum(out * out)


def scratch_overwritten(X, w):
    # inner loops of a prange iteration whose adjoints are independent, run in their own order:
    # the third overwrites scratch elements an earlier adjoint reads, recorded on the iteration's
    # tape and each restored from its offset
    n, d = X.shape
    total = 0.0
    for i in numba.prange(n):
        acc = np.empty(d)
        for j in range(d):
            acc[j] = X[i, j] * w[j]
        s = 0.0
        for j in range(d):
            s += acc[j] * acc[j]
        for j in range(d):
            acc[j] = np.sin(X[i, j]) * w[j]
        for j in range(d):
            s += acc[j] * acc[j] * X[i, j]
        total += s
    return total


def rows_overwritten(x, A, c):
    # a prange loop overwriting whole rows that an earlier adjoint reads: a row's record has the
    # row's size, so the iterations cannot own fixed one-value slots of the tape (serial adjoint)
    B = A.copy()
    s = 0.0
    for i in range(B.shape[0]):
        s += B[i, 0] * B[i, 1] * x[0]
    for i in numba.prange(B.shape[0]):
        B[i] = np.sin(c[i] * x[1])
    for i in range(B.shape[0]):
        s += B[i, 0] * B[i, 1]
    return s


def index_slots(x, idx, k):
    # a prange loop overwriting integer elements an earlier adjoint reads (as indices): each
    # iteration records the old one in its own slot of the (float) tape
    J = idx.copy()
    s = 0.0
    for i in range(J.shape[0]):
        s += x[J[i]] ** 2
    for i in numba.prange(J.shape[0]):
        J[i] = k[i]
    for i in range(J.shape[0]):
        s += x[J[i]] * np.sin(x[J[i]])
    return s


def empty_prange_between_records(x, m):
    # the prange loop runs m - 2 iterations (none for m = 1), each recording in its own slot of the
    # tape, between loops that record: its slots are counted max(m - 2, 0)
    y = x.copy()
    t = 1.0
    s = 0.0
    for i in range(x.shape[0]):
        s += y[i] * y[i]
        t = t * math.sin(x[i] + 1.0)
    for i in numba.prange(1, m - 1):
        y[i] = math.sin(x[i]) * 0.5 + x[0]
    for i in range(x.shape[0]):
        t = t * math.cos(y[i])
    return s + t + np.sum(y * y)


def index_before_a_prange(x, w):
    # `i` is read before a prange loop that counts with `i` (fuzz 98, 101): the statement's adjoint
    # reads it after the loop's parallel adjoint, which would leave it at an iteration's value; the
    # loop's variable is renamed inside it instead (each iteration has its own)
    i = 1
    s = x[i + 1] * w
    for i in prange(x.shape[0] - 3):
        s += x[i] * x[i] * w
    return s


def whole_row_products(X, w):
    # every iteration adds a whole vector into w_bar: the chunks' rows of w_bar, summed in order
    n = X.shape[0]
    y = np.zeros(n)
    for i in prange(n):
        y[i] = np.sum(np.tanh(X[i] * w))
    return np.sum(y * y)
