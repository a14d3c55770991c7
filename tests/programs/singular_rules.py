"""Custom rules whose partial may be infinite where the value is finite (test_reverse_strong_zero.py)."""

import math

import numpy as np

import sourcead


def root_partials(x):
    return (0.5 / np.sqrt(x),)  # inf at 0 (NumPy's division, as numba's: not an exception)


@sourcead.custom_rule(partials=root_partials, singular=("x",))
def declared_root(x):
    return math.sqrt(x)


@sourcead.custom_rule(partials=root_partials)
def undeclared_root(x):
    return math.sqrt(x)


def declared(a, b):
    return declared_root(a * b) + b


def undeclared(a, b):
    return undeclared_root(a * b) + b
