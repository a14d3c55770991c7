"""Issue 38 (what outsiders found): the programs of one area, each a zoo entry (`zoo.py`) that was
silently wrong, crashing or wrongly refused before. The comment above each says what went wrong."""

from __future__ import annotations

import numpy as np
from numba import prange

# --- outputs: the caller's array is written, then its name moves on -------------------------------
# Each of these dropped the written argument from the outputs: jvp returned (value, value_dot),
# vjp refused the cotangent (result, x) with "cotangent must be a float, got tuple".


def write_then_rebind(x):
    # x[0] writes the caller's array; `x = ...` then names a new one: the caller's keeps x[0] = 1.0
    x[0] = 1.0
    x = x * 2.0
    return np.sum(x * x)


def swap_then_write(x, a):
    # after the swap, v names the caller's array and x the zeros: v[0] writes the caller's
    v = np.zeros_like(x)
    x, v = v, x
    v[0] = a * v[1] * v[2]
    x[1] = v[0] + a
    return np.sum(x) + np.sum(v * v)


def swap_write_swap_back(x):
    # the caller's array moves to v and back to x, written under both names
    v = np.ones_like(x)
    x, v = v, x
    v[1] = np.sin(v[0]) * v[2]
    x, v = v, x
    x[2] = x[1] * x[0]
    return np.sum(x * v)


def loop_write_then_rebind(x, c):
    # every element written in a loop, then the name rebound after it
    n = x.shape[0]
    for i in range(1, n):
        x[i] = x[i] * x[i - 1] + c
    x = np.tanh(x)
    return np.sum(x)


def _scale_first(u, s):
    u[0] = u[0] * s
    u[1] = u[1] + u[0]


def _scale_twice(u, s):
    _scale_first(u, s)
    _scale_first(u, 0.5 * s)


def helper_writes_then_rebind(x, s):
    # helpers (two levels) write the caller's array through their own parameter; the caller rebinds
    _scale_twice(x, s)
    x = x + 1.0
    return np.sum(np.sin(x))


def prange_write_then_rebind(x):
    # a prange loop writes the caller's array, then the name is rebound
    for i in prange(x.shape[0]):
        x[i] = np.sin(x[i]) * x[i]
    x = x * x
    return np.sum(x)


def rebind_in_both_branches(x, a):
    # written, then rebound on either path of an if: the state before the rebinding is the output
    x[0] = a * x[1]
    if a > 0.0:
        x = x * a
    else:
        x = x - a
    return np.sum(x)


def rebound_in_one_branch(x, a):
    # rebound on one path only: the caller's array keeps its state from before the rebinding, or
    # from the end of the other branch
    x[0] = a * x[2]
    if a > 0.0:
        x = x * a
    return np.sum(x * x)


def returned_on_one_path(x, a):
    # an early return keeps the written array under its name; the other path rebinds it
    x[0] = a * x[1]
    if a > 0.0:
        return np.sum(x)
    x = x * 2.0
    return np.sum(x * x)


def iterated_then_updated(x, w):
    # `for v in x` binds elements (an array's rows, for all normalize knows), then x is written and
    # updated in place, whole and through a mask: x's memory all along, never a second holder
    s = 0.0
    for v in x:
        s += v * v
    x[0] = s
    x *= w
    x[x > 1.5] = 1.5
    return s + np.sum(x * x)


# --- not outputs: no write reaches the caller's array --------------------------------------------


def rebind_then_write(x):
    # the name is rebound before the write: the caller's array is only read
    x = x * 2.0
    x[0] = 1.0
    return np.sum(x * x)


def swap_then_write_other(x):
    # after the swap, x names the zeros: writing x leaves the caller's array alone
    v = np.zeros_like(x)
    x, v = v, x
    x[0] = v[1] * v[2]
    return np.sum(v * v) + np.sum(x)


# --- refused: which name holds the caller's array depends on the run -----------------------------


def swapped_in_a_loop(u, k):
    un = np.zeros_like(u)
    n = u.shape[0]
    for _t in range(3):
        for i in range(1, n - 1):
            un[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u, un = un, u
    return np.sum(u * u)


def swapped_in_one_branch(x, a):
    v = np.zeros_like(x)
    if a > 0.0:
        x, v = v, x
    x[0] = a
    return np.sum(x) + np.sum(v * v)
