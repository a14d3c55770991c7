"""Adjoints that read the value of `x = e` from `x` instead of computing e again
(`ReversePlan.held`): taken where a later assignment of the same block reads `x` in its adjoint
with nothing between that could skip it or change `x`, refused elsewhere; each case checked
against finite differences, compiled and in Python, and by which code it generates.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from numba import prange
from numeric import assert_gradient_matches

import sourcead


def plain(x):
    y = math.exp(x)  # held: the adjoint of `r = y * x` keeps y
    r = y * x
    return r


def recorded(a):
    s = 0.0
    for i in range(a.shape[0]):
        e = math.exp(a[i] * 0.5)  # overwritten every iteration: recorded, read before its restore
        s += e * e
    return s


def quotient(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        q = a[i] / (b[i] * b[i] + 1.0)
        s += q * a[i]
    return s


def in_prange(a):
    out = np.zeros(a.shape[0])
    for i in prange(a.shape[0]):
        t = math.tanh(a[i])
        out[i] = t * a[i]
    return np.sum(out)


def loop_between(x, n):
    y = math.exp(x)
    z = 0.0
    for _k in range(n):
        z += x * 0.5
    r = y * x + z  # a loop stands between, and y is assigned again below: not held
    y = r * r
    return y


def loop_between_once(x, n):
    y = math.exp(x)
    z = 0.0
    for _k in range(n):
        z += x * 0.5
    r = y * x + z  # a loop stands between, but y is written only once, in no loop: held
    return r


def reassigned(x):
    y = math.sqrt(x)
    y = y * x  # assigns y again before anything reads it: not held
    return y


def overwritten(x):
    y = math.exp(x)
    r = y + 1.0  # its adjoint does not read y
    y = 2.0  # nothing keeps the exp: its adjoint computes it (the only exp: the forward sweep drops it)
    return r * y


def branch_between(x):
    y = math.tanh(x)
    w = 0.0
    if x > 0.0:
        w = x * x
    r = y * x + w  # a branch stands between, and y is assigned again below: not held
    y = r * r
    return y


def branch_between_once(x):
    y = math.tanh(x)
    w = 0.0
    if x > 0.0:
        w = x * x
    r = y * x + w  # a branch stands between, but y is written only once, in no loop: held
    return r


def layer(W, x, b, v):
    h = np.tanh(W @ x + b)  # a whole array, held: the adjoint of `r = np.dot(v, h)` keeps h
    r = np.dot(v, h)
    return r


def layers(W, x, v):
    h = x
    for _k in range(3):
        h = np.tanh(W @ h)  # recorded every step and restored at its adjoint: computed again
    return np.dot(v, h)


def array_written_between(x, v):
    e = np.exp(x)
    e[0] = 1.0  # written between: not held (the adjoint of e = np.exp(x) needs the exp)
    r = np.dot(v, e)
    return r


_CASES = {
    "plain": (plain, ("x",), lambda rng: (0.7,), "math.exp(", 1),
    "recorded": (recorded, ("a",), lambda rng: (rng.standard_normal(7),), "math.exp(", 1),
    "quotient": (quotient, ("a", "b"), lambda rng: (rng.standard_normal(6), rng.standard_normal(6)), " / (", 1),
    "in_prange": (in_prange, ("a",), lambda rng: (rng.standard_normal(9),), "math.tanh(", None),
    "loop_between": (loop_between, ("x",), lambda rng: (0.3, 4), "math.exp(", 2),
    "loop_between_once": (loop_between_once, ("x",), lambda rng: (0.3, 4), "math.exp(", 1),
    "reassigned": (reassigned, ("x",), lambda rng: (1.3,), "math.sqrt(", 2),
    "overwritten": (overwritten, ("x",), lambda rng: (0.9,), "math.exp(", 1),
    "branch_between": (branch_between, ("x",), lambda rng: (0.4,), "math.tanh(", 2),
    "branch_between_once": (branch_between_once, ("x",), lambda rng: (0.4,), "math.tanh(", 1),
    "layer": (layer, ("W", "x", "b"), lambda rng: _layer_args(rng, 3), "np.tanh(", 1),
    "layers": (layers, ("W", "x"), lambda rng: _layer_args(rng, 4)[:2] + (rng.standard_normal(4),), "np.tanh(", 2),
    "array_written_between": (
        array_written_between,
        ("x",),
        lambda rng: (rng.standard_normal(5), rng.standard_normal(5)),
        "np.exp(",
        2,
    ),
}


def _layer_args(rng, rows):
    """W (rows x 4), x (4,), b, v (rows,)."""
    return (0.5 * rng.standard_normal((rows, 4)), rng.standard_normal(4), rng.standard_normal(rows),
            rng.standard_normal(rows))  # fmt: skip


@functools.cache
def _grad(name: str, jit: bool):
    f, wrt, _, _, _ = _CASES[name]
    return sourcead.grad(f, wrt=wrt, jit=jit)


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("name", sorted(_CASES))
def test_matches_finite_differences(name, jit):
    f, wrt, make, _, _ = _CASES[name]
    args = make(np.random.default_rng(3))
    assert_gradient_matches(f, args, wrt, _grad(name, jit)(*args))


@pytest.mark.parametrize("name", sorted(_CASES))
def test_the_value_is_computed_again_only_where_not_held(name):
    """The gradient code computes e once (in the forward sweep) where it is held, twice where not
    (or once, in the reverse sweep, where the forward sweep need not)."""
    _, _, make, call, count = _CASES[name]
    g = _grad(name, False)
    g(*make(np.random.default_rng(3)))  # whole-array code: generated for the arguments' kinds
    source = g.source
    code = "\n".join(line.split("#")[0] for line in source.splitlines())  # comments quote the primal
    if count is not None:
        assert code.count(call) == count, source


def test_a_recorded_value_is_read_before_its_restore():
    source = _grad("recorded", False).source
    taken = source.index("= e  # its value, before the old one is restored")
    assert taken < source.index("e = tape[")
