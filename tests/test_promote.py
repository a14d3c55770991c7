"""Accumulations every iteration of a reversed loop makes into one element, summed in a local
first (`sourcead/promote.py`): taken where the loop only adds into that array, refused where it
reads or resets it; each case checked against finite differences, compiled and in Python.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from numeric import assert_gradient_matches

import sourcead


def pairs(p, m):
    # as the n-body step: p_bar[i] gets a contribution from every j
    s = 0.0
    for i in range(p.shape[0]):
        for j in range(p.shape[0]):
            d = p[j] - p[i]
            s += m[j] / math.sqrt(d * d + 0.1)
    return s


def in_branch(x, w):
    # the element added into only where a branch is taken
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(w.shape[0]):
            t = x[i] * w[j]
            if w[j] > 0.0:
                s += t * t
            else:
                s += 0.5 * t
    return s


def cross_update(y, w):
    # z[j] = z[j] + 0.1 * z[i] * w[j]: the adjoint adds into z_bar[i] (invariant in j) but also
    # reads z_bar[j], which is z_bar[i] when j == i: not promoted
    z = y.copy()
    for i in range(z.shape[0]):
        for j in range(z.shape[0]):
            z[j] = z[j] + 0.1 * z[i] * w[j]
    s = 0.0
    for i in range(z.shape[0]):
        s += z[i] * z[i]
    return s


def row_read(a, x):
    # the loop reads a_bar nowhere but adds into a_bar[i, 0] (invariant) and a_bar[i, j]
    s = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            s += a[i, 0] * a[i, j] * x[j]
    return s


_CASES = {
    "pairs": (pairs, ("p",), lambda rng: (rng.standard_normal(6), 1.0 + rng.random(6)), True),
    "in_branch": (in_branch, ("x",), lambda rng: (rng.standard_normal(4), rng.standard_normal(5)), True),
    "cross_update": (cross_update, ("y", "w"), lambda rng: (rng.standard_normal(4), rng.standard_normal(4)), False),
    "row_read": (row_read, ("a", "x"), lambda rng: (rng.standard_normal((3, 4)), rng.standard_normal(4)), True),
}


@functools.cache
def _grad(name: str, jit: bool):
    f, wrt, _, _ = _CASES[name]
    return sourcead.grad(f, wrt=wrt, jit=jit)


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("name", sorted(_CASES))
def test_matches_finite_differences(name, jit):
    f, wrt, make, _ = _CASES[name]
    args = make(np.random.default_rng(5))
    assert_gradient_matches(f, args, wrt, _grad(name, jit)(*args))


@pytest.mark.parametrize("name", sorted(_CASES))
def test_promoted_where_the_loop_only_adds(name):
    promoted = _CASES[name][3]
    assert ("what every iteration adds into" in _grad(name, False).source) == promoted


def test_an_empty_inner_loop_adds_nothing():
    """Zero trips: the element after the loop is not touched (its index may not exist then)."""
    args = (np.array([0.3]), np.array([1.5]))
    g = _grad("pairs", True)
    assert_gradient_matches(pairs, args, ("p",), g(*args))
    empty = (np.zeros(0), np.zeros(0))
    assert g(*empty)[0].shape == (0,)
