"""prange loops with indices no argument shape bounds, which the call probes (`contract_probe.py`):
test_contract_probes.py. Each is also right for the bounds-checked variant, which runs where a
probe fails.
"""

import numpy as np
from numba import prange


def gather_shifted(x, idx):
    # the neighbours of picked elements: idx[k] - 1 and idx[k] + 1 are not in the contract's terms
    s = 0.0
    for k in prange(idx.shape[0]):
        s += x[idx[k] - 1] * x[idx[k] + 1]
    return s


def gather_rows(X, obs):
    # bundle adjustment's pattern, a row offset from the one observed
    s = 0.0
    for k in prange(obs.shape[0]):
        c = obs[k, 0]
        p = c + obs[k, 1]
        r = X[p, 0] * X[c, 1] - 1.0
        s += r * r
    return s


def scatter_shifted(x, idx, m):
    # written at an index from data (a serial loop: two k may share an element)
    y = np.zeros(m)
    for k in range(idx.shape[0]):
        y[idx[k] + 1] += x[k] * x[k]
    s = 0.0
    for j in prange(m):
        s += y[j] * y[j]
    return s


def guarded_gather(x, idx):
    # the index is in range only where it is read: the probe asks more, the checked variant runs
    s = 0.0
    for k in prange(idx.shape[0]):
        if idx[k] < x.shape[0]:
            s += x[idx[k]] * x[idx[k] % 3]
    return s


def squares(x, w):
    n = x.shape[0]
    out = np.zeros(n)
    for i in prange(n):
        j = i * i
        out[i] = x[i] * w[j]
    return np.sum(out * out)


def ring_modulo(x, idx, w):
    # `% n` for a size n, not a constant: in range where n > 0
    n = w.shape[0]
    s = 0.0
    for k in prange(idx.shape[0]):
        s += x[k] * w[(idx[k] * 7 + 3) % n]
    return s


def cubes(x, w):
    # for the warning, compiled by one test only (a process warns once per variant)
    n = x.shape[0]
    out = np.zeros(n)
    for i in prange(n):
        j = i * i * i
        out[i] = x[i] * w[j]
    return np.sum(out * out)


def csr_quadratic(values, x, indptr, indices):
    # a sparse matrix in CSR form: each row's range of entries is read from indptr
    s = 0.0
    for i in prange(indptr.shape[0] - 1):
        r = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            r += values[p] * x[indices[p]]
        s += r * r
    return s


def picked_rows(cams, X, obs):
    # bundle adjustment with row views: `cam` has the shape of a row of cams, whichever row
    total = 0.0
    for i in prange(obs.shape[0]):
        cam = cams[obs[i, 0]]
        p = X[obs[i, 1]]
        r = cam[0] * p[0] + cam[1] * p[1] - cam[2] * np.sum(p * p)
        total += r * r
    return total


def gather_whole(x, idx, w):
    # a gather `x[idx]` at an int argument, in every iteration of a prange
    out = np.zeros(w.shape[0])
    for i in prange(w.shape[0]):
        out[i] = np.sum(x[idx] * w[i])
    return np.sum(out * out)


def csr_gather(values, x, indptr, indices):
    # NPBench's spmv in a prange: a row's columns, a slice of an int argument, gathered from x
    y = np.empty(indptr.shape[0] - 1)
    for i in prange(indptr.shape[0] - 1):
        cols = indices[indptr[i] : indptr[i + 1]]
        vals = values[indptr[i] : indptr[i + 1]]
        y[i] = vals @ x[cols]
    return np.sum(y * y)
