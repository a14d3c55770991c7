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
