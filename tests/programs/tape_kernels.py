"""Kernels whose element writes may need no record, or whose adjoint may read a written value from
its element instead of computing it again (`reverse/elements.py`, `reverse/covers.py`,
`reverse/held.py`): forward substitution, a scratch vector reset and accumulated per pair, and the
edge cases around them (a later nonlinear read of the element, a slice that includes it, one
index written again and again, a `while` loop)."""

import math

import numpy as np


def trisolv(L, x, b):
    """Forward substitution in place: each x[i] reads only x[:i], before i."""
    y = x.copy()
    for i in range(y.shape[0]):
        y[i] = (b[i] - L[i, :i] @ y[:i]) / L[i, i]
    return np.sum(y)


def backsolv(U, x, b):
    """Backward substitution: each y[i] reads only y[i + 1:], after i."""
    y = x.copy()
    n = y.shape[0]
    for k in range(n):
        i = n - 1 - k
        y[i] = (b[i] - U[i, i + 1 :] @ y[i + 1 :]) / U[i, i]
    return np.sum(y)


def trisolv_then_squares(L, x, b):
    """The element written is read later by a nonlinear use (its square, its exp)."""
    y = x.copy()
    for i in range(y.shape[0]):
        y[i] = (b[i] - L[i, :i] @ y[:i]) / L[i, i]
    total = 0.0
    for i in range(y.shape[0]):
        total += y[i] * y[i] + math.exp(0.1 * y[i])
    return total


def overlapping_slice(L, x, b):
    """The adjoint reads y[:i + 1], which includes the element written: its old value is needed."""
    y = x.copy()
    for i in range(y.shape[0]):
        y[i] = math.exp(0.1 * (b[i] - L[i, : i + 1] @ y[: i + 1]))
    return np.sum(y * y)


def same_index(x, w):
    """One element written again and again: every write's adjoint reads the one before it."""
    y = x.copy()
    for k in range(w.shape[0]):
        y[0] = math.sin(w[k] * y[0]) / (1.0 + y[1] * y[1])
    return y[0] * y[1]


def same_index_exp(x, w):
    """One element written again and again from other values: its value is that of its expression."""
    y = x.copy()
    total = 0.0
    for k in range(w.shape[0]):
        y[0] = math.exp(w[k] * y[1])
        total += y[0] * y[0]
    return total


def while_substitution(L, x, b):
    """Forward substitution in a `while` loop."""
    y = x.copy()
    i = 0
    while i < y.shape[0]:
        y[i] = (b[i] - L[i, :i] @ y[:i]) / L[i, i]
        i += 1
    return np.sum(y)


def gmm_scratch(alpha, mu, q, lower, x):
    """A Gaussian mixture's log-likelihood with the Cholesky-factor product in a scratch vector
    `qx`, reset and accumulated for every (point, component): the loop style of a new user."""
    n = x.shape[0]
    d = x.shape[1]
    k = alpha.shape[0]
    qx = np.zeros(d)
    xc = np.zeros(d)
    main = np.zeros(k)
    total = 0.0
    for i in range(n):
        for j in range(k):
            sum_q = 0.0
            for r in range(d):
                xc[r] = x[i, r] - mu[j, r]
                qx[r] = math.exp(q[j, r]) * xc[r]
                sum_q += q[j, r]
            idx = 0
            for c in range(d):
                for r in range(c + 1, d):
                    qx[r] += lower[j, idx] * xc[c]
                    idx += 1
            sq = 0.0
            for r in range(d):
                sq += qx[r] * qx[r]
            main[j] = alpha[j] + sum_q - 0.5 * sq
        top = main[0]
        for j in range(1, k):
            top = max(top, main[j])
        acc = 0.0
        for j in range(k):
            acc += math.exp(main[j] - top)
        total += math.log(acc) + top
    return total


def scratch_read_between(a, w):
    """A scratch vector reset per step and accumulated into, with a nonlinear read between the
    reset and the increments: the increments' old values are read, so they keep their records."""
    s = np.zeros(a.shape[0])
    total = 0.0
    for t in range(w.shape[0]):
        for r in range(a.shape[0]):
            s[r] = a[r] * w[t]
        for r in range(a.shape[0]):
            total += math.sin(s[r])
            s[r] += w[t] * w[t]
        for r in range(a.shape[0]):
            total += s[r] * s[r]
    return total


def scratch_partial_reset(a, w):
    """Only part of the scratch vector is reset: the increments of the rest keep their records."""
    s = np.zeros(a.shape[0])
    total = 0.0
    for t in range(w.shape[0]):
        for r in range(1, a.shape[0]):
            s[r] = a[r] * w[t]
        for r in range(a.shape[0]):
            s[r] += w[t] * a[r]
        for r in range(a.shape[0]):
            total += s[r] * s[r]
    return total


def scratch_reset_in_branch(a, w):
    """The reset happens only on some steps: the increments keep their records."""
    s = np.zeros(a.shape[0])
    total = 0.0
    for t in range(w.shape[0]):
        if w[t] > 0.0:
            for r in range(a.shape[0]):
                s[r] = a[r] * w[t]
        for r in range(a.shape[0]):
            s[r] += w[t] * a[r]
        for r in range(a.shape[0]):
            total += s[r] * s[r]
    return total


def held_then_overwritten(x, w):
    """The element written is overwritten later by a linear statement that records nothing: reading
    the first value from it would need a record, so its adjoint computes the value again."""
    y = x.copy()
    for i in range(y.shape[0]):
        y[i] = math.exp(w[i] * x[i])
    for i in range(y.shape[0]):
        y[i] = 2.0 * y[i] + 1.0
    return np.sum(y * y)


def counted_reads(x, w, stride):
    """A counter never reset, counted up by an integer argument and by 1 in a branch, read as an
    index by a nonlinear statement: its increments are undone, not recorded."""
    n = x.shape[0]
    idx = 0
    total = 0.0
    for t in range(w.shape[0]):
        for i in range(n - 1):
            total += math.sin(w[t] * x[idx % n]) * x[(idx + 1) % n]
            idx += stride
            if x[i] > 0.0:
                idx += 1
    return total


def counted_in_array(x, w):
    """A counter kept in an integer array's element."""
    n = x.shape[0]
    pos = np.zeros(2, dtype=np.int64)
    total = 0.0
    for t in range(w.shape[0]):
        pos[1] = 0
        for i in range(n):
            total += math.cos(w[t] * x[pos[1]]) * x[i]
            pos[1] += 1
            pos[0] += 2
        total += x[pos[0] % n] * w[t]
    return total


def scratch_matrix(a, w):
    """A scratch matrix reset per step by two loops of its own (one counting down), then one
    column accumulated from the other: the increments need no record."""
    n = a.shape[0]
    S = np.zeros((n, 2))
    total = 0.0
    for t in range(w.shape[0]):
        for c in range(2):
            for r in range(n - 1, -1, -1):
                S[r, c] = a[r] * w[t] + c
        for r in range(n):
            S[r, 1] += w[t] * S[r, 0]
        for r in range(n):
            total += math.sin(S[r, 1]) * S[r, 0]
    return total


def parameter_assigned(x, a):
    """A parameter assigned once: two values (the one passed, the one assigned), so its assignment
    records the old one, which its own adjoint reads."""
    a /= 2.0 + math.cos(x[0])
    return a * a + x[1]


def index_parameter_assigned(x, k):
    """An integer parameter assigned once, an index before and after: `y[k + 1]` read with the
    value passed is the element `y[k]` written with the value assigned."""
    y = x.copy()
    s = math.sin(y[k + 1])
    k = k + 1
    y[k] = 2.0 * x[0]
    return s + np.sum(y * y)
