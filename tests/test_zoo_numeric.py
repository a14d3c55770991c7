"""Numeric checks of every zoo function: reverse and forward mode against central differences,
forward against reverse (the dot-product test), interpreted against compiled, and fresh results.

Each prepared callable is built once per (case, kind, jit) and shared by the tests, since a
numba compile costs far more than a check. A float-valued case's reverse-mode code (vjp,
value_and_grad) is its gradient code, which the grad tests compile, plus the value's lines: it
runs as plain Python here, and compiled only for cases whose result is an array or a tuple
(`reverse_jit`); compiling it for every case cost 294 s of the suite's worker time.
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass

import numpy as np
import pytest
from numeric import (
    argument_index,
    assert_close,
    central_difference_jvp,
    copy_tree,
    finite_difference_gradient,
    leaves,
    norm,
    random_like,
    vdot,
)
from zoo import ZOO, Case

import sourcead

CASES = {case.name: case for case in ZOO}
SCALAR_CASES = [case for case in ZOO if case.scalar_output]
SINGLE_WRT_CASES = [case for case in ZOO if len(case.wrt) == 1]

FD_RTOL = 1e-6  # central differences with eps=1e-6: truncation ~1e-12, rounding ~1e-10
DOT_RTOL = 1e-10  # forward and reverse mode are both exact up to rounding
VALUE_RTOL = 1e-12  # compiled vs plain Python evaluation of the same arithmetic

ARRAY_CASES = [case for case in ZOO if not case.scalar_output]

each_case = pytest.mark.parametrize("case", ZOO, ids=lambda case: case.name)
each_array_case = pytest.mark.parametrize("case", ARRAY_CASES, ids=lambda case: case.name)
each_scalar_case = pytest.mark.parametrize("case", SCALAR_CASES, ids=lambda case: case.name)
each_jit = pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])


def reverse_jit(case: Case) -> bool:
    """Compile the case's vjp? Where grad's compiled code cannot stand for it (module docstring)."""
    return not case.scalar_output


@functools.cache
def prepared(name: str, kind: str, jit: bool = True, wrt: str | tuple[str, ...] | None = None):
    """sourcead.<kind>(case.func, wrt=..., jit=jit), built once per process."""
    case = CASES[name]
    return getattr(sourcead, kind)(case.func, wrt=case.wrt if wrt is None else wrt, jit=jit)


@dataclass(frozen=True)
class Point:
    """Where a case is evaluated: arguments, the plain Python value, a tangent and a cotangent."""

    args: tuple
    value: object  # case.func(*args), run as plain Python
    tangents: tuple  # one random direction per wrt argument
    cotangent: object  # a random value with the output's structure


@functools.cache
def point(name: str) -> Point:
    case = CASES[name]
    rng = np.random.default_rng([zlib.crc32(name.encode()), 0])
    args = case.make_args(rng)
    value = case.func(*args)
    tangents = tuple(random_like(rng, args[argument_index(case.func, wrt)]) for wrt in case.wrt)
    return Point(args, value, tangents, random_like(rng, value))


def fresh_args(case: Case) -> tuple:
    """Copies of the case's arguments, so no test can see another's writes."""
    return copy_tree(point(case.name).args)


# --- the zoo itself --------------------------------------------------------------------------


def test_zoo_names_are_unique():
    assert len(CASES) == len(ZOO)


@each_case
def test_zoo_case_is_well_formed(case: Case):
    first = case.make_args(np.random.default_rng(7))
    again = case.make_args(np.random.default_rng(7))
    assert_close(first, again, rtol=0.0)
    for name in case.wrt:
        value = first[argument_index(case.func, name)]
        assert type(value) is float or (isinstance(value, np.ndarray) and value.dtype == np.float64), name
    output = case.func(*first)
    assert isinstance(output, float) == case.scalar_output


# --- reverse mode ----------------------------------------------------------------------------


@each_case
def test_vjp_matches_finite_differences(case: Case):
    p = point(case.name)
    value, grads = prepared(case.name, "vjp", reverse_jit(case))(*fresh_args(case), cotangent=copy_tree(p.cotangent))
    assert_close(value, p.value, rtol=VALUE_RTOL, atol=VALUE_RTOL * norm(p.value))
    jv = central_difference_jvp(case.func, p.args, case.wrt, p.tangents)
    expected = vdot(p.cotangent, jv)
    assert_close(vdot(grads, p.tangents), expected, rtol=FD_RTOL, atol=FD_RTOL * norm(p.cotangent) * norm(jv))


@each_scalar_case
def test_grad_matches_finite_differences(case: Case):
    p = point(case.name)
    grads = prepared(case.name, "grad")(*fresh_args(case))
    expected = finite_difference_gradient(case.func, p.args, case.wrt)
    assert_close(grads, expected, rtol=FD_RTOL, atol=FD_RTOL * norm(expected))


@each_scalar_case
def test_value_and_grad_matches_value_and_grad(case: Case):
    p = point(case.name)
    value, grads = prepared(case.name, "value_and_grad", reverse_jit(case))(*fresh_args(case))
    assert isinstance(value, float)
    assert_close(value, p.value, rtol=VALUE_RTOL, atol=VALUE_RTOL * norm(p.value))
    expected = prepared(case.name, "grad")(*fresh_args(case))
    assert_close(grads, expected, rtol=VALUE_RTOL, atol=VALUE_RTOL * norm(expected))


@each_scalar_case
def test_vjp_with_unit_cotangent_is_grad(case: Case):
    _, grads = prepared(case.name, "vjp", reverse_jit(case))(*fresh_args(case), cotangent=1.0)
    expected = prepared(case.name, "grad")(*fresh_args(case))
    assert_close(grads, expected, rtol=VALUE_RTOL, atol=VALUE_RTOL * norm(expected))


# --- forward mode ----------------------------------------------------------------------------


@each_case
def test_jvp_matches_finite_differences(case: Case):
    p = point(case.name)
    value, tangent = prepared(case.name, "jvp")(*fresh_args(case), tangents=copy_tree(p.tangents))
    assert_close(value, p.value, rtol=VALUE_RTOL, atol=VALUE_RTOL * norm(p.value))
    expected = central_difference_jvp(case.func, p.args, case.wrt, p.tangents)
    assert_close(tangent, expected, rtol=FD_RTOL, atol=FD_RTOL * norm(expected))


@each_case
def test_forward_and_reverse_agree(case: Case):
    """The dot-product test: <J v, w> == <v, J^T w> up to rounding."""
    p = point(case.name)
    _, jv = prepared(case.name, "jvp")(*fresh_args(case), tangents=copy_tree(p.tangents))
    _, jtw = prepared(case.name, "vjp", reverse_jit(case))(*fresh_args(case), cotangent=copy_tree(p.cotangent))
    scale = max(norm(jv) * norm(p.cotangent), norm(p.tangents) * norm(jtw))
    assert_close(vdot(jv, p.cotangent), vdot(p.tangents, jtw), rtol=DOT_RTOL, atol=DOT_RTOL * scale)


# --- interpreted vs compiled -----------------------------------------------------------------


def _call(case: Case, kind: str, jit: bool):
    p = point(case.name)
    f = prepared(case.name, kind, jit)
    if kind == "vjp":
        return f(*fresh_args(case), cotangent=copy_tree(p.cotangent))
    if kind == "jvp":
        return f(*fresh_args(case), tangents=copy_tree(p.tangents))
    return f(*fresh_args(case))


@each_case
def test_interpreted_jvp_matches_compiled(case: Case):
    compiled, interpreted = _call(case, "jvp", jit=True), _call(case, "jvp", jit=False)
    assert_close(interpreted, compiled, rtol=VALUE_RTOL, atol=VALUE_RTOL * norm(compiled))


@each_array_case
def test_interpreted_vjp_matches_compiled(case: Case):
    compiled, interpreted = _call(case, "vjp", jit=True), _call(case, "vjp", jit=False)
    assert_close(interpreted, compiled, rtol=VALUE_RTOL, atol=VALUE_RTOL * norm(compiled))


@each_scalar_case
def test_interpreted_grad_matches_compiled(case: Case):
    compiled, interpreted = _call(case, "grad", jit=True), _call(case, "grad", jit=False)
    assert_close(interpreted, compiled, rtol=VALUE_RTOL, atol=VALUE_RTOL * norm(compiled))


# --- results are fresh, typed and shaped like the arguments ----------------------------------


def _assert_fresh(result, like, inputs: list, python_float: bool = True) -> None:
    """A new float64 array shaped like `like`, sharing no memory with inputs; or a float.

    The contract makes a gradient w.r.t. a float a Python float; a tangent of a float output
    may be any float (np.float64 included) unless python_float is asked for.
    """
    if isinstance(like, np.ndarray):
        assert isinstance(result, np.ndarray) and result.dtype == np.float64 and result.shape == like.shape
        for given in inputs:
            if isinstance(given, np.ndarray):
                assert not np.shares_memory(result, given)
    elif python_float:
        assert type(result) is float, f"expected a Python float, got {type(result).__name__}"
    else:
        assert isinstance(result, float), f"expected a float, got {type(result).__name__}"


@pytest.mark.parametrize(
    "case, jit",
    [(case, False) for case in ZOO] + [(case, True) for case in ARRAY_CASES],
    ids=lambda v: v.name if isinstance(v, Case) else ("jit" if v else "nojit"),
)
def test_gradients_are_fresh(case: Case, jit: bool):
    p = point(case.name)
    args = fresh_args(case)
    cotangent = random_like(np.random.default_rng(1), p.value)
    _, grads = prepared(case.name, "vjp", jit)(*args, cotangent=cotangent)
    inputs = [*args, *leaves(cotangent)]
    assert isinstance(grads, tuple) and len(grads) == len(case.wrt)
    for name, grad in zip(case.wrt, grads, strict=True):
        _assert_fresh(grad, args[argument_index(case.func, name)], inputs)
    assert_close(args, p.args, rtol=0.0)  # the arguments were not written to
    assert_close(cotangent, random_like(np.random.default_rng(1), p.value), rtol=0.0)


@each_case
@each_jit
def test_tangents_are_fresh(case: Case, jit: bool):
    p = point(case.name)
    args = fresh_args(case)
    tangents = copy_tree(p.tangents)
    _, tangent = prepared(case.name, "jvp", jit)(*args, tangents=tangents)
    inputs = [*args, *tangents]
    for result, like in zip(leaves(tangent), leaves(p.value), strict=True):
        _assert_fresh(result, like, inputs, python_float=False)
    assert_close(args, p.args, rtol=0.0)
    assert_close(tangents, p.tangents, rtol=0.0)


@each_scalar_case
@each_jit
def test_grad_results_are_fresh(case: Case, jit: bool):
    args = fresh_args(case)
    grads = prepared(case.name, "grad", jit)(*args)
    for name, grad in zip(case.wrt, grads, strict=True):
        _assert_fresh(grad, args[argument_index(case.func, name)], list(args))


# --- a single wrt name gives a single result ------------------------------------------------


@pytest.mark.parametrize("case", SINGLE_WRT_CASES, ids=lambda case: case.name)
def test_single_wrt_name_gives_single_result(case: Case):
    p = point(case.name)
    (name,) = case.wrt
    jit = reverse_jit(case)
    _, (grad,) = prepared(case.name, "vjp", jit)(*fresh_args(case), cotangent=copy_tree(p.cotangent))
    _, single_grad = prepared(case.name, "vjp", jit, name)(*fresh_args(case), cotangent=copy_tree(p.cotangent))
    assert_close(single_grad, grad, rtol=VALUE_RTOL, atol=VALUE_RTOL * norm(grad))
    _, tangent = prepared(case.name, "jvp")(*fresh_args(case), tangents=copy_tree(p.tangents))
    _, single_tangent = prepared(case.name, "jvp", True, name)(*fresh_args(case), tangents=copy_tree(p.tangents[0]))
    assert_close(single_tangent, tangent, rtol=VALUE_RTOL, atol=VALUE_RTOL * norm(tangent))
