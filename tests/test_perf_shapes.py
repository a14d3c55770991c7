"""What the generated code does beyond its primal (issue 40, items 4 and 5), pinned and checked.

- A dot product of two vectors in a loop (trisolv, cholesky, lu as NPBench writes them) is adjoined
  in place (`add_product`), with no array allocated per element, and a matrix-vector product's
  adjoint is added into the matrix's in place (`add_outer`), two of them in one pass and into a
  zero adjoint as a new array (`outers_of`: atax, bicg, mvt), where `np.sum` of the
  product takes its shape from the operands (`matmul_like`), not from the product computed again:
  golden files pin the code, central differences and the dot-product test its numbers, with and
  without numba.
- Nothing is computed only for its shape: an adjoint's zero, `unbroadcast` and `np.full_like` read
  the operands' shapes (`matmul_like`, `broadcast_like`), so atax, bicg, gesummv and mvt have empty
  forward sweeps, heat_3d records nothing, and a time step `x = x - dt * g + ...` with x bound
  again each step does not compute `x - dt * g` again in the reverse sweep.
- An index the call contract bounds only by a sufficient fact (`w[k % 8]` in a prange loop) keeps
  the gradient parallel and unchecked where the arguments meet the fact, and runs the
  bounds-checked variant where they do not; an index it cannot bound (`w[i * i]`) is named, with
  its line, in one `BoundsWarning`.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import perf_kernels as pk
import pytest
from goldens import GOLDEN, check_golden
from numeric import assert_close, assert_gradient_matches, norm, vdot

import sourcead
from sourcead.errors import BoundsWarning, ShapeError
from sourcead.pipeline.driver import generate

RNG = np.random.default_rng(40)
N = 6
_M = RNG.standard_normal((N, N))
SPD = _M @ _M.T + N * np.eye(N)  # cholesky and lu need no pivoting
LOWER = np.tril(RNG.standard_normal((N, N))) + 3.0 * np.eye(N)
RHS = RNG.standard_normal(N)

CASES = {
    "atax": (pk.atax, (RNG.standard_normal((N, N - 1)), RNG.standard_normal(N - 1)), ("A", "x")),
    "bicg": (pk.bicg, (RNG.standard_normal((N, N - 1)), RNG.standard_normal(N - 1), RHS), ("A", "p", "r")),
    "jacobi_1d": (pk.jacobi_1d, (5, RNG.standard_normal(N), RNG.standard_normal(N)), ("A0", "B0")),
    "trisolv": (pk.trisolv, (LOWER, RHS), ("L", "b")),
    "gesummv": (pk.gesummv, (1.5, 1.2, _M, SPD, RHS), ("A", "B", "x")),
    "mvt": (pk.mvt, (RHS, RHS + 1.0, RHS * 0.5, RHS - 1.0, _M), ("x1", "x2", "y_1", "y_2", "A")),
    "heat_3d": (pk.heat_3d, (3, RNG.standard_normal((4, 4, 4)), RNG.standard_normal((4, 4, 4))), ("A0", "B0")),
    "time_steps": (pk.time_steps, (RHS, RHS * 0.3, RHS + 0.5, 0.1, 3), ("x0", "y")),
    "cholesky": (pk.cholesky, (SPD,), ("A0",)),
    "lu": (pk.lu, (SPD,), ("A0",)),
}


def _copy(a):
    return a.copy() if isinstance(a, np.ndarray) else a


def _golden(name: str, text: str, update: bool) -> None:
    check_golden(GOLDEN / f"perf_{name}.py", text, update, name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_products_of_vectors_are_adjoined_in_place(name, update_golden):
    func, args, wrt = CASES[name]
    kinds = {p: _kind(a) for p, a in zip(func.__code__.co_varnames, args, strict=False)}
    text = generate(func, "gradient", wrt, kinds).source
    _golden(f"{name}.gradient", text, update_golden)
    forward_sweep, _, reverse_sweep = (_code(part) for part in text.partition("# reverse sweep"))
    forward_sweep = forward_sweep.partition("# forward sweep")[2]
    text = _code(text)
    if name in ("jacobi_1d", "heat_3d"):  # linear: its adjoint reads no state, so nothing is recorded
        assert "tape" not in text and "unbroadcast(" in text and "A[" not in reverse_sweep
        assert "B[" not in reverse_sweep  # nor is a sum of slices computed again for its shape
    elif name in ("atax", "bicg"):  # no outer product allocated, nor the product under np.sum computed
        # the two rank-1 updates written in one pass into a new A_bar: no zeros, no second pass
        assert text.count("outers_of(A, ") == 1 and "add_outer" not in text and "zeros_like(A)" not in text
        assert "A_bar +=" not in text
        assert "t0 @ A" not in text and "r @ A" not in text and "A @ p" not in text
        assert "@" not in forward_sweep  # nor computed in the forward sweep for its adjoint's shape
    elif name in ("gesummv", "mvt"):  # nothing computed in the forward sweep for a shape
        assert "@" not in forward_sweep and "matmul_like(" in text
        assert "zeros_like(A)" not in text and "A_bar +=" not in text  # A_bar written once, in one pass
        # gesummv's `alpha * A @ x`: alpha scales the seed, not a copy of A nor an outer product
        assert "alpha * A" not in text and "beta * B" not in text
    elif name == "time_steps":  # `x - dt * g`: the shape of its operands, not the difference again
        assert "broadcast_like(x, g)" in reverse_sweep and " - dt * g" not in reverse_sweep
    else:  # no array allocated per element of the loops
        assert "add_product" in text and "matmul_bar" not in text and "chosen(" not in text


def _kind(a) -> str:
    return f"array:{a.ndim}" if isinstance(a, np.ndarray) else "float" if isinstance(a, float) else "int"


def _code(text: str) -> str:
    """The code, not its comments."""
    return "\n".join(line.partition("#")[0] for line in text.splitlines())


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_row_dot_products_gradient_matches_finite_differences(name, jit):
    func, args, wrt = CASES[name]
    got = sourcead.grad(func, wrt=wrt, jit=jit)(*(_copy(a) for a in args))
    assert_gradient_matches(func, args, wrt, got, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(CASES))
def test_row_dot_products_forward_and_reverse_agree(name):
    func, args, wrt = CASES[name]
    params = func.__code__.co_varnames
    tangents = tuple(RNG.standard_normal(a.shape) for p, a in zip(params, args, strict=False) if p in wrt)
    _, jv = sourcead.jvp(func, wrt=wrt)(*(_copy(a) for a in args), tangents=tangents)
    _, jtw = sourcead.vjp(func, wrt=wrt)(*(_copy(a) for a in args), cotangent=0.7)
    jtw = jtw if isinstance(jtw, tuple) else (jtw,)
    expected = 0.7 * jv
    assert_close(vdot(jtw, tangents), expected, rtol=1e-10, atol=1e-12 * norm(jtw) * norm(tangents))


def test_an_index_modulo_a_constant_is_a_sufficient_fact():
    contract = json.loads(generate(pk.modulo_weights, "gradient", ("x", "w"), None).contract)
    assert contract["complete"] and contract["uncovered"] == []
    (fact,) = contract["sufficient"]
    assert fact["access"] == "w[k % 8]" and fact["need"] == [["1", 8]] and fact["where"][0] > 0


@pytest.fixture(scope="module")
def modulo_gradient():
    return sourcead.grad(pk.modulo_weights, wrt=("x", "w"))


def test_a_prange_gradient_with_an_index_modulo_a_constant_runs_parallel(modulo_gradient):
    x, w = RNG.standard_normal(40), RNG.standard_normal(8)
    got = modulo_gradient(x, w)
    assert_gradient_matches(pk.modulo_weights, (x, w), ("x", "w"), got)
    ((_key, variant),) = modulo_gradient._variants.items()
    fast, checked = variant.call.fast, variant.call.checked
    # (numba empties the dict of parallel options it is given: False means serial)
    assert fast.targetoptions.get("parallel") not in (None, False) and not fast.targetoptions.get("boundscheck")
    assert checked.targetoptions.get("boundscheck") and checked.targetoptions.get("parallel") in (None, False)
    assert len(fast.signatures) == 1 and len(checked.signatures) == 0  # the checked one never compiled
    (overload,) = fast.overloads.values()
    assert "_reload_parfors" in [f.__name__ for f in overload.reload_init]  # numba lowered parallel loops


def test_arguments_that_miss_the_fact_run_the_checked_variant(modulo_gradient):
    x, w = RNG.standard_normal(2), RNG.standard_normal(5)  # k = 1, 4: in range of 5 elements
    got = modulo_gradient(x, w)
    assert_gradient_matches(pk.modulo_weights, (x, w), ("x", "w"), got)
    ((_key, variant),) = modulo_gradient._variants.items()
    assert len(variant.call.checked.signatures) == 1
    with pytest.raises(ShapeError, match="index 7 is out of bounds for axis 0 with size 5"):
        modulo_gradient(RNG.standard_normal(40), w)  # k % 8 reaches 7: the user's code fails too


def test_an_index_the_contract_cannot_bound_is_named_once_in_a_warning():
    x, w = RNG.standard_normal(5), RNG.standard_normal(25)
    with warnings.catch_warnings(record=True) as found:
        warnings.simplefilter("always")
        gradient = sourcead.grad(pk.squared_index, wrt=("x", "w"))
        got = gradient(x, w)
        gradient(x, w)
    ours = [m for m in found if issubclass(m.category, BoundsWarning)]
    assert len(ours) == 1
    line = pk.squared_index.__code__.co_firstlineno + 5
    assert f"the argument shapes do not bound the index `w[i * i]` (line {line})" in str(ours[0].message)
    assert "run serially" in str(ours[0].message)
    assert ours[0].filename == pk.__file__ and ours[0].lineno == line  # positioned at the user's index
    assert_gradient_matches(pk.squared_index, (x, w), ("x", "w"), got)
