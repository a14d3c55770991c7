"""Values the reverse sweep reads instead of computing again: a factorisation nested in a larger
expression gets a temporary of its own (`Primitive.kept`, normalize), and an assignment that is the
only write of its variable, in no loop, holds its value at its adjoint (`reverse/adjoint.py`).
Where it applies, the generated code factorises once and records nothing; where it must not (a
parameter rebound, a loop), it stays right. Each against central differences, python and numba,
and forward against reverse."""

from __future__ import annotations

import numpy as np
import pytest
from numeric import assert_close, assert_gradient_matches, vdot
from sources import function_from_source

import sourcead

_SOURCE = """
def factor_and_triangle(A):
    A_out = A.copy()
    A_out[:] = np.linalg.cholesky(A_out) + np.triu(A_out, k=1)
    return np.sum(np.sin(A_out))


def factor_read_later(A, B):
    L = np.linalg.cholesky(A)
    C = L + B
    return np.sum(C * C)


def factor_in_loop(A, w, n):
    s = 0.0
    for k in range(n):
        s += np.sum(np.linalg.cholesky(A * (1.0 + 0.1 * k)) * w)
    return s


def parameter_rebound(x, a):
    y = x * x
    x = math.tanh(a * y)
    return y + x * a


def quotient_kept(x, y):
    q = x / (1.0 + y * y)
    r = q * q + q
    return np.sum(r)
"""

_RNG = np.random.default_rng(5)
_N = 6
_M = _RNG.standard_normal((_N, _N))
_SPD = _M @ _M.T + _N * np.eye(_N)

CASES = {
    "factor_and_triangle": ((_SPD,), ("A",)),
    "factor_read_later": ((_SPD, _RNG.standard_normal((_N, _N))), ("A", "B")),
    "factor_in_loop": ((_SPD, _RNG.standard_normal((_N, _N)), 3), ("A", "w")),
    "parameter_rebound": ((0.7, 0.4), ("x", "a")),
    "quotient_kept": ((_RNG.standard_normal(5), _RNG.standard_normal(5)), ("x", "y")),
}


@pytest.fixture(scope="module")
def functions(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kept_values")
    return {name: function_from_source(folder, _SOURCE, name) for name in CASES}


def _copies(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("name", list(CASES))
def test_gradients_match_central_differences(functions, name, jit):
    args, wrt = CASES[name]
    got = sourcead.grad(functions[name], wrt=wrt, jit=jit)(*_copies(args))
    assert_gradient_matches(functions[name], args, wrt, got, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", list(CASES))
def test_forward_agrees_with_reverse(functions, name):
    args, wrt = CASES[name]
    f = functions[name]
    params = list(CASES[name][1])
    positions = [f.__code__.co_varnames.index(p) for p in params]
    tangents = tuple(_RNG.standard_normal(np.shape(args[p])) if np.ndim(args[p]) else 0.3 for p in positions)
    _, jv = sourcead.jvp(f, wrt=wrt, jit=False)(*_copies(args), tangents=tangents)
    _, pulled = sourcead.vjp(f, wrt=wrt, jit=False)(*_copies(args), cotangent=0.7)
    pulled = pulled if isinstance(pulled, tuple) else (pulled,)
    assert_close(vdot(pulled, tangents), 0.7 * jv, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["factor_and_triangle", "factor_read_later"])
def test_a_factor_is_computed_once_and_not_recorded(functions, name):
    args, wrt = CASES[name]
    gradient = sourcead.grad(functions[name], wrt=wrt, jit=False)
    gradient(*_copies(args))
    source = gradient.source
    code = [line for line in source.splitlines() if not line.lstrip().startswith("#")]
    assert sum(line.count("np.linalg.cholesky(") for line in code) == 1, source
    assert "record_flat" not in source and "tape" not in source, source
