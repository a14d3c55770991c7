"""Functions with custom rules (test_custom_rules.py)."""

import math

import numba

import sourcead


def softplus_partials(x):
    return (1.0 / (1.0 + math.exp(-x)),)


@sourcead.custom_rule(partials=softplus_partials)
def softplus(x):
    # a numerically stable form whose branches a user would rather not differentiate
    if x > 30.0:
        return x
    return math.log1p(math.exp(x))


def hypot_partials(a, b):
    r = math.sqrt(a * a + b * b)
    return (a / r, b / r)


@sourcead.custom_rule(partials=hypot_partials)
@numba.njit
def norm2(a, b):
    return math.sqrt(a * a + b * b)


def straight_through_partials(x):
    return (1.0,)


@sourcead.custom_rule(partials=straight_through_partials)
def round_ste(x):
    # rounds, but passes gradients straight through (a deliberate surrogate derivative)
    return float(round(x))


def uses_custom(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += softplus(x[i]) * norm2(x[i], y)
    return s


def quantized(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += round_ste(3.0 * x[i]) * x[i]
    return s
