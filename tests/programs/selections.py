"""Loops that select one iteration's value (a running minimum or maximum): their reversal stops
once the adjoint has reached the iteration that took the branch last (`ReversePlan.early_exit`),
popping the records of the iterations it skips. Each function has records that are reversed after
the selecting loop, which read the wrong branches if that pop is off by one."""

from __future__ import annotations

import math

import numpy as np


def min_after_branches(x, y):
    # the loop over y records a branch per element before the minimum's loop records its own
    t = 0.0
    for i in range(y.shape[0]):
        if y[i] > 0.0:
            t += y[i] * y[i]
        else:
            t += 3.0 * y[i]
    best = math.inf
    for i in range(x.shape[0]):
        if x[i] < best:
            best = x[i]
    return best * t


def strided_extremes(a, w):
    # two branches per iteration, a start of 1 and a step of 2, inside a loop over rows
    s = 0.0
    for i in range(a.shape[0]):
        lo = a[i, 0]
        hi = a[i, 0] * w
        for c in range(1, a.shape[1], 2):
            if a[i, c] < lo:
                lo = a[i, c]
            if a[i, c] * w > hi:
                hi = a[i, c] * w
        s += lo * hi
    return s


def stepped_maximum(x, step):
    # a step the code does not know: the reversal counts the iterations down
    y = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            y[i] = x[i] * x[i]
        else:
            y[i] = -0.5 * x[i]
    top = -math.inf
    for i in range(0, x.shape[0], step):
        if y[i] > top:
            top = y[i]
    return top


def maximum_until(x, limit):
    # a loop that may break records its trip count; the branches before it record theirs
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            s += math.sin(x[i])
    top = -math.inf
    for i in range(x.shape[0]):
        if x[i] > top:
            top = x[i]
        if x[i] > limit:
            break
    return top * s
