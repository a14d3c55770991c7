"""Element writes with and without records (`elements.py`), checked in tests/test_element_records.py."""

from __future__ import annotations

import math

import numpy as np


def shifted_read(x):
    # reads y[i + 1] before iteration i + 1 writes it: the write must record
    y = x.copy()
    s = 0.0
    for i in range(y.shape[0] - 1):
        s += y[i + 1] * y[i + 1]
        y[i] = math.sin(y[i]) * 2.0
    return s + np.sum(y * y)


def wrapped_read(x):
    # y[i - 1] at i = 0 is y[-1], the last element, which the last iteration writes: must record
    y = x.copy()
    s = 0.0
    for i in range(y.shape[0]):
        s += y[i - 1] * y[i - 1]
        y[i] = y[i] * 0.5 + 1.0
    return s + np.sum(y * y)


def backward_sweep(x):
    # a loop running down, reading the element the iteration before wrote: no record needed
    y = x.copy()
    for i in range(y.shape[0] - 2, -1, -1):
        y[i] = y[i] + math.sin(y[i + 1])
    return np.sum(y * y)


def strided_own_read(x):
    # odd elements from even ones, step 2; the partial in y[i] reads the old y[i + 1]: must record
    y = x.copy()
    for i in range(0, y.shape[0] - 1, 2):
        y[i + 1] = y[i + 1] * math.sin(y[i])
    return np.sum(y * y)


def strided_linear(x):
    # odd elements from even ones, linear in the old odd one: no record needed
    y = x.copy()
    for i in range(0, y.shape[0] - 1, 2):
        y[i + 1] = y[i + 1] + math.sin(y[i])
    return np.sum(y * y)


def time_steps(x, steps):
    # each step's reads of y[0] and y[1] come before the next step's writes: must record
    y = x.copy()
    acc = 0.0
    t = 0
    while t < steps:
        for i in range(y.shape[0]):
            y[i] = y[i] * 0.9 + 0.1
        acc += y[0] * y[1]
        t += 1
    return acc + np.sum(y * y)


def rows_then_elements(X):
    # rows written, elements read by the adjoints: indices of another rank, kept whole
    Y = X.copy()
    s = 0.0
    for i in range(Y.shape[0]):
        s += Y[i, 0] * Y[i, 1]
    for i in range(Y.shape[0] - 1):
        Y[i + 1] = np.sin(Y[i])
    return s + np.sum(Y * Y)


def triangular_updates(A):
    # forward elimination without pivoting: step k reads row k and column k, writes after both
    U = A.copy()
    total = 0.0
    for k in range(U.shape[0]):
        total += U[k, k] * U[k, k]
        for i in range(k + 1, U.shape[0]):
            f = U[i, k] / U[k, k]
            for j in range(k + 1, U.shape[0]):
                U[i, j] = U[i, j] - f * U[k, j]
    return total
