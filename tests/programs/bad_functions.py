"""Functions outside the supported subset; test_errors.py checks the errors point at them.

Each `# error:` comment marks the line the error must name.
"""

import numpy as np
from numba import prange

SCALE = 2.0
TABLE = np.ones(3, dtype=np.float32)  # numbers and float64/int64/bool arrays can be read; not this


def uses_try(x):
    try:  # error: try
        y = 2.0 * x
    except ValueError:
        y = x
    return y


def uses_is(x, y):
    if x is y:  # error: is
        return x
    return y


def uses_list_comprehension(x):
    s = sum([v * v for v in x])  # error: comprehension
    return s


def uses_unknown_function(x):
    return np.fft.fft(x)  # error: unknown function


def falls_through(x):
    if x > 0.0:  # error: every path
        return x


def reads_global_array(x):
    return x * TABLE[0]  # error: global array


def uses_keepdims(x):
    y = np.sum(x, keepdims=True)  # error: keepdims
    return y[0]


def uses_lambda(x):
    f = lambda v: v * 2.0  # error: lambda  # noqa: E731
    return f(x)


def float_index(x):
    t = 0.5 * x.shape[0]
    return x[t]  # error: float index


def returns_array(x):
    y = x.copy()
    return y


def reads_frozen_global(x):
    return SCALE * x


def loop_sum(x, n):
    s = 0.0
    for i in range(n):
        s += x[i]
    return s


def recursive(x, n):
    if n == 0:
        return x
    return 2.0 * recursive(x, n - 1)  # error: recursion


def norm_with_ord(x):
    return np.linalg.norm(x, 3)  # error: ord


def max_over_axis(X):
    return np.sum(np.cumsum(X, 1, np.float64))  # error: axis


def transposed_view_written(B, v):
    # B.T is a view: the write to B shows through T, which reverse mode would not follow
    T = B.T  # error: view
    B[0, 1] = v * 2.0
    return T[1, 0] * v


def constant_view_written(x, n):
    # `a` holds no derivative, but the reverse sweep reads it (`t`'s adjoint); the write through
    # the view `v` changes it after the loop, which reverse mode would not see
    a = np.ones(n)
    s = 0.0
    for i in range(n):
        t = a[i] * x
        s += t * t
    v = a[1:]  # error: view
    v[0] = 5.0
    return s + a[1] * x


def abs_of_array(x):
    return np.sum(abs(x)) + x[0]  # error: abs of an array


def prange_index_after_loop(x):
    s = 0.0
    for i in prange(x.shape[0]):  # error: after
        s += x[i] * x[i]
    return s * x[i]


def _noted(func):
    return func


class Methods:
    # parsed where they stand: an indented def is read under an `if 1:`, not dedented
    @staticmethod
    def indented_try(x):
        note = """
a string whose lines start at column 0"""
        try:  # error: indented try
            return x * 2.0
        finally:
            note = note + ""


def make_nested():
    @_noted
    def nested_try(x):
        try:  # error: nested try
            return x * 2.0
        finally:
            pass

    return nested_try


nested_try = make_nested()
