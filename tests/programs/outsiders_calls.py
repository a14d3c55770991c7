"""Issue 38 (what outsiders found): the programs of one area, each a zoo entry (`zoo.py`) that was
silently wrong, crashing or wrongly refused before. The comment above each says what went wrong."""

from __future__ import annotations

import math

import numpy as np

import sourcead


# A big-endian index array (`idx.astype(">i8")`) reached numba as it was and failed after the
# compile as "a sourcead limitation or bug"; now it is read in native byte order (zoo).
def gather_squares(x, idx):
    s = 0.0
    for k in range(idx.shape[0]):
        s += x[idx[k]] ** 2 * (k + 1.0)
    return s


# A float32 array that is not differentiated (`w`) was refused, although numba's primal takes
# it; now it is read as float64, exactly (zoo).
def weighted_squares(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        s += w[i] * x[i] * x[i] - 0.5 * w[i] * x[i]
    return s


# --- custom rules whose partials fail, for the error path (test_outsiders_calls.py) -------------
#
# The generated code calls the partials; the user's own function never does. So a failure in
# the partials is one the explaining run (the user's function in Python) does not see.


def interrupted_partials(v):
    # what numba hands back when Ctrl-C arrives during compiled code
    raise SystemError("CPUDispatcher(f_grad) returned a result with an exception set") from KeyboardInterrupt()


RERUNS = []  # each call of `interrupted` from Python adds one: the explaining run calls it


@sourcead.custom_rule(partials=interrupted_partials)
def interrupted(v):
    RERUNS.append(v)
    return math.tanh(v)


def failing_partials(v):
    raise ValueError("the partials fail")


@sourcead.custom_rule(partials=failing_partials)
def failing(v):
    return math.tanh(v)


def rule_then_interrupt(x):
    return interrupted(x[0]) + np.sum(x)


def rule_then_slow(x, n):
    # the count loop is constant: the gradient leaves it out, the explaining run does not
    y = failing(x[0])
    c = 0.0
    for k in range(n):
        c += 1e-9
    return y + c


# --- plain programs for the API's checks (test_outsiders_calls.py) ------------------------------


def matrix_squares(A):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s += A[i, j] * A[i, j] * (i + 1.0)
    return s


def running_product(x):
    p = 1.0
    for i in range(x.shape[0]):
        p = p * x[i]
    return p


def scaled_sum(a, x):
    s = 0.0
    for i in range(x.shape[0]):
        s += a * a * x[i]
    return s


def writes_first(x, a):
    x[0] = a * x[1]
    return np.sum(x * x)


def slow_sines(x, n):
    s = 0.0
    for k in range(n):
        for i in range(x.shape[0]):
            s += math.sin(x[i] * k) * 1e-9
    return s
