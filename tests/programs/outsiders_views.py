"""Issue 38 (what outsiders found): the programs of one area, each a zoo entry (`zoo.py`) that was
silently wrong, crashing or wrongly refused before. The comment above each says what went wrong."""

from __future__ import annotations

import numpy as np
from numba import prange

# --- 6: a helper's fresh array, named by the caller, then written ------------------------------
# Refused in reverse mode as "`y = result` makes two names for one array", naming the helper's
# result (`result`, `result0_1`, `h4_v`), a variable the user never wrote: the helper's array is
# a new one, so `y` is its only name.


def _doubled(u):
    return u * 2.0


def _pair(u):
    return u * 2.0, np.sin(u)


def _doubled_twice(u):
    return _doubled(u)


def _shifted(u):
    v = _doubled(u) + 1.0
    return v


def helper_fresh_then_written(x):
    y = _doubled(x)
    y[0] = 0.0
    return np.sum(y * y)


def helper_pair_then_written(x):
    a, b = _pair(x)
    a[0] = b[1]
    b[1] = 3.0
    return np.sum(a * b)


def helpers_two_levels_then_written(x):
    y = _doubled_twice(x)
    z = _shifted(x)
    y[1] = z[0] * 2.0
    z[0] = 1.0
    return np.sum(y * z)


def helper_fresh_in_loop_then_written(x):
    s = 0.0
    for i in range(3):
        y = _doubled(x * (i + 1.0))
        y[i] = 0.5 * y[i + 1]
        s += np.sum(np.sin(y))
    return s


# --- 7: rows a loop reads, their array written once they are no longer read --------------------
# Refused as "`row` is a view of `B`", positioned at the `def` line and naming an index `k` the
# user never wrote. The loop only reads `row`, and `B` is written after it: accepted (the
# reverse sweep keeps each row as read).


def rows_read_then_written(A):
    B = A * 1.0
    s = 0.0
    for row in B:
        s += np.sum(np.sin(row))
    B[0, 0] = 1.0
    return s + np.sum(B * B)


def enumerated_rows_then_written(A):
    B = np.cos(A)
    s = 0.0
    for i, row in enumerate(B):
        s += np.sum(np.sin(row)) * (i + 1.0) + row[0] * row[1]
    B[1, 0] = B[0, 1] * 2.0
    return s + np.sum(np.cos(B))


def zipped_rows_then_written(P, Q):
    A = P * 1.0
    B = Q + 0.5
    s = 0.0
    for a, b in zip(A, B):  # noqa: B905 (numba takes no strict=)
        s += np.sum(a * np.sin(b))
    A[0, 0] = 2.0 * B[0, 0]
    B[1, 1] = 0.5
    return s + np.sum(A * A) + np.sum(np.sin(B))


def rows_read_in_time_loop_then_written(A):
    # B's last row, written between the time steps, is the row the next step's loop reads first:
    # the view kept as read, not as written
    B = A * 1.0
    s = 0.0
    for t in range(3):
        for row in B:
            s += np.sum(np.sin(row))
        B[3, t] = s * 0.5
    return s + np.sum(B * B)


def helper_rows_in_loop_then_written(A):
    B = _doubled(A)
    s = 0.0
    for row in B:
        s += np.sum(_doubled(row) * row)
    B[2, :] = np.tanh(B[1, :])
    return s + np.sum(B)


def rows_written_once_read(A):
    # B written inside the loop, each row after its last read (and the next row before its read)
    B = A * 1.0
    s = 0.0
    for i, row in enumerate(B):
        s += np.sum(np.sin(row))
        B[i, 0] = s
        if i + 1 < len(B):
            B[i + 1, 1] = 0.5 * s
    return s + np.sum(B * B)


def prange_rows_then_written(A):
    B = A * 0.5
    n = B.shape[0]
    out = np.zeros(n)
    for i in prange(n):
        row = B[i]
        out[i] = np.sum(np.sin(row) * row)
    B[0, 0] = 1.0
    return np.sum(out) + np.sum(B * B)


# fuzz seed 0, program 2556: a helper's parameter bound to a view it never reads, then its array
# written before a swap; liveness took the swap for a read of every name, so the view looked read
# and the refusal named `scale_add0_B`, a name of sourcead's
def _first(x, B):
    return x * 2.0


def view_argument_dead_before_a_swap(A0, a):
    A = A0.copy()
    p = _first(a, A[:, 2])
    q = a * a
    A[2, 2] = p
    p, q = q, p
    return p * q + np.sum(A * A)
