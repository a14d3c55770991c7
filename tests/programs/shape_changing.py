"""Arrays rebound in a loop with a new shape each iteration (NPBench's durbin writes them)."""

import numpy as np


def growing_prefix(r):
    n = r.shape[0]
    s = 0.0
    for k in range(1, n):
        t = np.sin(r[:k]) * 2.0
        s += np.sum(t * t)
    return s


def shrinking_suffix(r):
    n = r.shape[0]
    s = 0.0
    for k in range(n - 1):
        t = r[k:] * r[k]
        s += np.sum(t * t) + t[0]
    return s


# the same where only linear code reads `t`: nothing records it, and its adjoint's zero after each
# iteration's adjoint took the later `t`'s shape (`unbroadcast` then summed the earlier `t`'s
# adjoint into `r`'s: a silently wrong gradient where the shapes broadcast, a crash elsewhere)


def growing_prefix_linear(r):
    n = r.shape[0]
    s = 0.0
    for k in range(1, n, 2):
        t = r[:k] + r[-1:]
        s += np.sum(t)
    return s


def shrinking_suffix_linear(r):
    n = r.shape[0]
    s = 0.0
    for k in range(n - 1):
        t = 3.0 * r[k:]
        s += np.sum(t) + t[0]
    return s


def rebound_argument(r):  # an argument bound again with another shape, read linearly after
    s = np.sum(r)
    r = r[1:] - r[:-1]
    return s + np.sum(2.0 * r)
