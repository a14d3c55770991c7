"""Issue 38 (what outsiders found): the programs of one area, each a zoo entry (`zoo.py`) that was
silently wrong, crashing or wrongly refused before. The comment above each says what went wrong."""

from __future__ import annotations

import numpy as np
from numba import prange


# finding 5: the prange loop made numba compile the gradient with parallel=True, and its array
# analysis then failed the tape's record of the whole array `u` (`tape[top : top + u.size] =
# u.ravel()`) with a bare `AssertionError: Sizes of tape.1, $350call.33 do not match`
def prange_beside_whole_record(x, b, n):
    s = 0.0
    for i in prange(n):
        s += b
    u = x + 0.0
    for t in range(3):
        u = u + 0.1 * x
    return s + np.sum(u * u)


# finding 3: prange loops that race in the user's own code. numba ran each in parallel as written
# (a different value and gradient on each call with 3+ threads: 47 distinct gradients over 5
# processes for the first), and the generated code kept the racy parallel forward sweep; each now
# runs serially, with a RaceWarning at the statement.
def prange_histogram(x, idx, m):
    # writes `y` at `idx[i]`, which repeats: two iterations add into one element at once
    y = np.zeros(m)
    for i in prange(x.shape[0]):
        y[idx[i]] += x[i] ** 2
    return np.sum(y * y)


def prange_product(x):
    # `p` carried from one iteration to the next (numba's product reduction): the parallel adjoint
    # took `p` as the iteration's own, and the gradient was 0, with and without numba
    p = 1.0
    for i in prange(x.shape[0]):
        p = p * x[i]
    return p


def prange_running_sum(x):
    # `s` accumulated and read in the body: each element a running sum of the earlier iterations
    s = 0.0
    y = np.zeros(x.shape[0])
    for i in prange(x.shape[0]):
        s += x[i]
        y[i] = s
    return np.sum(y * y)


def prange_recurrence(x):
    # `y[i]` reads `y[i - 1]`, another iteration's element
    y = x.copy()
    for i in prange(1, x.shape[0]):
        y[i] = 0.5 * y[i - 1] + x[i]
    return np.sum(y * y)


def prange_last_value(x):
    # `t` of every iteration, read after the loop: numba gave some iteration's value, not the last's
    t = 0.0
    for i in prange(x.shape[0]):
        t = x[i] * x[i]
    return t + x[0]
