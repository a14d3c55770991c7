"""Functions for the aliasing tests (test_aliasing.py)."""

import numpy as np


def weighted_dot(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i] * y[i]
    return s


def strided_dot(x, y):
    s = 0.0
    for i in range(y.shape[0]):
        s += x[i] * y[i] * y[i]
    return s


def matrix_weighted(x, M):
    # M is 2-D: called with a reshape of x
    s = 0.0
    for i in range(M.shape[0]):
        for j in range(M.shape[1]):
            s += M[i, j] * x[i * M.shape[1] + j] ** 2
    return s


def scale_into(x, buf):
    # writes into buf (a constant argument), then reads x: aliasing x and buf changes the result
    s = 0.0
    for i in range(x.shape[0]):
        buf[i] = 2.0 * x[i]
    for i in range(x.shape[0]):
        s += buf[i] * x[i]
    return s


def pick(x, c, t):
    # a name that refers to the active or the constant array, depending on a branch
    if t > 0.0:
        y = x
    else:
        y = c
    s = 0.0
    for i in range(y.shape[0]):
        s += y[i] * y[i] * x[i]
    return s


def zeros_like_arg(x):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        y[i] = x[i]
    return y
