"""Helpers in another module than their caller (see zoo.calls_across_modules)."""

import math

import numba

SCALE = 0.5


@numba.njit
def softclip(v):
    # a numba-compiled helper: sourcead reads its Python source
    if v > 1.0:
        return 1.0 + math.log(v)
    return v


def weighted(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        s += w * SCALE * softclip(x[i])
    return s


def fill_scaled(out, x, c):
    # writes into `out` and returns nothing: called for its writes
    for i in range(x.shape[0]):
        out[i] = c * x[i]
